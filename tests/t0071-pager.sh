#!/bin/sh
# t0071: `journal show` goes through a pager when standard output is a
# terminal, git's way: $WARDEN_PAGER, else $PAGER, else less, with
# LESS=FRX when LESS is unset; never into a pipe, with --json or
# --no-pager; a pager that cannot be run is no pager. The terminal is
# script(1)'s pseudo-terminal; the pager a script that records its call.
. "$TOP_SRCDIR/tests/lib.sh"

have_script=no
if script -qec true /dev/null >/dev/null 2>&1; then
	have_script=yes
fi

# A pager that notes its name and LESS, then copies its input.
cat >"$TEST_DIR/pager" <<'EOF'
#!/bin/sh
echo "${1:-pager} LESS=${LESS-unset}" >>"$TEST_DIR/paged"
cat >"$TEST_DIR/paged.out"
EOF
chmod +x "$TEST_DIR/pager"

# on_tty CMD: run CMD with stdout and stderr on a pseudo-terminal.
on_tty() {
	script -qec "$*" /dev/null >tty.out 2>&1
}

test_expect_success 'a bench with a note' '
	warden init bench >/dev/null &&
	warden --repo bench journal note "paged note" >/dev/null
'

test_expect_success_if "$have_script" 'on a terminal: $PAGER, with LESS=FRX' '
	rm -f paged && { unset LESS WARDEN_PAGER 2>/dev/null || :; } &&
	PAGER="$TEST_DIR/pager" on_tty "$WARDEN" --repo bench journal show &&
	test "$(cat paged)" = "pager LESS=FRX" &&
	expect_grep "paged note" paged.out &&
	expect_grep "repo.init" paged.out
'

test_expect_success_if "$have_script" '$WARDEN_PAGER before $PAGER, a set LESS kept' '
	rm -f paged &&
	WARDEN_PAGER="$TEST_DIR/pager first" PAGER="$TEST_DIR/pager second" \
	    LESS=S on_tty "$WARDEN" --repo bench journal show &&
	test "$(cat paged)" = "first LESS=S"
'

test_expect_success_if "$have_script" 'no pager into a pipe, with --json, --no-pager, or PAGER=cat' '
	rm -f paged &&
	PAGER="$TEST_DIR/pager" warden --repo bench journal show >out &&
	expect_grep "paged note" out &&
	PAGER="$TEST_DIR/pager" on_tty "$WARDEN" --repo bench --json journal show &&
	expect_grep "paged note" tty.out &&
	PAGER="$TEST_DIR/pager" on_tty "$WARDEN" --no-pager --repo bench journal show &&
	expect_grep "paged note" tty.out &&
	PAGER="$TEST_DIR/pager" on_tty "$WARDEN" --repo bench journal show --no-pager &&
	expect_grep "paged note" tty.out &&
	PAGER=cat on_tty "$WARDEN" --repo bench journal show &&
	expect_grep "paged note" tty.out &&
	test ! -e paged
'

test_expect_success_if "$have_script" 'a pager that cannot run is no pager' '
	PAGER="$TEST_DIR/no-such-pager" on_tty "$WARDEN" --repo bench journal show &&
	expect_grep "paged note" tty.out
'

test_done
