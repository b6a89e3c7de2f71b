#!/bin/sh
# t5005: a change that is not a package. A community change to one
# engine's adapter, approved in review, breaks it; no package moved.
# Triage takes the commits on official since the engine's healthy cycle
# that change what it runs with (its adapter, its profile entry, the
# policy, the workloads; not another engine's adapter, not a README),
# finds the breaking one by smoke runs of official's trees (halving, then
# the culprit's own tree), names the review it came in by, opens a
# confirmed "change" incident and queues the revert through the gate with
# the smoke runs as evidence. Approved, the revert makes the engine
# healthy and the incident fixed.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

# edit_adapter NAME PYTHON: run PYTHON over the adapter document a.
edit_adapter() {
	python3 - "bench/adapters/engines/$1.json" "$2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(a, open(sys.argv[1], "w"), indent=2)
PY
}

# follow: the maintainer's checkout moves to the official tip.
follow() {
	git -C bench merge -q --ff-only official
}

MAINT="Maint Ainer <maint@example.org>"

test_expect_success 'a bench of two pip engines, healthy in cycle c1' '
	make_wheel wheels enga 1.0 && make_wheel wheels engb 1.0 &&
	triage_bench bench "$TEST_DIR/wheels" &&
	dep_engine bench enga enga enga zero &&
	dep_engine bench engb engb engb zero &&
	bench_commit bench "two engines" &&
	git -C bench rev-parse HEAD >good &&
	WARDEN_CYCLE=c1 tb update >/dev/null &&
	WARDEN_CYCLE=c1 expect_exit 0 tb campaign --limit 3 &&
	test "$(grep -c " 3/3  *ok$" out)" = 2
'

test_expect_success 'four commits on official: a harmless enga change, a community change that breaks it, an engb change, a README' '
	edit_adapter enga "a[\"serve\"][\"ready_timeout_s\"] = 21" &&
	bench_commit bench "enga: wait a little longer for readiness" &&
	git -C bench rev-parse HEAD >harmless &&
	cp bench/adapters/engines/enga.json enga.orig &&
	edit_adapter enga "a[\"serve\"][\"argv\"] += [\"--zero-rate\", \"1\"]" &&
	git -C bench diff >break.patch &&
	git -C bench checkout -q -- adapters/engines/enga.json &&
	expect_exit 0 tb patch submit "$TEST_DIR/break.patch" --source community \
	    --note "enga: answer faster" &&
	expect_exit 0 tb review approve 1 --as "$MAINT" --without-evidence &&
	follow &&
	git -C bench rev-parse HEAD >breaking &&
	edit_adapter engb "a[\"serve\"][\"ready_timeout_s\"] = 22" &&
	bench_commit bench "engb: wait longer" &&
	echo "notes" >bench/NOTES.md &&
	bench_commit bench "notes"
'

test_expect_success 'cycle c2: nothing moved in the packages; enga fails, engb does not' '
	WARDEN_CYCLE=c2 tb update >update.out &&
	WARDEN_CYCLE=c2 expect_exit 0 tb campaign --limit 3 &&
	expect_grep "^enga .* 0/3  *all-failed$" out &&
	expect_grep "^engb .* 3/3  *ok$" out
'

test_expect_success 'triage names the community commit, proven at its parent, and the review it came in by' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage &&
	cp out triage.out && unwrap out >out.u && mv out.u out &&
	expect_grep "^enga: broken (healthy in c1); 0 packages changed, 2 commits on official changed what it runs with$" out &&
	expect_grep "^  culprit: commit $(cut -c1-7 breaking) (review 1) \"enga: answer faster\": adapters/engines/enga.json$" out &&
	expect_grep "^  confirmed in 3 smoke runs of official.s trees (at most 3): healthy at its parent, failing at it$" out &&
	expect_grep "^incident 1 opened (confirmed): commit $(cut -c1-7 breaking) (review 1: \"enga: answer faster\") broke enga$" out &&
	expect_grep "^  confirmed by smoke runs of official.s trees: healthy at $(cut -c1-7 harmless), its parent, failing at $(cut -c1-7 breaking)" out &&
	expect_grep "^review 2 queued (source triage)" out
'

test_expect_success 'the JSON: only the commits that concern enga are suspects, oldest first; three smoke runs of trees' '
	WARDEN_CYCLE=c2 tb --json triage >again.json || true &&
	json again.json \
	    "[c[\"commit\"] for c in d[\"engines\"][\"enga\"][\"commits\"]] == [\"$(cat harmless)\", \"$(cat breaking)\"]" \
	    "d[\"engines\"][\"enga\"][\"commits\"][1][\"review\"] == 1" \
	    "d[\"engines\"][\"enga\"][\"commits\"][0][\"review\"] is None" \
	    "d[\"engines\"][\"enga\"][\"commits\"][1][\"paths\"] == [\"adapters/engines/enga.json\"]" &&
	test "$(q "select count(*) from triage_smoke where engine = '"'enga'"'")" = 3 &&
	test "$(q "select group_concat(outcome, '"' '"') from (select outcome from triage_smoke order by id)")" = "pass pass fail" &&
	test "$(q "select count(*) from triage_smoke where engine = '"'engb'"'")" = 0 &&
	q "select provenance from campaign_runs where run_id like '"'triage-%'"'" >prov &&
	expect_grep "\"tree\":\"official at $(cut -c1-12 breaking)\"" prov &&
	expect_grep "\"sandbox\"" prov
'

test_expect_success 'incident show: the commit, the review it came in by, what it changed' '
	expect_exit 0 tb incident show 1 &&
	expect_grep "^kind:     change$" out &&
	expect_grep "^culprit:  commit $(cat breaking) \"enga: answer faster\"$" out &&
	expect_grep "^          came in by review 1 (warden review show 1)$" out &&
	expect_grep "^          changed: adapters/engines/enga.json$" out &&
	expect_grep "^healthy with the same release: none$" out
'

test_expect_success 'the revert is queued through the gate, with the smoke runs as evidence' '
	expect_exit 0 tb review show 2 &&
	expect_grep "triage: incident 1: revert $(cut -c1-7 breaking) (review 1), which broke enga" out &&
	expect_grep "gate: clean" out &&
	expect_grep "^    -.*--zero-rate" out &&
	expect_grep "^evidence .* triage-smoke: incident 1; culprit commit $(cut -c1-7 breaking)$" out &&
	expect_grep "^  smoke [0-9]* enga before the first commit: pass$" out &&
	expect_grep "^  smoke [0-9]* enga the culprit alone: fail$" out &&
	test "$(q "select count(*) from review_evidence where review_id = 2 and kind = '"'triage-smoke'"'")" = 1
'

test_expect_success 'approved, the revert makes enga healthy in c3 and the incident fixed' '
	expect_exit 0 tb review approve 2 --as "$MAINT" &&
	follow &&
	cmp bench/adapters/engines/enga.json enga.orig &&
	WARDEN_CYCLE=c3 expect_exit 0 tb campaign --limit 3 &&
	test "$(grep -c " 3/3  *ok$" out)" = 2 &&
	WARDEN_CYCLE=c3 expect_exit 0 tb triage &&
	test "$(q "select state from triage_incidents where id = 1")" = fixed
'

test_done
