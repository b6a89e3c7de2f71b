#!/bin/sh
# -q and -v do what warden(1) says under GLOBAL OPTIONS, command by
# command, before or after the command name: -q drops summaries,
# confirmations and progress but never data or errors; -v lists each file
# that lint, patch check, patch submit and pr-check looked at.
. "$TOP_SRCDIR/tests/lib.sh"

test_expect_success 'setup: a repository, a patch and a pull-request branch' '
	make_bench_repo bench &&
	sed "s/\"notes\": \"/\"notes\": \"Edited. /" \
	    bench/adapters/engines/example-sim.json >a.tmp &&
	cp a.tmp bench/adapters/engines/example-sim.json &&
	git -C bench diff >clean.patch &&
	git -C bench checkout -q -b pr official &&
	git -C bench commit -q -am edit &&
	git -C bench checkout -q -
'

test_expect_success 'lint: -q drops the summary, -v names every file' '
	cd bench &&
	warden lint 2>err && expect_grep "6 files checked, 0 problems" err &&
	warden -q lint 2>err && test ! -s err &&
	warden lint -q 2>err && test ! -s err &&
	warden lint -v 2>err &&
	expect_grep "^policy/warden.json: ok$" err &&
	expect_grep "^adapters/engines/example-sim.json: ok$" err &&
	expect_grep "^adapters/profiles/qwen3-0.6b.json: ok$" err &&
	expect_grep "^workloads/chat.jsonl: ok$" err &&
	expect_grep "^workloads/fidelity: ok$" err &&
	expect_grep "6 files checked" err
'

test_expect_success 'lint -q still prints every problem' '
	cd bench &&
	printf "{\"schema\": 2}" >adapters/profiles/bad.json &&
	expect_exit 1 warden lint -q adapters/profiles/bad.json &&
	expect_grep "^adapters/profiles/bad.json:1:[0-9]*: .schema." out &&
	test ! -s err &&
	expect_exit 1 warden -v lint adapters/profiles/bad.json &&
	expect_grep "^adapters/profiles/bad.json: [0-9]* problems$" err &&
	rm adapters/profiles/bad.json
'

test_expect_success 'journal note, export and verify: -q prints nothing on success' '
	cd bench &&
	warden journal note "hello" -q >out 2>err && test ! -s out && test ! -s err &&
	warden -q journal export >out 2>err && test ! -s out && test ! -s err &&
	warden journal verify -q >out 2>err && test ! -s out && test ! -s err &&
	warden journal verify >out && expect_grep "journal intact" out
'

test_expect_success 'journal show and review list print their data under -q' '
	cd bench &&
	warden -q journal show >out && expect_grep "hello" out &&
	warden review list -q >out && test ! -s out
'

test_expect_success 'an empty list says so on standard error, and -q drops that' '
	cd bench &&
	for c in "review list:no reviews" \
	    "review list --status pending:no pending reviews" \
	    "incident list:no incidents" \
	    "incident list --state fixed:no incidents in state fixed" \
	    "regressions:no regression alerts" \
	    "regressions list --engine x:no regression alerts of engine x" \
	    "agent list:no agent runs" \
	    "campaign list:no campaign runs (start one with .warden campaign.)" \
	    "fidelity list:no fidelity runs (warden fidelity runs one)" \
	    "journal show --kind nope:no journal entries of kind nope" \
	    "journal show --cycle c9 --since 2030-01-01:no journal entries of cycle c9 since 2030-01-01T00:00:00.000Z"; do
		expect_exit 0 warden ${c%%:*} &&
		test ! -s out && expect_grep "^${c#*:}$" err &&
		expect_exit 0 warden -q ${c%%:*} &&
		test ! -s out && test ! -s err &&
		expect_exit 0 warden --json ${c%%:*} &&
		test "$(cat out)" = "[]" && test ! -s err || return 1
	done
'

test_expect_success 'init: -q drops the confirmation' '
	warden init quiet -q >out 2>err && test ! -s out && test ! -s err &&
	test -f quiet/policy/warden.json
'

test_expect_success 'patch check: -q drops the summary, -v lists files with line counts' '
	warden --repo bench patch check clean.patch 2>err &&
	expect_grep "1 file checked" err &&
	warden --repo bench patch check clean.patch -q 2>err && test ! -s err &&
	warden --repo bench patch check clean.patch -v 2>err &&
	expect_grep "^M adapters/engines/example-sim.json +1 -1$" err
'

test_expect_success 'patch submit: -q keeps the review number, drops the rest' '
	warden --repo bench patch submit clean.patch --source agent -q >out 2>err &&
	expect_grep "^queued as review 1" out && test ! -s err
'

test_expect_success 'review reject and approve: -q drops the confirmation' '
	warden --repo bench review reject 1 --reason no -q >out 2>err &&
	test ! -s out && test ! -s err &&
	warden --repo bench patch submit clean.patch --source agent -q >/dev/null &&
	warden --repo bench review approve 2 --as "M <m@example.org>" --without-evidence -q >out 2>err &&
	test ! -s out && test ! -s err &&
	warden --repo bench review list --status approved >out &&
	expect_grep "^2 " out
'

test_expect_success 'pr-check: -q drops the closing line, -v lists the files' '
	warden --repo bench pr-check official pr >out &&
	expect_grep "^pr-check: ok" out &&
	warden --repo bench pr-check official pr -q >out 2>err &&
	test ! -s out && test ! -s err &&
	warden --repo bench pr-check official pr -v >out 2>err &&
	expect_grep "^M adapters/engines/example-sim.json +1 -1$" err
'

test_expect_success 'journal adopt: -q drops the confirmation' '
	cd bench &&
	git checkout -q official && echo "A note." >>README.md &&
	git commit -q -am "README: a note" && git checkout -q --detach official &&
	warden journal adopt official >out 2>err &&
	expect_grep "^journal entry [0-9]* records commit" out &&
	git checkout -q official && echo "Another." >>README.md &&
	git commit -q -am "README: another" && git checkout -q --detach official &&
	warden -q journal adopt official >out 2>err &&
	test ! -s out && test ! -s err &&
	warden journal verify >/dev/null
'

test_expect_success 'the last of -q and -v counts' '
	cd bench && warden -q lint -v 2>err && expect_grep ": ok$" err &&
	warden -v lint -q 2>err && test ! -s err
'

test_done
