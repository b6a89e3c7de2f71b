#!/bin/sh
# t4008: `warden update ENGINE...` keeps a policy group whole. ga and gb
# share `shared` in the group `core`, gc holds only `other`; all three are
# in the default roster. `warden update ga` brings gb into the run (it
# says so, in text and in --json, dry run alike), moves `shared` in both
# (dist-info on disk, `warden versions`), and leaves gc alone; a joined
# engine that fails puts ga back, and an engine of another roster joins
# too, and a cycle's update step records who joined. Installed by the
# substitute pip shim
# (tests/fixtures/update/fake-pip-shim.py; t4005 uses real pip).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

SHIM="$TEST_DIR/shim"
mkdir -p "$SHIM"

index() {
	printf '{"shared": {"versions": %s}, "other": {"versions": %s}, "ga": {"versions": ["1.0"], "deps": ["shared"]}, "gb": {"versions": ["1.0"], "deps": ["shared"]}, "gc": {"versions": ["1.0"], "deps": ["other"]}}\n' \
	    "$1" "$2" >"$SHIM/index.json"
}

# on_disk ENGINE PKG: the versions of PKG whose dist-info is in its venv.
on_disk() {
	(cd "bench/.warden/envs/$1/venv/lib" && ls -d python*/site-packages/"$2"-*.dist-info) |
	    sed "s/.*$2-\(.*\)\.dist-info/\1/" | tr '\n' ' ' | sed 's/ $//'
}

# recorded ENGINE PKG: the version of PKG in its current manifest.
recorded() {
	(cd bench && warden --json versions "$1") | python3 -c '
import json, sys
print(list(json.load(sys.stdin).values())[0]["packages"][sys.argv[1]])' "$2"
}

attempts() {
	sqlite3 bench/.warden/warden.db "select count(*) from update_attempts where engine = '$1'"
}

test_expect_success 'ga and gb share shared in the group core; gc does not' '
	index "[\"1.0\"]" "[\"1.0\"]" &&
	bench_init bench &&
	pip_adapter bench ga ga && pip_adapter bench gb gb && pip_adapter bench gc gc &&
	bench_policy bench update.venv_pip=false \
	    "update.shims={\"pip\": [\"python3\", \"$TOP_SRCDIR/tests/fixtures/update/fake-pip-shim.py\", \"$SHIM\"]}" \
	    "update.groups={\"core\": [\"shared\"]}" &&
	(cd bench && warden lint && expect_exit 0 warden update) &&
	test "$(on_disk ga shared)" = 1.0 && test "$(on_disk gb shared)" = 1.0 &&
	test "$(on_disk gc other)" = 1.0
'

test_expect_success 'update --dry-run ga says gb joins and would move it; nothing changes' '
	index "[\"1.0\", \"2.0\"]" "[\"1.0\", \"2.0\"]" &&
	venv_digest bench/.warden/envs/gb/venv >gb.before &&
	(cd bench && expect_exit 0 warden update --dry-run ga) &&
	expect_grep "^gb joins: policy group .core. (shared, held by ga)$" bench/out &&
	expect_grep "^ga: would_update$" bench/out &&
	expect_grep "^gb: would_update$" bench/out &&
	expect_grep "^  shared 1.0 → 2.0$" bench/out &&
	expect_no_grep "gc" bench/out &&
	venv_digest bench/.warden/envs/gb/venv >gb.after &&
	expect_equal gb.before gb.after &&
	(cd bench && warden --json update --dry-run ga) >dry.json &&
	python3 - dry.json <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["joined"] == [{"engine": "gb", "group": "core", "package": "shared",
	                        "held_by": "ga"}], d["joined"]
	assert sorted(e["engine"] for e in d["engines"]) == ["ga", "gb"], d
	PY
'

test_expect_success 'update ga moves shared in ga and gb, says gb joined, leaves gc' '
	gc_attempts=$(attempts gc) &&
	venv_digest bench/.warden/envs/gc/venv >gc.before &&
	(cd bench && expect_exit 0 warden update ga) &&
	expect_grep "^gb joins: policy group .core. (shared, held by ga)$" bench/out &&
	expect_grep "^ga: updated" bench/out &&
	expect_grep "^gb: updated" bench/out &&
	expect_no_grep "gc" bench/out &&
	test "$(on_disk ga shared)" = 2.0 && test "$(on_disk gb shared)" = 2.0 &&
	test "$(recorded ga shared)" = 2.0 && test "$(recorded gb shared)" = 2.0 &&
	test "$(on_disk gc other)" = 1.0 && test "$(recorded gc other)" = 1.0 &&
	venv_digest bench/.warden/envs/gc/venv >gc.after &&
	expect_equal gc.before gc.after &&
	test "$(attempts gc)" = "$gc_attempts"
