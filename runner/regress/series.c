/*
 * series.c - the points of a campaign run's series: each completed
 * sweep (engine x model x split x concurrency) with, per metric, the
 * samples the test compares, read from the store's request rows and
 * memory trace (the rows `warden campaign --json --per-request` shows):
 *
 *   output_throughput  each successful request's output tokens per
 *                      second of its end-to-end time (submission to last
 *                      token); the figure is the sweep's throughput
 *   median_ttft_ms, p99_ttft_ms each successful request's TTFT in ms
 *   median_tpot_ms           each successful request's (last - first token
 *                      time) / (output tokens - 1) in ms, for requests of
 *                      at least two tokens
 *   peak_engine_memory_bytes the engine's per-second footprint samples; the
 *                      figure is the sweep's peak
 *
 * Reads only; never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "regress-private.h"
#include "store-campaign.h"
#include "util.h"

size_t
regress_metric_index(const struct regress_metric *m)
{
	return (size_t)(m - regress_metrics);
}

char *
regress_point_key(const json_t *o)
{
	return xasprintf("%s/%s/%s/c%lld", jsonget_str(o, "engine"),
	    jsonget_str(o, "model"), jsonget_str(o, "split"),
	    (long long)jsonget_int(o, "concurrency"));
}

static double
num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* A successful request's samples into the point. */
static void
request_samples(struct regress_point *p, const json_t *r)
{
	double ttft = num(r, "ttft_ms"), e2el = num(r, "e2el_ms");
	double tokens = num(r, "completion_tokens");

	if (strcmp(jsonget_str(r, "outcome"), "ok") != 0)
		return;
	if (e2el > 0 && tokens > 0)
		stats_samples_add(&p->samples[0], tokens / (e2el / 1000));
	if (json_is_number(json_object_get(r, "ttft_ms"))) {
		stats_samples_add(&p->samples[1], ttft);
		stats_samples_add(&p->samples[2], ttft);
	}
	if (tokens >= 2 && e2el >= ttft)
		stats_samples_add(&p->samples[3], (e2el - ttft) /
		    (tokens - 1));
}

static struct werr *
point_load(struct regress_point *p, struct store *store, int with_memory)
{
	json_t *rows = NULL, *mem = NULL, *v;
	struct werr *err;
	size_t i;

	if ((err = store_campaign_requests_json(store, jsonget_int(p->sweep,
	    "id"), &rows)) != NULL)
		return err;
	json_array_foreach(rows, i, v)
		request_samples(p, v);
	json_decref(rows);
	if (!with_memory)
		return NULL;
	if ((err = store_campaign_memory_json(store, jsonget_int(p->sweep,
	    "id"), &mem)) != NULL)
		return err;
	json_array_foreach(json_object_get(mem, "engine_bytes"), i, v)
		if (json_number_value(v) > 0)
			stats_samples_add(&p->samples[4], json_number_value(v));
	json_decref(mem);
	return NULL;
}

struct werr *
regress_points_load(struct regress_points *out, struct store *store,
    const char *run_id, int with_memory)
{
	json_t *sweeps = NULL, *s;
	struct werr *err;
	size_t i;

	memset(out, 0, sizeof(*out));
	if ((err = store_campaign_sweeps_json(store, run_id, &sweeps)) != NULL)
		return err;
	out->v = xcalloc(json_array_size(sweeps) + 1, sizeof(*out->v));
	json_array_foreach(sweeps, i, s) {
		struct regress_point *p;

		if (strcmp(jsonget_str(s, "outcome"), "complete") != 0)
			continue;	/* a failing cell is triage's */
		p = &out->v[out->n++];
		p->key = regress_point_key(s);
		p->sweep = json_incref(s);
		if ((err = point_load(p, store, with_memory)) != NULL)
			break;
	}
	json_decref(sweeps);
	if (err != NULL)
		regress_points_free(out);
	return err;
}

void
regress_points_free(struct regress_points *p)
{
	size_t i, k;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].key);
		json_decref(p->v[i].sweep);
		for (k = 0; k < REGRESS_N_METRICS; k++)
			stats_samples_free(&p->v[i].samples[k]);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

const struct regress_point *
regress_points_find(const struct regress_points *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->v[i].key, key) == 0)
			return &p->v[i];
	return NULL;
}
