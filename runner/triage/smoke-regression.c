/*
 * smoke-regression.c - what a smoke run of a performance regression
 * measures and how it is judged (see triage-private.h). A regressed
 * engine (detect.c: an open alert seen in the cycle, regress.h) has
 * failing cells of outcome "regression", each with its metric, the
 * published figure ("before") and the alert's threshold. Its smoke runs
 * are made at the regressed concurrency levels and fail while a
 * regressed series is still worse than published by the threshold: the
 * magnitude alone decides, a smoke run having too few requests for the
 * alert's test. Pure functions; never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "regress/regress.h"
#include "triage-private.h"
#include "util.h"

/* Is a failing cell a performance regression? */
static int
is_regression(const json_t *cell)
{
	const char *o = json_string_value(json_object_get(cell, "outcome"));

	return o != NULL && strcmp(o, "regression") == 0;
}

/* The smoke sweep of a cell's model, split and level, or NULL. */
static const json_t *
sweep_of(const json_t *sweeps, const json_t *cell)
{
	const json_t *s, *found = NULL;
	size_t k;

	json_array_foreach((json_t *)sweeps, k, s)
		if (json_equal(json_object_get(s, "model"),
		    json_object_get(cell, "model")) &&
		    json_equal(json_object_get(s, "split"),
		    json_object_get(cell, "split")) &&
		    json_equal(json_object_get(s, "concurrency"),
		    json_object_get(cell, "concurrency")))
			found = s;
	return found;
}

char *
triage_regression_fails(const json_t *sweeps, const json_t *cells)
{
	const struct regress_metric *m;
	const json_t *cell, *s;
	double before, after, threshold;
	size_t i;

	json_array_foreach((json_t *)cells, i, cell) {
		if (!is_regression(cell) || (m = regress_metric_find(
		    json_string_value(json_object_get(cell, "metric")))) == NULL)
			continue;
		s = sweep_of(sweeps, cell);
		before = json_number_value(json_object_get(cell, "before"));
		threshold = json_number_value(json_object_get(cell,
		    "threshold_pct"));
		if (s == NULL || regress_sweep_figure(s, m->name, &after) != 0)
			return xasprintf("%s c=%lld: the smoke run measured no "
			    "%s", json_string_value(json_object_get(cell,
			    "model")), (long long)json_integer_value(
			    json_object_get(cell, "concurrency")), m->name);
		if (regress_worse_pct(m, before, after) >= threshold)
			return xasprintf("%s %s c=%lld: %s %.1f against %.1f %s "
			    "published (%.0f %% worse, threshold %g %%)",
			    json_string_value(json_object_get(cell, "model")),
			    json_string_value(json_object_get(cell, "split")),
			    (long long)json_integer_value(json_object_get(cell,
			    "concurrency")), m->name, after, before, m->unit,
			    regress_worse_pct(m, before, after), threshold);
	}
	return NULL;
}

int *
triage_regression_levels(const json_t *cells, size_t *n, size_t *limit)
{
	int *v = xcalloc(json_array_size(cells) + 1, sizeof(*v)), lv;
	const json_t *cell;
	size_t i, k;

	*n = 0;
	json_array_foreach((json_t *)cells, i, cell) {
		if (!is_regression(cell))
			continue;
		lv = (int)json_integer_value(json_object_get(cell,
		    "concurrency"));
		for (k = 0; k < *n && v[k] != lv; k++)
			;
		if (k == *n)
			v[(*n)++] = lv;
		if (lv > 0 && *limit < (size_t)lv)
			*limit = (size_t)lv;
	}
	if (*n == 0) {
		free(v);
		return NULL;
	}
	return v;
}
