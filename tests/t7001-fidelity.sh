#!/bin/sh
# t7001: `warden fidelity` asks the task through the campaign's engine
# lifecycle and load generator, recovers a simulated engine's set accuracy,
# counts unparsable answers and failed requests as wrong (never dropped),
# and compares with an imported or marked reference.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

# rows ENGINE FILE: the rows of the table in FILE under ENGINE's line.
rows() {
	sed -n "/^$1\$/,/^[^ ]/{/^  /p;}" "$2"
}

test_expect_success 'a bench with an accurate, a buggy and a crashing engine' '
	results_bench bench &&
	fid_adapter bench simgood --accuracy 0.8 --seed 7 &&
	fid_adapter bench simbug --accuracy 1 --template-bug-rate 0.4 \
	    --trace "{log_dir}/simbug.trace" &&
	fid_adapter bench simcrash --accuracy 1 --abort-after 30 &&
	commit_all bench engines &&
	(cd bench && warden lint)
'

test_expect_success 'fidelity scores every cell and prints the table' '
	expect_exit 0 warden --repo bench fidelity --limit 200 --shots 0 \
	    --concurrency 4 --run-id f1 &&
	cols=$(awk "{ if (length > m) m = length } END { print m }" out) &&
	echo "widest line: $cols" && test "$cols" -le 80 &&
	unwrap out >out.u && mv out.u out &&
	expect_grep "^fidelity run f1 (task gmrid-synthetic, sha256 [0-9a-f]\{12\}, 200 of 240 items, synthetic)" out &&
	rows simgood out >row && expect_grep "^  qwen3-0.6b  *0 .* complete$" row &&
	rows simbug out >row && expect_grep "^  qwen3-0.6b  *0 .* complete$" row &&
	rows simcrash out >row &&
	expect_grep "^  qwen3-0.6b  *0 .* server_crash$" row &&
	cp out table.out &&
	test $(grep -c "^cell [1-3]/3 .* answered, weighted F1" err) -eq 2 &&
	expect_grep "^cell [1-3]/3 simcrash qwen3-0.6b 0-shot: server_crash, [0-9]*/200 answered, no score, " err &&
	expect_no_grep "weighted F1 0.0 %" err
'

test_expect_success 'the simulated engine set accuracy 0.8 is recovered within sampling error' '
	warden --repo bench --json fidelity show f1 >f1.json &&
	jcheck f1.json \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simgood\"][0][\"items\"] == 200" \
	    "abs([r for r in o[\"rows\"] if r[\"engine\"] == \"simgood\"][0][\"accuracy\"] - 0.8) <= 3 * math.sqrt(0.8 * 0.2 / 200)" \
	    "abs([r for r in o[\"rows\"] if r[\"engine\"] == \"simgood\"][0][\"weighted_f1\"] - 0.8) <= 0.1"
'

test_expect_success 'unparsable answers are wrong, counted apart, and match the engine trace' '
	bugs=$(grep -c "\"fault\":\"template_bug\"" $(find bench/.warden -name simbug.trace)) &&
	echo "template bugs: $bugs" && test "$bugs" -gt 40 &&
	jcheck f1.json \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simbug\"][0][\"parse_failures\"] == $bugs" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simbug\"][0][\"items\"] == 200" \
	    "abs([r for r in o[\"rows\"] if r[\"engine\"] == \"simbug\"][0][\"accuracy\"] - (200 - $bugs) / 200) < 1e-9" &&
	test "$(q "select count(*) from fidelity_predictions p join fidelity_cells c on c.id = p.cell_id where c.engine = '"'"'simbug'"'"' and p.predicted = '"'"'none'"'"' and p.parse = '"'"'no_label'"'"'")" = "$bugs"
'

