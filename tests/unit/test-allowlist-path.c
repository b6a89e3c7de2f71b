/*
 * test-allowlist-path.c - the path rules of the allowlist gate on their
 * own: glob semantics, the collision key, the path checks, and the
 * decision function on hand-made changes against a small base tree.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>	/* mkdtemp on Darwin */

#include <cmocka.h>
#include <git2.h>

#include "allowlist.h"
#include "util.h"

static const char *const allow[] = { "adapters/engines/**",
    "adapters/profiles/**" };
static const char *const exec_globs[] = { "adapters/engines/*/serve.sh" };
static const struct allowlist_policy policy = { allow, 2, exec_globs, 1, 0,
    0, 0 };

static void
test_glob_double_star(void **state)
{
	assert_true(allowlist_glob_match("adapters/engines/**",
	    "adapters/engines/x.json"));
	assert_true(allowlist_glob_match("adapters/engines/**",
	    "adapters/engines/a/b/c.sh"));
	/* a trailing ** needs something below it */
	assert_false(allowlist_glob_match("adapters/engines/**",
	    "adapters/engines"));
	assert_false(allowlist_glob_match("adapters/engines/**",
	    "adapters/enginesX/x.json"));
	assert_false(allowlist_glob_match("adapters/engines/**",
	    "Adapters/engines/x.json"));
	assert_true(allowlist_glob_match("**/serve.sh", "serve.sh"));
	assert_true(allowlist_glob_match("**/serve.sh", "a/b/serve.sh"));
	assert_true(allowlist_glob_match("a/**/b", "a/b"));
	assert_true(allowlist_glob_match("a/**/b", "a/x/y/b"));
	assert_false(allowlist_glob_match("a/**/b", "a/x/y/c"));
}

static void
test_glob_single_star_stays_in_segment(void **state)
{
	assert_true(allowlist_glob_match("adapters/engines/*/serve.sh",
	    "adapters/engines/omlx/serve.sh"));
	assert_false(allowlist_glob_match("adapters/engines/*/serve.sh",
	    "adapters/engines/a/b/serve.sh"));
	assert_false(allowlist_glob_match("adapters/*", "adapters/a/b"));
	assert_true(allowlist_glob_match("adapters/*.json",
	    "adapters/x.json"));
	assert_true(allowlist_glob_match("a/?.json", "a/x.json"));
	assert_false(allowlist_glob_match("a/?.json", "a/xy.json"));
	assert_true(allowlist_glob_match("a/[bc].json", "a/c.json"));
	assert_false(allowlist_glob_match("", "a"));
	assert_false(allowlist_glob_match("a", ""));
}

static void
test_fold_case_and_unicode(void **state)
{
	char *a, *b;

	a = allowlist_fold("Policy/Warden.JSON");
	assert_string_equal(a, "policy/warden.json");
	free(a);
	/* NFC e-acute and NFD e + combining acute fold alike */
	a = allowlist_fold("caf\xc3\xa9.json");
	b = allowlist_fold("cafe\xcc\x81.json");
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* HFS+ ignorable code points vanish */
	a = allowlist_fold(".g\xe2\x80\x8cit");
	assert_string_equal(a, ".git");
	free(a);
	/* invalid UTF-8 is refused */
	assert_null(allowlist_fold("\xff"));
	assert_null(allowlist_fold("\xc0\xaf"));	/* overlong '/' */
	assert_null(allowlist_fold("\xed\xa0\x80"));	/* a surrogate */
}

/* fold(a) and fold(b) are the same key (neither refused). */
static void
expect_same_key(const char *a, const char *b)
{
	char *ka = allowlist_fold(a), *kb = allowlist_fold(b);

	if (ka == NULL || kb == NULL || strcmp(ka, kb) != 0)
		fail_msg("'%s' -> '%s', '%s' -> '%s': want one key", a,
		    ka ? ka : "(refused)", b, kb ? kb : "(refused)");
	free(ka);
	free(kb);
}

static void
expect_other_key(const char *a, const char *b)
{
	char *ka = allowlist_fold(a), *kb = allowlist_fold(b);

	if (ka == NULL || kb == NULL || strcmp(ka, kb) == 0)
		fail_msg("'%s' -> '%s', '%s' -> '%s': want two keys", a,
		    ka ? ka : "(refused)", b, kb ? kb : "(refused)");
	free(ka);
	free(kb);
}

