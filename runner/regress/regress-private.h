/*
 * regress-private.h - what the files of runner/regress/ share: the
 * series of a campaign run with their per-request samples (series.c).
 * Not for other modules: the contract is regress.h (and the SQL's,
 * store-regress.h).
 */
#ifndef WARDEN_REGRESS_PRIVATE_H
#define WARDEN_REGRESS_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "regress.h"
#include "store-regress.h"

/* ---- series.c ---- */

/* One completed sweep of a run: a point of every metric's series. */
struct regress_point {
	char *key;			/* "ENGINE/MODEL/SPLIT/cN" */
	json_t *sweep;			/* its stored row */
	/* per metric (regress_metrics order): the per-request samples
	 * (throughput: each request's output tokens per second of its
	 * end-to-end time; memory: the per-second footprint trace) */
	struct stats_samples samples[REGRESS_N_METRICS];
};

struct regress_points {
	struct regress_point *v;
	size_t n;
};

/* The completed sweeps of run_id with their samples; memory traces are
 * read only when with_memory. Free with regress_points_free(). */
struct werr *regress_points_load(struct regress_points *out,
    struct store *store, const char *run_id, int with_memory);
void regress_points_free(struct regress_points *p);
const struct regress_point *regress_points_find(const struct regress_points *p,
    const char *key);
/* Pool the per-request samples and the sweep figures of series key and
 * metric mi over n runs into samples and figures, and add the requests
 * they rest on to *requests (may be NULL). compare.c */
void regress_pool(const struct regress_points *runs, size_t n,
    const char *key, size_t mi, struct stats_samples *samples,
    struct stats_samples *figures, json_int_t *requests);
/* "ENGINE/MODEL/SPLIT/cN" of a sweep row or alert; caller frees. */
char *regress_point_key(const json_t *o);
/* The index of m in regress_metrics. */
size_t regress_metric_index(const struct regress_metric *m);

/* ---- accepted.c ---- */

/* The newest acceptance (a review approved with --accept-regression) of
 * series (an alert's fields) that no alert of alerts took yet:
 * {"review", "by", "text"}, or NULL. */
struct werr *regress_accepted_find(json_t **out, struct store *store,
    const json_t *series, const json_t *alerts);

/* ---- compare.c ---- */

/* A side's figure of m: the percentile of its pooled samples s, or the
 * median of its sweeps' figures; 0 when there is none. */
double regress_pooled_figure(const struct regress_metric *m,
    const struct stats_samples *s, const struct stats_samples *figures);

#endif