test_expect_success 'a crash keeps every item, and its cell has no figures: no success is not a score of zero' '
	test "$(q "select count(*) from fidelity_predictions p join fidelity_cells c on c.id = p.cell_id where c.engine = '"'"'simcrash'"'"'")" = 200 &&
	ok=$(q "select count(*) from fidelity_predictions p join fidelity_cells c on c.id = p.cell_id where c.engine = '"'"'simcrash'"'"' and p.outcome = '"'"'ok'"'"'") &&
	echo "answered before the crash: $ok" && test "$ok" -ge 25 && test "$ok" -le 30 &&
	jcheck f1.json \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simcrash\"][0][\"request_failures\"] == 200 - $ok" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simcrash\"][0][\"accuracy\"] is None" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simcrash\"][0][\"weighted_f1\"] is None" &&
	rows simcrash table.out >row &&
	expect_grep "^  qwen3-0.6b  *0  *-  *-  *- " row &&
	q "select detail from fidelity_cells where engine = '"'"'simcrash'"'"'" >detail &&
	expect_grep "SIGABRT" detail
'

test_expect_success 'a run carries the provenance of a campaign and the task digest' '
	q "select provenance from fidelity_runs where run_id = '"'"'f1'"'"'" >prov.json &&
	jcheck prov.json "len(o[\"repo_commit\"]) == 40" "o[\"repo_dirty\"] is False" \
	    "len(o[\"policy_sha256\"]) == 64" "len(o[\"task_sha256\"]) == 64" \
	    "o[\"warden_version\"]" "o[\"hardware\"][\"system_memory_bytes\"] > 0" &&
	q "select provenance from fidelity_cells where engine = '"'"'simgood'"'"'" >cprov.json &&
	jcheck cprov.json "len(o[\"adapter_sha256\"]) == 64" "len(o[\"profile_sha256\"]) == 64" \
	    "\"warden-simengine\" in o[\"engine_argv\"]"
'

test_expect_success 'an imported reference gives the F1 difference in pp and per-item agreement' '
	gold_reference bench ref.jsonl 0 &&
	expect_exit 0 warden --repo bench fidelity import-reference \
	    --engine vllm-a100 --run-id ref1 ref.jsonl &&
	warden --repo bench --json fidelity show f1 >f1r.json &&
	jcheck f1r.json "o[\"reference\"] == \"ref1\"" \
	    "all(r[\"reference\"][\"compared\"] == 200 for r in o[\"rows\"] if r[\"outcome\"] == \"complete\")" \
	    "all(abs(r[\"reference\"][\"delta_pp\"] - (r[\"weighted_f1\"] - 1) * 100) < 1e-6 for r in o[\"rows\"] if r[\"outcome\"] == \"complete\")" \
	    "all(abs(r[\"reference\"][\"agreement\"] - r[\"accuracy\"]) < 1e-9 for r in o[\"rows\"] if r[\"outcome\"] == \"complete\")" \
	    "len([r for r in o[\"rows\"] if r[\"outcome\"] == \"complete\"]) == 2" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simcrash\"][0][\"reference\"][\"delta_pp\"] is None" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simcrash\"][0][\"reference\"][\"not_measured\"] == \"server_crash\"" &&
	warden --repo bench fidelity show f1 >f1r.txt &&
	rows simcrash f1r.txt >row &&
	expect_grep "^  qwen3-0.6b  *0  *-  *-  *-  *- " row
'

test_expect_success 'an imported reference with failed answers: they count as wrong, never dropped' '
	python3 - ref.jsonl >reffail.jsonl <<-PY &&
	import json, sys
	for i, l in enumerate(open(sys.argv[1])):
	    o = json.loads(l)
	    if i % 20 == 0:
	        o["answer"] = None
	    print(json.dumps(o))
	PY
	expect_exit 0 warden --repo bench fidelity import-reference \
	    --engine vllm-nulls --run-id ref2 reffail.jsonl &&
	warden --repo bench --json fidelity show ref2 >ref2.json &&
	jcheck ref2.json "o[\"rows\"][0][\"request_failures\"] == 12" \
	    "abs(o[\"rows\"][0][\"accuracy\"] - 228 / 240) < 1e-9" \
	    "0 < o[\"rows\"][0][\"weighted_f1\"] < 1" &&
	warden --repo bench fidelity show ref2 >ref2.txt &&
	rows vllm-nulls ref2.txt >row &&
	expect_grep "^  qwen3-0.6b  *0  *[0-9.]*  *[0-9.]*  *95.0 .* 12  *imported$" row &&
	expect_exit 0 warden --repo bench fidelity import-reference \
	    --engine vllm-a100 --run-id ref3 ref.jsonl
