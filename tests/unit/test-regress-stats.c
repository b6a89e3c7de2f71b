/*
 * test-regress-stats.c - the statistics of the regression alerts: the
 * Mann-Whitney U test (stats_mann_whitney) against known values, and
 * the rule that makes a series regressed (regress_judge: the one-sided
 * test in the direction of worse AND the magnitude threshold).
 *
 * Known values: scipy's documented example (scipy.stats.mannwhitneyu of
 * males [19, 22, 16, 29, 24] and females [20, 11, 17, 12], method
 * "asymptotic": U = 17, two-sided p = 0.11134688653314041); the others
 * worked by hand from the formulas in stats.h (ranks, U, the tie-
 * corrected variance, z with a continuity correction of 1/2, and the
 * normal tail 0.5 erfc(z / sqrt 2)).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "regress/regress.h"
#include "stats.h"

#define EPS 1e-12

static void
test_scipy_example(void **state)
{
	double males[] = { 19, 22, 16, 29, 24 };
	double females[] = { 20, 11, 17, 12 };
	struct stats_mwu r;

	(void)state;
	stats_mann_whitney(males, 5, females, 4, &r);
	assert_float_equal(r.u, 17, EPS);
	assert_float_equal(r.mean, 10, EPS);		/* 5 x 4 / 2 */
	/* no ties: sqrt(5 x 4 x 10 / 12) */
	assert_float_equal(r.sd, 4.08248290463863, 1e-12);
	assert_float_equal(r.p_two_sided, 0.11134688653314041, 1e-12);
	/* z = (17 - 10 - 0.5) / 4.0825 = 1.5922: P(Z >= z) */
	assert_float_equal(r.p_greater, 0.05567344326657024, 1e-12);
	assert_float_equal(r.p_less, 0.9669037101389033, 1e-12);
	/* U of one sample and of the other add up to nx x ny */
	stats_mann_whitney(females, 4, males, 5, &r);
	assert_float_equal(r.u, 3, EPS);
	assert_float_equal(r.p_less, 0.05567344326657024, 1e-12);
}

static void
test_ties(void **state)
{
	/* ranks of 1 2 3 4 5 5 6 7 8 9: the two 5s share rank 5.5, so
	 * x = {5..9} has R = 5.5 + 7 + 8 + 9 + 10 = 39.5, U = 39.5 - 15 =
	 * 24.5; variance 25 / 12 x (11 - 6 / 90) = 22.7778 */
	double x[] = { 5, 6, 7, 8, 9 }, y[] = { 1, 2, 3, 4, 5 };
	double same[] = { 3, 3, 3 }, more[] = { 3, 3, 3, 3 };
	struct stats_mwu r;

	(void)state;
	stats_mann_whitney(x, 5, y, 5, &r);
	assert_float_equal(r.u, 24.5, EPS);
	assert_float_equal(r.sd, 4.772607021092118, 1e-12);
	assert_float_equal(r.z, 2.514349064770481, 1e-12);
	assert_float_equal(r.p_greater, 0.007985348176890067, 1e-12);
	assert_float_equal(r.p_two_sided, 0.015970696353780133, 1e-12);
	/* every value tied: no evidence either way */
	stats_mann_whitney(same, 3, more, 4, &r);
	assert_float_equal(r.u, 6, EPS);
	assert_float_equal(r.sd, 0, EPS);
	assert_float_equal(r.p_greater, 1, EPS);
	assert_float_equal(r.p_less, 1, EPS);
	/* an empty sample tells nothing either */
	stats_mann_whitney(x, 5, y, 0, &r);
	assert_float_equal(r.p_two_sided, 1, EPS);
}

