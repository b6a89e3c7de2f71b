/*
 * store-campaign-read.c - the queries of the campaign tables: runs, their
 * grids and states, which sweeps are done, what an engine already spent,
 * and the rows a report is made of. See store-campaign.h. The writes are
 * in store-campaign.c.
 *
 * Reads only: nothing here begins a transaction or changes a row. Never
 * prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store-campaign.h"
#include "store-json.h"
#include "util.h"

static char *
column_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s != NULL ? xstrdup((const char *)s) : NULL;
}

static json_t *
column_json(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	json_error_t jerr;

	if (s == NULL)
		return json_null();
	return json_loads((const char *)s, JSON_DECODE_ANY, &jerr);
}

struct werr *
store_campaign_run_get(struct store *store, const char *run_id, int *found,
    char **machine, char **state, json_t **grid)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	int rc;

	*found = 0;
	if ((err = store_prepare(store, &st, "SELECT machine, state, grid FROM "
	    "campaign_runs WHERE run_id = ?1")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = 1;
		if (machine != NULL)
			*machine = column_strdup(st, 0);
		if (state != NULL)
			*state = column_strdup(st, 1);
		if (grid != NULL)
			*grid = column_json(st, 2);
	} else if (rc != SQLITE_DONE) {
		err = store_error(store, "select run");
	}
	sqlite3_finalize(st);
	return err;
}

struct werr *
store_campaign_run_unfinished(struct store *store, const char *machine,
    char **run_id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*run_id = NULL;
	if ((err = store_prepare(store, &st, "SELECT run_id FROM campaign_runs "
	    "WHERE machine = ?1 AND state = 'running' "
	    "ORDER BY created DESC, rowid DESC LIMIT 1")) != NULL)
		return err;
	store_bind_text(st, 1, machine);
	if (sqlite3_step(st) == SQLITE_ROW)
		*run_id = column_strdup(st, 0);
	sqlite3_finalize(st);
	return NULL;
}

struct werr *
store_campaign_sweep_done(struct store *store, const char *run_id, int seq,
    int *done)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*done = 0;
	if ((err = store_prepare(store, &st, "SELECT 1 FROM campaign_sweeps WHERE "
	    "run_id = ?1 AND seq = ?2 AND state = 'done'")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	sqlite3_bind_int(st, 2, seq);
	*done = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return NULL;
}

struct werr *
store_campaign_engine_seconds(struct store *store, const char *run_id,
    const char *engine, double *seconds)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*seconds = 0;
	if ((err = store_prepare(store, &st, "SELECT COALESCE(SUM("
	    "(julianday(finished) - julianday(started)) * 86400.0), 0) "
	    "FROM campaign_sweeps WHERE run_id = ?1 AND engine = ?2 "
	    "AND state = 'done' AND finished IS NOT NULL")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	store_bind_text(st, 2, engine);
	if (sqlite3_step(st) == SQLITE_ROW)
		*seconds = sqlite3_column_double(st, 0);
	else
		err = store_error(store, "sum engine time");
	sqlite3_finalize(st);
	return err;
}

struct werr *
store_campaign_sweeps_json(struct store *store, const char *run_id,
    json_t **out)
{
	static const char *const json_cols[] = { "summary", "provenance",
	    NULL };
	sqlite3_stmt *st = NULL;
	struct werr *err;

	json_t *sw;
	size_t i;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT * FROM campaign_sweeps WHERE "
	    "run_id = ?1 AND state = 'done' ORDER BY seq")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	if ((err = store_rows_json(out, store, st, json_cols,
	    "read campaign rows")) != NULL)
		return err;
	json_array_foreach(*out, i, sw)
		campaign_sweep_names(sw);
	return NULL;
}

/* The store's columns (and snapshots made before the names were one)
 * under the glossary's names. */
static const char *const sweep_old_names[][2] = {
	{ "peak_engine_bytes", "peak_engine_memory_bytes" },
	{ "peak_system_bytes", "peak_system_memory_bytes" },
	{ "system_total_bytes", "system_memory_bytes" },
	{ "gpu_hint_bytes", "gpu_working_set_hint_bytes" },
};

