#!/bin/sh
# bench/loadgen-peer.sh - warden's load generator beside vLLM's client
# (the request function of vLLM's benchmarks, restated in
# bench/loadgen-peer.py, on aiohttp) in the same run, against the same
# warden-simengine streams: --itl 20, 50 tokens, one event per write,
# every stream decoding at once, the engine on one core (--realtime, its
# --trace holding the send time of every token) and the client on the
# other (taskset).
#
# For each c in 1 16 64 256 1024 and each client, one row: requests,
# token events, µs of client CPU per event (every thread of the client
# process, user + system, over the run), token events per wake-up (per
# voluntary context switch), system calls and epoll waits per event (when
# `perf stat` can count the process's system calls: "-" otherwise), the
# client's receive time minus the engine's send time of each token
# (p50/p99, µs) and the TTFT bias (the client's TTFT minus the engine's,
# p50/p99, ms). Then per c the ratio of the peer's µs/event to warden's.
# warden runs as the campaign runs it (its connections opened first,
# raised priority); the peer as vLLM's benchmark_serving.py does (a
# connection per request, a semaphore of c). Each client gets a fresh
# engine. Prints figures; asserts nothing about them: it exits 1 only if
# a run failed.
#
# Environment: SIMENGINE, TOP_SRCDIR, TOP_BUILDDIR (set by `make bench`);
# LOADGEN_PEER_LEVELS (default "1 16 64 256 1024"), LOADGEN_PEER_CLIENTS
# (default "warden-nc warden peer"; warden-nc is warden without its
# coalescing wait, WARDEN_LOADGEN_COALESCE=0), LOADGEN_PEER_ROWS (a file to
# which every row's whole JSON from bench/loadgen-compare.py is appended,
# with its client and c: the first token's receive-minus-send and the
# submission-to-receipt split of the TTFT bias). Skipped (with a line saying so) where no
# python3 has aiohttp (Debian: python3-aiohttp).
set -u

: "${TOP_SRCDIR:=.}"
: "${TOP_BUILDDIR:=.}"
: "${SIMENGINE:=$TOP_BUILDDIR/warden-simengine}"
DRIVER="$TOP_BUILDDIR/bench/loadgen-bench"
PEER="$TOP_SRCDIR/bench/loadgen-peer.py"
COMPARE="$TOP_SRCDIR/bench/loadgen-compare.py"
LEVELS=${LOADGEN_PEER_LEVELS:-"1 16 64 256 1024"}
CLIENTS=${LOADGEN_PEER_CLIENTS:-"warden-nc warden peer"}
TOKENS=50

if [ ! -x "$SIMENGINE" ] || [ ! -x "$DRIVER" ]; then
	echo "loadgen-peer: skipped: $SIMENGINE or $DRIVER not built"
	exit 0
fi
PEER_PY=""
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import aiohttp' >/dev/null 2>&1; then
		PEER_PY=$py
		break
	fi
done
if [ -z "$PEER_PY" ]; then
	echo "loadgen-peer: skipped: no python3 with aiohttp (python3-aiohttp)"
	exit 0
fi
PIN_CLIENT=""
PIN_SERVER=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	PIN_CLIENT="taskset -c 0"
	PIN_SERVER="taskset -c 1"
else
	echo "loadgen-peer: note: not pinned (needs taskset and two cores)"
fi
PERF_EVENTS="raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait"
HAVE_PERF=no
if command -v perf >/dev/null 2>&1 &&
    perf stat -e "$PERF_EVENTS" -- true >/dev/null 2>&1; then
	HAVE_PERF=yes
else
	echo "loadgen-peer: note: no perf stat with syscall tracepoints:" \
	    "no system call counts"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/loadgen-peer.XXXXXX")
