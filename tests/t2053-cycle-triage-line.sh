#!/bin/sh
# t2053: the cycle's standard error and its journal say the same of
# triage: an engine broken in its first cycle cannot be compared (no
# earlier cycle where it was healthy) and counts as broken in both, one
# line made in one place (the journal's timeline).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

test_expect_success 'a bench of an engine that works and one that crashes' '
	cycle_bench bench &&
	bench_policy bench "cycle={\"publish\": false, \"fidelity\": false, \"agent\": false, \"limit\": 6}" &&
	sim_adapter bench simok --itl 1 --prefill-rate 0 &&
	sim_adapter bench simcrash --itl 1 --prefill-rate 0 --abort-after 2 &&
	(cd bench && warden lint >/dev/null) &&
	cycle_commit bench "two simulated engines"
'

test_expect_success 'the first cycle: the crashed engine is broken and cannot be compared' '
	WARDEN_CYCLE=c1 expect_exit 1 warden --repo bench cycle &&
	cp err c1.err &&
	expect_grep "^triage: 1 engine broken; cannot be compared: simcrash (no earlier cycle where it was healthy)" c1.err &&
	expect_no_grep "triage: 0 broken" c1.err
'

test_expect_success 'the journal timeline says the very same line' '
	line=$(sed -n "s/^triage: //p" c1.err | grep "broken" | tail -1) &&
	test -n "$line" &&
	md bench c1 >c1.md &&
	grep -F "| triage | done | $line |" c1.md
'

test_done
