#!/bin/sh
# t7007: `warden export SNAPSHOT --format siliconbench` writes a snapshot's
# campaign runs in SiliconBench's own layout: one result file per engine,
# model and split with benchmark.py's keys, and comparison.json per split.
# A reading of SiliconBench's collector and report generator
# (tests/fixtures/results/siliconbench-reader.py) renders them: every
# figure a number where the engine answered, CRASHED where it did not.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

READER="python3 $TOP_SRCDIR/tests/fixtures/results/siliconbench-reader.py"

test_expect_success 'a snapshot of a good engine and one whose every request fails' '
	bench_init bench &&
	sim_adapter bench simgood --itl 1 &&
	sim_adapter bench simbad --fail-rate 1 &&
	bench_policy bench "campaign.concurrency=[1, 4]" &&
	commit_all bench engines &&
	warden --repo bench campaign --limit 6 --run-id c1 >/dev/null &&
	expect_exit 0 warden --repo bench snapshot --output s.tar.gz
'

test_expect_success 'export writes SiliconBench result files and comparison.json per split' '
	expect_exit 0 warden --repo bench export s.tar.gz --format siliconbench --output sb &&
	d=sb/results/qwen3-0.6b/chat &&
	expect_grep "^$d/simgood_[0-9]\{8\}_[0-9]\{6\}\.json$" out &&
	expect_grep "^$d/comparison.json$" out &&
	test "$(ls $d | wc -l)" = 3 &&
	jcheck $d/simgood_*.json \
	    "set(o) >= {\"framework\", \"model\", \"endpoint\", \"timestamp\", \"machine\", \"concurrency_results\", \"total_duration_s\"}" \
	    "o[\"framework\"] == \"simgood\" and o[\"model\"] == \"Qwen/Qwen3-0.6B\"" \
	    "o[\"endpoint\"] == \"http://127.0.0.1:{port}\" and len(o[\"timestamp\"]) == 19" \
	    "set(o[\"machine\"]) == {\"host\", \"chip\", \"os\"} and o[\"total_duration_s\"] > 0" \
	    "[c[\"concurrency\"] for c in o[\"concurrency_results\"]] == [1, 4]" \
	    "all(c[\"successful\"] == 6 and c[\"failed\"] == 0 and c[\"num_requests\"] == 6 for c in o[\"concurrency_results\"])" \
	    "all(c[\"ttft_p50_ms\"] > 0 and c[\"itl_avg_ms\"] > 0 and abs(c[\"throughput_avg_tps\"] * c[\"itl_avg_ms\"] - 1000) < 1e-6 for c in o[\"concurrency_results\"])" &&
	jcheck $d/simbad_*.json \
	    "all(c[\"successful\"] == 0 and c[\"failed\"] == 6 and c[\"error\"] == \"no successful requests\" and \"ttft_p50_ms\" not in c for c in o[\"concurrency_results\"])" &&
	jcheck $d/comparison.json "o[\"model_name\"] == \"qwen3-0.6b\" and o[\"split\"] == \"chat\"" \
	    "sorted(o[\"frameworks\"]) == [\"simbad\", \"simgood\"] and set(o[\"results\"]) == {\"simbad\", \"simgood\"}"
'

test_expect_success 'SiliconBench collector and report read the export' '
	$READER sb/results/qwen3-0.6b/chat >report &&
	expect_grep "^## Concurrency: 1$" report &&
	expect_grep "^## Concurrency: 4$" report &&
	test "$(grep -c "^| Successful / Failed | .*6 / 0 |" report)" = 2 &&
	test "$(grep -c "CRASHED" report)" = 2 &&
	expect_grep "^| TTFT p50 (ms) | " report &&
	! grep -q "N/A" report
'

test_expect_success 'with --chip the machine is a folder level; --json lists the files; bad input is a usage error' '
	expect_exit 0 warden --repo bench --json export s.tar.gz --format siliconbench --output sb2 --chip epyc &&
	jcheck out "o[\"format\"] == \"siliconbench\" and len(o[\"files\"]) == 3" \
	    "all(\"/results/qwen3-0.6b/epyc/chat/\" in f for f in o[\"files\"])" &&
	$READER sb2/results/qwen3-0.6b/epyc/chat >/dev/null &&
	expect_exit 2 warden --repo bench export s.tar.gz --format csv --output x &&
	expect_grep "takes siliconbench" err &&
	expect_exit 2 warden --repo bench export s.tar.gz --format siliconbench &&
	expect_grep "needs --output DIR" err &&
	expect_exit 2 warden --repo bench export s.tar.gz --format siliconbench --output x --chip ../up &&
	test ! -e x
'

test_expect_success 'a snapshot that does not verify is not exported' '
	python3 $TOP_SRCDIR/tests/fixtures/results/tamper.py s.tar.gz bad.tar.gz \
	    change results/REPORT.md &&
	expect_exit 1 warden --repo bench export bad.tar.gz --format siliconbench --output sb3 &&
	expect_grep "does not verify" err &&
	test ! -e sb3
'

test_done
