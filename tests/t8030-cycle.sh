#!/bin/sh
# t8030: `warden cycle` runs checkout, update, campaign, fidelity, gate,
# triage, agent, publish, the cycle journal and its export under one
# cycle id; every cell ends with a status of SiliconBench's vocabulary,
# decided from the stored outcomes; the journal is structured JSON and
# its Markdown has SiliconBench's shape; exit 0 healthy, 1 when something
# broke or an engine that passed the published gate fails now; skipped
# cells count their prior occurrences; a killed cycle continues where it
# stopped; `warden status` answers while a cycle runs, without the
# writer lock.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

LABELS='{repo}/workloads/fidelity/items.jsonl'
Q="'"
FAST="--itl 1 --prefill-rate 0 --labels $LABELS --accuracy 0.9"

test_expect_success 'a bench of engines that each end a cell differently' '
	cycle_bench bench &&
	echo 1.0 >dep.version &&
	sim_adapter bench simok $FAST &&
	sim_adapter bench simzero $FAST --zero-rate 1 &&
	sim_adapter bench simdeg $FAST --fail-rate 0.5 --seed 7 &&
	sim_adapter bench simwrong $FAST --model another-model &&
	sim_adapter bench simcrash $FAST --abort-after 2 &&
	sim_adapter bench simskip $FAST &&
	sim_adapter bench simbreak $FAST --version-file "$TEST_DIR/dep.version" \
	    --broken-versions 2.0 --broken-mode refuse &&
	python3 - bench <<-PY &&
	import json, sys
	p = sys.argv[1] + "/adapters/profiles/qwen3-0.6b.json"
	d = json.load(open(p))
	d["engines"]["simskip"] = {"unsupported": "the engine has no build of this model"}
	json.dump(d, open(p, "w"), indent=2)
	PY
	(cd bench && warden lint >/dev/null) &&
	cycle_commit bench "seven simulated engines" &&
	warden --repo bench fidelity --engine simok --shots 0 --limit 12 \
	    --run-id ref >/dev/null 2>&1 &&
	warden --repo bench fidelity mark-reference ref >/dev/null
'

test_expect_success 'refused while official is checked out, and with bad options' '
	git -C bench checkout -q official &&
	expect_exit 3 warden --repo bench cycle &&
	expect_grep "checked out" err &&
	git -C bench checkout -q --detach official &&
	expect_exit 2 warden --repo bench cycle --roster nosuch &&
	expect_grep "no roster .nosuch." err &&
	expect_exit 2 warden --repo bench cycle extra &&
	expect_exit 2 warden --repo bench cycle --resume &&
	expect_grep "there is no cycle to resume" err &&
	expect_exit 0 warden --repo bench status &&
	expect_grep "no cycle has run" out &&
	test -z "$(sqlite3 bench/.warden/warden.db "select id from cycles")"
'

test_expect_success 'the first cycle: every cell has its status, the results are published' '
	WARDEN_CYCLE=c1 expect_exit 1 warden --repo bench --json cycle &&
	cp out c1.json &&
	cycle_json c1.json "j[\"cycle\"] == \"c1\"" "j[\"state\"] == \"done\"" \
	    "j[\"exit\"] == 1" \
	    "{c[\"engine\"]: c[\"status\"] for s in j[\"journal\"][\"splits\"] for c in s[\"cells\"]} == {\"simok\": \"ok\", \"simzero\": \"all-failed\", \"simdeg\": \"degraded\", \"simwrong\": \"wrong-model\", \"simcrash\": \"crashed\", \"simskip\": \"skipped\", \"simbreak\": \"ok\"}" \
	    "j[\"journal\"][\"summary\"][\"published\"][\"tag\"].startswith(\"snapshot/\")" \
	    "sorted(b[\"cell\"] for b in j[\"journal\"][\"summary\"][\"broke\"]) == [\"simcrash/qwen3-0.6b/chat\", \"simdeg/qwen3-0.6b/chat\", \"simwrong/qwen3-0.6b/chat\", \"simzero/qwen3-0.6b/chat\"]" \
	    "[s[\"reason\"] for s in j[\"journal\"][\"skipped\"]] == [\"profile ${Q}qwen3-0.6b${Q}: engine ${Q}simskip${Q} does not serve this model: the engine has no build of this model\"]" &&
	tag=$(python3 -c "import json; print(json.load(open(\"c1.json\"))[\"journal\"][\"summary\"][\"published\"][\"tag\"])") &&
	git -C bench rev-parse -q --verify "$tag" >/dev/null &&
	warden verify "bench/snapshots/${tag#snapshot/}.tar.gz" >/dev/null &&
	sqlite3 bench/.warden/warden.db "select run_id from campaign_runs order by created" >runs &&
	expect_grep "^c1-r1-campaign$" runs &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from journal where cycle = '"'"'c1'"'"' and kind = '"'"'campaign.sweep'"'"'")" -ge 0 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(distinct cycle) from journal where kind like '"'"'cycle.%'"'"'")" = 1
