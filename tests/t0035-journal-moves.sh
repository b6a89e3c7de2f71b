#!/bin/sh
# t0035: every move of official must be journaled. `journal verify` walks
# the official branch's first-parent history from its first anchored
# commit and refuses any commit no journal entry records, naming it: a
# fast-forward nobody journaled (git update-ref, git merge --ff-only), a
# commit dressed up as an export. What came before the first anchor (the
# `warden init` layout, a repository's own past) is not a move.
. "$TOP_SRCDIR/tests/lib.sh"

# unrecorded DIR COMMIT SUBJECT: verify exits 1 naming COMMIT and SUBJECT.
unrecorded() {
	expect_exit 1 warden --repo "$1" journal verify &&
	expect_grep "^journal broken at seq [0-9]*: official commit $2 (\"$3\") is recorded by no journal entry: official was moved outside warden$" out
}

test_expect_success 'setup: history before warden, an approval, an export: verify is clean' '
	make_bench_repo bench &&
	echo "before warden" >>bench/README.md &&
	git -C bench commit -q -am "the maintainer, before any anchor" &&
	git -C bench branch -f official HEAD &&
	git -C bench checkout -q --detach HEAD &&
	submit_engine_change 1 &&
	warden --repo bench review approve 1 --as "M <m@example.org>" >/dev/null &&
	warden --repo bench journal export >/dev/null &&
	expect_exit 0 warden --repo bench journal verify &&
	expect_grep "^journal intact" out
'

test_expect_success 'an unjournaled fast-forward by update-ref is named' '
	cp -r bench a1 &&
	c=$(git -C a1 commit-tree "official^{tree}" -p official -m "sneaky move") &&
	git -C a1 update-ref refs/heads/official "$c" &&
	unrecorded a1 "$c" "sneaky move"
'

test_expect_success 'an unjournaled git merge --ff-only is named, and export refuses' '
	cp -r bench a2 &&
	git -C a2 checkout -q -b side official &&
	echo tweak >>a2/README.md &&
	git -C a2 add -A && git -C a2 commit -q -m "tweak the workload" &&
	c=$(git -C a2 rev-parse HEAD) &&
	git -C a2 checkout -q official && git -C a2 merge -q --ff-only side &&
	git -C a2 checkout -q --detach &&
	unrecorded a2 "$c" "tweak the workload" &&
	expect_exit 1 warden --repo a2 journal export &&
	expect_grep "the journal does not verify (seq [0-9]*: official commit $c .*); not exporting" err &&
	test "$(git -C a2 rev-parse official)" = "$c"
'

test_expect_success 'an unjournaled commit under later warden commits is still named' '
	cp -r bench a3 &&
	c=$(git -C a3 commit-tree "official^{tree}" -p official -m "buried") &&
	git -C a3 update-ref refs/heads/official "$c" &&
	mkdir -p a3/adapters/engines &&
	printf "{\"name\": \"e3\"}\n" >a3/adapters/engines/e3.json &&
	git -C a3 add -A && git -C a3 diff --cached >p3.patch &&
	git -C a3 reset -q --hard &&
	warden --repo a3 patch submit p3.patch --source agent >/dev/null &&
	n=$(sqlite3 a3/.warden/warden.db "SELECT max(id) FROM reviews") &&
	warden --repo a3 review approve "$n" --as "M <m@example.org>" >/dev/null &&
	test "$(git -C a3 rev-parse official^)" = "$c" &&
	unrecorded a3 "$c" "buried"
'

test_expect_success 'a commit posing as an export that changes more than journals/ is named' '
	cp -r bench a4 &&
	anchor=$(git -C a4 log -1 --format=%B official | grep "^Warden-Journal: ") &&
	idx=$PWD/idx.a4 && GIT_INDEX_FILE=$idx git -C a4 read-tree official &&
	blob=$(echo forged | git -C a4 hash-object -w --stdin) &&
	GIT_INDEX_FILE=$idx git -C a4 update-index --add --cacheinfo "100644,$blob,policy/extra.txt" &&
	tree=$(GIT_INDEX_FILE=$idx git -C a4 write-tree) &&
	c=$(git -C a4 commit-tree "$tree" -p official -m "journal: export through seq 99" \
	    -m "Warden-Operation: journal.export 99
$anchor") &&
	git -C a4 update-ref refs/heads/official "$c" &&
	unrecorded a4 "$c" "journal: export through seq 99"
'

test_expect_success 'journal adopt records a maintainer commit: verify and export are clean again' '
	cp -r bench a5 &&
	git -C a5 checkout -q -b side official &&
	echo "policy note" >>a5/README.md &&
	git -C a5 commit -q -am "maintainer: README" &&
	c=$(git -C a5 rev-parse HEAD) &&
	git -C a5 checkout -q --detach && git -C a5 branch -f official side &&
	unrecorded a5 "$c" "maintainer: README" &&
	expect_exit 0 warden --repo a5 journal adopt official &&
	expect_grep "^journal entry [0-9]* records commit $(echo $c | cut -c1-12) on .official.$" out &&
	warden --repo a5 journal show --kind official.adopted --full >shown &&
	expect_grep "\"commit\":\"$c\"" shown &&
	expect_exit 0 warden --repo a5 journal verify &&
	expect_exit 0 warden --repo a5 journal export &&
	expect_exit 0 warden --repo a5 journal verify
'

test_expect_success 'journal adopt refuses a commit that is not on official, or one already recorded' '
	git -C a5 checkout -q -b elsewhere official~2 &&
	echo x >>a5/README.md && git -C a5 commit -q -am "elsewhere" &&
	expect_exit 2 warden --repo a5 journal adopt elsewhere &&
	expect_grep "^warden: commit [0-9a-f]\{12\} is not on the first-parent history of .official.: only a move of official can be adopted$" err &&
	expect_exit 2 warden --repo a5 journal adopt side &&
	expect_grep "^warden: commit [0-9a-f]\{12\} is already recorded by journal seq [0-9]* (official.adopted): nothing to adopt$" err &&
	a=$(git -C a5 log --format=%H --grep="^Warden-Operation: review.approve" official | head -n 1) &&
	test -n "$a" &&
	expect_exit 2 warden --repo a5 journal adopt "$a" &&
	expect_grep "^warden: commit [0-9a-f]\{12\} is already recorded by journal seq [0-9]* (review.approved): nothing to adopt$" err &&
	expect_exit 2 warden --repo a5 journal adopt no-such-rev &&
	expect_grep "^warden: .no-such-rev. names no commit$" err &&
	expect_exit 2 warden --repo a5 journal adopt
'

test_expect_success 'approvals, exports and notes keep verifying clean' '
	submit_engine_change 2 &&
	warden --repo bench review approve 2 --as "M <m@example.org>" >/dev/null &&
	warden --repo bench journal note "a note" >/dev/null &&
	warden --repo bench journal export >/dev/null &&
	expect_exit 0 warden --repo bench journal verify
'

test_done
