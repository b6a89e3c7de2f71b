#!/bin/sh
# t3006: a review that touches an engine carries evidence before it can be
# approved. A contributor's change to an engine's adapter is refused by
# approve until `review smoke` has run that engine for a few prompts from
# the official tip and with the change (in the sandbox) and attached the
# table; `review show` renders it; `--without-evidence` takes a change
# unmeasured and the journal says so; a change to no engine needs none;
# a payload in the adapter does nothing, and without a sandbox the guard
# rejects the review and puts .git back.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

SANDBOX=$(can_sandbox)
MAINT="Maint Ainer <maint@example.org>"
DB=bench/.warden/warden.db

# community NAME SCRIPT [ARG...]: the change fixture agent SCRIPT makes
# in the bench's checkout, queued as a contributor's patch.
community() {
	_n=$1 _s=$2; shift 2
	git -C bench checkout -q --detach official &&
	echo "engine simfix" >task.md &&
	(cd bench && TMPDIR="$TEST_DIR" sh "$AGENTS/$_s.sh" "$TEST_DIR/task.md" "$@") \
	    >/dev/null &&
	git -C bench diff >"$_n.patch" &&
	git -C bench checkout -q -- adapters &&
	bw patch submit "$TEST_DIR/$_n.patch" --source community \
	    --author "Contributor <c@example.org>" --note "$_n" >/dev/null
}

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

test_expect_success 'a bench whose engine does not start; a contributor fixes its flag' '
	agent_bench bench &&
	git -C bench rev-parse official >official.before &&
	community fix good-fix &&
	expect_exit 0 bw review list --status pending &&
	expect_grep "^1 .*community" out
'

test_expect_success 'approve refuses a change to an engine nobody measured' '
	expect_exit 1 bw review approve 1 --as "$MAINT" &&
	expect_grep "^warden: review 1 changes simfix and carries no smoke evidence of it (warden review smoke 1 runs it); it stays pending (review approve --without-evidence takes it without, and the journal says so)$" err &&
	test "$(sqlite3 $DB "select status from reviews where id = 1")" = pending &&
	git -C bench rev-parse official >official.now &&
	expect_equal official.before official.now &&
	sqlite3 $DB "select body from journal where kind = \"review.approve-failed\"" >failed &&
	expect_grep "no smoke evidence" failed
'

test_expect_success 'review smoke runs it before and after and attaches the table' '
	expect_exit 0 bw review smoke 1 &&
	expect_grep "^review 1: fails before the change, passes after it$" out &&
	expect_grep "^  engine  model       split  c  before         after$" out &&
	expect_grep "^  simfix  qwen3-0.6b  chat   1  not_ready 0/3  complete 3/3$" out &&
	expect_grep "^attached to review 1 as evidence$" out &&
	test "$(sqlite3 $DB "select count(*) from campaign_runs where run_id like \"review-1-%-simfix-before\"")" = 1 &&
	test "$(sqlite3 $DB "select count(*) from campaign_runs where run_id like \"review-1-%-simfix-after\"")" = 1 &&
	test -z "$(ls bench/.warden/smoke)" &&
	test -z "$(git -C bench status --porcelain)" &&
	git -C bench rev-parse official >official.now &&
	expect_equal official.before official.now
'

test_expect_success 'review show renders the evidence as a table; --json keeps it whole' '
	expect_exit 0 bw review show 1 &&
	expect_grep "^evidence .* smoke: fails before the change, passes after it (against $(cut -c1-12 official.before))$" out &&
	expect_grep "^  simfix  qwen3-0.6b  chat   1  not_ready 0/3  complete 3/3$" out &&
	expect_exit 0 bw --json review show 1 &&
	python3 - out "$(cat official.before)" <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	s = [e["body"] for e in d["evidence"] if e["kind"] == "smoke"]
	assert len(s) == 1, d["evidence"]
	s = s[0]
	assert s["engines"] == ["simfix"] and s["passed"] is True, s
	assert s["base"] == sys.argv[2], s
	assert s["before"]["passed"] is False and s["after"]["passed"] is True
	assert s["after"]["runs"][0]["sweeps"][0]["completed"] == 3
	PY
