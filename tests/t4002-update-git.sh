#!/bin/sh
# t4002: git sources through libgit2: a local bare repository with tags
# b999, b1000 and a branch; the newest tag in version order is checked
# out and built by a two-step build argv in a work tree (t4009: builds are
# incremental); a failing build keeps the build in use; a branch adapter follows its head; a tag
# younger than min_release_age_days waits; a tag moved to another commit
# is an update; `warden stale` reads dates.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

# git_adapter NAME TRACK REF: a git adapter over the test's upstream.
git_adapter() {
	python3 - bench "$1" "$2" "$3" "file://$TEST_DIR/upstream.git" <<'PY'
import json, sys
d, name, track, ref, url = sys.argv[1:6]
a = {"schema": 1, "name": name, "api": "openai-chat",
     "source": {"kind": "git", "url": url, "track": track, "ref": ref,
                "build": [["mkdir", "-p", "out"],
                          ["cp", "VERSION", "out/built-VERSION"]]},
     "serve": {"argv": ["{env_dir}/src/out/server", "--port", "{port}"],
               "health": "/health"}}
json.dump(a, open("%s/adapters/engines/%s.json" % (d, name), "w"), indent=2)
pol = json.load(open(d + "/policy/warden.json"))
pol["rosters"]["test"].append(name)
json.dump(pol, open(d + "/policy/warden.json", "w"), indent=2)
PY
}

# commit_tag MSG TAG [DATE]: commit VERSION=TAG in the work tree, tag it.
commit_tag() {
	(cd work && echo "$2" >VERSION && git add VERSION &&
	 GIT_COMMITTER_DATE="${3:-2026-01-01T00:00:00Z}" git commit -q -m "$1" &&
	 GIT_COMMITTER_DATE="${3:-2026-01-01T00:00:00Z}" git tag -a -m "$2" "$2" &&
	 git push -q origin HEAD:main "$2")
}

test_expect_success 'an upstream with tags b999 and b1000 and a branch' '
	git init -q --bare upstream.git &&
	git clone -q upstream.git work 2>/dev/null &&
	commit_tag "nine nine nine" b999 &&
	commit_tag "one thousand" b1000 &&
	(cd work && git checkout -q -b dev && echo dev-1 >VERSION &&
	 git commit -q -a -m dev && git push -q origin dev) &&
	(cd work && git checkout -q main) &&
	bench_init bench &&
	git_adapter llama tag "b*" &&
	git_adapter devtrack branch dev &&
	(cd bench && warden lint)
'

test_expect_success 'the newest tag in version order is built and swapped in' '
	cd bench &&
	WARDEN_CYCLE=g1 expect_exit 0 warden update llama &&
	expect_grep "^llama: updated" out &&
	expect_grep "^  llama (none) → b1000$" out &&
	test "$(cat .warden/envs/llama/src/out/built-VERSION)" = b1000 &&
	test -L .warden/envs/llama/src &&
	test "$(readlink .warden/envs/llama/src)" = builds/work-a &&
	warden --json versions llama >v.json &&
	python3 -c "