void
campaign_sweep_names(json_t *sweep)
{
	json_t *v;
	size_t i;

	for (i = 0; i < sizeof(sweep_old_names) / sizeof(sweep_old_names[0]);
	    i++) {
		if ((v = json_object_get(sweep, sweep_old_names[i][0])) == NULL)
			continue;
		if (json_object_get(sweep, sweep_old_names[i][1]) == NULL)
			json_object_set(sweep, sweep_old_names[i][1], v);
		json_object_del(sweep, sweep_old_names[i][0]);
	}
}

struct werr *
store_campaign_run_json(struct store *store, const char *run_id,
    json_t **out)
{
	static const char *const json_cols[] = { "grid", "provenance", NULL };
	sqlite3_stmt *st = NULL;
	struct werr *err;
	json_t *arr;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT r.*, (SELECT count(*) "
	    "FROM campaign_sweeps s WHERE s.run_id = r.run_id AND "
	    "s.state = 'done') AS sweeps_done FROM campaign_runs r "
	    "WHERE r.run_id = ?1")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	if ((err = store_rows_json(&arr, store, st, json_cols,
	    "read campaign rows")) != NULL)
		return err;
	if (json_array_size(arr) == 1)
		*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return NULL;
}

struct werr *
store_campaign_runs_json(struct store *store, json_t **out)
{
	static const char *const json_cols[] = { "grid", NULL };
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT r.run_id, r.created, "
	    "r.finished, r.state, r.machine, r.grid, (SELECT count(*) FROM "
	    "campaign_sweeps s WHERE s.run_id = r.run_id AND s.state = "
	    "'done') AS sweeps_done FROM campaign_runs r "
	    "ORDER BY r.created DESC, r.rowid DESC")) != NULL)
		return err;
	return store_rows_json(out, store, st, json_cols,
	    "read campaign rows");
}

struct werr *
store_campaign_requests_json(struct store *store, int64_t sweep_id,
    json_t **out)
{
	static const char *const json_cols[] = { "itl_ns", NULL };
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT idx, prompt_id, ttft_ms, "
	    "e2el_ms, prompt_tokens, completion_tokens, token_events, "
	    "outcome, error, connect_ms, new_connection, itl_ns "
	    "FROM campaign_requests WHERE sweep_id = ?1 AND warmup = 0 "
	    "ORDER BY idx")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, sweep_id);
	return store_rows_json(out, store, st, json_cols,
	    "read campaign rows");
}

struct werr *
store_campaign_memory_json(struct store *store, int64_t sweep_id,
    json_t **out)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	json_t *t, *sys, *eng;
	int64_t t0 = -1, tn;
	int rc;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT t_ns, system_used_bytes, "
	    "engine_bytes FROM campaign_memory WHERE sweep_id = ?1 "
	    "ORDER BY t_ns")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, sweep_id);
	t = json_array();
	sys = json_array();
	eng = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		tn = sqlite3_column_int64(st, 0);
		if (t0 < 0)
			t0 = tn;
		/* milliseconds are enough for a 1 Hz trace */
		json_array_append_new(t, json_real((double)((tn - t0) /
		    1000000) / 1000.0));
		json_array_append_new(sys, json_integer(
		    sqlite3_column_int64(st, 1)));
		json_array_append_new(eng, json_integer(
		    sqlite3_column_int64(st, 2)));
	}
	if (rc != SQLITE_DONE)
		err = store_error(store, "read memory trace");
	sqlite3_finalize(st);
	*out = json_pack("{s:o, s:o, s:o}", "t_s", t, "system_used_bytes", sys,
	    "engine_bytes", eng);
	return err;
}

struct werr *
store_campaign_run_latest(struct store *store, char **run_id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*run_id = NULL;
	if ((err = store_prepare(store, &st, "SELECT run_id FROM campaign_runs r "
	    "WHERE state = 'done' AND " STORE_CAMPAIGN_MEASURED_RUN " "
	    "ORDER BY finished DESC, rowid DESC LIMIT 1"))
	    != NULL)
		return err;
	if (sqlite3_step(st) == SQLITE_ROW)
		*run_id = column_strdup(st, 0);
	sqlite3_finalize(st);
	return NULL;
}
