/*
 * judge.c - the rule that makes a series regressed: its per-request
 * samples are significantly worse than the baseline's (Mann-Whitney U,
 * one-sided, p < alpha) AND its figure is worse than the baseline's by
 * at least the policy's threshold. The metrics, their units and
 * directions, and each metric's figure in a stored sweep. See regress.h.
 *
 * Pure functions: no store, no clock, never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "regress.h"
#include "util.h"

const struct regress_metric regress_metrics[] = {
	{ "output_throughput", "tok/s", 1, 0 },
	{ "median_ttft_ms", "ms", 0, 50 },
	{ "p99_ttft_ms", "ms", 0, 99 },
	{ "median_tpot_ms", "ms", 0, 50 },
	{ "peak_engine_memory_bytes", "bytes", 0, 0 },
	{ NULL, NULL, 0, 0 },
};

const char *const regress_states[] = { "untriaged", "acknowledged",
    "invalid", "fixed", NULL };

const struct regress_metric *
regress_metric_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && regress_metrics[i].name != NULL; i++)
		if (strcmp(regress_metrics[i].name, name) == 0)
			return &regress_metrics[i];
	return NULL;
}

int
regress_state_valid(const char *state)
{
	size_t i;

	for (i = 0; state != NULL && regress_states[i] != NULL; i++)
		if (strcmp(regress_states[i], state) == 0)
			return 1;
	return 0;
}

int
regress_state_open(const char *state)
{
	return state != NULL && (strcmp(state, "untriaged") == 0 ||
	    strcmp(state, "acknowledged") == 0);
}

double
regress_worse_pct(const struct regress_metric *m, double before, double after)
{
	if (!(before > 0) || !(after > 0))
		return 0;
	return (m->lower_worse ? before / after : after / before) * 100 - 100;
}

void
regress_judge(struct regress_verdict *v, const struct regress_metric *m,
    double before, double after, const double *now, size_t n_now,
    const double *base, size_t n_base, double threshold_pct, double alpha,
    size_t min_samples)
{
	memset(v, 0, sizeof(*v));
	v->before = before;
	v->after = after;
	v->p_value = 1;
	if (n_now < min_samples || n_base < min_samples) {
		v->why_not = n_now < min_samples ? "too few samples in this run" :
		    "too few samples in the baseline";
		return;
	}
	if (!(before > 0) || !(after > 0)) {
		v->why_not = "no figure to compare";
		return;
	}
	v->change_pct = (after / before) * 100 - 100;
	v->worse_pct = regress_worse_pct(m, before, after);
	stats_mann_whitney(now, n_now, base, n_base, &v->test);
	v->p_value = m->lower_worse ? v->test.p_less : v->test.p_greater;
	v->significant = v->p_value < alpha;
	v->beyond = v->worse_pct >= threshold_pct;
	v->regressed = v->significant && v->beyond;
}

int
regress_sweep_figure(const json_t *sweep, const char *metric, double *out)
{
	const json_t *sum = json_object_get(sweep, "summary"), *v = NULL;

	/* a metric is named as the figure is (doc/glossary.md): the
	 * sweep's own key for memory, its summary's for the rest */
	if (strcmp(metric, "peak_engine_memory_bytes") == 0)
		v = json_object_get(sweep, metric);
	else if (regress_metric_find(metric) != NULL)
		v = json_object_get(sum, metric);
	if (!json_is_number(v) || !(json_number_value(v) > 0))
		return -1;
	*out = json_number_value(v);
	return 0;
}

char *
regress_series_name(const json_t *a)
{
	return xasprintf("%s %s/%s c=%lld %s", jsonget_str(a, "engine"),
	    jsonget_str(a, "model"), jsonget_str(a, "split"),
	    (long long)jsonget_int(a, "concurrency"), jsonget_str(a, "metric"));
}

/* A figure in its unit for people: bytes as MiB. */
static void
figure(char *out, size_t n, double v, const char *unit)
{
	if (strcmp(unit, "bytes") == 0)
		snprintf(out, n, "%.1f", v / 1048576.0);
	else
		snprintf(out, n, "%.1f", v);
}

char *
regress_change_text(const json_t *a)
{
	const struct regress_metric *m = regress_metric_find(jsonget_str(a,
	    "metric"));
	const char *unit = m != NULL ? m->unit : "";
	char b[64], f[64];

	figure(b, sizeof(b), json_number_value(json_object_get(a, "before")),
	    unit);
	figure(f, sizeof(f), json_number_value(json_object_get(a, "after")),
	    unit);
	return xasprintf("%s \u2192 %s %s", b, f, strcmp(unit, "bytes") == 0 ?
	    "MiB" : unit);
}
