#!/bin/sh
# t8031: the cycle's agent and review: the agent runs (policy
# cycle.agent) on an engine whose cells fail, at most once per cell and
# cycle, even when the cycle is killed while it runs; its fix is queued
# and the cycle, which waits for review before it publishes, stops
# 'waiting' printing the exact approve command; run again while the fix
# is pending it still waits; once approved it measures a second round at
# the new official tip, where the cell is `fixed`, and publishes. A cell
# that fails as before, with nothing changed and no fix approved, is not
# given to the agent again, and the journal says so.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

AGENTS="$TOP_SRCDIR/tests/fixtures/agents"
FAST="--itl 1 --prefill-rate 0 --max-batch 4"

# agent_argv SCRIPT: policy agent.command running a scripted agent
agent_argv() {
	python3 -c 'import json, sys; print(json.dumps(["sh", sys.argv[1], "{prompt_file}"]))' \
	    "$AGENTS/$1.sh"
}

test_expect_success 'a bench with an engine whose serve flag is wrong, the agent on' '
	cycle_bench bench &&
	sim_adapter bench simok $FAST &&
	sim_adapter bench simfix --mode continuos $FAST &&
	bench_policy bench "cycle.agent=true" "cycle.fidelity=false" \
	    "agent.command=$(agent_argv good-fix)" "agent.time_limit_s=120" \
	    "agent.sandbox=\"best-effort\"" \
	    "agent.smoke={\"concurrency\": [1], \"prompts\": 3}" &&
	cycle_commit bench "two engines, the agent on"
'

test_expect_success 'the agent fixes the cell, and the cycle waits for review (exit 4)' '
	WARDEN_CYCLE=c1 expect_exit 4 warden --repo bench cycle &&
	expect_grep "^cycle c1 (roster test), round 1: waiting, exit 4$" out &&
	expect_grep "^broke:     simfix/qwen3-0.6b/chat (crashed)$" out &&
	expect_grep "^review:    #2 (agent)$" out &&
	expect_grep "^published: no: waiting for the review of the cycle.s fixes: 2$" out &&
	grep -Fqx "approve:   warden review approve 2 \\" out &&
	grep -Fqx "               --as \"Test Maintainer <maintainer@example.org>\"" out &&
	sed -n "/^approve:/,/--as/p" out | sed "s/ \\\\$//" | tr -s " \n" " " |
	    grep -Fq "approve: warden review approve 2 --as \"Test Maintainer <maintainer@example.org>\"" &&
	expect_grep "^then:      warden cycle" out &&
	expect_grep "^warden: cycle c1: waiting for review$" err &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from agent_runs")" = 1 &&
	test "$(sqlite3 bench/.warden/warden.db "select task, state, review from cycle_agent")" = "engine:simfix|queued|2" &&
	md bench c1 >c1.md &&
	expect_grep "^| simfix | crashed | .*exited before it was ready" c1.md &&
	expect_grep "^- agent on .engine:simfix. (run 1): queued, review #2 (pending)$" c1.md &&
	expect_grep "^- \*\*Not published\*\*: waiting for the review" c1.md &&
	expect_exit 0 warden --repo bench status &&
	expect_grep "^cycle c1 (roster test): waiting, round 1$" out
'

test_expect_success 'run again while the fix is pending, it still waits and runs nothing' '
	sqlite3 bench/.warden/warden.db "select count(*) from cycle_steps; select count(*) from campaign_runs" >before &&
	expect_exit 4 warden --repo bench cycle &&
	expect_grep "^cycle c1 (roster test), round 1: waiting, exit 4$" out &&
	expect_grep "^approve:   warden review approve 2 " out &&
	sqlite3 bench/.warden/warden.db "select count(*) from cycle_steps; select count(*) from campaign_runs" >after &&
	expect_equal before after
'

