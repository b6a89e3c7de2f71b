#!/bin/sh
# t6006: a hostile agent sees no secret of the maintainer's through any
# channel: files in HOME (an ssh key, git credentials), the repository's
# .git/config (a token in the remote URL) and the store, the environment,
# a descriptor warden's caller left open, the ssh-agent socket, an
# abstract socket, and a local TCP or UDP port under the default network
# rule ("https": TCP to port 443 only). "host" lets it reach those ports,
# "none" does not. Needs bubblewrap (and Landlock 4 for the network rule); reports
# itself skipped where they cannot run.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

SANDBOX=$(can_sandbox)
ABI=$(landlock_abi)
NET=no
[ "$SANDBOX" = yes ] && [ "$ABI" -ge 4 ] && NET=yes
ABSTRACT=warden-t6006-$$

# No secret string anywhere warden wrote or printed.
no_secret() {
	if grep -r -a -l "SECRET-" bench/.warden out err "$@" 2>/dev/null; then
		echo "a secret reached the files above"
		return 1
	fi
}

test_expect_success 'a bench with secrets around it, and a listener' '
	agent_bench bench &&
	mkdir -p "$HOME/.ssh" &&
	echo "SECRET-SSH-KEY-3141" >"$HOME/.ssh/id_ed25519" &&
	echo "https://user:SECRET-CRED-2718@example.invalid" >"$HOME/.git-credentials" &&
	git -C bench remote add origin "https://x:SECRET-REMOTE-1618@example.invalid/r.git" &&
	: >fd7.txt &&
	{ python3 "$AGENTS/listen.py" "$TEST_DIR" $ABSTRACT >/dev/null 2>&1 & } &&
	echo $! >listener.pid &&
	for i in $(seq 100); do test -s port && break; sleep 0.1; done &&
	test -s port && test -s udpport &&
	agent_use bench steal "$HOME" "$TEST_DIR/bench" "$(cat port)" \
	    $ABSTRACT "$TEST_DIR/ssh.sock" "$TEST_DIR" "$(cat udpport)"
'
test_cleanup_pid "$(cat "$TEST_DIR/listener.pid" 2>/dev/null)"

run_steal() {
	GITHUB_TOKEN=SECRET-ENV-0577 SSH_AUTH_SOCK="$TEST_DIR/ssh.sock" \
	    bw agent run --engine simfix >out 2>err 7>>fd7.txt || :
}

test_expect_success_if $NET 'the default rule: no file, variable, descriptor or socket gives a secret' '
	agent_policy bench "agent.sandbox=\"required\"" &&
	run_steal &&
	expect_grep "^sandbox:  bubblewrap (policy: required)" out &&
	log=bench/.warden/agent/1/agent.log &&
	expect_grep "cannot read $HOME/.ssh/id_ed25519" $log &&
	expect_grep "cannot read $HOME/.git-credentials" $log &&
	expect_grep "cannot read $TEST_DIR/bench/.git/config" $log &&
	expect_grep "cannot read $TEST_DIR/bench/.warden/warden.db" $log &&
	expect_grep "git knows no remote" $log &&
	expect_grep "no fd 7" $log &&
	! grep -q "wrote through fd\|created a file through" $log &&
	expect_grep "cannot see $TEST_DIR/fd7.txt" $log &&
	expect_grep "cannot connect to the ssh agent" $log &&
	expect_grep "cannot connect to 127.0.0.1:" $log &&
	expect_grep "cannot send a datagram to 127.0.0.1:.*(Permission denied)" $log &&
	test ! -s fd7.txt &&
	test ! -e connections &&
	bw agent show 1 >show.out 2>>err &&
	bw review show 1 >>show.out 2>>err &&
	bw --json review show 1 >>show.out 2>>err &&
	no_secret show.out
'

test_expect_success_if $NET 'abstract sockets outside the sandbox are out of reach (Landlock 6)' '
	if [ "$ABI" -ge 6 ]; then
		expect_grep "cannot connect to the abstract socket" bench/.warden/agent/1/agent.log &&
		bw --json agent show 1 >show.json &&
		python3 -c "import json; assert json.load(open(\"show.json\"))[\"record\"][\"sandbox\"][\"scoped\"] is True"
	fi &&
	test ! -e connections
'

test_expect_success_if $NET '"host" reaches the local port; it is the rule that kept it out' '
	agent_policy bench "agent.network=\"host\"" &&
	run_steal &&
	expect_grep "connected to 127.0.0.1:" bench/.warden/agent/2/agent.log &&
	expect_grep "sent a datagram to 127.0.0.1:" bench/.warden/agent/2/agent.log &&
	expect_grep "connection to the tcp" connections &&
	wait_until 30 "grep -q \"datagram to the udp\" connections" &&
	expect_grep "datagram to the udp" connections &&
	! grep -q "ssh agent" connections &&
	no_secret
'

test_expect_success_if $SANDBOX '"none": not even the local port' '
	rm -f connections &&
	agent_policy bench "agent.network=\"none\"" &&
	run_steal &&
	expect_grep "cannot connect to 127.0.0.1:" bench/.warden/agent/3/agent.log &&
	test ! -e connections &&
	no_secret
'

test_expect_success 'a network rule policy does not know is refused with its field' '
	bench_policy bench "agent.network=\"everything\"" &&
	expect_exit 1 bw lint &&
	expect_grep "policy/warden.json:[0-9]*:[0-9]*: .agent.network. must be one of .host., .https., .none." out
'

test_done
