#!/bin/sh
# t5040: what an update starts and copies when little is new, counted
# (bench/update-time.sh times it): the pip shim runs one pip process per
# engine (none started to start another), and with min_release_age_days a
# dry run that would install nothing is the only one; a git source over a
# local mirror gets only the refs its adapter tracks, and a new tag copies
# exactly the objects that are new (one pack, none an earlier pack holds),
# while a pin to a commit no tracked tag reaches still fetches it and
# `warden stale` still sees every branch.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/count-setup.sh"

# closure ENGINE: the recorded packages as "name=version" words.
closure() {
	warden --json versions "$1" | python3 -c '
import json, sys
m = list(json.load(sys.stdin).values())[0]
print(" ".join("%s=%s" % kv for kv in sorted(m["packages"].items())))'
}

count_setup "$TEST_DIR/count"

test_expect_success 'three pip engines over a wheel directory, installed' '
	make_wheel wheels shared 1.0 &&
	for e in enga engb engc; do
		make_wheel wheels $e 1.0 "shared>=1.0" || exit 1
	done &&
	bench_init bench &&
	pip_adapter bench enga enga && pip_adapter bench engb engb &&
	pip_adapter bench engc engc &&
	update_policy bench "$TEST_DIR/wheels" &&
	cd bench && count_run warden update >out 2>&1 &&
	test "$(closure engc)" = "engc=1.0 shared=1.0" &&
	test "$(count_of pip)" = 3
'

test_expect_success 'nothing new: one pip process per engine, pip from the venv' '
	cd bench &&
	count_reset &&
	count_run warden update >out 2>&1 &&
	test $(grep -c ": unchanged" out) = 3 &&
	test "$(count_of pip)" = 3 &&
	test $(grep -c "/venv/bin/python .*__pip-runner__.py" "$COUNT_DIR/pip.log") = 3 &&
	test "$(count_of lsb_release)" -le 3 && test "$(count_of rustc)" -le 3
'

test_expect_success 'min_release_age_days, nothing new: the dry run only' '
	mkdir -p index/shared &&
	python3 -c "
