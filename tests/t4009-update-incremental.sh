#!/bin/sh
# t4009: git builds are incremental: two persistent work trees, a new tag
# checked out over the older one so unchanged files keep their times and
# the build (a script that "compiles" each source whose object is missing
# or stale, counting what it compiled) redoes only what changed; the job
# count and ccache's directory come from warden; a tag that fails is
# recorded and not built again until a newer tag or --retry-failed, and
# its failure quotes the compiler's error line, not the noise after it;
# the manifest records the commit's own time beside the tag's, and the
# compiler; a policy mirror serves a source url the adapter names.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

# inc_adapter NAME URL: a git adapter whose build is build.sh.
inc_adapter() {
	python3 - bench "$1" "$2" "$TEST_DIR/compiles" <<'PY'
import json, sys
d, name, url, counter = sys.argv[1:5]
a = {"schema": 1, "name": name, "api": "openai-chat",
     "source": {"kind": "git", "url": url, "track": "tag", "ref": "v*",
                "build": [["sh", "build.sh", counter]]},
     "serve": {"argv": ["{env_dir}/src/out/server", "--port", "{port}"],
               "health": "/health"}}
json.dump(a, open("%s/adapters/engines/%s.json" % (d, name), "w"), indent=2)
pol = json.load(open(d + "/policy/warden.json"))
pol["rosters"]["test"].append(name)
json.dump(pol, open(d + "/policy/warden.json", "w"), indent=2)
PY
}

