#!/bin/sh
# t3007: a change's smoke measures speed. Before and after are run
# interleaved on this machine and judged by the regressions policy's rule
# (rank test and threshold). A change that makes the simulated engine's
# decode five times slower (--itl 10 -> 50 ms, a controlled cause far past
# the 10 % threshold) is flagged by review smoke, by the agent's smoke
# and by pr-check --smoke, shown by review show, and approve takes it only
# with --accept-regression, journaled. A change that leaves the engine's speed
# alone is "no measurable change" while every core is busy (a busy loop
# per core runs for the whole test). No figure is asserted beyond the
# direction of the controlled cause.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

MAINT="Maint Ainer <maint@example.org>"
DB=bench/.warden/warden.db

# Every core busy for the whole test; a loop ends with the script too,
# should the script be killed before test_done stops it.
for _c in $(seq "$(nproc)"); do
	sh -c 'while kill -0 "$1" 2>/dev/null; do :; done' busy $$ &
	test_cleanup_pid $!
done

# edit NAME PYTHON: a contributor's change to simfix's adapter (a), queued.
edit() {
	git -C bench checkout -q --detach official &&
	python3 - "$2" <<-'PY' &&
	import json, sys
	p = "bench/adapters/engines/simfix.json"
	a = json.load(open(p))
	exec(sys.argv[1])
	json.dump(a, open(p, "w"), indent=2)
	PY
	git -C bench diff >"$1.patch" &&
	git -C bench checkout -q -- adapters &&
	bw patch submit "$TEST_DIR/$1.patch" --source community \
	    --author "Contributor <c@example.org>" --note "$1" >/dev/null
}

SLOWER='a["serve"]["argv"][a["serve"]["argv"].index("--itl") + 1] = "50"'

# verdicts FILE: the smoke's cells' verdicts and its metrics', one a line.
verdicts() {
	python3 - "$1" <<-'PY'
	import json, sys
	d = json.load(open(sys.argv[1]))
	s = d.get("smoke", d)
	for c in s["speed"]["cells"]:
	    print("cell", c["engine"], c["concurrency"], c["verdict"],
	          c["requests_before"], c["requests_after"])
	    for m in c["metrics"]:
	        print("metric", m["metric"], m["verdict"], m["ratio"])
	PY
}

test_expect_success 'a bench with a working simulated engine' '
	bench_init bench &&
	sim_adapter bench simfix --mode continuous --max-batch 4 --itl 10 \
	    --prefill-rate 2000 --output-tokens 16 --weights-mb 8 &&
	bench_policy bench "agent.sandbox=\"best-effort\"" \
	    "agent.smoke={\"concurrency\": [1], \"prompts\": 4, \"rounds\": 2}" \
	    "caps.warmups=1" "caps.stop_grace_s=1" "caps.hang_s=60" \
	    "caps.ready_timeout_s=60" &&
	agent_commit bench "a bench with a working engine"
'

