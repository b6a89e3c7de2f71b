/*
 * run.c - regress_run(): a campaign run's series compared with the last
 * published cycles, and the alerts that follows from it recorded (see
 * regress.h). The baseline is the runs of the newest
 * `regressions.baseline_cycles` publishes measured on the same machine;
 * a series' samples are pooled over them. Its figure before is, for a
 * percentile metric, that percentile of the pooled samples, and for a
 * per-sweep figure (throughput, peak memory) the median of the baseline
 * sweeps' figures; after is the run's own sweep's figure.
 *
 * An open alert of a series is not raised again: while the series is
 * still worse than the alert's own "before" by the threshold it is seen
 * again; once it is not, the alert is fixed. Every write lands in one
 * transaction with its journal entries. Never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "jsonget.h"
#include "regress-private.h"
#include "store-json.h"
#include "util.h"

struct ctx {
	const struct regress_opts *o;
	struct regress_points now;
	struct regress_points *then;	/* one per baseline run */
	size_t nthen;
	json_t *base;			/* store_regress_baseline() */
	json_t *open;			/* open alerts */
	json_t *res;
};

static json_t *
string_list(const json_t *base, const char *key)
{
	json_t *out = json_array(), *b;
	size_t i;

	json_array_foreach((json_t *)base, i, b)
		if (json_is_string(json_object_get(b, key)))
			json_array_append(out, json_object_get(b, key));
	return out;
}

static json_t *
baseline_runs(const json_t *base)
{
	json_t *out = json_array(), *b;
	size_t i;

	json_array_foreach((json_t *)base, i, b)
		json_array_extend(out, json_object_get(b, "runs"));
	return out;
}

/* The series of p and m as an alert's fields, with its verdict. */
static json_t *
series_json(const struct ctx *c, const struct regress_point *p,
    const struct regress_metric *m, const struct regress_verdict *v)
{
	const struct policy *pol = c->o->policy;
	json_t *a;

	a = json_pack("{s:s, s:i, s:s, s:O, s:O, s:O, s:O, s:s, s:f, s:f, "
	    "s:f, s:f}", "cycle", c->o->cycle, "round", c->o->round, "run_id",
	    c->o->run_id, "engine", json_object_get(p->sweep, "engine"),
	    "model", json_object_get(p->sweep, "model"), "split",
	    json_object_get(p->sweep, "split"), "concurrency",
	    json_object_get(p->sweep, "concurrency"), "metric", m->name,
	    "before", v->before, "after", v->after, "change_pct",
	    v->change_pct, "p_value", v->p_value);
	json_object_set_new(a, "record", json_pack("{s:s, s:s, s:f, s:f, "
	    "s:I, s:I, s:f, s:f, s:f, s:s, s:b, s:b, s:s, s:{s:o, s:o, s:o}, "
	    "s:[], s:I}",
	    "test", "mann-whitney-u", "alternative", m->lower_worse ? "less" :
	    "greater", "u", v->test.u, "z", v->test.z, "n_after",
	    (json_int_t)v->test.nx, "n_before", (json_int_t)v->test.ny,
	    "worse_pct", v->worse_pct, "threshold_pct", pol->regressions.
	    threshold_pct, "alpha", pol->regressions.alpha, "unit", m->unit,
	    "significant", v->significant, "beyond_threshold", v->beyond,
	    "before_is", m->percentile > 0 ? (m->percentile == 50 ?
	    "the median of the baseline's pooled per-request samples" :
	    "the p99 of the baseline's pooled per-request samples") :
	    "the median of the baseline sweeps' figures",
	    "baseline", "cycles", string_list(c->base, "cycle"), "runs",
	    baseline_runs(c->base), "snapshots", string_list(c->base,
	    "snapshot"), "seen", "sweep", jsonget_int(p->sweep, "id")));
	return a;
}

