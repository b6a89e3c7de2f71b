#!/bin/sh
# t5003: warden triage and warden incident as a user meets them: help,
# bad input (exit 2, one message each), nothing to triage, an engine
# that is a program on PATH broken by its own new version (an
# untriaged incident: it cannot be rebuilt to prove it), incident list,
# show and set with who and why, a wontfix incident left alone, the
# agent's view of the incident, --json everywhere.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

test_expect_success 'help names every option and the exit codes' '
	expect_exit 0 warden triage --help &&
	expect_grep "usage: warden triage \[--cycle C\] \[--engine E\]... \[--budget N\]" out &&
	expect_grep "Exit 0 when nothing broke, 1 when engines broke" out &&
	expect_exit 0 warden help incident &&
	expect_grep "set N STATE --reason TEXT --as \"Name <email>\"" out &&
	warden help >help.out &&
	expect_grep "^  triage " help.out && expect_grep "^  incident " help.out
'

test_expect_success 'a bench: a program on PATH that reads its version from a file' '
	bench_init bench &&
	sim_adapter bench simv --itl 0 --output-tokens 8 --prefill-rate 0 \
	    --version-file "{repo}/sim.version" --broken-versions 2.0 \
	    --broken-mode zero &&
	sim_adapter bench other --itl 0 --output-tokens 8 --prefill-rate 0 &&
	python3 -c "
