#!/bin/sh
# t5006: triage of a performance regression, with real pip and local
# wheels. A dependency's new release makes an engine ten times slower
# without an error (warden-simengine --broken-mode slow): every cell
# still completes, so nothing breaks; the cycle's regressions step
# alerts its throughput and TPOT against the published cycle, and triage
# takes the regressed engine as broken: it diffs its manifest against the
# published cycle, and its smoke runs, made at the regressed level, fail
# (the slowdown reproduces against the published figure) with the
# culprit alone moved and pass with it pinned back. The incident is confirmed and the
# pin queued for review, as for a break; an engine on the same release
# that did not slow down is healthy with it. The pin approved, the
# cycle's second round finds the series back: alerts and incident fixed.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

DB=bench/.warden/warden.db

# slow_engine NAME PKG MODE: a pip engine (package PKG) on warden-simengine
# at 10 ms a token, 8 tokens a reply, which MODE (slow: ten times slower;
# none: unchanged) when shared is at 2.0
slow_engine() {
	python3 - bench "$1" "$2" "$3" <<-'PY'
	import json, sys
	d, name, pkg, mode = sys.argv[1:]
	argv = ["warden-simengine", "--host", "{host}", "--port", "{port}",
	        "--model", "{model}", "--itl", "10", "--output-tokens", "8",
	        "--prefill-rate", "0"]
	if mode != "none":
	    argv += ["--version-from-pip", "{env_dir}/venv:shared",
	             "--broken-versions", "2.0", "--broken-mode", mode]
	a = {"schema": 1, "name": name, "api": "openai-chat",
	     "source": {"kind": "pip", "package": pkg},
	     "serve": {"argv": argv, "health": "/health", "ready_timeout_s": 20}}
	json.dump(a, open("%s/adapters/engines/%s.json" % (d, name), "w"), indent=2)
	p = json.load(open(d + "/adapters/profiles/qwen3-0.6b.json"))
	p["engines"][name] = {"model": "Qwen/Qwen3-0.6B"}
	json.dump(p, open(d + "/adapters/profiles/qwen3-0.6b.json", "w"), indent=2)
	pol = json.load(open(d + "/policy/warden.json"))
	pol["rosters"]["test"].append(name)
	json.dump(pol, open(d + "/policy/warden.json", "w"), indent=2)
	PY
}

test_expect_success 'wheels and a bench: slowy slows down with shared 2.0, steady does not' '
	make_wheel wheels shared 1.0 && make_wheel wheels shared 2.0 &&
	make_wheel wheels tok 1.0 && make_wheel wheels tok 1.1 &&
	make_wheel wheels fmt 1.0 && make_wheel wheels fmt 1.1 &&
	make_wheel wheels slowy 1.0 "shared>=1.0" "tok>=1.0" "fmt>=1.0" &&
	make_wheel wheels steady 1.0 "shared>=1.0" &&
	mv wheels/shared-2.0-py3-none-any.whl wheels/tok-1.1-py3-none-any.whl \
	    wheels/fmt-1.1-py3-none-any.whl . &&
	triage_bench bench "$TEST_DIR/wheels" &&
	slow_engine slowy slowy slow &&
	slow_engine steady steady none &&
	bench_policy bench \
	    "cycle={\"publish\": true, \"fidelity\": false, \"limit\": 8}" \
	    "regressions={\"threshold_pct\": 100, \"alpha\": 0.01, \"metrics\": [\"output_throughput\", \"median_tpot_ms\"]}" &&
	cycle_commit bench "two pip engines" &&
	tb lint
'

test_expect_success 'cycle c1: both engines fast, published' '
	WARDEN_CYCLE=c1 expect_exit 0 tb cycle &&
	expect_grep "^cells:     2: 2 ok$" out &&
	expect_grep "^published: snapshot " out
'

test_expect_success 'cycle c2: shared 2.0 slows slowy ten-fold; nothing breaks, its series alert' '
	mv shared-2.0-py3-none-any.whl tok-1.1-py3-none-any.whl \
	    fmt-1.1-py3-none-any.whl wheels/ &&
	WARDEN_CYCLE=c2 expect_exit 4 tb cycle &&
	cp out c2.out &&
	expect_grep "^cells:     2: 2 ok$" c2.out &&
	expect_grep "^broke:     nothing$" c2.out &&
	tb --json regressions list >alerts.json &&
	cycle_json alerts.json \
	    "sorted((a[\"engine\"], a[\"concurrency\"], a[\"metric\"]) for a in j) == [(\"slowy\", 1, \"median_tpot_ms\"), (\"slowy\", 1, \"output_throughput\")]" \
	    "all(a[\"record\"][\"baseline\"][\"cycles\"] == [\"c1\"] for a in j)"
