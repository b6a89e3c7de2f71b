#!/bin/sh
# t6008: Claude Code itself (ci/deps installs it from npm), through the
# "claude-code" preset, in the real sandbox, against a scripted Messages
# API on 127.0.0.1 (tests/fixtures/agents/model-server.py): it reads the
# task, edits the broken adapter, lints with warden and ends, and the run
# is queued with its diff, gate and smoke. A 401, an API it cannot
# reach, and a model that never ends each leave a failed run whose
# reason `agent show` gives. Skipped where the program is not installed.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

RUN=no
if agent_tool claude; then
	if [ "$(can_sandbox)" = yes ]; then
		RUN=yes
		model_server "$TEST_DIR/model" fix
	else
		echo "# bubblewrap cannot run here: the tests of claude are skipped"
	fi
fi

test_expect_success_if $RUN 'a bench whose policy uses the claude-code preset and a gateway' '
	agent_bench bench &&
	agent_preset bench claude-code "agent.sandbox=\"required\"" \
	    "agent.network=\"host\"" "agent.api_retries=0" \
	    "agent.gateway=\"http://127.0.0.1:$(cat model/port)\"" &&
	git -C bench rev-parse official >official.before &&
	expect_exit 0 aw agent run --engine simfix --dry-run &&
	expect_grep "^argv:     claude -p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash,Read,Edit,Write,Glob,Grep --add-dir .*/\.warden/agent/1 -- " out
'

test_expect_success_if $RUN 'Claude Code fixes the adapter in the sandbox; the change is queued with its smoke' '
	ANTHROPIC_API_KEY=sk-test-key expect_exit 0 aw agent run --engine simfix &&
	cp out run.out &&
	expect_queued "M adapters/engines/simfix.json +1 -1" &&
	expect_model_auth x-api-key "sk-test-key"
'

test_expect_success_if $RUN 'agent show and review show render what Claude did, from its own transcript' '
	expect_exit 0 bw agent show 1 &&
	expect_grep "^transcript: claude-code, .*\.jsonl (5 turns, 5000 input and 250 output tokens, \$0.0250)$" out &&
	expect_grep "^  read    .*/\.warden/agent/1/task\.md$" out &&
	expect_grep "^  read    adapters/engines/simfix\.json$" out &&
	expect_grep "^  edited  adapters/engines/simfix\.json$" out &&
	expect_grep "^  ran     warden --repo \. lint (exit 0)$" out &&
	expect_grep "^  said    Fixed the --mode flag of simfix" out &&
	expect_exit 0 bw review show 1 &&
	expect_grep "^  transcript: claude-code, " out &&
	expect_grep "^    edited  adapters/engines/simfix\.json$" out &&
	expect_exit 0 bw --json journal show --kind agent.finished &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	t = d[-1]["body"]["transcript"]
	assert t["tokens"] == {"input": 5000, "output": 250}, t
	assert abs(t["cost_usd"] - 0.025) < 1e-9 and t["turns"] == 5, t
	PY
'

test_expect_success_if $RUN 'a 401 is a failed run, with the reason' '
	echo 401 >model/script &&
	ANTHROPIC_API_KEY=sk-bad expect_exit 1 aw agent run --engine simfix &&
	expect_grep "^agent run 2: agent-failed$" out &&
	expect_exit 0 bw agent show 2 &&
	expect_grep "^failed:   the agent exit status 1; the end of its log:$" out &&
	expect_grep "^  | .*401" out
'

test_expect_success_if $RUN 'an API it cannot reach is a failed run, with the reason' '
	port=$(free_port) &&
	agent_policy bench "agent.gateway=\"http://127.0.0.1:$port\"" &&
	ANTHROPIC_API_KEY=sk-test-key expect_exit 1 aw agent run --engine simfix &&
	expect_grep "^agent run 3: agent-failed$" out &&
	expect_exit 0 bw agent show 3 &&
	expect_grep "^failed:   the agent exit status 1" out &&
	expect_grep "^  | .*ECONNREFUSED\|^  | .*Unable to connect" out
'

test_expect_success_if $RUN 'agent.max_turns and agent.max_cost_usd stop Claude Code: a failed run' '
	echo idle >model/script &&
	agent_policy bench "agent.gateway=\"http://127.0.0.1:$(cat model/port)\"" \
	    "agent.max_turns=2" &&
	ANTHROPIC_API_KEY=sk-test-key expect_exit 1 aw agent run --engine simfix &&
	expect_grep "^agent run 4: agent-failed$" out &&
	expect_grep "^failed:   the agent exit status 1; the end of its log:$" out &&
	expect_grep "max_turns" bench/.warden/agent/4/agent.log &&
	expect_grep "^transcript: claude-code, .* (2 turns, " out &&
	python3 - bench <<-PY &&
	import json, sys
	f = sys.argv[1] + "/policy/warden.json"
	pol = json.load(open(f))
	del pol["agent"]["max_turns"]
	pol["agent"]["max_cost_usd"] = 0.01
	json.dump(pol, open(f, "w"), indent=2)
	PY
	agent_commit bench "a cost cap" &&
	ANTHROPIC_API_KEY=sk-test-key expect_exit 1 aw agent run --engine simfix &&
	expect_grep "^agent run 5: agent-failed$" out &&
	expect_grep "budget" bench/.warden/agent/5/agent.log &&
	python3 - bench <<-PY &&
	import json, sys
	f = sys.argv[1] + "/policy/warden.json"
	pol = json.load(open(f))
	del pol["agent"]["max_cost_usd"]
	json.dump(pol, open(f, "w"), indent=2)
	PY
	agent_commit bench "no cost cap"
'

test_expect_success_if $RUN 'a model that never ends runs into the time limit: a failed run' '
	echo idle >model/script &&
	agent_policy bench "agent.gateway=\"http://127.0.0.1:$(cat model/port)\"" \
	    "agent.time_limit_s=8" &&
	ANTHROPIC_API_KEY=sk-test-key expect_exit 1 aw agent run --engine simfix &&
	expect_grep "^agent run 6: agent-failed$" out &&
	expect_grep "^failed:   the agent ran past its time limit of 8 s" out &&
	expect_grep "tool_use" bench/.warden/agent/6/agent.log
'

test_done
