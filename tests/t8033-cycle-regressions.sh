#!/bin/sh
# t8033: performance regressions as alerts. Two published cycles of a
# demo-like roster (continuous, padded and serial simulated engines);
# between them a reviewed adapter change makes one engine batch far worse
# at c=8 only (its inter-token latency grows eight-fold with eight
# requests decoding; c=1 is untouched) and another decode 2.25 times
# slower everywhere, under the policy's threshold (200 % worse: three
# times) though far past the old +-30 % rule. Exactly the first engine's c=8 series alert; the
# cycle killed right after recording them resumes without a duplicate;
# the cycle prints them, its journal has a Regressions section, and
# triage runs on the regressed engine as on a break: its smoke runs of
# official's trees at the regressed level pass at the change's parent and
# fail at the change (the slowdown against the published figure), and
# triage queues the revert, for which the cycle waits. The alerts' states
# are set with who and why, journaled; bad input exits 2; `regressions
# list --json` is right. The revert approved, the cycle's second round
# finds the series back within the threshold: the alert and the incident
# are fixed. Speeds differ by large factors, so no verdict is timing
# noise.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

# 20 ms a token, prompts prefilled at 10k tokens/s (TTFT of tens of ms,
# not the sub-millisecond overhead a busy machine doubles at will), 32 MiB
# of weights (a footprint that does not wander); 16 tokens a reply: the
# ratios the tests assert come from the per-token rate, not the length
SIM="--itl 20 --itl-growth 0 --prefill-rate 10000 --output-tokens 16 --weights-mb 32"
DB=bench/.warden/warden.db

# set_arg ENGINE FLAG VALUE: change one serve flag of an adapter
set_arg() {
	python3 - bench "$1" "$2" "$3" <<-'PY'
	import json, sys
	d, name, flag, value = sys.argv[1:]
	p = "%s/adapters/engines/%s.json" % (d, name)
	a = json.load(open(p))
	argv = a["serve"]["argv"]
	argv[argv.index(flag) + 1] = value
	json.dump(a, open(p, "w"), indent=2)
	PY
}

# alerts FILE EXPR...: `regressions list --json` into FILE, and python3
# asserts over it (bound to j)
alerts() {
	_f=$1; shift
	warden --repo bench --json regressions list >"$_f" && cycle_json "$_f" "$@"
}

test_expect_success 'a bad regressions section is named by file, line and field; the metrics names of before the glossary are read as its names' '
	warden init badpol >/dev/null &&
	bench_policy badpol "regressions={\"threshold_pct\": 0, \"alpha\": 1, \"baseline_cycles\": 0, \"min_samples\": 1, \"metrics\": [\"ttft_p90\"], \"window\": 3}" &&
	(cd badpol && expect_exit 1 warden lint policy/warden.json) &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .regressions.threshold_pct. must be more than 0$" badpol/out &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .regressions.alpha. must be more than 0 and less than 1$" badpol/out &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .regressions.baseline_cycles. must be at least 1$" badpol/out &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .regressions.min_samples. must be at least 2$" badpol/out &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .regressions.metrics\[0\]. must be one of .output_throughput., .median_ttft_ms., .p99_ttft_ms., .median_tpot_ms., .peak_engine_memory_bytes., not .ttft_p90.$" badpol/out &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .regressions.window. is not a known field$" badpol/out &&
	bench_policy badpol "regressions={\"metrics\": [\"median_ttft_ms\", \"median_tpot_ms\", \"median_ttft_ms\"]}" &&
	(cd badpol && expect_exit 2 warden campaign --limit 1) &&
	expect_grep "^warden: policy/warden.json:[0-9]*:[0-9]*: .regressions.metrics. lists .median_ttft_ms. twice$" badpol/err &&
	bench_policy badpol "regressions={\"metrics\": [\"ttft_p50\", \"peak_engine_memory\"]}" &&
	(cd badpol && expect_exit 0 warden lint policy/warden.json) &&
	bench_policy badpol "regressions={\"metrics\": [\"tpot_p50\", \"median_tpot_ms\"]}" &&
	(cd badpol && expect_exit 2 warden campaign --limit 1) &&
	expect_grep "^warden: policy/warden.json:[0-9]*:[0-9]*: .regressions.metrics. lists .median_tpot_ms. twice$" badpol/err
