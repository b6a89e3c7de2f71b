#!/bin/sh
# t4001: `warden update` with real pip from a local wheel directory
# (--no-index --find-links): three engine packages sharing one dependency
# are installed, upgraded, pinned, held and held back by release age,
# exactly their closure is recorded, --dry-run changes nothing, a policy
# group moves the shared dependency everywhere at once, and
# `warden versions --diff` shows exactly what moved between cycles.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

# closure ENGINE: the recorded packages as "name=version" words.
closure() {
	warden --json versions "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
m = list(d.values())[0]
print(" ".join("%s=%s" % kv for kv in sorted(m["packages"].items())))'
}

test_expect_success 'wheels for a shared dependency and three engines' '
	make_wheel wheels shared 1.0 &&
	for e in enga engb engc; do
		make_wheel wheels $e 1.0 "shared>=1.0" || exit 1
	done &&
	bench_init bench &&
	pip_adapter bench enga enga && pip_adapter bench engb engb &&
	pip_adapter bench engc engc &&
	update_policy bench "$TEST_DIR/wheels" &&
	(cd bench && warden lint)
'

test_expect_success 'update installs each engine and its closure, nothing more' '
	cd bench &&
	WARDEN_CYCLE=c1 expect_exit 0 warden update &&
	expect_grep "^enga: updated (manifest [0-9]*)$" out &&
	expect_grep "^  shared (none) → 1.0$" out &&
	expect_grep "^  engc (none) → 1.0$" out &&
	test "$(closure enga)" = "enga=1.0 shared=1.0" &&
	test "$(closure engc)" = "engc=1.0 shared=1.0" &&
	test -x .warden/envs/enga/venv/bin/python &&
	.warden/envs/enga/venv/bin/python -c "import enga, shared; assert shared.__version__ == \"1.0\""
'

test_expect_success 'a new release: --dry-run says what would move and changes nothing' '
	make_wheel wheels shared 2.0 &&
	cd bench &&
	venv_digest .warden/envs/enga/venv >../venv.before &&
	sqlite3 .warden/warden.db "select count(*) from update_attempts; select count(*) from journal" >../db.before &&
	expect_exit 0 warden update --dry-run &&
	expect_grep "^enga: would_update$" out &&
	expect_grep "^  shared 1.0 → 2.0$" out &&
	test $(grep -c "→" out) = 3 &&
	venv_digest .warden/envs/enga/venv >../venv.after &&
	expect_equal ../venv.before ../venv.after &&
	sqlite3 .warden/warden.db "select count(*) from update_attempts; select count(*) from journal" >../db.after &&
	expect_equal ../db.before ../db.after &&
	test "$(closure enga)" = "enga=1.0 shared=1.0"
'

test_expect_success 'update upgrades the shared dependency in every engine' '
	cd bench &&
	WARDEN_CYCLE=c2 expect_exit 0 warden update &&
	test $(grep -c "^  shared 1.0 → 2.0$" out) = 3 &&
	test "$(closure enga)" = "enga=1.0 shared=2.0" &&
	test "$(closure engb)" = "engb=1.0 shared=2.0" &&
	.warden/envs/engb/venv/bin/python -c "import shared; assert shared.__version__ == \"2.0\""
'

test_expect_success 'versions --diff between two cycles shows exactly what moved' '
	cd bench &&
	expect_exit 0 warden versions --diff c1 c2 &&
	expect_grep "^enga: 1 package moved from c1 to c2$" out &&
	test $(grep -c "^  " out) = 3 &&
	test $(grep -c "^  shared 1.0 → 2.0$" out) = 3 &&
	expect_exit 0 warden --json versions --diff c1 c2 &&
	python3 -c "
