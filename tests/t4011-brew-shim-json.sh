#!/bin/sh
# t4011: the brew shim reads Homebrew's own JSON, in the shape brew writes
# it (tests/fixtures/update/brew/: `brew info --json=v2 --installed`,
# `brew outdated --json=v2`, `brew list --versions`, answered by a
# recorded brew): a formula's whole runtime closure, a tap's formula by
# its full name, the linked keg of several, a revision suffix, a keg-only
# formula, an alias, a cask; and a name that is not installed refused.
. "$TOP_SRCDIR/tests/lib.sh"

SHIM="$TOP_SRCDIR/runner/shims/brew"
WARDEN_BREW="$TOP_SRCDIR/tests/fixtures/update/brew/fixture-brew"
FIXTURE_BREW_CALLS="$TEST_DIR/calls"
export WARDEN_BREW FIXTURE_BREW_CALLS

# packages FILE: the shim's packages as "name version" lines.
packages() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "brew" and d["python"] is None, d
print("tool " + d["tool_version"])
for n, v in sorted(d["packages"].items()):
    print(n + " " + v)' "$1"
}

test_expect_success 'a formula is its linked keg and its whole runtime closure, a tap'"'"'s included' '
	expect_exit 0 "$SHIM" versions --env /nonexistent llama.cpp &&
	packages out >got &&
	cat >want <<-EOF &&
	tool 5.1.14
	ca-certificates 2025-11-04
	ggml 0.9.4_1
	llama.cpp 7100
	metalprobe 1.2
	openssl@3 3.6.0
	EOF
	expect_equal want got &&
	expect_grep "^info --json=v2 --installed$" calls
'

test_expect_success 'an alias and a full name name their formula; keg-only is its newest keg' '
	expect_exit 0 "$SHIM" versions --env /nonexistent llama-cpp sqlite3 acme/tools/metalprobe &&
	packages out >got &&
	expect_grep "^llama.cpp 7100$" got &&
	expect_grep "^sqlite 3.51.0$" got &&
	expect_grep "^metalprobe 1.2$" got &&
	expect_no_grep "llama-cpp\|sqlite3\|acme/" got
'

test_expect_success 'every installed formula and cask when none is named' '
	expect_exit 0 "$SHIM" versions --env /nonexistent &&
	packages out >got &&
	test "$(wc -l <got)" = 8 &&
	expect_grep "^lm-studio 0.3.30,2$" got &&
	expect_grep "^sqlite 3.51.0$" got
'

test_expect_success 'a dry-run upgrade shows brew outdated'"'"'s newer version, installs nothing' '
	: >calls &&
	expect_exit 0 "$SHIM" upgrade --env /nonexistent --dry-run llama.cpp &&
	packages out >got &&
	expect_grep "^llama.cpp 7150$" got &&
	expect_grep "^ggml 0.9.4_1$" got &&
	expect_grep "^outdated --json=v2 llama.cpp$" calls &&
	expect_no_grep "^upgrade\|^install" calls
'

test_expect_success 'a formula not installed is refused; a new one in a dry run is JSON whatever its name' '
	expect_exit 1 "$SHIM" versions --env /nonexistent nothere &&
	expect_grep "'"'"'nothere'"'"' is not installed" err &&
	expect_exit 0 "$SHIM" upgrade --env /nonexistent --dry-run "new\"one" &&
	python3 -c "import json, sys; d = json.load(open(\"out\")); assert d[\"packages\"] == {\"new\\\"one\": \"(new)\"}, d"
'

test_expect_success 'a pin to a version other than the installed one fails, naming both' '
	expect_exit 1 "$SHIM" pin --env /nonexistent --dry-run ggml==0.9.3 &&
	expect_grep "brew cannot install ggml 0.9.3: 0.9.4_1 is installed" err &&
	expect_exit 0 "$SHIM" pin --env /nonexistent --dry-run ggml==0.9.4_1 &&
	packages out >got &&
	expect_grep "^ggml 0.9.4_1$" got
'

test_done
