/*
 * stats.h - summary statistics of a sample: mean, standard deviation,
 * median and percentiles.
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

#endif
