#!/bin/sh
# t7005: `warden publish` commits official results only from a clean
# checkout of the official tip, for results measured exactly there, after
# approved reviews and the gate; it refuses naming each failed condition.
# A published snapshot verifies; the same inputs give the same archive.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

test_expect_success 'a bench whose engine came through an approved review, measured at the tip' '
	publish_bench bench sima &&
	test "$(git -C bench rev-parse HEAD)" = "$(git -C bench rev-parse official)" &&
	git -C bench log -1 --format=%B official | grep -q "^Reviewed-by: Maintainer" &&
	"$WARDEN" --repo bench campaign --limit 4 >/dev/null 2>&1 &&
	warden --repo bench fidelity --limit 20 --shots 0 --run-id f1 >/dev/null 2>&1 &&
	warden --repo bench fidelity mark-reference f1 >/dev/null &&
	test -z "$(git -C bench status --porcelain)"
'

test_expect_success 'publish refuses when the gate has not run on these results' '
	expect_exit 1 warden --repo bench publish &&
	expect_grep "^warden: cannot publish: the gate has not run on these results (result set [0-9a-f]\{16\}); run .warden gate. with the same runs first$" err &&
	test "$(git -C bench rev-parse official)" = "$(git -C bench rev-parse HEAD)"
'

test_expect_success 'after the gate, publish commits the results on official and tags them' '
	warden --repo bench gate >/dev/null &&
	cp -a bench same && cp -a bench dirty && cp -a bench checked &&
	tip=$(git -C bench rev-parse official) &&
	expect_exit 0 warden --repo bench publish &&
	cp out publish.out &&
	id=$(sed -n "s/^published snapshot \([0-9a-f]\{16\}\) on .official.: commit .*/\1/p" out) &&
	test -n "$id" &&
	new=$(git -C bench rev-parse official) && test "$new" != "$tip" &&
	test "$(git -C bench rev-parse official^)" = "$tip" &&
	test "$(git -C bench rev-parse "snapshot/$id")" = "$new" &&
	git -C bench log -1 --format=%B official >msg &&
	sha=$(sha256sum "bench/snapshots/$id.tar.gz" | cut -c1-64) &&
	expect_grep "^Warden-Snapshot: $id sha256:$sha$" msg &&
	expect_grep "^Warden-Operation: publish $id$" msg &&
	expect_grep "^Warden-Journal: [0-9]* [0-9a-f]\{64\}$" msg &&
	git -C bench ls-tree -r --name-only official results >tree &&
	expect_grep "^results/qwen3-0.6b/chat/sima_" tree &&
	expect_grep "^results/REPORT.md$" tree &&
	expect_grep "^results/manifest.json$" tree &&
	expect_grep "^results/plots/throughput-qwen3-0.6b-chat.svg$" tree &&
	test -z "$(git -C bench status --porcelain)" &&
	test "$(git -C bench rev-parse HEAD)" = "$tip"
'

test_expect_success 'the published snapshot verifies and matches the committed tree' '
	id=$(sed -n "s/^published snapshot \([0-9a-f]\{16\}\) .*/\1/p" publish.out) &&
	expect_exit 0 warden verify "bench/snapshots/$id.tar.gz" &&
	mkdir x && tar xzf "bench/snapshots/$id.tar.gz" -C x &&
	git -C bench show official:results/manifest.json >committed &&
	cmp committed x/results/manifest.json &&
	git -C bench show official:results/REPORT.md | cmp - x/results/REPORT.md &&
	expect_grep "completes at least 90 of every 100 requests it is sent (90 %)" x/results/REPORT.md &&
	sqlite3 bench/.warden/warden.db "select count(*) from journal where kind = '"'"'results.published'"'"'" >n &&
	test "$(cat n)" = 1 &&
	warden --repo bench journal verify
'

test_expect_success 'two publishes of the same inputs give the same sha256' '
	expect_exit 0 warden --repo same publish &&
	test "$(sed -n "s/^  sha256    //p" out)" = "$(sed -n "s/^  sha256    //p" publish.out)" &&
	id=$(sed -n "s/^published snapshot \([0-9a-f]\{16\}\) .*/\1/p" publish.out) &&
	cmp "bench/snapshots/$id.tar.gz" "same/snapshots/$id.tar.gz"
'

test_expect_success 'publish refuses when HEAD is not the official tip' '
	expect_exit 1 warden --repo bench publish &&
	expect_grep "^warden: cannot publish: HEAD ([0-9a-f]\{12\}) is not the tip of .official. ([0-9a-f]\{12\}); publish from a clean checkout of it" err
'

