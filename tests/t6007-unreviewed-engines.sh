#!/bin/sh
# t6007: nothing unreviewed runs with the maintainer's rights. An agent
# whose change is only its engine's adapter hides a payload in a
# pre_start step, the server's argv or a stop step; warden runs it in the
# smoke campaign before anyone reviews it, and there it runs in the
# sandbox: it cannot move official, plant a hook, write beside the
# repository or into HOME, or read the ssh key, and journal verify
# holds. Without a sandbox ("best-effort"), the guard after the smoke
# campaign quarantines the run, rejects its review and puts .git back.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

SANDBOX=$(can_sandbox)

test_expect_success 'a bench, and a secret in HOME' '
	agent_bench bench &&
	agent_policy bench "agent.sandbox=\"required\"" &&
	mkdir -p "$HOME/.ssh" &&
	echo "SECRET-SSH-KEY-1729" >"$HOME/.ssh/id_ed25519"
'

# hostile WHERE: the agent run; its payload must have run, and done nothing.
hostile() {
	agent_use bench hostile-adapter "$1" "$TEST_DIR" "$HOME" "$TEST_DIR/bench" &&
	git -C bench rev-parse official >official.before &&
	{ bw agent run --engine simfix >out 2>err || :; } &&
	id=$(sed -n "s/^agent run \([0-9]*\):.*/\1/p" out) &&
	test -n "$id" &&
	grep -r -l "payload-ran-$1" bench/.warden/logs/agent-$id-simfix-after >/dev/null
}

nothing_done() {
	git -C bench rev-parse official >official.after &&
	expect_equal official.before official.after &&
	test ! -e bench/.git/hooks/pre-push &&
	test ! -e outside-engine.txt &&
	test ! -e "$HOME/.bashrc-injected" &&
	! grep -r -a -l "SECRET-" bench/.warden out err &&
	! grep -r -h "moved-official\|planted-hook\|wrote-outside\|wrote-home" bench/.warden/logs
}

for where in pre_start argv stop; do
	test_expect_success_if $SANDBOX "a payload in the adapter's $where runs in the sandbox and does nothing" "
		hostile $where &&
		expect_grep '^agent run [0-9]*: queued' out &&
		nothing_done &&
		test \"\$(sqlite3 bench/.warden/warden.db \"select count(*) from campaign_runs where run_id like 'agent-%-after' and provenance like '%\\\"sandbox\\\":\\\"bubblewrap\\\"%'\")\" -ge 1 &&
		bw journal verify >/dev/null
	"
done

test_expect_success 'without a sandbox (best-effort) the guard quarantines the run and puts .git back' '
	agent_policy bench "agent.sandbox=\"best-effort\"" &&
	WARDEN_BWRAP=/nonexistent/bwrap hostile pre_start &&
	expect_grep "^agent run [0-9]*: quarantined" out &&
	git -C bench rev-parse official >official.after &&
	expect_equal official.before official.after &&
	test ! -e bench/.git/hooks/pre-push &&
	test "$(sqlite3 bench/.warden/warden.db "select status from reviews order by id desc limit 1")" = rejected &&
	bw journal verify >/dev/null
'

test_expect_success 'killed after the guard put .git back, before the rejection: approve refuses the review' '
	# the policy still runs the pre_start payload, sandbox best-effort
	expect_exit 137 env WARDEN_BWRAP=/nonexistent/bwrap \
	    WARDEN_FAULT=agent.guarded "$WARDEN" --repo "$TEST_DIR/bench" \
	    agent run --engine simfix &&
	expect_grep "^agent: smoke after" err &&
	test ! -e bench/.git/hooks/pre-push &&
	id=$(sqlite3 bench/.warden/warden.db "select max(id) from reviews") &&
	test "$(sqlite3 bench/.warden/warden.db "select status from reviews where id = $id")" = pending &&
	expect_exit 1 bw review approve "$id" --as "M <m@example.org>" &&
	expect_grep "^warden: review $id has no smoke evidence, which its agent promised when it queued the change" err &&
	expect_grep "review approve --without-evidence takes it without" err &&
	git -C bench rev-parse official >official.after &&
	expect_equal official.before official.after &&
	test "$(sqlite3 bench/.warden/warden.db "select status from reviews where id = $id")" = pending &&
	bw journal show --json >j.json &&
	python3 - j.json "$id" <<-\PY &&
	import json, sys
	doc = json.load(open(sys.argv[1]))
	rows = doc if isinstance(doc, list) else doc.get("entries", doc)
	hits = [e for e in rows if e.get("kind") == "review.approve-failed"
	        and e.get("body", {}).get("id") == int(sys.argv[2])]
	assert hits and "no smoke evidence" in hits[-1]["body"]["why"], hits
	PY
	bw review show "$id" >show &&
	expect_grep "^evidence .* expects: its agent attaches smoke evidence before it can be approved" show
'

test_done
