#!/bin/sh
# runner/ keeps its shape: its folders include each other in one
# direction, never the commands' headers at its top, and base/'s modules
# too. The checker (tests/check-layout.py) is shown to find a cycle and a
# folder that includes a command's header, each made on purpose in a copy
# of the tree.
. "$TOP_SRCDIR/tests/lib.sh"

CHECK="python3 $TOP_SRCDIR/tests/check-layout.py"

# A writable copy of what the checker reads: the sources of runner/ and
# allowlist/, Makefile.am and the fragments it includes.
copy_tree() {
	mkdir -p "$1/tests/simengine" &&
	cp -R "$TOP_SRCDIR/Makefile.am" "$TOP_SRCDIR/runner" \
	    "$TOP_SRCDIR/allowlist" "$1/" &&
	cp "$TOP_SRCDIR/tests/simengine/Makefile.inc" "$1/tests/simengine/" &&
	chmod -R u+w "$1"
}

test_expect_success 'the folders of runner/ include each other in one direction' '
	$CHECK includes "$TOP_SRCDIR"
'

test_expect_success 'a cycle between two folders is found, with the includes that make it' '
	copy_tree tree &&
	echo "#include \"campaign.h\"" >>tree/runner/store/store.c &&
	expect_exit 1 $CHECK includes tree &&
	expect_grep "^folders include each other: runner/campaign -> runner/store -> runner/campaign$" out &&
	expect_grep "runner/store -> runner/campaign: runner/store/store.c includes \"campaign.h\"" out
'

test_expect_success 'a cycle between modules of runner/base/ is found' '
	rm -rf tree && copy_tree tree &&
	echo "#include \"util.h\"" >>tree/runner/base/buf.c &&
	expect_exit 1 $CHECK includes tree &&
	expect_grep "^modules of runner/base/ include each other: runner/base/buf -> runner/base/util -> runner/base/buf$" out
'

test_expect_success 'a folder that includes a header of the commands is named' '
	rm -rf tree && copy_tree tree &&
	echo "#include \"output.h\"" >>tree/runner/engine/engine.c &&
	expect_exit 1 $CHECK includes tree &&
	expect_grep "^runner/engine/engine.c: includes \"output.h\" of runner/.s top" out
'

test_done