'

test_expect_success 'a measured run marked as the reference compares with itself' '
	expect_exit 2 warden --repo bench fidelity mark-reference f1 &&
	expect_grep "has cells of 3 engines (.simbug., .simcrash., .simgood.); name the reference with --engine" err &&
	expect_exit 0 warden --repo bench fidelity mark-reference --engine simgood f1 &&
	warden --repo bench --json fidelity show f1 >self.json &&
	jcheck self.json "o[\"reference\"] == \"f1\"" \
	    "o[\"reference_engine\"] == \"simgood\"" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simgood\"][0][\"reference\"][\"delta_pp\"] == 0" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simgood\"][0][\"reference\"][\"agreement\"] == 1" \
	    "[r for r in o[\"rows\"] if r[\"engine\"] == \"simbug\"][0][\"reference\"][\"delta_pp\"] != 0" &&
	warden --repo bench fidelity list >list &&
	expect_grep "^run  *kind  *state  *created$" list &&
	expect_grep "^f1  *measured  done  *2[-0-9T:.]*Z  (reference)$" list &&
	expect_no_grep "^ref1 .*(reference)" list
'

test_expect_success 'bad input is refused with its file, line and field' '
	cd bench &&
	printf "{\"model\":\"qwen3-0.6b\",\"shots\":0,\"id\":\"gmrid-0001\",\"answer\":\"x\"}\n{\"model\":\"qwen3-0.6b\",\"shots\":0,\"id\":\"nope\",\"answer\":\"x\"}\n" >bad.jsonl &&
	expect_exit 2 warden fidelity import-reference bad.jsonl &&
	expect_grep "^warden: bad.jsonl:2: .id. .nope. is not an item of the task$" err &&
	expect_exit 2 warden fidelity import-reference ../ref.jsonl --engine "a/b" &&
	expect_exit 2 warden fidelity --shots 0,x &&
	expect_grep "shots" err &&
	mkdir -p badtask && cp workloads/fidelity/* badtask/ &&
	sed -i "3s/\"label\": \"[^\"]*\"/\"label\": \"phishing\"/" badtask/items.jsonl &&
	expect_exit 2 warden fidelity --task badtask &&
	expect_grep "^warden: badtask/items.jsonl:3: .label. .phishing. is not in the label set of task.json$" err &&
	expect_exit 2 warden fidelity --shots 6 &&
	expect_grep "6-shot needs 6 exemplars; the task has 5" err
'

test_expect_success 'a run killed inside a cell resumes: the cell runs again, nothing twice' '
	! WARDEN_FAULT=fidelity.cell:2 warden --repo bench fidelity --engine simgood \
	    --shots 0,5 --limit 30 --run-id f2 >/dev/null 2>&1 &&
	q "select state, count(*) from fidelity_cells where run_id = '"'"'f2'"'"' group by state order by state" >states &&
	printf "done|1\nrunning|1\n" >want && expect_equal want states &&
	expect_exit 0 warden --repo bench fidelity --resume --run-id f2 &&
	rows simgood out >row && expect_grep "^  qwen3-0.6b  *5 " row &&
	test "$(q "select count(*) from fidelity_cells where run_id = '"'"'f2'"'"' and state = '"'"'done'"'"'")" = 2 &&
	test "$(q "select count(*) from fidelity_predictions p join fidelity_cells c on c.id = p.cell_id where c.run_id = '"'"'f2'"'"'")" = 60 &&
	test "$(q "select count(*) from journal where kind = '"'"'fidelity.cell.discard'"'"'")" = 1 &&
	expect_exit 2 warden --repo bench fidelity --resume --run-id f2 &&
	expect_grep "fidelity run .f2. is done" err
'

test_expect_success 'no engine process is left running' '
	! ps -eo args | grep -F "$TEST_DIR" | grep -v -e grep -e "ps -eo"
'

test_done
