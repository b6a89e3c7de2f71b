#!/bin/sh
# t4007: a policy group's all-or-none swap survives kill -9: a run passes
# the points its trace lists (checked here), and a kill in each state they
# separate (ga moved, not recorded; gb kept aside or halfway back; the group
# record in its transaction; recorded, not yet settled; ga halfway back) is
# settled by the next `warden update`, so each venv holds what its current
# manifest says. Two pip engines (ga, gb) share `shared` in the group
# `core`, installed by a substitute pip shim that installs dist-info
# directories on disk as pip does, without pip's start-up cost (t4005 shows
# the same rollback with real pip).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

SHIM="$TEST_DIR/shim"
mkdir -p "$SHIM"

index() {
	printf '{"shared": {"versions": %s}, "ga": {"versions": ["1.0"], "deps": ["shared"]}, "gb": {"versions": ["1.0"], "deps": ["shared"]}}\n' \
	    "$1" >"$SHIM/index.json"
}

# on_disk ENGINE: the versions of `shared` whose dist-info is in its venv.
on_disk() {
	(cd "bench/.warden/envs/$1/venv/lib" && ls -d python*/site-packages/shared-*.dist-info) |
	    sed 's/.*shared-\(.*\)\.dist-info/\1/' | tr '\n' ' ' | sed 's/ $//'
}

recorded() {
	(cd bench && warden --json versions "$1") | python3 -c '
import json, sys
print(list(json.load(sys.stdin).values())[0]["packages"]["shared"])'
}

# settled: nothing kept aside, and each venv holds what its manifest says.
settled() {
	for e in ga gb; do
		for f in stash.json venv.prev venv.prev.tmp venv.dead; do
			if [ -e "bench/.warden/envs/$e/$f" ]; then
				echo "$e: $f left"; return 1
			fi
		done
		if [ "$(on_disk $e)" != "$(recorded $e)" ]; then
			echo "$e: venv has $(on_disk $e), manifest says $(recorded $e)"
			return 1
		fi
	done
}

# crash POINT: kill `warden update` at POINT.
crash() {
	_rc=0
	(cd bench && WARDEN_FAULT=$1 warden update >../crash.out 2>&1) || _rc=$?
	if [ "$_rc" -ne 137 ]; then
		echo "$1: exit $_rc, not killed"; cat crash.out; return 1
	fi
}

# rerun POINT: run `warden update gb` (which settles whatever was kept
# aside, then takes ga in with gb as their group asks; its own exit does
# not matter) and check that all is settled.
rerun() {
	(cd bench && warden update gb >../rerun.out 2>&1) || true
	settled || { echo "after a kill at $1"; cat rerun.out; return 1; }
}

# crash_then POINT: crash at POINT, then rerun.
crash_then() {
	crash "$1" && rerun "$1"
}

# points: the fault points one run passes, as NAME:N.
points() {
	rm -f trace &&
	(cd bench && WARDEN_FAULT_TRACE="$TEST_DIR/trace" warden update >/dev/null 2>&1) || true
	awk '{ n[$0]++; print $0 ":" n[$0] }' trace
}

test_expect_success 'two engines of the group core, installed by the substitute shim' '
	index "[\"1.0\"]" &&
	bench_init bench &&
	pip_adapter bench ga ga && pip_adapter bench gb gb &&
	bench_policy bench update.venv_pip=false \
	    "update.shims={\"pip\": [\"python3\", \"$TOP_SRCDIR/tests/fixtures/update/fake-pip-shim.py\", \"$SHIM\"]}" \
	    "update.groups={\"core\": [\"shared\"]}" &&
	(cd bench && warden lint && expect_exit 0 warden update) &&
	test "$(on_disk ga)" = 1.0 && settled
'

test_expect_success 'gb failing: a kill in each state of the rollback leaves ga as it was' '
	index "[\"1.0\", \"2.0\"]" &&
	touch "$SHIM/fail-gb" &&
	points >points.rolled &&
	settled && test "$(on_disk ga)" = 1.0 &&
	cat >points.want <<-EOF &&
	update.stashed:1
	update.stashed:2
	store.commit:1
	store.committed:1
	update.stash_restoring:1
	store.commit:2
	store.committed:2
	update.group_recorded:1
	update.stash_restoring:2
	EOF
	grep -v "^update.built:" points.rolled >points.got &&
	expect_equal points.want points.got &&
	expect_grep "^update.built:1$" points.rolled &&
	for p in update.stashed:2 update.stash_restoring:1 store.commit:2 \
	    update.group_recorded:1 update.stash_restoring:2; do
		crash_then "$p" || exit 1
	done &&
	test "$(on_disk ga)" = 1.0 && test "$(recorded ga)" = 1.0
'

test_expect_success 'a kill after ga moved, before the record, shows the half-done swap; the next update puts it back' '
	_rc=0 &&
	(cd bench && WARDEN_FAULT=update.built:1 warden update >crash.out 2>&1) || _rc=$? &&
	test "$_rc" = 137 &&
	test "$(on_disk ga)" = 2.0 && test "$(recorded ga)" = 1.0 &&
	test -f bench/.warden/envs/ga/stash.json && test -d bench/.warden/envs/ga/venv.prev &&
	(cd bench && expect_exit 1 warden update gb) &&
	test "$(on_disk ga)" = 1.0 && settled
'

test_expect_success 'gb succeeding: a kill in or after the group record never undoes it' '
	rm -f "$SHIM/fail-gb" &&
	index "[\"1.0\", \"2.0\", \"3.0\"]" &&
	crash store.commit:1 &&
	test "$(recorded ga)" = 1.0 && test "$(recorded gb)" = 1.0 &&
	rerun store.commit:1 &&
	test "$(on_disk ga)" = 3.0 && test "$(on_disk gb)" = 3.0 &&
	index "[\"1.0\", \"2.0\", \"3.0\", \"4.0\"]" &&
	crash_then update.group_recorded:1 &&
	test "$(on_disk ga)" = 4.0 && test "$(on_disk gb)" = 4.0
'

test_expect_success 'the store is sound and every attempt journaled' '
	cd bench &&
	test "$(sqlite3 .warden/warden.db "pragma integrity_check")" = ok &&
	test "$(sqlite3 .warden/warden.db "select count(*) from update_attempts")" = \
	    "$(sqlite3 .warden/warden.db "select count(*) from journal where kind = '"'"'update.engine'"'"'")" &&
	warden journal verify
'

test_done
