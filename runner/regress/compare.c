/*
 * compare.c - regress_compare(): two sides of one measurement (the runs
 * of a change's smoke campaign before and after it, interleaved), each
 * series judged by regress_judge() with the policy's threshold, alpha
 * and minimum samples, both ways (worse, better), and the verdict in
 * words. The one rule a change's smoke, pr-check, the agent's smoke and
 * triage's evidence all read. See regress.h.
 *
 * Reads the store only; never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jsonget.h"
#include "regress-private.h"
#include "util.h"

/* How a metric reads in a verdict: its label and the words for worse
 * and better. */
static const struct {
	const char *metric, *label, *worse, *better;
} words[] = {
	{ "output_throughput", "output throughput", "lower throughput",
	    "higher throughput" },
	{ "median_ttft_ms", "TTFT p50", "slower first token",
	    "faster first token" },
	{ "p99_ttft_ms", "TTFT p99", "slower first-token tail",
	    "faster first-token tail" },
	{ "median_tpot_ms", "TPOT p50", "slower decode", "faster decode" },
	{ "peak_engine_memory_bytes", "peak engine memory", "more memory",
	    "less memory" },
};

static size_t
words_of(const struct regress_metric *m)
{
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]) - 1; i++)
		if (strcmp(words[i].metric, m->name) == 0)
			return i;
	return i;
}

double
regress_pooled_figure(const struct regress_metric *m,
    const struct stats_samples *s, const struct stats_samples *figures)
{
	struct stats_summary sum;
	double *v;
	double out;

	if (m->percentile > 0) {
		if (s->n == 0)
			return 0;
		v = xmalloc(s->n * sizeof(*v));
		memcpy(v, s->v, s->n * sizeof(*v));
		stats_sort(v, s->n);
		out = stats_percentile_sorted(v, s->n, m->percentile);
		free(v);
		return out;
	}
	stats_summarize(figures->v, figures->n, &sum);
	return sum.n > 0 ? sum.median : 0;
}

/* One side of a series: every run's samples and sweep figures pooled. */
struct side {
	struct regress_points *runs;
	size_t n;
};

static struct werr *
side_load(struct side *s, struct store *store, const json_t *run_ids,
    int with_memory)
{
	const json_t *r;
	struct werr *err = NULL;
	size_t i;

	s->runs = xcalloc(json_array_size(run_ids) + 1, sizeof(*s->runs));
	json_array_foreach((json_t *)run_ids, i, r)
		if (json_is_string(r) && err == NULL)
			err = regress_points_load(&s->runs[s->n++], store,
			    json_string_value(r), with_memory);
	return err;
}

static void
side_free(struct side *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		regress_points_free(&s->runs[i]);
	free(s->runs);
}

void
regress_pool(const struct regress_points *runs, size_t n, const char *key,
    size_t mi, struct stats_samples *samples, struct stats_samples *figures,
    json_int_t *requests)
{
	const struct regress_point *p;
	double f;
	size_t i, k;

	for (i = 0; i < n; i++) {
		if ((p = regress_points_find(&runs[i], key)) == NULL)
			continue;
		for (k = 0; k < p->samples[mi].n; k++)
			stats_samples_add(samples, p->samples[mi].v[k]);
		if (regress_sweep_figure(p->sweep, regress_metrics[mi].name,
		    &f) == 0)
			stats_samples_add(figures, f);
		if (requests != NULL)
			*requests += jsonget_int(p->sweep, "completed");
	}
}

/* A figure for people: bytes as MiB. */
static void
fig(char *out, size_t n, const struct regress_metric *m, double v)
{
	snprintf(out, n, "%.*f", v >= 100 ? 0 : 1,
	    strcmp(m->unit, "bytes") == 0 ? v / 1048576.0 : v);
}

