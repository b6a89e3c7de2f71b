#!/bin/sh
# bench/loadgen-sse.sh - how much SSE warden's load generator can take in
# per client CPU-second, next to curl --parallel on the same streams.
#
# warden-simengine runs with --itl 0 (tokens as fast as it can write) on
# one core, the client on the other (taskset). For each wire format -
# coalesced (--events-per-write 16) and one event per read (1) - and each
# concurrency c in 1 16 64 256 1024 it prints: SSE events per client
# CPU-second, requests/s, client bytes per CPU-second, and the same bytes
# per CPU-second for `curl --parallel` fetching the same request the same
# number of times in the same run, with the ratio warden/curl (above 1:
# warden spends less CPU per byte). Goals: >= 1,000,000 events
# per client CPU-second coalesced, >= 250,000 one per read, 0 errors at
# c=1024. Exits 1 if any sweep had errors.
#
# Then real streams: one event per read because the engine paces them
# (--itl 20, one event per write, every stream decoding at once, as an
# engine's step sends one token to each), many streams, the engine on
# the other core: events per client CPU-second, as a ratio to the
# bundled (coalesced) figure at the same c and to c=1 of the same run;
# receive minus send (the engine's --trace) p50/p99 and its ratio to
# c=1's; submission to the engine's receipt per request (all, and the
# first wave of c); the worker threads the sweep used (the rule, or
# WARDEN_LOADGEN_WORKERS) and client_limited. Each c runs twice: reads
# timed as recv(2) returns, then by the kernel's receive stamps (the
# default), so the second's recv-send is a ratio to the first's.
#
# Environment: SIMENGINE, TOP_BUILDDIR (set by `make bench`);
# LOADGEN_BENCH_LEVELS, LOADGEN_BENCH_TOKENS, LOADGEN_BENCH_REQUESTS to
# make it shorter.
set -u

: "${TOP_BUILDDIR:=.}"
: "${SIMENGINE:=$TOP_BUILDDIR/warden-simengine}"
DRIVER="$TOP_BUILDDIR/bench/loadgen-bench"
LEVELS=${LOADGEN_BENCH_LEVELS:-"1 16 64 256 1024"}
REAL_LEVELS=${LOADGEN_BENCH_REAL_LEVELS:-"1 64 256 1024"}
TOKENS=${LOADGEN_BENCH_TOKENS:-256}
MIN_REQUESTS=${LOADGEN_BENCH_REQUESTS:-400}

if [ ! -x "$SIMENGINE" ] || [ ! -x "$DRIVER" ]; then
	echo "loadgen-sse: skipped: $SIMENGINE or $DRIVER not built"
	exit 0
fi
PIN_CLIENT=""
PIN_SERVER=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	PIN_CLIENT="taskset -c 0"
	PIN_SERVER="taskset -c 1"
else
	echo "loadgen-sse: note: not pinned (needs taskset and two cores)"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/loadgen-bench.XXXXXX")
SIM_PID=""
cleanup() {
	for p in ${SPIN_PIDS:-}; do kill "$p" 2>/dev/null; done
	if [ -n "$SIM_PID" ]; then
		kill "$SIM_PID" 2>/dev/null
		wait "$SIM_PID" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# start_sim EVENTS_PER_WRITE [MORE OPTIONS]: later options win.
start_sim() {
	rm -f "$WORK/port" "$WORK/trace.jsonl"
	epw=$1
	shift
	$PIN_SERVER "$SIMENGINE" --port 0 --port-file "$WORK/port" --itl 0 \
	    --prefill-rate 0 --max-batch 4096 --output-tokens "$TOKENS" \
	    --events-per-write "$epw" "$@" >"$WORK/sim.log" 2>&1 &
	SIM_PID=$!
	n=0
	while [ ! -s "$WORK/port" ] && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if [ ! -s "$WORK/port" ]; then
		echo "loadgen-sse: warden-simengine did not start:"
		cat "$WORK/sim.log"
		exit 1
	fi
	PORT=$(cat "$WORK/port")
	URL="http://127.0.0.1:$PORT/v1/chat/completions"
}

stop_sim() {
	kill "$SIM_PID" 2>/dev/null
	wait "$SIM_PID" 2>/dev/null
	SIM_PID=""
}

# curl_run C N: curl --parallel fetching N copies of the request; prints
# "bytes cpu_s errors" (curl caps --parallel-max at 300).
curl_run() {
	"$DRIVER" body "$TOKENS" >"$WORK/body.json"
	: >"$WORK/curl.cfg"
	i=0
	while [ $i -lt "$2" ]; do
		printf 'url = "%s"\noutput = "/dev/null"\n' "$URL" >>"$WORK/curl.cfg"
		i=$((i + 1))
	done
	pmax=$1
	[ "$pmax" -gt 300 ] && pmax=300
	$PIN_CLIENT "$DRIVER" cpu curl -s --parallel --parallel-immediate \
	    --parallel-max "$pmax" -H 'Content-Type: application/json' \
	    -H 'Expect:' --data-binary "@$WORK/body.json" \
	    -w '%{http_code} %{size_download}\n' -K "$WORK/curl.cfg" \
	    >"$WORK/curl.out" 2>"$WORK/curl.err"
	python3 - "$WORK/curl.out" "$WORK/curl.err" <<'EOF'
import json, sys
total = errors = 0
for line in open(sys.argv[1]):
    code, size = line.split()
    total += int(size)
    errors += code != "200"
cpu = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])["cpu_s"]
print(total, cpu, errors)
EOF
}