/* Model names in other scripts have keys; what a macOS volume (or a
 * coarser reading of one) takes for one name has one key. */
static void
test_fold_other_scripts(void **state)
{
	/* Greek: case (including final sigma) and the tonos */
	expect_same_key("\xce\x9b\xce\xac\xce\xbc\xce\xb4\xce\xb1.json",	/* Λάμδα */
	    "\xce\xbb\xce\xac\xce\xbc\xce\xb4\xce\xb1.json");			/* λάμδα */
	expect_same_key("\xce\x9b\xce\xac\xce\xbc\xce\xb4\xce\xb1.json",
	    "\xce\x9b\xce\xb1\xce\xbc\xce\xb4\xce\xb1.json");			/* Λαμδα */
	expect_same_key("\xce\x9b\xce\xac\xce\xbc\xce\xb4\xce\xb1.json",
	    "\xce\x9b\xce\xb1\xcc\x81\xce\xbc\xce\xb4\xce\xb1.json");		/* NFD */
	expect_same_key("\xce\xbb\xcf\x8c\xce\xb3\xce\xbf\xcf\x82",		/* λόγος */
	    "\xce\x9b\xce\x8c\xce\x93\xce\x9f\xce\xa3");				/* ΛΌΓΟΣ */
	expect_other_key("\xce\xb1.json", "\xce\xb2.json");				/* α, β */
	/* CJK: ideographs are their own key; fullwidth Latin is Latin */
	expect_same_key("\xe9\x80\x9a\xe4\xb9\x89\xe5\x8d\x83\xe9\x97\xae",	/* 通义千问 */
	    "\xe9\x80\x9a\xe4\xb9\x89\xe5\x8d\x83\xe9\x97\xae");
	expect_other_key("\xe5\x8d\x83\xe9\x97\xae", "\xe4\xb8\x87\xe9\x97\xae");	/* 千问, 万问 */
	expect_same_key("\xef\xbd\x91\xef\xbd\x97\xef\xbd\x85\xef\xbd\x8e-7b",	/* ｑｗｅｎ-7b */
	    "Qwen-7B");
	/* Japanese kana with and without the voiced mark */
	expect_same_key("\xe3\x81\x8c", "\xe3\x81\x8b\xe3\x82\x99");		/* が, か+゙ */
	/* Latin beyond what the gate took before: ß, ø, æ, ı, ſ */
	expect_same_key("stra\xc3\x9f" "e", "STRASSE");
	expect_same_key("\xc5\xbf" "ample", "sample");
	expect_other_key("\xc3\xb8", "o");
	/* what was accepted before keeps its key */
	expect_same_key("caf\xc3\xa9", "CAFE");
	expect_same_key("\xc4\xb0stanbul", "istanbul");				/* İ */
}

/* Every code point that is not a letter, a mark or a digit (outside
 * ASCII) is still refused, and so is anything unassigned. */
static void
test_fold_refusals_kept(void **state)
{
	static const char *const refused[] = {
		"a\xc2\xa0" "b",		/* U+00A0 no-break space */
		"a\xc2\xad" "b",		/* U+00AD soft hyphen */
		"a\xc2\x85" "b",		/* U+0085 a C1 control */
		"a\xc3\x97" "b",		/* U+00D7 multiplication sign */
		"a\xe2\x80\xa8" "b",		/* U+2028 line separator */
		"a\xe3\x80\x80" "b",		/* U+3000 ideographic space */
		"a\xef\xbc\x8e" "b",		/* U+FF0E fullwidth full stop */
		"a\xef\xbc\x8f" "b",		/* U+FF0F fullwidth solidus */
		"a\xe2\x88\x95" "b",		/* U+2215 division slash */
		"a\xf0\x9f\x98\x80" "b",	/* U+1F600 an emoji */
		"a\xee\x80\x80" "b",		/* U+E000 private use */
		"a\xcd\xb8" "b",		/* U+0378 unassigned */
		"a\xf4\x8f\xbf\xbf" "b",	/* U+10FFFF a noncharacter */
		NULL,
	};
	size_t i;

	for (i = 0; refused[i] != NULL; i++) {
		char *k = allowlist_fold(refused[i]);

		if (k != NULL)
			fail_msg("'%s' folded to '%s'; want refused", refused[i], k);
	}
}

