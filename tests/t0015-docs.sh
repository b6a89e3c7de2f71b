#!/bin/sh
# The documentation is true: every man page formats without a groff
# warning; every command is in README's table (under the task warden help
# gives it), in `warden help` (in exactly one group, with examples that
# run it with options it has) and has its own page, warden-CMD(1), whose
# SYNOPSIS is its usage, built, installed and distributed; warden(1) lists
# every page; the exit-code table is the same in README, warden(1) and
# `warden help`; README and doc/ name no file outside the repository; the
# man pages carry the schemas, outcomes, codes and fields the docs show;
# README stays a front door (a line budget, prose within 120 columns); the
# package has a licence and a bug-report address.
. "$TOP_SRCDIR/tests/lib.sh"

CHECK="python3 $TOP_SRCDIR/tests/check-docs.py"

# The built page: in the build tree, or distributed in the source tree.
page() {
	if [ -f "$TOP_BUILDDIR/doc/$1" ]; then
		echo "$TOP_BUILDDIR/doc/$1"
	else
		echo "$TOP_SRCDIR/doc/$1"
	fi
}

HAVE_GROFF=no
command -v groff >/dev/null 2>&1 && HAVE_GROFF=yes

test_expect_success_if $HAVE_GROFF 'groff -ww -man prints no warning for any page' '
	for p in warden.1 warden-simengine.1 $(warden help | sed -n "s/^  \([a-z][a-z-]*\) .*/warden-\1.1/p"); do
		f=$(page $p) && test -s "$f" || { echo "no $p"; exit 1; }
		groff -ww -man -z "$f" 2>w1 &&
		groff -t -ww -man -z "$f" 2>w2 &&
		groff -t -ww -man -Tutf8 "$f" >/dev/null 2>w3 &&
		cat w1 w2 w3 >warnings &&
		if test -s warnings; then echo "$p:"; cat warnings; exit 1; fi
	done
'

test_expect_success 'every command is in README, warden help and warden(1), with a page of its own' '
	warden help --json >help.json &&
	$CHECK commands "$TOP_SRCDIR" help.json
'

test_expect_success 'every page is built, installed and distributed' '
	warden help --json >help.json &&
	$CHECK makefile "$TOP_SRCDIR" help.json
'

test_expect_success 'the exit-code table agrees in README, warden(1) and warden help' '
	warden help --json >help.json &&
	warden help >help.txt &&
	$CHECK exits "$TOP_SRCDIR" help.json help.txt
'

test_expect_success 'every command help ends with the exit codes and the manual' '
	for c in $(warden help | sed -n "s/^  \([a-z][a-z-]*\) .*/\1/p"); do
		warden help $c >out &&
		expect_grep "Exit status: 0 ok" out &&
		expect_grep "^Manual: warden-$c(1); every exit code.s cases: warden(1)\.$" out ||
		{ echo "in: $c"; exit 1; }
	done
'

test_expect_success 'a command help names the exit codes its page names, no more' '
	for c in $(warden help | sed -n "s/^  \([a-z][a-z-]*\) .*/\1/p"); do
		man=$(sed -n "/^# EXIT STATUS/,/^# [A-Z]/p" "$TOP_SRCDIR/doc/warden-$c.1.md" |
		    grep -o "\*\*[0-9]\*\*" | tr -d "*" | sort -u | tr "\n" " ") &&
		warden help $c >raw &&
		help=$(unwrap raw | sed -n "s/^Exit status: //p" |
		    tr "," "\n" | sed -n "s/^ *\([0-9]\) .*/\1/p" | sort -u | tr "\n" " ") &&
		test -n "$man" &&
		test "$man" = "$help" || { echo "$c: page [$man] help [$help]"; exit 1; }
	done
'

test_expect_success 'warden help groups every command by task, in text and --json' '
	warden help --json >help.json &&
	warden help >help.txt &&
	$CHECK help help.json help.txt
'

test_expect_success 'README and doc/ name no file outside the repository' '
	$CHECK refs "$TOP_SRCDIR"
'

test_expect_success 'warden(1) carries the schemas, outcomes, codes and fields the docs show' '
	$CHECK fields "$TOP_SRCDIR"
'

test_expect_success 'README is a front door: under its line budget, its prose within 120 columns' '
	$CHECK readme "$TOP_SRCDIR"
'

test_expect_success 'LICENSE is the ISC licence of the warden authors, distributed' '
	expect_grep "^ISC License" "$TOP_SRCDIR/LICENSE" &&
	expect_grep "Copyright (c) 2026 the warden authors" "$TOP_SRCDIR/LICENSE" &&
	expect_grep "^Permission to use, copy, modify, and/or distribute" "$TOP_SRCDIR/LICENSE" &&
	expect_grep "^EXTRA_DIST = .*LICENSE" "$TOP_SRCDIR/Makefile.am"
'

test_expect_success 'configure has a bug-report address, and warden help prints it' '
	addr=$(sed -n "s/^#define PACKAGE_BUGREPORT \"\(.*\)\"$/\1/p" "$TOP_BUILDDIR/config.h") &&
	test -n "$addr" &&
	warden help >out &&
	expect_grep "Report bugs to $addr" out &&
	expect_grep "$addr" "$TOP_SRCDIR/README.md" &&
	expect_grep "$addr" "$TOP_SRCDIR/doc/warden.1.md"
'

test_expect_success_if $HAVE_GROFF 'the rendered pages keep every identifier as the program reads it' '
	for p in warden.1 $(warden help | sed -n "s/^  \([a-z][a-z-]*\) .*/warden-\1.1/p"); do
		f=$(page $p) && test -s "$f" || { echo "no $p"; exit 1; }
		LC_ALL=C.UTF-8 MANWIDTH=2000 groff -man -Tutf8 -P-cbou "$f" \
		    2>/dev/null >"$p.txt" &&
		python3 "$TOP_SRCDIR/tests/check-man-words.py" \
		    "$TOP_SRCDIR/doc/$p.md" "$p.txt" || exit 1
	done
'

test_done
