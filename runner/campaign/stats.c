/*
 * stats.c - summary statistics. See stats.h for the percentile rule.
 */
#include "config.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

/*
 * Square root by Newton's iteration, so warden needs no libm. Converges
 * quadratically from above; stops when the estimate stops shrinking,
 * which is within one ulp of the correctly rounded root.
 */
static double
stats_sqrt(double x)
{
	double r, next;

	if (!(x > 0))
		return 0;
	if (x > DBL_MAX)
		return x;
	r = x > 1 ? x : 1;
	for (;;) {
		next = 0.5 * (r + x / r);
		if (next >= r)
			return r;
		r = next;
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y ? 1 : 0;
}

void
stats_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

double
stats_percentile_sorted(const double *sorted, size_t n, double p)
{
	double h, frac;
	size_t lo;

	if (n == 0)
		return 0;
	if (p <= 0)
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	h = (double)(n - 1) * p / 100.0;
	lo = (size_t)h;	/* h >= 0: truncation is floor */
	if (lo + 1 >= n)
		return sorted[n - 1];
	frac = h - (double)lo;
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double
stats_mean(const double *v, size_t n)
{
	double sum = 0;
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

double
stats_std(const double *v, size_t n)
{
	double mean, d, sum = 0;
	size_t i;

	if (n < 2)
		return 0;
	mean = stats_mean(v, n);
	for (i = 0; i < n; i++) {
		d = v[i] - mean;
		sum += d * d;
	}
	return stats_sqrt(sum / (double)n);
}

void
stats_summarize(const double *v, size_t n, struct stats_summary *out)
{
	double *s;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (n == 0)
		return;
	s = xmalloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	out->mean = stats_mean(s, n);
	out->std = stats_std(s, n);
	out->min = s[0];
	out->max = s[n - 1];
	out->median = stats_percentile_sorted(s, n, 50);
	out->p90 = stats_percentile_sorted(s, n, 90);
	out->p99 = stats_percentile_sorted(s, n, 99);
	free(s);
}

void
stats_samples_add(struct stats_samples *s, double x)
{
	if (s->n == s->cap) {
		s->cap = s->cap != 0 ? s->cap * 2 : 64;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = x;
}

void
stats_samples_free(struct stats_samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
