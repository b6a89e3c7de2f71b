#!/bin/sh
# t2003: engine failures are results, and the campaign moves on: a crash
# mid-sweep is server_crash with its completed count, exit status and log
# tail; the per-engine wall cap ends that engine's grid and is recorded;
# an engine that exits before it is ready (not_ready, see also t2007) or
# serves another model is an outcome.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

test_expect_success 'a bench whose first engine aborts on its 25th request' '
	bench_init bench &&
	sim_adapter bench simcrash --schedule continuous --itl 2 \
	    --prefill-rate 50000 --abort-after 24 &&
	sim_adapter bench simok --schedule continuous --itl 2 \
	    --prefill-rate 50000 &&
	bench_policy bench "campaign.concurrency=[16]"
'

test_expect_success 'a crash at c=16 is server_crash and the campaign moves on' '
	(cd bench && expect_exit 0 warden campaign --limit 40 --run-id r1 &&
	 cp out ../crash.out) &&
	expect_grep "^simcrash  *16 .*/40  *crashed$" crash.out &&
	expect_grep "^  outcome server_crash: " crash.out &&
	expect_grep "^simok  *16 .* 40/40  *ok$" crash.out
'

test_expect_success 'the crash records the completed count, the signal and the log tail' '
	test "$(q "select outcome from campaign_sweeps where engine = '"'"'simcrash'"'"'")" = server_crash &&
	n=$(q "select completed from campaign_sweeps where engine = '"'"'simcrash'"'"'") &&
	echo "completed $n" &&
	test "$n" -gt 0 && test "$n" -lt 40 &&
	test "$n" = "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simcrash'"'"' and r.warmup = 0 and r.outcome = '"'"'ok'"'"'")" &&
	q "select detail from campaign_sweeps where engine = '"'"'simcrash'"'"'" >detail &&
	expect_grep "server exited: killed by signal 6 (SIGABRT)" detail &&
	expect_grep "log tail:" detail
'

test_expect_success 'requests in flight at the crash are server_crash, none is lost' '
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simcrash'"'"' and r.outcome = '"'"'server_crash'"'"'")" -gt 0 &&
	test "$(q "select failed from campaign_sweeps where engine = '"'"'simcrash'"'"'")" = \
	    "$(q "select 40 - completed from campaign_sweeps where engine = '"'"'simcrash'"'"'")"
'

test_expect_success 'a bench with a slow engine and a 6 s engine wall cap' '
	bench_init cap &&
	sim_adapter cap simslow --schedule serial --itl 200 --prefill-rate 50000 &&
	sim_adapter cap simfast --schedule continuous --itl 1 --prefill-rate 50000 &&
	bench_policy cap "caps.engine_wall_s=6" "campaign.concurrency=[1, 16]"
'

test_expect_success 'the wall cap ends the engine grid, is recorded, and the next engine runs' '
	cd cap &&
	expect_exit 0 warden campaign --limit 8 --run-id r2 &&
	# ended by the cap, not by the engine: at --itl 200 no request of
	# the serial engine is done within 6 s (no clock read here: a busy
	# machine only makes the run longer)
	expect_grep "^simslow  *1 .* 0/8  *capped$" out &&
	expect_grep "^  outcome engine_cap: the engine wall cap ended the sweep$" out &&
	expect_grep "^simslow  *16  *-  .* 0/8  *capped$" out &&
	expect_grep "^simfast  *1 .* 8/8  *ok$" out &&
	expect_grep "^simfast  *16 .* 8/8  *ok$" out &&
	test "$(sqlite3 .warden/warden.db "select detail from campaign_sweeps where engine = '"'"'simslow'"'"' and concurrency = 1")" = \
	    "the engine wall cap ended the sweep" &&
	test "$(sqlite3 .warden/warden.db "select detail from campaign_sweeps where engine = '"'"'simslow'"'"' and concurrency = 16")" = \
	    "not run: the engine wall cap of 6 s was reached" &&
	# no success is not a figure of zero: null, where a success gives one
	warden --json campaign show r2 >r2.json &&
	python3 - r2.json <<-\PY
	import json, sys
	def rows(v):
	    if isinstance(v, dict):
	        if "concurrency" in v and "outcome" in v:
	            yield v
	        for x in v.values():
	            yield from rows(x)
	    elif isinstance(v, list):
	        for x in v:
	            yield from rows(x)
	r = {(x["engine"], x["concurrency"]): x for x in rows(json.load(open(sys.argv[1])))}
	slow, fast = r[("simslow", 1)], r[("simfast", 1)]
	for k in ("median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "output_throughput", "request_throughput"):
	    assert slow[k] is None, (k, slow[k])
	    assert isinstance(fast[k], float) and fast[k] > 0, (k, fast[k])
	PY
'

test_expect_success 'an engine that exits at start is not_ready with its status; the rest of its grid is not run' '
	bench_init early &&
	fake_adapter early fakedead --exit-before-ready 7 &&
	sim_adapter early simfine --itl 1 --prefill-rate 50000 &&
	bench_policy early "campaign.concurrency=[1, 4]" &&
	cd early &&
	expect_exit 0 warden campaign --limit 4 --run-id r3 &&
	expect_grep "^fakedead  *1 .* 0/4  *crashed$" out &&
	expect_grep "^  outcome not_ready: exited before it was ready" out &&
	expect_grep "^fakedead  *4 .* 0/4  *crashed$" out &&
	expect_grep "^simfine  *4 .* 4/4  *ok$" out &&
	sqlite3 .warden/warden.db "select detail from campaign_sweeps where engine = '"'"'fakedead'"'"' order by seq" >detail &&
	expect_grep "exited before it was ready: exit status 7; log tail:" detail &&
	expect_grep "fatal: cannot load model" detail &&
	expect_grep "^not run: exited before it was ready: exit status 7$" detail
'

test_expect_success 'an engine serving another model is wrong_model, not a result' '
	bench_init wrong &&
	fake_adapter wrong fakewrong --serve-model other/model-7b &&
	bench_policy wrong "campaign.concurrency=[1]" &&
	cd wrong &&
	expect_exit 0 warden campaign --limit 4 --run-id r4 &&
	expect_grep "^fakewrong  *1 .* 0/4  *wrong-model$" out &&
	expect_grep "^  outcome wrong_model: " out &&
	test "$(sqlite3 .warden/warden.db "select served_model from campaign_sweeps")" = other/model-7b &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_requests")" = 0
'

test_expect_success 'an engine that hangs is ended and recorded as hang' '
	bench_init hang &&
	sim_adapter hang simstall --itl 2 --prefill-rate 50000 --stall 30 \
	    --fault-after 2 &&
	bench_policy hang "campaign.concurrency=[2]" "caps.hang_s=2" &&
	cd hang &&
	expect_exit 0 warden campaign --limit 4 --run-id r5 &&
	expect_grep "^simstall  *2 .* 0/4  *hang$" out
'

test_expect_success 'no engine process is left running' '
	! ps -eo args | grep -F "$TEST_DIR" | grep -v -e grep -e "ps -eo"
'

test_expect_success 'an unknown roster is an input error and records no run' '
	cd bench &&
	before=$(sqlite3 .warden/warden.db "select count(*) from campaign_runs") &&
	expect_exit 2 warden campaign --roster nope &&
	expect_grep "no roster .nope. in policy" err &&
	expect_no_grep "resume" err &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_runs")" = "$before"
'

test_done