'

test_expect_success 'the exported Markdown is SiliconBench journal shaped' '
	md bench c1 >c1.md &&
	grep "^## " c1.md >heads &&
	printf "%s\n" "## Summary" "## Versions" "## qwen3-0.6b / chat" "## Fixes" "## Broke" \
	    "## Skipped" "## OOM" "## Regressions" "## Suspicious" "## Timeline" \
	    "## Journal entries" >want &&
	expect_equal want heads &&
	expect_grep "^Machine .[0-9a-f]*.: .* ($(uname -m)), $(getconf _NPROCESSORS_ONLN) cores, [0-9.]* GiB, $(uname -s) $(uname -r)\.$" c1.md &&
	expect_grep "^| Framework | Version | Manifest sha256 | Python | Packages | Commit | Recorded in cycle |$" c1.md &&
	test "$(grep -c "^| sim[a-z]* | " c1.md)" -ge 7 &&
	expect_grep "^Each entry in short; .journals/journal.jsonl. beside this file holds every entry whole" c1.md &&
	expect_grep "^| [0-9]* | [0-9T:.Z-]* | .campaign.sweep.finish. | simok/qwen3-0.6b/chat/c1 | completed 6; failed 0; outcome complete; run_id c1-r1-campaign; seq 0\(; warning the machine was not quiet [^|]*\)\? | .[0-9a-f]*. |$" c1.md &&
	! grep "^| [0-9]* | [0-9T:.Z-]* | .[a-z.]*. | .* | {" c1.md &&
	! grep -n "$TEST_DIR" c1.md &&
	git -C bench show official:journals/journal.jsonl >jsonl &&
	! grep -n "$TEST_DIR" jsonl &&
	expect_grep "log ./.warden/logs/update/c1/simok.log" c1.md &&
	expect_grep "^| Framework | Status | Notes |$" c1.md &&
	expect_grep "^| simzero | all-failed | c=1 0/6 (6 empty), c=4 0/6 (6 empty) |$" c1.md &&
	expect_grep "^| simwrong | wrong-model | c=1 0/6 outcome wrong_model, c=4 0/6 outcome wrong_model; serves .another-model., the profile names" c1.md &&
	expect_grep "^| simcrash | crashed | .*server exited: killed by signal 6" c1.md &&
	expect_grep "^| simskip | qwen3-0.6b | chat | profile .qwen3-0.6b.: engine .simskip. does not serve this model: the engine has no build of this model | 0 |$" c1.md &&
	expect_grep "^- \*\*Published\*\*: snapshot" c1.md &&
	expect_grep "^| [0-9T:.Z-]* | 1 | campaign | done | run c1-r1-campaign, 14 sweeps" c1.md &&
	expect_grep "^| [0-9T:.Z-]* | 1 | triage | done | 4 engines broken; cannot be compared: .*simcrash (no earlier cycle where it was healthy)" c1.md &&
	warden --repo bench journal verify
'

test_expect_success 'status after the cycle says it is done, step by step' '
	expect_exit 0 warden --repo bench status &&
	expect_grep "^cycle c1 (roster test): done, round 1$" out &&
	expect_grep "^finished: .*, exit 1, took [0-9.]* s$" out &&
	expect_grep "^cells:    7: 1 crashed, 1 wrong-model, 1 all-failed, 1 degraded, 2 ok, 1 skipped$" out &&
	expect_grep "^snapshot: [0-9a-f]\{16\}$" out &&
	expect_grep "^waiting:  0 reviews; [0-9]* incidents\{0,1\} open" out &&
	test "$(grep -c "^  round 1 .* [0-9.]* s  from [0-9:]*$" out)" = 11 &&
	expect_exit 0 warden --repo bench --json status &&
	cycle_json out "j[\"state\"] == \"done\"" "j[\"alive\"] is False" \
	    "[s[\"step\"] for s in j[\"steps\"]] == [\"checkout\", \"update\", \"campaign\", \"fidelity\", \"gate\", \"regressions\", \"triage\", \"agent\", \"publish\", \"journal\", \"export\"]" \
	    "all(s[\"duration_s\"] >= 0 for s in j[\"steps\"])" \
	    "j[\"summary\"][\"cells\"] == {\"ok\": 2, \"all-failed\": 1, \"degraded\": 1, \"wrong-model\": 1, \"crashed\": 1, \"skipped\": 1}" \
	    "j[\"summary\"][\"reviews_waiting\"] == 0 and j[\"summary\"][\"duration_s\"] > 0" \
	    "isinstance(j[\"summary\"][\"incidents_open\"], list)"
'