test_expect_success 'approved, the cycle measures a second round at the new tip: fixed, published' '
	warden --repo bench review approve 2 --as "Test Maintainer <maintainer@example.org>" >/dev/null &&
	old=$(git -C bench rev-parse HEAD) &&
	expect_exit 0 warden --repo bench --json cycle &&
	cycle_json out "j[\"cycle\"] == \"c1\"" "j[\"round\"] == 2" \
	    "j[\"state\"] == \"done\"" "j[\"exit\"] == 0" \
	    "{c[\"engine\"]: c[\"status\"] for s in j[\"journal\"][\"splits\"] for c in s[\"cells\"]} == {\"simok\": \"ok\", \"simfix\": \"fixed\"}" \
	    "j[\"journal\"][\"summary\"][\"broke\"] == [{\"cell\": \"simfix/qwen3-0.6b/chat\", \"status\": \"crashed\", \"fixed\": True}]" \
	    "j[\"journal\"][\"summary\"][\"published\"][\"snapshot\"]" &&
	test "$(git -C bench rev-parse HEAD)" != "$old" &&
	git -C bench merge-base --is-ancestor "$(sqlite3 bench/.warden/warden.db "select merged_commit from reviews where id = 2")" HEAD &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from agent_runs")" = 1 &&
	md bench c1 >c1.md &&
	expect_grep "^| simfix | fixed | c=1 6/6, c=4 6/6; best [0-9.]* tok/s; crashed in round 1: exited before it was ready" c1.md &&
	expect_grep "^| [0-9T:.Z-]* | 2 | checkout | done | moved the detached HEAD from" c1.md &&
	expect_grep "^- review #2 (agent) approved by Test Maintainer" c1.md &&
	expect_grep "^| [0-9]* | [0-9T:.Z-]* | .review.approved. | " c1.md &&
	warden --repo bench journal verify
'

test_expect_success 'a bench whose engine no agent can fix, and an agent that changes nothing' '
	cycle_bench b2 &&
	sim_adapter b2 simok $FAST &&
	sim_adapter b2 simbad --mode nonsense $FAST &&
	bench_policy b2 "cycle.agent=true" "cycle.fidelity=false" "cycle.publish=false" \
	    "agent.command=[\"true\"]" "agent.time_limit_s=120" \
	    "agent.sandbox=\"best-effort\"" &&
	cycle_commit b2 "an engine that does not start"
'

test_expect_success 'killed while the agent runs: the cycle goes on, the agent does not run again' '
	rc=0 && WARDEN_CYCLE=k1 WARDEN_FAULT=cycle.agent warden --repo b2 cycle \
	    >kill.out 2>&1 || rc=$? &&
	test "$rc" = 137 &&
	expect_exit 1 warden --repo b2 --json cycle &&
	cycle_json out "j[\"cycle\"] == \"k1\"" "j[\"state\"] == \"done\"" \
	    "[(s[\"task\"], s[\"reason\"]) for s in j[\"journal\"][\"skipped\"]] == [(\"engine:simbad\", \"the agent already had these cells in this cycle\")]" &&
	test "$(sqlite3 b2/.warden/warden.db "select count(*) from agent_runs")" = 0 &&
	test "$(sqlite3 b2/.warden/warden.db "select count(*) from cycle_agent")" = 1
'

test_expect_success 'the agent has the cell once; a cycle after, nothing changed, not again' '
	WARDEN_CYCLE=n1 expect_exit 0 warden --repo b2 --json cycle &&
	cycle_json out "[(r[\"task\"], r[\"state\"]) for r in j[\"journal\"][\"agent\"]] == [(\"engine:simbad\", \"no-change\")]" &&
	WARDEN_CYCLE=n2 expect_exit 0 warden --repo b2 --json cycle &&
	cycle_json out "j[\"journal\"][\"agent\"] == []" \
	    "[s[\"task\"] for s in j[\"journal\"][\"skipped\"]] == [\"engine:simbad\"]" \
	    "\"not retried\" in j[\"journal\"][\"skipped\"][0][\"reason\"]" &&
	test "$(sqlite3 b2/.warden/warden.db "select count(*) from agent_runs")" = 1 &&
	md b2 n2 >n2.md &&
	expect_grep "^| engine:simbad (agent) | - | - | failing as in cycle n1, where agent run 1 had it (no-change) and no fix was approved; its engine, adapter and profile are unchanged: not retried | 0 |$" n2.md
'

test_done
