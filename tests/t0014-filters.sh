#!/bin/sh
# Filter values are checked before anything is read: `journal show --since`
# takes ISO 8601 dates and times (the forms warden-journal(1) lists), --kind and
# --cycle take well-formed names, `review list --status` one of three
# words; anything else is a usage error (exit 2) naming the value.
. "$TOP_SRCDIR/tests/lib.sh"

test_expect_success 'setup: entries at known times' '
	make_bench_repo bench &&
	cd bench &&
	warden journal note "first" >/dev/null &&
	warden journal note "second" >/dev/null &&
	sqlite3 .warden/warden.db "DROP TRIGGER journal_no_update;
		UPDATE journal SET time = \"2026-11-30T23:30:00.000Z\" WHERE seq = 1;
		UPDATE journal SET time = \"2026-12-01T00:15:00.000Z\" WHERE seq = 2;
		UPDATE journal SET time = \"2026-12-02T08:00:00.500Z\" WHERE seq = 3"
'

# shown ARGS...: the seqs journal show prints, space separated.
shown() {
	warden journal show "$@" >out || return 1
	awk "/^ *[0-9]+  / {printf \"%s \", \$1}" out
}

test_expect_success '--since takes a date, a time, a zone' '
	cd bench &&
	test "$(shown --since 2026-12-01)" = "2 3 " &&
	test "$(shown --since 2026-12-01T00:15)" = "2 3 " &&
	test "$(shown --since 2026-12-01T00:15:01)" = "3 " &&
	test "$(shown --since "2026-12-01 00:15:00Z")" = "2 3 " &&
	test "$(shown --since 2026-12-02T08:00:00.5Z)" = "3 " &&
	test "$(shown --since 2026-12-02T08:00:00.501Z)" = "" &&
	test "$(shown --since 2026-12-01T01:00+01:00)" = "2 3 " &&
	test "$(shown --since 2026-12-01T00:00:00-0100)" = "3 " &&
	test "$(shown --since 2026-11-30T23:30:00Z)" = "1 2 3 "
'

test_expect_success '--since refuses what is not an ISO 8601 time' '
	cd bench &&
	for bad in yesterday 2026 2026-12 2026-13-01 2026-02-30 2026-12-01T25:00 \
	    2026-12-01T10 "2026-12-01T10:00 UTC" 2026-12-01T10:00+25:00 \
	    "" 12/01/2026 2026-12-01T10:00:00ZZ; do
		expect_exit 2 warden journal show --since "$bad" || exit 1
		expect_grep "^warden: .--since. .*$bad" err || exit 1
		test ! -s out || { echo "printed entries for $bad"; exit 1; }
	done
'

test_expect_success '--kind takes a kind or a prefix ending in a dot' '
	cd bench &&
	test "$(shown --kind note)" = "2 3 " &&
	test "$(shown --kind repo.)" = "1 " &&
	for bad in "" "Note" "review..x" ".note" "no te" "note;"; do
		expect_exit 2 warden journal show --kind "$bad" || exit 1
		expect_grep "^warden: .--kind." err || exit 1
	done
'

test_expect_success '--cycle must be a cycle id' '
	cd bench &&
	expect_exit 2 warden journal show --cycle "" &&
	expect_grep "^warden: .--cycle." err &&
	expect_exit 2 warden journal show --cycle "a/b" &&
	expect_exit 0 warden journal show --cycle manual-20261201
'

# The rule is the store's, so a cycle no store could hold (over 200 bytes)
# is refused by show and export as by warden cycle itself.
test_expect_success '--cycle takes at most 200 bytes, as WARDEN_CYCLE does' '
	cd bench &&
	long=$(printf "%0200d" 0) &&
	expect_exit 0 warden journal show --cycle "$long" &&
	expect_exit 2 warden journal show --cycle "${long}1" &&
	expect_grep "^warden: .--cycle. .*200 bytes" err &&
	expect_exit 2 warden journal export --cycle "${long}1" &&
	expect_grep "^warden: .--cycle. .*200 bytes" err &&
	expect_exit 2 env WARDEN_CYCLE="${long}1" "$WARDEN" journal note x &&
	expect_grep "WARDEN_CYCLE" err
'

test_expect_success 'review list --status is one of pending, approved, rejected' '
	cd bench &&
	expect_exit 2 warden review list --status open &&
	expect_grep "^warden: .--status. .*open" err &&
	expect_exit 0 warden review list --status pending
'

test_expect_success 'pr-check --format is one of four' '
	cd bench &&
	expect_exit 2 warden pr-check official official --format xml &&
	expect_grep "^warden: .--format. .*xml" err
'

test_done
