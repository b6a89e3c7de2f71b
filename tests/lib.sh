# tests/lib.sh - the shared harness of warden's integration tests.
#
# A test script sources this file, then runs one behaviour per
# test_expect_success, then test_done. Output is TAP, read by automake's
# tap-driver. Each test body runs in a subshell with `set -e`, in the
# script's scratch directory $TEST_DIR; state carries between tests only
# through files. set -e ignores a failure anywhere but at the end of an
# && chain: join a body's statements with && (tests/check-chains.py,
# run by t0018, finds a chain a newline or ";" ends). On failure the
# scratch directory is kept and its path printed.
#
#   . "$TOP_SRCDIR/tests/lib.sh"
#   test_expect_success 'init makes a repository' '
#       warden init bench && test -d bench/.git
#   '
#   test_done

set -u

: "${WARDEN:?WARDEN must point at the built warden binary}"
: "${TOP_SRCDIR:?TOP_SRCDIR must point at the source tree}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${SIMENGINE:=$TOP_BUILDDIR/warden-simengine}"

test_count=0
test_failures=0
test_skipped=0
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/warden-$TEST_NAME.XXXXXX")
TEST_PIDS=""

# A private, predictable environment: no user config leaks in.
HOME="$TEST_DIR/home"
mkdir -p "$HOME"
GIT_CONFIG_NOSYSTEM=1
GIT_AUTHOR_NAME='Test Maintainer'
GIT_AUTHOR_EMAIL='maintainer@example.org'
GIT_COMMITTER_NAME='Test Maintainer'
GIT_COMMITTER_EMAIL='maintainer@example.org'
GIT_AUTHOR_DATE='2026-11-01T12:00:00Z'
GIT_COMMITTER_DATE='2026-11-01T12:00:00Z'
TZ=UTC
LC_ALL=C
# A python3 that is a pyenv shim runs a chain of bash scripts on every
# call, about a third of the suite's CPU: the interpreter it resolves to
# goes first on PATH instead (the same python, found directly).
_pybin=$(python3 -c 'import os, sys; print(os.path.dirname(os.path.realpath(sys.executable)))' 2>/dev/null) &&
    [ -x "$_pybin/python3" ] && PATH="$_pybin:$PATH"
export PATH
export HOME GIT_CONFIG_NOSYSTEM GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
    GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_AUTHOR_DATE \
    GIT_COMMITTER_DATE TZ LC_ALL TEST_DIR
git config --global user.name 'Test Maintainer'
git config --global user.email 'maintainer@example.org'
git config --global init.defaultBranch main
git config --global advice.detachedHead false
unset WARDEN_REPO WARDEN_CYCLE 2>/dev/null || true
# The machine-wide campaign lock of each script is its own, so scripts
# (and other people's test runs) on one machine do not exclude each other.
WARDEN_LOCK_DIR=$TEST_DIR
export WARDEN_LOCK_DIR

warden() {
	"$WARDEN" "$@"
}

# "yes" when warden's sandbox (bubblewrap, as sandbox-linux.c calls it)
# can run here; tests that need it are skipped elsewhere.
can_sandbox() {
	if bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid \
	    --die-with-parent --new-session --cap-drop ALL --perms 0555 \
	    --size 65536 --tmpfs /tmp --unshare-net -- true >/dev/null 2>&1; then
		echo yes
	else
		echo no
	fi
}

# Register a background process to be killed (with its group) at the end.
test_cleanup_pid() {
	TEST_PIDS="$TEST_PIDS $1"
}

test_expect_success() {
	_desc=$1
	_body=$2
	test_count=$((test_count + 1))
	[ -z "${WARDEN_TEST_TIMES:-}" ] || _t0=$(date +%s%N)
	# A statement of its own, not an if's condition nor part of an &&
	# or || list: there the shell ignores set -e inside the subshell
	# too, and a failing statement that ends no chain would go unseen.
	(cd "$TEST_DIR" && set -e && eval "$_body") \
	    >"$TEST_DIR/.out.$test_count" 2>&1
	_rc=$?
	if [ "$_rc" -eq 0 ]; then
		echo "ok $test_count - $_desc"
		[ -z "${WARDEN_TEST_TIMES:-}" ] ||
		    echo "# $(( ($(date +%s%N) - _t0) / 1000000 )) ms"
	else
		echo "not ok $test_count - $_desc"
		sed 's/^/# /' "$TEST_DIR/.out.$test_count"
		test_failures=$((test_failures + 1))
	fi
}

# Like test_expect_success, but skipped (TAP SKIP) when $1 is not "yes".
test_expect_success_if() {
	_cond=$1
	shift
	if [ "$_cond" = yes ]; then
		test_expect_success "$@"
	else
		test_count=$((test_count + 1))
		echo "ok $test_count - $1 # SKIP prerequisite missing"
		test_skipped=$((test_skipped + 1))
	fi
}

