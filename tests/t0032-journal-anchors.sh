#!/bin/sh
# A rewritten journal must not pass `journal verify`. Each attack is
# made with the sqlite3 CLI or git on a copy of one repository: the
# rows, the recorded head and the committed export are checked against the
# Warden-Journal anchors every official commit carries, and every official
# move must be journaled.
. "$TOP_SRCDIR/tests/lib.sh"

# sql DIR STATEMENTS: run SQL on DIR's store, triggers dropped first.
sql() {
	sqlite3 "$1/.warden/warden.db" "DROP TRIGGER IF EXISTS journal_no_update;
	    DROP TRIGGER IF EXISTS journal_no_delete; $2"
}

# set_head DIR SEQ: point the recorded head at SEQ, as an attacker would.
set_head() {
	sql "$1" "UPDATE meta SET value = (SELECT seq || ' ' || hash FROM journal
	    WHERE seq = $2) WHERE key = 'journal_head'"
}

# commit_export DIR FILE|-: commit FILE as journals/journal.jsonl on
# official (- removes it), as someone with push rights could.
commit_export() {
	idx=$PWD/idx.$$ && rm -f "$idx" &&
	GIT_INDEX_FILE=$idx git -C "$1" read-tree official &&
	if [ "$2" = - ]; then
		GIT_INDEX_FILE=$idx git -C "$1" rm -q --cached journals/journal.jsonl
	else
		blob=$(git -C "$1" hash-object -w --path=x "$PWD/$2") &&
		GIT_INDEX_FILE=$idx git -C "$1" update-index --cacheinfo \
		    "100644,$blob,journals/journal.jsonl"
	fi &&
	tree=$(GIT_INDEX_FILE=$idx git -C "$1" write-tree) &&
	c=$(git -C "$1" commit-tree "$tree" -p official -m "journals: tidy") &&
	git -C "$1" update-ref refs/heads/official "$c" && rm -f "$idx"
}

# broken DIR SEQ PATTERN: verify exits 1 at SEQ and says PATTERN.
broken() {
	expect_exit 1 warden --repo "$1" journal verify &&
	expect_grep "^journal broken at seq $2: $3" out
}

test_expect_success 'setup: approvals, an export and notes, seq 1 to 10' '
	make_bench_repo bench &&
	for n in 1 2 3; do warden --repo bench journal note "note $n" >/dev/null; done &&
	submit_engine_change 1 &&
	warden --repo bench review approve 1 --as "M <m@example.org>" >/dev/null &&
	warden --repo bench journal export >/dev/null &&
	warden --repo bench journal note "note 4" >/dev/null &&
	submit_engine_change 2 &&
	warden --repo bench review approve 2 --as "M <m@example.org>" >/dev/null &&
	warden --repo bench journal note "note 5" >/dev/null &&
	test "$(sqlite3 bench/.warden/warden.db "SELECT max(seq) FROM journal")" = 10 &&
	git -C bench log --format=%B official | grep "^Warden-Journal: " | cut -d" " -f2 | sort -n >anchors &&
	test "$(tr "\n" " " <anchors)" = "5 6 8 " &&
	expect_exit 0 warden --repo bench journal verify &&
	expect_grep "3 anchors matched, 6 exported lines matched, 2 moves recorded" out
'

test_expect_success 'dropping the trigger and deleting the tail and the recorded head is caught' '
	cp -r bench a1 &&
	sql a1 "DELETE FROM journal WHERE seq >= 8; DELETE FROM meta WHERE key = \"journal_head\"" &&
	broken a1 7 "the journal.s recorded head is gone"
'

test_expect_success 'deleting the tail and setting the head back is caught by an anchor' '
	cp -r bench a2 &&
	sql a2 "DELETE FROM journal WHERE seq >= 8" && set_head a2 7 &&
	broken a2 8 "the journal ends at seq 7 but official commit [0-9a-f]* anchors seq 8"
'

test_expect_success 'deleting an approval entry past the last anchor is caught' '
	cp -r bench a3 &&
	sql a3 "DELETE FROM journal WHERE seq >= 9" && set_head a3 8 &&
	broken a3 9 "official commit [0-9a-f]* (review.approve 2) has no journal entry recording it"
'