'

test_expect_success 'a demo-like bench: three serving modes, published cycles compared' '
	bench_init bench &&
	sim_adapter bench simcont --mode continuous $SIM &&
	sim_adapter bench simpad --mode padded $SIM &&
	sim_adapter bench simser --mode serial $SIM &&
	bench_policy bench "campaign.concurrency=[1, 8]" "caps.warmups=1" \
	    "caps.stop_grace_s=1" "caps.hang_s=10" \
	    "cycle={\"publish\": true, \"fidelity\": false, \"limit\": 8}" \
	    "regressions={\"threshold_pct\": 200, \"alpha\": 0.01, \"baseline_cycles\": 3, \"min_samples\": 5, \"metrics\": [\"output_throughput\", \"median_ttft_ms\", \"p99_ttft_ms\", \"median_tpot_ms\", \"peak_engine_memory_bytes\"]}" &&
	(cd bench && warden lint >/dev/null) &&
	cycle_commit bench "three simulated engines"
'

test_expect_success 'the first cycle publishes and has nothing to compare with' '
	WARDEN_CYCLE=r1 expect_exit 0 warden --repo bench cycle &&
	expect_grep "^alerts:    none: no published cycle measured on this machine to compare with$" out &&
	expect_grep "^regressions: nothing to compare with" err &&
	md bench r1 >r1.md &&
	expect_grep "^## Regressions$" r1.md &&
	expect_grep "^Nothing compared: no published cycle measured on this machine to compare with\.$" r1.md &&
	expect_grep "^- \*\*Regressions\*\*: 0 alerts opened, 0 seen again, 0 fixed$" r1.md &&
	expect_exit 0 warden --repo bench regressions &&
	test ! -s out &&
	expect_exit 0 warden --repo bench --json regressions list &&
	cycle_json out "j == []"
'

test_expect_success 'a reviewed change: simcont collapses at c=8, simpad decodes 2.25 times slower' '
	set_arg simcont --itl-growth 1 &&
	set_arg simpad --itl 45 &&
	cycle_commit bench "simcont batches worse, simpad decodes slower"
'

test_expect_success 'killed after recording its alerts, the cycle resumes without a duplicate' '
	rc=0 && WARDEN_CYCLE=r2 WARDEN_FAULT=regress.recorded warden --repo bench \
	    cycle >kill.out 2>&1 || rc=$? &&
	test "$rc" = 137 &&
	test "$(sqlite3 $DB "select state from cycle_steps where cycle = '"'"'r2'"'"' and step = '"'"'regressions'"'"'")" = running &&
	sqlite3 $DB "select id from regression_alerts order by id" >ids.before &&
	test -s ids.before &&
	expect_exit 4 warden --repo bench cycle &&
	cp out r2.out && cp err r2.err &&
	sqlite3 $DB "select id from regression_alerts order by id" >ids.after &&
	expect_equal ids.before ids.after &&
	test "$(sqlite3 $DB "select count(*) from journal where kind = '"'"'regression.opened'"'"'")" = "$(wc -l <ids.after)" &&
	expect_grep "^cycle r2 (roster test), round 1: waiting, exit 4$" r2.out
'

