#!/bin/sh
# A file-size limit (ulimit -f) or a full disk during `journal export` is
# an error (exit 3, naming the cause), not a kill by SIGXFSZ: nothing is
# half-written, official does not move, the journal still verifies, and
# the export succeeds once the limit is gone. The export is written into
# git's object store (temporary file, then rename) and committed, never
# appended in place, so no torn line can be left behind.
. "$TOP_SRCDIR/tests/lib.sh"

# limited BLOCKS CMD...: run CMD under a file-size limit of BLOCKS
# (512-byte blocks in POSIX sh).
limited() {
	_blocks=$1
	shift
	sh -c 'ulimit -f "$0" && exec "$@"' "$_blocks" "$@"
}

no_leftovers() {
	test -z "$(find bench/.git -name "tmp_*" -o -name "*.lock" | head -n 1)" &&
	test -z "$(sqlite3 bench/.warden/warden.db "SELECT id FROM official_ops WHERE state = \"intent\"")"
}

test_expect_success 'setup: a journal with 300 KB of incompressible notes' '
	make_bench_repo bench &&
	for i in 1 2 3 4 5; do
		warden --repo bench journal note "$(head -c 45000 /dev/urandom | base64 | tr -d "\n")" >/dev/null || exit 1
	done &&
	git -C bench rev-parse official >tip
'

test_expect_success 'export under a file-size limit fails with EFBIG, not SIGXFSZ' '
	expect_exit 3 limited 200 "$WARDEN" --repo bench journal export &&
	expect_grep "File too large" err &&
	test "$(git -C bench rev-parse official)" = "$(cat tip)" &&
	no_leftovers &&
	expect_exit 0 warden --repo bench journal verify
'

test_expect_success 'a limit the database itself hits is an error too' '
	expect_exit 3 limited 16 "$WARDEN" --repo bench journal note x &&
	expect_grep "File too large" err &&
	expect_exit 0 warden --repo bench journal verify &&
	test "$(sqlite3 bench/.warden/warden.db "SELECT count(*) FROM journal")" = 6
'

test_expect_success 'without the limit the export completes, whole' '
	expect_exit 0 warden --repo bench journal export &&
	expect_grep "6 new entries" out &&
	git -C bench show official:journals/journal.jsonl >jsonl &&
	test "$(wc -l <jsonl)" = 6 &&
	test "$(tail -c 1 jsonl | od -An -c | tr -d " ")" = "\\n" &&
	no_leftovers &&
	expect_exit 0 warden --repo bench journal verify &&
	expect_grep "6 exported lines matched" out
'

test_done
