#!/bin/sh
# Two wardens on one repository: the second waits up to the busy timeout,
# then exits 3 naming the holder; nothing is lost or corrupted.
. "$TOP_SRCDIR/tests/lib.sh"

test_expect_success 'setup' '
	warden init bench >/dev/null
'

test_expect_success 'a second writer waits, then exits 3 naming the holder' '
	hold_lock bench holder &&
	cd bench &&
	WARDEN_BUSY_TIMEOUT_MS=500 expect_exit 3 warden journal note "waiter" &&
	expect_grep "is locked by pid [0-9]* (warden journal note holder) since" err &&
	expect_grep "gave up after [0-9]* ms" err &&
	release_lock &&
	warden journal show >shown &&
	expect_grep "holder" shown &&
	expect_no_grep "waiter" shown &&
	expect_exit 0 warden journal verify
'

test_expect_success 'a writer within the timeout waits and succeeds' '
	hold_lock bench first &&
	cd bench &&
	{ WARDEN_BUSY_TIMEOUT_MS=120000 "$WARDEN" journal note "second" >second.out 2>&1 & } &&
	second=$! &&
	# it cannot finish while the lock is held: it waits
	sleep 0.2 && kill -0 $second &&
	release_lock &&
	wait $second &&
	warden journal show >shown &&
	expect_grep "first" shown && expect_grep "second" shown &&
	test $(grep -n first shown | cut -d: -f1) -lt $(grep -n second shown | cut -d: -f1) &&
	expect_exit 0 warden journal verify
'

test_expect_success 'a lock held by something that is not warden is reported' '
	cd bench &&
	rm -f held go &&
	{ sqlite3 .warden/warden.db "BEGIN IMMEDIATE; SELECT 1;" ".shell touch held" \
	    ".shell n=0; while [ ! -e go ] && [ \$n -lt 1200 ]; do sleep 0.1; n=\$((n + 1)); done" \
	    "COMMIT;" >/dev/null & } &&
	n=0 && until [ -e held ]; do
		n=$((n + 1)); [ $n -lt 1200 ] || exit 1; sleep 0.05
	done &&
	WARDEN_BUSY_TIMEOUT_MS=300 expect_exit 3 warden journal note "blocked" &&
	expect_grep "locked by a process that is not warden" err &&
	: >go && wait
'

test_expect_success 'concurrent writers keep the chain intact' '
	cd bench &&
	for i in 1 2 3 4 5 6; do
		warden journal note "burst $i" >/dev/null &
	done &&
	wait &&
	expect_exit 0 warden journal verify &&
	test "$(warden journal show --kind note | grep -c burst)" = 6 &&
	test "$(sqlite3 .warden/warden.db "PRAGMA integrity_check")" = ok
'

test_done
