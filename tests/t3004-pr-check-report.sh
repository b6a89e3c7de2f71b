#!/bin/sh
# What pr-check reports about a pull request is true and complete in every
# format: JSON counts the lines each file added and deleted; JUnit has a
# failing testcase per violating file and code and per lint problem (named
# so they are told apart), with times and a timestamp, valid against
# tests/fixtures/junit.xsd; GitHub annotations point at the first changed
# line, and the step summary lists lint problems as well as violations.
. "$TOP_SRCDIR/tests/lib.sh"

HAVE_XMLLINT=no
command -v xmllint >/dev/null 2>&1 && HAVE_XMLLINT=yes
XSD=$TOP_SRCDIR/tests/fixtures/junit.xsd

test_expect_success 'setup: a pull request with a clean file, an outside file and a broken adapter' '
	make_bench_repo bench &&
	git -C bench checkout -q -b pr official &&
	sed "s/\"retirement_days\": 60/\"retirement_days\": 61/" \
	    bench/policy/warden.json >p.tmp && mv p.tmp bench/policy/warden.json &&
	sed "s/example-sim/sim-two/" bench/adapters/engines/example-sim.json \
	    >bench/adapters/engines/sim-two.json &&
	printf "{\n  \"schema\": 1,\n  \"name\": \"broken\",\n  \"api\": \"openai-chat\",\n  \"sorce\": {}\n}\n" \
	    >bench/adapters/engines/broken.json &&
	git -C bench add -A && git -C bench commit -q -m "a mixed pull request" &&
	git -C bench checkout -q - &&
	git -C bench diff --numstat official pr | sort -k3 >numstat &&
	test "$(wc -l <numstat)" = 3
'

test_expect_success 'json: every file carries the lines it added and deleted' '
	expect_exit 1 warden --repo bench pr-check official pr --format json &&
	python3 - numstat <<-\EOF
	import json, sys
	d = json.load(open("out"))
	want = {}
	for line in open(sys.argv[1]):
	    a, r, path = line.split()
	    want[path] = (int(a), int(r))
	got = {f.get("new_path") or f.get("old_path"): (f["added"], f["deleted"]) for f in d["files"]}
	assert got == want, (got, want)
	for p in d["lint"]:
	    for k in ("file", "line", "column", "field", "message"):
	        assert k in p, (k, p)
	assert {p["field"] for p in d["lint"]} >= {"sorce", "source"}, d["lint"]
	EOF
'

test_expect_success_if $HAVE_XMLLINT 'junit: valid against the schema, a testcase per violation and lint problem' '
	expect_exit 1 warden --repo bench pr-check official pr --format junit &&
	xmllint --noout --schema "$XSD" out 2>xsd.err || { cat xsd.err; exit 1; }
	test "$(xmllint --xpath "count(//testcase[failure])" out)" -ge 3 &&
	test "$(xmllint --xpath "count(//testcase[@name=\"gate outside-allowlist policy/warden.json\"]/failure[@type=\"outside-allowlist\"])" out)" = 1 &&
	test "$(xmllint --xpath "count(//testcase[@name=\"gate adapters/engines/sim-two.json\"][not(failure)])" out)" = 1 &&
	test "$(xmllint --xpath "count(//testcase[starts-with(@name, \"lint adapters/engines/broken.json:\")]/failure[@type=\"lint\"])" out)" -ge 2 &&
	test "$(xmllint --xpath "count(//testcase[starts-with(@name, \"lint \")][@classname=\"warden.lint\"])" out)" = \
	    "$(xmllint --xpath "count(//testcase[starts-with(@name, \"lint \")])" out)" &&
	failures=$(xmllint --xpath "count(//failure)" out) &&
	test "$(xmllint --xpath "string(/testsuites/@failures)" out)" = "$failures" &&
	tests=$(xmllint --xpath "count(//testcase)" out) &&
	test "$(xmllint --xpath "string(/testsuites/@tests)" out)" = "$tests" &&
	for s in gate lint; do
		ts=$(xmllint --xpath "string(//testsuite[@name=\"warden pr-check $s\"]/@timestamp)" out) &&
		echo "$ts" | grep -q "^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]$" &&
		t=$(xmllint --xpath "string(//testsuite[@name=\"warden pr-check $s\"]/@time)" out) &&
		echo "$t" | grep -q "^[0-9][0-9]*\.[0-9][0-9]*$" || { echo "suite $s: ts=$ts time=$t"; exit 1; }
	done
'

test_expect_success_if $HAVE_XMLLINT 'junit: a clean pull request is valid and has no failure' '
	git -C bench checkout -q -b good official &&
	cp bench/adapters/engines/example-sim.json bench/adapters/engines/x.tmp &&
	sed "s/example-sim/sim-three/" bench/adapters/engines/x.tmp \
	    >bench/adapters/engines/sim-three.json && rm bench/adapters/engines/x.tmp &&
	git -C bench add -A && git -C bench commit -q -m "sim-three" &&
	git -C bench checkout -q - &&
	expect_exit 0 warden --repo bench pr-check official good --format junit &&
	xmllint --noout --schema "$XSD" out 2>xsd.err || { cat xsd.err; exit 1; }
	test "$(xmllint --xpath "count(//failure)" out)" = 0 &&
	test "$(xmllint --xpath "count(//testcase)" out)" = 1
'

test_expect_success_if $HAVE_XMLLINT 'junit: names and messages with markup and control characters stay well-formed' '
	git -C bench checkout -q -b odd official &&
	printf "{\n  \"schema\": 1,\n  \"name\": \"odd\",\n  \"a<b&c\\u0001\": 1\n}\n" \
	    >bench/adapters/engines/odd.json &&
	git -C bench add -A && git -C bench commit -q -m "odd" &&
	git -C bench checkout -q - &&
	expect_exit 1 warden --repo bench pr-check official odd --format junit &&
	xmllint --noout --schema "$XSD" out 2>xsd.err || { cat xsd.err; exit 1; }
'

test_expect_success 'github: the outside-allowlist annotation is at the first changed line' '
	line=$(git -C bench diff -U0 official pr -- policy/warden.json |
	    sed -n "s/^@@ -[0-9,]* +\([0-9]*\).*/\1/p" | head -1) &&
	test "$line" -gt 1 &&
	unset GITHUB_STEP_SUMMARY &&
	expect_exit 1 warden --repo bench pr-check official pr --format github &&
	expect_grep "^::error file=policy/warden.json,line=$line,title=warden gate::outside-allowlist: " out
'

test_expect_success 'github: the step summary lists lint problems too' '
	GITHUB_STEP_SUMMARY=$PWD/summary.md && export GITHUB_STEP_SUMMARY &&
	expect_exit 1 warden --repo bench pr-check official pr --format github &&
	expect_grep "| \`outside-allowlist\` | \`policy/warden.json\` |" summary.md &&
	expect_grep "^| \`adapters/engines/broken.json\` | 5:3 | \`sorce\` | is not a known field |$" summary.md &&
	expect_grep "| \`adapters/engines/broken.json\` | 1:1 | \`source\` | is required |" summary.md
'

test_expect_success 'text: lint problems read as lint prints them' '
	expect_exit 1 warden --repo bench pr-check official pr &&
	expect_grep "^lint adapters/engines/broken.json:5:3: .sorce. is not a known field$" out
'

test_done