import json
rel = {v: [{\"upload_time_iso_8601\": \"2020-01-01T00:00:00Z\"}] for v in (\"1.0\", \"2.0\")}
json.dump({\"info\": {\"version\": \"2.0\"}, \"releases\": rel}, open(\"index/shared/json\", \"w\"))" &&
	cd bench &&
	bench_policy . update.min_release_age_days=7 \
	    "update.index.json_url=\"file://$TEST_DIR/index/{package}/json\"" &&
	count_reset &&
	count_run warden update >out 2>&1 &&
	test $(grep -c ": unchanged" out) = 3 &&
	test "$(count_of pip)" = 3 &&
	test $(grep -c -- "--dry-run" "$COUNT_DIR/pip.log") = 3 &&
	grep -q "would install nothing" .warden/logs/update/*/enga.log
'

test_expect_success 'min_release_age_days, a new release: the dry run, then the upgrade' '
	make_wheel wheels shared 2.0 &&
	cd bench &&
	count_reset &&
	count_run warden update >out 2>&1 &&
	test $(grep -c "^  shared 1.0 → 2.0$" out) = 3 &&
	test "$(count_of pip)" = 6 &&
	test $(grep -c -- "--dry-run" "$COUNT_DIR/pip.log") = 3 &&
	test "$(closure engb)" = "engb=1.0 shared=2.0" &&
	.warden/envs/engb/venv/bin/python -c "import shared; assert shared.__version__ == \"2.0\""
'

# objects_of PACK: the objects a pack holds, sorted.
objects_of() {
	git verify-pack -v "${1%.pack}.idx" |
	    awk '$2 ~ /^(commit|tree|blob|tag)$/ { print $1 }' | sort
}

# new_packs BEFORE: the packs of the engine's repository not in BEFORE.
new_packs() {
	ls bench2/.warden/envs/gitengine/git/objects/pack/*.pack | sort >packs.now &&
	comm -13 "$1" packs.now
}

test_expect_success 'a mirror with a history, another remote s branch, tag b1' '
	git init -q --bare mirror.git &&
	git clone -q mirror.git work 2>/dev/null &&
	(cd work && i=0 && while [ $i -lt 40 ]; do
		head -c 2000 /dev/urandom | base64 >"f$((i % 7))" && git add . &&
		git commit -q -m "c$i" || exit 1; i=$((i + 1)); done &&
	 git push -q origin HEAD:main &&
	 git checkout -q -b side && echo side >side && git add side &&
	 git commit -q -m side && git push -q origin side:refs/remotes/fork/side &&
	 git checkout -q main 2>/dev/null || git checkout -q -) &&
	git -C mirror.git tag -a -m b1 b1 main~3 &&
	bench_init bench2 &&
	git_mirror_adapter bench2 https://upstream.invalid/engine.git \
	    "$TEST_DIR/mirror.git" &&
	(cd bench2 && expect_exit 0 warden update) &&
	expect_grep "^gitengine: updated" bench2/out &&
	expect_grep "^  gitengine (none) → b1$" bench2/out
'

test_expect_success 'only the tracked tags came, and none of the other branches objects' '
	repo=bench2/.warden/envs/gitengine/git &&
	test "$(git -C $repo for-each-ref --format="%(refname)")" = refs/tags/b1 &&
	! git -C $repo cat-file -e "$(git -C mirror.git rev-parse refs/remotes/fork/side)" &&
	! git -C $repo cat-file -e "$(git -C mirror.git rev-parse main)" &&
	git -C $repo fsck --no-dangling 2>fsck.err
'

test_expect_success 'a new tag copies exactly what is new, in one pack' '
	ls bench2/.warden/envs/gitengine/git/objects/pack/*.pack | sort >packs.b1 &&
	git -C mirror.git tag -a -m b2 b2 main~1 &&
	(cd bench2 && expect_exit 0 warden update) &&
	expect_grep "^  gitengine b1 → b2$" bench2/out &&
	new_packs packs.b1 >new.b2 &&
	test $(wc -l <new.b2) = 1 &&
	objects_of "$(cat new.b2)" >objs.b2 &&
	git -C mirror.git rev-list --objects b2 --not b1 | cut -c1-40 | sort >want.b2 &&
	expect_equal want.b2 objs.b2
'

test_expect_success 'a second new tag: a pack with none of the first one s objects' '
	ls bench2/.warden/envs/gitengine/git/objects/pack/*.pack | sort >packs.b2 &&
	git -C mirror.git tag -a -m b3 b3 main &&
	(cd bench2 && expect_exit 0 warden update) &&
	expect_grep "^  gitengine b2 → b3$" bench2/out &&
	new_packs packs.b2 >new.b3 &&
	test $(wc -l <new.b3) = 1 &&
	objects_of "$(cat new.b3)" >objs.b3 &&
	test -s objs.b3 &&
	test -z "$(comm -12 objs.b2 objs.b3)" &&
	for p in $(cat packs.b2); do
		objects_of "$p" >objs.old && test -z "$(comm -12 objs.old objs.b3)" || exit 1
	done
'

test_expect_success 'nothing new: no pack is written' '
	ls bench2/.warden/envs/gitengine/git/objects/pack/*.pack | sort >packs.b3 &&
	(cd bench2 && expect_exit 0 warden update) &&
	expect_grep "^gitengine: unchanged" bench2/out &&
	test -z "$(new_packs packs.b3)"
'

test_expect_success 'a pin to a commit no tracked tag reaches fetches the branches' '
	(cd work && echo after >after && git add after && git commit -q -m after &&
	 git push -q origin HEAD:main) &&
	c=$(git -C mirror.git rev-parse main) &&
	(cd bench2 && bench_policy . "update.pins=[\"gitengine==$c\"]" &&
	 expect_exit 0 warden update) &&
	expect_grep "^  gitengine b3 → $(echo $c | cut -c1-12)$" bench2/out &&
	git -C bench2/.warden/envs/gitengine/git rev-parse refs/remotes/origin/main >head &&
	test "$(cat head)" = "$c"
'

test_expect_success 'stale fetches every branch and tag and reads their dates' '
	(cd bench2 && bench_policy . "update.pins=[]" &&
	 expect_exit 0 warden --json stale gitengine) &&
	git -C mirror.git tag -d b1 >/dev/null &&
	(cd bench2 && expect_exit 0 warden --json stale gitengine) &&
	! git -C bench2/.warden/envs/gitengine/git rev-parse -q --verify refs/tags/b1 &&
	git -C bench2/.warden/envs/gitengine/git rev-parse -q --verify refs/tags/b2
'

test_done