test_done() {
	for _p in $TEST_PIDS; do
		kill -TERM -- "-$_p" 2>/dev/null || kill -TERM "$_p" 2>/dev/null || true
	done
	for _p in $TEST_PIDS; do
		wait "$_p" 2>/dev/null || true
	done
	echo "1..$test_count"
	if [ "$test_failures" -ne 0 ]; then
		echo "# $test_failures of $test_count failed; kept $TEST_DIR"
		exit 1
	fi
	rm -rf "$TEST_DIR"
	exit 0
}

# expect_exit CODE CMD...: run CMD, fail unless it exits with CODE.
# Its stdout goes to ./out, stderr to ./err (in the current directory).
expect_exit() {
	_want=$1
	shift
	_got=0
	"$@" >out 2>err || _got=$?
	if [ "$_got" -ne "$_want" ]; then
		echo "expected exit $_want, got $_got from: $*"
		echo "--- stdout"; cat out
		echo "--- stderr"; cat err
		return 1
	fi
}

# expect_grep PATTERN FILE: fail, showing FILE, unless PATTERN matches.
expect_grep() {
	if ! grep -q -e "$1" "$2"; then
		echo "expected /$1/ in $2:"
		cat "$2"
		return 1
	fi
}

# unwrap FILE: FILE's lines as warden wrapped them to 80 columns, each on
# one line again: a line indented 4 or more deeper than the line that
# began its paragraph continues it (warden wraps prose that way; lines
# under a line are less deep), joined with a blank.
unwrap() {
	awk '{ match($0, /^ */); ind = RLENGTH }
	    NR > 1 && $0 != "" && ind >= base + 4 {
		sub(/^ +/, ""); line = line " " $0; next }
	    NR > 1 { print line }
	    { line = $0; base = ind }
	    END { if (NR > 0) print line }' "$1"
}

# expect_no_grep PATTERN FILE
expect_no_grep() {
	if grep -q -e "$1" "$2"; then
		echo "did not expect /$1/ in $2:"
		cat "$2"
		return 1
	fi
}

# expect_equal FILE-EXPECTED FILE-ACTUAL: byte comparison with a diff.
expect_equal() {
	if ! cmp -s "$1" "$2"; then
		diff -u "$1" "$2" || true
		return 1
	fi
}

# free_port: print a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_until SECONDS CONDITION: poll the shell condition every 0.1 s
# until it holds; fails after SECONDS, so an && chain stops there. Use it
# rather than "n=0; while ...": a ";" inside a test body ends its && chain,
# and set -e ignores a failure anywhere but at a chain's end, so what came
# before would fail unseen.
wait_until() {
	_wu_n=$(( $1 * 10 ))
	while ! eval "$2"; do
		if [ "$_wu_n" -le 0 ]; then
			echo "timed out after $1 s waiting until: $2"
			return 1
		fi
		sleep 0.1
		_wu_n=$((_wu_n - 1))
	done
}

# wait_http URL [SECONDS]: wait until URL answers 200.
wait_http() {
	wait_until "${2:-10}" "curl -fs -o /dev/null '$1'"
}

# make_bench_repo DIR: a fresh benchmark repository made by `warden init`.
make_bench_repo() {
	"$WARDEN" init "$1" >/dev/null
}

# submit_engine_change N: in ./bench, queue a patch adding
# adapters/engines/eN.json as a review (source agent).
submit_engine_change() {
	mkdir -p bench/adapters/engines &&
	printf '{"name": "e%s"}\n' "$1" >"bench/adapters/engines/e$1.json" &&
	git -C bench add -A && git -C bench diff --cached >"p$1.patch" &&
	git -C bench reset -q --hard &&
	warden --repo bench patch submit "p$1.patch" --source agent >/dev/null
}

# hold_lock REPO TEXT: a `warden journal note TEXT` in the background that
# takes REPO's writer lock and holds it until release_lock; returns once
# the lock is held (the holder's note in .warden/warden.lock), so a test
# waits for that state, not for the clock. One holder at a time.
hold_lock() {
	rm -f "$TEST_DIR/.release-lock"
	WARDEN_TEST_HOLD_LOCK_UNTIL="$TEST_DIR/.release-lock" \
	    WARDEN_TEST_HOLD_LOCK_MS=60000 WARDEN_BUSY_TIMEOUT_MS=60000 \
	    "$WARDEN" --repo "$1" journal note "$2" >"$TEST_DIR/.holder.out" 2>&1 &
	HOLDER_PID=$!
	_n=0
	until grep -q "^pid $HOLDER_PID " "$1/.warden/warden.lock" 2>/dev/null; do
		_n=$((_n + 1))
		if [ $_n -gt 1200 ] || ! kill -0 $HOLDER_PID 2>/dev/null; then
			echo "the holder did not take the lock:"
			cat "$TEST_DIR/.holder.out"
			return 1
		fi
		sleep 0.05
	done
}

# release_lock: let the holder of hold_lock commit; fail unless it exits 0.
release_lock() {
	: >"$TEST_DIR/.release-lock"
	wait $HOLDER_PID
}
