#!/bin/sh
# Crash consistency: kill warden with SIGKILL at seeded points of patch
# submit, review approve, journal export, campaign, update, triage,
# publish and cycle: at every ref update and every store commit it passes (WARDEN_FAULT=NAME:N, enumerated from a
# WARDEN_FAULT_TRACE of an uninterrupted run). After each kill: PRAGMA
# integrity_check, journal verify, official and the store agree, nothing
# half-written; then the command run again completes, and all of that
# holds again. WARDEN_CRASH_SEED picks the campaign's sample (default 1).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

SEED=${WARDEN_CRASH_SEED:-1}
KILLS="$TEST_DIR/kills"
: >"$KILLS"

q() {
	sqlite3 "$1/.warden/warden.db" "$2"
}

# consistent DIR: the checks that must hold after any kill.
consistent() {
	test "$(q "$1" "PRAGMA integrity_check")" = ok || {
		echo "integrity_check failed in $1"; return 1; }
	"$WARDEN" --repo "$1" journal verify >verify.out 2>&1 || {
		cat verify.out; return 1; }
	test -z "$(q "$1" "SELECT id FROM official_ops WHERE state = 'intent'")" || {
		echo "an intent is still open in $1"; return 1; }
	# Every approved review is on official, every approval on official
	# is an approved review.
	q "$1" "SELECT merged_commit FROM reviews WHERE status = 'approved' ORDER BY 1" >store.moves
	git -C "$1" log --format='%H %(trailers:key=Warden-Operation,valueonly)' official |
	    awk '$2 == "review.approve" { print $1 }' | sort >git.moves
	expect_equal store.moves git.moves || { echo "official and the store disagree in $1"; return 1; }
	# A queued review's ref holds its commit (a ref with no row is left
	# by a submit killed before its commit; the next submit replaces it).
	for r in $(git -C "$1" for-each-ref --format='%(refname:lstrip=3)' refs/warden/review/); do
		c=$(q "$1" "SELECT commit_id FROM reviews WHERE id = $r")
		if [ -n "$c" ] && [ "$c" != "$(git -C "$1" rev-parse "refs/warden/review/$r")" ]; then
			echo "review $r: row and ref disagree in $1"; return 1
		fi
	done
	# Nothing half-written.
	left=$( { find "$1/.git" \( -name 'tmp_*' -o -name '*.lock' \) -print;
	    find "$1/.warden" -name '*.tmp.*' -print; } | head -n 1)
	test -z "$left" || { echo "left behind: $left"; return 1; }
	test -z "$(git -C "$1" status --porcelain -- journals)" || {
		echo "the working tree's journals/ changed in $1"; return 1; }
}

# crash_points NAME CMD...: run CMD once in a copy of NAME.base with a
# trace, print "POINT:N" for every point it passed.
crash_points() {
	_name=$1
	shift
	rm -rf "$_name.trace.d" && cp -r "$_name.base" "$_name.trace.d" &&
	(cd "$_name.trace.d" && WARDEN_FAULT_TRACE="$TEST_DIR/$_name.trace" \
	    "$@" >/dev/null 2>&1) &&
	awk '{ n[$0]++; print $0 ":" n[$0] }' "$_name.trace"
}

# crash_at NAME POINT DONE CMD...: kill CMD at POINT in a fresh copy of
# NAME.base and check; run it again (rerun_NAME, run in the copy, may
# change the arguments) and check; then DONE DIR says its work is done.
crash_at() {
	_name=$1 _point=$2 _done=$3
	shift 3
	_d="$_name.$(echo "$_point" | tr ':.' '__')"
	rm -rf "$_d" && cp -r "$_name.base" "$_d" &&
	_rc=0 &&
	(cd "$_d" && WARDEN_FAULT=$_point exec "$@" >../run.out 2>../run.err) || _rc=$?
	if [ "$_rc" -eq 0 ] && [ -n "$UNREACHED_OK" ]; then
		# the request writer commits by time, so a busy machine may
		# pass fewer commits than the traced run: not a defect
		echo "$_name $_point: not reached this time" >>"$TEST_DIR/unreached"
		rm -rf "$_d"
		return 0
	fi
	if [ "$_rc" -ne 137 ]; then
		echo "$_name $_point: exit $_rc, not killed"; cat run.err; return 1
	fi
	echo "$_name $_point" >>"$KILLS"
	consistent "$_d" || { echo "after the kill at $_point"; return 1; }
	_rc=0 &&
	(cd "$_d" && "rerun_$_name" "$@" >../rerun.out 2>../rerun.err) || _rc=$?
	if [ "$_rc" -ne 0 ] || ! $_done "$_d"; then
		echo "$_name $_point: the re-run did not complete (exit $_rc)"
		cat rerun.out rerun.err
		return 1
	fi
	consistent "$_d" || { echo "after the re-run following $_point"; return 1; }
	rm -rf "$_d"
}

