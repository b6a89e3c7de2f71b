#!/bin/sh
# Commands that only read create nothing: journal show, campaign list and
# review list in a benchmark repository with no store yet say that nothing
# is recorded and leave no .warden/. Outside a benchmark repository (no git
# repository, or one with neither policy/warden.json nor an official
# branch) every command gives the same answer with the same exit code.
. "$TOP_SRCDIR/tests/lib.sh"

test_expect_success 'setup: a bench, a clone of it with no store, a plain git repository' '
	make_bench_repo bench &&
	git clone -q bench clone &&
	test ! -e clone/.warden &&
	git init -q plain && mkdir nowhere
'

for c in "journal show" "campaign list" "review list"; do
test_expect_success "$c in a clone with no store creates nothing and says so" "
	expect_exit 0 warden --repo clone $c &&
	expect_grep '^nothing recorded in .* yet (no .warden/warden.db; none was created)\$' err &&
	test ! -e clone/.warden &&
	git -C clone status --porcelain --ignored >st && test ! -s st
"
done

test_expect_success 'journal show --json in a clone with no store is an empty list' '
	warden --repo clone --json journal show >out &&
	python3 -c "import json; assert json.load(open(\"out\")) == []" &&
	test ! -e clone/.warden
'

for where in plain nowhere; do
test_expect_success "outside a bench ($where): status, campaign, lint, cycle, journal show, review list: one message, exit 3" "
	cd $where &&
	for c in status campaign lint cycle 'journal show' 'review list' \
	    'campaign list' gate triage; do
		expect_exit 3 warden \$c &&
		expect_grep '^warden: not in a benchmark repository' err &&
		test \$(wc -l <err) -eq 1 || { echo \"in: \$c\"; cat err; exit 1; }
	done &&
	test ! -e .warden
"
done

test_expect_success 'a named repository that is not a bench is an input error (exit 2)' '
	expect_exit 2 warden --repo plain status &&
	expect_grep "^warden: not in a benchmark repository" err &&
	test ! -e plain/.warden
'

test_done