/* An ASCII name's key (taken without utf8proc) is the key utf8proc gives
 * it: behind a Cyrillic letter (no decomposition, no fold) the same
 * characters take utf8proc's way, for every ASCII character. */
static void
test_fold_ascii_as_utf8proc(void **state)
{
	char ascii[4], mixed[8], *fast, *slow, *want;
	int c;

	for (c = 1; c < 0x80; c++) {
		snprintf(ascii, sizeof(ascii), "a%cZ", c);
		snprintf(mixed, sizeof(mixed), "\xd0\xb6%s", ascii);
		fast = allowlist_fold(ascii);
		slow = allowlist_fold(mixed);
		assert_non_null(fast);
		assert_non_null(slow);
		want = xasprintf("\xd0\xb6%s", fast);
		if (strcmp(slow, want) != 0)
			fail_msg("character %d: '%s' next to '%s'", c, fast,
			    slow);
		free(want);
		free(fast);
		free(slow);
	}
}

/* The codes check_path reports for path, as "code,code". */
static char *
path_codes(const char *path)
{
	struct allowlist_report r;
	char *out = xstrdup(""), *tmp;
	size_t i;

	allowlist_report_init(&r);
	allowlist_check_path(&r, path);
	for (i = 0; i < r.nv; i++) {
		tmp = xasprintf("%s%s%s", out, i ? "," : "",
		    allowlist_code_name(r.v[i].code));
		free(out);
		out = tmp;
	}
	allowlist_report_free(&r);
	return out;
}

static void
expect_path(const char *path, const char *codes)
{
	char *got = path_codes(path);

	if (strcmp(got, codes) != 0)
		fail_msg("'%s': want '%s', got '%s'", path, codes, got);
	free(got);
}

static void
test_check_path_rules(void **state)
{
	expect_path("adapters/engines/x.json", "");
	expect_path("adapters/profiles/caf\xc3\xa9.json", "");
	expect_path("", "bad-path");
	expect_path("/etc/passwd", "bad-path");
	expect_path("a//b", "bad-path");
	expect_path("a/", "bad-path");
	expect_path("a/./b", "bad-path");
	expect_path("a/../b", "bad-path");
	expect_path("..", "bad-path");
	expect_path("a\\b", "bad-path");
	expect_path("a/b\tc", "bad-path");
	expect_path("a/\xff", "bad-path");
	expect_path("adapters/profiles/\xce\xbb\xce\xac\xce\xbc\xce\xb4\xce\xb1.json", "");
	expect_path("adapters/profiles/\xe9\x80\x9a\xe4\xb9\x89\xe5\x8d\x83\xe9\x97\xae-7b.json", "");
	expect_path("adapters/profiles/\xe3\x81\x8b\xe3\x82\x99.json", "");
	expect_path("a/\xc2\xa0", "bad-path");
	expect_path("a/\xe2\x80\xa8", "bad-path");
	expect_path("a/\xef\xbc\x8f" "b", "bad-path");
	expect_path("a/\xf0\x9f\x98\x80", "bad-path");
	expect_path("a/\xee\x80\x80", "bad-path");
	expect_path("a/\xcd\xb8", "bad-path");
	expect_path("a/\xcc\x81", "bad-path");		/* a mark with no base */
	expect_path("a/\xe2\x80\xaex", "bad-path");		/* RTL override */
	expect_path("a/.\xef\xbd\x87\xef\xbd\x89\xef\xbd\x94/x", "dotgit");	/* .ｇｉｔ */
	expect_path("a/.G\xc4\xb0T/x", "dotgit");		/* .GİT */
	expect_path("a/.g\xc3\xaet/x", "dotgit");		/* .gît */
	expect_path("a/.git/config", "dotgit");
	expect_path("a/.GiT/config", "dotgit");
	expect_path(".git", "dotgit");
	expect_path("a/.git./x", "dotgit");
	expect_path("a/git~1/x", "dotgit");
	expect_path("a/.g\xe2\x80\x8cit/x", "bad-path,dotgit");
	expect_path("a/\xef\xbb\xbfx", "bad-path");
	expect_path("a/.gitattributes", "gitfile");
	expect_path(".gitmodules", "gitfile");
	expect_path("a/.GITIGNORE", "gitfile");
	expect_path("a/.mailmap", "gitfile");
	expect_path("a/.lfsconfig", "gitfile");
	expect_path("a/.github/x", "gitfile");
	expect_path("a/.gi", "");
}

