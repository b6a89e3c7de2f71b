/*
 * test-update.c - unit tests of the update step's pure parts: version
 * order of tags and package versions, tag patterns, package names, and
 * the manifest diff triage relies on.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "manifest.h"
#include "version.h"

static void
test_version_numbers(void **state)
{
	(void)state;
	assert_true(version_compare("b5000", "b999") > 0);
	assert_true(version_compare("b999", "b1000") < 0);
	assert_true(version_compare("v0.10", "v0.9") > 0);
	assert_true(version_compare("0.31.2", "0.31.1") > 0);
	assert_true(version_compare("1.0", "1.0") == 0);
	assert_true(version_compare("1.0", "1.0.0") < 0);
	assert_true(version_compare("007", "7") == 0);
	assert_true(version_compare("12345678901234567890", "9") > 0);
}

static void
test_version_prereleases(void **state)
{
	(void)state;
	assert_true(version_compare("1.0rc1", "1.0") < 0);
	assert_true(version_compare("1.0", "1.0rc1") > 0);
	assert_true(version_compare("1.0-beta.2", "1.0") < 0);
	assert_true(version_compare("1.0.dev1", "1.0a1") < 0);
	assert_true(version_compare("1.0rc1", "1.0rc2") < 0);
	assert_true(version_compare("1.0.post1", "1.0") > 0);
	assert_true(version_compare("1.0.1", "1.0rc1") > 0);
}

static void
test_tag_patterns(void **state)
{
	(void)state;
	assert_true(version_tag_matches("b*", "b1000"));
	assert_false(version_tag_matches("b*", "v1.0"));
	assert_true(version_tag_matches("v[0-9]*", "v0.10"));
}

static void
test_package_names(void **state)
{
	char *n;

	(void)state;
	n = manifest_package_name("MLX_LM");
	assert_string_equal(n, "mlx-lm");
	free(n);
	n = manifest_package_name("zope..Interface");
	assert_string_equal(n, "zope-interface");
	free(n);
}

static void
test_manifest_diff(void **state)
{
	json_t *a, *b, *d;

	(void)state;
	a = json_pack("{s:{s:s, s:s, s:s}}", "packages", "mlx", "0.31.1",
	    "mlx-lm", "0.31.3", "gone", "1");
	b = json_pack("{s:{s:s, s:s, s:s}}", "packages", "mlx", "0.31.2",
	    "mlx-lm", "0.31.3", "new", "2");
	d = manifest_diff(a, b);
	assert_int_equal(json_object_size(d), 3);
	assert_string_equal(json_string_value(json_object_get(json_object_get(d,
	    "mlx"), "old")), "0.31.1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(d,
	    "mlx"), "new")), "0.31.2");
	assert_true(json_is_null(json_object_get(json_object_get(d, "gone"), "new")));
	assert_true(json_is_null(json_object_get(json_object_get(d, "new"), "old")));
	assert_null(json_object_get(d, "mlx-lm"));
	json_decref(d);
	d = manifest_diff(NULL, b);
	assert_int_equal(json_object_size(d), 3);
	json_decref(d);
	d = manifest_diff(a, a);
	assert_int_equal(json_object_size(d), 0);
	json_decref(d);
	json_decref(a);
	json_decref(b);
}

/* The same version: the same packages, source commit and tag; not the
 * same time, toolchain or models. */
static void
test_manifest_same_version(void **state)
{
	json_t *a, *b;

	(void)state;
	a = json_pack("{s:{s:s}, s:{s:s, s:s}, s:s, s:{s:s}}", "packages",
	    "llama", "b1000", "source", "tag", "b1000", "commit", "aaaa",
	    "created", "2026-12-01T00:00:00Z", "toolchain", "cc", "14");
	b = json_deep_copy(a);
	json_object_set_new(b, "created", json_string("2026-12-08T00:00:00Z"));
	json_object_set_new(b, "toolchain", json_pack("{s:s}", "cc", "15"));
	assert_true(manifest_same_version(a, b));
	json_object_set_new(json_object_get(b, "source"), "commit",
	    json_string("bbbb"));
	assert_false(manifest_same_version(a, b));
	json_decref(b);
	b = json_deep_copy(a);
	json_object_set_new(json_object_get(b, "packages"), "llama",
	    json_string("b1001"));
	assert_false(manifest_same_version(a, b));
	assert_false(manifest_same_version(NULL, a));
	assert_false(manifest_same_version(a, NULL));
	json_decref(a);
	json_decref(b);
}

static void
test_manifest_digest(void **state)
{
	json_t *a = json_pack("{s:i, s:s}", "b", 1, "a", "x");
	json_t *b = json_pack("{s:s, s:i}", "a", "x", "b", 1);
	char ha[65], hb[65];

	(void)state;
	manifest_digest(a, ha);
	manifest_digest(b, hb);
	assert_string_equal(ha, hb);
	assert_int_equal(strlen(ha), 64);
	json_decref(a);
	json_decref(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_numbers),
		cmocka_unit_test(test_version_prereleases),
		cmocka_unit_test(test_tag_patterns),
		cmocka_unit_test(test_package_names),
		cmocka_unit_test(test_manifest_diff),
		cmocka_unit_test(test_manifest_same_version),
		cmocka_unit_test(test_manifest_digest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
