#!/bin/sh
# bench/simengine-sse-rate.sh - how many SSE events per second
# warden-simengine sustains on one core with --itl 0, so that it is never
# the bottleneck of warden's own client benchmarks (target: 200,000/s with
# several events per write).
#
# The server is pinned to one core with taskset, curl to another. The
# baseline, measured in the same invocation, is the same server writing
# one event per write; the figure of merit is events/s with 16 per write,
# and the ratio to the baseline. Each configuration runs 3 times; the
# median counts. Prints results; exits non-zero only if a run fails.
set -eu

: "${SIMENGINE:=${TOP_BUILDDIR:-.}/warden-simengine}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/simengine-bench.XXXXXX")
pid=""
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$dir"' EXIT

pin_server=""
pin_client=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	pin_server="taskset -c 0"
	pin_client="taskset -c 1"
else
	echo "note: taskset or a second core is missing; running unpinned"
fi

# rate EVENTS_PER_WRITE TOKENS: median events/s over 3 runs.
rate() {
	rm -f "$dir/port"
	$pin_server "$SIMENGINE" --port 0 --port-file "$dir/port" --itl 0 \
	    --prefill-rate 0 --output-tokens "$2" --events-per-write "$1" \
	    2>"$dir/log" &
	pid=$!
	while [ ! -s "$dir/port" ]; do sleep 0.05; done
	url="http://127.0.0.1:$(cat "$dir/port")/v1/chat/completions"
	for run in 1 2 3; do
		$pin_client curl -sS -N -o /dev/null -w '%{time_total}\n' \
		    -d '{"stream":true,"messages":[{"role":"user","content":"bench"}]}' \
		    "$url"
	done >"$dir/times"
	kill -TERM "$pid"
	wait "$pid"
	pid=""
	# events: role chunk + tokens + finish chunk + [DONE]
	sort -n "$dir/times" | sed -n 2p |
	    awk -v n="$2" '{ printf "%d\n", (n + 3) / $1 }'
}

base=$(rate 1 300000)
fast=$(rate 16 1000000)
echo "simengine SSE events/s, --itl 0, server on one core:"
echo "  1 event per write (baseline):  $base"
echo "  16 events per write:           $fast"
awk -v f="$fast" -v b="$base" 'BEGIN { printf "  ratio 16/1:                    %.2f\n", f / b }'
if [ "$fast" -ge 200000 ]; then
	echo "  target 200000 events/s: met"
else
	echo "  target 200000 events/s: NOT met"
fi
