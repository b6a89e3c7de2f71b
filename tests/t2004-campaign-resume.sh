#!/bin/sh
# t2004: kill -9 in the middle of a sweep, then `warden campaign --resume`:
# finished sweeps are kept, the interrupted one runs again, no duplicate
# rows, the database passes PRAGMA integrity_check, the journal verifies,
# and no engine outlives the killed warden.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1" 2>/dev/null || echo 0
}

# Replies of 16 tokens at 4 ms: a c=1 sweep of 24 requests and 3 warmups
# lasts ~1.7 s, long enough to be caught measuring.
test_expect_success 'a bench with two engines and two levels' '
	bench_init bench &&
	sim_adapter bench simA --itl 4 --prefill-rate 50000 --output-tokens 16 \
	    --trace "{log_dir}/trace-{split}-c{concurrency}.jsonl" &&
	sim_adapter bench simB --itl 4 --prefill-rate 50000 --output-tokens 16 \
	    --trace "{log_dir}/trace-{split}-c{concurrency}.jsonl" &&
	bench_policy bench "campaign.concurrency=[1, 8]"
'

test_expect_success 'kill -9 while the second sweep is measuring' '
	(cd bench && exec "$WARDEN" campaign --limit 24 --run-id k1 \
	    >../run1.out 2>../run1.err) &
	pid=$! &&
	n=0 &&
	while [ $n -lt 1200 ]; do
		done_n=$(q "select count(*) from campaign_sweeps where state = '"'"'done'"'"'") &&
		rows=$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.state = '"'"'running'"'"' and r.warmup = 0") &&
		if [ "$done_n" -ge 1 ] && [ "$rows" -ge 3 ]; then break; fi
		sleep 0.1; n=$((n + 1))
	done &&
	kill -9 $pid && { wait $pid || true; } &&
	test "$done_n" -ge 1 && test "$rows" -ge 3 &&
	q "select id, seq from campaign_sweeps where state = '"'"'done'"'"' order by seq" >done.before &&
	q "select seq from campaign_sweeps where state = '"'"'running'"'"'" >interrupted &&
	test -s interrupted && cat done.before interrupted
'

test_expect_success 'the killed warden leaves no engine behind' '
	n=0 &&
	while ps -eo args | grep -F "$TEST_DIR" | grep -v -e grep -e "ps -eo" >left; do
		n=$((n + 1)); [ $n -lt 600 ] || { cat left; exit 1; }; sleep 0.1
	done
'

test_expect_success 'resume keeps finished sweeps and re-runs the interrupted one' '
	(cd bench && expect_exit 0 warden campaign --resume && cp out ../resume.out) &&
	expect_grep "^campaign run k1 " resume.out &&
	q "select id, seq from campaign_sweeps where state = '"'"'done'"'"' and seq in (select seq from campaign_sweeps where attempt = 1 and seq < $(cat interrupted)) order by seq" >done.after &&
	expect_equal done.before done.after &&
	test "$(q "select attempt from campaign_sweeps where seq = $(cat interrupted)")" = 2 &&
	test "$(q "select count(*) from campaign_sweeps where run_id = '"'"'k1'"'"' and state = '"'"'done'"'"' and outcome = '"'"'complete'"'"'")" = 4
'

test_expect_success 'no duplicate rows, none left from the interrupted attempt' '
	test "$(q "select count(*) from campaign_requests")" = $((4 * (24 + 3))) &&
	test "$(q "select count(*) from (select distinct sweep_id, warmup, idx from campaign_requests)")" = $((4 * 27)) &&
	test "$(q "select count(*) from campaign_requests where sweep_id not in (select id from campaign_sweeps)")" = 0 &&
	test "$(q "select count(*) from campaign_memory where sweep_id not in (select id from campaign_sweeps)")" = 0
'

test_expect_success 'the database passes integrity_check and the journal verifies' '
	test "$(q "pragma integrity_check")" = ok &&
	test "$(q "select count(*) from journal where kind = '"'"'campaign.sweep.discard'"'"'")" = 1 &&
	(cd bench && warden journal verify)
'

test_expect_success 'the re-run sweep logs beside the killed one, overwriting nothing' '
	test $(ls bench/.warden/logs/k1/*/qwen3-0.6b/*.log | wc -l) -eq 5
'

test_expect_success 'resuming a finished run changes nothing' '
	q "select * from campaign_requests order by sweep_id, warmup, idx" >rows.before &&
	(cd bench && expect_exit 0 warden campaign --resume --run-id k1) &&
	q "select * from campaign_requests order by sweep_id, warmup, idx" >rows.after &&
	expect_equal rows.before rows.after
'

test_expect_success 'resume refuses a run made on another machine' '
	sqlite3 bench/.warden/warden.db "update campaign_runs set state = '"'"'running'"'"', machine = '"'"'0123456789abcdef'"'"'" &&
	(cd bench && expect_exit 2 warden campaign --resume --run-id k1 &&
	 expect_grep "was made on machine 0123456789abcdef" err)
'

test_expect_success 'an engine that survives its killed warden is stopped by --resume' '
	bench_init stub &&
	stubborn_adapter stub simstub --itl 4 --prefill-rate 50000 --output-tokens 16 \
	    --trace "{log_dir}/trace-{split}-c{concurrency}.jsonl" &&
	bench_policy stub "campaign.concurrency=[1]" &&
	{ (cd stub && exec "$WARDEN" campaign --limit 24 --run-id s1 \
	    >../stub1.out 2>../stub1.err) & } &&
	pid=$! &&
	n=0 &&
	while [ $n -lt 1200 ]; do
		rows=$(sqlite3 stub/.warden/warden.db "select count(*) from campaign_requests where warmup = 0" 2>/dev/null || echo 0)
		[ "$rows" -ge 3 ] && break
		sleep 0.1; n=$((n + 1))
	done &&
	kill -9 $pid && { wait $pid || true; } &&
	sleep 1 &&
	ps -eo args | grep -F "$TEST_DIR/stub/" | grep -v -e grep -e "ps -eo" &&
	(cd stub && expect_exit 0 warden campaign --resume --run-id s1 &&
	 expect_grep "^simstub  *1 .* 24/24  *ok$" out) &&
	! ps -eo args | grep -F "$TEST_DIR/stub/" | grep -v -e grep -e "ps -eo"
'

test_expect_success 'resume with nothing to resume is an input error' '
	bench_init empty && sim_adapter empty simA && cd empty &&
	expect_exit 2 warden campaign --resume &&
	expect_grep "no unfinished campaign run" err
'

test_done
