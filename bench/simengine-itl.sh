#!/bin/sh
# bench/simengine-itl.sh - how closely warden-simengine's writes follow
# its serving model's clock. The tests assert the model (the trace's
# `model` times, exact) and only lower bounds on wall-clock writes, so
# that they pass on a busy machine; this is where the wall-clock figure
# lives.
#
# One stream of 200 tokens at --itl 20, 3 times. The baseline, from the
# same run, is the model's own inter-token time (done - first token over
# the tokens between); the figures are the median write gap over that
# (1.00 is perfect) and the p99 lag of a token's write behind its model
# time. On an idle machine the ratio is 1.00.
# Prints results; exits non-zero only if a run fails.
set -eu

: "${SIMENGINE:=${TOP_BUILDDIR:-.}/warden-simengine}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/simengine-itl.XXXXXX")
pid=""
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$dir"' EXIT

"$SIMENGINE" --port 0 --port-file "$dir/port" --itl 20 --itl-growth 0 \
    --prefill-rate 0 --output-tokens 200 --trace "$dir/trace" 2>"$dir/log" &
pid=$!
while [ ! -s "$dir/port" ]; do sleep 0.05; done
url="http://127.0.0.1:$(cat "$dir/port")/v1/chat/completions"
for run in 1 2 3; do
	curl -sS -N -o /dev/null \
	    -d '{"stream":true,"messages":[{"role":"user","content":"bench"}]}' "$url"
done
kill -TERM "$pid"
wait "$pid"
pid=""
python3 - "$dir/trace" <<'PY'
import json, statistics, sys
ratios, lags = [], []
for line in open(sys.argv[1]):
    t = json.loads(line)
    tok, m = t["token_ns"], t["model"]
    step = (m["done_ns"] - m["first_token_ns"]) / (len(tok) - 1)
    ratios.append(statistics.median(b - a for a, b in zip(tok, tok[1:])) / step)
    lags += [w - (m["first_token_ns"] + i * step) for i, w in enumerate(tok)]
lags.sort()
print("simengine writes against its model clock, --itl 20, 3 x 200 tokens:")
print("  model inter-token time (baseline): %.1f ms" % (step / 1e6))
print("  median write gap / model:          %.2f (median of runs)" % statistics.median(ratios))
print("  p99 write lag behind the model:    %.2f ms" % (lags[int(0.99 * (len(lags) - 1))] / 1e6))
PY