test_expect_success 'exactly simcont at c=8 alerts: its throughput and TPOT' '
	alerts list.json \
	    "len(j) >= 2" \
	    "{(a[\"engine\"], a[\"model\"], a[\"split\"], a[\"concurrency\"]) for a in j} == {(\"simcont\", \"qwen3-0.6b\", \"chat\", 8)}" \
	    "{\"output_throughput\", \"median_tpot_ms\"} <= {a[\"metric\"] for a in j}" \
	    "len({a[\"metric\"] for a in j}) == len(j)" \
	    "all(a[\"state\"] == \"untriaged\" and a[\"cycle\"] == \"r2\" and a[\"round\"] == 1 and a[\"run_id\"] == \"r2-r1-campaign\" and a[\"last_cycle\"] == \"r2\" for a in j)" \
	    "all(a[\"p_value\"] < 0.01 and a[\"record\"][\"test\"] == \"mann-whitney-u\" and a[\"record\"][\"worse_pct\"] >= 200 and a[\"record\"][\"significant\"] and a[\"record\"][\"beyond_threshold\"] for a in j)" \
	    "all(a[\"record\"][\"baseline\"][\"cycles\"] == [\"r1\"] and a[\"record\"][\"baseline\"][\"runs\"] == [\"r1-r1-campaign\"] for a in j)" \
	    "all(a[\"record\"][\"n_after\"] == 8 and a[\"record\"][\"n_before\"] == 8 for a in j)" \
	    "[a for a in j if a[\"metric\"] == \"output_throughput\"][0][\"after\"] * 3 <= [a for a in j if a[\"metric\"] == \"output_throughput\"][0][\"before\"]" \
	    "[a for a in j if a[\"metric\"] == \"output_throughput\"][0][\"record\"][\"alternative\"] == \"less\"" \
	    "[a for a in j if a[\"metric\"] == \"median_tpot_ms\"][0][\"after\"] >= 3 * [a for a in j if a[\"metric\"] == \"median_tpot_ms\"][0][\"before\"]" &&
	summary_alerts r2.out >r2.alerts &&
	expect_grep "^alerts:    #1 simcont qwen3-0.6b/chat c=8 [a-z0-9_]*: [0-9.]* → [0-9.]* [a-z/]* ([-+][0-9.]* %), new, untriaged$" r2.alerts &&
	expect_grep "^regressions: [0-9]* series compared with 1 published cycle: [0-9]* alerts opened, 0 seen again, 0 fixed$" r2.err &&
	expect_exit 0 warden --repo bench regressions --engine simpad &&
	test ! -s out &&
	expect_exit 0 warden --repo bench regressions --state untriaged &&
	test "$(grep -c "^[0-9]" out)" = "$(wc -l <ids.after)" &&
	test "$(wc -l <out)" = $((2 * $(wc -l <ids.after))) &&
	expect_grep "^1    untriaged    r2           simcont qwen3-0.6b/chat c=8 [a-z0-9_]*$" out &&
	expect_grep "^     [0-9.]* → [0-9.]* [a-z/]* ([-+][0-9.]* %), p [0-9.e-]*$" out
'

test_expect_success 'the old +-30 % rule is gone: simpad decodes 2.25 times slower, under the threshold, and nothing says so' '
	python3 - "$DB" <<-PY &&
	import json, sqlite3, sys
	db = sqlite3.connect(sys.argv[1])
	def tpot(run):
	    return max(json.loads(s)["median_tpot_ms"] for (s,) in db.execute(
	        "select summary from campaign_sweeps where run_id = ? and engine = ?", (run, "simpad")))
	# The cause is set, not measured: --itl 20 -> 45 ms, decode 2.25x
	# slower, which costs more than 30 % of the throughput the old rule
	# watched. The inter-token gaps show it whatever the load (a busy
	# machine adds a little to each gap, never takes away): the test
	# holds them to a margin far from 2.25, never a throughput ratio.
	r1, r2 = tpot("r1-r1-campaign"), tpot("r2-r1-campaign")
	assert r2 > 1.6 * r1, (r1, r2)
	PY
	md bench r2 >r2.md &&
	expect_no_grep "since the previous cycle" r2.md &&
	sed -n "/^## Regressions$/,/^## Suspicious$/p" r2.md >r2.regressions &&
	expect_no_grep "simpad" r2.regressions &&
	expect_no_grep "simser" r2.regressions &&
	test "$(sqlite3 $DB "select count(*) from regression_alerts where engine <> '"'"'simcont'"'"' or concurrency <> 8")" = 0
'

