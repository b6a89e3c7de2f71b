#!/bin/sh
# t6009: Codex CLI itself (ci/deps installs it from npm), through the
# "codex" preset, in the real sandbox (its own sandbox off), against a
# scripted Responses API on 127.0.0.1 (tests/fixtures/agents/
# model-server.py) reached through a model provider of its own: it reads
# the task, edits the broken adapter with its own apply_patch, lints
# with warden and ends, and
# the run is queued with its diff, gate and smoke. A 401 and an API it
# cannot reach (Codex waits for it until the time limit) each leave a
# failed run whose reason `agent show` gives. Skipped where the program
# is not installed.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

RUN=no
if agent_tool codex; then
	if [ "$(can_sandbox)" = yes ]; then
		RUN=yes
		model_server "$TEST_DIR/model" fix
	else
		echo "# bubblewrap cannot run here: the tests of codex are skipped"
	fi
fi

test_expect_success_if $RUN 'a bench whose policy uses the codex preset and a gateway' '
	agent_bench bench &&
	agent_preset bench codex "agent.sandbox=\"required\"" \
	    "agent.network=\"host\"" "agent.api_retries=0" \
	    "agent.model=\"gpt-test\"" "agent.gateway=\"http://127.0.0.1:$(cat model/port)/v1\"" &&
	git -C bench rev-parse official >official.before &&
	expect_exit 0 aw agent run --engine simfix --dry-run &&
	expect_grep "^argv:     codex exec --color never --sandbox danger-full-access --skip-git-repo-check -c check_for_update_on_startup=false -c allow_login_shell=false -c model_provider=" out &&
	expect_grep " -c model_providers.warden-gateway={name=\"gateway\", base_url=\"http://127.0.0.1:[0-9]*/v1\", env_key=\"OPENAI_API_KEY\", wire_api=\"responses\", request_max_retries=0, stream_max_retries=0} --model gpt-test -- Read the task in " out
'

test_expect_success_if $RUN 'Codex fixes the adapter in the sandbox; the change is queued with its smoke' '
	OPENAI_API_KEY=sk-test-key expect_exit 0 aw agent run --engine simfix &&
	cp out run.out &&
	# its own apply_patch (which ends the file with a newline)
	expect_queued "M adapters/engines/simfix.json +2 -2" &&
	expect_model_auth authorization "Bearer sk-test-key"
'

test_expect_success_if $RUN 'agent show and review show render what Codex did, from its own rollout' '
	expect_exit 0 bw agent show 1 &&
	expect_grep "^transcript: codex, 20[0-9/]*/rollout-.*\.jsonl (5 turns, 5000 input and 250 output tokens)$" out &&
	expect_grep "^  ran     cat .*/\.warden/agent/1/task\.md (exit 0)$" out &&
	expect_grep "^  edited  adapters/engines/simfix\.json$" out &&
	expect_grep "^  ran     apply_patch <<.EOF.\\\\n\*\*\* Begin Patch.* (exit 0)$" out &&
	expect_grep "^  ran     warden --repo \. lint (exit 0)$" out &&
	expect_grep "^  said    Fixed the --mode flag of simfix" out &&
	expect_exit 0 bw review show 1 &&
	expect_grep "^  transcript: codex, " out &&
	expect_exit 0 bw --json journal show --kind agent.finished &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	t = d[-1]["body"]["transcript"]
	assert t["tokens"] == {"input": 5000, "output": 250}, t
	assert t["cost_usd"] is None, t
	PY
'

test_expect_success_if $RUN 'a 401 is a failed run, with the reason' '
	echo 401 >model/script &&
	OPENAI_API_KEY=sk-bad expect_exit 1 aw agent run --engine simfix &&
	expect_grep "^agent run 2: agent-failed$" out &&
	expect_exit 0 bw agent show 2 &&
	expect_grep "^failed:   the agent exit status 1; the end of its log:$" out &&
	expect_grep "^  | .*401 Unauthorized" out
'

test_expect_success_if $RUN 'an API it cannot reach: Codex waits until the time limit, a failed run' '
	port=$(free_port) &&
	agent_policy bench "agent.gateway=\"http://127.0.0.1:$port/v1\"" \
	    "agent.time_limit_s=8" &&
	OPENAI_API_KEY=sk-test-key expect_exit 1 aw agent run --engine simfix &&
	expect_grep "^agent run 3: agent-failed$" out &&
	expect_exit 0 bw agent show 3 &&
	expect_grep "^failed:   the agent ran past its time limit of 8 s" out &&
	expect_grep "^  | .*Reconnecting" out
'

test_done