'

test_expect_success 'triage takes slowy as broken in those series and searches its changes' '
	sqlite3 $DB "select result from triage_runs order by id desc limit 1" >triage.json &&
	cycle_json triage.json \
	    "j[\"broken\"] == [\"slowy\"]" \
	    "j[\"engines\"][\"steady\"][\"status\"] == \"healthy\"" \
	    "j[\"engines\"][\"slowy\"][\"good_cycle\"] == \"c1\"" \
	    "sorted(c[\"metric\"] for c in j[\"engines\"][\"slowy\"][\"failing_cells\"]) == [\"median_tpot_ms\", \"output_throughput\"]" \
	    "{c[\"outcome\"] for c in j[\"engines\"][\"slowy\"][\"failing_cells\"]} == {\"regression\"}" \
	    "{c[\"status\"] for c in j[\"engines\"][\"slowy\"][\"failing_cells\"]} == {\"ok\"}" \
	    "[(x[\"package\"], x[\"score\"], x[\"healthy_with\"]) for x in j[\"suspects\"][\"slowy\"] if x[\"package\"] == \"shared\"] == [(\"shared\", 0, [\"steady\"])]" \
	    "j[\"searches\"][\"slowy\"][\"kind\"] == \"single\"" \
	    "[(c[\"package\"], c[\"from\"], c[\"to\"]) for c in j[\"searches\"][\"slowy\"][\"culprits\"]] == [(\"shared\", \"1.0\", \"2.0\")]"
'

test_expect_success 'its smoke runs measure the regressed level: slow with shared alone at 2.0, fast with it pinned back' '
	sqlite3 $DB "select purpose, pins, outcome from triage_smoke where engine = '"'"'slowy'"'"' order by id" >runs &&
	printf "%s\n" "bisect|{\"fmt\":\"1.0\",\"tok\":\"1.0\"}|fail" \
	    "confirm|{\"shared\":\"1.0\"}|pass" >runs.expected &&
	expect_equal runs.expected runs &&
	sqlite3 $DB "select detail from triage_smoke where engine = '"'"'slowy'"'"' and outcome = '"'"'fail'"'"'" >fail.detail &&
	expect_grep "^qwen3-0.6b chat c=1: \(output_throughput\|median_tpot_ms\) [0-9.]* against [0-9.]* \(tok/s\|ms\) published ([0-9]* % worse, threshold 100 %)$" fail.detail &&
	sqlite3 $DB "select run_id from triage_smoke where engine = '"'"'slowy'"'"'" >smoke.runs &&
	for r in $(cat smoke.runs); do
		test "$(sqlite3 $DB "select group_concat(concurrency) from campaign_sweeps where run_id = '"'"'$r'"'"'")" = 1 || exit 1
	done
'

test_expect_success 'the incident is confirmed and its pin queued for review, as for a break' '
	tb --json incident show 1 >inc.json &&
	cycle_json inc.json \
	    "j[\"state\"] == \"confirmed\" and j[\"kind\"] == \"dependency\"" \
	    "j[\"record\"][\"engines\"] == [\"slowy\"]" \
	    "j[\"record\"][\"healthy_with\"] == [\"steady\"]" \
	    "j[\"record\"][\"proposals\"][0][\"pins\"] == {\"slowy\": {\"shared\": \"shared==1.0\"}}" &&
	expect_grep "^incidents: opened #1$" c2.out &&
	expect_grep "^approve:   warden review approve 2 " c2.out &&
	expect_grep "^alerts:    #[12] slowy qwen3-0.6b/chat c=1 " c2.out &&
	tb incident show 1 >inc.raw && unwrap inc.raw >inc.txt &&
	expect_grep "^    qwen3-0.6b chat c=1: \(output_throughput\|median_tpot_ms\) [0-9.]* .*regression alert [0-9]*$" inc.txt &&
	test $(grep -c "^    qwen3-0.6b chat c=1: " inc.txt) -eq $(sort -u inc.txt | grep -c "^    qwen3-0.6b chat c=1: ") &&
	tb journal verify
