#!/bin/sh
# t4004: a substitute shim named in policy; a shim that prints invalid
# JSON, exits non-zero or hangs is an update failure for that engine with
# a clear message, and nothing else is lost (the other engine updates,
# the failing one keeps its manifest); after an update every campaign
# sweep's --json provenance carries the engine's manifest.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

SHIM="$TEST_DIR/shim"
mkdir -p "$SHIM"

test_expect_success 'a bench whose pip engines use a substitute shim' '
	bench_init bench &&
	pip_adapter bench engx engx &&
	sim_adapter bench simv &&
	python3 -c "
import json; p = \"bench/adapters/engines/simv.json\"; a = json.load(open(p))
a[\"source\"][\"version_argv\"] = [\"warden-simengine\", \"--help\"]
json.dump(a, open(p, \"w\"))" &&
	bench_policy bench "update.shims={\"pip\": [\"python3\", \"$TOP_SRCDIR/tests/fixtures/update/fake-shim.py\", \"$SHIM\"]}" \
	    update.venv_pip=false update.shim_timeout_s=300 \
	    "update.index.find_links=[\"wheels\"]" update.index.no_index=true &&
	echo good >"$SHIM/mode" &&
	echo "{\"engx\": \"1.0\", \"dep\": \"2.0\"}" >"$SHIM/packages.json" &&
	(cd bench && warden lint)
'

test_expect_success 'before any update, versions is an empty answer, not a failure' '
	cd bench &&
	expect_exit 0 warden versions &&
	expect_grep "^no manifest recorded yet (.warden update. records one)$" out &&
	expect_exit 0 warden --json versions &&
	test "$(cat out)" = "{}"
'

test_expect_success 'the substitute shim is called with the policy index options' '
	cd bench &&
	WARDEN_CYCLE=p1 expect_exit 0 warden update &&
	expect_grep "^engx: updated" out &&
	expect_grep "^  dep (none) → 2.0$" out &&
	expect_grep "^simv: updated" out &&
	expect_grep "^upgrade --env $TEST_DIR/bench/.warden/envs/engx/venv --find-links $TEST_DIR/bench/wheels --no-index --constraint .* engx$" "$SHIM/calls" &&
	warden --json versions engx | grep -q "\"python\": \"3.99.1\""
'

test_expect_success 'after an update, campaign provenance carries the manifest' '
	cd bench &&
	expect_exit 0 warden --json campaign --engine engx --limit 2 --concurrency 1 &&
	python3 -c "
import json
d = json.load(open(\"out\"))
rows = [r for t in d[\"tables\"] for r in t[\"rows\"]]
assert rows, d
for s in rows:
    m = s[\"provenance\"][\"engine_manifest\"]
    assert m[\"packages\"] == {\"engx\": \"1.0\", \"dep\": \"2.0\"}, m
    assert m[\"engine\"] == \"engx\" and m[\"cycle\"] == \"p1\" and len(m[\"sha256\"]) == 64, m
    assert isinstance(m[\"id\"], int), m
    assert \"$TEST_DIR\" not in json.dumps(m) and m[\"env_dir\"].startswith(\"./.warden/envs/\"), m" &&
	warden snapshot --tree snap --output s.tar.gz >/dev/null &&
	sha=$(sqlite3 .warden/warden.db "select sha256 from update_manifests m join update_current c on c.manifest_id = m.id where c.engine = '"'"'engx'"'"'" | cut -c1-12) &&
	expect_grep "^| engx | 1.0 | .$sha. | 3.99.1 | 2 | - | 2 |$" snap/results/REPORT.md &&
	! grep -r "$TEST_DIR" snap/results >/dev/null &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_sweeps where json_extract(provenance, '"'"'$.engine_manifest.id'"'"') is null")" = 0
'

check_failure() {
	expect_grep "^engx: failed$" out &&
	expect_grep "^simv: unchanged" out &&
	expect_grep "1 engine failed to update" err &&
	warden --json versions engx | grep -q "\"dep\": \"2.0\"" &&
	test "$(sqlite3 .warden/warden.db "select outcome from update_attempts where engine = 'engx' order by id desc limit 1")" = failed
}

test_expect_success 'a shim that prints invalid JSON fails that engine only' '
	cd bench &&
	echo invalid >"$SHIM/mode" &&
	echo "{\"engx\": \"2.0\", \"dep\": \"3.0\"}" >"$SHIM/packages.json" &&
	expect_exit 1 warden update &&
	expect_grep "pip shim .python3. upgrade printed invalid JSON: line 1 column" out &&
	check_failure
'

test_expect_success 'a shim that exits non-zero fails that engine, with its stderr' '
	cd bench &&
	echo fail >"$SHIM/mode" &&
	expect_exit 1 warden update &&
	expect_grep "failed: exit status 1; log tail:" out &&
	expect_grep "ResolutionImpossible: engx 2.0 needs dep>=9" out &&
	check_failure
'

test_expect_success 'a shim that hangs is stopped at the timeout' '
	cd bench &&
	# the short timeout only here: a good shim, python on a busy
	# machine, may take seconds
	bench_policy . update.shim_timeout_s=3 &&
	echo hang >"$SHIM/mode" &&
	expect_exit 1 warden update &&
	bench_policy . update.shim_timeout_s=300 &&
	expect_grep "did not finish within 3 s and was stopped" out &&
	check_failure &&
	! ps -eo args | grep -F "$SHIM" | grep -v grep
'

test_expect_success 'a shim that prints JSON of the wrong shape fails clearly' '
	cd bench &&
	echo good >"$SHIM/mode" &&
	echo "[1, 2]" >"$SHIM/packages.json" &&
	expect_exit 1 warden update engx &&
	expect_grep "printed JSON that is not {\"tool\": string" out
'

test_expect_success 'a later good update moves on from the last good manifest' '
	cd bench &&
	echo "{\"engx\": \"2.0\", \"dep\": \"3.0\"}" >"$SHIM/packages.json" &&
	WARDEN_CYCLE=p2 expect_exit 0 warden update engx &&
	expect_grep "^  dep 2.0 → 3.0$" out &&
	expect_grep "^  engx 1.0 → 2.0$" out &&
	expect_exit 0 warden versions --diff p1 p2 &&
	expect_grep "^engx: 2 packages moved from p1 to p2$" out &&
	expect_grep "^simv: no manifest in cycle p2$" out &&
	warden journal verify
'

test_expect_success 'an update that moves nothing keeps the manifest sha256 (its identity is what ran)' '
	cd bench &&
	WARDEN_CYCLE=p3 expect_exit 0 warden update engx &&
	WARDEN_CYCLE=p4 expect_exit 0 warden update engx &&
	sqlite3 .warden/warden.db "select sha256 from update_manifests where engine = '"'"'engx'"'"' and cycle in ('"'"'p2'"'"', '"'"'p3'"'"', '"'"'p4'"'"') order by id" >shas &&
	test $(wc -l <shas) -eq 3 &&
	test $(sort -u shas | wc -l) -eq 1 &&
	sqlite3 .warden/warden.db "select count(distinct created) from update_manifests where engine = '"'"'engx'"'"' and cycle in ('"'"'p2'"'"', '"'"'p3'"'"', '"'"'p4'"'"')" >n &&
	test "$(cat n)" -ge 2
'

test_expect_success 'bad input: usage errors and unknown engines' '
	cd bench &&
	expect_exit 2 warden update --bogus &&
	expect_grep "usage: warden update" err &&
	expect_exit 2 warden versions --diff p1 &&
	expect_exit 2 warden versions a b &&
	expect_exit 1 warden versions --cycle nosuch &&
	expect_grep "no manifest recorded in cycle nosuch" err &&
	expect_exit 1 warden update nosuch &&
	expect_grep "^nosuch: failed$" out &&
	expect_grep "no such adapter or profile: .adapters/engines/nosuch.json." out &&
	warden update --help >help && expect_grep "^usage: warden update \[ENGINE...\] \[--dry-run\] \[--retry-failed\] \[--json\]" help &&
	warden versions --help >help && expect_grep "^usage: warden versions" help &&
	warden stale --help >help && expect_grep "^usage: warden stale" help
'

test_done
