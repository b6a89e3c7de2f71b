#!/bin/sh
# Every error is printed once, as "warden: message" (followed only by the
# command's usage lines): getopt prints nothing of its own, in any command
# or subcommand, for an unknown option, a missing value, a value given to
# an option that takes none, or an ambiguous abbreviation.
. "$TOP_SRCDIR/tests/lib.sh"

# check_once WHAT: ./err is one "warden: " line naming WHAT, then usage
# lines only; nothing from getopt.
check_once() {
	n=$(grep -c "^warden: " err || true)
	if [ "$n" -ne 1 ]; then
		echo "want one 'warden: ' line, got $n:"; cat err; return 1
	fi
	expect_grep "^warden: .*$1" err || return 1
	if grep -v -e "^warden: " -e "^usage: warden " -e "^       warden " err; then
		echo "stderr has lines that are neither the message nor usage"
		return 1
	fi
}

# Every command and subcommand, as the argv before an option.
COMMANDS="help
version
init
lint
journal show
journal verify
journal export
journal note
campaign
patch check
patch submit
review list
review show
review approve
review reject
pr-check"

test_expect_success 'setup' '
	make_bench_repo bench
'

test_expect_success 'an unknown long option: one message in every command' '
	cd bench &&
	echo "$COMMANDS" | while read -r c; do
		expect_exit 2 warden $c --frobnicate || exit 1
		check_once "unknown option .--frobnicate." || { echo "in: $c"; exit 1; }
	done
'

test_expect_success 'an unknown short option: one message in every command' '
	cd bench &&
	echo "$COMMANDS" | while read -r c; do
		expect_exit 2 warden $c -x || exit 1
		check_once "unknown option .-x." || { echo "in: $c"; exit 1; }
	done
'

test_expect_success 'a missing value: one message naming the option' '
	cd bench &&
	while read -r line; do
		c=${line% *} && opt=${line##* } &&
		expect_exit 2 warden $c $opt || exit 1
		check_once "option .$opt. needs a value" || { echo "in: $c $opt"; exit 1; }
	done <<-\EOF
	journal show --since
	journal show --cycle
	journal show --kind
	journal export --cycle
	journal note --subject
	campaign --roster
	patch check --base
	patch submit --source
	review list --status
	review approve --as
	review reject --reason
	pr-check --format
	EOF
'

test_expect_success 'a value given to an option that takes none' '
	cd bench &&
	expect_exit 2 warden journal show --json=yes &&
	check_once "option .--json. takes no value"
'

test_expect_success 'an ambiguous abbreviation names the candidates' '
	cd bench &&
	expect_exit 2 warden campaign --re &&
	check_once "option .--re. is ambiguous"
'

test_expect_success 'global options: unknown, missing value, no command' '
	expect_exit 2 warden --frobnicate &&
	check_once "unknown option .--frobnicate." &&
	expect_exit 2 warden --repo &&
	check_once "option .--repo. needs a value" &&
	expect_exit 2 warden &&
	n=$(grep -c "^warden: " err) && test "$n" = 1
'

test_expect_success 'usage errors of operands are printed once too' '
	cd bench &&
	expect_exit 2 warden journal verify extra &&
	check_once "takes no arguments" &&
	expect_exit 2 warden version extra &&
	check_once "takes no arguments" &&
	expect_exit 2 warden help nosuch &&
	check_once "is not a warden command"
'

test_expect_success 'a mistyped command: did you mean, exit 2, one message' '
	expect_exit 2 warden cycel &&
	expect_grep "^warden: .cycel. is not a warden command; did you mean .cycle.? (see .warden help.)$" err &&
	test $(wc -l <err) -eq 1 &&
	expect_exit 2 warden help statu &&
	expect_grep "did you mean .status.?" err &&
	expect_exit 2 warden frobnicate &&
	expect_grep "^warden: .frobnicate. is not a warden command; see .warden help.$" err
'

test_expect_success 'each command help lists only the exit codes it can return' '
	warden help cycle >raw && unwrap raw >out &&
	expect_grep "^Exit status: 0 ok, 1 a problem found, 2 usage or input error, 3 environment error, 4 waiting for review\.$" out &&
	for c in gate lint patch review triage; do
		warden help $c >raw && unwrap raw >out &&
		expect_grep "^Exit status: 0 ok, 1 a problem found, 2 usage or input error, 3 environment error\.$" out || exit 1
	done &&
	for c in init campaign snapshot; do
		warden help $c >raw && unwrap raw >out &&
		expect_grep "^Exit status: 0 ok, 2 usage or input error, 3 environment error\.$" out || exit 1
	done &&
	warden help version >raw && unwrap raw >out &&
	expect_grep "^Exit status: 0 ok, 3 environment error\.$" out &&
	warden --json help >h.json &&
	python3 -c "import json; d = json.load(open(\"h.json\")); w = [c[\"name\"] for c in d[\"commands\"] if 4 in c[\"exit_codes\"]]; assert w == [\"cycle\"], w"
'

test_expect_success 'cycle --id names a new cycle; a bad id is a usage error' '
	expect_exit 2 warden --repo bench cycle --id "../x" &&
	expect_grep "^warden: .--id ../x. is not a cycle id" err &&
	warden help cycle >out &&
	expect_grep "^  --id ID " out
'

test_expect_success 'warden help and every command help fit 80 columns, usage wrapped whole' '
	warden help >out &&
	awk "length > 80 { print FILENAME \": \" \$0; bad = 1 } END { exit bad }" out &&
	for c in $(warden help | sed -n "s/^  \([a-z][a-z-]*\) .*/\1/p"); do
		warden help $c >out &&
		awk "length > 80 { print \"$c: \" \$0; bad = 1 } END { exit bad }" out ||
		exit 1
	done &&
	warden help campaign >raw &&
	test $(grep -c "^  *\[" raw) -ge 1 &&
	unwrap raw >out &&
	expect_grep "^usage: warden campaign \[--roster R\] .* \[--progress-interval S\] \[--json \[--per-request\]\]" out
'

test_done
