#!/bin/sh
# The hash-chained journal: entries written, verify, tamper detection with
# the sqlite3 CLI, export.
. "$TOP_SRCDIR/tests/lib.sh"

test_expect_success 'setup: a repository with journal entries' '
	warden init bench >/dev/null &&
	cd bench &&
	warden journal note --subject llama.cpp "pinned to b5000" >/dev/null &&
	warden journal note "second note" >/dev/null &&
	warden journal note "third note" >/dev/null &&
	WARDEN_CYCLE=2026-11-30 warden journal note "in a cycle" >/dev/null
'

test_expect_success 'journal show lists the entries in order' '
	cd bench && warden journal show >out &&
	test "$(wc -l <out)" = 5 &&
	expect_grep "^ *1 .* repo.init " out &&
	expect_grep "^ *2 .* note  *llama.cpp .*pinned to b5000" out
'

test_expect_success 'journal show filters by cycle and kind' '
	cd bench &&
	warden journal show --cycle 2026-11-30 >out &&
	test "$(wc -l <out)" = 1 &&
	warden journal show --kind repo.init >out &&
	test "$(wc -l <out)" = 1 &&
	warden journal show --kind repo. >out &&
	test "$(wc -l <out)" = 1
'

test_expect_success 'journal show --json carries hashes' '
	cd bench && warden --json journal show >out &&
	python3 -c "
import json
d = json.load(open(\"out\"))
assert len(d) == 5
assert d[0][\"prev_hash\"] == \"0\" * 64
for a, b in zip(d, d[1:]):
    assert b[\"prev_hash\"] == a[\"hash\"]
"
'

test_expect_success 'journal verify passes on an intact journal' '
	cd bench && expect_exit 0 warden journal verify &&
	expect_grep "journal intact: 5 entries" out &&
	sqlite3 .warden/warden.db "PRAGMA integrity_check" >ic && test "$(cat ic)" = ok
'

test_expect_success 'editing a row is caught at that seq' '
	cp -r bench edited && cd edited &&
	sqlite3 .warden/warden.db "DROP TRIGGER journal_no_update;
		UPDATE journal SET body = json_set(body, \"\$.text\", \"second NOTE\") WHERE seq = 3" &&
	expect_exit 1 warden journal verify &&
	expect_grep "journal broken at seq 3: seq 3 was altered" out &&
	expect_grep "verification failed at seq 3" err
'

test_expect_success 'deleting a row in the middle is caught' '
	cp -r bench deleted && cd deleted &&
	sqlite3 .warden/warden.db "DROP TRIGGER journal_no_delete; DELETE FROM journal WHERE seq = 2" &&
	expect_exit 1 warden journal verify &&
	expect_grep "journal broken at seq 2: seq 2 is missing" out
'

test_expect_success 'reordering two rows is caught at the first' '
	cp -r bench reordered && cd reordered &&
	sqlite3 .warden/warden.db "DROP TRIGGER journal_no_update;
		UPDATE journal SET seq = -1 WHERE seq = 3;
		UPDATE journal SET seq = 3 WHERE seq = 4;
		UPDATE journal SET seq = 4 WHERE seq = -1" &&
	expect_exit 1 warden journal verify &&
	expect_grep "journal broken at seq 3" out
'

test_expect_success 'an edit with a recomputed hash still breaks the next link' '
	cp -r bench rehashed && cd rehashed &&
	sqlite3 .warden/warden.db "DROP TRIGGER journal_no_update;
		UPDATE journal SET hash = \"$(printf %064d 1)\" WHERE seq = 2" &&
	expect_exit 1 warden journal verify &&
	expect_grep "journal broken at seq 2" out
'

test_expect_success 'export writes a Markdown journal per cycle and the JSONL' '
	cd bench && warden journal export >out &&
	expect_grep "5 new entries" out &&
	test -f journals/2026-11-30.md &&
	ls journals/manual-*.md >/dev/null &&
	expect_grep "pinned to b5000" journals/manual-*.md &&
	test "$(wc -l <journals/journal.jsonl)" = 5
'

test_expect_success 'export is idempotent' '
	cd bench && cp journals/journal.jsonl before &&
	warden journal export >out &&
	expect_grep "0 new entries" out &&
	expect_equal before journals/journal.jsonl &&
	warden journal note "sixth" >/dev/null &&
	warden journal export >/dev/null &&
	test "$(wc -l <journals/journal.jsonl)" = 6
'

test_expect_success 'truncating exported entries from the database is caught' '
	cp -r bench truncated && cd truncated &&
	sqlite3 .warden/warden.db "DROP TRIGGER journal_no_delete; DELETE FROM journal WHERE seq = 6;
		UPDATE meta SET value = (SELECT seq || \" \" || hash FROM journal WHERE seq = 5) WHERE key = \"journal_head\"" &&
	expect_exit 1 warden journal verify &&
	expect_grep "journal broken at seq 6: seq 6 in journals/journal.jsonl differs" out
'

test_expect_success 'a bad --cycle name cannot write outside journals/' '
	cd bench && WARDEN_CYCLE=../evil warden journal note x >/dev/null &&
	expect_exit 2 warden journal export &&
	expect_grep "cannot name a file" err &&
	test ! -e ../evil.md
'

test_done