static void
test_report_dedup_and_exit(void **state)
{
	struct allowlist_report r;

	allowlist_report_init(&r);
	assert_int_equal(allowlist_report_exit(&r), 0);
	allowlist_report_add(&r, AL_SYMLINK, "a", "x");
	allowlist_report_add(&r, AL_SYMLINK, "a", "y");
	assert_int_equal(r.nv, 1);
	assert_int_equal(allowlist_report_exit(&r), 1);
	allowlist_report_add(&r, AL_MALFORMED, "", "z");
	assert_int_equal(allowlist_report_exit(&r), 2);
	allowlist_report_free(&r);
	assert_string_equal(allowlist_code_name(AL_RESULT_MISMATCH),
	    "result-mismatch");
	assert_string_equal(allowlist_code_name(AL_SPECIAL_FILE),
	    "special-file");
	assert_string_equal(allowlist_code_name(AL_HARD_LINK), "hard-link");
	assert_string_equal(allowlist_code_name(AL_UNREADABLE), "unreadable");
	assert_string_equal(allowlist_code_name(AL_CODE_COUNT), "unknown");
}

/* A base tree in a scratch bare repository, for decide tests. */
struct base_fixture {
	char dir[64];
	git_repository *repo;
	git_tree *tree;
	struct allowlist_base *base;
};

static void
index_add(git_index *idx, const char *path, uint32_t mode, const char *data)
{
	git_index_entry e;

	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = mode;
	if (mode == 0160000) {
		git_oid_fromstr(&e.id, data);
		assert_int_equal(git_index_add(idx, &e), 0);
	} else
		assert_int_equal(git_index_add_from_buffer(idx, &e, data,
		    strlen(data)), 0);
}

static int
setup_base(void **state)
{
	struct base_fixture *f = xcalloc(1, sizeof(*f));
	git_index *idx;
	git_oid id;

	strcpy(f->dir, "/tmp/warden-allowlist-path.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(git_repository_init(&f->repo, f->dir, 1), 0);
	assert_int_equal(git_repository_index(&idx, f->repo), 0);
	index_add(idx, "adapters/engines/llama.json", 0100644, "{}\n");
	index_add(idx, "adapters/engines/link", 0120000, "../../policy");
	index_add(idx, "adapters/engines/sub", 0160000,
	    "1234567890123456789012345678901234567890");
	index_add(idx, "policy/warden.json", 0100644, "{\"secret\": 1}\n");
	assert_int_equal(git_index_write_tree_to(&id, idx, f->repo), 0);
	git_index_free(idx);
	assert_int_equal(git_tree_lookup(&f->tree, f->repo, &id), 0);
	assert_null(allowlist_base_load(&f->base, f->repo, f->tree));
	*state = f;
	return 0;
}

static int
teardown_base(void **state)
{
	struct base_fixture *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);

	allowlist_base_free(f->base);
	git_tree_free(f->tree);
	git_repository_free(f->repo);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f);
	return 0;
}

static int
decide_has(struct base_fixture *f, char status, const char *oldp,
    const char *newp, uint32_t mode, enum allowlist_code code)
{
	struct allowlist_change c = { status, oldp, newp, mode, 0 };
	struct allowlist_report r;
	int has;

	allowlist_report_init(&r);
	allowlist_base_forget_added(f->base);
	allowlist_decide(&r, &policy, f->base, &c);
	has = code == AL_CODE_COUNT ? r.nv == 0 : allowlist_report_has(&r,
	    code);
	if (!has && r.nv > 0)
		print_message("# %s: %s\n", allowlist_code_name(r.v[0].code),
		    r.v[0].reason);
	allowlist_report_free(&r);
	return has;
}

