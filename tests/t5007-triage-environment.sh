#!/bin/sh
# t5007: an engine that breaks with nothing of its own changing - no
# package in its version manifest, no commit on official - while the
# machine around it moved: the OS, the toolchain, a model's weights.
# Triage opens an unexplained incident (no smoke run can bring back an
# OS) that lists what else changed, in `triage`, `incident show` and the
# incident's JSON. A test cannot upgrade this machine's OS or compiler,
# so the facts the runs recorded (run provenance "os", the version
# manifest's "toolchain" and "models") are set in the store between the
# cycles, as a real upgrade would have recorded them.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

# env CYCLE OS-RELEASE CC SHA: what cycle's runs recorded.
env_of() {
	q "UPDATE campaign_runs SET provenance = json_set(provenance, '$.os.release', '$2')
	   WHERE run_id IN (SELECT json_extract(body, '$.run_id') FROM journal
	                    WHERE kind = 'campaign.run.start' AND cycle = '$1')" &&
	q "UPDATE campaign_sweeps SET provenance = json_set(provenance,
	       '$.engine_manifest.toolchain', json('{\"cc\": \"$3\"}'),
	       '$.engine_manifest.models', json('{\"qwen3-0.6b\": {\"sha256\": \"$4\"}}'))
	   WHERE run_id IN (SELECT json_extract(body, '$.run_id') FROM journal
	                    WHERE kind = 'campaign.run.start' AND cycle = '$1')"
}

test_expect_success 'a bench: an engine on PATH whose manifest says 1.0 whatever runs' '
	bench_init bench &&
	sim_adapter bench simv --itl 0 --output-tokens 8 --prefill-rate 0 \
	    --version-file "$TEST_DIR/machine.version" --broken-versions 2.0 \
	    --broken-mode zero &&
	python3 -c "
import json; p = \"bench/adapters/engines/simv.json\"; a = json.load(open(p))
a[\"source\"] = {\"kind\": \"none\", \"version_argv\": [\"echo\", \"1.0\"]}
json.dump(a, open(p, \"w\"), indent=2)" &&
	bench_policy bench "campaign.concurrency=[1]" "caps.warmups=1" \
	    "agent.sandbox=\"off\"" &&
	echo 1.0 >machine.version &&
	bench_commit bench "one engine"
'

test_expect_success 'cycle c1 healthy; in c2 the machine moved and the engine answers zero tokens' '
	WARDEN_CYCLE=c1 tb update >/dev/null &&
	WARDEN_CYCLE=c1 tb campaign --limit 2 >/dev/null &&
	env_of c1 "5.10.0-old" "cc (Debian 12.2.0) 12.2.0" "aaaaaaaa11111111" &&
	echo 2.0 >machine.version &&
	WARDEN_CYCLE=c2 tb update >/dev/null &&
	WARDEN_CYCLE=c2 tb campaign --limit 2 >out &&
	expect_grep "^simv .* 0/2 " out &&
	env_of c2 "6.1.0-new" "cc (Debian 13.1.0) 13.1.0" "bbbbbbbb22222222"
'

test_expect_success 'triage lists what else changed, and opens an unexplained incident that says so' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage && unwrap out >out.u && mv out.u out &&
	expect_grep "^simv: broken (healthy in c1); 0 packages changed$" out &&
	expect_grep "^  also changed, which no smoke run can test: os Linux 5.10.0-old → Linux 6.1.0-new; toolchain cc: cc (Debian 12.2.0) 12.2.0 → cc (Debian 13.1.0) 13.1.0; model qwen3-0.6b: sha256 aaaaaaaa → sha256 bbbbbbbb$" out &&
	expect_grep "^incident 1 opened (untriaged): simv broke: its version manifest is the same as in its healthy cycle: not a version change; changed meanwhile, which no smoke run can test: os Linux 5.10.0-old → Linux 6.1.0-new; " out &&
	test "$(q "select kind from triage_incidents")" = unexplained
'

test_expect_success 'incident show and --json carry the changes' '
	expect_exit 0 tb incident show 1 && unwrap out >out.u && mv out.u out &&
	expect_grep "^    also changed, which no smoke run can test: os Linux 5.10.0-old → Linux 6.1.0-new; toolchain cc: " out &&
	expect_exit 0 tb --json incident show 1 &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	env = d["record"]["per_engine"]["simv"]["environment"]
	assert [(x["what"], x.get("name")) for x in env] == [("os", None), ("toolchain", "cc"), ("model", "qwen3-0.6b")], env
	assert env[0]["from"] == "Linux 5.10.0-old" and env[0]["to"] == "Linux 6.1.0-new", env
	assert env[2]["from"] == "aaaaaaaa11111111" and env[2]["to"] == "bbbbbbbb22222222", env
	PY
'

test_expect_success 'a machine that did not move: no such line' '
	env_of c2 "5.10.0-old" "cc (Debian 12.2.0) 12.2.0" "aaaaaaaa11111111" &&
	{ WARDEN_CYCLE=c2 tb triage >out 2>&1 || :; } &&
	expect_grep "^simv: broken (healthy in c1); 0 packages changed$" out &&
	! grep "also changed" out
'

test_done
