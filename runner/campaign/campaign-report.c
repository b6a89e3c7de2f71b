/*
 * campaign-report.c - a campaign run as data. See campaign-report.h.
 *
 * The rows are built from the sweep rows the campaign stored
 * (store-campaign-read.c): the load generator's summary (already in
 * vllm's names) merged under the sweep's own columns, the memory
 * figures under the glossary's names (campaign_sweep_names). Nothing here
 * measures or prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-report.h"
#include "jsonget.h"
#include "store-campaign.h"
#include "util.h"

/* The figures every row carries, null where the sweep measured nothing,
 * so a script reading vllm results finds each key. */
static const char *const metric_keys[] = {
	"duration", "request_throughput", "output_throughput",
	"total_token_throughput", "total_input_tokens", "total_output_tokens",
	NULL,
};
static const char *const stat_metrics[] = { "ttft", "tpot", "itl", "e2el",
    NULL };
static const char *const stat_kinds[] = { "mean", "median", "std", "p90",
    "p99", NULL };
/* Summary keys a row does not copy: the row says them otherwise. */
static const char *const summary_skip[] = { "end", "peak_system_memory_bytes",
    "peak_engine_memory_bytes", NULL };

static int
in_list(const char *const *l, const char *s)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, s) == 0)
			return 1;
	return 0;
}

/* "2026-12-03T10:40:00Z" as vllm's date, "20261203-104000". */
static json_t *
vllm_date(const json_t *iso)
{
	const char *s = json_string_value(iso);
	struct buf b = BUF_INIT;
	json_t *out;

	if (s == NULL)
		return json_null();
	for (; *s != '\0' && *s != 'Z' && *s != '.'; s++) {
		if (*s >= '0' && *s <= '9')
			buf_addch(&b, *s);
		else if (*s == 'T')
			buf_addch(&b, '-');
	}
	out = json_string(buf_cstr(&b));
	buf_free(&b);
	return out;
}

static void
copy(json_t *row, const char *key, const json_t *from, const char *from_key)
{
	json_t *v = json_object_get(from, from_key);

	json_object_set(row, key, v != NULL ? v : json_null());
}

static void
set_metrics(json_t *row, const json_t *sum)
{
	const char *const *m, *const *k;
	struct buf key = BUF_INIT;
	const char *name;
	json_t *v;

	for (m = metric_keys; *m != NULL; m++)
		copy(row, *m, sum, *m);
	for (m = stat_metrics; *m != NULL; m++)
		for (k = stat_kinds; *k != NULL; k++) {
			buf_reset(&key);
			buf_printf(&key, "%s_%s_ms", *k, *m);
			copy(row, buf_cstr(&key), sum, buf_cstr(&key));
		}
	buf_free(&key);
	json_object_foreach((json_t *)sum, name, v) {
		if (!in_list(summary_skip, name) &&
		    json_object_get(row, name) == NULL)
			json_object_set(row, name, v);
	}
}

static double
num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* vllm's per-request arrays (seconds), one entry per submitted request
 * in index order; a failed request has zeros and its error. */
static struct werr *
set_per_request(json_t *row, struct store *store, json_int_t sweep_id)
{
	json_t *reqs, *r, *ttfts, *itls, *e2els, *outs, *ins, *errs, *conns,
	    *gaps, *g;
	struct werr *err;
	const char *outcome, *error;
	size_t i, j;
	int ok;

	if ((err = store_campaign_requests_json(store, sweep_id, &reqs)) != NULL)
		return err;
	ttfts = json_array();
	itls = json_array();
	e2els = json_array();
	outs = json_array();
	ins = json_array();
	errs = json_array();
	conns = json_array();
	json_array_foreach(reqs, i, r) {
		outcome = json_string_value(json_object_get(r, "outcome"));
		ok = outcome != NULL && strcmp(outcome, "ok") == 0;
		json_array_append_new(ttfts, json_real(ok ?
		    num(r, "ttft_ms") / 1e3 : 0));
		json_array_append_new(e2els, json_real(ok ?
		    num(r, "e2el_ms") / 1e3 : 0));
		json_array_append_new(outs, json_integer(ok ? (json_int_t)
		    json_integer_value(json_object_get(r, "completion_tokens")) :
		    0));
		json_array_append_new(ins, json_integer(json_integer_value(
		    json_object_get(r, "prompt_tokens"))));
		gaps = json_array();
		json_array_foreach(ok ? json_object_get(r, "itl_ns") : NULL, j, g)
			json_array_append_new(gaps, json_real((double)
			    json_integer_value(g) / 1e9));
		json_array_append_new(itls, gaps);
		error = json_string_value(json_object_get(r, "error"));
		json_array_append_new(errs, ok ? json_string("") :
		    json_sprintf("%s%s%s", outcome ? outcome : "unknown",
		    error ? ": " : "", error ? error : ""));
		json_array_append_new(conns, json_is_number(json_object_get(r,
		    "connect_ms")) ? json_real(num(r, "connect_ms") / 1e3) :
		    json_null());
	}
	json_decref(reqs);
	json_object_set_new(row, "input_lens", ins);
	json_object_set_new(row, "output_lens", outs);
	json_object_set_new(row, "ttfts", ttfts);
	json_object_set_new(row, "itls", itls);
	json_object_set_new(row, "e2els", e2els);
	json_object_set_new(row, "errors", errs);
	json_object_set_new(row, "connect_times", conns);
	return NULL;
}