test_expect_success 'nothing changed: exit 0, and the skipped cell counts its prior occurrence' '
	WARDEN_CYCLE=c2 expect_exit 0 warden --repo bench --json cycle &&
	cycle_json out "j[\"exit\"] == 0" \
	    "j[\"journal\"][\"summary\"][\"broke\"] == []" \
	    "j[\"journal\"][\"previous\"] == \"c1\"" \
	    "[(s[\"prior\"], s[\"since\"]) for s in j[\"journal\"][\"skipped\"]] == [(1, \"c1\")]" \
	    "sorted(j[\"journal\"][\"summary\"][\"gate\"][\"passed\"]) == [\"simbreak\", \"simok\"]" &&
	md bench c2 >c2.md &&
	expect_grep "^| simskip | qwen3-0.6b | chat | .*no build of this model | 1 (skipped since cycle c1) |$" c2.md
'

test_expect_success 'an engine breaks: exit 1, its cell crashed, a gate regression' '
	echo 2.0 >dep.version &&
	WARDEN_CYCLE=c3 expect_exit 1 warden --repo bench cycle &&
	expect_grep "^broke:     simbreak/qwen3-0.6b/chat (crashed)$" out &&
	expect_grep "^           newly failing simbreak$" out &&
	expect_grep "^warden: cycle c3: something broke" err &&
	expect_no_grep "^triage[^:]*: \([^ :]*\): .*\1: \(smoke run\|[0-9]* \)" err &&
	md bench c3 >c3.md &&
	expect_grep "^| simbreak | crashed | .*exited before it was ready: exit status 3" c3.md
'

test_expect_success 'killed at a step, the next warden cycle continues the same cycle there' '
	echo 1.0 >dep.version &&
	rc=0 && WARDEN_CYCLE=c4 WARDEN_FAULT=cycle.step:3 warden --repo bench cycle \
	    >kill.out 2>&1 || rc=$? &&
	test "$rc" = 137 &&
	expect_exit 0 warden --repo bench --json status &&
	cycle_json out "j[\"cycle\"] == \"c4\"" "j[\"state\"] == \"interrupted\"" \
	    "j[\"step\"] == \"campaign\"" &&
	expect_exit 0 warden --repo bench --json cycle &&
	cycle_json out "j[\"cycle\"] == \"c4\"" "j[\"state\"] == \"done\"" &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from cycle_steps where cycle = '"'"'c4'"'"'")" = 11 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from journal where cycle = '"'"'c4'"'"' and kind = '"'"'cycle.resumed'"'"'")" = 1 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from campaign_runs where run_id like '"'"'c4-%'"'"'")" = 1 &&
	warden --repo bench journal verify
'

test_expect_success 'status answers while a cycle runs and holds the store' '
	sim_adapter bench simslow --itl 40 --output-tokens 32 --prefill-rate 0 \
	    --labels "$LABELS" &&
	bench_policy bench "rosters.slow=[\"simslow\"]" &&
	cycle_commit bench "a slow engine" || exit 1
	# the cycle waits as long as the test holds the writer lock below
	(WARDEN_CYCLE=c5 WARDEN_BUSY_TIMEOUT_MS=300000 exec "$WARDEN" --repo bench \
	    cycle --roster slow >slow.out 2>&1) &
	n=0 && while [ $n -lt 1200 ]; do
		"$WARDEN" --repo bench --json status >st.json 2>st.err || true
		if python3 -c "
import json, sys; j = json.load(open(\"st.json\"))
sys.exit(0 if j and j[\"cycle\"] == \"c5\" and j[\"step\"] == \"campaign\" and (j.get(\"what\") or \"\").startswith(\"sweep \") else 1)" 2>/dev/null; then
			break
		fi
		sleep 0.1; n=$((n + 1))
	done &&
	cycle_json st.json "j[\"alive\"] is True" "j[\"pid\"] > 0" \
	    "j[\"state\"] == \"running\"" "\"requests\" in j[\"what\"]" &&
	pid=$(python3 -c "import json; print(json.load(open(\"st.json\"))[\"pid\"])") || exit 1
	hold_lock bench "holding the lock" &&
	WARDEN_BUSY_TIMEOUT_MS=200 expect_exit 0 warden --repo bench status &&
	expect_grep "^cycle c5 (roster slow): running, round 1, pid $pid$" out &&
	expect_grep "^step:     campaign: sweep [12]/2 simslow qwen3-0.6b chat c=[14]: [0-6]/6 requests$" out &&
	WARDEN_BUSY_TIMEOUT_MS=200 expect_exit 3 warden --repo bench journal note x &&
	expect_exit 3 warden --repo bench cycle &&
	expect_grep "a cycle is already running here (pid $pid)" err &&
	release_lock &&
	n=0 && while [ $n -lt 3000 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.1; n=$((n + 1))
	done &&
	expect_exit 0 warden --repo bench status &&
	expect_grep "^cycle c5 (roster slow): done, round 1$" out
'

test_done