import json; m = json.load(open(\"v.json\"))[\"llama\"]
assert m[\"source\"][\"tag\"] == \"b1000\", m
assert len(m[\"source\"][\"commit\"]) == 40
assert \"mkdir\" in m[\"toolchain\"] and \"cp\" in m[\"toolchain\"], m[\"toolchain\"]"
'

test_expect_success 'the commit checked out is the tag s commit' '
	cd bench &&
	test "$(git -C ../upstream.git rev-parse b1000^{commit})" = \
	    "$(warden --json versions llama | python3 -c "import json,sys; print(json.load(sys.stdin)[\"llama\"][\"source\"][\"commit\"])")"
'

test_expect_success 'nothing new: unchanged, the same build' '
	cd bench &&
	ls .warden/envs/llama/builds >../builds.before &&
	expect_exit 0 warden update llama &&
	expect_grep "^llama: unchanged" out &&
	ls .warden/envs/llama/builds >../builds.after &&
	expect_equal ../builds.before ../builds.after
'

test_expect_success 'a new tag: --dry-run names it and builds nothing' '
	commit_tag "one thousand and one" b1001 &&
	cd bench &&
	expect_exit 0 warden update --dry-run llama &&
	expect_grep "^llama: would_update$" out &&
	expect_grep "^  llama b1000 → b1001$" out &&
	ls .warden/envs/llama/builds >../builds.after &&
	expect_equal ../builds.before ../builds.after &&
	test "$(cat .warden/envs/llama/src/out/built-VERSION)" = b1000
'

test_expect_success 'a failing build is recorded and keeps the old build' '
	(cd work && git rm -q VERSION && echo broken >README &&
	 git add README && git commit -q -m "lose VERSION" &&
	 git tag -a -m b1002 b1002 && git push -q origin HEAD:main b1002) &&
	cd bench &&
	expect_exit 1 warden update llama &&
	expect_grep "^llama: build_failed$" out &&
	expect_grep "build step 2 of 2 (cp VERSION out/built-VERSION) failed: exit status 1" out &&
	expect_grep "VERSION" out &&
	test "$(cat .warden/envs/llama/src/out/built-VERSION)" = b1000 &&
	test "$(readlink .warden/envs/llama/src)" = builds/work-a &&
	test "$(sqlite3 .warden/warden.db "select outcome from update_attempts order by id desc limit 1")" = build_failed &&
	test -n "$(sqlite3 .warden/warden.db "select detail from update_attempts order by id desc limit 1")" &&
	warden --json versions llama | grep -q "\"engine_version\": \"b1000\""
'

test_expect_success 'a tag younger than min_release_age_days waits' '
	(cd work && git checkout -q b1001 -- VERSION 2>/dev/null || echo b1001 >VERSION) &&
	NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ) &&
	commit_tag "fresh" b1003 "$NOW" &&
	(cd work && git tag -d b1002 >/dev/null && git push -q origin :refs/tags/b1002) &&
	cd bench &&
	bench_policy . update.min_release_age_days=7 &&
	WARDEN_CYCLE=g2 expect_exit 0 warden update llama &&
	expect_grep "^  llama b1000 → b1001$" out &&
	expect_grep "^  held: b1003: tag is younger than" out &&
	test "$(cat .warden/envs/llama/src/out/built-VERSION)" = b1001
'

test_expect_success 'a branch adapter builds the branch head' '
	cd bench &&
	expect_exit 0 warden update devtrack &&
	expect_grep "^  devtrack (none) → dev@[0-9a-f]\{12\}$" out &&
	test "$(cat .warden/envs/devtrack/src/out/built-VERSION)" = dev-1
'

test_expect_success 'a tag moved to another commit: updated, and built again' '
	(cd work && git checkout -q b1001 -- VERSION && echo moved >MOVED &&
	 git add MOVED VERSION &&
	 GIT_COMMITTER_DATE=2026-01-02T00:00:00Z git commit -q -m moved &&
	 GIT_COMMITTER_DATE=2026-01-02T00:00:00Z git tag -f -a -m b1001 b1001 >/dev/null &&
	 git push -q -f origin HEAD:main b1001) &&
	cd bench &&
	old=$(warden --json versions llama | python3 -c "import json,sys; print(json.load(sys.stdin)[\"llama\"][\"source\"][\"commit\"])") &&
	WARDEN_CYCLE=g3 expect_exit 0 warden update llama &&
	expect_grep "^llama: updated" out &&
	new=$(warden --json versions llama | python3 -c "import json,sys; print(json.load(sys.stdin)[\"llama\"][\"source\"][\"commit\"])") &&
	test "$new" = "$(git -C ../upstream.git rev-parse "b1001^{commit}")" &&
	test "$old" != "$new" &&
	test -f .warden/envs/llama/src/MOVED &&
	expect_exit 0 warden update llama &&
	expect_grep "^llama: unchanged" out
'

test_expect_success 'stale reports the newest upstream activity' '
	cd bench &&
	bench_policy . retirement_days=100000 &&
	expect_exit 0 warden stale llama &&
	expect_grep "^engine  *kind  *status  *last upstream activity$" out &&
	expect_grep "^llama  *git  *active " out &&
	expect_exit 0 warden --json stale devtrack &&
	expect_grep "\"status\": \"active\"" out
'

test_expect_success 'stale flags an upstream quiet past retirement_days' '
	cd bench &&
	git init -q --bare ../quiet.git &&
	(cd ../work && git push -q ../quiet.git "b999^{commit}:refs/heads/main" b999) &&
	python3 - "$TEST_DIR" <<PY &&
import json, sys; p = "adapters/engines/llama.json"; a = json.load(open(p))
a["source"]["url"] = "file://" + sys.argv[1] + "/quiet.git"
json.dump(a, open(p, "w"))
PY
	bench_policy . retirement_days=60 &&
	expect_exit 1 warden stale llama &&
	expect_grep "^llama  *git  *stale " out &&
	expect_grep "1 engine without upstream activity for more than 60 days" err
'

test_done
