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
	sqlite3_stmt *st = NULL;
	struct werr *err;
	json_t *arr, *o, *v;
	int i, ncol;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT * FROM campaign_sweeps WHERE "
	    "run_id = ?1 AND state = 'done' ORDER BY seq")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	arr = json_array();
	ncol = sqlite3_column_count(st);
	while (sqlite3_step(st) == SQLITE_ROW) {
		o = json_object();
		for (i = 0; i < ncol; i++) {
			const char *name = sqlite3_column_name(st, i);

			switch (sqlite3_column_type(st, i)) {
			case SQLITE_INTEGER:
				v = json_integer(sqlite3_column_int64(st, i));
				break;
			case SQLITE_FLOAT:
				v = json_real(sqlite3_column_double(st, i));
				break;
			case SQLITE_NULL:
				v = json_null();
				break;
			default:
				if (strcmp(name, "summary") == 0 ||
				    strcmp(name, "provenance") == 0)
					v = column_json(st, i);
				else
					v = json_string((const char *)
					    sqlite3_column_text(st, i));
				break;
			}
			json_object_set_new(o, name, v ? v : json_null());
		}
		json_array_append_new(arr, o);
	}
	sqlite3_finalize(st);
	*out = arr;
	return NULL;
}
