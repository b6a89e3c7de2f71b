#!/bin/sh
# t1007-simengine-schedule: the trace is ground truth on the client's clock,
# and the real-time engine follows its serving model - ITL, slots, and the
# concurrency scaling of serial versus continuous batching.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/simengine/lib-sim.sh"

test_expect_success 'trace times are CLOCK_MONOTONIC, ordered, one per token' '
	sim_start s --itl 5 --output-tokens 12 --trace tr &&
	$SIM_PYTHON -c "
import json, time, urllib.request
body = json.dumps({\"stream\": True, \"messages\": [{\"role\": \"user\", \"content\": \"a b c\"}]}).encode()
t0 = time.monotonic_ns()
with urllib.request.urlopen(\"$(sim_url s)\", data=body) as r:
    r.read()
t1 = time.monotonic_ns()
open(\"client\", \"w\").write(\"%d %d\" % (t0, t1))
" &&
	sim_stop s &&
	$SIM_PYTHON -c "
import json
t0, t1 = map(int, open(\"client\").read().split())
t = json.loads(open(\"tr\").readline())
for k in (\"id\", \"received_ns\", \"first_token_ns\", \"token_ns\", \"done_ns\", \"prompt_tokens\", \"completion_tokens\", \"status\", \"fault\"):
    assert k in t, k
assert t0 <= t[\"received_ns\"] <= t[\"first_token_ns\"] <= t[\"done_ns\"] <= t1, (t0, t, t1)
assert t[\"token_ns\"] == sorted(t[\"token_ns\"]) and t[\"token_ns\"][0] == t[\"first_token_ns\"]
assert len(t[\"token_ns\"]) == t[\"completion_tokens\"] == 12
assert t[\"prompt_tokens\"] == 3 and t[\"status\"] == 200 and t[\"fault\"] is None
"
'

# The serving model is asserted on the trace's `model` times, the
# scheduler's own clock, which a busy machine cannot bend. The write
# times are only ever late, so they are held to lower bounds; how close
# they stay to --itl is a figure of bench/simengine-itl.sh.

test_expect_success 'tokens are paced at --itl' '
	sim_start s --itl 20 --output-tokens 15 --prefill-rate 0 --trace tr2 &&
	chat s "$(user_body x)" >/dev/null &&
	sim_stop s &&
	lines_check tr2 "len(o) == 1" \
	    "o[0][\"model\"][\"done_ns\"] - o[0][\"model\"][\"first_token_ns\"] == 14 * 20000000" \
	    "all(t - o[0][\"received_ns\"] >= i * 20000000 for i, t in enumerate(o[0][\"token_ns\"]))" \
	    "o[0][\"token_ns\"][-1] >= o[0][\"model\"][\"done_ns\"]"
'

# Python over the trace rows `t`, on the model clock: the most [admit,
# done) intervals that ever overlap, and how many requests were queued at
# least one step (50 ms) before the first one finished.
MOST="(lambda t: max(sum(1 for y in t if y[\"model\"][\"admit_ns\"] <= x[\"model\"][\"admit_ns\"] < y[\"model\"][\"done_ns\"]) for x in t))"
EARLY="(lambda t: sum(1 for x in t if x[\"model\"][\"submit_ns\"] + 50000000 < min(y[\"model\"][\"done_ns\"] for y in t)))"
# the longest a request waited in the queue
WAIT="(lambda t: max(x[\"model\"][\"admit_ns\"] - x[\"model\"][\"submit_ns\"] for x in t))"
STEP="--itl 50 --itl-growth 0 --prefill-rate 0 --output-tokens 10"

test_expect_success 'serial serves 4 concurrent requests one after another, continuous together' '
	sim_start ser --schedule serial $STEP --trace ser.tr &&
	sim_start con --schedule continuous $STEP --trace con.tr &&
	$SIMCLIENT fire "$(sim_port ser)" 4 "$(user_body x)" >f1 &&
	$SIMCLIENT fire "$(sim_port con)" 4 "$(user_body x)" >f2 &&
	sim_stop ser && sim_stop con &&
	lines_check ser.tr "len(o) == 4" "$EARLY(o) >= 2" "$MOST(o) == 1" \
	    "$WAIT(o) >= 10 * 50000000" &&
	lines_check con.tr "len(o) == 4" "$EARLY(o) >= 2" "$MOST(o) >= $EARLY(o)" \
	    "$WAIT(o) <= 50000000"
'

test_expect_success '--max-batch 2 admits the third request only when a slot frees' '
	sim_start s $STEP --max-batch 2 --trace tr4 &&
	$SIMCLIENT fire "$(sim_port s)" 4 "$(user_body x)" >f &&
	sim_stop s &&
	lines_check tr4 "len(o) == 4" "$EARLY(o) >= 3" "$MOST(o) == 2" \
	    "sorted(x[\"model\"][\"admit_ns\"] for x in o)[2] >= min(x[\"model\"][\"done_ns\"] for x in o)"
'

sim_cleanup
test_done
