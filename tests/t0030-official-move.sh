#!/bin/sh
# Moving the official branch (runner/journal/official.c): review approve records
# its intent, moves the branch with an expected old value, records the
# outcome; killed in between (WARDEN_FAULT), the next warden command
# finishes or rolls back what was left, so the branch, the store and the
# journal agree and approving again works. The branch is never moved while
# a worktree, main or linked, has it checked out.
. "$TOP_SRCDIR/tests/lib.sh"

official() {
	git -C bench rev-parse official
}

status_of() {
	sqlite3 bench/.warden/warden.db "SELECT status FROM reviews WHERE id = $1"
}

# submit_change N FILE: queue a patch adding FILE as review N.
submit_change() {
	mkdir -p "bench/$(dirname "$2")" &&
	printf '{"name": "%s"}\n' "$1" >"bench/$2" &&
	git -C bench add -A && git -C bench diff --cached >"p$1.patch" &&
	git -C bench reset -q --hard &&
	warden --repo bench patch submit "p$1.patch" --source agent >out &&
	expect_grep "queued as review $1 " out
}

test_expect_success 'setup: a benchmark repository with four queued changes' '
	make_bench_repo bench &&
	submit_change 1 adapters/engines/e1.json &&
	submit_change 2 adapters/engines/e2.json &&
	submit_change 3 adapters/engines/e3.json &&
	submit_change 4 adapters/engines/e4.json
'

test_expect_success 'an approval commit carries its operation and the journal head' '
	expect_exit 0 warden --repo bench review approve 1 --as "M <m@example.org>" &&
	git -C bench log -1 --format=%B official >msg &&
	expect_grep "^Reviewed-by: M <m@example.org>$" msg &&
	expect_grep "^Warden-Operation: review.approve 1$" msg &&
	head=$(sqlite3 bench/.warden/warden.db \
	    "SELECT seq || \" \" || hash FROM journal WHERE seq = (SELECT max(seq) - 1 FROM journal)") &&
	expect_grep "^Warden-Journal: $head$" msg &&
	test "$(sqlite3 bench/.warden/warden.db "SELECT state FROM official_ops")" = done
'

test_expect_success 'killed after the intent, before the move: rolled back, then approved' '
	official >tip &&
	expect_exit 137 env WARDEN_FAULT=official.ref "$WARDEN" --repo bench \
	    review approve 2 --as "M <m@example.org>" &&
	test "$(official)" = "$(cat tip)" &&
	test "$(sqlite3 bench/.warden/warden.db "SELECT state FROM official_ops WHERE op = \"2\"")" = intent &&
	warden --repo bench review list --status pending >list &&
	expect_grep "^2 *pending" list &&
	test "$(sqlite3 bench/.warden/warden.db "SELECT state FROM official_ops WHERE op = \"2\"")" = rolled-back &&
	warden --repo bench journal show --kind official.recovered --full >j &&
	expect_grep "\"op\":\"2\",\"outcome\":\"rolled back\"" j &&
	expect_exit 0 warden --repo bench review approve 2 --as "M <m@example.org>" &&
	test "$(git -C bench rev-parse official^)" = "$(cat tip)" &&
	test "$(status_of 2)" = approved &&
	warden --repo bench journal verify
'

test_expect_success 'killed after the move, before the outcome: completed on the next start' '
	official >tip &&
	expect_exit 137 env WARDEN_FAULT=official.moved "$WARDEN" --repo bench \
	    review approve 3 --as "M <m@example.org>" &&
	official >moved && test "$(cat moved)" != "$(cat tip)" &&
	test "$(status_of 3)" = pending &&
	warden --repo bench review list >list &&
	expect_grep "^3 *approved" list &&
	test "$(sqlite3 bench/.warden/warden.db "SELECT merged_commit FROM reviews WHERE id = 3")" = "$(cat moved)" &&
	warden --repo bench journal show --kind review.approved --full >j &&
	expect_grep "  review.approved  review/3$" j &&
	expect_grep "\"commit\":\"$(cat moved)\"" j &&
	warden --repo bench journal show --kind official.recovered --full >j &&
	expect_grep "\"op\":\"3\",\"outcome\":\"completed\"" j &&
	expect_exit 2 warden --repo bench review approve 3 --as "M <m@example.org>" &&
	expect_grep "review 3 is approved, not pending" err &&
	test "$(official)" = "$(cat moved)" &&
	warden --repo bench journal verify
