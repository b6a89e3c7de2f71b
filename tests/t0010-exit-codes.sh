#!/bin/sh
# Every row of the exit-code table (README "Exit codes", warden(1) EXIT
# STATUS, `warden help`), each with the cases the table names: 0 ok,
# 1 a problem found, 2 usage or input error, 3 environment error. Every
# failure prints exactly one "warden: " message on stderr.
. "$TOP_SRCDIR/tests/lib.sh"

# one_error: stderr (./err) holds exactly one "warden: " line.
one_error() {
	n=$(grep -c "^warden: " err || true)
	if [ "$n" -ne 1 ]; then
		echo "expected one 'warden: ' line in stderr, got $n:"
		cat err
		return 1
	fi
}

test_expect_success 'setup: a repository, a clean and a refused patch' '
	make_bench_repo bench &&
	sed "s/\"notes\": \"/\"notes\": \"Edited. /" \
	    bench/adapters/engines/example-sim.json >a.tmp &&
	cp a.tmp bench/adapters/engines/example-sim.json &&
	git -C bench diff >clean.patch &&
	git -C bench checkout -q -- . &&
	echo "{}" >>bench/policy/warden.json &&
	git -C bench diff >outside.patch &&
	git -C bench checkout -q -- . &&
	test -s clean.patch && test -s outside.patch
'

# ---- 0: ok ----

test_expect_success '0: help, version, lint, journal, patch check of a clean patch' '
	expect_exit 0 warden help &&
	expect_exit 0 warden version &&
	expect_exit 0 warden --repo bench lint &&
	expect_exit 0 warden --repo bench journal show &&
	expect_exit 0 warden --repo bench journal verify &&
	expect_exit 0 warden --repo bench patch check clean.patch &&
	expect_exit 0 warden --repo bench review list &&
	expect_exit 0 warden --repo bench pr-check official official
'

# ---- 1: the command ran and found a problem ----

test_expect_success '1: lint found schema problems in a file it could parse' '
	cp -r bench b1 &&
	sed "s/\"completion_min\": 90/\"completion_min\": \"90\"/" \
	    b1/policy/warden.json >p.tmp && mv p.tmp b1/policy/warden.json &&
	expect_exit 1 warden --repo b1 lint &&
	expect_grep "completion_min" out
'

test_expect_success '1: a broken journal' '
	cp -r bench b2 &&
	warden --repo b2 journal note "one" >/dev/null &&
	sqlite3 b2/.warden/warden.db "DROP TRIGGER journal_no_update;
		UPDATE journal SET subject = \"x\" WHERE seq = 2" &&
	expect_exit 1 warden --repo b2 journal verify && one_error
'

test_expect_success '1: a failed gate (patch check, pr-check)' '
	expect_exit 1 warden --repo bench patch check outside.patch && one_error &&
	git -C bench checkout -q -b pr official &&
	echo "{}" >>bench/policy/warden.json &&
	git -C bench commit -q -am "touch the policy" &&
	git -C bench checkout -q - &&
	expect_exit 1 warden --repo bench pr-check official pr && one_error
'

test_expect_success '1: a refused patch submission' '
	expect_exit 1 warden --repo bench patch submit outside.patch \
	    --source community && one_error &&
	expect_grep "not queued" err
'

# ---- 2: usage or input error ----

test_expect_success '2: an unknown command, option or subcommand' '
	expect_exit 2 warden frobnicate && one_error &&
	expect_exit 2 warden --frobnicate version && one_error &&
	expect_exit 2 warden version --frobnicate && one_error &&
	expect_exit 2 warden --repo bench journal frob && one_error
'

test_expect_success '2: an option without its value' '
	expect_exit 2 warden --repo && one_error &&
	expect_exit 2 warden --repo bench journal show --since && one_error
'

test_expect_success '2: a bad filter value' '
	expect_exit 2 warden --repo bench journal show --since yesterday &&
	one_error && expect_grep "yesterday" err &&
	expect_exit 2 warden --repo bench review list --status nope && one_error
