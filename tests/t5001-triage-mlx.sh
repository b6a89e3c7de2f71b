#!/bin/sh
# t5001: the MLX incident, reproduced with real pip and local wheels. A
# shared dependency moves 1.0 -> 2.0 and breaks three engines at once,
# each its own way (stream error mid-response, refuses to start, zero
# tokens); two engines that do not depend on it stay healthy; a sixth
# engine breaks with its own release. update -> campaign -> triage names
# the shared dependency, confirms it by pinning back in at most
# ceil(log2 n) + 1 smoke runs per engine, reports the self-broken engine
# as such, leaves the healthy engines alone, and queues one pin patch
# that passes the gate and names all three engines. Then: the agent gets
# the incident as its task; the pin, approved, makes the engines healthy
# and the incident fixed; a new release of the culprit that works
# reopens it and triage proposes lifting the pin; a cycle where nothing
# broke is left alone.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

test_expect_success 'wheels: a shared dependency, three engines on it, one self-broken, two without it' '
	make_wheel wheels shared 1.0 && make_wheel wheels shared 2.0 &&
	make_wheel wheels tok 1.0 && make_wheel wheels tok 1.1 &&
	make_wheel wheels fmt 1.0 && make_wheel wheels fmt 1.1 &&
	make_wheel wheels mlxlm 1.0 "shared>=1.0" "tok>=1.0" "fmt>=1.0" &&
	make_wheel wheels vmetal 1.0 "shared>=1.0" "tok>=1.0" &&
	make_wheel wheels vmlx 1.0 "shared>=1.0" &&
	make_wheel wheels selfy 1.0 &&
	mv wheels/shared-2.0-py3-none-any.whl wheels/tok-1.1-py3-none-any.whl \
	    wheels/fmt-1.1-py3-none-any.whl . &&
	triage_bench bench "$TEST_DIR/wheels" &&
	dep_engine bench mlxlm mlxlm shared error_event &&
	dep_engine bench vmetal vmetal shared refuse &&
	dep_engine bench vmlx vmlx shared zero &&
	dep_engine bench selfy selfy selfy crash &&
	plain_engine bench llamacpp && plain_engine bench ollama &&
	bench_commit bench "six engines" &&
	tb lint
'

test_expect_success 'cycle c1: update and campaign, every engine healthy' '
	WARDEN_CYCLE=c1 tb update >/dev/null &&
	WARDEN_CYCLE=c1 expect_exit 0 tb campaign --limit 3 &&
	test "$(grep -c " 3/3  *ok$" out)" = 6
'

test_expect_success 'triage on a cycle where nothing broke does nothing and says so' '
	WARDEN_CYCLE=c1 expect_exit 0 tb triage &&
	expect_grep "^cycle c1: 0 engines broken, 6 healthy$" out &&
	expect_grep "^nothing broke in cycle c1: nothing to do$" out &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from triage_incidents")" = 0 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from triage_smoke")" = 0 &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 0
'

test_expect_success 'cycle c2: shared 2.0 and selfy 2.0 released; three engines break with shared, selfy with itself' '
	mv shared-2.0-py3-none-any.whl tok-1.1-py3-none-any.whl \
	    fmt-1.1-py3-none-any.whl wheels/ &&
	make_wheel wheels selfy 2.0 &&
	WARDEN_CYCLE=c2 tb update >update.out &&
	expect_grep "^  shared 1.0 → 2.0$" update.out &&
	WARDEN_CYCLE=c2 expect_exit 0 tb campaign --limit 3 &&
	cp out campaign.out &&
	expect_grep "^vmetal .* 0/3  *crashed$" campaign.out &&
	expect_grep "^selfy .* 0/3  *crashed$" campaign.out &&
	expect_grep "^mlxlm .* 0/3  *all-failed$" campaign.out &&
	expect_grep "^vmlx .* 0/3  *all-failed$" campaign.out &&
	test "$(grep -c " 3/3  *ok$" campaign.out)" = 2
'

test_expect_success 'triage names shared, confirms it by pinning back within the bound, and selfy as its own release' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage &&
	unwrap out >triage.out && cp err triage.err &&
	expect_grep "^cycle c2: 4 engines broken, 2 healthy$" triage.out &&
	expect_grep "^  culprit: shared 1.0 → 2.0, confirmed by pinning back in 3 smoke runs (one culprit: at most 3)$" triage.out &&
	expect_grep "^  culprit: its own release selfy 1.0 → 2.0, confirmed by pinning back in 1 smoke run (one culprit: at most 1)$" triage.out &&
	expect_grep "^incident 1 opened (confirmed): shared 1.0 → 2.0 broke mlxlm, vmetal and vmlx$" triage.out &&
	expect_grep "^incident 2 opened (upstream): selfy broke with its own release selfy 1.0 → 2.0$" triage.out &&
	expect_grep "^review 1 queued (source triage)" triage.out &&
	expect_no_grep "llamacpp\|ollama" triage.out
