#!/bin/sh
# Every test body keeps its && chain whole (tests/check-chains.py): a
# statement a body goes on from with a newline or ";" ends the chain,
# and set -e ignores a failure before a chain's end, so a check there
# could fail unseen; and "a && b &" sends a to the background with b.
# The checker is shown to find each and to allow a loop's "|| exit 1", a
# background process and an explicit stop.
. "$TOP_SRCDIR/tests/lib.sh"

CHECK="python3 $TOP_SRCDIR/tests/check-chains.py"

# body FILE LINE...: FILE holds one test whose body is the LINEs.
body() {
	_f=$1
	shift
	{
		printf "test_expect_success \047t\047 \047\n"
		for _l in "$@"; do
			printf "\t%s\n" "$_l"
		done
		printf "\047\n"
	} >"$_f"
}

test_expect_success 'no test body ends its && chain early' '
	$CHECK "$TOP_SRCDIR"/tests/t*.sh
'

test_expect_success 'the check names a chain that a newline or ";" ends' '
	body nl.sh "false" "true" &&
	expect_exit 1 $CHECK nl.sh &&
	expect_grep "nl.sh: in the test at line 2: the && chain ends after .false." out &&
	body semi.sh "test -e x &&" "n=0; while [ \$n -lt 3 ]; do n=\$((n + 1)); done &&" "true" &&
	expect_exit 1 $CHECK semi.sh &&
	expect_grep "a .;. ends the && chain in .n=0; while" out &&
	body heredoc.sh "python3 - <<-PY" "	assert False" "	PY" "true" &&
	expect_exit 1 $CHECK heredoc.sh &&
	expect_grep "ends after .python3 - <<-PY." out &&
	body bg.sh "rm -f stream &&" "chat >stream &" "true" &&
	expect_exit 1 $CHECK bg.sh &&
	expect_grep "sends its whole && chain to the background, at .chat >stream &." out
'

test_expect_success 'the check allows loops, a background process and an explicit stop' '
	body ok.sh "(cd / && sleep 1) &" "{ sleep 1 & } &&" "pid=\$! &&" \
	    "for i in 1 2; do" "	test \$i -gt 0 || exit 1" "done &&" \
	    "test -n \"\$pid\" || { echo none; exit 1; }" \
	    "case x in" "x) ;;" "*) exit 1 ;;" "esac" &&
	expect_exit 0 $CHECK ok.sh
'

test_done
