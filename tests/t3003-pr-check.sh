#!/bin/sh
# warden pr-check BASE HEAD: the gate over every commit of a pull request
# with the policy of BASE, lint of the changed adapters, and output for
# people, JSON, GitHub (annotations and step summary) and JUnit XML.
. "$TOP_SRCDIR/tests/lib.sh"
# Until runner/cmd.c lists the command, the whole script is skipped.
if ! "$WARDEN" help pr-check >/dev/null 2>&1; then
	echo "1..0 # SKIP warden has no 'pr-check' command in its table"
	rm -rf "$TEST_DIR"
	exit 0
fi

HAVE_XMLLINT=no
command -v xmllint >/dev/null 2>&1 && HAVE_XMLLINT=yes

# commit_on BRANCH MESSAGE: commit what is staged in bench, on BRANCH.
commit_on() {
	test "$(git -C bench symbolic-ref --short HEAD)" = "$1" &&
	git -C bench commit -q -m "$2"
}

test_expect_success 'setup: a repository and four pull-request branches' '
	make_bench_repo bench &&
	git -C bench checkout -q -b good official &&
	sed "s/example-sim/sim-two/" bench/adapters/engines/example-sim.json \
	    >bench/adapters/engines/sim-two.json &&
	git -C bench add -A && commit_on good "engines: add sim-two" &&
	git -C bench checkout -q -b symlink official &&
	ln -s ../../policy bench/adapters/engines/link &&
	git -C bench add -A && commit_on symlink "add a link" &&
	rm bench/adapters/engines/link && mkdir bench/adapters/engines/link &&
	echo "{}" >bench/adapters/engines/link/warden.json &&
	git -C bench add -A && commit_on symlink "write through it" &&
	git -C bench checkout -q -b policy official &&
	sed "s|\"adapters/engines/\*\*\",|\"**\",|" bench/policy/warden.json \
	    >p.tmp && mv p.tmp bench/policy/warden.json &&
	echo "{\"prompt\": \"leak\"}" >bench/workloads/chat.jsonl &&
	git -C bench add -A && commit_on policy "allow everything" &&
	git -C bench checkout -q -b badjson official &&
	echo "{ not json" >bench/adapters/engines/broken.json &&
	git -C bench add -A && commit_on badjson "engines: broken" &&
	git -C bench checkout -q -
'

test_expect_success 'a clean pull request passes' '
	expect_exit 0 warden --repo bench pr-check official good &&
	expect_grep "^pr-check: ok (1 file, 0 violations, 0 lint problems)" out
'

test_expect_success 'a symlink made in one commit and written through in the next fails' '
	expect_exit 1 warden --repo bench pr-check official symlink &&
	expect_grep "^symlink adapters/engines/link: creates a symlink (commit $(git -C bench rev-parse --short=12 symlink^))" out &&
	expect_grep "^pr-check: FAIL" out
'

test_expect_success 'policy comes from BASE: a PR widening the allowlist still fails' '
	expect_exit 1 warden --repo bench pr-check official policy &&
	expect_grep "^outside-allowlist policy/warden.json" out &&
	expect_grep "^outside-allowlist workloads/chat.jsonl" out
'

test_expect_success 'changed adapters are linted' '
	expect_exit 1 warden --repo bench pr-check official badjson &&
	expect_grep "^lint adapters/engines/broken.json" out
'

test_expect_success 'json output lists violations with codes and commits' '
	expect_exit 1 warden --repo bench pr-check official symlink --format json &&
	python3 -c "
import json
d = json.load(open(\"out\"))
assert d[\"ok\"] is False
v = [x for x in d[\"violations\"] if x[\"code\"] == \"symlink\"]
assert v and v[0][\"commit\"], d
"
'

test_expect_success 'github output annotates files and writes the step summary' '
	GITHUB_STEP_SUMMARY=$PWD/summary.md &&
	export GITHUB_STEP_SUMMARY &&
	expect_exit 1 warden --repo bench pr-check official policy --format github &&
	expect_grep "^::error file=policy/warden.json,line=4,title=warden gate::outside-allowlist: " out &&
	expect_grep "^## warden pr-check: failed" summary.md &&
	expect_grep "| \`outside-allowlist\` | \`workloads/chat.jsonl\` |" summary.md &&
	unset GITHUB_STEP_SUMMARY &&
	expect_exit 1 warden --repo bench pr-check official badjson --format github &&
	expect_grep "^::error file=adapters/engines/broken.json,line=[0-9]*,col=[0-9]*,title=warden lint::" out
'

test_expect_success_if $HAVE_XMLLINT 'junit output is valid XML with one failure per problem' '
	expect_exit 1 warden --repo bench pr-check official policy --format junit &&
	xmllint --noout out &&
	test "$(xmllint --xpath "count(//testcase/failure)" out)" = 2 &&
	test "$(xmllint --xpath "string(/testsuites/@failures)" out)" = 2 &&
	expect_exit 0 warden --repo bench pr-check official good --format junit &&
	xmllint --noout out &&
	test "$(xmllint --xpath "count(//failure)" out)" = 0
'

test_expect_success 'unknown revisions and formats are refused' '
	expect_exit 2 warden --repo bench pr-check official no-such-branch &&
	expect_exit 2 warden --repo bench pr-check official good --format xml
'

test_done
