#!/bin/sh
# t1006-simengine-versions: the broken-versions fault - the engine reads a
# dependency's version from a file or from a pip-installed package in its
# environment and, for a broken version, refuses to start, answers zero
# tokens, or crashes on the first request, as the adapter asks.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/simengine/lib-sim.sh"

# fake_pip ENVDIR NAME VERSION: what pip leaves for an installed package.
fake_pip() {
	_d="$1/lib/python3.12/site-packages/$2-$3.dist-info"
	mkdir -p "$_d"
	printf "Metadata-Version: 2.1\nName: %s\nVersion: %s\n\nlong description\n" \
	    "$2" "$3" >"$_d/METADATA"
}

test_expect_success 'a broken version with --broken-mode refuse exits 3 and never listens' '
	echo 0.31.2 >mlx.version &&
	expect_exit 3 "$SIMENGINE" --port 0 --port-file p --version-file mlx.version \
	    --broken-versions 0.31.2,0.31.3 --broken-mode refuse &&
	expect_grep "version 0.31.2 is broken" err &&
	test ! -e p
'

test_expect_success 'a good version serves normally' '
	echo 0.31.1 >mlx.version &&
	sim_start s --itl 0 --output-tokens 3 --version-file mlx.version \
	    --broken-versions 0.31.2,0.31.3 --broken-mode refuse &&
	chat s "$(user_body x)" >stream &&
	sim_stop s &&
	sse_check stream "len(o[\"content\"].split()) == 3"
'

test_expect_success 'a broken version with --broken-mode zero answers zero tokens' '
	echo 0.31.3 >mlx.version &&
	sim_start s --itl 0 --version-file mlx.version --broken-versions 0.31.2,0.31.3 \
	    --broken-mode zero &&
	chat s "$(user_body x)" >stream &&
	sim_stop s &&
	sse_check stream "o[\"content\"] == \"\"" "o[\"done\"]"
'

test_expect_success 'a broken version with --broken-mode crash dies on the first request' '
	echo 0.31.2 >mlx.version &&
	sim_start s --itl 0 --version-file mlx.version --broken-versions 0.31.2 \
	    --broken-mode crash &&
	rc=0 && chat s "$(user_body x)" >stream 2>/dev/null || rc=$? &&
	test "$rc" -ne 0 &&
	sim_wait_exit s && test "$SIM_RC" = 134
'

test_expect_success 'a broken version with --broken-mode error_event ends each stream with an error' '
	echo 0.31.2 >mlx.version &&
	sim_start s --itl 0 --output-tokens 8 --version-file mlx.version \
	    --broken-versions 0.31.2 --broken-mode error_event &&
	chat s "$(user_body x)" >stream &&
	sim_stop s &&
	expect_grep "^event: error" stream &&
	sse_check stream "o[\"error_event\"]" "not o[\"done\"]" \
	    "len(o[\"content\"].split()) == 2"
'

test_expect_success '--version-from-pip reads the package version from the environment' '
	fake_pip env mlx 0.31.2 && fake_pip env mlx_lm 0.22.0 &&
	expect_exit 3 "$SIMENGINE" --port 0 --version-from-pip env:mlx \
	    --broken-versions 0.31.2 &&
	expect_grep "0.31.2 is broken" err &&
	sim_start s --itl 0 --version-from-pip env:mlx-lm --broken-versions 0.31.2 &&
	sim_stop s
'

test_expect_success 'a package missing from the environment is an environment error' '
	expect_exit 3 "$SIMENGINE" --port 0 --version-from-pip env:torch \
	    --broken-versions 2.0 &&
	expect_grep "package .torch. is not installed" err
'

sim_cleanup
test_done