/* Did the kernel kill the engine for its memory? It was killed by
 * SIGKILL, which warden sends only after it has recorded the outcome
 * (Linux's OOM killer and macOS's jetsam kill so), or it crashed with
 * the machine's memory all but full (95 % of RAM). */
static int
out_of_memory(const json_t *level)
{
	const char *d = jsonget_str(level, "detail");
	json_int_t peak = jsonget_int(level, "peak_system_memory_bytes");
	json_int_t ram = jsonget_int(level, "system_memory_bytes");

	if (strstr(d, "killed by signal 9 ") != NULL &&
	    strstr(d, "killed by signal 9 ") < d + strcspn(d, "\n"))
		return 1;
	return ram > 0 && peak >= ram / 100 * 95;
}

const char *
campaign_level_status(const json_t *level, const struct policy *pol)
{
	const char *out = jsonget_str(level, "outcome");
	json_int_t total = jsonget_int(level, "total");
	json_int_t done = jsonget_int(level, "completed");

	if (strcmp(out, "skipped") == 0 || strcmp(out, "unsupported") == 0 ||
	    strcmp(out, "adapter_error") == 0 ||
	    strcmp(out, "profile_error") == 0)
		return "skipped";
	if (strcmp(out, "wrong_model") == 0)
		return "wrong-model";
	if (strcmp(out, "hang") == 0)
		return "hang";
	if (strcmp(out, "engine_cap") == 0)
		return "capped";
	if ((strcmp(out, "server_crash") == 0 || strcmp(out, "not_ready") == 0) &&
	    out_of_memory(level))
		return "oom";
	if (strcmp(out, "complete") != 0)
		return "crashed";	/* start_failed, not_ready,
					   setup_failed, port_conflict,
					   server_crash */
	if (total > 0 && done == 0)
		return "all-failed";
	if (total > 0 && done * pol->gates.completion_of <
	    total * pol->gates.completion_min)
		return "degraded";
	return "ok";
}

static struct werr *
row_of(json_t **out, const json_t *sw, struct store *store,
    const struct policy *pol, int per_request)
{
	const json_t *sum = json_object_get(sw, "summary");
	json_t *row = json_object(), *served = json_object_get(sw,
	    "served_model");
	struct werr *err;

	copy(row, "engine", sw, "engine");
	copy(row, "backend", sw, "engine");
	copy(row, "model", sw, "model");
	json_object_set(row, "model_id", json_is_string(served) ? served :
	    json_object_get(sw, "model"));
	copy(row, "split", sw, "split");
	copy(row, "concurrency", sw, "concurrency");
	copy(row, "max_concurrency", sw, "concurrency");
	json_object_set_new(row, "request_rate", json_string("inf"));
	json_object_set_new(row, "date", vllm_date(json_object_get(sw,
	    "started")));
	copy(row, "outcome", sw, "outcome");
	copy(row, "detail", sw, "detail");
	copy(row, "served_model", sw, "served_model");
	copy(row, "num_prompts", sw, "total");
	copy(row, "total", sw, "total");
	copy(row, "completed", sw, "completed");
	copy(row, "failed", sw, "failed");
	set_metrics(row, json_is_object(sum) ? sum : NULL);
	copy(row, "peak_engine_memory_bytes", sw, "peak_engine_memory_bytes");
	copy(row, "peak_system_memory_bytes", sw, "peak_system_memory_bytes");
	copy(row, "system_memory_bytes", sw, "system_memory_bytes");
	copy(row, "gpu_working_set_hint_bytes", sw,
	    "gpu_working_set_hint_bytes");
	if (!json_is_boolean(json_object_get(row, "client_limited")))
		json_object_set_new(row, "client_limited", json_false());
	json_object_set_new(row, "status", json_string(
	    campaign_level_status(row, pol)));
	copy(row, "started", sw, "started");
	copy(row, "finished", sw, "finished");
	copy(row, "log_path", sw, "log_path");
	copy(row, "provenance", sw, "provenance");
	if (per_request && (err = set_per_request(row, store,
	    json_integer_value(json_object_get(sw, "id")))) != NULL) {
		json_decref(row);
		return err;
	}
	*out = row;
	return NULL;
}