# release TAG [FILE CONTENT]: change FILE (if given), commit, tag, push.
# The commit is dated 2026-01-01, the annotated tag 2026-02-01.
release() {
	(cd work && { [ $# -lt 3 ] || printf '%s\n' "$3" >"src/$2"; } &&
	 git add -A && GIT_COMMITTER_DATE=2026-01-01T00:00:00Z \
	    git commit -q --allow-empty -m "$1" &&
	 GIT_COMMITTER_DATE=2026-02-01T00:00:00Z git tag -a -m "$1" "$1" &&
	 git push -q origin HEAD:main "$1")
}

compiled() {
	if [ -f compiles ]; then wc -l <compiles | tr -d " "; else echo 0; fi
}

test_expect_success 'an upstream whose build compiles what changed' '
	git init -q --bare upstream.git &&
	git clone -q upstream.git work 2>/dev/null &&
	mkdir work/src &&
	for f in a b c d; do echo "$f 1" >work/src/$f.c; done &&
	cat >work/build.sh <<-\EOF &&
	# build.sh COUNTER: "compile" each source whose object is missing or
	# stale; one line per compile in COUNTER; the environment in COUNTER.env
	echo "$CMAKE_BUILD_PARALLEL_LEVEL $MAKEFLAGS $WARDEN_JOBS $CCACHE_DIR $CCACHE_BASEDIR $CCACHE_NOHASHDIR" >"$1.env"
	mkdir -p out
	for f in src/*.c; do
		o=out/$(basename "$f" .c).o
		cmp -s "$f" "$o" && continue
		if grep -q BROKEN "$f"; then
			echo "$f:1:1: error: expected declaration before BROKEN"
			i=0
			while [ $i -lt 300 ]; do
				echo "npm warn deprecated some-package@1.0.$i: noise after the error"
				i=$((i + 1))
			done
			exit 1
		fi
		cp "$f" "$o"
		echo "$f" >>"$1"
	done
	echo "#!/bin/sh" >out/server
	EOF
	release v1 &&
	bench_init bench &&
	inc_adapter inc "file://$TEST_DIR/upstream.git" &&
	(cd bench && warden lint)
'

test_expect_success 'the first build compiles everything, with the policy job count' '
	cd bench &&
	bench_policy . update.build_jobs=3 &&
	expect_exit 0 warden update inc &&
	expect_grep "^inc: updated" out &&
	test "$(cd .. && compiled)" = 4 &&
	test "$(readlink .warden/envs/inc/src)" = builds/work-a &&
	echo "3 -j3 3 $PWD/.warden/ccache $PWD/.warden/envs/inc/builds 1" >../env.want &&
	expect_equal ../env.want ../compiles.env &&
	stat -c "%i %y" .warden/envs/inc/builds/work-a/src/a.c >../a.stat
'

test_expect_success 'the manifest: the commit s own time, the tag s, the compiler' '
	cd bench &&
	warden --json versions inc >v.json &&
	python3 -c "
import json; m = json.load(open(\"v.json\"))[\"inc\"]
s = m[\"source\"]
assert s[\"commit_time\"] == \"2026-01-01T00:00:00Z\", s
assert s[\"tag_time\"] == \"2026-02-01T00:00:00Z\", s
assert s[\"fetched_from\"] is None, s
assert s[\"build\"].endswith(\"/builds/work-a\"), s
assert m[\"toolchain\"][\"cc\"], m[\"toolchain\"]"
'

test_expect_success 'without build_jobs, the job count is the machine s cores' '
	release v2 b.c "b 2" &&
	cd bench &&
	bench_policy . "update={\"build_timeout_s\": 60}" &&
	expect_exit 0 warden update inc &&
	test "$(readlink .warden/envs/inc/src)" = builds/work-b &&
	n=$(getconf _NPROCESSORS_ONLN) &&
	echo "$n -j$n $n $PWD/.warden/ccache $PWD/.warden/envs/inc/builds 1" >../env.want &&
	expect_equal ../env.want ../compiles.env
'

test_expect_success 'the next tag is built over the older tree: only what changed' '
	release v3 c.c "c 3" &&
	cd bench &&
	: >../compiles &&
	expect_exit 0 warden update inc &&
	expect_grep "^  inc v2 → v3$" out &&
	test "$(readlink .warden/envs/inc/src)" = builds/work-a &&
	printf "src/b.c\nsrc/c.c\n" >../compiles.want &&
	expect_equal ../compiles.want ../compiles &&
	stat -c "%i %y" .warden/envs/inc/builds/work-a/src/a.c >../a.stat.now &&
	expect_equal ../a.stat ../a.stat.now &&
	test "$(cat .warden/envs/inc/src/src/c.c)" = "c 3" &&
	ls .warden/envs/inc/builds >../builds.ls &&
	printf "work-a\nwork-a.git\nwork-a.json\nwork-b\nwork-b.git\nwork-b.json\n" >../builds.want &&
	expect_equal ../builds.want ../builds.ls
'

test_expect_success 'nothing new: no build runs' '
	cd bench &&
	: >../compiles &&
	rm -f ../compiles.env &&
	expect_exit 0 warden update inc &&
	expect_grep "^inc: unchanged" out &&
	test ! -f ../compiles.env
'

test_expect_success 'a failing tag quotes the compiler s error, keeps the build in use' '
	release v4 d.c "BROKEN" &&
	cd bench &&
	expect_exit 1 warden update inc &&
	expect_grep "^inc: build_failed$" out &&
	expect_grep "^    .*src/d.c:1:1: error: expected declaration before BROKEN" out &&
	expect_grep "^  build step .* failed: .*; log tail:$" out &&
	! grep -q "log tail:.n" out &&
	log=$(sed -n "s/^  log: //p" out) &&
	test "$(grep -c "noise after the error" "$log")" = 300 &&
	test "$(readlink .warden/envs/inc/src)" = builds/work-a &&
	test "$(cat .warden/envs/inc/src/src/c.c)" = "c 3" &&
	test -f .warden/envs/inc/build-failed.json
'

test_expect_success 'the failed tag is not built again at the next update' '
	cd bench &&
	rm -f ../compiles.env &&
	expect_exit 0 warden update inc &&
	expect_grep "^inc: unchanged" out &&
	expect_grep "^  held: v4: failed to build at .*--retry-failed" out &&
	test ! -f ../compiles.env &&
	expect_exit 0 warden update --dry-run inc &&
	expect_grep "^inc: would_stay" out &&
	test ! -f ../compiles.env
'

test_expect_success '--retry-failed builds it again' '
	cd bench &&
	expect_exit 1 warden update --retry-failed inc &&
	expect_grep "^inc: build_failed$" out &&
	test -f ../compiles.env
'

test_expect_success 'a newer tag is built, and the failure is forgotten' '
	release v5 d.c "d 5" &&
	cd bench &&
	: >../compiles &&
	expect_exit 0 warden update inc &&
	expect_grep "^  inc v3 → v5$" out &&
	test "$(cat .warden/envs/inc/src/src/d.c)" = "d 5" &&
	test ! -f .warden/envs/inc/build-failed.json
'

test_expect_success 'a policy mirror serves the url the adapter names' '
	git clone -q --mirror upstream.git mirror.git &&
	release v6 a.c "a 6" &&
	inc_adapter far "https://upstream.invalid/engine.git" &&
	cd bench &&
	expect_exit 1 warden update far &&
	expect_grep "upstream.invalid" out &&
	bench_policy . "update.mirrors={\"https://upstream.invalid/engine.git\": \"file://$TEST_DIR/mirror.git\"}" &&
	expect_exit 0 warden update far &&
	expect_grep "^  far (none) → v5$" out &&
	warden --json versions far >v.json &&
	python3 -c "
import json, sys; s = json.load(open(\"v.json\"))[\"far\"][\"source\"]
assert s[\"url\"] == \"https://upstream.invalid/engine.git\", s
assert s[\"fetched_from\"] == \"file://$TEST_DIR/mirror.git\", s"
'

test_expect_success 'a mirror of a url prefix' '
	cd bench &&
	bench_policy . "update.mirrors={\"https://upstream.invalid/\": \"file://$TEST_DIR/\"}" &&
	python3 - <<-\PY &&
	import json; p = "adapters/engines/far.json"; a = json.load(open(p))
	a["source"]["url"] = "https://upstream.invalid/upstream.git"
	json.dump(a, open(p, "w"))
	PY
	expect_exit 0 warden update far &&
	expect_grep "^  far v5 → v6$" out
'

test_expect_success 'a mirror that is not a string is refused by name' '
	cd bench &&
	bench_policy . "update.mirrors={\"https://upstream.invalid/\": 3}" &&
	expect_exit 1 warden lint &&
	cat out err >both &&
	expect_grep "update.mirrors" both
'

test_expect_success 'off a terminal, a long build says it is alive every interval' '
	(cd work && sed -i "1a [ ! -f SLOW ] || sleep 4" build.sh && touch SLOW) &&
	release v7 a.c "a 7" &&
	cd bench &&
	bench_policy . "update.mirrors={}" campaign.progress_interval_s=1 &&
	expect_exit 0 warden update inc &&
	# the first line of the step may fall within an interval of the one
	# before it and wait; the lines while it runs say it is alive
	expect_grep "^update 1/1 inc: build ([0-9]* s)$" err &&
	expect_grep "^update 1/1 inc: done$" err &&
	expect_exit 0 warden -q update inc &&
	test ! -s err
'

test_done
