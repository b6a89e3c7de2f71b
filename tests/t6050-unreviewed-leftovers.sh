#!/bin/sh
# t6050: what an unreviewed run leaves is its own, and warden never opens
# it with the maintainer's rights. A contributor's adapter, smoke-tested
# by `review smoke` and `pr-check --smoke`, replaces every engine log it
# can find with a link to the maintainer's ~/.bashrc or ssh key, plants a
# program in {home} where an official run would execute it, and leaves
# big and sparse files behind. warden writes and reads the log through
# the descriptor it holds (the link is never followed), the run's {home}
# is a copy (the live one is unchanged), what it left is removed, and no
# file it writes grows past the bound. With a sandbox and without one.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

SANDBOX=$(can_sandbox)
LIVE=bench/.warden/envs/simfix/home

# edit NAME TARGET FAIL: a contributor's change to simfix's adapter that
# fixes its flag and carries the payload in pre_start, its links pointing
# at TARGET; FAIL=1 adds a step that fails, so warden quotes the log.
edit() {
	git -C bench checkout -q --detach official &&
	python3 - "$2" "$3" "$TEST_DIR/bench" <<-'PY' &&
	import json, sys
	target, fail, repo = sys.argv[1:4]
	p = "bench/adapters/engines/simfix.json"
	a = json.load(open(p))
	s = a["serve"]
	s["argv"] = [x if x != "continuos" else "continuous" for x in s["argv"]]
	payload = (
	    "for f in $(find %(r)s/.warden/logs {log_dir} -name \"*.log\" 2>/dev/null); do"
	    " rm -f \"$f\"; ln -s %(t)s \"$f\" && echo linked-log; done; "
	    "cat {home}/marker; "
	    "printf \"#!/bin/sh\\necho planted-serve\\n\" >{home}/bin/serve && echo planted; "
	    "echo left >{scratch}/left; "
	    "dd if=/dev/zero of={home}/big bs=1048576 count=4 2>/dev/null; "
	    "truncate -s 8G {log_dir}/sparse.log || echo sparse-refused; "
	    "echo payload-ran") % {"r": repo, "t": target}
	s["pre_start"] = [{"argv": ["sh", "-c", payload], "may_fail": True}]
	if fail == "1":
	    s["pre_start"].append({"argv": ["sh", "-c", "echo failing-now; exit 3"]})
	json.dump(a, open(p, "w"), indent=2)
	PY
	git -C bench diff >"$1.patch" &&
	git -C bench checkout -q -- adapters &&
	bw patch submit "$TEST_DIR/$1.patch" --source community \
	    --author "Contributor <c@example.org>" --note "$1" >/dev/null
}

# The live HOME as an approved run finds it: every path and content.
live_state() {
	(cd "$LIVE" && find . | sort && find . -type f -exec cat {} +) >"$1"
}

# Nothing of the run was written through a link, left, or planted.
untouched() {
	cmp "$HOME/.bashrc" bashrc.orig &&
	cmp "$HOME/.ssh/id_ed25519" key.orig &&
	live_state live.now &&
	expect_equal live.before live.now &&
	test -z "$(ls -A bench/.warden/unreviewed 2>/dev/null)"
}

test_expect_success 'a bench, a secret, a .bashrc, and a live HOME with a program in it' '
	agent_bench bench &&
	mkdir -p "$HOME/.ssh" &&
	echo "SECRET-SSH-KEY-4242" >"$HOME/.ssh/id_ed25519" &&
	echo "# the maintainer s bashrc" >"$HOME/.bashrc" &&
	cp "$HOME/.bashrc" bashrc.orig &&
	cp "$HOME/.ssh/id_ed25519" key.orig &&
	mkdir -p "$LIVE/bin" &&
	printf "#!/bin/sh\necho live-serve\n" >"$LIVE/bin/serve" &&
	chmod +x "$LIVE/bin/serve" &&
	echo live-marker >"$LIVE/marker" &&
	live_state live.before
'

test_expect_success_if $SANDBOX 'review smoke in the sandbox: the run gets a copy of HOME and leaves nothing' '
	agent_policy bench "agent.sandbox=\"required\"" &&
	edit plant "$HOME/.bashrc" 0 &&
	expect_exit 0 bw review smoke 1 &&
	expect_grep "^review 1: fails before the change, passes after it$" out &&
	log=$(find bench/.warden/logs -path "*review-1-*-simfix-after*" -name "*.log" | head -1) &&
	test -f "$log" && test ! -L "$log" &&
	expect_grep "^live-marker$" "$log" &&
	expect_grep "^planted$" "$log" &&
	expect_grep "^sparse-refused$" "$log" &&
	expect_grep "^payload-ran$" "$log" &&
	untouched &&
	bw --json review show 1 >show1.json &&
	python3 - show1.json <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	s = [e["body"] for e in d["evidence"] if e["kind"] == "smoke"][0]
	left = s["after"]["runs"][0]["left"]
	# the 4 MiB file, the planted program, the copy of HOME: measured, then removed
	assert left["bytes"] >= 4 << 20 and left["files"] >= 4, left
	PY
