#!/bin/sh
# t2050: a git engine's build asks git who it is (llama.cpp's cmake runs
# `git rev-parse HEAD` and `git rev-list --count HEAD` in its source
# directory for the version llama-server reports): in warden's work tree
# git answers for the engine's tag commit, never for the bench repository
# the work tree sits in (.warden/envs/NAME/builds/work-X).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

# commit_tag TAG: commit VERSION=TAG upstream and tag it.
commit_tag() {
	(cd work && echo "$1" >VERSION && git add VERSION &&
	 GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git commit -q -m "$1" &&
	 GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git tag -a -m "$1" "$1" &&
	 git push -q origin HEAD:main "$1")
}

# asked NAME: what the build step recorded, one answer a line.
asked() {
	cat "bench/.warden/envs/gitid/src/out/$1"
}

# is_empty FILE: FILE is there and empty (else it is shown).
is_empty() {
	test -f "$1" && { ! test -s "$1" || { cat "$1"; false; }; }
}

test_expect_success 'an engine whose build step records what git says in its work tree' '
	git init -q --bare upstream.git &&
	git clone -q upstream.git work 2>/dev/null &&
	commit_tag b1 && commit_tag b2 &&
	bench_init bench &&
	python3 - bench "file://$TEST_DIR/upstream.git" <<-\PY &&
	import json, sys
	d, url = sys.argv[1:3]
	ask = ("mkdir -p out && git rev-parse --show-toplevel >out/toplevel && "
	       "git rev-parse HEAD >out/head && git rev-list --count HEAD >out/count && "
	       "git describe --tags --exact-match HEAD >out/tag && "
	       "git status --porcelain --untracked-files=no >out/status")
	a = {"schema": 1, "name": "gitid", "api": "openai-chat",
	     "source": {"kind": "git", "url": url, "track": "tag", "ref": "b*",
	                "build": [["sh", "-c", ask]]},
	     "serve": {"argv": ["{env_dir}/src/out/server", "--port", "{port}"],
	               "health": "/health"}}
	json.dump(a, open(d + "/adapters/engines/gitid.json", "w"), indent=2)
	pol = json.load(open(d + "/policy/warden.json"))
	pol["rosters"]["test"].append("gitid")
	json.dump(pol, open(d + "/policy/warden.json", "w"), indent=2)
	PY
	(cd bench && git add -A && git commit -q -m "gitid" && warden lint)
'

test_expect_success 'git in the work tree answers for the engine tag, not for the bench' '
	(cd bench && expect_exit 0 warden update gitid) &&
	bench_head=$(git -C bench rev-parse HEAD) &&
	test "$(asked head)" = "$(git -C upstream.git rev-parse b2^{commit})" &&
	test "$(asked head)" != "$bench_head" &&
	test "$(asked count)" = 2 &&
	test "$(asked tag)" = b2 &&
	test "$(asked toplevel)" = "$(cd bench/.warden/envs/gitid/builds/work-a && pwd -P)" &&
	is_empty bench/.warden/envs/gitid/src/out/status
'

test_expect_success 'the next tag, built in the other work tree, is that tag' '
	commit_tag b3 &&
	(cd bench && expect_exit 0 warden update gitid) &&
	test "$(readlink bench/.warden/envs/gitid/src)" = builds/work-b &&
	test "$(asked head)" = "$(git -C upstream.git rev-parse b3^{commit})" &&
	test "$(asked count)" = 3 &&
	test "$(asked tag)" = b3 &&
	test "$(asked toplevel)" = "$(cd bench/.warden/envs/gitid/builds/work-b && pwd -P)" &&
	is_empty bench/.warden/envs/gitid/src/out/status
'

# llama.cpp's cmake regenerates its version when the work tree's index
# changes (and warns "Git index not found" without one): the index is
# the commit's, written afresh, in a tree built over as in a fresh one.
test_expect_success 'built over the first work tree, git answers for the new tag, its index that tag s' '
	commit_tag b4 &&
	(cd bench && expect_exit 0 warden update gitid) &&
	test "$(readlink bench/.warden/envs/gitid/src)" = builds/work-a &&
	test "$(asked head)" = "$(git -C upstream.git rev-parse b4^{commit})" &&
	test "$(asked tag)" = b4 &&
	is_empty bench/.warden/envs/gitid/src/out/status &&
	test -f bench/.warden/envs/gitid/builds/work-a.git/index &&
	git -C bench/.warden/envs/gitid/builds/work-a ls-files -s VERSION >staged &&
	test "$(cut -d" " -f2 staged)" = "$(git -C upstream.git rev-parse b4:VERSION)"
'

test_done
