#!/bin/sh
# The documentation is shaped for its reader: doc/README.md, the index,
# links every page of doc/; no page (README, doc/, the man page sources,
# the folders' READMEs) names an internal issue or task, or tells the
# reader of a man page to edit its source; warden(1), the one reference
# of the policy, adapters and profiles, names every field the
# repository's own files use; no paragraph of a rendered man page's
# DESCRIPTION runs past 25 lines (it is split into paragraphs, lists and
# sections, as OpenBSD's and git's pages are).
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

test_expect_success 'doc/README.md links every page of doc/' '
	$CHECK index "$TOP_SRCDIR"
'

test_expect_success 'the index check names a page the index lacks' '
	mkdir -p src/doc &&
	cp "$TOP_SRCDIR/doc/README.md" "$TOP_SRCDIR"/doc/*.md src/doc/ &&
	echo "# New" >src/doc/new-page.md &&
	expect_exit 1 $CHECK index src &&
	expect_grep "does not link doc/new-page.md" out
'

test_expect_success 'no page says how warden is developed' '
	$CHECK internal "$TOP_SRCDIR"
'

test_expect_success 'the check finds an issue number, the issue and an edit-the-Markdown' '
	mkdir -p int/doc int/runner &&
	cp "$TOP_SRCDIR/README.md" int/ &&
	printf "# x\n\nAs issue 20 asks.\n" >int/doc/a.md &&
	printf "# x\n\nThe issue'"'"'s order.\n" >int/doc/b.md &&
	printf "# NAME\n\nThis page: edit the Markdown.\n" >int/doc/warden-x.1.md &&
	expect_exit 1 $CHECK internal int &&
	expect_grep "doc/a.md:3: .issue 20." out &&
	expect_grep "doc/b.md:3: .The issue.s." out &&
	expect_grep "doc/warden-x.1.md:3: .edit the Markdown." out
'

test_expect_success 'warden(1) names every field of the policy, the adapters and the profiles' '
	$CHECK keys "$TOP_SRCDIR"
'

test_expect_success 'the field check names a field warden(1) lacks' '
	mkdir -p keys/doc keys/policy keys/adapters/engines keys/adapters/profiles &&
	cp "$TOP_SRCDIR/doc/warden.1.md" keys/doc/ &&
	printf "{\"schema\": 1, \"caps\": {\"made_up_cap\": 1}}\n" >keys/policy/warden.json &&
	printf "{\"name\": \"x\", \"serve\": {\"env\": {\"ANY_NAME\": \"1\"}}}\n" >keys/adapters/engines/x.json &&
	expect_exit 1 $CHECK keys keys &&
	expect_grep "policy/warden.json uses .made_up_cap.; warden(1) POLICY does not name it" out &&
	expect_no_grep "ANY_NAME" out
'

test_expect_success_if $HAVE_GROFF 'no DESCRIPTION paragraph of a rendered page runs past 25 lines' '
	for p in warden.1 warden-simengine.1 $(warden help | sed -n "s/^  \([a-z][a-z-]*\) .*/warden-\1.1/p"); do
		f=$(page $p) && test -s "$f" || { echo "no $p"; exit 1; }
		LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou "$f" 2>/dev/null >"$p.txt" ||
		exit 1
	done &&
	$CHECK paragraphs *.1.txt
'

test_expect_success_if $HAVE_GROFF 'the paragraph check counts a long one, and each list item apart' '
	mkdir -p long && cd long &&
	{ printf "DESCRIPTION\n"; i=0; while [ $i -lt 26 ]; do
		printf "       line %d of one paragraph\n" $i; i=$((i + 1)); done;
	  printf "\nOPTIONS\n"; } >long.1.txt &&
	expect_exit 1 $CHECK paragraphs long.1.txt &&
	expect_grep "long.1.txt:2: a DESCRIPTION paragraph of 26 lines" out &&
	{ printf "DESCRIPTION\n"; i=0; while [ $i -lt 26 ]; do
		printf "       \342\200\242 item %d of a list\n" $i; i=$((i + 1)); done;
	  printf "\nOPTIONS\n"; } >list.1.txt &&
	expect_exit 0 $CHECK paragraphs list.1.txt
'

test_done