'

test_expect_success 'a joined engine that fails puts ga back: the group stays whole' '
	index "[\"1.0\", \"2.0\", \"3.0\"]" "[\"1.0\", \"2.0\"]" &&
	touch "$SHIM/fail-gb" &&
	(cd bench && expect_exit 1 warden update ga) &&
	expect_grep "^gb joins: policy group .core. (shared, held by ga)$" bench/out &&
	expect_grep "^ga: group_rolled_back$" bench/out &&
	expect_grep "^gb: failed$" bench/out &&
	test "$(on_disk ga shared)" = 2.0 && test "$(on_disk gb shared)" = 2.0 &&
	test "$(recorded ga shared)" = 2.0 && test "$(recorded gb shared)" = 2.0 &&
	rm "$SHIM/fail-gb"
'

test_expect_success 'update gc alone brings no engine in' '
	(cd bench && warden --json update gc) >gc.json &&
	python3 - gc.json <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["joined"] == [], d["joined"]
	assert [e["engine"] for e in d["engines"]] == ["gc"], d
	PY
'

test_expect_success 'an engine of another roster joins a run of the default roster' '
	python3 - bench/policy/warden.json <<-PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["rosters"]["test"].remove("gb")
	p["rosters"]["side"] = ["gb"]
	json.dump(p, open(sys.argv[1], "w"), indent=2)
	PY
	(cd bench && warden lint && expect_exit 0 warden update) &&
	expect_grep "^gb joins: policy group .core. (shared, held by ga)$" bench/out &&
	test "$(on_disk ga shared)" = 3.0 && test "$(on_disk gb shared)" = 3.0 &&
	test "$(recorded gb shared)" = 3.0
'

test_expect_success 'a cycle of a roster with ga alone: gb joins its update step, and the journal says why' '
	index "[\"1.0\"]" "[\"1.0\"]" &&
	cycle_bench cb &&
	pip_adapter cb ga ga && pip_adapter cb gb gb &&
	bench_policy cb update.venv_pip=false \
	    "update.shims={\"pip\": [\"python3\", \"$TOP_SRCDIR/tests/fixtures/update/fake-pip-shim.py\", \"$SHIM\"]}" \
	    "update.groups={\"core\": [\"shared\"]}" "rosters.solo=[\"ga\"]" \
	    "campaign.concurrency=[1]" "cycle.fidelity=false" "cycle.publish=false" \
	    "cycle.limit=2" &&
	cycle_commit cb "ga and gb in the group core" &&
	(cd cb && expect_exit 0 warden update) &&
	index "[\"1.0\", \"2.0\"]" "[\"1.0\"]" &&
	(cd cb && WARDEN_CYCLE=c1 warden cycle --roster solo >../cycle.out 2>../cycle.err ||
	 test $? = 1) &&
	sqlite3 cb/.warden/warden.db "select result from cycle_steps where step = '"'"'update'"'"'" >upd.json &&
	python3 - upd.json <<-PY &&
	import json, sys
	r = json.load(open(sys.argv[1]))
	assert r["joined"] == [{"engine": "gb", "group": "core", "package": "shared",
	                        "held_by": "ga"}], r
	assert sorted(e["engine"] for e in r["engines"]) == ["ga", "gb"], r
	PY
	test "$(cd cb/.warden/envs/gb/venv/lib && ls -d python*/site-packages/shared-*.dist-info | sed "s/.*shared-\(.*\)\.dist-info/\1/")" = 2.0 &&
	git -C cb show official:journals/c1.md >c1.md &&
	expect_grep "| update | done | ga updated, gb updated; gb joined for policy group .core. (shared, held by ga) |" c1.md
'

test_expect_success 'the store is sound and every attempt journaled' '
	cd bench &&
	test "$(sqlite3 .warden/warden.db "pragma integrity_check")" = ok &&
	test "$(sqlite3 .warden/warden.db "select count(*) from update_attempts")" = \
	    "$(sqlite3 .warden/warden.db "select count(*) from journal where kind = '"'"'update.engine'"'"'")" &&
	warden journal verify
'

test_done
