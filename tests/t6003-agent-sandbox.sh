#!/bin/sh
# t6003: with the write sandbox in force (bubblewrap), writes outside the
# worktree fail inside the agent (its log shows the read-only file
# system), not only afterwards; a daemon cannot outlive the sandbox.
# Policy "required" refuses to run without a sandbox, "best-effort" runs
# and records that none was in force. Tests that need bubblewrap report
# themselves skipped where it cannot run.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

SANDBOX=$(can_sandbox)
# the https rule needs Landlock 4
HTTPS=no
[ "$SANDBOX" = yes ] && [ "$(landlock_abi)" -ge 4 ] && HTTPS=yes

untouched() {
	git -C bench rev-parse official >official.now &&
	expect_equal official.base official.now &&
	git -C bench status --porcelain >status.now &&
	expect_equal status.base status.now
}

test_expect_success 'a bench whose policy requires the sandbox' '
	agent_bench bench &&
	agent_policy bench "agent.sandbox=\"required\"" &&
	git -C bench rev-parse official >official.base &&
	git -C bench status --porcelain >status.base
'

test_expect_success_if $SANDBOX 'writes outside the worktree fail inside the agent' '
	agent_use bench write-outside "$TEST_DIR/home" "$TEST_DIR" &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 1: no-change$" out &&
	expect_grep "^sandbox:  bubblewrap (policy: required)$" out &&
	log=bench/.warden/agent/1/agent.log &&
	expect_grep "write to ../escaped.txt failed" $log &&
	expect_grep "write to .*/adapters/engines/injected.json failed" $log &&
	expect_grep "write to $TEST_DIR/home/.profile-injected failed" $log &&
	expect_grep "write to $TEST_DIR/outside.txt failed" $log &&
	expect_grep "wrote \$HOME/note.json" $log &&
	expect_grep "wrote \$TMPDIR/scratch" $log &&
	test ! -e bench/.warden/worktrees/escaped.txt &&
	test ! -e bench/adapters/engines/injected.json &&
	test ! -e home/.profile-injected && test ! -e outside.txt &&
	test "$(sqlite3 bench/.warden/warden.db "select sandbox from agent_runs where id = 1")" = bubblewrap &&
	untouched
'

test_expect_success_if $SANDBOX 'hooks, config and refs the agent writes are its own view'"'"'s; the .git file is read-only' '
	git -C bench rev-parse official >official.base &&
	sha256sum bench/.git/config >config.base &&
	for a in "write-gitdir hook" "write-gitdir config" move-ref write-gitfile; do
		agent_use bench $a &&
		git -C bench rev-parse official >official.base &&
		sha256sum bench/.git/config >config.base &&
		expect_exit 1 bw agent run --engine simfix &&
		expect_grep "^agent run [0-9]*: no-change$" out || return 1
		id=$(sed -n "s/^agent run \([0-9]*\):.*/\1/p" out)
		cat bench/.warden/agent/$id/agent.log >>gitdir.log
		untouched || return 1
		sha256sum bench/.git/config >config.now &&
		expect_equal config.base config.now || return 1
	done &&
	expect_grep "wrote .*/\.warden/agent/[0-9]*/view\.git/hooks/post-checkout" gitdir.log &&
	expect_grep "wrote .*/\.warden/agent/[0-9]*/view\.git/config" gitdir.log &&
	expect_grep "write to .git failed" gitdir.log &&
	test ! -e bench/.git/hooks/post-checkout &&
	! grep -q fsmonitor bench/.git/config
'

test_expect_success_if $SANDBOX 'a daemon left in the sandbox goes with it at the time limit' '
	agent_use bench overtime 27182 &&
	agent_policy bench "agent.time_limit_s=2" &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "(at the time limit)" out &&
	test -s bench/.warden/agent/6/tmp/daemon.pid &&
	test "$(ps -eo args | grep -c "^sleep 2718[23]$")" = 0
'

