#!/bin/sh
# t6004: `warden agent` as a user meets it: help, usage and input errors,
# list and show (and --json), --dry-run, the agent's scrubbed environment,
# policy read from the official branch (never the working tree), the
# agent.sandbox schema, an interrupted run, and the example instructions
# file that `warden init` writes.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

test_expect_success 'help names the three subcommands' '
	expect_exit 0 warden agent --help &&
	expect_grep "^usage: warden agent run \[--incident N | --engine E\] \[--dry-run\]$" out &&
	expect_grep "^       warden agent list$" out &&
	expect_grep "^       warden agent show ID$" out
'

test_expect_success 'a bench whose agent dumps its environment' '
	agent_bench bench &&
	agent_use bench env-dump
'

test_expect_success 'usage and input errors exit 2' '
	expect_exit 2 bw agent &&
	expect_exit 2 bw agent run &&
	expect_grep "one of --incident N or --engine E" err &&
	expect_exit 2 bw agent run --engine simfix --incident 1 &&
	expect_exit 2 bw agent run --incident x &&
	expect_grep "not an incident number" err &&
	expect_exit 2 bw agent run --incident 4 &&
	expect_grep "no incident 4" err &&
	expect_exit 2 bw agent run --engine nosuch &&
	expect_grep "engine .nosuch. is in no roster" err &&
	expect_exit 2 bw agent show 99 &&
	expect_grep "no agent run 99" err &&
	expect_exit 2 bw agent show x &&
	expect_exit 2 bw agent frob &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from agent_runs")" = 0
'

test_expect_success '--dry-run shows argv, sandbox and task, and makes nothing' '
	expect_exit 0 bw agent run --engine simfix --dry-run &&
	expect_grep "^agent run 1: dry-run$" out &&
	expect_grep "^argv:     sh .*/env-dump.sh .*/bench/.warden/agent/1/task.md$" out &&
	expect_grep "^# warden agent run 1: engine simfix$" out &&
	test ! -e bench/.warden/worktrees/1 && test ! -e bench/.warden/agent/1 &&
	test "$(git -C bench branch --list "warden/*" | wc -l)" = 0 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from agent_runs")" = 0 &&
	expect_exit 0 bw --json agent run --engine simfix --dry-run &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); assert d[\"dry_run\"] and \"HOME\" in d[\"env\"] and d[\"context\"].startswith(\"# warden agent run 1\")"
'

test_expect_success 'the agent gets a scrubbed environment, its own HOME, git hooks off' '
	SECRET_TOKEN=leak ANTHROPIC_API_KEY=k1 expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 1: no-change$" out &&
	log=bench/.warden/agent/1/agent.log &&
	expect_no_grep SECRET_TOKEN $log &&
	expect_grep "^ANTHROPIC_API_KEY=k1$" $log &&
	expect_grep "^HOME=$TEST_DIR/bench/.warden/agent/1/home$" $log &&
	expect_grep "^TMPDIR=$TEST_DIR/bench/.warden/agent/1/tmp$" $log &&
	expect_grep "^GIT_CONFIG_NOSYSTEM=1$" $log &&
	expect_grep "^GIT_CONFIG_GLOBAL=/dev/null$" $log &&
	expect_grep "^GIT_CONFIG_KEY_0=core.hooksPath$" $log &&
	expect_grep "^GIT_CONFIG_VALUE_0=/dev/null$" $log &&
	expect_grep "^cwd=$TEST_DIR/bench/.warden/worktrees/1$" $log &&
	expect_no_grep "^GIT_AUTHOR_NAME" $log
'

test_expect_success 'the worktree is the official tree, without symlinks, on its own branch' '
	git -C bench/.warden/worktrees/1 rev-parse HEAD >wt.head &&
	git -C bench rev-parse official >off.head &&
	expect_equal off.head wt.head &&
	test "$(git -C bench/.warden/worktrees/1 symbolic-ref HEAD)" = refs/heads/warden/agent/1 &&
	test -z "$(find bench/.warden/worktrees/1 -type l)"
'

test_expect_success 'policy comes from the official branch, never the working tree' '
	bench_policy bench "agent.command=[\"sh\", \"-c\", \"echo from the working tree\"]" &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_no_grep "from the working tree" bench/.warden/agent/2/agent.log &&
	expect_grep "^cwd=" bench/.warden/agent/2/agent.log &&
	git -C bench checkout -q -- policy/warden.json
'

test_expect_success 'list and show, in text and JSON' '
	expect_exit 0 bw agent list &&
	expect_grep "^1  *no-change  *engine  *simfix " out &&
	expect_grep "^2  *no-change " out &&
	expect_exit 0 bw --json agent list &&
	python3 -c "import json; d=json.load(open(\"out\")); assert [r[\"id\"] for r in d] == [1, 2] and d[0][\"state\"] == \"no-change\"" &&
	expect_exit 0 bw --json agent show 1 &&
	python3 -c "import json; d=json.load(open(\"out\")); r=d[\"record\"]; assert r[\"exit\"][\"exit_code\"] == 0 and r[\"task\"][\"problem\"][\"engines\"] == [\"simfix\"]" &&
	expect_exit 0 bw agent show 1 &&
	expect_grep "^agent run 1: no-change$" out
'

test_expect_success 'an unknown placeholder in agent.command is an input error' '
	agent_policy bench "agent.command=[\"sh\", \"{nosuch}\"]" &&
	expect_exit 2 bw agent run --engine simfix &&
	expect_grep "agent.command. uses unknown placeholder .{nosuch}." err
'

test_expect_success '{{ and }} are literal braces in agent.command' '
	agent_policy bench "agent.command=[\"sh\", \"-c\", \"echo \\\"{{x}} {{{task}}} }} {engine}\\\"\"]" &&
	expect_exit 1 bw agent run --engine simfix &&
	id=$(sed -n "s/^agent run \([0-9]*\):.*/\1/p" out) &&
	expect_grep "^{x} {engine} } simfix$" bench/.warden/agent/$id/agent.log
