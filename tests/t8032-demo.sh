#!/bin/sh
# t8032: ci/demo, shortened (WARDEN_DEMO_QUICK: three prompts at one
# level, 16 fidelity items) with the warden of this build: the first cycle
# is healthy and publishes; a new release of the shared dependency simmlx,
# installed by real pip from local wheels, breaks the three engines that
# use it, each its own way, and a contributor's approved adapter change
# breaks a fourth; triage names simmlx, confirms it by pinning back and
# queues one pin for the three, and names the contributor's commit (no
# version change explains the fourth), proves it by smoke runs of
# official's trees and queues its revert; the journal lists that change
# under Broke, never under Fixes; the cycle waits for review,
# printing the approve commands; a rogue agent that also edits policy/ is
# refused; after the approvals the cycle measures again, the four cells
# are fixed, both incidents too, and it publishes; warden verify accepts
# both snapshots; the report, plots and journals are where the demo says.
. "$TOP_SRCDIR/tests/lib.sh"

DEMO="$TEST_DIR/demo"
B="$DEMO/bench"
q() {
	sqlite3 "$B/.warden/warden.db" "$1"
}
# cell_statuses CYCLE: "engine=status ..." of the cycle's journal
cell_statuses() {
	q "select journal from cycles where id = '$1'" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join("%s=%s" % (c["engine"], c["status"]) for s in j["splits"] for c in s["cells"]))'
}

