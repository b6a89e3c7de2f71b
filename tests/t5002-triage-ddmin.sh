#!/bin/sh
# t5002: triage where no single package explains a failure: two changed
# packages break an engine only together, and ddmin finds exactly the
# pair (each pinned back alone heals it, each alone does not break it);
# the incident names both and its pin patch pins both. And a cycle whose
# failing engine was never healthy before: triage says what it cannot
# compare, and opens nothing.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

test_expect_success 'a pair engine (pa and pb), and an engine never installed yet' '
	make_wheel wheels pa 1.0 && make_wheel wheels pb 1.0 &&
	make_wheel wheels pairy 1.0 "pa>=1.0" "pb>=1.0" &&
	make_wheel wheels late 1.0 &&
	triage_bench bench "$TEST_DIR/wheels" &&
	pair_engine bench pairy pairy pa pb &&
	dep_engine bench late late late zero &&
	bench_commit bench "two engines" &&
	tb lint
'

test_expect_success 'a cycle with no earlier healthy cycle: triage says what it cannot compare' '
	WARDEN_CYCLE=c0 tb campaign --limit 2 >/dev/null &&
	WARDEN_CYCLE=c0 expect_exit 1 tb triage &&
	expect_grep "^late: broken, cannot compare: no earlier cycle where it was healthy$" out &&
	expect_grep "^nothing to compare in cycle c0" out &&
	test "$(q "select count(*) from triage_incidents")" = 0 &&
	test "$(q "select count(*) from triage_smoke")" = 0 &&
	WARDEN_CYCLE=c0 tb --json triage >c0.json || test $? = 1 &&
	python3 -c "
import json; d = json.load(open(\"c0.json\"))
assert d[\"nothing_to_compare\"] and not d[\"nothing_broke\"], d
assert d[\"cannot_compare\"] == [{\"engine\": \"late\", \"why\": \"no earlier cycle where it was healthy\"}], d
assert d[\"broken\"] == [] and d[\"opened\"] == []"
'

test_expect_success 'cycle c1 healthy; c2 moves pa and pb to 2.0 and pairy breaks' '
	WARDEN_CYCLE=c1 tb update >/dev/null &&
	WARDEN_CYCLE=c1 tb campaign --limit 2 >/dev/null &&
	make_wheel wheels pa 2.0 && make_wheel wheels pb 2.0 &&
	WARDEN_CYCLE=c2 tb update pairy >/dev/null &&
	WARDEN_CYCLE=c2 tb campaign --limit 2 >out &&
	expect_grep "^pairy .* 0/2  *all-failed$" out
'

test_expect_success 'ddmin finds the pair: the incident names pa and pb together' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage && unwrap out >out.u && mv out.u out &&
	expect_grep "^  culprit: pa 1.0 → 2.0 and pb 1.0 → 2.0, confirmed by pinning back in 3 smoke runs (one culprit: at most 2) with ddmin$" out &&
	expect_grep "^incident 1 opened (confirmed): pa 1.0 → 2.0 together with pb 1.0 → 2.0 broke pairy$" out &&
	expect_grep "failing with pa 2.0 and pb 2.0 together, healthy with any one of them alone" out &&
	q "select purpose, pins, outcome from triage_smoke order by id" >runs &&
	printf "%s\n" "bisect|{\"pa\":\"1.0\"}|pass" "sufficiency|{\"pb\":\"1.0\"}|pass" \
	    "ddmin-base|{\"pa\":\"1.0\",\"pb\":\"1.0\"}|pass" >runs.expected &&
	expect_equal runs.expected runs &&
	if [ "$(can_sandbox)" = yes ]; then
		# The scratch runs are unreviewed: their engines ran sandboxed.
		test "$(q "select count(*) from campaign_runs where run_id like '"'"'triage-%'"'"' and provenance like '"'"'%\"sandbox\":\"bubblewrap\"%'"'"'")" = 3
	fi &&
	test "$(q "select kind from triage_incidents")" = combination &&
	tb --json review show 1 >review.json &&
	python3 -c "
import json; d = json.load(open(\"review.json\"))
assert d[\"gate\"][\"ok\"] and d[\"source\"] == \"triage\"
assert \"\\\"pa==1.0\\\"\" in d[\"patch\"] and \"\\\"pb==1.0\\\"\" in d[\"patch\"], d[\"patch\"]
assert [f[\"new_path\"] for f in d[\"gate\"][\"files\"]] == [\"adapters/engines/pairy.json\"]"
'

test_expect_success 'triage again on the same cycle: the incident is updated, nothing re-run' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage &&
	expect_grep "^  already explained by incident 1$" out &&
	expect_grep "^incident 1 updated (confirmed)" out &&
	test "$(q "select count(*) from triage_smoke")" = 3 &&
	test "$(q "select count(*) from reviews")" = 1 &&
	test "$(q "select count(*) from triage_incidents")" = 1
'

test_expect_success 'everything triage did is journaled and the store is sound' '
	test "$(q "select count(*) from journal where kind = '"'"'triage.smoke'"'"'")" = 3 &&
	test "$(q "select count(*) from journal where kind = '"'"'triage.run'"'"'")" = 4 &&
	test "$(q "select count(*) from journal where kind = '"'"'incident.state'"'"'")" = 1 &&
	test "$(q "pragma integrity_check")" = ok &&
	tb journal verify
'

test_done