test_expect_success 'the cycle journal has a Regressions section listing them' '
	grep "^## " r2.md >heads &&
	expect_grep "^## OOM$" heads &&
	test "$(sed -n "/^## OOM$/{n;p;}" heads)" = "## Regressions" &&
	expect_grep "^- \*\*Regressions\*\*: [0-9]* alerts opened, 0 seen again, 0 fixed$" r2.md &&
	expect_grep "^[0-9]* series of round 1 compared with the published cycle r1: Mann-Whitney U on the per-request samples, p < 0.01, and at least 200 % worse\.$" r2.regressions &&
	expect_grep "^| Alert | Series | Before → after | Change | p-value | State |$" r2.regressions &&
	expect_grep "^| #1 | simcont qwen3-0.6b/chat c=8 [a-z0-9_]* | [0-9.]* → [0-9.]* [a-zA-Z/]* | [-+][0-9.]* % | [0-9.e-]* | untriaged (new) |$" r2.regressions &&
	test "$(grep -c "^| #[0-9]* | simcont qwen3-0.6b/chat c=8 " r2.regressions)" = "$(wc -l <ids.after)" &&
	expect_grep "^| #[0-9]* | simcont qwen3-0.6b/chat c=8 output_throughput | [0-9.]* → [0-9.]* tok/s | -[0-9.]* % | [0-9.e-]* | untriaged (new) |$" r2.regressions &&
	expect_grep "| 1 | regressions | done | [0-9]* series compared with cycles r1; alerts opened #1" r2.md &&
	warden --repo bench journal verify
'

test_expect_success 'triage runs on the regressed engine as on a break: the change is proven by smoke runs at c=8 and its revert queued' '
	sqlite3 $DB "select result from cycle_steps where cycle = '"'"'r2'"'"' and step = '"'"'triage'"'"'" >triage.json &&
	cycle_json triage.json "j[\"broken\"] == [\"simcont\"]" "len(j[\"opened\"]) == 1" \
	    "len(j[\"reviews\"]) == 1" &&
	warden --repo bench --json incident show 1 >inc.json &&
	change=$(sqlite3 $DB "select merged_commit from reviews where note = '"'"'simcont batches worse, simpad decodes slower'"'"'") &&
	cycle_json inc.json \
	    "j[\"record\"][\"engines\"] == [\"simcont\"]" \
	    "j[\"state\"] == \"confirmed\" and j[\"kind\"] == \"change\"" \
	    "[c[\"commit\"] for c in j[\"record\"][\"culprits\"]] == [\"$change\"]" \
	    "[s[\"outcome\"] for s in j[\"smoke\"]] == [\"pass\", \"fail\"]" \
	    "\"qwen3-0.6b chat c=8: \" in j[\"smoke\"][1][\"detail\"] and \"published (\" in j[\"smoke\"][1][\"detail\"] and \"threshold 200 %)\" in j[\"smoke\"][1][\"detail\"]" &&
	for r in $(sqlite3 $DB "select run_id from triage_smoke where engine = '"'"'simcont'"'"'"); do
		test "$(sqlite3 $DB "select group_concat(distinct concurrency) from campaign_sweeps where run_id = '"'"'$r'"'"'")" = 8 || exit 1
	done &&
	expect_grep "^approve:   warden review approve 3 " r2.out &&
	cycle_json inc.json \
	    "j[\"record\"][\"per_engine\"][\"simcont\"][\"good_cycle\"] == \"r1\"" \
	    "{c[\"outcome\"] for c in j[\"record\"][\"per_engine\"][\"simcont\"][\"failing_cells\"]} == {\"regression\"}" \
	    "{(c[\"concurrency\"], c[\"metric\"]) for c in j[\"record\"][\"per_engine\"][\"simcont\"][\"failing_cells\"]} == {(8, a[\"metric\"]) for a in json.load(open(\"list.json\"))}" \
	    "all(c[\"completed\"] == 8 and \"regression alert\" in c[\"detail\"] for c in j[\"record\"][\"per_engine\"][\"simcont\"][\"failing_cells\"])" &&
	expect_grep "^incidents: opened #1$" r2.out
'