FAILED=0
printf '%-10s %5s %6s %14s %10s %13s %13s %7s %6s %s\n' format c requests \
    "events/cpu-s" "req/s" "bytes/cpu-s" "curl b/cpu-s" "ratio" errors \
    "client_limited"
for EPW in 16 1; do
	start_sim "$EPW"
	FORMAT=coalesced
	[ "$EPW" = 1 ] && FORMAT=one-per-read
	for C in $LEVELS; do
		N=$((C * 4))
		[ $N -lt "$MIN_REQUESTS" ] && N=$MIN_REQUESTS
		$PIN_CLIENT "$DRIVER" sweep "$URL" "$C" "$N" "$TOKENS" \
		    >"$WORK/sweep.json" 2>"$WORK/sweep.err" || {
			echo "loadgen-sse: sweep failed:"; cat "$WORK/sweep.err"
			FAILED=1
			continue
		}
		CURL=$(curl_run "$C" "$N")
		cp "$WORK/sweep.json" "$WORK/bundled.json"
		python3 - "$WORK/bundled.json" "$FORMAT" "$C" "$N" $CURL <<'EOF' || FAILED=1
import json, sys
s = json.load(open(sys.argv[1]))
fmt, c, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cbytes, ccpu, cerr = int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
curl_bps = cbytes / ccpu if ccpu > 0 else 0
ratio = s["bytes_per_cpu_s"] / curl_bps if curl_bps > 0 else 0
errors = s["failed"]
if fmt == "coalesced":
    open(sys.argv[1] + ".c%d" % c, "w").write("%f" % s["events_per_cpu_s"])
print("%-10s %5d %6d %14.0f %10.1f %13.0f %13.0f %7.2f %6d %s%s" % (
    fmt, c, n, s["events_per_cpu_s"], s["request_throughput"],
    s["bytes_per_cpu_s"], curl_bps, ratio, errors,
    "yes" if s["client_limited"] else "no",
    "" if cerr == 0 else "  (curl errors: %d)" % cerr))
sys.exit(1 if errors else 0)
EOF
	done
	stop_sim
done

# Timestamp accuracy below saturation: --itl 20, one event per write; the
# simengine --trace holds its send time of every token, warden its receive
# time (both CLOCK_MONOTONIC), matched by X-Request-Id. c=1 is the baseline
# of the same run. In a virtual machine an idle virtual CPU halts, and
# waking it is the hypervisor's business, which can take milliseconds: the
# "awake" rows run the same with an idle-class (SCHED_IDLE) spinner on each
# core, which yields at once to any other thread but keeps the CPUs from
# halting, so the difference between the two is the wake-up of an idle CPU,
# not warden's work.
SPIN_PIDS=""
spin_start() {
	command -v chrt >/dev/null 2>&1 || return 1
	for cpu in 0 1; do
		pin=""
		[ -n "$PIN_CLIENT" ] && pin="taskset -c $cpu"
		$pin chrt -i 0 sh -c 'while :; do :; done' &
		SPIN_PIDS="$SPIN_PIDS $!"
	done
}
spin_stop() {
	for p in $SPIN_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	SPIN_PIDS=""
}
echo
printf '%-16s %5s %8s %10s %10s %10s\n' latency c tokens p50_us p99_us max_us
for MODE in idle awake; do
	if [ "$MODE" = awake ] && ! spin_start; then
		echo "latency: awake rows skipped (no chrt)"
		break
	fi
	for C in 1 64; do
		start_sim 1 --itl 20 --itl-growth 0 --output-tokens 50 --realtime \
		    --trace "$WORK/trace.jsonl"
		N=$((C * 4))
		[ $N -lt 16 ] && N=16
		$PIN_CLIENT "$DRIVER" latency "$URL" "$C" "$N" 50 "$WORK/trace.jsonl" \
		    >"$WORK/lat.json" 2>"$WORK/lat.err" || FAILED=1
		python3 - "$WORK/lat.json" "$C" "recv-send $MODE" <<'EOF'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    print("latency: no result"); sys.exit(0)
