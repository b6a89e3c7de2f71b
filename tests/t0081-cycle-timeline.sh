#!/bin/sh
# t0081: the cycle journal's Timeline says "updated" only for an engine
# whose version moved. A bench of two engines whose versions are what
# their version_argv prints: a second cycle with nothing new says both are
# unchanged, though each update records a manifest again (a new row, a new
# created time); a third, after one engine's version moved, says that one
# is updated and the other unchanged, and its summary names the move.
. "$TOP_SRCDIR/tests/lib.sh"

PATH="$TOP_BUILDDIR:$PATH"
export PATH

# update_line CYCLE: the Timeline's update row of the cycle's journal.
update_line() {
	git show "official:journals/$1.md" | sed -n "s/^| [^|]* | 1 | update | done | \(.*\) |$/\1/p"
}

test_expect_success 'setup: a bench of two engines, each versioned by a file' '
	warden init bench >/dev/null && cd bench &&
	echo 1.0 >"$TEST_DIR/still.version" &&
	echo 1.0 >"$TEST_DIR/moving.version" &&
	git checkout -q official &&
	python3 - "$TEST_DIR" <<-PY &&
	import json, sys
	t = sys.argv[1]
	a = json.load(open("adapters/engines/example-sim.json"))
	for name in ("still", "moving"):
	    a["name"] = name
	    a["source"] = {"kind": "none",
	                   "version_argv": ["cat", "%s/%s.version" % (t, name)]}
	    json.dump(a, open("adapters/engines/%s.json" % name, "w"), indent=2)
	p = json.load(open("adapters/profiles/qwen3-0.6b.json"))
	for name in ("still", "moving"):
	    p["engines"][name] = p["engines"]["example-sim"]
	json.dump(p, open("adapters/profiles/qwen3-0.6b.json", "w"), indent=2)
	p = json.load(open("policy/warden.json"))
	p["rosters"][p["default_roster"]] = ["still", "moving"]
	p["cycle"]["fidelity"] = False
	p["cycle"]["publish"] = False
	# only the update step is asserted: a small campaign
	p["cycle"]["limit"] = 2
	p["campaign"]["concurrency"] = [1]
	json.dump(p, open("policy/warden.json", "w"), indent=2)
	PY
	git add -A && git commit -q -m "two engines" &&
	git checkout -q --detach official &&
	warden journal adopt official >/dev/null &&
	warden lint 2>/dev/null
'

test_expect_success 'the first cycle installs both' '
	cd bench &&
	expect_exit 0 warden cycle --id c1 &&
	test "$(update_line c1)" = "still updated, moving updated"
'

test_expect_success 'nothing new: the second cycle says both are unchanged' '
	cd bench &&
	expect_exit 0 warden cycle --id c2 &&
	test "$(update_line c2)" = "still unchanged, moving unchanged" &&
	expect_grep "^changed:   nothing$" out &&
	test "$(sqlite3 .warden/warden.db "select count(*) from update_manifests where engine = '"'"'still'"'"'")" = 2 &&
	test "$(sqlite3 .warden/warden.db "select count(distinct sha256) from update_manifests where engine = '"'"'still'"'"'")" = 1
'

test_expect_success 'one engine moved: updated, the other unchanged' '
	cd bench &&
	echo 1.1 >"$TEST_DIR/moving.version" &&
	expect_exit 0 warden cycle --id c3 &&
	test "$(update_line c3)" = "still unchanged, moving updated" &&
	expect_grep "^changed:   moving 1.0 -> 1.1: moving$" out
'

test_done
