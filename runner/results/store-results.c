/*
 * store-results.c - the SQL of the gate records and publishes, and the
 * helpers the results area's SQL shares (store-results-private.h); the
 * fidelity tables are store-fidelity.c. See store-results.h. Every write
 * runs between store_begin() and store_commit(), with its journal entry
 * in the same transaction (a publish's inside official.c's). Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "buf.h"
#include "journal.h"
#include "util.h"
#include "results/store-results.h"
#include "results/store-results-private.h"
#include "store-json.h"

/* The results tables' columns that hold JSON text. */
static const char *const sr_json_cols[] = { "task", "grid", "provenance",
    "scores", "runs", "result", NULL };

/* Run a query with one text parameter (may be NULL: none bound) into an
 * array of rows. */
struct werr *
sr_query_rows(struct store *store, const char *sql, const char *param,
    json_t **out)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, sql)) != NULL)
		return err;
	if (param != NULL)
		store_bind_text(st, 1, param);
	return store_rows_json(out, store, st, sr_json_cols, "query");
}

/* The first column of the first row as a string (NULL if no row). */
struct werr *
sr_query_string(struct store *store, const char *sql, const char *param,
    char **out)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	const unsigned char *s;

	*out = NULL;
	if ((err = store_prepare(store, &st, sql)) != NULL)
		return err;
	if (param != NULL)
		store_bind_text(st, 1, param);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    (s = sqlite3_column_text(st, 0)) != NULL)
		*out = xstrdup((const char *)s);
	sqlite3_finalize(st);
	return NULL;
}

/* ---- gate records ---- */

struct werr *
store_gate_record(struct store *store, const char *results_sha256,
    json_t *runs, json_t *result, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	json_t *body;
	char now[32];

	if ((err = store_begin(store)) != NULL)
		return err;
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "INSERT INTO gate_results (created, "
	    "results_sha256, runs, result) VALUES (?1, ?2, ?3, ?4)")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, now);
	store_bind_text(st, 2, results_sha256);
	store_bind_json(st, 3, runs);
	store_bind_json(st, 4, result);
	if ((err = store_step_done(store, st, "insert gate result")) != NULL)
		return store_tx_end(store, err);
	*id = sqlite3_last_insert_rowid(store_db(store));
	body = json_pack("{s:I, s:s, s:O, s:O?, s:O?}", "id", (json_int_t)*id,
	    "results_sha256", results_sha256, "runs", runs,
	    "passed", json_object_get(result, "passed"),
	    "failed", json_object_get(result, "failed"));
	err = journal_append(store, "gate.result", results_sha256, body, NULL);
	json_decref(body);
	return store_tx_end(store, err);
}

struct werr *
store_gate_find(struct store *store, const char *results_sha256, json_t **row)
{
	json_t *rows;
	struct werr *err;

	*row = NULL;
	err = results_sha256 != NULL ?
	    sr_query_rows(store, "SELECT * FROM gate_results WHERE "
	    "results_sha256 = ?1 ORDER BY id DESC LIMIT 1", results_sha256,
	    &rows) :
	    sr_query_rows(store, "SELECT * FROM gate_results ORDER BY id DESC "
	    "LIMIT 1", NULL, &rows);
	if (err != NULL)
		return err;
	if (json_array_size(rows) > 0)
		*row = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	return NULL;
}

/* ---- publishes ---- */

struct werr *
store_publish_record(struct store *store, const char *commit,
    const json_t *p)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32];

	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "INSERT OR IGNORE INTO publishes "
	    "(snapshot_id, published, commit_id, measured_commit, "
	    "archive_sha256, results_sha256, tag) VALUES (?1, ?2, ?3, ?4, ?5, "
	    "?6, ?7)")) != NULL)
		return err;
	store_bind_text(st, 1, json_string_value(json_object_get(p,
	    "snapshot")));
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, commit);
	store_bind_text(st, 4, json_string_value(json_object_get(p,
	    "measured_commit")));
	store_bind_text(st, 5, json_string_value(json_object_get(p, "sha256")));
	store_bind_text(st, 6, json_string_value(json_object_get(p,
	    "results_sha256")));
	store_bind_text(st, 7, json_string_value(json_object_get(p, "tag")));
	return store_step_done(store, st, "record publish");
}

struct werr *
store_publishes(struct store *store, json_t **out)
{
	return sr_query_rows(store, "SELECT * FROM publishes ORDER BY published "
	    "DESC, rowid DESC", NULL, out);
}