'

test_expect_success_if $SANDBOX 'a failing step in the sandbox: the log tail quoted is the engine s, not the key' '
	edit leak "$HOME/.ssh/id_ed25519" 1 &&
	expect_exit 1 bw review smoke 2 &&
	bw --json review show 2 >show.json &&
	expect_grep "failing-now" show.json &&
	! grep -r -a -l "SECRET-" bench/.warden show.json out err &&
	untouched
'

test_expect_success 'without a sandbox: warden writes through no link the run planted' '
	agent_policy bench "agent.sandbox=\"best-effort\"" &&
	edit plant2 "$HOME/.bashrc" 0 &&
	id=$(sqlite3 bench/.warden/warden.db "select max(id) from reviews") &&
	WARDEN_BWRAP=/nonexistent/bwrap bw review smoke "$id" >smoke.out 2>smoke.err || : &&
	expect_grep "passes after it" smoke.out &&
	test -n "$(find bench/.warden/logs -type l -name "*.log")" &&
	untouched
'

test_expect_success 'without a sandbox: warden reads no key through a link, in review show or pr-check --json' '
	edit leak2 "$HOME/.ssh/id_ed25519" 1 &&
	id=$(sqlite3 bench/.warden/warden.db "select max(id) from reviews") &&
	expect_exit 1 env WARDEN_BWRAP=/nonexistent/bwrap "$WARDEN" --repo "$TEST_DIR/bench" review smoke "$id" &&
	bw --json review show "$id" >show2.json &&
	expect_grep "failing-now" show2.json &&
	git -C bench checkout -q -B pr-leak official &&
	git -C bench apply "$TEST_DIR/leak2.patch" &&
	git -C bench commit -q -am "pr-leak" &&
	git -C bench checkout -q --detach official &&
	expect_exit 1 env WARDEN_BWRAP=/nonexistent/bwrap "$WARDEN" --repo "$TEST_DIR/bench" --json pr-check official pr-leak --smoke &&
	expect_grep "failing-now" out &&
	! grep -a -l "SECRET-" show2.json out err &&
	! sqlite3 bench/.warden/warden.db .dump | grep -a "SECRET-" &&
	untouched
'

test_expect_success 'a killed run leaves its folder; the next unreviewed run removes it' '
	mkdir -p bench/.warden/unreviewed/review-9-dead/simfix/home &&
	ln -s "$HOME" bench/.warden/unreviewed/review-9-dead/simfix/home/link &&
	chmod 000 bench/.warden/unreviewed/review-9-dead/simfix/home &&
	id=$(sqlite3 bench/.warden/warden.db "select max(id) from reviews") &&
	WARDEN_BWRAP=/nonexistent/bwrap bw review smoke "$id" >/dev/null 2>&1 || : &&
	test ! -e bench/.warden/unreviewed/review-9-dead &&
	test -d "$HOME/.ssh" &&
	untouched
'

test_expect_success 'a maintainer reads the store while an agent runs: the run is not quarantined' '
	agent_use bench wait-then-fix &&
	{ ("$WARDEN" --repo "$TEST_DIR/bench" agent run --engine simfix >run.out 2>run.err; echo $? >run.rc) & } &&
	wait_until 120 "ls bench/.warden/agent/*/tmp/started >/dev/null 2>&1" &&
	started=$(ls bench/.warden/agent/*/tmp/started) &&
	id=$(echo "$started" | sed "s|.*/agent/\([0-9]*\)/tmp/started|\1|") &&
	bw agent show "$id" >/dev/null &&
	bw agent list >/dev/null &&
	bw --json agent show "$id" >/dev/null &&
	bw review list >/dev/null &&
	bw journal show >/dev/null &&
	bw campaign list >/dev/null &&
	bw status >/dev/null &&
	touch "$(dirname "$started")/go" &&
	wait_until 300 "test -e run.rc" &&
	expect_grep "^agent run $id: queued" run.out &&
	test "$(sqlite3 bench/.warden/warden.db "select state from agent_runs where id = $id")" = queued
'

test_expect_success 'without a sandbox, an agent that rewrites the journal is quarantined' '
	agent_use bench rewrite-journal "$TEST_DIR/bench" &&
	expect_exit 1 env WARDEN_BWRAP=/nonexistent/bwrap "$WARDEN" --repo "$TEST_DIR/bench" agent run --engine simfix &&
	expect_grep "^agent run [0-9]*: quarantined" out &&
	expect_grep "the journal.s chain is broken at entry" out
'

test_done