/* The open alert of a series (its key and metric), or NULL. */
static const json_t *
open_alert(const struct ctx *c, const char *key, const char *metric)
{
	const json_t *a;
	size_t i;
	char *k;
	int same;

	json_array_foreach(c->open, i, a) {
		if (strcmp(jsonget_str(a, "metric"), metric) != 0)
			continue;
		k = regress_point_key(a);
		same = strcmp(k, key) == 0;
		free(k);
		if (same)
			return a;
	}
	return NULL;
}

/* Was the alert already seen (or opened, or fixed) by this run? */
static int
this_run(const struct ctx *c, const json_t *a)
{
	const json_t *rec = json_object_get(a, "record"), *seen;

	if (strcmp(jsonget_str(a, "run_id"), c->o->run_id) == 0)
		return 1;
	seen = json_object_get(rec, "seen");
	seen = json_array_get(seen, json_array_size(seen) - 1);
	return seen != NULL && strcmp(jsonget_str(seen, "run_id"),
	    c->o->run_id) == 0;
}

/* An open alert of the series: still worse than its own before by the
 * threshold (seen again), or not (fixed). */
static struct werr *
follow_up(struct ctx *c, const json_t *a, const struct regress_metric *m,
    double after, const struct regress_verdict *v)
{
	const struct policy *pol = c->o->policy;
	double before = json_number_value(json_object_get(a, "before"));
	double worse = regress_worse_pct(m, before, after);
	int64_t id = jsonget_int(a, "id");
	struct werr *err;
	json_t *seen;
	char *why, *name;

	if (this_run(c, a))
		return NULL;	/* run again after a kill: done already */
	if (worse >= pol->regressions.threshold_pct) {
		seen = json_pack("{s:s, s:i, s:s, s:f, s:f, s:f}", "cycle",
		    c->o->cycle, "round", c->o->round, "run_id", c->o->run_id,
		    "after", after, "worse_pct", worse, "p_value", v->p_value);
		err = store_regress_seen(c->o->store, id, c->o->cycle, seen);
		json_decref(seen);
		return err;
	}
	name = regress_series_name(a);
	why = xasprintf("%s is back within %g %% of %g %s in cycle %s round "
	    "%d (%.1f, %+.1f %% worse)", name, pol->regressions.threshold_pct,
	    before, m->unit, c->o->cycle, c->o->round, after, worse);
	seen = json_pack("{s:s, s:i, s:s, s:f, s:f, s:b}", "cycle",
	    c->o->cycle, "round", c->o->round, "run_id", c->o->run_id,
	    "after", after, "worse_pct", worse, "fixed", 1);
	err = store_regress_transition(c->o->store, id, jsonget_str(a,
	    "state"), "fixed", c->o->who, why);
	if (err == NULL)
		err = store_regress_seen(c->o->store, id, c->o->cycle, seen);
	json_decref(seen);
	free(why);
	free(name);
	return err;
}

static struct werr *
open_new(struct ctx *c, json_t *a, const struct regress_verdict *v)
{
	const struct policy *pol = c->o->policy;
	char *name = regress_series_name(a), *change = regress_change_text(a);
	char *why;
	struct werr *err;
	int64_t id;

	json_t *all = NULL, *acc = NULL;

	why = xasprintf("%s: %s (%+.1f %%, %.1f %% worse, threshold %g %%); "
	    "Mann-Whitney U p = %.3g < alpha %g", name, change, v->change_pct,
	    v->worse_pct, pol->regressions.threshold_pct, v->p_value,
	    pol->regressions.alpha);
	/* A regression accepted at approval is a decision: acknowledged,
	 * naming the review. */
	if ((err = store_regress_alerts(&all, c->o->store, NULL, NULL, 0))
	    == NULL && (err = regress_accepted_find(&acc, c->o->store, a,
	    all)) == NULL && acc != NULL)
		json_object_set(json_object_get(a, "record"),
		    "accepted_review", json_object_get(acc, "review"));
	if (err == NULL)
		err = store_regress_insert(c->o->store, a, c->o->who, why,
		    &id);
	if (err == NULL && acc != NULL && id > 0) {
		free(why);
		why = xasprintf("accepted at the approval of review %lld by "
		    "%s: %s", (long long)jsonget_int(acc, "review"),
		    jsonget_str(acc, "by"), jsonget_str(acc, "text"));
		err = store_regress_transition(c->o->store, id, "untriaged",
		    "acknowledged", c->o->who, why);
	}
	json_decref(all);
	json_decref(acc);
	free(why);
	free(name);
	free(change);
	return err;
}

