#!/bin/sh
# The command line: help, version, usage errors and exit codes.
. "$TOP_SRCDIR/tests/lib.sh"

test_expect_success 'warden help lists every command' '
	warden help >out &&
	for c in help version init lint journal; do
		expect_grep "^  $c " out
	done
'

test_expect_success 'every command answers --help with its synopsis' '
	for c in $(warden help | sed -n "s/^  \([a-z][a-z-]*\) .*/\1/p"); do
		warden $c --help >out &&
		expect_grep "^usage: warden $c" out || exit 1
	done
'

test_expect_success 'warden help COMMAND equals COMMAND --help' '
	warden help journal >a &&
	warden journal --help >b &&
	expect_equal a b
'

test_expect_success '--version names warden and the five libraries' '
	warden --version >out &&
	expect_grep "^warden [0-9]" out &&
	for lib in libgit2 libcurl jansson libarchive sqlite3; do
		expect_grep "^$lib" out || exit 1
	done
'

test_expect_success '--json version is a JSON document' '
	warden --json version >out &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); assert d[\"libraries\"][\"sqlite3\"]"
'

test_expect_success 'an unknown command exits 2 and says so' '
	expect_exit 2 warden frobnicate &&
	expect_grep "frobnicate.* is not a warden command" err
'

test_expect_success 'no command prints the overview and exits 2' '
	expect_exit 2 warden &&
	expect_grep "^usage: warden" err
'

test_expect_success 'a bad subcommand prints the usage and exits 2' '
	expect_exit 2 warden journal nope &&
	expect_grep "unknown journal subcommand" err &&
	expect_grep "usage: warden journal show" err
'

test_expect_success 'outside any repository a command exits 3' '
	mkdir -p lonely && cd lonely &&
	GIT_CEILING_DIRECTORIES=$TEST_DIR expect_exit 3 warden journal show &&
	expect_grep "not in a benchmark repository" err
'

test_expect_success '--repo pointing at nothing exits 2' '
	expect_exit 2 warden --repo "$TEST_DIR/nowhere" journal show &&
	expect_grep "is not a directory" err
'

test_done