test_expect_success 'publish refuses results measured at another commit' '
	git -C bench checkout -q --detach official &&
	expect_exit 1 warden --repo bench publish &&
	expect_grep "^warden: cannot publish: .results/qwen3-0.6b/chat/sima_[^ ]*.json. (run [^ ]*) was measured at commit [0-9a-f]\{12\}, not at the official tip [0-9a-f]\{12\}$" err
'

test_expect_success 'publish refuses a tree that is not clean' '
	echo stray >dirty/stray.txt &&
	expect_exit 1 warden --repo dirty publish &&
	expect_grep "^warden: cannot publish: the working tree is not clean: .stray.txt. is untracked" err
'

test_expect_success 'publish refuses results measured with uncommitted changes' '
	echo "local note" >>dirty/README.md &&
	rm dirty/stray.txt &&
	warden --repo dirty campaign --limit 4 --run-id cdirty >/dev/null 2>&1 &&
	git -C dirty checkout -q README.md &&
	warden --repo dirty gate --campaign cdirty >/dev/null &&
	expect_exit 1 warden --repo dirty publish --campaign cdirty &&
	expect_grep "^warden: cannot publish: .results/qwen3-0.6b/chat/sima_cdirty.json. (run cdirty) was measured with uncommitted changes in the tree$" err
'

test_expect_success 'publish refuses a change in the allowlist zone that no review approved' '
	git -C checked checkout -q -B hack official &&
	sed -i "s/--accuracy/--seed\", \"9\", \"--accuracy/" checked/adapters/engines/sima.json &&
	git -C checked commit -q -am "tune sima" &&
	git -C checked branch -f official hack &&
	git -C checked checkout -q --detach official &&
	measure checked z &&
	expect_exit 1 warden --repo checked publish &&
	expect_grep "^warden: cannot publish: commit [0-9a-f]\{12\} (\"tune sima\") changes .adapters/engines/sima.json., in the allowlist zone, and is not an approved review.s" err &&
	expect_grep "(or, for a maintainer.s own commit reviewed by hand, .warden journal adopt [0-9a-f]\{12\}.)$" err
'

test_expect_success 'the same commit, adopted by the maintainer, is published: adoption is their word, as an approval is' '
	cp -a checked adopted &&
	zone=$(git -C adopted rev-parse official) &&
	expect_exit 0 warden --repo adopted journal adopt official &&
	expect_exit 0 warden --repo adopted publish &&
	sqlite3 adopted/.warden/warden.db "SELECT body FROM journal WHERE kind = '"'"'results.published'"'"' ORDER BY seq DESC LIMIT 1" >body &&
	jcheck body "\"$zone\" not in o.get(\"adopted\", [])" &&
	expect_exit 0 warden --repo adopted journal verify
'

test_expect_success 'after a publish, a maintainer commit outside the zone may be published again' '
	git -C bench checkout -q -B note official &&
	echo "notes" >>bench/README.md && git -C bench commit -q -am "README" &&
	git -C bench branch -f official note &&
	git -C bench checkout -q --detach official &&
	readme=$(git -C bench rev-parse official) &&
	expect_exit 1 warden --repo bench journal verify &&
	expect_grep "official commit $readme (\"README\") is recorded by no journal entry" out &&
	measure bench y &&
	expect_exit 0 warden --repo bench publish &&
	test "$(git -C bench rev-list --count official)" -gt 4 &&
	expect_exit 0 warden --repo bench verify "$(sed -n "s/^  archive   //p" out)" &&
	sqlite3 bench/.warden/warden.db "SELECT body FROM journal WHERE kind = '"'"'results.published'"'"' ORDER BY seq DESC LIMIT 1" >body &&
	jcheck body "o[\"adopted\"] == [\"$readme\"]" &&
	expect_exit 0 warden --repo bench journal verify
'

test_expect_success 'publish refuses while official is checked out' '
	git -C same checkout -q official &&
	expect_exit 3 warden --repo same publish &&
	expect_grep "checked out" err
'

test_expect_success 'a crash after the branch moved is finished by the next command: recorded and tagged' '
	cp -a checked crash &&
	git -C crash checkout -q -B hack2 official~1 &&
	git -C crash branch -f official hack2 && git -C crash checkout -q --detach official &&
	measure crash w &&
	! WARDEN_FAULT=official.moved warden --repo crash publish >/dev/null 2>&1 &&
	moved=$(git -C crash rev-parse official) &&
	id=$(git -C crash log -1 --format=%B official | sed -n "s/^Warden-Snapshot: \([0-9a-f]*\) .*/\1/p") &&
	test -n "$id" &&
	! git -C crash rev-parse -q --verify "snapshot/$id" &&
	warden --repo crash journal show --kind official. >/dev/null &&
	test "$(git -C crash rev-parse "snapshot/$id")" = "$moved" &&
	test "$(sqlite3 crash/.warden/warden.db "select commit_id from publishes")" = "$moved"
'

test_done