import json; d = json.load(open(\"out\"))
for e in d[\"engines\"]:
    assert e[\"changes\"] == {\"shared\": {\"old\": \"1.0\", \"new\": \"2.0\"}}, e
assert len(d[\"engines\"]) == 3"
'

test_expect_success 'an adapter pin moves that engine back, the others stay' '
	cd bench &&
	python3 -c "
import json; p = \"adapters/engines/enga.json\"; a = json.load(open(p))
a[\"source\"][\"pins\"] = [\"shared==1.0\"]; json.dump(a, open(p, \"w\"))" &&
	WARDEN_CYCLE=c3 expect_exit 0 warden update enga engb &&
	expect_grep "^enga: updated" out &&
	expect_grep "^  shared 2.0 → 1.0$" out &&
	expect_grep "^engb: unchanged" out &&
	test "$(closure enga)" = "enga=1.0 shared=1.0" &&
	test "$(closure engb)" = "engb=1.0 shared=2.0" &&
	expect_exit 0 warden versions enga &&
	expect_grep "^  shared 1.0 (pinned: shared==1.0)$" out &&
	expect_grep "^  enga 1.0$" out
'

test_expect_success 'a policy hold keeps a package where it is' '
	cd bench &&
	python3 -c "
import json; p = \"adapters/engines/enga.json\"; a = json.load(open(p))
del a[\"source\"][\"pins\"]; json.dump(a, open(p, \"w\"))" &&
	bench_policy . "update.holds=[\"shared\"]" &&
	expect_exit 0 warden update enga &&
	expect_grep "^enga: unchanged" out &&
	expect_grep "^  held: shared: held by policy at 1.0$" out &&
	test "$(closure enga)" = "enga=1.0 shared=1.0"
'

test_expect_success 'a release younger than min_release_age_days is held back' '
	make_wheel wheels shared 3.0 &&
	mkdir -p index/shared &&
	python3 -c "
import json, time
old = time.strftime(\"%Y-%m-%dT%H:%M:%SZ\", time.gmtime(time.time() - 400 * 86400))
new = time.strftime(\"%Y-%m-%dT%H:%M:%SZ\", time.gmtime(time.time() - 86400))
rel = {v: [{\"upload_time_iso_8601\": t}] for v, t in ((\"1.0\", old), (\"2.0\", old), (\"3.0\", new))}
json.dump({\"info\": {\"version\": \"3.0\"}, \"releases\": rel}, open(\"index/shared/json\", \"w\"))" &&
	cd bench &&
	bench_policy . "update.holds=[]" update.min_release_age_days=7 \
	    "update.index.json_url=\"file://$TEST_DIR/index/{package}/json\"" &&
	expect_exit 0 warden update --dry-run enga engb &&
	expect_grep "^enga: would_update$" out &&
	expect_grep "^  held: shared: 3.0 is younger than update.min_release_age_days" out &&
	expect_grep "^engb: would_stay$" out &&
	test "$(grep -c "^  held: shared: 3.0 is younger" out)" = 2 &&
	expect_exit 0 warden update enga engb &&
	expect_grep "^enga: updated" out &&
	expect_grep "^  shared 1.0 → 2.0$" out &&
	expect_grep "^  held: shared: 3.0 is younger than update.min_release_age_days" out &&
	expect_grep "^engb: unchanged" out &&
	test "$(closure enga)" = "enga=1.0 shared=2.0" &&
	test "$(closure engb)" = "engb=1.0 shared=2.0" &&
	last=$(sqlite3 .warden/warden.db "select cycle from update_manifests where scratch = 0 order by id desc limit 1") &&
	expect_exit 0 warden versions --diff c2 "$last" enga &&
	expect_grep "^enga: 0 packages moved from c2 to $last, in 2 updates$" out &&
	expect_grep "^    c3 (manifest [0-9]*): shared 2.0 → 1.0$" out &&
	expect_grep "^    $last (manifest [0-9]*): shared 1.0 → 2.0$" out &&
	expect_exit 0 warden --json versions --diff c2 "$last" enga &&
	python3 -c "
import json; d = json.load(open(\"out\")); e = d[\"engines\"][0]
assert e[\"changes\"] == {}, e
assert [s[\"changes\"] for s in e[\"steps\"] if s[\"changes\"]] == [{\"shared\": {\"old\": \"2.0\", \"new\": \"1.0\"}}, {\"shared\": {\"old\": \"1.0\", \"new\": \"2.0\"}}], e"
'

test_expect_success 'a policy group moves a shared dependency in all engines or none' '
	cd bench &&
	bench_policy . update.min_release_age_days=0 \
	    "update.groups={\"core\": [\"shared\"]}" &&
	python3 -c "
import json; p = \"adapters/engines/engc.json\"; a = json.load(open(p))
a[\"source\"][\"pins\"] = [\"shared==2.0\"]; json.dump(a, open(p, \"w\"))" &&
	expect_exit 0 warden update &&
	test "$(closure enga)" = "enga=1.0 shared=2.0" &&
	test "$(closure engb)" = "engb=1.0 shared=2.0" &&
	test "$(closure engc)" = "engc=1.0 shared=2.0" &&
	bench_policy . "update.groups={}" &&
	expect_exit 0 warden update enga &&
	test "$(closure enga)" = "enga=1.0 shared=3.0"
'

test_expect_success 'every attempt is journaled and the store is sound' '
	cd bench &&
	test "$(sqlite3 .warden/warden.db "select count(*) from update_attempts")" = \
	    "$(sqlite3 .warden/warden.db "select count(*) from journal where kind = '"'"'update.engine'"'"'")" &&
	test "$(sqlite3 .warden/warden.db "pragma integrity_check")" = ok &&
	warden journal verify
'

test_done
