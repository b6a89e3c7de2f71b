#!/bin/sh
# t6001: a good scripted agent fixes a simulated engine's adapter (a
# wrong serve flag); warden gates its diff, queues it as one review item
# and attaches a smoke campaign that fails before and passes after.
# Nothing reaches the official branch or the maintainer's checkout until
# a maintainer approves.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

test_expect_success 'a bench whose engine does not start, and a campaign that shows it' '
	agent_bench bench &&
	agent_use bench good-fix &&
	expect_exit 0 bw campaign --engine simfix --limit 3 --concurrency 1 --run-id broken &&
	expect_grep "not_ready" out &&
	git -C bench rev-parse official >official.before &&
	git -C bench status --porcelain >status.before &&
	test ! -s status.before
'

test_expect_success 'agent run --engine queues the fix as one review item' '
	expect_exit 0 bw agent run --engine simfix &&
	cp out run.out && cp err run.err &&
	expect_grep "^agent run 1: queued$" out &&
	expect_grep "^exit:     exit status 0" out &&
	expect_grep "M adapters/engines/simfix.json +1 -1" out &&
	expect_grep "^gate:     clean$" out &&
	expect_grep "^review:   1$" out &&
	expect_grep "^smoke:    fails before the change, passes after it$" out &&
	expect_grep "^  engine  model       split  c  before         after$" out &&
	expect_grep "^  simfix  qwen3-0.6b  chat   1  not_ready 0/3  complete 3/3$" out &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 1 &&
	test "$(sqlite3 bench/.warden/warden.db "select source from reviews")" = agent
'

test_expect_success 'the review item carries the passing smoke run and the agent run' '
	expect_exit 0 bw review show 1 &&
	expect_grep "^evidence .* smoke: fails before the change, passes after it$" out &&
	expect_grep "^  simfix  qwen3-0.6b  chat   1  not_ready 0/3  complete 3/3$" out &&
	expect_grep "^evidence .* agent-run: agent run 1, log " out &&
	expect_exit 0 bw --json review show 1 &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["status"] == "pending" and d["source"] == "agent"
	ev = {e["kind"]: e["body"] for e in d["evidence"]}
	s = ev["smoke"]
	assert s["engines"] == ["simfix"], s
	assert s["passed"] is True and s["after"]["passed"] is True
	assert s["before"]["passed"] is False
	a = s["after"]["runs"][0]
	assert a["run_id"] == "agent-1-simfix-after"
	assert a["sweeps"][0]["outcome"] == "complete" and a["sweeps"][0]["completed"] == 3
	assert ev["agent-run"]["agent_run"] == 1
	assert "continuous" in d["patch"] and "continuos" in d["patch"]
	PY
'

test_expect_success 'the task context named the failing cell and its log' '
	expect_grep "^# warden agent run 1: engine simfix" bench/.warden/agent/1/task.md &&
	expect_grep "| simfix | qwen3-0.6b | chat | 1 | not_ready |" bench/.warden/agent/1/task.md &&
	expect_grep "Log tail" bench/.warden/agent/1/task.md &&
	expect_grep "## Instructions" bench/.warden/agent/1/task.md &&
	expect_grep "adapters/engines/\*\*" bench/.warden/agent/1/task.md &&
	expect_grep "good-fix: corrected --mode of simfix" bench/.warden/agent/1/agent.log
'

test_expect_success 'nothing reached the official branch or the maintainer checkout' '
	git -C bench rev-parse official >official.after &&
	expect_equal official.before official.after &&
	git -C bench status --porcelain >status.after &&
	expect_equal status.before status.after &&
	expect_grep "continuos" bench/adapters/engines/simfix.json
'

test_expect_success 'the run is journaled with argv, exit, sandbox, diffstat, gate, smoke and review' '
	bw journal verify &&
	expect_exit 0 bw --json journal show --kind agent.finished &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	e = d[-1] if isinstance(d, list) else d["entries"][-1]
	b = e["body"]
	assert b["state"] == "queued" and b["review"] == 1
	assert b["argv"][0] == "sh" and b["argv"][1].endswith("good-fix.sh")
	assert b["exit"]["exit_code"] == 0 and b["exit"]["duration_s"] >= 0
	assert b["sandbox"]["mode"] == "best-effort" and b["sandbox"]["in_force"]
	assert b["log"].endswith("/.warden/agent/1/agent.log")
	assert b["diffstat"]["files"] == 1 and b["gate"]["ok"] is True
	assert b["smoke"]["passed"] is True
	PY
'

test_expect_success 'approving the review puts the fix on the official branch' '
	expect_exit 0 bw review approve 1 --as "Test Maintainer <maintainer@example.org>" &&
	git -C bench show official:adapters/engines/simfix.json >fixed.json &&
	expect_grep "\"continuous\"" fixed.json &&
	expect_exit 0 bw agent list &&
	expect_grep "^1  *queued .* review 1 (approved)$" out &&
	expect_exit 0 bw --json agent list &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d[0][\"review_status\"] == \"approved\", d" out
'

test_expect_success 'an agent that exits non-zero after a good change is recorded, not queued' '
	agent_use bench fail-after-fix &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 2: agent-failed$" out &&
	expect_grep "^exit:     exit status 3" out &&
	expect_grep "^gate:     clean$" out &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 1 &&
	test "$(sqlite3 bench/.warden/warden.db "select state from agent_runs where id = 2")" = agent-failed
'

test_expect_success 'with agent.queue_on_failure it is queued, with its smoke run' '
	agent_policy bench "agent.queue_on_failure=true" &&
	expect_exit 0 bw agent run --engine simfix &&
	expect_grep "^agent run 3: queued$" out &&
	expect_grep "^exit:     exit status 3" out &&
	expect_grep "^review:   2$" out &&
	expect_grep "^smoke:    fails before the change, passes after it$" out
'

test_done