test_expect_success 'ci/demo runs to its end' '
	WARDEN_DEMO_BUILD="$TOP_BUILDDIR" WARDEN_DEMO_DIR="$DEMO" WARDEN_DEMO_QUICK=1 \
	    "$TOP_SRCDIR/ci/demo" >demo.out 2>demo.err ||
	    { tail -n 40 demo.out demo.err; exit 1; }
	tail -n 6 demo.out >end &&
	expect_grep "^ci/demo: done in [0-9]* s, in $DEMO$" end &&
	expect_grep "^  report:    $DEMO/official/results/REPORT.md$" end &&
	expect_grep "^  journals:  $DEMO/official/journals/demo-1.md, $DEMO/official/journals/demo-2.md$" end &&
	test -s "$DEMO/official/results/REPORT.md" &&
	ls "$DEMO"/official/results/plots/*.svg >/dev/null
'

test_expect_success 'the first cycle was healthy and published' '
	test "$(q "select state, exit_code from cycles where id = '"'"'demo-1'"'"'")" = "done|0" &&
	test "$(cell_statuses demo-1)" = "sim-continuous=ok sim-padded=ok sim-serial=ok sim-mlx-lm=ok sim-vllm-metal=ok sim-vllm-mlx=ok" &&
	git -C "$B" show official:journals/demo-1.md >d1.md &&
	expect_grep "^- \*\*Published\*\*: snapshot" d1.md &&
	expect_grep "^| sim-serial | ok |" d1.md &&
	expect_grep "^- sim-serial: qwen3-0.6b 0-shot: weighted F1 .* from the reference" d1.md
'

test_expect_success 'the release broke three engines, each its own way, the adapter change a fourth, and the cycle waited' '
	expect_grep "^changed:   simmlx 0.31.1 -> 0.31.2: sim-mlx-lm, sim-vllm-metal, sim-vllm-mlx$" "$DEMO/cycle-2.out" &&
	expect_grep "^broke:     sim-padded/qwen3-0.6b/chat (crashed),$" "$DEMO/cycle-2.out" &&
	expect_grep "^           sim-mlx-lm/qwen3-0.6b/chat (crashed),$" "$DEMO/cycle-2.out" &&
	expect_grep "^           sim-vllm-metal/qwen3-0.6b/chat (crashed),$" "$DEMO/cycle-2.out" &&
	expect_grep "^           sim-vllm-mlx/qwen3-0.6b/chat (all-failed)$" "$DEMO/cycle-2.out" &&
	expect_grep "^           newly failing sim-mlx-lm, sim-padded, sim-vllm-metal, sim-vllm-mlx$" "$DEMO/cycle-2.out" &&
	expect_grep "^incidents: opened #1, #2$" "$DEMO/cycle-2.out" &&
	expect_grep "^review:    #2 (triage), #3 (triage)$" "$DEMO/cycle-2.out" &&
	expect_grep "^published: no: waiting for the review of the cycle.s fixes: 2, 3$" "$DEMO/cycle-2.out" &&
	expect_grep "^cycle demo-2 (roster demo), round 1: waiting, exit 4$" "$DEMO/cycle-2.out" &&
	test "$(grep -c "warden review approve [23] --as \"Demo Maintainer <maintainer@localhost>\"$" "$DEMO/cycle-2.out")" = 2 &&
	for e in sim-mlx-lm sim-vllm-metal sim-vllm-mlx; do
		"$B/.warden/envs/$e/venv/bin/python" -c "import simmlx; assert simmlx.__version__ == \"0.31.1\"" || exit 1
	done
'

test_expect_success 'triage blamed the contributor.s change and queued its revert, pinned simmlx for three engines; the rogue agent was refused' '
	test "$(q "select id, state, json_extract(record, '"'"'$.kind'"'"') from triage_incidents order by id")" = "$(printf "%s\n" "1|fixed|change" "2|fixed|dependency")" &&
	test "$(q "select json_extract(record, '"'"'$.culprits[0].review'"'"') from triage_incidents where id = 1")" = 1 &&
	test "$(q "select json_extract(record, '"'"'$.proposals[0].review'"'"') from triage_incidents where id = 1")" = 2 &&
	test "$(q "select source from reviews where id = 2")" = triage &&
	test -z "$(q "select task from cycle_agent where cycle = '"'"'demo-2'"'"'")" &&
	git -C "$B" show official:adapters/engines/sim-padded.json | grep -q "\"padded\"" &&
	test "$(q "select state from agent_runs order by id desc limit 1")" = rejected &&
	q "select record from agent_runs order by id desc limit 1" >rogue.json &&
	python3 -c "
import json; r = json.load(open(\"rogue.json\"))
v = r[\"gate\"][\"violations\"]
assert [(x[\"code\"], x[\"path\"]) for x in v] == [(\"outside-allowlist\", \"policy/warden.json\")], v" &&
	test "$(q "select source, status, decided_by from reviews order by id")" = "$(printf "%s\n" "community|approved|Demo Maintainer <maintainer@localhost>" "triage|approved|Demo Maintainer <maintainer@localhost>" "triage|approved|Demo Maintainer <maintainer@localhost>")" &&
	for e in sim-mlx-lm sim-vllm-metal sim-vllm-mlx; do
		git -C "$B" show "official:adapters/engines/$e.json" | grep -q "\"simmlx==0.31.1\"" || exit 1
	done &&
	test "$(git -C "$B" show official:policy/warden.json | grep -c "\"completion_min\": 90")" = 1
'

test_expect_success 'after the approvals the second round fixed them and published' '
	test "$(q "select state, exit_code, round from cycles where id = '"'"'demo-2'"'"'")" = "done|0|2" &&
	test "$(cell_statuses demo-2)" = "sim-continuous=ok sim-padded=fixed sim-serial=ok sim-mlx-lm=fixed sim-vllm-metal=fixed sim-vllm-mlx=fixed" &&
	git -C "$B" show official:journals/demo-2.md >d2.md &&
	expect_grep "^| sim-vllm-mlx | fixed | .*all-failed in round 1: c=4: 3 empty" d2.md &&
	expect_grep "^| sim-vllm-metal | fixed | .*crashed in round 1: exited before it was ready: exit status 3" d2.md &&
	sed -n "/^## Fixes/,/^## Broke/p" d2.md >fixes.md &&
	expect_grep "^- review #2 (triage) approved by Demo Maintainer.*: triage: incident 1: revert [0-9a-f]\{7\} (review 1), which broke sim-padded (evidence: triage-smoke)$" fixes.md &&
	expect_grep "^- review #3 (triage) approved by Demo Maintainer.*: triage: incident 2: pin simmlx==0.31.1 in sim-mlx-lm, sim-vllm-metal and sim-vllm-mlx (evidence: triage-smoke)$" fixes.md &&
	! grep "review #1 " fixes.md &&
	sed -n "/^## Broke/,/^## Skipped/p" d2.md >broke.md &&
	expect_grep "^- review #1 (community) approved by Demo Maintainer.*: sim-padded: the paged schedule (no evidence attached); it broke sim-padded (incident 1, fixed); its revert is review #2$" broke.md &&
	expect_grep "^- \*\*Incidents\*\*: opened none; fixed #1, #2$" d2.md &&
	expect_grep "^| engine:sim-padded (agent) | - | - | incident 1: triage.s revert is in review 2 (pending) |" d2.md &&
	expect_grep "^| engine:sim-mlx-lm (agent) | - | - | incident 2: triage.s pin is in review 3 (pending) |" d2.md &&
	expect_grep "^| [0-9T:.Z-]* | 1 | triage | done | 4 engines broken; opened #1, #2; fixes queued as reviews #2, #3 |" d2.md &&
	expect_grep "^- \*\*Published\*\*: snapshot" d2.md &&
	expect_grep "^| [0-9T:.Z-]* | 2 | publish | done | snapshot " d2.md
'

test_expect_success 'two snapshots, tagged on official, both verify; the journal verifies' '
	test "$(git -C "$B" tag -l "snapshot/*" | wc -l)" = 2 &&
	test "$(ls "$B"/snapshots/*.tar.gz | wc -l)" = 2 &&
	for s in "$B"/snapshots/*.tar.gz; do
		"$WARDEN" verify "$s" >/dev/null || exit 1
	done &&
	"$WARDEN" --repo "$B" journal verify
'

test_done
