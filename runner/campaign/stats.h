/*
 * stats.h - summary statistics of a sample: mean, standard deviation,
 * median and percentiles; and a rank test of two samples (Mann-Whitney).
 *
 * Percentiles use linear interpolation between closest ranks, numpy's
 * default ("linear") and Hyndman & Fan's type 7: for n sorted samples
 * x[0..n-1] and p in [0, 100], h = (n - 1) * p / 100, and
 *     P = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
 * So p99 of 100 samples lies between the 99th and the 100th value, never
 * simply the maximum, and p50 is the median. The standard deviation is the
 * population one (divide by n), as numpy.std and vllm report it.
 *
 * Never allocates behind the caller's back except stats_summarize's sort
 * copy; never prints.
 */
#ifndef WARDEN_STATS_H
#define WARDEN_STATS_H

#include <stddef.h>

/* Sort v ascending in place. */
void stats_sort(double *v, size_t n);
/* Percentile p (0..100) of n ascending samples; 0 when n is 0. */
double stats_percentile_sorted(const double *sorted, size_t n, double p);
double stats_mean(const double *v, size_t n);
/* Population standard deviation; 0 when n < 2. */
double stats_std(const double *v, size_t n);

struct stats_summary {
	size_t n;
	double mean, std, min, max, median, p90, p99;
};

/* All of the above for n samples in any order (v is not changed). */
void stats_summarize(const double *v, size_t n, struct stats_summary *out);

/* A growable array of samples. */
struct stats_samples {
	double *v;
	size_t n;
	size_t cap;
};

void stats_samples_add(struct stats_samples *s, double x);
void stats_samples_free(struct stats_samples *s);

/*
 * The Mann-Whitney U test (Wilcoxon rank-sum) of x against y, with the
 * normal approximation (stats-mwu.c): every value of both samples is
 * ranked together, ties take the average of their ranks; u is x's
 * statistic, U = R_x - n_x (n_x + 1) / 2 (so u + u_y = n_x n_y); under
 * the null hypothesis (both samples from one distribution) U has mean
 * n_x n_y / 2 and, with the tie correction, variance
 *     n_x n_y / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))),  N = n_x + n_y,
 * t the size of each group of tied values. z = (U - mean) / sd; the
 * p-values use a continuity correction of 1/2 and the standard normal
 * tail (erfc): p_greater = P(Z >= (U - mean - 1/2) / sd), that x tends to
 * be larger than y; p_less = P(Z <= (U - mean + 1/2) / sd); p_two_sided
 * = min(1, 2 min(p_greater, p_less)). The figures of
 * scipy.stats.mannwhitneyu(x, y, method="asymptotic"). When every value
 * is tied (sd 0), or a sample is empty, nothing can be told: every p is 1.
 */
struct stats_mwu {
	size_t nx, ny;
	double u;		/* x's U */
	double mean, sd;	/* of U under the null hypothesis */
	double z;		/* (u - mean) / sd, without continuity
				   correction; 0 when sd is 0 */
	double p_greater, p_less, p_two_sided;
};

void stats_mann_whitney(const double *x, size_t nx, const double *y,
    size_t ny, struct stats_mwu *out);

#endif