char *
regress_verdict_text(const struct regress_metric *m, double before,
    double after, double p_value, int better)
{
	size_t w = words_of(m);
	double ratio = before > after ? before / after : after / before;
	char b[32], a[32], p[32];

	fig(b, sizeof(b), m, before);
	fig(a, sizeof(a), m, after);
	if (p_value < 0.001)
		snprintf(p, sizeof(p), "p < 0.001");
	else
		snprintf(p, sizeof(p), "p = %.3f", p_value);
	return xasprintf("%.2f\u00d7 %s: %s %s \u2192 %s %s, %s", ratio,
	    better ? words[w].better : words[w].worse, words[w].label, b, a,
	    strcmp(m->unit, "bytes") == 0 ? "MiB" : m->unit, p);
}

/* One metric of one series: {metric, unit, before, after, ratio,
 * p_value, n_before, n_after, verdict, text}. */
static json_t *
judge_metric(const struct policy *pol, const struct regress_metric *m,
    const struct side *before, const struct side *after, const char *key,
    json_int_t *req_b, json_int_t *req_a)
{
	struct stats_samples sb, fb, sa, fa;
	struct regress_verdict worse, better;
	size_t mi = regress_metric_index(m);
	double fig_b, fig_a;
	const char *verdict;
	char *text = NULL;
	json_t *o;

	memset(&sb, 0, sizeof(sb));
	memset(&fb, 0, sizeof(fb));
	memset(&sa, 0, sizeof(sa));
	memset(&fa, 0, sizeof(fa));
	regress_pool(before->runs, before->n, key, mi, &sb, &fb, req_b);
	regress_pool(after->runs, after->n, key, mi, &sa, &fa, req_a);
	fig_b = regress_pooled_figure(m, &sb, &fb);
	fig_a = regress_pooled_figure(m, &sa, &fa);
	regress_judge(&worse, m, fig_b, fig_a, sa.v, sa.n, sb.v, sb.n,
	    pol->regressions.threshold_pct, pol->regressions.alpha,
	    (size_t)pol->regressions.min_samples);
	regress_judge(&better, m, fig_a, fig_b, sb.v, sb.n, sa.v, sa.n,
	    pol->regressions.threshold_pct, pol->regressions.alpha,
	    (size_t)pol->regressions.min_samples);
	if (worse.why_not != NULL)
		verdict = "too-few";
	else if (worse.regressed)
		verdict = "regressed";
	else if (better.regressed)
		verdict = "improved";
	else
		verdict = "unchanged";
	if (worse.why_not != NULL)
		text = xasprintf("%s: too few samples to tell (%zu before, "
		    "%zu after)", words[words_of(m)].label, sb.n, sa.n);
	else if (worse.regressed || better.regressed)
		text = regress_verdict_text(m, fig_b, fig_a, worse.regressed ?
		    worse.p_value : better.p_value, better.regressed);
	o = json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:I, s:I, s:s, s:s?}",
	    "metric", m->name, "unit", m->unit, "before", fig_b, "after",
	    fig_a, "ratio", fig_b > 0 ? fig_a / fig_b : 0.0, "p_value",
	    worse.regressed || worse.why_not != NULL ? worse.p_value :
	    better.p_value, "n_before", (json_int_t)sb.n, "n_after",
	    (json_int_t)sa.n, "verdict", verdict, "text", text);
	free(text);
	stats_samples_free(&sb);
	stats_samples_free(&fb);
	stats_samples_free(&sa);
	stats_samples_free(&fa);
	return o;
}

/* The cell's verdict and its words, from its metrics': any regressed;
 * else a request metric that could not be compared; else any improved;
 * else none. Memory's trace is one sample a second: a short smoke may
 * have too few of them without leaving the cell undecided. */
static void
cell_verdict(json_t *cell)
{
	const json_t *m;
	const char *v, *kinds[] = { "regressed", "too-few", "improved" };
	struct buf b = BUF_INIT;
	size_t i, k;

	for (k = 0; k < 3; k++) {
		json_array_foreach(json_object_get(cell, "metrics"), i, m) {
			v = jsonget_str(m, "verdict");
			if (strcmp(v, kinds[k]) != 0 || (k == 1 &&
			    strcmp(jsonget_str(m, "metric"),
			    "peak_engine_memory_bytes") == 0))
				continue;
			if (k == 1) {
				buf_puts(&b, "too few samples to tell");
				break;
			}
			buf_printf(&b, "%s%s", b.len > 0 ? "; " : "",
			    jsonget_str(m, "text"));
		}
		if (b.len > 0)
			break;
	}
	if (b.len == 0) {
		k = 3;
		buf_puts(&b, "no measurable change");
	}
	json_object_set_new(cell, "verdict", json_string(k < 3 ? kinds[k] :
	    "unchanged"));
	json_object_set_new(cell, "text", json_string(buf_cstr(&b)));
	buf_free(&b);
}