static void
test_separated(void **state)
{
	/* 11..20 against 1..10: U = 100 (every pair), z = 50 / 13.2288 */
	double x[10], y[10];
	struct stats_mwu r;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		x[i] = 11 + i;
		y[i] = 1 + i;
	}
	stats_mann_whitney(x, 10, y, 10, &r);
	assert_float_equal(r.u, 100, EPS);
	assert_float_equal(r.z, 3.779644730092272, 1e-12);
	assert_float_equal(r.p_greater, 9.13358955547752e-05, 1e-15);
	assert_true(r.p_less > 0.99);
}

static void
test_worse_pct(void **state)
{
	const struct regress_metric *tp = regress_metric_find(
	    "output_throughput");
	const struct regress_metric *ttft = regress_metric_find("median_ttft_ms");

	(void)state;
	assert_non_null(tp);
	assert_non_null(ttft);
	assert_null(regress_metric_find("ttft_p90"));
	assert_true(tp->lower_worse);
	assert_false(ttft->lower_worse);
	/* a halving of throughput and a doubling of TTFT: both 100 % worse */
	assert_float_equal(regress_worse_pct(tp, 100, 50), 100, EPS);
	assert_float_equal(regress_worse_pct(ttft, 10, 20), 100, EPS);
	/* better is negative */
	assert_float_equal(regress_worse_pct(tp, 100, 200), -50, EPS);
	assert_float_equal(regress_worse_pct(ttft, 20, 10), -50, EPS);
	/* no figure: nothing */
	assert_float_equal(regress_worse_pct(ttft, 0, 10), 0, EPS);
}

static void
test_judge(void **state)
{
	const struct regress_metric *ttft = regress_metric_find("median_ttft_ms");
	const struct regress_metric *tp = regress_metric_find(
	    "output_throughput");
	double slow[] = { 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	double fast[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct regress_verdict v;

	(void)state;
	/* TTFT 5.5 -> 15.5 ms: 182 % worse, p = 9.1e-5 < 0.01: regressed */
	regress_judge(&v, ttft, 5.5, 15.5, slow, 10, fast, 10, 10, 0.01, 5);
	assert_null(v.why_not);
	assert_float_equal(v.p_value, 9.13358955547752e-05, 1e-15);
	assert_true(v.significant);
	assert_true(v.beyond);
	assert_true(v.regressed);
	assert_float_equal(v.change_pct, 100.0 * 15.5 / 5.5 - 100, 1e-9);
	/* the same samples under a threshold it does not reach: significant,
	 * not regressed */
	regress_judge(&v, ttft, 5.5, 15.5, slow, 10, fast, 10, 200, 0.01, 5);
	assert_true(v.significant);
	assert_false(v.beyond);
	assert_false(v.regressed);
	/* lower TTFT is better: the one-sided test says nothing */
	regress_judge(&v, ttft, 15.5, 5.5, fast, 10, slow, 10, 10, 0.01, 5);
	assert_false(v.significant);
	assert_false(v.regressed);
	assert_true(v.worse_pct < 0);
	/* throughput: lower is worse, so the test looks the other way */
	regress_judge(&v, tp, 15.5, 5.5, fast, 10, slow, 10, 10, 0.01, 5);
	assert_float_equal(v.p_value, 9.13358955547752e-05, 1e-15);
	assert_true(v.regressed);
	assert_float_equal(v.worse_pct, 100.0 * 15.5 / 5.5 - 100, 1e-9);
	/* a big change the test cannot confirm: not regressed */
	regress_judge(&v, ttft, 5.5, 15.5, slow, 3, fast, 3, 10, 0.01, 3);
	assert_true(v.beyond);
	assert_false(v.significant);	/* n = 3 + 3: p >= 0.04 at best */
	assert_false(v.regressed);
	/* too few samples: not compared */
	regress_judge(&v, ttft, 5.5, 15.5, slow, 4, fast, 10, 10, 0.01, 5);
	assert_non_null(v.why_not);
	assert_false(v.regressed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scipy_example),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_separated),
		cmocka_unit_test(test_worse_pct),
		cmocka_unit_test(test_judge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