static json_t *
table_for(json_t *tables, const char *model, const char *split)
{
	json_t *t;
	size_t i;

	json_array_foreach(tables, i, t) {
		if (strcmp(json_string_value(json_object_get(t, "model")),
		    model) == 0 && strcmp(json_string_value(json_object_get(t,
		    "split")), split) == 0)
			return t;
	}
	t = json_pack("{s:s, s:s, s:[], s:[]}", "model", model, "split", split,
	    "rows", "scaling");
	json_array_append_new(tables, t);
	return t;
}

static json_int_t
level(const json_t *row)
{
	return json_integer_value(json_object_get(row, "concurrency"));
}

void
campaign_level_span(const json_t *c, const json_t **lo, const json_t **hi)
{
	if (*lo == NULL || level(c) < level(*lo))
		*lo = c;
	if (*hi == NULL || level(c) > level(*hi))
		*hi = c;
}

json_t *
campaign_scaling_ratio(const json_t *lo, const json_t *hi)
{
	double from = num(lo, "output_throughput");

	return from > 0 && json_is_number(json_object_get(hi,
	    "output_throughput")) ? json_real(num(hi, "output_throughput") /
	    from) : json_null();
}

/* Per engine of a table: throughput at its highest level over its lowest. */
static void
table_scaling(json_t *t)
{
	json_t *rows = json_object_get(t, "rows"), *a, *b;
	const json_t *lo, *hi;
	const char *eng;
	size_t i, j;

	json_array_foreach(rows, i, a) {
		eng = json_string_value(json_object_get(a, "engine"));
		for (j = 0; j < i; j++)
			if (strcmp(json_string_value(json_object_get(
			    json_array_get(rows, j), "engine")), eng) == 0)
				break;
		if (j < i)
			continue;	/* engine seen already */
		lo = hi = NULL;
		json_array_foreach(rows, j, b) {
			if (strcmp(json_string_value(json_object_get(b,
			    "engine")), eng) != 0)
				continue;
			campaign_level_span(b, &lo, &hi);
		}
		if (lo == hi)
			continue;
		json_array_append_new(json_object_get(t, "scaling"), json_pack(
		    "{s:s, s:I, s:I, s:o}", "engine", eng, "from", level(lo),
		    "to", level(hi), "ratio", campaign_scaling_ratio(lo, hi)));
	}
}

static json_t *
grid_levels(const json_t *grid)
{
	json_t *v = json_object_get(grid, "ad_hoc_levels");

	return json_is_array(v) ? json_incref(v) : json_array();
}

