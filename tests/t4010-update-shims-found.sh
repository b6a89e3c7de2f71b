#!/bin/sh
# t4010: warden finds its shims relative to its own executable, as git
# finds its helpers (RUNTIME_PREFIX), without WARDEN_SHIM_DIR: a warden
# of a build tree uses its source tree's runner/shims; a warden copied
# into PREFIX/bin uses PREFIX/libexec/warden/shims; WARDEN_SHIM_DIR still
# wins over both.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
unset WARDEN_SHIM_DIR

SHIM="$TEST_DIR/shim"
mkdir -p "$SHIM"

# fake_shim DIR: a pip shim in DIR that is tests' fake-shim.py.
fake_shim() {
	mkdir -p "$1" &&
	printf '#!/bin/sh\nexec python3 "%s" "%s" "$@"\n' \
	    "$TOP_SRCDIR/tests/fixtures/update/fake-shim.py" "$SHIM" >"$1/pip" &&
	chmod +x "$1/pip"
}

test_expect_success 'a bench with a pip engine and a local wheel' '
	make_wheel wheels engx 1.0 &&
	bench_init bench &&
	pip_adapter bench engx engx &&
	update_policy bench "$TEST_DIR/wheels" &&
	echo good >"$SHIM/mode" &&
	echo "{\"engx\": \"1.0\"}" >"$SHIM/packages.json" &&
	(cd bench && warden lint)
'

test_expect_success 'the build tree s warden runs its source tree s pip shim' '
	cd bench &&
	expect_exit 0 warden update --dry-run engx &&
	expect_grep "^engx: would_update$" out &&
	expect_grep "^  engx (none) → 1.0$" out
'

test_expect_success 'a warden under PREFIX/bin runs PREFIX/libexec/warden/shims/pip' '
	mkdir -p inst/bin &&
	cp "$WARDEN" inst/bin/warden &&
	fake_shim inst/libexec/warden/shims &&
	cd bench &&
	expect_exit 0 ../inst/bin/warden update --dry-run engx &&
	expect_grep "^engx: would_update$" out &&
	expect_grep "^upgrade --env $TEST_DIR/bench/.warden/envs/engx/venv .*--dry-run" "$SHIM/calls"
'

test_expect_success 'WARDEN_SHIM_DIR wins over the executable s place' '
	: >"$SHIM/calls" &&
	fake_shim other &&
	echo "{\"engx\": \"1.0\", \"mark\": \"9\"}" >"$SHIM/packages.json" &&
	cd bench &&
	WARDEN_SHIM_DIR="$TEST_DIR/other" expect_exit 0 warden update --dry-run engx &&
	expect_grep "^  mark (none) → 9$" out &&
	test -s "$SHIM/calls"
'

test_done