/* The keys of both sides' series, each once, in the order measured. */
static json_t *
keys_of(const struct side *a, const struct side *b)
{
	const struct side *sides[2] = { a, b };
	json_t *keys = json_array();
	size_t s, i, k, j;

	for (s = 0; s < 2; s++)
		for (i = 0; i < sides[s]->n; i++)
			for (k = 0; k < sides[s]->runs[i].n; k++) {
				const struct regress_point *p =
				    &sides[s]->runs[i].v[k];
				json_t *e;
				int seen = 0;

				json_array_foreach(keys, j, e)
					if (strcmp(jsonget_str(e, "key"),
					    p->key) == 0)
						seen = 1;
				if (!seen)
					json_array_append_new(keys, json_pack(
					    "{s:s, s:O, s:O, s:O, s:O}", "key",
					    p->key, "engine", json_object_get(
					    p->sweep, "engine"), "model",
					    json_object_get(p->sweep, "model"),
					    "split", json_object_get(p->sweep,
					    "split"), "concurrency",
					    json_object_get(p->sweep,
					    "concurrency")));
			}
	return keys;
}

struct werr *
regress_compare(json_t **out, struct store *store, const struct policy *pol,
    const json_t *before_runs, const json_t *after_runs)
{
	const struct strlist *ms = &pol->regressions.metrics;
	int memory = strlist_contains(ms, "peak_engine_memory_bytes");
	const struct regress_metric *m;
	struct side before, after;
	json_t *keys = NULL, *cells = json_array(), *e, *metrics;
	struct werr *err;
	json_int_t rb, ra;
	size_t i, k;
	int regressed = 0;

	*out = NULL;
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	if (ms->n == 0) {
		*out = json_pack("{s:[], s:b, s:s}", "cells", "regressed", 0,
		    "why", "the policy's regressions.metrics is empty");
		json_decref(cells);
		return NULL;
	}
	if ((err = side_load(&before, store, before_runs, memory)) != NULL ||
	    (err = side_load(&after, store, after_runs, memory)) != NULL)
		goto out;
	keys = keys_of(&before, &after);
	json_array_foreach(keys, i, e) {
		json_t *cell = json_deep_copy(e);

		json_object_del(cell, "key");
		metrics = json_array();
		rb = ra = 0;
		for (k = 0; k < ms->n; k++) {
			json_int_t b = 0, a = 0;

			if ((m = regress_metric_find(ms->v[k])) == NULL)
				continue;
			json_array_append_new(metrics, judge_metric(pol, m,
			    &before, &after, jsonget_str(e, "key"), &b, &a));
			rb = b;
			ra = a;
		}
		json_object_set_new(cell, "requests_before", json_integer(rb));
		json_object_set_new(cell, "requests_after", json_integer(ra));
		json_object_set_new(cell, "metrics", metrics);
		cell_verdict(cell);
		if (strcmp(jsonget_str(cell, "verdict"), "regressed") == 0)
			regressed = 1;
		json_array_append_new(cells, cell);
	}
	*out = json_pack("{s:{s:f, s:f, s:i}, s:O, s:O, s:o, s:b}", "policy",
	    "threshold_pct", pol->regressions.threshold_pct, "alpha",
	    pol->regressions.alpha, "min_samples",
	    pol->regressions.min_samples, "before_runs", before_runs,
	    "after_runs", after_runs, "cells", cells, "regressed", regressed);
	cells = NULL;
out:
	side_free(&before);
	side_free(&after);
	json_decref(keys);
	json_decref(cells);
	return err;
}
