#!/bin/sh
# t7002: `warden gate` is SiliconBench's Table 5: one engine crashing at
# c=16 fails completion, another out of the fidelity band fails fidelity,
# each with the failing cell and its figure, and nothing else fails; speed
# and memory are reported, never gated; an engine that passed in the last
# published snapshot and fails now makes the gate exit 1.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

test_expect_success 'a bench: one good engine, one crashing at c=16, one inaccurate' '
	results_bench bench &&
	fid_adapter bench simok --accuracy 1 &&
	fid_adapter bench simcrash --accuracy 1 --abort-at-connections 16 \
	    --itl 2 --output-tokens 16 &&
	fid_adapter bench simoff --accuracy 0.8 --seed 5 &&
	commit_all bench engines &&
	expect_exit 0 warden --repo bench campaign --limit 20 --run-id c1 &&
	expect_exit 0 warden --repo bench fidelity --limit 100 --shots 0 \
	    --concurrency 4 --run-id f1 &&
	gold_reference bench ref.jsonl 0 &&
	expect_exit 0 warden --repo bench fidelity import-reference \
	    --engine vllm-a100 --run-id ref1 ref.jsonl
'

test_expect_success 'the gate fails exactly the crashing and the inaccurate engine, saying why' '
	expect_exit 0 warden --repo bench gate &&
	cp out gate.out &&
	expect_grep "^gate over results [0-9a-f]\{16\}: campaign c1; fidelity f1; reference ref1$" out &&
	expect_grep "^simok  *\(✓ *\)\{3\}pass" out &&
	expect_grep "^simcrash  *✗  *✓  *✓  *FAIL" out &&
	expect_grep "^simoff  *✓  *✗  *✓  *FAIL" out &&
	expect_grep "^simcrash completion ✗ qwen3-0.6b/chat c=16: [0-9]*/20 completed (server_crash)$" out &&
	unwrap out >gate-lines.out &&
	expect_grep "^simoff fidelity ✗ qwen3-0.6b 0-shot: weighted F1 [0-9.]* %, -[0-9.]* pp from the reference.s 100.0 % (band 1.50 pp)$" gate-lines.out &&
	test $(grep -c "^[a-z]* \(completion\|fidelity\|coverage\) ✗ " out) -eq 2 &&
	expect_grep "^passed: simok$" out &&
	expect_grep "^failed: simcrash, simoff$" out
'

test_expect_success 'the JSON gives each verdict with its cell, and speed and memory beside them' '
	warden --repo bench --json gate >gate.json &&
	jcheck gate.json "o[\"passed\"] == [\"simok\"]" \
	    "o[\"failed\"] == [\"simcrash\", \"simoff\"]" \
	    "o[\"thresholds\"][\"completion_min\"] == 90 and o[\"thresholds\"][\"fidelity_band_pp\"] == 1.5" \
	    "[e for e in o[\"engines\"] if e[\"engine\"] == \"simcrash\"][0][\"completion\"][\"failures\"][0][\"cell\"] == \"qwen3-0.6b/chat c=16\"" \
	    "[e for e in o[\"engines\"] if e[\"engine\"] == \"simcrash\"][0][\"fidelity\"][\"pass\"]" \
	    "[e for e in o[\"engines\"] if e[\"engine\"] == \"simoff\"][0][\"fidelity\"][\"failures\"][0][\"cell\"] == \"qwen3-0.6b 0-shot\"" \
	    "abs([e for e in o[\"engines\"] if e[\"engine\"] == \"simoff\"][0][\"fidelity\"][\"cells\"][0][\"delta_pp\"]) > 1.5" \
	    "all(e[\"coverage\"][\"pass\"] for e in o[\"engines\"])" \
	    "all(e[\"best_output_throughput\"] > 0 for e in o[\"engines\"])" \
	    "all(e[\"memory\"][\"peak_system_memory_bytes\"] > 0 and 0 < e[\"memory\"][\"peak_vs_ram\"] < 1 for e in o[\"engines\"])" \
	    "[e for e in o[\"engines\"] if e[\"engine\"] == \"simok\"][0][\"memory\"][\"growth\"][\"from\"] == 1" \
	    "[e for e in o[\"engines\"] if e[\"engine\"] == \"simok\"][0][\"memory\"][\"growth\"][\"to\"] == 16" \
	    "o[\"previous\"] is None and o[\"regressions\"] == []"
'

test_expect_success 'each gate run is recorded with the digest of what it judged, and journaled' '
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from gate_results")" = 2 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(distinct results_sha256) from gate_results")" = 1 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from journal where kind = '"'"'gate.result'"'"'")" = 2
'

test_expect_success 'speed is never gated: a slow engine with every request done passes' '
	results_bench slow &&
	fid_adapter slow simslow --accuracy 1 --itl 20 --output-tokens 16 &&
	commit_all slow engines &&
	expect_exit 0 warden --repo slow campaign --limit 4 --run-id c1 &&
	expect_exit 0 warden --repo slow fidelity --limit 20 --shots 0 --run-id f1 &&
	expect_exit 0 warden --repo slow fidelity mark-reference f1 &&
	expect_exit 0 warden --repo slow gate &&
	expect_grep "^passed: simslow$" out &&
	! awk "prev == \"\" && \$0 == \"\" && NR > 1 { bad = 1 } { prev = \$0 } END { exit !bad }" out &&
	! awk "prev == \"\" && \$0 == \"\" && NR > 1 { bad = 1 } { prev = \$0 } END { exit !bad }" gate.out
'

test_expect_success 'a required model nobody measured fails coverage, naming it' '
	bench_policy bench "models=[\"qwen3-0.6b\", \"qwen3.5-0.8b\"]" \
	    "gates.required_models=[\"qwen3-0.6b\", \"qwen3.5-0.8b\"]" &&
	warden --repo bench --json gate >cov.json &&
	jcheck cov.json "o[\"passed\"] == []" \
	    "all(e[\"coverage\"][\"failures\"][0][\"why\"] == \"qwen3.5-0.8b: not measured\" for e in o[\"engines\"])" &&
	git -C bench checkout -q policy/warden.json
'

test_expect_success 'an engine that passed in the last published snapshot and fails now: exit 1' '
	git -C bench checkout -q official &&
	mkdir -p bench/results &&
	printf "{\"schema\": 1, \"passed\": [\"simok\", \"simcrash\"]}\n" >bench/results/gate.json &&
	commit_all bench "publish (by hand)" &&
	published=$(git -C bench rev-parse official) &&
	git -C bench checkout -q - &&
	expect_exit 1 warden --repo bench gate &&
	expect_grep "^last published ($(echo $published | cut -c1-12)) passed: simok, simcrash$" out &&
	expect_grep "^now failing after passing there: simcrash$" out &&
	expect_grep "1 engine(s) that passed in the last published snapshot fail now" err &&
	warden --repo bench --json gate >reg.json || true &&
	jcheck reg.json "o[\"regressions\"] == [\"simcrash\"]" \
	    "o[\"previous\"][\"commit\"] == \"$published\""
'

test_expect_success 'bad input: an unknown run, a stray argument' '
	expect_exit 2 warden --repo bench gate --campaign nope &&
	expect_grep "no campaign run .nope." err &&
	expect_exit 2 warden --repo bench gate extra &&
	expect_grep "usage: warden gate" err &&
	expect_exit 2 warden --repo bench gate --snapshot x --campaign c1
'

test_done
