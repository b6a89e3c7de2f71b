/*
 * test-triage-environment.c - unit tests of what triage lists besides
 * packages and commits: the environment of a sweep from its manifest and
 * its run's OS, what changed between two of them (an OS release, python,
 * a toolchain program changed, added or gone, a model's weights), nothing
 * when either side is unknown, and the text that names it.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "triage/environment.h"

static json_t *
env(const char *manifest, const char *os)
{
	json_t *m = json_loads(manifest, 0, NULL);
	json_t *o = os != NULL ? json_loads(os, 0, NULL) : NULL;
	json_t *e = environment_of(m, o);

	assert_non_null(m);
	json_decref(m);
	json_decref(o);
	return e;
}

static void
test_of(void **state)
{
	json_t *e = env("{\"python\": \"3.12.1\", \"toolchain\": {\"cc\": "
	    "\"gcc 12\", \"cmake\": 7}, \"models\": {\"m\": {\"sha256\": "
	    "\"abcd\", \"bytes\": 3}, \"n\": {\"bytes\": 4}}}",
	    "{\"name\": \"Darwin\", \"release\": \"24.1.0\", \"version\": "
	    "\"x\"}");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(e, "os")),
	    "Darwin 24.1.0");
	assert_string_equal(json_string_value(json_object_get(e, "python")),
	    "3.12.1");
	/* only string versions and models with a digest */
	assert_int_equal(json_object_size(json_object_get(e, "toolchain")), 1);
	assert_int_equal(json_object_size(json_object_get(e, "models")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    e, "models"), "m")), "abcd");
	json_decref(e);
	e = env("{}", NULL);
	assert_true(json_is_null(json_object_get(e, "os")));
	assert_true(json_is_null(json_object_get(e, "python")));
	json_decref(e);
}

static void
test_diff(void **state)
{
	json_t *a = env("{\"python\": \"3.11\", \"toolchain\": {\"cc\": "
	    "\"gcc 12\", \"ld\": \"ld 2.40\"}, \"models\": {\"m\": {\"sha256\": "
	    "\"1111111122\"}}}", "{\"name\": \"Linux\", \"release\": \"6.1\"}");
	json_t *b = env("{\"python\": \"3.12\", \"toolchain\": {\"cc\": "
	    "\"gcc 13\", \"ar\": \"ar 2\"}, \"models\": {\"m\": {\"sha256\": "
	    "\"3333333344\"}}}", "{\"name\": \"Linux\", \"release\": \"6.5\"}");
	json_t *d = environment_diff(a, b), *x;
	struct buf t = BUF_INIT;

	(void)state;
	assert_int_equal(json_array_size(d), 6);
	x = json_array_get(d, 0);
	assert_string_equal(json_string_value(json_object_get(x, "what")), "os");
	assert_string_equal(json_string_value(json_object_get(x, "to")),
	    "Linux 6.5");
	x = json_array_get(d, 1);
	assert_string_equal(json_string_value(json_object_get(x, "what")),
	    "python");
	/* toolchain names sorted: ar (added), cc (changed), ld (gone) */
	x = json_array_get(d, 2);
	assert_string_equal(json_string_value(json_object_get(x, "name")), "ar");
	assert_true(json_is_null(json_object_get(x, "from")));
	x = json_array_get(d, 4);
	assert_string_equal(json_string_value(json_object_get(x, "name")), "ld");
	assert_true(json_is_null(json_object_get(x, "to")));
	environment_text(&t, d);
	assert_string_equal(buf_cstr(&t), "os Linux 6.1 → Linux 6.5; python "
	    "3.11 → 3.12; toolchain ar: (none) → ar 2; toolchain cc: gcc 12 → "
	    "gcc 13; toolchain ld: ld 2.40 → (none); model m: sha256 11111111 "
	    "→ sha256 33333333");
	buf_free(&t);
	json_decref(d);
	/* the same environment: nothing; an unknown side: nothing */
	d = environment_diff(a, a);
	assert_int_equal(json_array_size(d), 0);
	json_decref(d);
	d = environment_diff(NULL, b);
	assert_int_equal(json_array_size(d), 0);
	json_decref(d);
	d = environment_diff(json_null(), b);
	assert_int_equal(json_array_size(d), 0);
	json_decref(d);
	json_decref(a);
	json_decref(b);
}

/* An OS or python recorded on one side only is not a change: older runs
 * did not record it. */
static void
test_one_sided(void **state)
{
	json_t *a = env("{}", NULL);
	json_t *b = env("{\"python\": \"3.12\"}",
	    "{\"name\": \"Linux\", \"release\": \"6.5\"}");
	json_t *d = environment_diff(a, b);

	(void)state;
	assert_int_equal(json_array_size(d), 0);
	json_decref(d);
	json_decref(a);
	json_decref(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_of),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_one_sided),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
