#!/bin/sh
# t6002: scripted bad agents. Each is rejected by the gate or quarantined
# by the guard, with the reason recorded, and nothing of theirs reaches
# the official branch or the maintainer's checkout. The guard's tests run
# with agent.sandbox "off", so the agent's writes really happen and only
# the check afterwards stands between them and the repository (t6003
# shows the sandbox stopping them first).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

# state_of ID: the run's state in the store.
state_of() {
	sqlite3 bench/.warden/warden.db "select state from agent_runs where id = $1"
}

# untouched: the official branch and the maintainer's checkout are as
# they were, and no review was queued.
untouched() {
	git -C bench rev-parse official >official.now &&
	expect_equal official.base official.now &&
	git -C bench status --porcelain >status.now &&
	expect_equal status.base status.now &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 0
}

test_expect_success 'a bench with a broken engine' '
	agent_bench bench &&
	git -C bench rev-parse official >official.base &&
	git -C bench status --porcelain >status.base
'

test_expect_success 'an agent that edits policy/ and runner/ is rejected by the gate' '
	agent_use bench edit-zone &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 1: rejected$" out &&
	expect_grep "outside-allowlist policy/warden.json" out &&
	expect_grep "outside-allowlist runner/backdoor.c" out &&
	test "$(state_of 1)" = rejected &&
	untouched
'

test_expect_success 'an agent that adds a symlink is rejected by the gate' '
	agent_use bench add-symlink &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 2: rejected$" out &&
	expect_grep "symlink adapters/engines/simfix/serve.sh" out &&
	untouched
'

test_expect_success 'without a sandbox, writes outside the worktree quarantine the run' '
	agent_use bench write-outside "$TEST_DIR/home" "$TEST_DIR" &&
	agent_policy bench "agent.sandbox=\"off\"" &&
	git -C bench rev-parse official >official.base &&
	git -C bench status --porcelain >status.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 3: quarantined$" out &&
	expect_grep "^sandbox:  off (policy: off)$" out &&
	expect_grep "quarantined: file .\.warden/worktrees/escaped.txt. was created" out &&
	expect_grep "quarantined: file .adapters/engines/injected.json. was created" out &&
	test "$(state_of 3)" = quarantined &&
	expect_grep "wrote \$HOME/note.json" bench/.warden/agent/3/agent.log &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 0 &&
	rm bench/adapters/engines/injected.json bench/.warden/worktrees/escaped.txt \
	    home/.profile-injected outside.txt
'

test_expect_success 'an agent that writes a hook through its gitdir is quarantined, the hook removed' '
	agent_use bench write-gitdir hook &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 4: quarantined$" out &&
	expect_grep "quarantined: file .\.git/hooks/post-checkout. was created" out &&
	expect_grep "put back: removed .\.git/hooks/post-checkout." out &&
	test ! -e bench/.git/hooks/post-checkout &&
	untouched
'

test_expect_success 'an agent that writes .git/config is quarantined, the config put back' '
	agent_use bench write-gitdir config &&
	git -C bench rev-parse official >official.base &&
	cp bench/.git/config config.before &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 5: quarantined$" out &&
	expect_grep "quarantined: file .\.git/config. changed" out &&
	expect_grep "wrote .*/\.git/config" bench/.warden/agent/5/agent.log &&
	expect_equal config.before bench/.git/config &&
	untouched
'

test_expect_success 'an agent that moves a ref is quarantined, the ref put back' '
	agent_use bench move-ref &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 6: quarantined$" out &&
	expect_grep "quarantined: ref .refs/heads/official. changed" out &&
	expect_grep "moved official to" bench/.warden/agent/6/agent.log &&
	untouched &&
	git -C bench fsck --no-dangling
'

test_expect_success 'an agent past its time limit is killed with its daemonised grandchild' '
	agent_use bench overtime 31415 &&
	agent_policy bench "agent.time_limit_s=2" &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 7: agent-failed$" out &&
	expect_grep "^exit:     killed by signal 15 (SIGTERM) (at the time limit)" out &&
	expect_grep "ran past its time limit of 2 s" bench/.warden/agent/7/agent.log &&
	daemon=$(cat bench/.warden/agent/7/tmp/daemon.pid) &&
	test -n "$daemon" &&
	! kill -0 "$daemon" 2>/dev/null &&
	test "$(ps -eo args | grep -c "^sleep 3141[56]$")" = 0 &&
	bw --json agent show 7 >show.json &&
	python3 - show.json <<-PY &&
	import json, sys
	r = json.load(open(sys.argv[1]))["record"]
	assert r["exit"]["timed_out"] is True, r["exit"]
	assert r["failure"]["reason"] == "ran past its time limit of 2 s", r["failure"]
	# the daemon went with the program at its stop (every descendant is a
	# member), so nothing was left for the sweep after it to reap: its
	# death is checked above (kill -0)
	# killed at its 2 s limit, not after its 31416 s sleep; the bound
	# is loose so that a busy machine does not reach it
	assert r["exit"]["duration_s"] < 600, r["exit"]
	PY
	untouched
'

test_expect_success 'every bad run is journaled with its reasons; the chain holds' '
	bw journal verify &&
	expect_exit 0 bw --json journal show --kind agent.finished &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	states = [e["body"]["state"] for e in d]
	assert states == ["rejected", "rejected", "quarantined", "quarantined",
	                  "quarantined", "quarantined", "agent-failed"], states
	for e in d:
	    if e["body"]["state"] == "quarantined":
	        assert e["body"]["reasons"], e
	    if e["body"]["state"] == "rejected":
	        assert e["body"]["gate"]["violations"], e
	PY
'

test_done