'

# Three requests a side are fewer than regressions.min_samples: the rule
# says so rather than guess, and shows the figures (ten-fold apart).
test_expect_success 'the pin carries its speed: the smoke run that failed against the one that passed, by the regressions rule' '
	tb --json review show 2 >rev.json &&
	cycle_json rev.json \
	    "[e for e in j[\"evidence\"] if e[\"kind\"] == \"triage-smoke\"][0][\"body\"][\"speed\"][\"cells\"][0][\"engine\"] == \"slowy\"" \
	    "[m[\"ratio\"] for m in [e for e in j[\"evidence\"] if e[\"kind\"] == \"triage-smoke\"][0][\"body\"][\"speed\"][\"cells\"][0][\"metrics\"] if m[\"metric\"] == \"median_tpot_ms\"][0] < 0.3" &&
	tb review show 2 >show.raw && unwrap show.raw >show.out &&
	expect_grep "^  speed (before: the smoke runs that failed; after: the smoke runs that passed; regressions rule: 100 % worse at p < 0.01):$" show.out &&
	expect_grep "^    slowy qwen3-0.6b/chat c=1 (3 → 3 requests): too few samples to tell$" show.out
'

test_expect_success 'the agent gets the regression as its task: the metric, before, after, how much worse' '
	expect_exit 0 tb agent run --incident 1 --dry-run &&
	cp out task.md &&
	expect_grep "^# warden agent run [0-9]*: incident 1$" task.md &&
	expect_grep "^| slowy | qwen3-0.6b | chat | 1 | regression | [0-9]*/[0-9]* | ok |$" task.md &&
	expect_grep "^## Regressed series$" task.md &&
	expect_grep "^| engine | model | split | c | metric | before | after | unit | worse | threshold | alert |$" task.md &&
	expect_grep "^| slowy | qwen3-0.6b | chat | 1 | median_tpot_ms | [0-9.]* | [0-9.]* | ms | [0-9]* % | 100 % | [12] |$" task.md &&
	expect_grep "^| slowy | qwen3-0.6b | chat | 1 | output_throughput | [0-9.]* | [0-9.]* | tok/s | [0-9]* % | 100 % | [12] |$" task.md &&
	sed -n "/^## The problem as JSON$/,\$p" task.md | sed "1,/^\`\`\`json$/d; /^\`\`\`$/,\$d" >problem.json &&
	cycle_json problem.json \
	    "j[\"kind\"] == \"incident\" and j[\"incident\"] == 1" \
	    "sorted(c[\"metric\"] for c in j[\"failing_cells\"]) == [\"median_tpot_ms\", \"output_throughput\"]" \
	    "all(c[\"before\"] > 0 and c[\"after\"] > 0 and c[\"worse_pct\"] >= 100 and c[\"threshold_pct\"] == 100 for c in j[\"failing_cells\"])" \
	    "all(c[\"after\"] > c[\"before\"] if c[\"metric\"] == \"median_tpot_ms\" else c[\"after\"] < c[\"before\"] for c in j[\"failing_cells\"])" \
	    "{c[\"unit\"] for c in j[\"failing_cells\"]} == {\"ms\", \"tok/s\"}" \
	    "{c[\"state\"] for c in j[\"failing_cells\"]} == {\"untriaged\"}"
'

test_expect_success 'the pin approved, round 2 is fast again: the alerts and the incident are fixed' '
	tb review approve 2 --as "Test Maintainer <maintainer@example.org>" >/dev/null &&
	expect_exit 0 tb cycle &&
	expect_grep "^cycle c2 (roster test), round 2: done, exit 0$" out &&
	summary_alerts out >alerts.txt &&
	expect_grep "^           #2 slowy qwen3-0.6b/chat c=1 median_tpot_ms: .*, back within the threshold, fixed$" alerts.txt &&
	expect_grep "^published: snapshot " out &&
	tb --json regressions list >fixed.json &&
	cycle_json fixed.json "[a[\"state\"] for a in j] == [\"fixed\", \"fixed\"]" \
	    "all(a[\"record\"][\"seen\"][-1][\"round\"] == 2 and a[\"record\"][\"seen\"][-1][\"fixed\"] for a in j)" &&
	test "$(tb --json incident show 1 | python3 -c "import json, sys; print(json.load(sys.stdin)[\"state\"])")" = fixed &&
	tb journal verify
'

test_done