test_expect_success 'required and no sandbox: refused, recorded, exit 3' '
	agent_use bench good-fix &&
	agent_policy bench "agent.time_limit_s=120" &&
	before=$(sqlite3 bench/.warden/warden.db "select count(*) from agent_runs") &&
	WARDEN_BWRAP=/nonexistent/bwrap expect_exit 3 bw agent run --engine simfix &&
	expect_grep "policy requires a sandbox" err &&
	expect_grep "/nonexistent/bwrap" err &&
	test "$(sqlite3 bench/.warden/warden.db "select state from agent_runs order by id desc limit 1")" = refused &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from agent_runs")" = $((before + 1)) &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from journal where kind = '"'"'agent.refused'"'"'")" = 1 &&
	id=$(sqlite3 bench/.warden/warden.db "select max(id) from agent_runs") &&
	test ! -e bench/.warden/worktrees/$id &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 0
'

test_expect_success 'best-effort and no sandbox: runs, and records that none was in force' '
	agent_policy bench "agent.sandbox=\"best-effort\"" &&
	WARDEN_BWRAP=/nonexistent/bwrap expect_exit 0 bw agent run --engine simfix &&
	expect_grep "^sandbox:  none (policy: best-effort)$" out &&
	expect_grep "no sandbox (bubblewrap" out &&
	id=$(sqlite3 bench/.warden/warden.db "select max(id) from agent_runs") &&
	test "$(sqlite3 bench/.warden/warden.db "select sandbox from agent_runs where id = $id")" = none
'

test_expect_success_if $SANDBOX 'inside the sandbox warden lints the worktree and, with network host, smoke-tests it' '
	agent_use bench self-check &&
	agent_policy bench "agent.network=\"host\"" "agent.sandbox=\"required\"" &&
	PATH="$(dirname "$WARDEN"):$PATH" expect_exit 0 bw agent run --engine simfix &&
	id=$(sed -n "s/^agent run \([0-9]*\):.*/\1/p" out) &&
	expect_grep "^agent run $id: queued$" out &&
	expect_grep "^self-check: lint exit 0$" bench/.warden/agent/$id/agent.log &&
	expect_grep "^self-check: campaign complete 2/2$" bench/.warden/agent/$id/agent.log &&
	expect_grep "^sandbox:  bubblewrap (policy: required)$" out &&
	git -C bench status --porcelain >status.now &&
	expect_equal status.base status.now
'

test_expect_success_if $HTTPS 'under https too: its own engines serve on ports the rule lets it reach' '
	agent_policy bench "agent.network=\"https\"" "agent.sandbox=\"required\"" &&
	PATH="$(dirname "$WARDEN"):$PATH" expect_exit 0 bw agent run --engine simfix &&
	id=$(sed -n "s/^agent run \([0-9]*\):.*/\1/p" out) &&
	expect_grep "^agent run $id: queued$" out &&
	expect_grep "^self-check: lint exit 0$" bench/.warden/agent/$id/agent.log &&
	expect_grep "^self-check: campaign complete 2/2$" bench/.warden/agent/$id/agent.log
'

test_expect_success_if $SANDBOX 'a model API URL on a port the https rule does not reach is warned of' '
	agent_policy bench "agent.command=[\"sh\", \"-c\", \"true\"]" \
	    "agent.network=\"https\"" "agent.env=[\"PATH\", \"ANTHROPIC_BASE_URL\"]" &&
	ANTHROPIC_BASE_URL=http://127.0.0.1:8080 expect_exit 1 bw agent run --engine simfix &&
	expect_grep "agent: ANTHROPIC_BASE_URL is on port 8080, which the network rule \"https\" does not reach" err &&
	expect_grep "^warning:  ANTHROPIC_BASE_URL is on port 8080" out &&
	ANTHROPIC_BASE_URL=https://gateway.example.org expect_exit 1 bw agent run --engine simfix &&
	expect_no_grep "^warning:" out
'

test_done