'

test_expect_success 'with its evidence, approve lands it' '
	expect_exit 0 bw review approve 1 --as "$MAINT" &&
	expect_grep "^approved review 1: official is now " out &&
	git -C bench show official:adapters/engines/simfix.json >a.json &&
	expect_grep "\"continuous\"" a.json
'

test_expect_success 'a change that breaks the engine: review smoke exits 1 and says so' '
	edit break "a[\"serve\"][\"argv\"] = [x if x != \"continuous\" else \"continuos\" for x in a[\"serve\"][\"argv\"]]" &&
	expect_exit 1 bw review smoke 2 &&
	expect_grep "^review 2: passes before the change, FAILS after it$" out &&
	expect_grep "^  simfix  qwen3-0.6b  chat   1  complete 3/3  not_ready 0/3$" out &&
	expect_grep "^warden: review 2: passes before the change, FAILS after it$" err &&
	bw review reject 2 --reason "breaks simfix" >/dev/null
'

test_expect_success 'approve --without-evidence takes an unmeasured change, and the journal says so' '
	edit patience "a[\"serve\"][\"ready_timeout_s\"] = 45" &&
	expect_exit 0 bw review approve 3 --as "$MAINT" --without-evidence &&
	sqlite3 $DB "select body from journal where kind = \"review.approved\" order by seq desc limit 1" >approved &&
	python3 - approved <<-PY
	import json, sys
	b = json.load(open(sys.argv[1]))
	assert b["id"] == 3, b
	assert "changes simfix and carries no smoke evidence" in b["without_evidence"], b
	PY
'

test_expect_success 'a change to no engine of a roster needs no evidence, and has none to run' '
	cp bench/adapters/engines/simfix.json bench/adapters/engines/simspare.json &&
	git -C bench add -N adapters/engines/simspare.json &&
	git -C bench diff >spare.patch &&
	git -C bench reset -q && rm bench/adapters/engines/simspare.json &&
	git -C bench checkout -q --detach official &&
	bw patch submit "$TEST_DIR/spare.patch" --source community --note spare >/dev/null &&
	expect_exit 2 bw review smoke 4 &&
	expect_grep "^warden: review 4 changes no engine of a roster: there is nothing to smoke$" err &&
	expect_exit 0 bw review approve 4 --as "$MAINT"
'

test_expect_success 'bad input: no such review, not pending, no number' '
	expect_exit 2 bw review smoke 99 &&
	expect_exit 2 bw review smoke 1 &&
	expect_exit 2 bw review smoke &&
	expect_grep "review smoke needs one review number" err
'

# pr BRANCH PYTHON: a pull request's branch off official that edits
# simfix's adapter (a).
pr() {
	git -C bench checkout -q -B "$1" official &&
	python3 - "$2" <<-'PY' &&
	import json, sys
	p = "bench/adapters/engines/simfix.json"
	a = json.load(open(p))
	exec(sys.argv[1])
	json.dump(a, open(p, "w"), indent=2)
	PY
	git -C bench commit -q -am "$1" &&
	git -C bench checkout -q --detach official
}

test_expect_success 'pr-check --smoke: a pull request that breaks the engine fails with the table' '
	pr pr-break "a[\"serve\"][\"argv\"] = [x if x != \"continuous\" else \"continuos\" for x in a[\"serve\"][\"argv\"]]" &&
	expect_exit 1 bw pr-check official pr-break --smoke &&
	expect_grep "^smoke: passes before the change, FAILS after it$" out &&
	expect_grep "^  simfix  qwen3-0.6b  chat   1  complete 3/3  not_ready 0/3$" out &&
	expect_grep "^pr-check: FAIL (1 file, 0 violations, 0 lint problems)$" out &&
	test "$(sqlite3 $DB "select count(*) from campaign_runs where run_id like \"pr-%-simfix-after\"")" = 1
