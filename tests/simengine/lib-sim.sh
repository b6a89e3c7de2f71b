# tests/simengine/lib-sim.sh - helpers of the t1xxx tests, sourced after
# tests/lib.sh: start and stop warden-simengine, post requests, read
# the trace and memory. Servers are named; their files live in $TEST_DIR:
# NAME.port, NAME.pid, NAME.log. sim_cleanup (before test_done) stops any
# server a failed test left behind.

# The interpreter itself, not a version-manager shim that costs half a
# second per start.
SIM_PYTHON=$(python3 -c 'import sys; print(sys.executable)')
SIMCLIENT="$SIM_PYTHON $TOP_SRCDIR/tests/simengine/simclient.py"

# sim_spawn NAME TICKS [ARGS...]: start a server on a free port and wait
# (TICKS of 50 ms at most) until it wrote its port; not for health.
sim_spawn() {
	_n=$1
	_max=$2
	shift 2
	rm -f "$TEST_DIR/$_n.port"
	"$SIMENGINE" --port 0 --port-file "$TEST_DIR/$_n.port" "$@" \
	    >"$TEST_DIR/$_n.log" 2>&1 &
	echo $! >"$TEST_DIR/$_n.pid"
	echo $! >>"$TEST_DIR/.sim-pids"
	_i=0
	while [ ! -s "$TEST_DIR/$_n.port" ]; do
		_i=$((_i + 1))
		if [ "$_i" -gt "$_max" ] || ! kill -0 "$(cat "$TEST_DIR/$_n.pid")" 2>/dev/null; then
			echo "simengine '$_n' did not start:"
			cat "$TEST_DIR/$_n.log"
			return 1
		fi
		sleep 0.05
	done
}

# sim_start NAME [ARGS...]: start a server on a free port, wait for health.
sim_start() {
	_s=$1
	shift
	sim_spawn "$_s" 100 "$@" || return 1
	wait_http "http://127.0.0.1:$(sim_port "$_s")/health" 10
}

sim_port() { cat "$TEST_DIR/$1.port"; }
sim_pid() { cat "$TEST_DIR/$1.pid"; }
sim_url() { echo "http://127.0.0.1:$(sim_port "$1")/v1/chat/completions"; }

# sim_stop NAME: SIGTERM, and fail unless the server exits 0.
sim_stop() {
	_p=$(sim_pid "$1")
	kill -TERM "$_p"
	_rc=0
	wait "$_p" || _rc=$?
	rm -f "$TEST_DIR/$1.pid"
	if [ "$_rc" -ne 0 ]; then
		echo "simengine '$1' exited $_rc"
		cat "$TEST_DIR/$1.log"
		return 1
	fi
}

# sim_wait_exit NAME: wait for a server that should die; its exit status
# goes to $SIM_RC (134 for SIGABRT).
sim_wait_exit() {
	_p=$(sim_pid "$1")
	SIM_RC=0
	wait "$_p" || SIM_RC=$?
	rm -f "$TEST_DIR/$1.pid"
}

# sim_cleanup: stop every server this script started that still runs
# (a failed test leaves its servers behind).
sim_cleanup() {
	[ -f "$TEST_DIR/.sim-pids" ] || return 0
	for _p in $(cat "$TEST_DIR/.sim-pids"); do
		case "$(ps -p "$_p" -o args= 2>/dev/null)" in
		*warden-simengine*) kill -TERM "$_p" 2>/dev/null || true ;;
		esac
	done
}

# chat NAME BODY-JSON [CURL-ARGS...]: POST, body to stdout.
chat() {
	_n=$1
	_b=$2
	shift 2
	curl -sS -N "$@" -H 'Content-Type: application/json' -d "$_b" \
	    "$(sim_url "$_n")"
}

# user_body TEXT [EXTRA-JSON-MEMBERS]: a streaming request body.
user_body() {
	printf '{"model":"sim","stream":true%s,"messages":[{"role":"user","content":"%s"}]}' \
	    "${2:+,$2}" "$1"
}

# sse_check FILE EXPR...: FILE is a valid SSE chat-completions stream and
# every Python EXPR over its summary `o` holds (see simclient.py).
sse_check() {
	$SIMCLIENT check "$@"
}

# json_check FILE EXPR...: every EXPR over the JSON in FILE (`o`) holds.
# lines_check: the same for a JSON-lines file such as a trace (`o` is the
# list of lines). One python start per call: python is slow to start on
# loaded machines, so tests batch their checks.
json_check() {
	$SIMCLIENT expect "$@"
}
lines_check() {
	$SIMCLIENT lines "$@"
}

# rss_kb PID: resident set size in kB from /proc.
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}
