#!/bin/sh
# Text that is not UTF-8 (from the command line or the environment) is an
# input error, exit 2, naming the argument, before anything changes: no
# journal entry with an empty body, no abort, no ref moved, no row.
. "$TOP_SRCDIR/tests/lib.sh"

BAD_AS=$(printf 'M\377 <m@example.org>')
BAD=$(printf 'caf\303\050')

# snapshot NAME: what must not change, in NAME.*
snapshot() {
	git -C bench for-each-ref --format='%(refname) %(objectname)' >"$1.refs" &&
	sqlite3 bench/.warden/warden.db "SELECT seq, kind, body FROM journal ORDER BY seq;
	    SELECT id, status FROM reviews ORDER BY id" >"$1.db"
}

unchanged() {
	snapshot after && expect_equal before.refs after.refs &&
	expect_equal before.db after.db
}

test_expect_success 'setup: a repository with a queued change' '
	make_bench_repo bench &&
	mkdir -p bench/adapters/engines &&
	echo "{\"name\": \"e1\"}" >bench/adapters/engines/e1.json &&
	git -C bench add -A && git -C bench diff --cached >p1.patch &&
	git -C bench reset -q --hard &&
	warden --repo bench patch submit p1.patch --source agent >/dev/null &&
	snapshot before
'

test_expect_success 'review approve --as that is not UTF-8: exit 2, official not moved' '
	expect_exit 2 warden --repo bench review approve 1 --as "$BAD_AS" &&
	expect_grep "^warden: .--as. is not valid UTF-8 text$" err &&
	unchanged
'

test_expect_success 'review approve --comment that is not UTF-8: exit 2' '
	expect_exit 2 warden --repo bench review approve 1 --as "M <m@example.org>" \
	    --comment "$BAD" &&
	expect_grep "^warden: .--comment. is not valid UTF-8 text$" err &&
	unchanged
'

test_expect_success 'review reject --reason or --as that is not UTF-8: exit 2' '
	expect_exit 2 warden --repo bench review reject 1 --reason "$BAD" &&
	expect_grep "^warden: .--reason. is not valid UTF-8 text$" err &&
	expect_exit 2 warden --repo bench review reject 1 --reason no --as "$BAD_AS" &&
	expect_grep "^warden: .--as. is not valid UTF-8 text$" err &&
	unchanged
'

test_expect_success 'patch submit --author or --note that is not UTF-8: exit 2, nothing queued' '
	expect_exit 2 warden --repo bench patch submit p1.patch --source agent \
	    --author "$BAD_AS" &&
	expect_grep "^warden: .--author. is not valid UTF-8 text$" err &&
	expect_exit 2 warden --repo bench patch submit p1.patch --source agent \
	    --note "$BAD" &&
	expect_grep "^warden: .--note. is not valid UTF-8 text$" err &&
	unchanged
'

test_expect_success 'a patch that is not UTF-8 text is not queued' '
	sed "s/e1/$(printf "\377")/" p1.patch >latin.patch &&
	expect_exit 2 warden --repo bench patch submit latin.patch --source agent &&
	expect_grep "the patch is not valid UTF-8 text" err &&
	unchanged
'

test_expect_success 'a path that is not UTF-8 is reported, not dropped from --json' '
	mkdir -p bench/adapters/engines &&
	echo "{}" >"bench/adapters/engines/x$(printf "\377").json" &&
	git -C bench add -A && git -C bench diff --cached >badpath.patch &&
	git -C bench reset -q --hard && git -C bench clean -fdq &&
	expect_exit 1 warden --repo bench --json patch check badpath.patch &&
	python3 -c "
import json
d = json.load(open(\"out\"))
assert not d[\"ok\"], d
v = d[\"violations\"]
assert len(v) == 1 and v[0][\"code\"] == \"bad-path\", v
assert v[0][\"path\"] == \"adapters/engines/x\ufffd.json\", v
assert d[\"files\"][0][\"new_path\"] == v[0][\"path\"], d
" &&
	expect_exit 1 warden --repo bench patch submit badpath.patch --source community &&
	warden --repo bench journal show --kind review.refused --full >j &&
	expect_grep "bad-path" j &&
	snapshot before
'

test_expect_success 'journal note --subject that is not UTF-8: exit 2, not an abort' '
	expect_exit 2 warden --repo bench journal note --subject "$(printf "\303\050")" x &&
	expect_grep "^warden: .--subject. is not valid UTF-8 text$" err &&
	expect_exit 2 warden --repo bench journal note "$BAD" &&
	expect_grep "^warden: .TEXT. is not valid UTF-8 text$" err &&
	unchanged
'

test_expect_success 'WARDEN_CYCLE that is not UTF-8: exit 2' '
	expect_exit 2 env WARDEN_CYCLE="$BAD" "$WARDEN" --repo bench journal note x &&
	expect_grep "^warden: .WARDEN_CYCLE. is not valid UTF-8 text$" err &&
	unchanged
'

test_expect_success 'init DIR that is not UTF-8: exit 2, nothing made' '
	expect_exit 2 warden init "$BAD" &&
	expect_grep "^warden: .DIR. is not valid UTF-8 text$" err &&
	test ! -e "$BAD"
'

test_expect_success 'valid UTF-8 is kept whole in the journal' '
	expect_exit 0 warden --repo bench review approve 1 \
	    --as "Mælström Ünïcode <m@example.org>" --comment "ça va" &&
	warden --repo bench --json journal show --kind review.approved >j &&
	python3 -c "
import json
e = json.load(open(\"j\"))[0]
b = e[\"body\"]
assert b[\"by\"] == \"Mælström Ünïcode <m@example.org>\", b
assert b[\"comment\"] == \"ça va\", b
assert b[\"id\"] == 1 and len(b[\"commit\"]) == 40, b
" &&
	warden --repo bench journal verify
'

test_done