test_expect_success 'recomputing the unkeyed chain after an unexported edit is caught' '
	cp -r bench a4 &&
	python3 - a4/.warden/warden.db <<-\EOF &&
	import hashlib, json, sqlite3, sys
	db = sqlite3.connect(sys.argv[1])
	db.executescript("DROP TRIGGER journal_no_update")
	rows = db.execute("SELECT seq, time, cycle, kind, subject, body, prev_hash"
	    " FROM journal WHERE seq >= 7 ORDER BY seq").fetchall()
	prev = rows[0][6]
	for seq, time, cycle, kind, subject, body, _ in rows:
	    b = json.loads(body)
	    if seq == 7:
	        b["text"] = "note 4, rewritten"
	    canon = json.dumps({"body": b, "cycle": cycle, "kind": kind, "seq": seq,
	        "subject": subject, "time": time}, sort_keys=True,
	        separators=(",", ":"), ensure_ascii=True)
	    h = hashlib.sha256((prev + canon).encode()).hexdigest()
	    db.execute("UPDATE journal SET body = ?, prev_hash = ?, hash = ? WHERE seq = ?",
	        (json.dumps(b, sort_keys=True, separators=(",", ":")), prev, h, seq))
	    prev = h
	db.execute("UPDATE meta SET value = ? WHERE key = \"journal_head\"",
	    ("%d %s" % (rows[-1][0], prev),))
	db.commit()
	EOF
	warden --repo a4 journal show --kind note >notes &&
	expect_grep "note 4, rewritten" notes &&
	broken a4 8 "seq 8 is not the entry official commit [0-9a-f]* anchored: the journal was rewritten"
'

test_expect_success 'a truncated committed export is caught' '
	cp -r bench a5 &&
	git -C a5 show official:journals/journal.jsonl | head -n 4 >short &&
	commit_export a5 short &&
	broken a5 5 "official commit [0-9a-f]* exported the journal through seq 6 but journals/journal.jsonl ends before it"
'

test_expect_success 'a malformed line in the committed export is an error, not skipped' '
	cp -r bench a6 &&
	git -C a6 show official:journals/journal.jsonl | sed "3s/.*/{not json/" >bad &&
	commit_export a6 bad &&
	broken a6 3 "journals/journal.jsonl line 3 is not a journal entry line"
'

test_expect_success 'an edited line in the committed export is caught' '
	cp -r bench a7 &&
	git -C a7 show official:journals/journal.jsonl | sed "2s/note 1/note one/" >edited &&
	commit_export a7 edited &&
	broken a7 2 "journals/journal.jsonl line 2 is not seq 2 as the database holds it"
'

test_expect_success 'a deleted committed export is caught' '
	cp -r bench a8 &&
	commit_export a8 - &&
	broken a8 1 "official commit [0-9a-f]* exported the journal through seq 6 but journals/journal.jsonl is gone"
'

test_expect_success 'a torn last line of the committed export is caught' '
	cp -r bench a9 &&
	git -C a9 show official:journals/journal.jsonl >full &&
	head -c $(( $(wc -c <full) - 20 )) full >torn &&
	commit_export a9 torn &&
	broken a9 6 "journals/journal.jsonl line 6 is torn"
'

test_expect_success 'lines the database lost are caught at the first' '
	cp -r bench a10 &&
	sql a10 "DELETE FROM journal WHERE seq >= 5" && set_head a10 4 &&
	expect_exit 1 warden --repo a10 journal verify &&
	expect_grep "^journal broken at seq 5: " out
'

test_expect_success 'a malformed anchor on official is a break of its own' '
	cp -r bench a11 &&
	c=$(git -C a11 commit-tree "official^{tree}" -p official \
	    -m "tidy" -m "Warden-Journal: 3 not-a-hash") &&
	git -C a11 update-ref refs/heads/official "$c" &&
	expect_exit 1 warden --repo a11 journal verify &&
	expect_grep "malformed Warden-Journal trailer .3 not-a-hash." out
'

test_expect_success 'export refuses a journal that does not verify' '
	cp -r bench a12 &&
	sql a12 "DELETE FROM journal WHERE seq >= 8" && set_head a12 7 &&
	git -C a12 rev-parse official >tip &&
	expect_exit 1 warden --repo a12 journal export &&
	expect_grep "the journal does not verify (seq 8: .*); not exporting" err &&
	test "$(git -C a12 rev-parse official)" = "$(cat tip)"
'

test_expect_success 'the untouched repository still verifies, and --json says what was checked' '
	warden --repo bench --json journal verify >j &&
	python3 -c "
import json
d = json.load(open(\"j\"))
assert d[\"intact\"] and d[\"entries\"] == 10, d
assert d[\"anchors\"] == 3 and d[\"exported\"] == 6 and d[\"recorded_moves\"] == 2, d
assert d[\"official_branch\"] == \"official\", d
"
'

test_done
