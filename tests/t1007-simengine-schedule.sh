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

test_expect_success 'tokens are paced at --itl' '
	sim_start s --itl 20 --output-tokens 15 --trace tr2 &&
	chat s "$(user_body x)" >/dev/null &&
	sim_stop s &&
	$SIM_PYTHON -c "
import json, statistics
t = json.loads(open(\"tr2\").readline())[\"token_ns\"]
gap = statistics.median(b - a for a, b in zip(t, t[1:]))
assert 18e6 <= gap <= 60e6, gap
"
'

# span(TRACE-ROWS): wall time from the first arrival to the last finish.
SPAN="(lambda t: max(x[\"done_ns\"] for x in t) - min(x[\"received_ns\"] for x in t))"

test_expect_success 'serial takes about 4x as long as continuous for 4 concurrent requests' '
	sim_start ser --schedule serial --itl 20 --output-tokens 10 --trace ser.tr &&
	sim_start con --schedule continuous --itl 20 --output-tokens 10 --trace con.tr &&
	$SIMCLIENT fire "$(sim_port ser)" 4 "$(user_body x)" >f1 &&
	$SIMCLIENT fire "$(sim_port con)" 4 "$(user_body x)" >f2 &&
	sim_stop ser && sim_stop con &&
	lines_check ser.tr "len(o) == 4" \
	    "$SPAN(o) > 2.5 * $SPAN([json.loads(l) for l in open(\"con.tr\")])"
'

test_expect_success '--max-batch 2 admits the third request only when a slot frees' '
	sim_start s --itl 20 --output-tokens 10 --max-batch 2 --trace tr4 &&
	$SIMCLIENT fire "$(sim_port s)" 4 "$(user_body x)" >f &&
	sim_stop s &&
	$SIM_PYTHON -c "
import json
t = [json.loads(l) for l in open(\"tr4\")]
first_done = min(x[\"done_ns\"] for x in t)
early = [x for x in t if x[\"first_token_ns\"] < first_done]
assert len(early) == 2, t
"
'

sim_cleanup
test_done