'

test_expect_success 'an agent that exits non-zero without a change is agent-failed, with the end of its log' '
	agent_policy bench "agent.command=[\"sh\", \"-c\", \"echo working; echo cannot reach the model >&2; exit 4\"]" &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run [0-9]*: agent-failed$" out &&
	id=$(sed -n "s/^agent run \([0-9]*\):.*/\1/p" out) &&
	expect_exit 0 bw agent show $id &&
	expect_grep "^failed:   the agent exit status 4; the end of its log:$" out &&
	expect_grep "^  | working$" out &&
	expect_grep "^  | cannot reach the model$" out &&
	test "$(sqlite3 bench/.warden/warden.db "select state from agent_runs where id = $id")" = agent-failed &&
	expect_exit 0 bw --json journal show --kind agent.finished &&
	python3 -c "import json, sys; b = json.load(open(sys.argv[1]))[-1][\"body\"]; assert b[\"state\"] == \"agent-failed\" and b[\"failure\"][\"reason\"] == \"exit status 4\", b" out
'

test_expect_success 'lint names a placeholder agent run would refuse, and a gateway the network rule cannot reach' '
	bench_policy bench "agent.command=[\"sh\", \"{nosuch}\", \"{{ok}}\"]" &&
	expect_exit 1 bw lint &&
	expect_grep "agent.command.*unknown placeholder .{nosuch}." out &&
	expect_no_grep "{{ok}}" out &&
	git -C bench checkout -q -- policy/warden.json &&
	bench_policy bench "agent.preset=\"claude-code\"" "agent.gateway=\"http://127.0.0.1:8080\"" &&
	expect_exit 1 bw lint &&
	expect_grep "agent.gateway.*port 8080.*set .agent.network. to \"host\"" out &&
	bench_policy bench "agent.network=\"host\"" &&
	expect_exit 0 bw lint &&
	bench_policy bench "agent.preset=\"codex\"" "agent.max_turns=3" &&
	expect_exit 1 bw lint &&
	expect_grep "agent.max_turns.*not supported by Codex" out &&
	git -C bench checkout -q -- policy/warden.json
'

