#!/bin/sh
# runner/ keeps its shape (runner/README.md): its folders include each
# other in one direction, never the commands' headers at its top, and
# base/'s modules too; each folder's README.md says what it owns and what
# it must never do, runner/README.md lists them in include order. The
# checker (tests/check-layout.py) is shown to find a cycle, a folder that
# includes a command's header, a folder without its README and a map out
# of order, each made on purpose in a copy of the tree.
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

test_expect_success 'each folder of runner/ says what it owns and what it must never do' '
	$CHECK readmes "$TOP_SRCDIR"
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

test_expect_success 'a folder without its README, or a README without Never:, is named' '
	rm -rf tree && copy_tree tree &&
	rm tree/runner/engine/README.md &&
	grep -v "Never:" tree/runner/store/README.md >readme &&
	cp readme tree/runner/store/README.md &&
	expect_exit 1 $CHECK readmes tree &&
	expect_grep "^runner/engine/README.md: missing" out &&
	expect_grep "^runner/store/README.md: no .Never:. part" out
'

test_expect_success 'runner/README.md listing a folder above one it includes is named' '
	rm -rf tree && copy_tree tree &&
	grep -v "^| .base/. |" tree/runner/README.md >map &&
	grep "^| .base/. |" tree/runner/README.md >>map &&
	cp map tree/runner/README.md &&
	expect_exit 1 $CHECK readmes tree &&
	expect_grep "^runner/README.md: policy/ includes base/ (.*), listed below it$" out
'

test_done
