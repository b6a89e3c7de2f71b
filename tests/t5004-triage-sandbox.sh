#!/bin/sh
# t5004: triage's scratch builds run what no maintainer approved, so they
# run in the sandbox. A git engine whose upstream build step is hostile
# (it reads the maintainer's ssh key and .git/config, and writes a hook
# into the repository, a file into its checkout, into HOME, beside the
# repository and into /tmp)
# breaks with its own release; `warden update` builds it with the
# maintainer's rights (the payload works there), triage rebuilds the old
# release in a scratch directory: there the step runs sandboxed, does
# none of it, sees no secret, and what it leaves in its environment (a
# link where the engine's {home} goes) does not reach out of it either;
# the triage still finds the culprit.
# Without a sandbox ("best-effort" where none works) the post-run guard
# catches the hook the build planted, puts .git back, and the smoke run
# stops; "required" with none stops before anything is built.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/triage/triage-setup.sh"

SANDBOX=$(can_sandbox)
TMP_PWNED="/tmp/$(basename "$TEST_DIR").pwned"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

# git_engine NAME: a git engine over the test's upstream, built by its
# build.sh, serving warden-simengine broken at v2.
git_engine() {
	python3 - bench "$1" "file://$TEST_DIR/upstream.git" <<'PY'
import json, sys
d, name, url = sys.argv[1:4]
a = {"schema": 1, "name": name, "api": "openai-chat",
     "source": {"kind": "git", "url": url, "track": "tag", "ref": "v*",
                "build": [["sh", "build.sh"]]},
     "serve": {"argv": ["warden-simengine", "--version-file",
                        "{env_dir}/src/out/VERSION", "--broken-versions", "v2",
                        "--broken-mode", "zero", "--host", "{host}",
                        "--port", "{port}", "--model", "{model}", "--itl", "0",
                        "--output-tokens", "8", "--prefill-rate", "0"],
               "pre_start": [{"argv": ["sh", "-c",
                   "echo x >{home}/via-home && echo wrote-via-home; true"],
                   "may_fail": True}],
               "own_home": False, "health": "/health",
               "ready_timeout_s": 20}}
json.dump(a, open("%s/adapters/engines/%s.json" % (d, name), "w"), indent=2)
p = json.load(open(d + "/adapters/profiles/qwen3-0.6b.json"))
p["engines"][name] = {"model": "Qwen/Qwen3-0.6B"}
json.dump(p, open(d + "/adapters/profiles/qwen3-0.6b.json", "w"), indent=2)
pol = json.load(open(d + "/policy/warden.json"))
pol["rosters"]["test"].append(name)
json.dump(pol, open(d + "/policy/warden.json", "w"), indent=2)
PY
}

# release TAG: commit VERSION=TAG upstream and tag it.
release() {
	(cd work && echo "$1" >VERSION && git add VERSION build.sh &&
	 GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git commit -q -m "$1" &&
	 GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git tag -a -m "$1" "$1" &&
	 git push -q origin HEAD:main "$1")
}

# What the payload leaves where it can write; payload_gone removes it.
payload_done() {
	test -e bench/.git/hooks/post-checkout && test -e bench/planted.txt &&
	test -e "$HOME/.pwned" && test -e outside-build.txt &&
	test -e "$TMP_PWNED"
}

payload_gone() {
	rm -f bench/.git/hooks/post-checkout bench/planted.txt "$HOME/.pwned" \
	    outside-build.txt "$TMP_PWNED"
}

test_expect_success 'an upstream whose build step is hostile, a secret in HOME' '
	mkdir -p "$HOME/.ssh" wheels &&
	echo "SECRET-SSH-KEY-4242" >"$HOME/.ssh/id_ed25519" &&
	git init -q --bare upstream.git &&
	git clone -q upstream.git work 2>/dev/null &&
	sed -e "s|@HOME@|$HOME|g" -e "s|@BENCH@|$TEST_DIR/bench|g" \
	    -e "s|@OUTSIDE@|$TEST_DIR/outside-build.txt|g" \
	    -e "s|@TMP@|$TMP_PWNED|g" \
	    "$TOP_SRCDIR/tests/fixtures/triage/hostile-build.sh" >work/build.sh &&
	release v1 &&
	triage_bench bench "$TEST_DIR/wheels" &&
	git_engine gitty && git_engine gitty2 &&
	bench_policy bench "agent.sandbox=\"required\"" &&
	bench_commit bench "two git engines" &&
	tb lint