test_expect_success '--dry-run shows the command a preset gives, and exits non-zero where run would refuse it' '
	python3 - bench <<-PY &&
	import json, sys
	f = sys.argv[1] + "/policy/warden.json"
	pol = json.load(open(f))
	del pol["agent"]["command"]
	pol["agent"]["preset"] = "claude-code"
	pol["agent"]["max_turns"] = 12
	json.dump(pol, open(f, "w"), indent=2)
	PY
	agent_commit bench "the claude-code preset" &&
	PATH=/usr/bin:/bin expect_exit 3 "$WARDEN" --repo "$TEST_DIR/bench" agent run --engine simfix --dry-run &&
	expect_grep "^agent run [0-9]*: refused$" out &&
	expect_grep "^argv:     claude -p .* --add-dir .*/\.warden/agent/[0-9]* --max-turns 12 -- Read the task in .*/task\.md and do it\.$" out &&
	expect_grep "the agent program .claude. is not on the agent.s PATH" err &&
	PATH=/usr/bin:/bin "$WARDEN" --repo "$TEST_DIR/bench" --json agent run --engine simfix --dry-run >dry.json || true &&
	python3 - dry.json <<-PY &&
	import json, sys
	r = json.load(open(sys.argv[1]))
	assert r["state"] == "refused", r["state"]
	assert "DISABLE_TELEMETRY" in r["env"] and "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC" in r["env"], r["env"]
	PY
	python3 - bench <<-PY &&
	import json, sys
	f = sys.argv[1] + "/policy/warden.json"
	pol = json.load(open(f))
	del pol["agent"]["preset"], pol["agent"]["max_turns"]
	json.dump(pol, open(f, "w"), indent=2)
	PY
	agent_use bench env-dump
'

test_expect_success 'an agent program that does not exist is an environment error, recorded' '
	agent_policy bench "agent.command=[\"/nonexistent/agent\"]" &&
	expect_exit 3 bw agent run --engine simfix &&
	expect_grep "/nonexistent/agent" err &&
	test "$(sqlite3 bench/.warden/warden.db "select state from agent_runs order by id desc limit 1")" = error
'

test_expect_success 'a warden killed mid-run leaves a row that reads interrupted, then is marked so' '
	agent_use bench sleeper &&
	{ ("$WARDEN" --repo "$TEST_DIR/bench" agent run --engine simfix >/dev/null 2>&1 &
	    echo $! >warden.pid; wait) & } &&
	wait_until 120 "ls bench/.warden/agent/*/tmp/started >/dev/null 2>&1" &&
	started=$(ls bench/.warden/agent/*/tmp/started) &&
	id=$(echo "$started" | sed "s|.*/agent/\([0-9]*\)/tmp/started|\1|") &&
	test "$(sqlite3 bench/.warden/warden.db "select max(id) from agent_runs")" = "$id" &&
	kill -9 $(cat warden.pid) &&
	wait_until 60 "! kill -0 $(cat warden.pid) 2>/dev/null" &&
	test "$(sqlite3 bench/.warden/warden.db "select state from agent_runs where id = $id")" = running &&
	expect_exit 0 bw agent show $id &&
	expect_grep "^agent run $id: interrupted$" out &&
	agent_use bench env-dump &&
	expect_exit 1 bw agent run --engine simfix &&
	test "$(sqlite3 bench/.warden/warden.db "select state from agent_runs where id = $id")" = interrupted &&
	bw journal verify &&
	wait_until 60 "test \"\$(ps -eo args | grep -c \"^sleep 271828\")\" = 0"
'

test_expect_success 'agent.sandbox is one of required, best-effort, off' '
	bench_policy bench "agent.sandbox=true" &&
	expect_exit 1 bw lint &&
	expect_grep "agent.sandbox" out &&
	bench_policy bench "agent.sandbox=\"maybe\"" &&
	expect_exit 1 bw lint &&
	expect_grep "agent.sandbox" out &&
	git -C bench checkout -q -- policy/warden.json
'

test_expect_success 'warden init writes the example instructions this repository keeps' '
	warden init fresh >/dev/null &&
	expect_equal "$TOP_SRCDIR/policy/agent-instructions.md" fresh/policy/agent-instructions.md &&
	expect_grep "\"instructions\": \"policy/agent-instructions.md\"" fresh/policy/warden.json &&
	expect_grep "\"sandbox\": \"required\"" fresh/policy/warden.json
'

test_done
