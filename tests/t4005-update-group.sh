#!/bin/sh
# t4005: a policy group moves its shared dependency in all engines or in
# none, with real pip and local wheels. Two engines (ga, gb) share `shared`
# in the group `core`; when gb's update fails after ga's venv moved (gb's
# model digest differs), ga ends the run with its old venv (the dist-info
# directories on disk) and its old manifest, recorded as group_rolled_back
# naming the group, the package and gb. (t4007 shows an install that fails and kills the swap in each of its
# states, with a faster shim.)
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

# on_disk ENGINE: the versions of `shared` whose dist-info is in its venv.
on_disk() {
	(cd "bench/.warden/envs/$1/venv/lib" && ls -d python*/site-packages/shared-*.dist-info) |
	    sed 's/.*shared-\(.*\)\.dist-info/\1/' | tr '\n' ' ' | sed 's/ $//'
}

# recorded ENGINE: the version of `shared` in its current manifest.
recorded() {
	(cd bench && warden --json versions "$1") | python3 -c '
import json, sys
print(list(json.load(sys.stdin).values())[0]["packages"]["shared"])'
}

# settled: no engine has a venv kept aside, and what each venv holds is
# what its current manifest says.
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

sha() { python3 -c "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())" "$1"; }

test_expect_success 'two engines in the group core share a dependency' '
	make_wheel wheels shared 1.0 &&
	make_wheel wheels ga 1.0 "shared>=1.0" &&
	make_wheel wheels gb 1.0 "shared>=1.0" &&
	mkdir hub && printf "weights of gb" >hub/gb.bin &&
	bench_init bench &&
	pip_adapter bench ga ga &&
	pip_adapter bench gb gb "{}" &&
	python3 - "$TEST_DIR" "$(sha hub/gb.bin)" <<-PY &&
	import json, sys
	t, digest = sys.argv[1], sys.argv[2]
	p = "bench/adapters/engines/gb.json"; a = json.load(open(p))
	a["fetch_model"] = ["cp", t + "/hub/gb.bin", "{model_path}"]
	json.dump(a, open(p, "w"), indent=2)
	p = "bench/adapters/profiles/qwen3-0.6b.json"; pr = json.load(open(p))
	pr["engines"]["gb"].update({"file": "gb/gb.bin", "sha256": digest})
	json.dump(pr, open(p, "w"), indent=2)
	PY
	update_policy bench "$TEST_DIR/wheels" &&
	bench_policy bench "update.groups={\"core\": [\"shared\"]}" &&
	(cd bench && warden lint) &&
	(cd bench && expect_exit 0 warden update) &&
	test "$(on_disk ga)" = 1.0 && test "$(on_disk gb)" = 1.0 &&
	settled
'

test_expect_success 'gb fails on its model: ga is rolled back to its old venv and manifest' '
	make_wheel wheels shared 2.0 &&
	printf "other weights" >hub/gb.bin &&
	cd bench &&
	printf "a damaged copy" >.warden/models/gb/gb.bin &&
	before=$(sqlite3 .warden/warden.db "select manifest_id from update_current where engine = '"'"'ga'"'"'") &&
	expect_exit 1 warden update &&
	expect_grep "^ga: group_rolled_back$" out &&
	expect_grep "^  policy group .core. rolled back: .gb. failed (model_mismatch), so .shared. stays at 1.0 here" out &&
	expect_grep "^gb: model_mismatch$" out &&
	expect_no_grep "→" out &&
	cd .. && test "$(on_disk ga)" = 1.0 && test "$(on_disk gb)" = 1.0 &&
	bench/.warden/envs/ga/venv/bin/python -c "import shared; assert shared.__version__ == \"1.0\"" &&
	settled && cd bench &&
	test "$(sqlite3 .warden/warden.db "select manifest_id from update_current where engine = '"'"'ga'"'"'")" = "$before" &&
	test "$(sqlite3 .warden/warden.db "select outcome || '"'"' '"'"' || (manifest_id is null) from update_attempts where engine = '"'"'ga'"'"' order by id desc limit 1")" = "group_rolled_back 1" &&
	sqlite3 .warden/warden.db "select body from journal where kind = '"'"'update.engine'"'"' and subject = '"'"'ga'"'"' order by seq desc limit 1" >body &&
	expect_grep "group_rolled_back" body &&
	expect_grep "policy group" body
'

test_expect_success 'the store is sound and every attempt journaled' '
	cd bench &&
	test "$(sqlite3 .warden/warden.db "pragma integrity_check")" = ok &&
	test "$(sqlite3 .warden/warden.db "select count(*) from update_attempts")" = \
	    "$(sqlite3 .warden/warden.db "select count(*) from journal where kind = '"'"'update.engine'"'"'")" &&
	warden journal verify
'

test_done