'

test_expect_success 'pr-check --smoke: a good pull request passes; --json carries the smoke' '
	pr pr-good "a[\"serve\"][\"ready_timeout_s\"] = 50" &&
	expect_exit 0 bw --json pr-check official pr-good --smoke &&
	python3 - out <<-PY &&
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["ok"] is True and d["smoke"]["passed"] is True, d
	assert d["smoke"]["engines"] == ["simfix"]
	PY
	expect_exit 0 bw pr-check official pr-good &&
	! grep "^smoke:" out
'

nothing_done() {
	git -C bench rev-parse official >official.after &&
	expect_equal official.now official.after &&
	test ! -e bench/.git/hooks/pre-push &&
	test ! -e outside-engine.txt &&
	test ! -e "$HOME/.bashrc-injected" &&
	! grep -r -a -l "SECRET-" bench/.warden out err
}

test_expect_success_if $SANDBOX 'a payload in a contributor adapter runs in the sandbox under review smoke and does nothing' '
	agent_policy bench "agent.sandbox=\"required\"" &&
	mkdir -p "$HOME/.ssh" && echo "SECRET-SSH-KEY-1729" >"$HOME/.ssh/id_ed25519" &&
	git -C bench rev-parse official >official.now &&
	community hostile hostile-adapter pre_start "$TEST_DIR" "$HOME" "$TEST_DIR/bench" &&
	expect_exit 0 bw review smoke 5 &&
	grep -r -l "payload-ran-pre_start" bench/.warden/logs/review-5-*-simfix-after >/dev/null &&
	nothing_done &&
	test "$(sqlite3 $DB "select status from reviews where id = 5")" = pending
'

test_expect_success 'without a sandbox the guard rejects the review and puts .git back' '
	agent_policy bench "agent.sandbox=\"best-effort\"" &&
	git -C bench rev-parse official >official.now &&
	community hostile2 hostile-adapter pre_start "$TEST_DIR" "$HOME" "$TEST_DIR/bench" &&
	id=$(sqlite3 $DB "select max(id) from reviews") &&
	WARDEN_BWRAP=/nonexistent/bwrap expect_exit 1 bw review smoke $id &&
	expect_grep "^review $id: quarantined: the smoke campaign changed the repository$" out &&
	expect_grep "^review $id was rejected" out &&
	git -C bench rev-parse official >official.after &&
	expect_equal official.now official.after &&
	test ! -e bench/.git/hooks/pre-push &&
	test "$(sqlite3 $DB "select status from reviews where id = $id")" = rejected &&
	rm -f outside-engine.txt "$HOME/.bashrc-injected"
'

test_expect_success 'killed after attaching a quarantined smoke, before the rejection: approve refuses the review' '
	git -C bench rev-parse official >official.now &&
	community hostile3 hostile-adapter pre_start "$TEST_DIR" "$HOME" "$TEST_DIR/bench" &&
	id=$(sqlite3 $DB "select max(id) from reviews") &&
	WARDEN_BWRAP=/nonexistent/bwrap WARDEN_FAULT=review.smoke.attached expect_exit 137 bw review smoke $id &&
	test ! -e bench/.git/hooks/pre-push &&
	test "$(sqlite3 $DB "select status from reviews where id = $id")" = pending &&
	test "$(sqlite3 $DB "select count(*) from review_evidence where review_id = $id and kind = \"smoke\"")" = 1 &&
	expect_exit 1 bw review approve $id --as "$MAINT" &&
	expect_grep "^warden: review $id changes simfix and carries no smoke evidence of it" err &&
	git -C bench rev-parse official >official.after &&
	expect_equal official.now official.after &&
	rm -f outside-engine.txt "$HOME/.bashrc-injected"
'

test_done