SIM_PID=""
cleanup() {
	if [ -n "$SIM_PID" ]; then
		kill "$SIM_PID" 2>/dev/null
		wait "$SIM_PID" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

start_sim() {
	rm -f "$WORK/port" "$WORK/trace.jsonl"
	$PIN_SERVER "$SIMENGINE" --port 0 --port-file "$WORK/port" \
	    --itl 20 --itl-growth 0 --prefill-rate 0 --max-batch 4096 \
	    --output-tokens "$TOKENS" --events-per-write 1 --realtime \
	    --trace "$WORK/trace.jsonl" >"$WORK/sim.log" 2>&1 &
	SIM_PID=$!
	n=0
	while [ ! -s "$WORK/port" ] && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if [ ! -s "$WORK/port" ]; then
		echo "loadgen-peer: warden-simengine did not start:"
		cat "$WORK/sim.log"
		exit 1
	fi
	URL="http://127.0.0.1:$(cat "$WORK/port")/v1/chat/completions"
}

stop_sim() {
	kill "$SIM_PID" 2>/dev/null
	wait "$SIM_PID" 2>/dev/null
	SIM_PID=""
}

# run_client CLIENT C N: the client's run, its summary in $WORK/run.json,
# its records in $WORK/records.jsonl, perf's counts in $WORK/perf.csv.
run_client() {
	: >"$WORK/perf.csv"
	COALESCE=1
	[ "$1" = warden-nc ] && COALESCE=0
	if [ "$1" != peer ]; then
		set -- "$DRIVER" side "$URL" "$2" "$3" "$TOKENS" \
		    "$WORK/records.jsonl"
	else
		set -- "$PEER_PY" "$PEER" "$URL" "$2" "$3" "$TOKENS" \
		    "$WORK/records.jsonl"
	fi
	if [ "$HAVE_PERF" = yes ]; then
		rm -f "$WORK/ctl" "$WORK/ack"
		mkfifo "$WORK/ctl" "$WORK/ack"
		WARDEN_LOADGEN_COALESCE=$COALESCE \
		LOADGEN_BENCH_PERF_CTL="$WORK/ctl" \
		LOADGEN_BENCH_PERF_ACK="$WORK/ack" \
		    perf stat -x, -o "$WORK/perf.csv" -e "$PERF_EVENTS" \
		    --control "fifo:$WORK/ctl,$WORK/ack" -D -1 -- \
		    $PIN_CLIENT "$@" >"$WORK/run.json" 2>"$WORK/run.err"
	else
		WARDEN_LOADGEN_COALESCE=$COALESCE \
		    $PIN_CLIENT "$@" >"$WORK/run.json" 2>"$WORK/run.err"
	fi
}

printf '%-9s %5s %6s %7s %8s %8s %8s %7s %9s %9s %8s %8s\n' client c \
    requests events us/event ev/wake sys/ev wait/ev rs_p50_us rs_p99_us \
    ttftb_p50 ttftb_p99
FAILED=0
for C in $LEVELS; do
	N=$((C * 2))
	[ $N -lt 32 ] && N=32
	: >"$WORK/us.$C"
	for CLIENT in $CLIENTS; do
		start_sim
		if ! run_client "$CLIENT" "$C" "$N"; then
			echo "loadgen-peer: $CLIENT at c=$C failed:"
			tail -5 "$WORK/run.err"
			FAILED=1
		fi
		sleep 0.5	# the engine writes a request's trace line after it
		stop_sim
		[ -s "$WORK/run.json" ] || continue
		python3 "$COMPARE" "$WORK/trace.jsonl" "$WORK/records.jsonl" \
		    "$WORK/run.json" "$WORK/perf.csv" >"$WORK/row.json" || {
			FAILED=1
			continue
		}
		if [ -n "${LOADGEN_PEER_ROWS:-}" ]; then
			python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
r.update(client=sys.argv[2], c=int(sys.argv[3]))
print(json.dumps(r))' "$WORK/row.json" "$CLIENT" "$C" >>"$LOADGEN_PEER_ROWS"
		fi
		python3 - "$WORK/row.json" "$CLIENT" "$C" "$WORK/us.$C" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
f = lambda k, fmt: fmt % s[k] if k in s else "-"
print("%-9s %5s %6d %7d %8.1f %8.2f %8s %7s %9.1f %9.1f %8.3f %8.3f%s" % (
    sys.argv[2], sys.argv[3], s["requests"], s["events"], s["us_per_event"],
    s["events_per_wakeup"], f("syscalls_per_event", "%.2f"),
    f("waits_per_event", "%.3f"), s["rs_p50_us"], s["rs_p99_us"],
    s["ttft_bias_p50_ms"], s["ttft_bias_p99_ms"],
    "" if s["failed"] == 0 and s["matched"] == s["records"] else
    "  (%d failed, %d of %d matched)" % (s["failed"], s["matched"],
                                         s["records"])))
open(sys.argv[4], "a").write("%s %f\n" % (sys.argv[2], s["us_per_event"]))
EOF
	done
done
echo
echo "peer us/event / warden us/event (the goal: >= 3 at every c)"
for C in $LEVELS; do
	python3 - "$WORK/us.$C" "$C" <<'EOF'
import sys
us = dict(l.split() for l in open(sys.argv[1]) if l.strip())
w, p = float(us.get("warden", 0)), float(us.get("peer", 0))
print("c=%-5s %s" % (sys.argv[2], "%.2f" % (p / w) if w > 0 and p > 0 else "-"))
EOF
done
exit $FAILED