'

test_expect_success 'cycle c1: update runs the payload with the maintainer rights' '
	WARDEN_CYCLE=c1 tb update >/dev/null &&
	payload_done &&
	grep -q "^secret: SECRET-SSH-KEY-4242" bench/.warden/logs/update/c1/gitty.log &&
	payload_gone &&
	WARDEN_CYCLE=c1 tb campaign --limit 2 >out &&
	expect_grep "^gitty .* 2/2  *ok$" out
'

test_expect_success 'cycle c2: release v2 breaks both engines' '
	release v2 &&
	WARDEN_CYCLE=c2 tb update >/dev/null &&
	payload_gone &&
	WARDEN_CYCLE=c2 tb campaign --limit 2 >out &&
	expect_grep "^gitty .* 0/2  *all-failed$" out &&
	expect_grep "^gitty2 .* 0/2  *all-failed$" out
'

test_expect_success_if $SANDBOX 'triage rebuilds v1 in the sandbox: the payload does nothing, the culprit is found' '
	WARDEN_CYCLE=c2 expect_exit 1 tb triage --engine gitty &&
	expect_grep "^  culprit: its own release gitty v1 → v2, confirmed" out &&
	log=$(ls bench/.warden/logs/triage/*/gitty.log) &&
	expect_grep "scratch build of gitty in .* runs in the sandbox (bubblewrap)" "$log" &&
	expect_grep "build step 1 of 1: sh build.sh (sandboxed: bubblewrap)$" "$log" &&
	expect_grep "^hostile-build-ran in .*/bench/.warden/triage/[0-9]*/gitty/builds/work-" "$log" &&
	expect_grep "^secret: cat: " "$log" &&
	expect_no_grep "wrote-git-source\|read-gitdir\|wrote-checkout\|planted-hook\|wrote-home\|wrote-outside\|wrote-tmp" "$log" &&
	# {home} left as a link: the engine gets a real folder instead
	expect_grep "^left {home} as a link" "$log" &&
	test ! -e "$HOME/.ssh/via-home" &&
	! grep -r -a -l "SECRET-" bench/.warden/logs/triage bench/.warden/warden.db out err &&
	test ! -e bench/.git/hooks/post-checkout && test ! -e bench/planted.txt &&
	test ! -e "$HOME/.pwned" && test ! -e outside-build.txt &&
	test ! -e "$TMP_PWNED" &&
	test "$(q "select json_extract(manifest, '"'"'$.sandbox'"'"') from update_manifests where scratch = 1 and engine = '"'"'gitty'"'"'")" = bubblewrap &&
	test "$(q "select outcome from triage_smoke where engine = '"'"'gitty'"'"'")" = pass &&
	tb journal verify >/dev/null
'

test_expect_success '"required" and no sandbox here: triage stops before it builds' '
	WARDEN_BWRAP=/nonexistent/bwrap WARDEN_CYCLE=c2 expect_exit 3 \
	    tb triage --engine gitty2 &&
	expect_grep "policy requires a sandbox for triage.s scratch builds" err &&
	! ls bench/.warden/triage/*/gitty2 2>/dev/null &&
	test "$(q "select count(*) from triage_smoke where engine = '"'"'gitty2'"'"'")" = 0
'

test_expect_success 'without a sandbox (best-effort) the guard catches the build and puts .git back' '
	bench_policy bench "agent.sandbox=\"best-effort\"" &&
	bench_commit bench "best-effort" &&
	WARDEN_BWRAP=/nonexistent/bwrap WARDEN_CYCLE=c2 expect_exit 3 \
	    tb triage --engine gitty2 &&
	expect_grep "triage.s scratch build of gitty2" err &&
	test ! -e bench/.git/hooks/post-checkout &&
	log=$(ls bench/.warden/logs/triage/*/gitty2.log) &&
	expect_grep "build step 1 of 1: sh build.sh (not sandboxed: .agent.sandbox. is \"best-effort\" and no sandbox works here)$" "$log" &&
	test "$(q "select count(*) from triage_smoke where engine = '"'"'gitty2'"'"'")" = 0 &&
	payload_gone &&
	test "$(q "pragma integrity_check")" = ok &&
	tb journal verify >/dev/null
'

test_done