/* Judge every series of the run and write what follows. */
static struct werr *
judge_all(struct ctx *c)
{
	const struct policy *pol = c->o->policy;
	const struct strlist *ms = &pol->regressions.metrics;
	struct stats_samples samples, figures;
	struct regress_verdict v;
	const struct regress_metric *m;
	const struct regress_point *p;
	const json_t *a;
	struct werr *err = NULL;
	json_t *s, *not = json_object_get(c->res, "not_compared");
	double after;
	size_t i, k, mi, compared = 0;

	for (i = 0; i < c->now.n && err == NULL; i++) {
		p = &c->now.v[i];
		for (k = 0; k < ms->n && err == NULL; k++) {
			if ((m = regress_metric_find(ms->v[k])) == NULL)
				continue;	/* the policy's schema allows none */
			mi = regress_metric_index(m);
			memset(&samples, 0, sizeof(samples));
			memset(&figures, 0, sizeof(figures));
			regress_pool(c->then, c->nthen, p->key, mi, &samples,
			    &figures, NULL);
			if (regress_sweep_figure(p->sweep, m->name, &after) != 0)
				after = 0;
			regress_judge(&v, m, regress_pooled_figure(m, &samples,
			    &figures), after, p->samples[mi].v,
			    p->samples[mi].n, samples.v, samples.n,
			    pol->regressions.threshold_pct,
			    pol->regressions.alpha,
			    (size_t)pol->regressions.min_samples);
			if (figures.n == 0)
				v.why_not = "no baseline: the series is in no "
				    "published cycle";
			stats_samples_free(&samples);
			stats_samples_free(&figures);
			s = series_json(c, p, m, &v);
			if (v.why_not != NULL) {
				char *name = regress_series_name(s);

				json_array_append_new(not, json_pack("{s:s, "
				    "s:s}", "series", name, "why", v.why_not));
				free(name);
			} else
				compared++;
			if ((a = open_alert(c, p->key, m->name)) != NULL &&
			    after > 0)
				err = follow_up(c, a, m, after, &v);
			else if (a == NULL && v.regressed)
				err = open_new(c, s, &v);
			json_decref(s);
		}
	}
	json_object_set_new(c->res, "compared", json_integer((json_int_t)
	    compared));
	return err;
}

/* The alerts this run opened, saw again and fixed, from the store (so a
 * run again after a kill says the same). */
static struct werr *
classify(struct ctx *c)
{
	json_t *all = NULL, *a, *seen, *last, *fixed;
	json_t *opened = json_array(), *again = json_array(), *fx = json_array();
	json_t *engines = json_object();
	struct werr *err;
	const char *k;
	size_t i;

	if ((err = store_regress_alerts(&all, c->o->store, NULL, NULL, 0))
	    != NULL)
		goto out;
	json_array_foreach(all, i, a) {
		seen = json_object_get(json_object_get(a, "record"), "seen");
		last = json_array_get(seen, json_array_size(seen) - 1);
		fixed = last != NULL && strcmp(jsonget_str(a, "state"),
		    "fixed") == 0 ? last : NULL;
		if (strcmp(jsonget_str(a, "run_id"), c->o->run_id) == 0)
			json_array_append(opened, a);
		else if (last == NULL || strcmp(jsonget_str(last, "run_id"),
		    c->o->run_id) != 0)
			continue;
		else if (fixed != NULL && json_is_true(json_object_get(last,
		    "fixed")))
			json_array_append(fx, a);
		else
			json_array_append(again, a);
		if (regress_state_open(jsonget_str(a, "state")) &&
		    !regress_alert_accepted(a))
			json_object_set_new(engines, jsonget_str(a, "engine"),
			    json_true());
	}
	json_object_set(c->res, "opened", opened);
	json_object_set(c->res, "seen", again);
	json_object_set(c->res, "fixed", fx);
	json_object_set_new(c->res, "regressed_engines", json_array());
	json_object_foreach(engines, k, a)
		json_array_append_new(json_object_get(c->res,
		    "regressed_engines"), json_string(k));
out:
	json_decref(all);
	json_decref(opened);
	json_decref(again);
	json_decref(fx);
	json_decref(engines);
	return err;
}

