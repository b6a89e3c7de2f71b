/* Unit tests of runner/base/buf.c and the path/string helpers in util.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"
#include "util.h"

static void
test_buf_grows_and_stays_terminated(void **state)
{
	struct buf b = BUF_INIT;
	int i;

	(void)state;
	assert_string_equal(buf_cstr(&b), "");
	for (i = 0; i < 1000; i++)
		buf_addch(&b, 'a' + i % 26);
	assert_int_equal(b.len, 1000);
	assert_int_equal(b.data[1000], '\0');
	assert_int_equal(b.data[27], 'b');
	buf_free(&b);
}

static void
test_buf_printf_appends(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	buf_puts(&b, "x=");
	buf_printf(&b, "%d,%s", 42, "y");
	assert_string_equal(buf_cstr(&b), "x=42,y");
	buf_consume(&b, 2);
	assert_string_equal(buf_cstr(&b), "42,y");
	buf_consume(&b, 100);
	assert_string_equal(buf_cstr(&b), "");
	buf_free(&b);
}

static void
test_buf_detach_hands_over(void **state)
{
	struct buf b = BUF_INIT;
	char *s;

	(void)state;
	s = buf_detach(&b);
	assert_string_equal(s, "");
	free(s);
	buf_add(&b, "abc\0def", 7);
	assert_int_equal(b.len, 7);
	s = buf_detach(&b);
	assert_memory_equal(s, "abc\0def", 7);
	assert_null(b.data);
	free(s);
}

static void
test_path_join_and_suffixes(void **state)
{
	char *p;

	(void)state;
	p = path_join("a/", "b");
	assert_string_equal(p, "a/b");
	free(p);
	p = path_join("a", "b/c");
	assert_string_equal(p, "a/b/c");
	free(p);
	assert_true(str_endswith("x.json", ".json"));
	assert_false(str_endswith("json", ".json"));
	assert_true(str_startswith("review.approve", "review."));
}

static void
test_mono_clock_moves_forward(void **state)
{
	uint64_t a, b;

	(void)state;
	a = mono_ns();
	b = mono_ns();
	assert_true(b >= a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_grows_and_stays_terminated),
		cmocka_unit_test(test_buf_printf_appends),
		cmocka_unit_test(test_buf_detach_hands_over),
		cmocka_unit_test(test_path_join_and_suffixes),
		cmocka_unit_test(test_mono_clock_moves_forward),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