'

test_expect_success '2: lint of a file that is not valid JSON' '
	cp -r bench b3 &&
	printf "{\n  \"schema\": 1,\n}\n" >b3/adapters/profiles/qwen3-0.6b.json &&
	expect_exit 2 warden --repo b3 lint &&
	expect_grep "^adapters/profiles/qwen3-0.6b.json:3:1: invalid JSON" out
'

test_expect_success '2: lint of a file that does not exist or cannot be read' '
	expect_exit 2 warden --repo bench lint nosuch.json &&
	expect_grep "^nosuch.json: cannot be read" out &&
	mkdir -p d/adapters/engines/dir.json &&
	expect_exit 2 warden --repo bench lint d/adapters/engines/dir.json &&
	expect_grep "^d/adapters/engines/dir.json: cannot be read" out
'

test_expect_success '2: lint of a file that is no policy, adapter, profile or workload' '
	echo "{}" >stray.json &&
	expect_exit 2 warden --repo bench lint stray.json &&
	expect_grep "is not a policy, adapter, profile or workload" out
'

test_expect_success '2 wins over 1: lint lists every problem, exits 2 if any file is unparseable' '
	cp -r b1 b4 &&
	echo "{" >b4/adapters/profiles/qwen3-0.6b.json &&
	expect_exit 2 warden --repo b4 lint &&
	expect_grep "completion_min" out &&
	expect_grep "^adapters/profiles/qwen3-0.6b.json:2: invalid JSON" out
'

test_expect_success '2: a command that needs a policy that fails its schema' '
	expect_exit 2 warden --repo b1 campaign --limit 1 && one_error &&
	expect_grep "completion_min" err
'

test_expect_success '0: patch check reads the official branch policy, not the broken working tree' '
	expect_exit 0 warden --repo b1 patch check clean.patch
'

test_expect_success '2: a malformed patch' '
	echo "this is not a patch" >garbage.patch &&
	expect_exit 2 warden --repo bench patch check garbage.patch && one_error
'

test_expect_success '2: an input file that cannot be read' '
	expect_exit 2 warden --repo bench patch check nosuch.patch && one_error
'

test_expect_success '2: a --repo (or $WARDEN_REPO) that does not exist or holds no repository' '
	expect_exit 2 warden --repo "$TEST_DIR/nowhere" journal show && one_error &&
	mkdir -p plain &&
	GIT_CEILING_DIRECTORIES=$TEST_DIR expect_exit 2 warden --repo "$TEST_DIR/plain" journal show &&
	one_error &&
	WARDEN_REPO=$TEST_DIR/nowhere expect_exit 2 warden journal show && one_error
'

test_expect_success '2: a revision that does not resolve' '
	expect_exit 2 warden --repo bench patch check --base nosuch clean.patch &&
	one_error && expect_grep "nosuch" err &&
	expect_exit 2 warden --repo bench pr-check official nosuch && one_error &&
	expect_exit 2 warden --repo bench pr-check nosuch official && one_error
'

test_expect_success '2: a review number that names no review' '
	expect_exit 2 warden --repo bench review show 99 && one_error &&
	expect_exit 2 warden --repo bench review show x && one_error
'

# ---- 3: environment error ----

test_expect_success '3: no repository around the current directory' '
	mkdir -p lonely && cd lonely &&
	GIT_CEILING_DIRECTORIES=$TEST_DIR expect_exit 3 warden journal show &&
	one_error && expect_grep "not in a benchmark repository" err
'

test_expect_success '3: the database locked past the busy timeout' '
	hold_lock bench holder &&
	cd bench &&
	WARDEN_BUSY_TIMEOUT_MS=300 expect_exit 3 warden journal note "waiter" &&
	one_error && release_lock
'

test_expect_success_if "$(test -w /dev/full && echo yes)" '3: an I/O failure writing the output' '
	_got=0; warden version >/dev/full 2>err || _got=$?
	test "$_got" = 3 && one_error &&
	expect_grep "standard output" err
'

test_done
