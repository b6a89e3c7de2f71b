#!/bin/sh
# t2031: one campaign per machine. While a campaign runs, a second one,
# from any repository, exits 3 naming the holder (pid, command line,
# repository, run); --resume of the run that is still live is refused
# rather than taken over; once the holder dies, even by kill -9, the lock
# is free and --resume finishes the run. The lock file lives in
# $WARDEN_LOCK_DIR (tests/lib.sh points it into the scratch directory;
# the default is /tmp).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

LOCK=$WARDEN_LOCK_DIR/warden-campaign.lock

# wait_for PATTERN FILE [SECONDS]: 120 s unless told (only a defect
# waits that long)
wait_for() {
	wait_until "${3:-120}" "grep -q -e '$1' '$2' 2>/dev/null"
}

test_expect_success 'two benches, one with a slow engine' '
	bench_init one &&
	# slow enough (8 requests of about 64 tokens at 200 ms) that it still
	# runs when the tests below, however slow the machine, kill it
	sim_adapter one simslow --schedule serial --itl 200 --prefill-rate 50000 &&
	bench_policy one "campaign.concurrency=[1, 2]" "caps.warmups=1" &&
	bench_init two &&
	sim_adapter two simfast --itl 1 --prefill-rate 50000 &&
	bench_policy two "campaign.concurrency=[1]" "caps.warmups=1"
'

test_expect_success 'a running campaign holds the machine lock and says who it is' '
	(cd one && exec "$WARDEN" campaign --limit 8 --run-id live >../live.out 2>../live.err) &
	echo $! >live.pid &&
	wait_for "run live" "$LOCK" &&
	expect_grep "^pid $(cat live.pid) (warden campaign --limit 8 --run-id live) in .*/one since .*, run live$" "$LOCK"
'

test_expect_success 'a campaign of another repository exits 3 naming the holder' '
	cd two &&
	expect_exit 3 warden campaign --limit 2 --run-id other &&
	expect_grep "warden: one campaign at a time per machine: a campaign on this machine is running: pid $(cat ../live.pid) (warden campaign --limit 8 --run-id live) in .*/one since .*, run live (lock .*warden-campaign.lock.)" err &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_runs")" = 0
'

test_expect_success '--resume of the live run is refused, not taken over' '
	cd one &&
	expect_exit 3 warden campaign --resume --run-id live &&
	expect_grep "warden: --resume refuses a run that is still live: a campaign of this repository is running: pid $(cat ../live.pid) " err &&
	expect_exit 3 warden campaign --resume &&
	kill -0 "$(cat ../live.pid)"
'

test_expect_success 'another lock directory is another machine lock' '
	mkdir -p elsewhere &&
	cd two &&
	WARDEN_LOCK_DIR=../elsewhere expect_exit 0 warden campaign --limit 2 --run-id other &&
	test ! -s ../elsewhere/warden-campaign.lock
'

test_expect_success 'after kill -9 of the holder the lock is free and --resume finishes the run' '
	kill -9 "$(cat live.pid)" &&
	while kill -0 "$(cat live.pid)" 2>/dev/null; do sleep 0.1; done &&
	cd one &&
	sed "s/\"200\"/\"1\"/" adapters/engines/simslow.json >a && mv a adapters/engines/simslow.json &&
	expect_exit 0 warden campaign --resume --run-id live &&
	expect_grep "^simslow  *2 .* 8/8  *ok$" out &&
	test "$(sqlite3 .warden/warden.db "pragma integrity_check")" = ok &&
	test "$(sqlite3 .warden/warden.db "pragma foreign_key_check")" = "" &&
	test "$(sqlite3 .warden/warden.db "select state from campaign_runs where run_id = '"'"'live'"'"'")" = done &&
	test ! -s "$LOCK"
'

test_expect_success 'a lock file that is a symlink is refused' '
	rm -f "$LOCK" && ln -s "$TEST_DIR/victim" "$LOCK" &&
	echo keep >victim &&
	cd two &&
	expect_exit 3 warden campaign --limit 2 --run-id sym &&
	expect_grep "lock file .* is a symbolic link" err &&
	test "$(cat ../victim)" = keep &&
	rm -f "$LOCK"
'

test_done
