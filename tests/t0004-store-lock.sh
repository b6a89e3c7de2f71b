#!/bin/sh
# Two wardens on one repository: the second waits up to the busy timeout,
# then exits 3 naming the holder; nothing is lost or corrupted.
. "$TOP_SRCDIR/tests/lib.sh"

test_expect_success 'setup' '
	warden init bench >/dev/null
'

test_expect_success 'a second writer waits, then exits 3 naming the holder' '
	cd bench
	WARDEN_TEST_HOLD_LOCK_MS=3000 warden journal note "holder" >holder.out 2>&1 &
	sleep 1
	WARDEN_BUSY_TIMEOUT_MS=500 expect_exit 3 warden journal note "waiter" &&
	expect_grep "is locked by pid [0-9]* (warden journal note holder) since" err &&
	expect_grep "gave up after [0-9]* ms" err &&
	wait &&
	warden journal show >shown &&
	expect_grep "holder" shown &&
	expect_no_grep "waiter" shown &&
	expect_exit 0 warden journal verify
'

test_expect_success 'a writer within the timeout waits and succeeds' '
	cd bench
	WARDEN_TEST_HOLD_LOCK_MS=700 warden journal note "first" >/dev/null 2>&1 &
	sleep 0.2
	WARDEN_BUSY_TIMEOUT_MS=5000 warden journal note "second" >/dev/null &&
	wait &&
	warden journal show >shown &&
	expect_grep "first" shown && expect_grep "second" shown &&
	expect_exit 0 warden journal verify
'

test_expect_success 'a lock held by something that is not warden is reported' '
	cd bench
	( sqlite3 .warden/warden.db "BEGIN IMMEDIATE; SELECT 1;" ".shell sleep 2" "COMMIT;" >/dev/null ) &
	sleep 0.5
	WARDEN_BUSY_TIMEOUT_MS=300 expect_exit 3 warden journal note "blocked" &&
	expect_grep "locked by a process that is not warden" err &&
	wait
'

test_expect_success 'concurrent writers keep the chain intact' '
	cd bench
	for i in 1 2 3 4 5 6; do
		warden journal note "burst $i" >/dev/null &
	done &&
	wait &&
	expect_exit 0 warden journal verify &&
	test "$(warden journal show --kind note | grep -c burst)" = 6 &&
	test "$(sqlite3 .warden/warden.db "PRAGMA integrity_check")" = ok
'

test_done
