/*
 * test-stats.c - percentiles, median, mean and standard deviation against
 * values computed by hand (and matching numpy.percentile's default
 * "linear" method and numpy.std).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats.h"

#define EPS 1e-9

static void
test_one_to_hundred(void **state)
{
	double v[100];
	struct stats_summary s;
	int i;

	/* descending, so the summary must sort */
	for (i = 0; i < 100; i++)
		v[i] = 100 - i;
	stats_summarize(v, 100, &s);
	assert_int_equal(s.n, 100);
	/* h = 99 * 0.99 = 98.01: x[98] + 0.01 * (x[99] - x[98]) */
	assert_float_equal(s.p99, 99.01, EPS);
	assert_true(s.p99 < s.max);	/* p99 of 100 samples is not the max */
	assert_float_equal(s.p90, 90.1, EPS);	/* h = 89.1 */
	assert_float_equal(s.median, 50.5, EPS);
	assert_float_equal(s.mean, 50.5, EPS);
	/* population std of 1..n is sqrt((n^2 - 1) / 12) = sqrt(833.25) */
	assert_float_equal(s.std, 28.866070047722118, 1e-12);
	assert_float_equal(s.min, 1, EPS);
	assert_float_equal(s.max, 100, EPS);
	assert_float_equal(v[0], 100, EPS);	/* input left alone */
}

static void
test_small_samples(void **state)
{
	double three[] = { 3, 1, 2 };
	double four[] = { 4, 1, 3, 2 };
	double one[] = { 5 };
	struct stats_summary s;

	stats_summarize(three, 3, &s);
	assert_float_equal(s.median, 2, EPS);
	assert_float_equal(s.p90, 2.8, EPS);	/* h = 1.8 */
	assert_float_equal(s.p99, 2.98, EPS);	/* h = 1.98 */
	stats_summarize(four, 4, &s);
	assert_float_equal(s.median, 2.5, EPS);
	assert_float_equal(s.p90, 3.7, EPS);	/* h = 2.7 */
	assert_float_equal(s.std, 1.118033988749895, 1e-12);	/* sqrt(1.25) */
	stats_summarize(one, 1, &s);
	assert_float_equal(s.median, 5, EPS);
	assert_float_equal(s.p99, 5, EPS);
	assert_float_equal(s.std, 0, EPS);
	stats_summarize(NULL, 0, &s);
	assert_int_equal(s.n, 0);
	assert_float_equal(s.p99, 0, EPS);
	assert_float_equal(s.mean, 0, EPS);
}

static void
test_percentile_edges(void **state)
{
	double v[] = { 10, 20, 30, 40, 50 };

	assert_float_equal(stats_percentile_sorted(v, 5, 0), 10, EPS);
	assert_float_equal(stats_percentile_sorted(v, 5, 100), 50, EPS);
	assert_float_equal(stats_percentile_sorted(v, 5, 25), 20, EPS);
	assert_float_equal(stats_percentile_sorted(v, 5, 37.5), 25, EPS);
	assert_float_equal(stats_percentile_sorted(v, 5, 99), 49.6, EPS);
	assert_float_equal(stats_percentile_sorted(v, 0, 50), 0, EPS);
}

static void
test_std(void **state)
{
	double classic[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	double two[] = { 0, 2 };
	double same[] = { 3, 3, 3 };
	double wide[] = { 1e9, 1e9 + 2 };

	assert_float_equal(stats_std(classic, 8), 2, 1e-12);
	assert_float_equal(stats_std(two, 2), 1, 1e-12);
	assert_float_equal(stats_std(same, 3), 0, EPS);
	assert_float_equal(stats_std(wide, 2), 1, 1e-6);
	assert_float_equal(stats_mean(classic, 8), 5, EPS);
}

static void
test_samples_grow(void **state)
{
	struct stats_samples s = { NULL, 0, 0 };
	struct stats_summary sum;
	int i;

	for (i = 1; i <= 1000; i++)
		stats_samples_add(&s, i);
	assert_int_equal(s.n, 1000);
	stats_summarize(s.v, s.n, &sum);
	assert_float_equal(sum.median, 500.5, EPS);
	assert_float_equal(sum.p99, 990.01, EPS);	/* h = 989.01 */
	stats_samples_free(&s);
	assert_null(s.v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_to_hundred),
		cmocka_unit_test(test_small_samples),
		cmocka_unit_test(test_percentile_edges),
		cmocka_unit_test(test_std),
		cmocka_unit_test(test_samples_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