print("%-16s %5s %8d %10.1f %10.1f %10.1f%s" % (sys.argv[3], sys.argv[2],
    s["tokens"], s["p50_us"], s["p99_us"], s["max_us"],
    "" if s["matched"] == s["requests"] else
    "  (%d of %d requests matched)" % (s["matched"], s["requests"])))
EOF
		stop_sim
	done
	spin_stop
done
# Real streams (see the top): for each c, a row with the reads timed by
# the clock read after recv(2) returned (WARDEN_LOADGEN_KERNEL_STAMPS=0),
# then one timed by the kernel's receive stamps (the default); ratios
# against c=1 of the same stamps, against the coalesced row of the same c
# above (x_bund), and, on the kernel row, its recv-send p99 against the
# read row's (x_rd99).
echo
printf '%-6s %5s %12s %6s %6s %9s %9s %6s %6s %6s %9s %9s %8s %2s %s\n' stamp c \
    events/cpu-s x_c1 x_bund rs_p50_us rs_p99_us x_p50 x_p99 x_rd99 \
    se_p50_us se_p99_us wave_ms w limited
: >"$WORK/real.base.read"
: >"$WORK/real.base.kernel"
for C in $REAL_LEVELS; do
	for STAMP in read kernel; do
		KS=1
		[ "$STAMP" = read ] && KS=0
		start_sim 1 --itl 20 --itl-growth 0 --output-tokens 50 --realtime \
		    --trace "$WORK/trace.jsonl"
		N=$((C * 2))
		[ $N -lt 64 ] && N=64
		WARDEN_LOADGEN_KERNEL_STAMPS=$KS $PIN_CLIENT "$DRIVER" latency \
		    "$URL" "$C" "$N" 50 "$WORK/trace.jsonl" \
		    >"$WORK/real.json" 2>"$WORK/real.err" || FAILED=1
		python3 - "$WORK/real.json" "$C" "$WORK/real.base.$STAMP" \
		    "$WORK/bundled.json.c$C" "$STAMP" "$WORK/real.read.c$C" <<'EOF'
import json, os, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    print("real: c=%s: no result" % sys.argv[2]); sys.exit(0)
stamp = sys.argv[5]
base = open(sys.argv[3]).read().split()
if not base:
    base = [s["events_per_cpu_s"], s["p50_us"], s["p99_us"]]
    open(sys.argv[3], "w").write(" ".join(str(x) for x in base))
base = [float(x) for x in base]
bund = float(open(sys.argv[4]).read()) if os.path.exists(sys.argv[4]) else 0
if stamp == "read":
    open(sys.argv[6], "w").write("%f" % s["p99_us"])
    rd99 = "-"
else:
    rd = float(open(sys.argv[6]).read()) if os.path.exists(sys.argv[6]) else 0
    rd99 = "%.3f" % (s["p99_us"] / rd) if rd > 0 else "-"
r = lambda a, b: "%.2f" % (a / b) if b > 0 else "-"
print("%-6s %5s %12.0f %6s %6s %9.1f %9.1f %6s %6s %6s %9.1f %9.1f %8.2f %2d %s%s" % (
    stamp, sys.argv[2], s["events_per_cpu_s"],
    r(s["events_per_cpu_s"], base[0]), r(s["events_per_cpu_s"], bund),
    s["p50_us"], s["p99_us"], r(s["p50_us"], base[1]),
    r(s["p99_us"], base[2]), rd99, s["submit_engine_p50_us"],
    s["submit_engine_p99_us"], s["first_wave_max_us"] / 1000,
    s["workers"], "yes" if s["client_limited"] else "no",
    "" if s["matched"] == s["requests"] and s["failed"] == 0 else
    "  (%d of %d matched, %d failed)" % (s["matched"], s["requests"],
                                        s["failed"])))
EOF
		stop_sim
	done
done
echo "goals: >= 1000000 events/cpu-s coalesced, >= 250000 one per read," \
    "ratio >= 1, 0 errors at c=1024, recv-send p99 <= 250 us at c=64"
exit $FAILED