static int
wants_memory(const struct policy *pol)
{
	return strlist_contains(&pol->regressions.metrics,
	    "peak_engine_memory_bytes");
}

static struct werr *
load(struct ctx *c, const char *machine)
{
	const struct policy *pol = c->o->policy;
	const json_t *b, *r;
	struct werr *err;
	size_t i, j, n = 0;

	if ((err = store_regress_baseline(&c->base, c->o->store, machine,
	    c->o->run_id, (size_t)pol->regressions.baseline_cycles)) != NULL ||
	    (err = regress_points_load(&c->now, c->o->store, c->o->run_id,
	    wants_memory(pol))) != NULL)
		return err;
	json_array_foreach(c->base, i, b)
		n += json_array_size(json_object_get(b, "runs"));
	c->then = xcalloc(n + 1, sizeof(*c->then));
	json_array_foreach(c->base, i, b)
		json_array_foreach(json_object_get(b, "runs"), j, r)
			if ((err = regress_points_load(&c->then[c->nthen++],
			    c->o->store, json_string_value(r),
			    wants_memory(pol))) != NULL)
				return err;
	return store_regress_alerts(&c->open, c->o->store, NULL, NULL, 1);
}

struct werr *
regress_run(json_t **out, const struct regress_opts *o)
{
	const struct policy *pol = o->policy;
	struct werr *err;
	char *machine = NULL;
	struct ctx c;
	json_t *metrics = json_array();
	size_t i;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.o = o;
	for (i = 0; i < pol->regressions.metrics.n; i++)
		json_array_append_new(metrics, json_string(
		    pol->regressions.metrics.v[i]));
	c.res = json_pack("{s:s, s:{s:f, s:f, s:i, s:i, s:o}, s:[], s:i}",
	    "run", o->run_id, "policy", "threshold_pct",
	    pol->regressions.threshold_pct, "alpha", pol->regressions.alpha,
	    "baseline_cycles", pol->regressions.baseline_cycles, "min_samples",
	    pol->regressions.min_samples, "metrics", metrics, "not_compared",
	    "compared", 0);
	if ((err = store_regress_run_machine(&machine, o->store, o->run_id))
	    != NULL)
		goto out;
	if (machine == NULL) {
		err = werr_new(WEXIT_INPUT, "no campaign run '%s'", o->run_id);
		goto out;
	}
	json_object_set_new(c.res, "machine", json_string(machine));
	if ((err = load(&c, machine)) != NULL)
		goto out;
	json_object_set_new(c.res, "baseline", json_pack("{s:o, s:o, s:o}",
	    "cycles", string_list(c.base, "cycle"), "runs",
	    baseline_runs(c.base), "snapshots", string_list(c.base,
	    "snapshot")));
	if (json_array_size(c.base) == 0)
		json_object_set_new(json_object_get(c.res, "baseline"), "why",
		    json_string("no published cycle measured on this machine "
		    "to compare with"));
	if ((err = store_begin(o->store)) != NULL)
		goto out;
	err = store_tx_end(o->store, judge_all(&c));
	if (err == NULL) {
		fault_point("regress.recorded");
		err = classify(&c);
	}
out:
	free(machine);
	regress_points_free(&c.now);
	for (i = 0; i < c.nthen; i++)
		regress_points_free(&c.then[i]);
	free(c.then);
	json_decref(c.base);
	json_decref(c.open);
	if (err == NULL)
		*out = c.res;
	else
		json_decref(c.res);
	return err;
}