# rerun_NAME CMD...: the command again, in the copy.
rerun_submit() {
	"$@"
}
rerun_export() {
	"$@"
}
# Approving again after a kill that came after the approval landed says
# so (exit 2, "not pending"): the work is done.
rerun_approve() {
	"$@" && return 0
	grep -q "review 1 is approved, not pending" ../rerun.err
}
# Resume the run when the kill came after it was recorded.
rerun_campaign() {
	if [ -n "$(q . "SELECT run_id FROM campaign_runs WHERE run_id = 'crash'")" ]; then
		"$WARDEN" campaign --resume --run-id crash
	else
		"$@"
	fi
}

rerun_update() {
	"$@"
}
rerun_triage() {
	"$@"
}
# Publishing again after the publish landed refuses (HEAD is no longer
# the official tip): the work is done.
rerun_publish() {
	if [ -n "$(git tag -l "snapshot/*")" ]; then
		"$WARDEN" journal verify
	else
		"$@"
	fi
}

# A killed cycle is continued by the next 'warden cycle'.
rerun_cycle() {
	"$WARDEN" cycle
}

# Each RERUN-CHECK DIR: the operation's work is done.
approved() {
	test "$(q "$1" "SELECT status FROM reviews WHERE id = 1")" = approved
}
queued() {
	test "$(q "$1" "SELECT count(*) FROM reviews WHERE status = 'pending'")" -ge 1
}
exported() {
	lines=$(git -C "$1" show official:journals/journal.jsonl | wc -l) &&
	test "$lines" -ge "$(cat base.entries)"
}
campaigned() {
	test "$(q "$1" "SELECT state FROM campaign_runs WHERE run_id = 'crash'")" = done &&
	test "$(q "$1" "SELECT count(*) FROM campaign_sweeps WHERE state = 'done' AND outcome = 'complete'")" = 1 &&
	test "$(q "$1" "SELECT count(*) FROM campaign_requests")" = \
	    "$(q "$1" "SELECT count(*) FROM (SELECT DISTINCT sweep_id, warmup, idx FROM campaign_requests)")"
}

cycled() {
	test "$(q "$1" "SELECT state FROM cycles")" = done &&
	test "$(q "$1" "SELECT count(*) FROM cycle_steps WHERE state <> 'running'")" = 11 &&
	test "$(q "$1" "SELECT count(*) FROM cycles")" = 1 &&
	git -C "$1" show official:journals/crash.md | grep -q "^## Summary$" &&
	git -C "$1" show official:results/manifest.json >/dev/null &&
	test "$(q "$1" "SELECT count(*) FROM publishes")" = 1 &&
	test "$(q "$1" "SELECT count(*) FROM campaign_requests")" = \
	    "$(q "$1" "SELECT count(*) FROM (SELECT DISTINCT sweep_id, warmup, idx FROM campaign_requests)")"
}

test_expect_success 'setup: a repository with a queued change and journal entries' '
	bench_init bench &&
	sim_adapter bench simA --itl 2 --prefill-rate 50000 &&
	bench_policy bench "campaign.concurrency=[1]" &&
	mkdir -p bench/adapters/engines &&
	echo "{\"name\": \"e1\"}" >bench/adapters/engines/e1.json &&
	git -C bench add adapters/engines/e1.json &&
	git -C bench diff --cached >change.patch && git -C bench reset -q &&
	rm bench/adapters/engines/e1.json &&
	git -C bench add -A && git -C bench commit -q -m "simulated engines" &&
	git -C bench branch -f official HEAD &&
	warden --repo bench patch submit change.patch --source agent >/dev/null &&
	warden --repo bench journal note "before the crashes" >/dev/null &&
	q bench "SELECT count(*) FROM journal" >base.entries &&
	consistent bench &&
	cp -r bench submit.base && cp -r bench approve.base &&
	cp -r bench export.base && cp -r bench campaign.base
'

test_expect_success 'patch submit killed at each ref update and store commit' '
	crash_points submit "$WARDEN" patch submit ../change.patch --source agent >points &&
	test "$(wc -l <points)" -ge 3 &&
	for p in $(cat points); do
		crash_at submit "$p" queued "$WARDEN" patch submit ../change.patch \
		    --source agent || exit 1
	done
'

test_expect_success 'review approve killed at each ref update and store commit' '
	crash_points approve "$WARDEN" review approve 1 --as "M <m@example.org>" \
	    --without-evidence >points &&
	expect_grep "^official.ref:1$" points && expect_grep "^official.moved:1$" points &&
	for p in $(cat points); do
		crash_at approve "$p" approved "$WARDEN" review approve 1 \
		    --as "M <m@example.org>" --without-evidence || exit 1
	done
'

test_expect_success 'journal export killed at each ref update and store commit' '
	crash_points export "$WARDEN" journal export >points &&
	expect_grep "^official.moved:1$" points &&
	for p in $(cat points); do
		crash_at export "$p" exported "$WARDEN" journal export || exit 1
	done
'

test_expect_success "campaign killed at seeded store commits (seed $SEED)" '
	crash_points campaign "$WARDEN" campaign --limit 4 --run-id crash >all &&
	awk -v seed="$SEED" "BEGIN { srand(seed) } rand() < 0.35 || NR <= 2" all |
	    head -n 8 >points &&
	test "$(wc -l <points)" -ge 3 &&
	cat points &&
	: >unreached &&
	for p in $(cat points); do
		UNREACHED_OK=1 crash_at campaign "$p" campaigned "$WARDEN" \
		    campaign --limit 4 --run-id crash || exit 1
	done &&
	cat unreached &&
	test "$(grep -c "^campaign " "$KILLS")" -ge 3
'

# Both engines updated to shared 2.0: environment and current manifest.
updated() {
	for e in e1 e2; do
		test "$(q "$1" "SELECT json_extract(m.manifest, '$.packages.shared') FROM update_manifests m JOIN update_current c ON c.manifest_id = m.id WHERE c.engine = '$e'")" = 2.0 &&
		test -d "$1/.warden/envs/$e/venv/lib/python3/site-packages/shared-2.0.dist-info" || return 1
	done
}
# One confirmed incident with its pin queued once, row and ref agreeing.
triaged() {
	test "$(q "$1" "SELECT count(*) FROM triage_incidents")" = 1 &&
	test "$(q "$1" "SELECT state FROM triage_incidents")" = confirmed &&
	test "$(q "$1" "SELECT count(*) FROM reviews WHERE source = 'triage'")" = 1 &&
	test "$(q "$1" "SELECT json_extract(record, '$.proposals[0].review') FROM triage_incidents")" = \
	    "$(q "$1" "SELECT id FROM reviews WHERE source = 'triage'")" &&
	test "$(git -C "$1" for-each-ref refs/warden/review | wc -l)" = 1 &&
	test ! -e "$1/.warden/triage/1"
}
published() {
	git -C "$1" log -1 --format=%B official | grep -q "^Warden-Operation: publish " &&
	test "$(git -C "$1" rev-parse "$(git -C "$1" tag -l "snapshot/*")")" = \
	    "$(git -C "$1" rev-parse official)" &&
	test "$(q "$1" "SELECT count(*) FROM publishes")" = 1
}

test_expect_success 'setup: two pip engines on shared 1.0 (a quick pip shim), then 2.0 released' '
	printf "%s" "{\"shared\": {\"versions\": [\"1.0\"]}, \"e1\": {\"versions\": [\"1.0\"], \"requires\": [\"shared\"]}, \"e2\": {\"versions\": [\"1.0\"], \"requires\": [\"shared\"]}}" >index.json &&
	bench_init tbench &&
	bench_policy tbench "campaign.concurrency=[1]" "caps.warmups=1" \
	    "caps.stop_grace_s=1" \
	    "update.shims={\"pip\": [\"python3\", \"$TOP_SRCDIR/tests/fixtures/triage/quick-pip.py\", \"$TEST_DIR/index.json\"]}" \
	    "update.venv_pip=false" \
	    "triage={\"smoke\": {\"concurrency\": [1], \"prompts\": 2}}" &&
	dep_engine tbench e1 e1 shared zero &&
	dep_engine tbench e2 e2 shared refuse &&
	bench_commit tbench "two engines" &&
	(cd tbench && WARDEN_CYCLE=c1 "$WARDEN" update >/dev/null &&
	 WARDEN_CYCLE=c1 "$WARDEN" campaign --limit 2 >/dev/null) &&
	sed "s/\[\"1.0\"\]}, \"e1/[\"1.0\", \"2.0\"]}, \"e1/" index.json >index.new &&
	mv index.new index.json &&
	cp -r tbench update.base &&
	(cd tbench && WARDEN_CYCLE=c2 "$WARDEN" update >/dev/null &&
	 WARDEN_CYCLE=c2 "$WARDEN" campaign --limit 2 >/dev/null) &&
	cp -r tbench triage.base &&
	printf "#!/bin/sh\nWARDEN_CYCLE=c2 \"\$WARDEN\" triage\nrc=\$?\ntest \$rc -le 1 && exit 0\nexit \$rc\n" >triage-run &&
	chmod +x triage-run &&
	consistent update.base && consistent triage.base
'

test_expect_success 'update killed at each environment change and store commit' '
	crash_points update env WARDEN_CYCLE=c2 "$WARDEN" update >points &&
	expect_grep "^update.built:2$" points &&
	for p in $(cat points); do
		crash_at update "$p" updated env WARDEN_CYCLE=c2 "$WARDEN" update || exit 1
	done
'

test_expect_success "triage killed around its proposal and at seeded store commits (seed $SEED)" '
	crash_points triage "$TEST_DIR/triage-run" >all &&
	r=$(grep -n "^review.ref:1$" all | cut -d: -f1) && test -n "$r" &&
	awk -v seed="$SEED" -v r="$r" -v n="$(wc -l <all)" \
	    "BEGIN { srand(seed) } NR <= 1 || (NR >= r - 2 && NR <= r + 2) || NR == n || rand() < 0.04" \
	    all | head -n 9 >points &&
	cat points &&
	for p in $(cat points); do
		crash_at triage "$p" triaged "$TEST_DIR/triage-run" || exit 1
	done
'

test_expect_success 'publish killed at each ref update and store commit' '
	publish_bench pbench sima && measure pbench p &&
	cp -r pbench publish.base &&
	crash_points publish "$WARDEN" publish >points &&
	expect_grep "^official.moved:1$" points &&
	for p in $(cat points); do
		crash_at publish "$p" published "$WARDEN" publish || exit 1
	done
'

test_expect_success "cycle killed at its steps, ref moves and seeded store commits (seed $SEED)" '
	bench_init cycle.base &&
	sim_adapter cycle.base simA --itl 2 --prefill-rate 50000 &&
	bench_policy cycle.base "campaign.concurrency=[1]" "campaign.splits=[\"chat\"]" \
	    "cycle={\"publish\": true, \"fidelity\": false, \"limit\": 3}" &&
	git -C cycle.base add -A && git -C cycle.base commit -q --amend -m "the layout" &&
	git -C cycle.base branch -f official HEAD &&
	git -C cycle.base checkout -q --detach official &&
	WARDEN_CYCLE=crash crash_points cycle "$WARDEN" cycle >all &&
	grep -v "^store\." all >points &&
	grep "^store\." all | awk -v seed="$SEED" "BEGIN { srand(seed) } rand() < 0.25" |
	    head -n 4 >>points &&
	expect_grep "^cycle.step:3$" points && expect_grep "^official.moved:2$" points &&
	cat points &&
	for p in $(cat points); do
		WARDEN_CYCLE=crash crash_at cycle "$p" cycled "$WARDEN" cycle || exit 1
	done
'

test_expect_success 'the kills tried' '
	test "$(wc -l <"$KILLS")" -ge 50
'
sed 's/^/# killed at: /' "$KILLS"

test_done