'

test_expect_success 'the report: suspects scored across engines, smoke runs per engine within ceil(log2 n) + 1' '
	WARDEN_CYCLE=c2 tb --json triage >report.json || test $? = 1 &&
	json report.json \
	    "sorted(d[\"broken\"]) == [\"mlxlm\", \"selfy\", \"vmetal\", \"vmlx\"]" \
	    "d[\"engines\"][\"llamacpp\"][\"status\"] == \"healthy\"" \
	    "d[\"engines\"][\"ollama\"][\"status\"] == \"healthy\"" \
	    "d[\"suspects\"][\"mlxlm\"][0][\"package\"] == \"shared\"" \
	    "d[\"suspects\"][\"mlxlm\"][0][\"score\"] == 3" \
	    "sorted(d[\"suspects\"][\"mlxlm\"][0][\"broken_with\"]) == [\"mlxlm\", \"vmetal\", \"vmlx\"]" \
	    "d[\"suspects\"][\"mlxlm\"][1][\"package\"] == \"tok\" and d[\"suspects\"][\"mlxlm\"][1][\"score\"] == 2" \
	    "d[\"suspects\"][\"selfy\"][0][\"own\"]" \
	    "d[\"updated\"] == [1, 2] and d[\"opened\"] == []" &&
	sqlite3 bench/.warden/warden.db "select engine, count(*) from triage_smoke group by engine" >runs &&
	printf "mlxlm|3\nselfy|1\nvmetal|2\nvmlx|1\n" >runs.expected &&
	expect_equal runs.expected runs
'

test_expect_success 'every smoke run is recorded: pins, outcome, log tail, a scratch environment' '
	sqlite3 bench/.warden/warden.db "select purpose, pins, outcome from triage_smoke where engine = '"'"'mlxlm'"'"' order by id" >mlx.runs &&
	printf "%s\n" "bisect|{\"shared\":\"1.0\",\"tok\":\"1.0\"}|pass" \
	    "bisect|{\"shared\":\"1.0\"}|pass" \
	    "sufficiency|{\"fmt\":\"1.0\",\"tok\":\"1.0\"}|fail" >mlx.expected &&
	expect_equal mlx.expected mlx.runs &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from triage_smoke where outcome = '"'"'fail'"'"' and (log_tail is null or detail is null)")" = 0 &&
	sqlite3 bench/.warden/warden.db "select detail from triage_smoke where engine = '"'"'vmetal'"'"' and outcome = '"'"'fail'"'"'" >vmetal.detail &&
	expect_grep "not_ready" vmetal.detail &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from update_manifests where scratch = 1 and env_dir like '"'"'%/.warden/triage/%'"'"'")" = 7 &&
	test "$(sqlite3 bench/.warden/warden.db "select json_extract(manifest, '"'"'$.packages.shared'"'"') from update_manifests m join update_current c on c.manifest_id = m.id where c.engine = '"'"'vmlx'"'"'")" = 2.0 &&
	test ! -e bench/.warden/triage/2 && test ! -e bench/.warden/triage/1 &&
	tb journal verify
'

test_expect_success 'one pin patch, clean through the gate, names all three engines' '
	tb --json review show 1 >review.json &&
	json review.json "d[\"source\"] == \"triage\"" "d[\"status\"] == \"pending\"" \
	    "d[\"gate\"][\"ok\"]" \
	    "sorted(f[\"new_path\"] for f in d[\"gate\"][\"files\"]) == [\"adapters/engines/mlxlm.json\", \"adapters/engines/vmetal.json\", \"adapters/engines/vmlx.json\"]" \
	    "d[\"patch\"].count(\"+      \\\"shared==1.0\\\"\") == 3" \
	    "\"incident 1\" in d[\"note\"]" \
	    "[e[\"kind\"] for e in d[\"evidence\"]] == [\"triage-smoke\"]" \
	    "d[\"evidence\"][0][\"body\"][\"incident\"] == 1" \
	    "d[\"evidence\"][0][\"body\"][\"culprits\"][0][\"package\"] == \"shared\"" \
	    "len(d[\"evidence\"][0][\"body\"][\"smoke\"]) >= 1" &&
	tb review show 1 >review.txt &&
	expect_grep "^evidence .* triage-smoke: incident 1; culprit shared " review.txt &&
	expect_grep "^  smoke [0-9]* [a-z]* [a-z-]* pinned shared=1.0: " review.txt &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 1
'