struct werr *
campaign_report(json_t **out, struct store *store,
    const struct policy *pol, const char *run_id, int per_request)
{
	json_t *run = NULL, *sweeps = NULL, *tables = NULL, *sw, *row, *grid;
	struct werr *err;
	size_t i;

	*out = NULL;
	if ((err = store_campaign_ensure(store)) != NULL ||
	    (err = store_campaign_run_json(store, run_id, &run)) != NULL)
		return err;
	if (run == NULL)
		return werr_new(WEXIT_INPUT, "no campaign run '%s'", run_id);
	if ((err = store_campaign_sweeps_json(store, run_id, &sweeps)) != NULL)
		goto out;
	tables = json_array();
	json_array_foreach(sweeps, i, sw) {
		if ((err = row_of(&row, sw, store, pol, per_request)) != NULL)
			goto out;
		json_array_append_new(json_object_get(table_for(tables,
		    json_string_value(json_object_get(sw, "model")),
		    json_string_value(json_object_get(sw, "split"))), "rows"),
		    row);
	}
	json_array_foreach(tables, i, sw)
		table_scaling(sw);
	grid = json_object_get(run, "grid");
	*out = json_pack("{s:s, s:O, s:O, s:O, s:O, s:o, s:O, s:O, s:o, "
	    "s:I, s:O, s:O, s:O}",
	    "run_id", run_id,
	    "machine", json_object_get(run, "machine"),
	    "state", json_object_get(run, "state"),
	    "created", json_object_get(run, "created"),
	    "finished", json_object_get(run, "finished"),
	    "date", vllm_date(json_object_get(run, "created")),
	    "roster", json_object_get(grid, "roster") ?
	    json_object_get(grid, "roster") : json_null(),
	    "limit", json_object_get(grid, "limit") ?
	    json_object_get(grid, "limit") : json_null(),
	    "ad_hoc_levels", grid_levels(grid),
	    "sweeps", (json_int_t)json_array_size(json_object_get(grid,
	    "points")),
	    "sweeps_done", json_object_get(run, "sweeps_done"),
	    "provenance", json_object_get(run, "provenance"),
	    "tables", tables);
	if (*out == NULL)
		err = werr_new(WEXIT_ENV, "run '%s': its rows cannot be read",
		    run_id);
	else	/* the splits --limit asked more of than they have */
		json_object_set_new(*out, "limit_beyond", json_is_array(
		    json_object_get(grid, "limit_beyond")) ? json_deep_copy(
		    json_object_get(grid, "limit_beyond")) : json_array());
out:
	json_decref(tables);
	json_decref(sweeps);
	json_decref(run);
	return err;
}

struct werr *
campaign_run_list(json_t **out, struct store *store)
{
	json_t *runs, *r, *grid, *list;
	struct werr *err;
	size_t i;

	*out = NULL;
	if ((err = store_campaign_ensure(store)) != NULL ||
	    (err = store_campaign_runs_json(store, &runs)) != NULL)
		return err;
	list = json_array();
	json_array_foreach(runs, i, r) {
		grid = json_object_get(r, "grid");
		json_array_append_new(list, json_pack("{s:O, s:O, s:O, s:O, "
		    "s:O, s:O, s:I, s:O, s:O, s:o}",
		    "run_id", json_object_get(r, "run_id"),
		    "created", json_object_get(r, "created"),
		    "finished", json_object_get(r, "finished"),
		    "state", json_object_get(r, "state"),
		    "machine", json_object_get(r, "machine"),
		    "roster", json_object_get(grid, "roster") ?
		    json_object_get(grid, "roster") : json_null(),
		    "sweeps", (json_int_t)json_array_size(json_object_get(grid,
		    "points")),
		    "sweeps_done", json_object_get(r, "sweeps_done"),
		    "limit", json_object_get(grid, "limit") ?
		    json_object_get(grid, "limit") : json_null(),
		    "ad_hoc_levels", grid_levels(grid)));
	}
	json_decref(runs);
	*out = list;
	return NULL;
}

char *
campaign_reason(const char *detail)
{
	const char *tail, *end, *p, *last = NULL, *last_end = NULL;
	struct buf b = BUF_INIT;

	if (detail == NULL)
		return NULL;
	tail = strstr(detail, "; log tail:");
	end = tail != NULL ? tail : detail + strcspn(detail, "\n");
	buf_add(&b, detail, (size_t)(end - detail));
	if (tail != NULL) {
		/* the last line of the tail with something on it */
		for (p = tail + strlen("; log tail:"); *p != '\0'; ) {
			const char *nl = p + strcspn(p, "\n");
			const char *q = p;

			while (q < nl && (*q == ' ' || *q == '\t' || *q == '\r'))
				q++;
			if (q < nl) {
				last = q;
				last_end = nl;
				while (last_end > last && (last_end[-1] == ' ' ||
				    last_end[-1] == '\r'))
					last_end--;
			}
			p = *nl != '\0' ? nl + 1 : nl;
		}
		if (last != NULL) {
			buf_puts(&b, "; log: ");
			buf_add(&b, last, (size_t)(last_end - last));
		}
	}
	return buf_detach(&b);
}