test_expect_success 'a change that leaves the speed alone: no measurable change, on a busy machine' '
	edit patience "a[\"serve\"][\"ready_timeout_s\"] = 45" &&
	expect_exit 0 bw review smoke 1 && unwrap out >out.u && mv out.u out &&
	expect_grep "^review 1: passes before and after the change$" out &&
	expect_grep "^  simfix  qwen3-0.6b  chat   1  complete 8/8  complete 8/8$" out &&
	expect_grep "^  speed (2 interleaved rounds a side; regressions rule: 10 % worse at p < 0.01):$" out &&
	expect_grep "^    simfix qwen3-0.6b/chat c=1 (8 → 8 requests): no measurable change$" out &&
	expect_grep "^      median_tpot_ms " out &&
	test "$(sqlite3 $DB "select count(*) from campaign_runs where run_id like \"review-1-%-simfix-before%\"")" = 2 &&
	test "$(sqlite3 $DB "select count(*) from campaign_runs where run_id like \"review-1-%-simfix-after%\"")" = 2 &&
	expect_exit 0 bw --json review show 1 &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); print(json.dumps([e[\"body\"] for e in d[\"evidence\"] if e[\"kind\"]==\"smoke\"][-1]))" >smoke.json &&
	verdicts smoke.json >v &&
	expect_grep "^cell simfix 1 unchanged 8 8$" v &&
	expect_no_grep "regressed" v &&
	expect_exit 0 bw review approve 1 --as "$MAINT"
'

test_expect_success 'a change that makes decode 5x slower: review smoke flags it' '
	edit slower "$SLOWER" &&
	expect_exit 1 bw review smoke 2 && unwrap out >out.u && mv out.u out &&
	expect_grep "^review 2: passes before and after the change, REGRESSES after it$" out &&
	expect_grep "^    simfix qwen3-0.6b/chat c=1 (8 → 8 requests): .*slower decode: TPOT p50 [0-9.]* → [0-9.]* ms, p [<=] 0\.0" out &&
	expect_grep "^      median_tpot_ms .* regressed$" out &&
	expect_grep "^warden: review 2: passes before and after the change, REGRESSES after it$" err &&
	expect_exit 0 bw --json review show 2 &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); print(json.dumps([e[\"body\"] for e in d[\"evidence\"] if e[\"kind\"]==\"smoke\"][-1]))" >smoke.json &&
	verdicts smoke.json >v &&
	expect_grep "^cell simfix 1 regressed 8 8$" v &&
	python3 - smoke.json <<-PY
	import json, sys
	s = json.load(open(sys.argv[1]))
	assert s["regressed"] is True and s["passed"] is False, s
	m = {x["metric"]: x for x in s["speed"]["cells"][0]["metrics"]}
	# the controlled cause: 5x the inter-token delay
	assert m["median_tpot_ms"]["verdict"] == "regressed", m
	assert m["median_tpot_ms"]["ratio"] > 2, m
	assert m["median_tpot_ms"]["p_value"] < 0.01, m
	PY
'

test_expect_success 'review show renders the verdicts' '
	expect_exit 0 bw review show 2 && unwrap out >out.u && mv out.u out &&
	expect_grep "^evidence .* smoke: passes before and after the change, REGRESSES after it" out &&
	expect_grep "^    simfix qwen3-0.6b/chat c=1 (8 → 8 requests): .*slower decode: TPOT p50" out
'

test_expect_success 'the agent'"'"'s smoke measures it the same way: its evidence says the change regresses' '
	cat >slower-agent.sh <<-\EOF &&
	#!/bin/sh
	sed "s/\"10\"/\"50\"/" adapters/engines/simfix.json >"$TMPDIR/a.json"
	cat "$TMPDIR/a.json" >adapters/engines/simfix.json
	echo "slower-agent: done"
	EOF
	agent_policy bench "agent.command=[\"sh\", \"$TEST_DIR/slower-agent.sh\", \"{prompt_file}\"]" &&
	expect_exit 0 bw agent run --engine simfix && unwrap out >out.u && mv out.u out &&
	expect_grep "^smoke:    passes before and after the change, REGRESSES after it$" out &&
	expect_grep "slower decode: TPOT p50 " out &&
	id=$(sqlite3 $DB "select max(id) from reviews where source = '"'"'agent'"'"'") &&
	expect_exit 0 bw --json review show $id &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); print(json.dumps([e[\"body\"] for e in d[\"evidence\"] if e[\"kind\"]==\"smoke\"][-1]))" >agent-smoke.json &&
	verdicts agent-smoke.json >v &&
	expect_grep "^cell simfix 1 regressed 8 8$" v &&
	expect_exit 1 bw review approve $id --as "$MAINT" &&
	expect_grep "was measured as a regression by its smoke" err &&
	bw review reject $id --reason "slower" >/dev/null
'

test_expect_success 'pr-check --smoke fails a pull request that slows the engine' '
	git -C bench checkout -q -B pr-slow official &&
	python3 - "$SLOWER" <<-PY &&
	import json, sys
	p = "bench/adapters/engines/simfix.json"
	a = json.load(open(p))
	exec(sys.argv[1])
	json.dump(a, open(p, "w"), indent=2)
	PY
	git -C bench commit -q -am "slower" &&
	git -C bench checkout -q --detach official &&
	expect_exit 1 bw pr-check official pr-slow --smoke && unwrap out >out.u && mv out.u out &&
	expect_grep "^smoke: passes before and after the change, REGRESSES after it$" out &&
	expect_grep "slower decode: TPOT p50" out &&
	expect_grep "^pr-check: FAIL" out
'

test_expect_success 'approve refuses a change measured as a regression, and says why' '
	git -C bench rev-parse official >official.before &&
	expect_exit 1 bw review approve 2 --as "$MAINT" &&
	expect_grep "^warden: review 2 was measured as a regression by its smoke: simfix qwen3-0.6b/chat c=1: .*slower decode: TPOT p50 .*; it stays pending (review approve --accept-regression takes it, and the journal says so)$" err &&
	test "$(sqlite3 $DB "select status from reviews where id = 2")" = pending &&
	git -C bench rev-parse official >official.now &&
	expect_equal official.before official.now &&
	sqlite3 $DB "select body from journal where kind = \"review.approve-failed\"" >failed &&
	expect_grep "measured as a regression" failed
'

test_expect_success 'approve --accept-regression takes it, and the journal says what was accepted' '
	expect_exit 0 bw review approve 2 --as "$MAINT" --accept-regression &&
	expect_grep "^approved review 2: official is now " out &&
	sqlite3 $DB "select body from journal where kind = \"review.approved\" order by seq desc limit 1" >approved &&
	python3 - approved <<-PY
	import json, sys
	b = json.load(open(sys.argv[1]))
	assert b["id"] == 2, b
	a = b["accepted_regression"]
	assert "slower decode" in a["text"], a
	assert a["cells"][0]["engine"] == "simfix", a
	assert a["cells"][0]["concurrency"] == 1, a
	PY
'

test_done
