/*
 * stats-mwu.c - the Mann-Whitney U test with the normal approximation,
 * tie and continuity corrections. See stats.h for the formulas; the
 * regression alerts (runner/regress/) are its user.
 *
 * Never prints; allocates one sorted copy of both samples.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

struct ranked {
	double v;
	int from_x;
};

static int
cmp_ranked(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->v;
	double y = ((const struct ranked *)b)->v;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* P(Z >= z) of the standard normal. */
static double
normal_upper(double z)
{
	return 0.5 * erfc(z / sqrt(2.0));
}

void
stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
    struct stats_mwu *out)
{
	struct ranked *all;
	double rank_x = 0, ties = 0, n, var, rank, t;
	size_t i, j, k, total = nx + ny;

	memset(out, 0, sizeof(*out));
	out->nx = nx;
	out->ny = ny;
	out->p_greater = out->p_less = out->p_two_sided = 1;
	if (nx == 0 || ny == 0)
		return;
	all = xcalloc(total, sizeof(*all));
	for (i = 0; i < nx; i++)
		all[i] = (struct ranked){ x[i], 1 };
	for (i = 0; i < ny; i++)
		all[nx + i] = (struct ranked){ y[i], 0 };
	qsort(all, total, sizeof(*all), cmp_ranked);
	/* ranks from 1; a run of equal values [i, j] shares their mean */
	for (i = 0; i < total; i = j + 1) {
		for (j = i; j + 1 < total && all[j + 1].v == all[i].v; j++)
			;
		rank = ((double)i + (double)j) / 2 + 1;
		for (k = i; k <= j; k++)
			if (all[k].from_x)
				rank_x += rank;
		t = (double)(j - i + 1);
		ties += t * t * t - t;
	}
	free(all);
	n = (double)total;
	out->u = rank_x - (double)nx * ((double)nx + 1) / 2;
	out->mean = (double)nx * (double)ny / 2;
	var = (double)nx * (double)ny / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (!(var > 0))
		return;		/* every value tied: no evidence either way */
	out->sd = sqrt(var);
	out->z = (out->u - out->mean) / out->sd;
	out->p_greater = normal_upper((out->u - out->mean - 0.5) / out->sd);
	out->p_less = normal_upper(-(out->u - out->mean + 0.5) / out->sd);
	out->p_two_sided = 2 * (out->p_greater < out->p_less ?
	    out->p_greater : out->p_less);
	if (out->p_two_sided > 1)
		out->p_two_sided = 1;
}