test_expect_success 'an alert is set with who and why, journaled; show says all of it' '
	expect_exit 0 warden --repo bench regressions set 1 acknowledged \
	    --reason "c=8 batching got worse with the adapter change" \
	    --by "Ann Maintainer <ann@example.org>" &&
	expect_grep "^regression alert 1: acknowledged$" out &&
	expect_exit 0 warden --repo bench --json regressions set 2 invalid \
	    --reason "the same change, tracked in alert 1" &&
	cycle_json out "j == {\"alert\": 2, \"state\": \"invalid\", \"who\": \"Test Maintainer <maintainer@example.org>\", \"reason\": \"the same change, tracked in alert 1\"}" &&
	warden --repo bench --json journal show --kind regression.state >states.json &&
	cycle_json states.json "[(e[\"subject\"], e[\"body\"][\"from\"], e[\"body\"][\"to\"], e[\"body\"][\"who\"], e[\"body\"][\"reason\"]) for e in j] == [(\"1\", \"untriaged\", \"acknowledged\", \"Ann Maintainer <ann@example.org>\", \"c=8 batching got worse with the adapter change\"), (\"2\", \"untriaged\", \"invalid\", \"Test Maintainer <maintainer@example.org>\", \"the same change, tracked in alert 1\")]" &&
	expect_exit 0 warden --repo bench regressions show 1 &&
	unwrap out >out.u && mv out.u out &&
	expect_grep "^regression alert 1: acknowledged$" out &&
	expect_grep "^series:   simcont qwen3-0.6b/chat c=8 " out &&
	expect_grep "^test:     Mann-Whitney U = [0-9.]*, z = [-0-9.]*, one-sided (\(less\|greater\)), p = [0-9.e-]* (alpha 0.01); 8 samples now, 8 before$" out &&
	expect_grep "^baseline: cycles r1; runs r1-r1-campaign$" out &&
	expect_grep "^  [0-9T:.Z-]* (new) → untriaged by warden cycle: simcont qwen3-0.6b/chat c=8 " out &&
	expect_grep "^  [0-9T:.Z-]* untriaged → acknowledged by Ann Maintainer <ann@example.org>: c=8 batching got worse with the adapter change$" out &&
	warden --repo bench --json regressions show 1 >show.json &&
	cycle_json show.json "j[\"state\"] == \"acknowledged\"" "[t[\"to\"] for t in j[\"transitions\"]] == [\"untriaged\", \"acknowledged\"]" &&
	alerts list2.json "sorted((a[\"id\"], a[\"state\"]) for a in j)[:2] == [(1, \"acknowledged\"), (2, \"invalid\")]" &&
	warden --repo bench journal verify
'

test_expect_success 'bad input exits 2 with a clear message' '
	expect_exit 2 warden --repo bench regressions show 99 &&
	expect_grep "^warden: no regression alert 99$" err &&
	expect_exit 2 warden --repo bench regressions set 99 fixed --reason x &&
	expect_grep "^warden: no regression alert 99$" err &&
	expect_exit 2 warden --repo bench regressions set 1 resolved --reason x &&
	expect_grep "^warden: .resolved. is not an alert state (untriaged, acknowledged, invalid or fixed)$" err &&
	expect_exit 2 warden --repo bench regressions set 1 fixed &&
	expect_grep "^warden: regressions set needs --reason TEXT" err &&
	expect_grep "^usage: warden regressions " err &&
	expect_exit 2 warden --repo bench regressions set 1 fixed --reason "" &&
	expect_exit 2 warden --repo bench regressions set 1 acknowledged --reason again &&
	expect_grep "^warden: regression alert 1 is already acknowledged$" err &&
	expect_exit 2 warden --repo bench regressions set 1 fixed --reason x --by nobody &&
	expect_grep "^warden: .--by. takes \"Name <email>\", not .nobody.$" err &&
	expect_exit 2 warden --repo bench regressions list --state open &&
	expect_grep "^warden: .--state. takes untriaged, acknowledged, invalid or fixed, not .open.$" err &&
	expect_exit 2 warden --repo bench regressions show x &&
	expect_exit 2 warden --repo bench regressions frob &&
	expect_grep "^warden: unknown regressions subcommand .frob.$" err &&
	expect_exit 2 warden --repo bench regressions list extra &&
	test "$(sqlite3 $DB "select count(*) from regression_transitions")" = "$(($(wc -l <ids.after) + 2))"
'