test_expect_success 'incident show: culprit, engines, evidence and transitions' '
	expect_exit 0 tb incident show 1 &&
	unwrap out >show.txt &&
	expect_grep "^incident 1: confirmed$" show.txt &&
	expect_grep "^culprit:  shared 1.0 → 2.0$" show.txt &&
	expect_grep "^engines:  mlxlm vmetal vmlx$" show.txt &&
	expect_grep "^  vmetal: healthy in c1 (manifest [0-9]*), broken in c2 (manifest [0-9]*); 2 changes; single in 2 smoke runs (one culprit: at most 2)$" show.txt &&
	expect_grep "mlxlm sufficiency pinned {fmt 1.0, tok 1.0}: fail: qwen3-0.6b chat c=1: complete 0/3 all-failed" show.txt &&
	expect_grep "vmlx confirm pinned {shared 1.0}: pass" show.txt &&
	expect_grep "(new) → confirmed by warden triage: confirmed by pinning back: healthy with shared back at 1.0, failing with shared 2.0 alone (smoke runs: mlxlm 3, vmetal 2, vmlx 1)$" show.txt &&
	expect_exit 0 tb incident list &&
	expect_grep "^1    confirmed     dependency   c2" out &&
	expect_grep "^2    upstream      own_release  c2" out
'

test_expect_success 'the agent gets the incident as its task' '
	bench_policy bench "agent.time_limit_s=60" "agent.sandbox=\"off\"" \
	    "agent.smoke={\"concurrency\": [1], \"prompts\": 2}" \
	    "agent.command=[\"sh\", \"$TRIAGE_FIXTURES/good-pin.sh\", \"{prompt_file}\"]" &&
	bench_commit bench "policy: a scripted agent" &&
	expect_exit 0 tb agent run --incident 1 &&
	expect_grep "^agent run 1: queued$" out &&
	expect_grep "good-pin: pinned shared==1.0 in mlxlm" bench/.warden/agent/1/agent.log &&
	expect_grep "^# warden agent run 1: incident 1" bench/.warden/agent/1/task.md &&
	expect_grep "\"package\": \"shared\"" bench/.warden/agent/1/task.md &&
	expect_grep "| shared | 1.0 | 2.0 |" bench/.warden/agent/1/task.md &&
	expect_exit 2 tb agent run --incident 9 &&
	expect_grep "no incident 9" err
'

test_expect_success 'the pin approved, cycle c3 healthy: the incident is fixed' '
	tb review approve 1 --as "Test Maintainer <maintainer@example.org>" >/dev/null &&
	git -C bench checkout -q official -- adapters &&
	WARDEN_CYCLE=c3 tb update mlxlm vmetal vmlx >update3.out &&
	expect_grep "^  shared 2.0 → 1.0$" update3.out &&
	WARDEN_CYCLE=c3 tb campaign --limit 3 --engine mlxlm --engine vmetal \
	    --engine vmlx --engine llamacpp --engine ollama >/dev/null &&
	WARDEN_CYCLE=c3 expect_exit 0 tb triage &&
	expect_grep "^incident 1 fixed (fixed): shared 1.0 → 2.0 broke" out &&
	expect_grep "^nothing broke in cycle c3" out &&
	tb --json incident show 1 >inc1.json &&
	json inc1.json "d[\"state\"] == \"fixed\"" \
	    "d[\"transitions\"][-1][\"reason\"] == \"every engine healthy in cycle c3 (the pin'"'"'s review 1: approved)\""
'

test_expect_success 'a release of the culprit that works reopens the incident; triage proposes lifting the pin' '
	make_wheel wheels shared 2.1 &&
	WARDEN_CYCLE=c3 expect_exit 0 tb triage &&
	cp out lift.out &&
	expect_grep "^incident 1 reopened (investigating)" lift.out &&
	expect_grep "^review 3 queued (source triage)" lift.out &&
	tb --json incident show 1 >inc1.json &&
	json inc1.json "d[\"state\"] == \"investigating\"" \
	    "d[\"record\"][\"lift\"][\"version\"] == \"2.1\"" \
	    "d[\"record\"][\"lift\"][\"state\"] == \"proposed\"" \
	    "[t[\"to\"] for t in d[\"transitions\"]] == [\"confirmed\", \"fixed\", \"investigating\"]" \
	    "sorted(s[\"engine\"] for s in d[\"smoke\"] if s[\"purpose\"] == \"lift\") == [\"mlxlm\", \"vmetal\", \"vmlx\"]" \
	    "all(s[\"pins\"] == {\"shared\": \"2.1\"} and s[\"outcome\"] == \"pass\" for s in d[\"smoke\"] if s[\"purpose\"] == \"lift\")" &&
	tb --json review show 3 >lift.json &&
	json lift.json "d[\"gate\"][\"ok\"]" "d[\"patch\"].count(\"-      \\\"shared==1.0\\\"\") == 3" &&
	WARDEN_CYCLE=c3 expect_exit 0 tb triage &&
	expect_no_grep "reopened\|queued" out &&
	tb review approve 3 --as "Test Maintainer <maintainer@example.org>" >/dev/null &&
	WARDEN_CYCLE=c3 expect_exit 0 tb triage &&
	expect_grep "^incident 1 fixed (fixed)" out &&
	tb journal verify
'

test_done
