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

# entries FILE: how many entries journal show printed (a line each, its
# body indented under it).
entries() {
	grep -c "^ *[0-9][0-9]*  " "$1"
}

test_expect_success 'journal show lists the entries in order' '
	cd bench && warden journal show >out &&
	test "$(entries out)" = 5 &&
	expect_grep "^ *1 .* repo.init " out &&
	expect_grep "^ *2  .*  note  llama.cpp$" out &&
	expect_grep "^        text pinned to b5000" out &&
	! grep -n "^.\{81,\}" out
'

test_expect_success 'journal show filters by cycle and kind' '
	cd bench &&
	warden journal show --cycle 2026-11-30 >out &&
	test "$(entries out)" = 1 &&
	warden journal show --kind repo.init >out &&
	test "$(entries out)" = 1 &&
	warden journal show --kind repo. >out &&
	test "$(entries out)" = 1
'

test_expect_success 'journal show -n N: the newest N entries selected, oldest first' '
	cd bench &&
	warden journal show -n 2 >out &&
	test "$(entries out)" = 2 &&
	expect_grep "^ *4  .*  note$" out && expect_grep "^        text third note" out &&
	expect_grep "^ *5  .*  note$" out && expect_grep "^        text in a cycle" out &&
	warden journal show -n 1 --kind note --cycle 2026-11-30 >out &&
	test "$(entries out)" = 1 &&
	warden journal show -n 99 >out &&
	test "$(entries out)" = 5 &&
	warden journal show -n 0 >out &&
	test ! -s out &&
	warden --json journal show -n 3 >out &&
	python3 -c "import json; assert [e[\"seq\"] for e in json.load(open(\"out\"))] == [3, 4, 5]" &&
	expect_exit 2 warden journal show -n two &&
	expect_grep "^warden: .-n. takes a number of entries, not .two.$" err
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

test_expect_success 'export commits a Markdown journal per cycle and the JSONL to official' '
	cd bench && git status --porcelain -- journals >../status0 &&
	warden journal export >out &&
	expect_grep "exported journal to .official. (5 new entries in journals/journal.jsonl)" out &&
	git ls-tree --name-only official journals/ >files &&
	expect_grep "^journals/2026-11-30.md$" files &&
	expect_grep "^journals/manual-[0-9]*.md$" files &&
	git show "official:$(grep manual- files)" >md &&
	expect_grep "pinned to b5000" md &&
	git show official:journals/journal.jsonl >jsonl &&
	test "$(wc -l <jsonl)" = 5 &&
	git status --porcelain -- journals >../status1 &&
	expect_equal ../status0 ../status1
'

test_expect_success 'the export commit carries its operation and the journal head' '
	cd bench && git log -1 --format=%B official >msg &&
	expect_grep "^journal: export through seq 5$" msg &&
	expect_grep "^Warden-Operation: journal.export 5$" msg &&
	hash=$(sqlite3 .warden/warden.db "SELECT hash FROM journal WHERE seq = 5") &&
	expect_grep "^Warden-Journal: 5 $hash$" msg &&
	warden journal verify >out &&
	expect_grep "1 anchor matched, 5 exported lines matched" out
'

test_expect_success 'export is idempotent' '
	cd bench && git rev-parse official >tip &&
	warden journal export >out &&
	expect_grep "0 new entries" out &&
	test "$(git rev-parse official)" = "$(cat tip)" &&
	warden journal note "sixth" >/dev/null &&
	warden journal export >/dev/null &&
	test "$(git show official:journals/journal.jsonl | wc -l)" = 6 &&
	test "$(git rev-parse official^)" = "$(cat tip)"
'

test_expect_success 'truncating exported entries from the database is caught' '
	cp -r bench truncated && cd truncated &&
	sqlite3 .warden/warden.db "DROP TRIGGER journal_no_delete; DELETE FROM journal WHERE seq = 6;
		UPDATE meta SET value = (SELECT seq || \" \" || hash FROM journal WHERE seq = 5) WHERE key = \"journal_head\"" &&
	expect_exit 1 warden journal verify &&
	expect_grep "journal broken at seq 6: the journal ends at seq 5 but official commit [0-9a-f]* anchors seq 6" out
'

test_expect_success 'a cycle id that cannot name a file is refused before anything is written' '
	cd bench && warden journal show >before &&
	expect_exit 2 env WARDEN_CYCLE=../evil "$WARDEN" journal note x &&
	expect_grep "WARDEN_CYCLE.*cannot name a file" err &&
	warden journal show >after && expect_equal before after &&
	expect_exit 0 warden journal export
'

test_done