'

test_expect_success 'killed before the outcome transaction commits: completed on the next start' '
	official >tip &&
	expect_exit 137 env WARDEN_FAULT=store.commit:2 "$WARDEN" --repo bench \
	    review approve 4 --as "M <m@example.org>" --comment "killed once" &&
	official >moved && test "$(cat moved)" != "$(cat tip)" &&
	test "$(status_of 4)" = pending &&
	expect_exit 0 warden --repo bench journal verify &&
	test "$(status_of 4)" = approved &&
	test "$(sqlite3 bench/.warden/warden.db "SELECT comment FROM reviews WHERE id = 4")" = "killed once"
'

test_expect_success 'a move whose commit the branch lost is rolled back' '
	submit_change 5 adapters/engines/e5.json &&
	official >tip &&
	expect_exit 137 env WARDEN_FAULT=official.moved "$WARDEN" --repo bench \
	    review approve 5 --as "M <m@example.org>" &&
	git -C bench update-ref refs/heads/official "$(cat tip)" &&
	warden --repo bench review list --status pending >list &&
	expect_grep "^5 *pending" list &&
	warden --repo bench journal show --kind official.recovered --full >j &&
	expect_grep "\"op\":\"5\",\"outcome\":\"rolled back\",.*does not hold the commit" j &&
	expect_exit 0 warden --repo bench review approve 5 --as "M <m@example.org>"
'

test_expect_success 'approve refuses while a linked worktree has official checked out' '
	submit_change 6 adapters/engines/e6.json &&
	official >tip &&
	git -C bench worktree add -q "$PWD/linked" official &&
	git -C linked status --porcelain >st0 &&
	expect_exit 3 warden --repo bench review approve 6 --as "M <m@example.org>" &&
	expect_grep "official. is checked out in the worktree .$PWD/linked.;" err &&
	test "$(official)" = "$(cat tip)" &&
	git -C linked status --porcelain >st1 && expect_equal st0 st1 &&
	test "$(status_of 6)" = pending &&
	git -C linked switch -q --detach &&
	expect_exit 0 warden --repo bench review approve 6 --as "M <m@example.org>" &&
	git -C linked status --porcelain >st2 && expect_equal st0 st2
'

test_expect_success 'approve refuses while the main worktree has official checked out' '
	submit_change 7 adapters/engines/e7.json &&
	git -C bench checkout -q official &&
	expect_exit 3 warden --repo bench review approve 7 --as "M <m@example.org>" &&
	expect_grep "official. is checked out in the worktree .$PWD/bench.;" err &&
	git -C bench checkout -q - &&
	test "$(status_of 7)" = pending
'

test_expect_success 'the store, the branch and the journal agree at the end' '
	sqlite3 bench/.warden/warden.db "PRAGMA integrity_check" >ic &&
	test "$(cat ic)" = ok &&
	test -z "$(sqlite3 bench/.warden/warden.db "SELECT id FROM official_ops WHERE state = \"intent\"")" &&
	for id in $(sqlite3 bench/.warden/warden.db "SELECT id FROM reviews WHERE status = \"approved\""); do
		c=$(sqlite3 bench/.warden/warden.db "SELECT merged_commit FROM reviews WHERE id = $id") &&
		git -C bench merge-base --is-ancestor "$c" official || exit 1
	done &&
	git -C bench log --format=%B official | grep -c "^Warden-Operation: review.approve" >n &&
	test "$(cat n)" = "$(sqlite3 bench/.warden/warden.db "SELECT count(*) FROM reviews WHERE status = \"approved\"")" &&
	git -C bench fsck --strict 2>&1
'

test_done
