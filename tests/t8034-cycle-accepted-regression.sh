#!/bin/sh
# t8034: a regression accepted at approval is a decision, not an
# incident. A published cycle; then a contributor's change makes the
# simulated engine decode five times slower (--itl 20 -> 100 ms, far past
# the threshold); review smoke measures it as a regression and the
# maintainer approves it with --accept-regression. The next cycle's alert
# on those series is recorded as acknowledged, naming the review; triage
# opens no incident and queues no revert; the cycle journal lists the
# landed change with its measured effect; the cycle's REPORT.md names the
# cycle and says what moved since the results published before it: the
# slower engine in a table, the unchanged one (simok) in one line. Speeds
# differ five-fold, the threshold is 100 %, so no verdict is timing noise.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

SIM="--itl 20 --itl-growth 0 --prefill-rate 10000 --output-tokens 16 --weights-mb 32"
DB=bench/.warden/warden.db
MAINT="Maint Ainer <maint@example.org>"

bw() {
	warden --repo bench "$@"
}

test_expect_success 'a bench of two engines; the first cycle publishes' '
	bench_init bench &&
	sim_adapter bench simfix --mode continuous $SIM &&
	sim_adapter bench simok --mode continuous $SIM &&
	bench_policy bench "campaign.concurrency=[1]" "caps.warmups=1" \
	    "caps.stop_grace_s=1" "caps.hang_s=10" \
	    "agent.sandbox=\"best-effort\"" \
	    "agent.smoke={\"concurrency\": [1], \"prompts\": 4, \"rounds\": 2}" \
	    "cycle={\"publish\": true, \"fidelity\": false, \"limit\": 8}" \
	    "regressions={\"threshold_pct\": 100, \"alpha\": 0.01, \"baseline_cycles\": 3, \"min_samples\": 5, \"metrics\": [\"output_throughput\", \"median_ttft_ms\", \"p99_ttft_ms\", \"median_tpot_ms\", \"peak_engine_memory_bytes\"]}" &&
	cycle_commit bench "one simulated engine" &&
	WARDEN_CYCLE=r1 expect_exit 0 bw cycle &&
	expect_grep "^alerts:    none: no published cycle" out
'

test_expect_success 'a change that decodes five times slower, measured and accepted at approval' '
	python3 - <<-PY &&
	import json
	p = "bench/adapters/engines/simfix.json"
	a = json.load(open(p))
	argv = a["serve"]["argv"]
	argv[argv.index("--itl") + 1] = "100"
	json.dump(a, open(p, "w"), indent=2)
	PY
	git -C bench diff >slow.patch &&
	git -C bench checkout -q -- adapters &&
	bw patch submit "$TEST_DIR/slow.patch" --source community \
	    --author "Contributor <c@example.org>" --note "slower decode" >/dev/null &&
	id=$(sqlite3 $DB "select max(id) from reviews") &&
	echo $id >review.id &&
	expect_exit 1 bw review smoke $id &&
	expect_grep "REGRESSES after it" out &&
	expect_exit 1 bw review approve $id --as "$MAINT" &&
	expect_exit 0 bw review approve $id --as "$MAINT" --accept-regression &&
	git -C bench checkout -q --detach official
'

test_expect_success 'the next cycle acknowledges the alert, naming the review; triage leaves it alone' '
	id=$(cat review.id) &&
	WARDEN_CYCLE=r2 expect_exit 0 bw cycle &&
	bw --json regressions list >list.json &&
	cycle_json list.json \
	    "len(j) >= 1" \
	    "\"median_tpot_ms\" in {a[\"metric\"] for a in j}" \
	    "all(a[\"engine\"] == \"simfix\" and a[\"concurrency\"] == 1 for a in j)" \
	    "all(a[\"state\"] == \"acknowledged\" and a[\"record\"][\"accepted_review\"] == $id for a in j if a[\"metric\"] == \"median_tpot_ms\")" &&
	tpot=$(python3 -c "import json; print([a[\"id\"] for a in json.load(open(\"list.json\")) if a[\"metric\"] == \"median_tpot_ms\"][0])") &&
	bw --json regressions show $tpot >alert.json &&
	cycle_json alert.json \
	    "any(t[\"to\"] == \"acknowledged\" and \"accepted at the approval of review $id by Maint Ainer\" in t[\"reason\"] for t in j[\"transitions\"])" &&
	sqlite3 $DB "select result from cycle_steps where cycle = '"'"'r2'"'"' and step = '"'"'triage'"'"'" >triage.json &&
	cycle_json triage.json "j[\"broken\"] == []" "len(j[\"opened\"]) == 0" &&
	test "$(sqlite3 $DB "select count(*) from reviews where status = '"'"'pending'"'"'")" = 0
'

test_expect_success 'the cycle journal lists the landed change with its measured effect' '
	id=$(cat review.id) &&
	md bench r2 >r2.md &&
	expect_grep "^- review #$id (community) approved by Maint Ainer <maint@example.org> at .*(evidence: smoke); measured: simfix qwen3-0.6b/chat c=1: .*slower decode: TPOT p50 " r2.md
'

test_expect_success 'REPORT.md names the cycle and says what moved since the results published before' '
	git -C bench show official:results/REPORT.md >r2.report &&
	expect_grep "^Cycle .r2.\. Measured from 20[0-9T:.Z-]* to 20[0-9T:.Z-]* (UTC)\. " r2.report &&
	sed -n "/^## Since the last snapshot$/,/^## Fidelity$/p" r2.report >since &&
	expect_grep "^| simfix | qwen3-0.6b / chat | 1 | [0-9.]* → [0-9.]* (0\.[0-9]*×) | [0-9.]* → [0-9.]* ([0-9.]*×) | .*slower decode: TPOT p50 [0-9.]* → [0-9.]* ms, p " since &&
	expect_grep "^No measurable change: simok qwen3-0.6b/chat c=1\.$" since &&
	expect_no_grep "^| simok " since &&
	git -C bench show official:results/comparison.json >cmp.json &&
	cycle_json cmp.json \
	    "j[\"cycle\"] == \"r2\"" \
	    "{c[\"engine\"]: c[\"verdict\"] for c in j[\"since\"][\"cells\"]} == {\"simfix\": \"regressed\", \"simok\": \"unchanged\"}" \
	    "[c for c in j[\"since\"][\"cells\"] if c[\"engine\"] == \"simfix\"][0][\"before_run\"] == \"r1-r1-campaign\"" \
	    "[c for c in j[\"since\"][\"cells\"] if c[\"engine\"] == \"simfix\"][0][\"median_tpot_ms\"][\"ratio\"] > 2"
'

test_done