import json; p = \"bench/adapters/engines/simv.json\"; a = json.load(open(p))
a[\"source\"] = {\"kind\": \"none\", \"version_argv\": [\"cat\", \"{repo}/sim.version\"]}
json.dump(a, open(p, \"w\"), indent=2)" &&
	bench_policy bench "campaign.concurrency=[1]" "caps.warmups=1" \
	    "agent.sandbox=\"off\"" \
	    "agent.command=[\"sh\", \"-c\", \"exit 0\", \"{prompt_file}\"]" &&
	echo 1.0 >bench/sim.version &&
	bench_commit bench "two engines"
'

test_expect_success 'no campaign run yet: nothing to triage (exit 0)' '
	expect_exit 0 tb triage &&
	expect_grep "^no campaign run recorded: nothing to triage$" out &&
	expect_exit 0 tb --json triage &&
	python3 -c "
import json; d = json.load(open(\"out\"))
assert d[\"cycle\"] is None and d[\"nothing_to_compare\"] and d[\"opened\"] == []"
'

test_expect_success 'bad input: exit 2 and one message' '
	expect_exit 2 tb triage --budget 0 &&
	expect_grep "^warden: .--budget 0.: a number of smoke runs from 1 to 10000$" err &&
	expect_exit 2 tb triage --budget x &&
	expect_exit 2 tb triage --engine nosuch &&
	expect_grep "engine .nosuch. is in no roster of the policy" err &&
	expect_exit 2 tb triage --cycle "../x" &&
	expect_grep "is not a cycle id" err &&
	expect_exit 2 tb triage extra &&
	expect_grep "unexpected argument .extra." err &&
	expect_exit 2 tb triage --frob &&
	expect_grep "unknown option" err &&
	expect_exit 2 tb incident &&
	expect_exit 2 tb incident frob &&
	expect_grep "unknown incident subcommand .frob." err &&
	expect_exit 2 tb incident list --state open &&
	expect_grep "takes untriaged, investigating, confirmed, fixed, wontfix or upstream, not .open." err &&
	expect_exit 2 tb incident show 9 &&
	expect_grep "^warden: no incident 9$" err &&
	expect_exit 2 tb incident show x &&
	expect_grep "not an incident number" err &&
	expect_exit 2 tb incident set 1 fixed &&
	expect_grep "needs --reason TEXT and --as" err &&
	expect_exit 2 tb incident set 1 done --reason r --as "M <m@example.org>" &&
	expect_grep "not an incident state" err
'

test_expect_success 'cycle c1 healthy, c2 a new version of simv that answers zero tokens' '
	WARDEN_CYCLE=c1 tb update >/dev/null &&
	WARDEN_CYCLE=c1 tb campaign --limit 2 >/dev/null &&
	expect_exit 2 tb triage --cycle nosuch &&
	expect_grep "^warden: cycle .nosuch. has no campaign run$" err &&
	test $(wc -l <err) -eq 1 &&
	echo 2.0 >bench/sim.version &&
	WARDEN_CYCLE=c2 tb update >/dev/null &&
	WARDEN_CYCLE=c2 tb campaign --limit 2 >out &&
	expect_grep "^simv .* 0/2  *all-failed$" out
'

test_expect_success '--engine other: nothing broke among the engines asked about' '
	WARDEN_CYCLE=c2 expect_exit 0 tb triage --engine other &&
	expect_grep "^nothing broke in cycle c2" out &&
	test "$(q "select count(*) from triage_incidents")" = 0
'

test_expect_success 'a program on PATH broken by its own version: an untriaged incident' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage && unwrap out >out.u && mv out.u out &&
	expect_grep "^simv: broken (healthy in c1); 1 package changed$" out &&
	expect_grep "^  no culprit confirmed (own_release_unconfirmed): a program on PATH: warden cannot install another version$" out &&
	expect_grep "^incident 1 opened (untriaged): simv broke with its own release simv 1.0 → 2.0$" out &&
	expect_grep "^warden: cycle c2: 1 engine broken$" err &&
	test "$(q "select count(*) from triage_smoke")" = 0 &&
	test "$(q "select count(*) from reviews")" = 0 &&
	tb --json journal show --kind triage.run >run.json &&
	python3 -c "
import json; d = json.load(open(\"run.json\"))
e = d[-1] if isinstance(d, list) else d[\"entries\"][-1]
c = e[\"body\"][\"engines\"][\"simv\"][\"failing_cells\"]
assert [(x[\"outcome\"], x[\"status\"]) for x in c] == [(\"complete\", \"all-failed\")], c"
'

test_expect_success 'incident list and show, as text and as JSON' '
	expect_exit 0 tb incident list &&
	expect_grep "^1    untriaged     own_release  c2$" out &&
	expect_grep "^     simv broke with its own release simv 1.0 → 2.0$" out &&
	expect_exit 0 tb incident list --state fixed && test ! -s out &&
	expect_exit 0 tb --json incident list --state untriaged &&
	python3 -c "
import json; d = json.load(open(\"out\"))
assert [r[\"id\"] for r in d] == [1] and d[0][\"record\"][\"engines\"] == [\"simv\"]" &&
	expect_exit 0 tb incident show 1 && unwrap out >out.u && mv out.u out &&
	expect_grep "^culprit:  simv 1.0 → 2.0$" out &&
	expect_grep "^    complete 0/2 all-failed: qwen3-0.6b chat c=1$" out &&
	expect_grep "(new) → untriaged by warden triage: a program on PATH" out &&
	expect_exit 0 tb incident show 1 --json &&
	python3 -c "
import json; d = json.load(open(\"out\"))
assert d[\"kind\"] == \"own_release\" and d[\"state\"] == \"untriaged\"
assert d[\"record\"][\"per_engine\"][\"simv\"][\"good_cycle\"] == \"c1\"
assert d[\"transitions\"][0][\"who\"] == \"warden triage\" and d[\"smoke\"] == []
c = d[\"record\"][\"per_engine\"][\"simv\"][\"failing_cells\"]
assert [(x[\"outcome\"], x[\"status\"], x[\"completed\"], x[\"total\"]) for x in c] == [(\"complete\", \"all-failed\", 0, 2)], c"
'

test_expect_success 'the agent sees the incident as its task' '
	expect_exit 0 tb agent run --incident 1 --dry-run &&
	expect_grep "^# warden agent run 1: incident 1" out &&
	expect_grep "simv broke with its own release simv 1.0 → 2.0" out &&
	expect_grep "| engine | model | split | c | outcome | completed | status |" out &&
	expect_grep "| simv | qwen3-0.6b | chat | 1 | complete | 0/2 | all-failed |" out
'

test_expect_success 'incident set: a maintainer transition, journaled with who and why' '
	expect_exit 0 tb incident set 1 wontfix --reason "simv 2.0 is what we measure" \
	    --as "Test Maintainer <maintainer@example.org>" &&
	expect_grep "^incident 1: wontfix$" out &&
	expect_exit 2 tb incident set 1 wontfix --reason again --as "M <m@example.org>" &&
	expect_grep "^warden: incident 1 is already wontfix$" err &&
	expect_exit 2 tb incident set 1 fixed --reason "$(printf "\377")" --as "M <m@example.org>" &&
	expect_grep "not valid UTF-8" err &&
	test "$(q "select state from triage_incidents where id = 1")" = wontfix &&
	tb --json journal show --kind incident.state >j.json &&
	python3 -c "
import json; d = json.load(open(\"j.json\"))
e = d[-1] if isinstance(d, list) else d[\"entries\"][-1]
b = e[\"body\"]
assert (b[\"from\"], b[\"to\"]) == (\"untriaged\", \"wontfix\"), b
assert b[\"who\"] == \"Test Maintainer <maintainer@example.org>\" and b[\"reason\"] == \"simv 2.0 is what we measure\""
'

test_expect_success 'a wontfix incident is left alone: seen again, never fixed by triage' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage &&
	expect_grep "^  already explained by incident 1$" out &&
	echo 1.0 >bench/sim.version &&
	WARDEN_CYCLE=c3 tb update >/dev/null &&
	WARDEN_CYCLE=c3 tb campaign --limit 2 >/dev/null &&
	WARDEN_CYCLE=c3 expect_exit 0 tb triage &&
	expect_grep "^nothing broke in cycle c3" out &&
	test "$(q "select state from triage_incidents where id = 1")" = wontfix &&
	tb journal verify
'

test_done