static void
test_decide_against_base(void **state)
{
	struct base_fixture *f = *state;

	assert_int_equal(allowlist_base_mode(f->base, "adapters/engines/link"),
	    0120000);
	assert_int_equal(allowlist_base_mode(f->base, "adapters"), 0040000);
	assert_int_equal(allowlist_base_mode(f->base, "nope"), 0);
	assert_true(decide_has(f, 'A', NULL, "adapters/engines/new.json",
	    0100644, AL_CODE_COUNT));
	assert_true(decide_has(f, 'M', "adapters/engines/llama.json",
	    "adapters/engines/llama.json", 0100644, AL_CODE_COUNT));
	/* the old mode comes from the base, not from the change */
	assert_true(decide_has(f, 'M', "adapters/engines/link",
	    "adapters/engines/link", 0100644, AL_SYMLINK));
	assert_true(decide_has(f, 'D', "adapters/engines/sub", NULL, 0,
	    AL_GITLINK));
	assert_true(decide_has(f, 'A', NULL, "adapters/engines/link/x",
	    0100644, AL_PREFIX_NOT_DIR));
	assert_true(decide_has(f, 'A', NULL, "adapters/engines/sub/x",
	    0100644, AL_PREFIX_NOT_DIR));
	assert_true(decide_has(f, 'A', NULL, "adapters/engines/LLAMA.json",
	    0100644, AL_CASE_COLLISION));
	assert_true(decide_has(f, 'A', NULL, "Adapters/engines/x.json",
	    0100644, AL_CASE_COLLISION));
	assert_true(decide_has(f, 'A', NULL, "adapters/engines/x.sh",
	    0100755, AL_MODE));
	assert_true(decide_has(f, 'A', NULL, "adapters/engines/a/serve.sh",
	    0100755, AL_CODE_COUNT));
	assert_true(decide_has(f, 'A', NULL, "adapters/engines/d", 0040000,
	    AL_MODE));
	assert_true(decide_has(f, 'R', "policy/warden.json",
	    "adapters/engines/p.json", 0100644, AL_OUTSIDE_ALLOWLIST));
	assert_true(decide_has(f, 'R', "adapters/engines/llama.json",
	    "policy/llama.json", 0100644, AL_OUTSIDE_ALLOWLIST));
	assert_true(decide_has(f, 'C', "policy/warden.json",
	    "adapters/engines/p.json", 0100644, AL_COPY_FROM_OUTSIDE));
	assert_true(decide_has(f, 'M', "adapters/engines/gone.json",
	    "adapters/engines/gone.json", 0100644, AL_MALFORMED));
}

static void
test_decide_collisions_within_change(void **state)
{
	struct base_fixture *f = *state;
	struct allowlist_change a = { 'A', NULL, "adapters/engines/New.json",
	    0100644, 0 };
	struct allowlist_change b = { 'A', NULL, "adapters/engines/new.json",
	    0100644, 0 };
	struct allowlist_report r;

	allowlist_report_init(&r);
	allowlist_decide(&r, &policy, f->base, &a);
	assert_int_equal(r.nv, 0);
	allowlist_decide(&r, &policy, f->base, &b);
	assert_true(allowlist_report_has(&r, AL_CASE_COLLISION));
	allowlist_report_free(&r);
}

static void
test_decide_blob_copy(void **state)
{
	struct base_fixture *f = *state;
	struct allowlist_report r;
	git_oid id;

	allowlist_report_init(&r);
	assert_int_equal(git_blob_create_from_buffer(&id, f->repo,
	    "{\"secret\": 1}\n", 14), 0);
	allowlist_decide_blob(&r, &policy, f->base, "adapters/engines/x",
	    &id);
	assert_true(allowlist_report_has(&r, AL_COPY_FROM_OUTSIDE));
	allowlist_report_free(&r);
	allowlist_report_init(&r);
	assert_int_equal(git_blob_create_from_buffer(&id, f->repo, "{}\n", 3),
	    0);
	allowlist_decide_blob(&r, &policy, f->base, "adapters/engines/x",
	    &id);
	assert_int_equal(r.nv, 0);
	allowlist_report_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_double_star),
		cmocka_unit_test(test_glob_single_star_stays_in_segment),
		cmocka_unit_test(test_fold_case_and_unicode),
		cmocka_unit_test(test_fold_other_scripts),
		cmocka_unit_test(test_fold_refusals_kept),
		cmocka_unit_test(test_fold_ascii_as_utf8proc),
		cmocka_unit_test(test_check_path_rules),
		cmocka_unit_test(test_report_dedup_and_exit),
		cmocka_unit_test_setup_teardown(test_decide_against_base,
		    setup_base, teardown_base),
		cmocka_unit_test_setup_teardown(
		    test_decide_collisions_within_change, setup_base,
		    teardown_base),
		cmocka_unit_test_setup_teardown(test_decide_blob_copy,
		    setup_base, teardown_base),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