test_expect_success 'the revert also changes simpad, which triage did not smoke: approve asks for it' '
	expect_exit 1 warden --repo bench review approve 3 --as "Test Maintainer <maintainer@example.org>" &&
	expect_grep "^warden: review 3 changes simpad and carries no smoke evidence of it (warden review smoke 3 runs it); it stays pending" err &&
	expect_exit 0 warden --repo bench review smoke 3 &&
	expect_grep "^review 3: passes before and after the change$" out &&
	expect_grep "^  simcont  qwen3-0.6b  chat   1  complete [0-9]*/[0-9]*  complete [0-9]*/[0-9]*$" out &&
	expect_grep "^  simpad   qwen3-0.6b  chat   1  complete " out &&
	expect_grep "^attached to review 3 as evidence$" out
'

test_expect_success 'the revert approved, round 2 finds the series back: the alert and the incident are fixed' '
	warden --repo bench review approve 3 --as "Test Maintainer <maintainer@example.org>" >/dev/null &&
	expect_exit 0 warden --repo bench cycle &&
	expect_grep "^cycle r2 (roster test), round 2: done, exit 0$" out &&
	summary_alerts out >r2.alerts &&
	expect_grep "^alerts:    #1 simcont qwen3-0.6b/chat c=8 [a-z0-9_]*: .*, new, fixed$" r2.alerts &&
	expect_grep "^           #1 simcont qwen3-0.6b/chat c=8 [a-z0-9_]*: .*, back within the threshold, fixed$" r2.alerts &&
	expect_grep "^           fixed #1$" out &&
	expect_grep "^published: snapshot " out &&
	warden --repo bench --json regressions show 1 >fixed.json &&
	cycle_json fixed.json "j[\"state\"] == \"fixed\"" \
	    "j[\"transitions\"][-1][\"from\"] == \"acknowledged\" and j[\"transitions\"][-1][\"who\"] == \"warden cycle\"" \
	    "\"is back within 200 % of\" in j[\"transitions\"][-1][\"reason\"] and \"in cycle r2 round 2\" in j[\"transitions\"][-1][\"reason\"]" \
	    "j[\"record\"][\"seen\"][-1][\"round\"] == 2 and j[\"record\"][\"seen\"][-1][\"fixed\"] is True" &&
	warden --repo bench --json regressions show 2 >invalid.json &&
	cycle_json invalid.json "j[\"state\"] == \"invalid\"" &&
	alerts list3.json "{(a[\"engine\"], a[\"concurrency\"]) for a in j} == {(\"simcont\", 8)}" &&
	md bench r2 >r2b.md &&
	expect_grep "^| #1 | simcont qwen3-0.6b/chat c=8 [a-z0-9_]* | .* | - | fixed (back within the threshold) |$" r2b.md &&
	expect_grep "^| #1 | simcont qwen3-0.6b/chat c=8 [a-z0-9_]* | .* | fixed (new) |$" r2b.md &&
	expect_grep "^[0-9]* series of round 2 compared with the published cycle r1: " r2b.md &&
	test "$(warden --repo bench --json incident show 1 | python3 -c "import json, sys; print(json.load(sys.stdin)[\"state\"])")" = fixed &&
	warden --repo bench journal verify &&
	test "$(sqlite3 $DB "pragma integrity_check")" = ok
'

test_expect_success 'alerts a store recorded under the metric names of before the glossary are read under its names' '
	warden init oldstore >/dev/null &&
	warden --repo oldstore regressions list >/dev/null &&
	sqlite3 oldstore/.warden/warden.db "INSERT INTO regression_alerts VALUES (1, \"t\", \"t\", \"c1\", 1, \"r\", \"c1\", \"e\", \"m\", \"chat\", 1, \"tpot_p50\", 1, 2, 100, 0.001, \"untriaged\", \"{}\"); PRAGMA user_version = 13" &&
	expect_exit 0 warden --repo oldstore regressions list &&
	expect_grep "^1 .* e m/chat c=1 median_tpot_ms$" out &&
	expect_grep "^     1.0 → 2.0 ms " out &&
	test "$(sqlite3 oldstore/.warden/warden.db "select metric from regression_alerts")" = median_tpot_ms
'

test_done
