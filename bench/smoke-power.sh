#!/bin/sh
# bench/smoke-power.sh - how many requests a side a change's smoke
# (`warden review smoke`, `pr-check --smoke`, the agent's) needs for the
# regressions rule to detect a 10 % slower decode (TPOT p50) and first
# token (TTFT p50) at the policy's alpha. Measured: a campaign at c=1 on
# the chat split against warden-simengine (its default inter-token delay
# and prefill rate) gives per-request samples on this machine; the
# samples are resampled into before and after sides (after 10 % slower)
# and judged by the rule itself (bench/smoke-power, regress_judge()),
# 400 times per n. It prints per n how often the test was significant,
# how often the whole rule (significant AND at least threshold_pct worse)
# flagged it, and its false alarms on unchanged sides.
#
# The figure is this machine's and the simulated engine's: a real
# engine's own request-to-request spread needs more. Measure it instead
# with SMOKE_POWER_REPO (a bench) and SMOKE_POWER_RUNS ("RUN_A RUN_B":
# two campaign runs of it at c=1 of the same prompts).
#
# Environment: WARDEN, SIMENGINE, TOP_SRCDIR, TOP_BUILDDIR (set by `make
# bench`); SMOKE_POWER_REPO, SMOKE_POWER_RUNS; SMOKE_POWER_CHANGE (percent,
# default 10); SMOKE_POWER_PROMPTS (prompts measured, default 64).
set -u

: "${TOP_SRCDIR:=.}"
: "${TOP_BUILDDIR:=.}"
: "${WARDEN:=$TOP_BUILDDIR/warden}"
: "${SIMENGINE:=$TOP_BUILDDIR/warden-simengine}"
POWER="$TOP_BUILDDIR/bench/smoke-power"
CHANGE=${SMOKE_POWER_CHANGE:-10}
PROMPTS=${SMOKE_POWER_PROMPTS:-64}

if [ ! -x "$SIMENGINE" ] || [ ! -x "$WARDEN" ] || [ ! -x "$POWER" ]; then
	echo "smoke-power: skipped: warden, warden-simengine or bench/smoke-power not built"
	exit 0
fi
for p in python3 git sqlite3; do
	if ! command -v "$p" >/dev/null 2>&1; then
		echo "smoke-power: skipped: no $p"
		exit 0
	fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/smoke-power.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

if [ -n "${SMOKE_POWER_RUNS:-}" ]; then
	REPO=${SMOKE_POWER_REPO:-.}
	set -- $SMOKE_POWER_RUNS
	RUN_A=$1 RUN_B=${2:-$1}
else
	HOME="$WORK/home"
	GIT_CONFIG_NOSYSTEM=1
	export HOME GIT_CONFIG_NOSYSTEM
	mkdir -p "$HOME"
	git config --global user.name bench
	git config --global user.email bench@localhost
	unset WARDEN_REPO WARDEN_CYCLE 2>/dev/null || true
	. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
	(cd "$WORK" && bench_init bench &&
	    sim_adapter bench simpower --schedule continuous &&
	    bench_policy bench "campaign.concurrency=[1]" "caps.warmups=1") || {
		echo "smoke-power: cannot set up the bench repository"
		exit 1
	}
	REPO="$WORK/bench"
	RUN_A=power-a RUN_B=power-b
	for r in $RUN_A $RUN_B; do
		if ! "$WARDEN" --repo "$REPO" campaign --engine simpower \
		    --split chat --concurrency 1 --limit "$PROMPTS" \
		    --run-id "$r" >"$WORK/out" 2>"$WORK/err"; then
			echo "smoke-power: the campaign failed:"
			cat "$WORK/err"
			exit 1
		fi
	done
fi
DB="$REPO/.warden/warden.db"
set -- $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])).get("regressions", {})
print(r.get("alpha", 0.01), r.get("threshold_pct", 10))' "$REPO/policy/warden.json")
ALPHA=$1 THRESHOLD=$2

# per prompt: its figures in the two runs (the same prompts, as the two
# sides of a smoke)
rows() {
	sqlite3 -separator ' ' "$DB" "select r.prompt_id, r.ttft_ms, r.e2el_ms,
	    r.completion_tokens from campaign_requests r join campaign_sweeps s
	    on s.id = r.sweep_id where s.run_id = '$1' and r.outcome = 'ok'
	    and r.warmup = 0 and s.concurrency = 1 order by r.prompt_id"
}
rows "$RUN_A" >"$WORK/a" && rows "$RUN_B" >"$WORK/b" || exit 1
join "$WORK/a" "$WORK/b" >"$WORK/rows"
awk '$4 >= 2 && $7 >= 2 { print ($3 - $2) / ($4 - 1), ($6 - $5) / ($7 - 1) }' \
    "$WORK/rows" >"$WORK/tpot"
awk '{ print $2, $5 }' "$WORK/rows" >"$WORK/ttft"
echo "runs $RUN_A and $RUN_B: $(wc -l <"$WORK/rows") prompts measured in both at c=1"
"$POWER" median_tpot_ms "$ALPHA" "$THRESHOLD" "$CHANGE" <"$WORK/tpot" || exit 1
"$POWER" median_ttft_ms "$ALPHA" "$THRESHOLD" "$CHANGE" <"$WORK/ttft" || exit 1
