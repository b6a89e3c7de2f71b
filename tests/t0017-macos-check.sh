#!/bin/sh
# t0017: ci/macos-check, the step of ci/test that compiles every source
# for arm64 macOS against Apple's SDK headers, passes Darwin code that
# compiles (libproc, CommonCrypto, HAVE_ from its own probes) and fails,
# naming file and line, on what the Mac's compiler warns about or cannot
# compile (a Linux-only call); without the SDK headers it says it skipped.
# The SDK is $WARDEN_MACOS_SDK or ../shared/macos-sdk beside the tree;
# the tests that need it are skipped where it is not.
. "$TOP_SRCDIR/tests/lib.sh"

CHECK="$TOP_SRCDIR/ci/macos-check"
WARDEN_MACOS_CHECK_DIR="$TEST_DIR/work"
export WARDEN_MACOS_CHECK_DIR
have_sdk=no
[ -d "${WARDEN_MACOS_SDK:-$TOP_SRCDIR/../shared/macos-sdk}" ] &&
    command -v clang >/dev/null 2>&1 && have_sdk=yes
[ "$have_sdk" = yes ] || echo "# no macOS SDK headers here: the compile tests are skipped"

test_expect_success 'without the SDK headers the check says it skipped, and passes' '
	WARDEN_MACOS_SDK="$TEST_DIR/none" expect_exit 0 "$CHECK" &&
	expect_grep "^ci/macos-check: skipped: " out
'

cat >"$TEST_DIR/darwin.c" <<'C'
#include "config.h"
#ifndef __APPLE__
#error not compiled for macOS
#endif
#include <sys/resource.h>
#include <unistd.h>
#include <libproc.h>
#include <CommonCrypto/CommonDigest.h>

int darwin_probe(void);
int
darwin_probe(void)
{
	struct rusage_info_v4 ri;
	unsigned char md[CC_SHA256_DIGEST_LENGTH];
	int fds[2];

	CC_SHA256("", 0, md);
#ifdef HAVE_PIPE2
	if (pipe2(fds, 0) != 0)
#else
	if (pipe(fds) != 0)
#endif
		return -1;
	return proc_pid_rusage(1, RUSAGE_INFO_V4, (rusage_info_t *)&ri) + md[0];
}
C
cat >"$TEST_DIR/warns.c" <<'C'
#include "config.h"

int warns_probe(void);
int
warns_probe(void)
{
#ifdef __APPLE__
	int unused;
#endif
	return 0;
}
C
cat >"$TEST_DIR/linux.c" <<'C'
#include "config.h"
#include <unistd.h>

int linux_probe(int *fds);
int
linux_probe(int *fds)
{
	return pipe2(fds, 0);
}
C

test_expect_success_if $have_sdk 'Darwin code passes; a warning and a Linux-only call fail, by file and line' '
	expect_exit 1 "$CHECK" darwin.c warns.c linux.c &&
	cat out &&
	expect_grep "^ci/macos-check: 1 passed, 2 failed (3 files, arm64-apple-macos13" out &&
	expect_grep "^== .*/warns.c$" out &&
	expect_grep "warns.c:8:6: error: unused variable .unused. \[-Werror" out &&
	expect_grep "^== .*/linux.c$" out &&
	expect_grep "linux.c:8:9: error: .*pipe2" out &&
	! grep -q "darwin.c" out
'

test_expect_success_if $have_sdk 'config.h has what the SDK declares, found by probes' '
	c="$WARDEN_MACOS_CHECK_DIR/config.h" &&
	grep -q "^#define HAVE_FUNOPEN 1$" "$c" &&
	grep -q "^#define HAVE_UNISTD_H 1$" "$c" &&
	grep -q "^/\* #undef HAVE_PIPE2 \*/$" "$c" &&
	grep -q "^/\* #undef HAVE_FOPENCOOKIE \*/$" "$c" &&
	grep -q "^/\* #undef HAVE_CLOSEFROM \*/$" "$c" &&
	grep -q "^#define _DARWIN_C_SOURCE 1$" "$c" &&
	grep -q "^#define PACKAGE_VERSION \"[0-9.]*\"$" "$c"
'

test_expect_success 'a file that is not there is a usage error' '
	expect_exit 2 "$CHECK" nothere.c &&
	expect_grep "no file .nothere.c." err
'

test_done
