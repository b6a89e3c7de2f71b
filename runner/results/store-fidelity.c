/*
 * store-fidelity.c - the SQL of the fidelity tables: runs, cells and
 * predictions, and the reference mark. See store-results.h. Every state
 * change carries its journal entry in the same transaction. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "buf.h"
#include "journal.h"
#include "store-json.h"
#include "util.h"
#include "results/store-results.h"
#include "results/store-results-private.h"

/* ---- fidelity runs ---- */

struct werr *
store_fidelity_run_get(struct store *store, const char *run_id, json_t **row)
{
	json_t *rows;
	struct werr *err;

	*row = NULL;
	if ((err = sr_query_rows(store, "SELECT * FROM fidelity_runs WHERE "
	    "run_id = ?1", run_id, &rows)) != NULL)
		return err;
	if (json_array_size(rows) > 0)
		*row = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	return NULL;
}

struct werr *
store_fidelity_run_create(struct store *store, const char *run_id,
    const char *machine, const char *kind, json_t *task, json_t *grid,
    json_t *provenance)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	json_t *row = NULL, *body;
	char now[32];
	int imported = strcmp(kind, "imported") == 0;

	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_fidelity_run_get(store, run_id, &row)) != NULL)
		return store_tx_end(store, err);
	if (row != NULL) {
		json_decref(row);
		return store_tx_end(store, werr_new(WEXIT_INPUT, "fidelity run "
		    "'%s' exists%s", run_id, imported ? "" :
		    "; continue it with --resume"));
	}
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "INSERT INTO fidelity_runs (run_id, "
	    "created, machine, kind, state, finished, task, grid, provenance) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, run_id);
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, machine);
	store_bind_text(st, 4, kind);
	store_bind_text(st, 5, "running");
	store_bind_text(st, 6, NULL);
	store_bind_json(st, 7, task);
	store_bind_json(st, 8, grid);
	store_bind_json(st, 9, provenance);
	if ((err = store_step_done(store, st, "insert fidelity run")) != NULL)
		return store_tx_end(store, err);
	body = json_pack("{s:s, s:s, s:s, s:O, s:O}", "run_id", run_id,
	    "machine", machine, "kind", kind, "task",
	    json_object_get(task, "sha256"), "grid", grid);
	err = journal_append(store, imported ? "fidelity.import" :
	    "fidelity.run.start", run_id, body, NULL);
	json_decref(body);
	return store_tx_end(store, err);
}

struct werr *
store_fidelity_run_unfinished(struct store *store, const char *machine,
    char **run_id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*run_id = NULL;
	if ((err = store_prepare(store, &st, "SELECT run_id FROM fidelity_runs "
	    "WHERE machine = ?1 AND state = 'running' "
	    "ORDER BY created DESC, rowid DESC LIMIT 1")) != NULL)
		return err;
	store_bind_text(st, 1, machine);
	if (sqlite3_step(st) == SQLITE_ROW)
		*run_id = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return NULL;
}

struct werr *
store_fidelity_run_finish(struct store *store, const char *run_id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32];
	json_t *body;

	if ((err = store_begin(store)) != NULL)
		return err;
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "UPDATE fidelity_runs SET state = "
	    "'done', finished = ?2 WHERE run_id = ?1")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, run_id);
	store_bind_text(st, 2, now);
	if ((err = store_step_done(store, st, "finish fidelity run")) != NULL)
		return store_tx_end(store, err);
	body = json_pack("{s:s}", "run_id", run_id);
	err = journal_append(store, "fidelity.run.finish", run_id, body, NULL);
	json_decref(body);
	return store_tx_end(store, err);
}

struct werr *
store_fidelity_runs(struct store *store, json_t **out)
{
	return sr_query_rows(store, "SELECT run_id, created, machine, kind, state, "
	    "finished, json_extract(task, '$.sha256') AS task_sha256, "
	    "reference_marked, reference_engine, run_id = (SELECT run_id FROM "
	    "fidelity_runs WHERE reference_marked IS NOT NULL ORDER BY "
	    "reference_marked DESC, rowid DESC LIMIT 1) AS reference "
	    "FROM fidelity_runs ORDER BY created, rowid", NULL, out);
}

struct werr *
store_fidelity_run_latest(struct store *store, char **run_id)
{
	return sr_query_string(store, "SELECT run_id FROM fidelity_runs WHERE "
	    "kind = 'measured' AND state = 'done' "
	    "ORDER BY finished DESC, rowid DESC LIMIT 1", NULL, run_id);
}

struct werr *
store_fidelity_reference(struct store *store, char **run_id, char **engine)
{
	struct werr *err;

	*engine = NULL;
	if ((err = sr_query_string(store, "SELECT run_id FROM fidelity_runs WHERE "
	    "reference_marked IS NOT NULL ORDER BY reference_marked DESC, "
	    "rowid DESC LIMIT 1", NULL, run_id)) != NULL || *run_id == NULL)
		return err;
	return sr_query_string(store, "SELECT reference_engine FROM fidelity_runs "
	    "WHERE run_id = ?1", *run_id, engine);
}

/* The engines with done cells in run_id, as an array. */
static struct werr *
run_engines(struct store *store, const char *run_id, json_t **out)
{
	return sr_query_rows(store, "SELECT DISTINCT engine FROM fidelity_cells "
	    "WHERE run_id = ?1 AND state = 'done' ORDER BY engine", run_id, out);
}

struct werr *
store_fidelity_mark_reference(struct store *store, const char *run_id,
    const char *engine)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	json_t *row = NULL, *engines = NULL, *body, *e;
	struct buf names = BUF_INIT;
	char now[32];
	size_t i;

	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_fidelity_run_get(store, run_id, &row)) != NULL ||
	    (err = run_engines(store, run_id, &engines)) != NULL)
		goto out;
	if (row == NULL) {
		err = werr_new(WEXIT_INPUT, "no fidelity run '%s'", run_id);
		goto out;
	}
	if (strcmp(json_string_value(json_object_get(row, "state")),
	    "done") != 0) {
		err = werr_new(WEXIT_INPUT, "fidelity run '%s' is not finished; "
		    "only a finished run can be the reference", run_id);
		goto out;
	}
	json_array_foreach(engines, i, e) {
		buf_printf(&names, "%s'%s'", i ? ", " : "", json_string_value(
		    json_object_get(e, "engine")));
		if (engine != NULL && strcmp(engine, json_string_value(
		    json_object_get(e, "engine"))) == 0)
			break;
	}
	if (engine == NULL && json_array_size(engines) == 1)
		engine = json_string_value(json_object_get(json_array_get(
		    engines, 0), "engine"));
	else if (engine == NULL) {
		err = werr_new(WEXIT_INPUT, "fidelity run '%s' has cells of "
		    "%zu engines (%s); name the reference with --engine",
		    run_id, json_array_size(engines), buf_cstr(&names));
		goto out;
	} else if (i == json_array_size(engines)) {
		err = werr_new(WEXIT_INPUT, "fidelity run '%s' has no cells of "
		    "engine '%s' (it has %s)", run_id, engine, buf_cstr(&names));
		goto out;
	}
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "UPDATE fidelity_runs SET "
	    "reference_marked = ?2, reference_engine = ?3 WHERE run_id = ?1"))
	    != NULL)
		goto out;
	store_bind_text(st, 1, run_id);
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, engine);
	if ((err = store_step_done(store, st, "mark reference")) != NULL)
		goto out;
	body = json_pack("{s:s, s:s}", "run_id", run_id, "engine", engine);
	err = journal_append(store, "fidelity.reference", run_id, body, NULL);
	json_decref(body);
out:
	json_decref(row);
	json_decref(engines);
	buf_free(&names);
	return store_tx_end(store, err);
}

/* ---- cells ---- */

static char *
cell_subject(sqlite3_stmt *st, int first)
{
	return xasprintf("%s/%s/%d-shot",
	    (const char *)sqlite3_column_text(st, first),
	    (const char *)sqlite3_column_text(st, first + 1),
	    sqlite3_column_int(st, first + 2));
}

struct werr *
store_fidelity_discard_unfinished(struct store *store, const char *run_id,
    int *n)
{
	sqlite3_stmt *st = NULL, *del = NULL;
	struct werr *err;
	json_t *body;
	char *subject;

	*n = 0;
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "SELECT id, seq, engine, model, "
	    "shots FROM fidelity_cells WHERE run_id = ?1 AND state = 'running' "
	    "ORDER BY seq")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, run_id);
	while (err == NULL && sqlite3_step(st) == SQLITE_ROW) {
		subject = cell_subject(st, 2);
		err = store_prepare(store, &del, "DELETE FROM fidelity_cells "
		    "WHERE id = ?1");
		if (err == NULL) {
			sqlite3_bind_int64(del, 1, sqlite3_column_int64(st, 0));
			err = store_step_done(store, del, "discard cell");
		}
		if (err == NULL) {
			body = json_pack("{s:s, s:i}", "run_id", run_id, "seq",
			    sqlite3_column_int(st, 1));
			err = journal_append(store, "fidelity.cell.discard",
			    subject, body, NULL);
			json_decref(body);
		}
		free(subject);
		(*n)++;
	}
	sqlite3_finalize(st);
	return store_tx_end(store, err);
}

struct werr *
store_fidelity_cell_done(struct store *store, const char *run_id, int seq,
    int *done)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;

	*done = 0;
	if ((err = store_prepare(store, &st, "SELECT 1 FROM fidelity_cells WHERE "
	    "run_id = ?1 AND seq = ?2 AND state = 'done'")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	sqlite3_bind_int(st, 2, seq);
	*done = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return NULL;
}

struct werr *
store_fidelity_cell_begin(struct store *store,
    const struct store_fidelity_cell_key *k, int64_t *cell_id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32], *subject;
	json_t *body;

	if ((err = store_begin(store)) != NULL)
		return err;
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "INSERT INTO fidelity_cells (run_id, "
	    "seq, engine, model, shots, state, started, total, provenance) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7, ?8)")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, k->run_id);
	sqlite3_bind_int(st, 2, k->seq);
	store_bind_text(st, 3, k->engine);
	store_bind_text(st, 4, k->model);
	sqlite3_bind_int(st, 5, k->shots);
	store_bind_text(st, 6, now);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)k->total);
	store_bind_json(st, 8, k->provenance);
	if ((err = store_step_done(store, st, "insert fidelity cell")) != NULL)
		return store_tx_end(store, err);
	*cell_id = sqlite3_last_insert_rowid(store_db(store));
	subject = xasprintf("%s/%s/%d-shot", k->engine, k->model, k->shots);
	body = json_pack("{s:s, s:i, s:I}", "run_id", k->run_id, "seq", k->seq,
	    "cell_id", (json_int_t)*cell_id);
	err = journal_append(store, "fidelity.cell.start", subject, body, NULL);
	json_decref(body);
	free(subject);
	return store_tx_end(store, err);
}

static struct werr *
predictions_add(struct store *store, int64_t cell_id,
    const struct store_fidelity_cell_result *res)
{
	const struct store_fidelity_prediction *p;
	sqlite3_stmt *st = NULL;
	struct werr *err;
	size_t i;

	if ((err = store_prepare(store, &st, "INSERT INTO fidelity_predictions "
	    "(cell_id, idx, item_id, gold, predicted, parse, outcome, answer, "
	    "error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")) != NULL)
		return err;
	for (i = 0; i < res->n && err == NULL; i++) {
		p = &res->predictions[i];
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		sqlite3_bind_int64(st, 1, cell_id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		store_bind_text(st, 3, p->item_id);
		store_bind_text(st, 4, p->gold);
		store_bind_text(st, 5, p->predicted);
		store_bind_text(st, 6, p->parse);
		store_bind_text(st, 7, p->outcome);
		store_bind_text(st, 8, p->answer);
		store_bind_text(st, 9, p->error);
		if (sqlite3_step(st) != SQLITE_DONE)
			err = store_error(store, "insert prediction");
	}
	sqlite3_finalize(st);
	return err;
}

struct werr *
store_fidelity_cell_finish(struct store *store, int64_t cell_id,
    const struct store_fidelity_cell_result *res)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32], *subject = NULL;
	json_t *body = NULL;

	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "SELECT run_id, seq, engine, model, "
	    "shots FROM fidelity_cells WHERE id = ?1 AND state = 'running'"))
	    != NULL)
		return store_tx_end(store, err);
	sqlite3_bind_int64(st, 1, cell_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return store_tx_end(store, werr_new(WEXIT_ENV,
		    "fidelity cell %lld is not running", (long long)cell_id));
	}
	subject = cell_subject(st, 2);
	body = json_pack("{s:s, s:i, s:s, s:O?}",
	    "run_id", (const char *)sqlite3_column_text(st, 0),
	    "seq", sqlite3_column_int(st, 1), "outcome", res->outcome,
	    "weighted_f1", json_object_get(res->scores, "weighted_f1"));
	sqlite3_finalize(st);
	if ((err = predictions_add(store, cell_id, res)) != NULL)
		goto out;
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "UPDATE fidelity_cells SET state = "
	    "'done', outcome = ?2, detail = ?3, served_model = ?4, "
	    "finished = ?5, scores = ?6, "
	    "provenance = CASE WHEN ?7 IS NULL THEN provenance ELSE "
	    "json_set(provenance, '$.engine_argv', ?7) END WHERE id = ?1"))
	    != NULL)
		goto out;
	sqlite3_bind_int64(st, 1, cell_id);
	store_bind_text(st, 2, res->outcome);
	store_bind_text(st, 3, res->detail);
	store_bind_text(st, 4, res->served_model);
	store_bind_text(st, 5, now);
	store_bind_json(st, 6, res->scores);
	store_bind_text(st, 7, res->engine_argv);
	if ((err = store_step_done(store, st, "finish fidelity cell")) != NULL)
		goto out;
	err = journal_append(store, "fidelity.cell.finish", subject, body,
	    NULL);
out:
	json_decref(body);
	free(subject);
	return store_tx_end(store, err);
}

static struct werr *
cell_predictions(struct store *store, int64_t cell_id, json_t **out)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	int rc;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT item_id, gold, predicted, "
	    "parse, outcome, answer FROM fidelity_predictions WHERE "
	    "cell_id = ?1 ORDER BY idx")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, cell_id);
	*out = json_array();
	/* [item, gold, predicted, parse, outcome, answer]: the answer as
	 * stored (its first bytes), null for a failed request */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(*out, json_pack("[s, s, s, s, s, o]",
		    (const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    (const char *)sqlite3_column_text(st, 2),
		    (const char *)sqlite3_column_text(st, 3),
		    (const char *)sqlite3_column_text(st, 4),
		    sqlite3_column_type(st, 5) == SQLITE_NULL ? json_null() :
		    json_text((const char *)sqlite3_column_text(st, 5))));
	if (rc != SQLITE_DONE) {
		err = store_error(store, "read predictions");
		json_decref(*out);
		*out = NULL;
	}
	sqlite3_finalize(st);
	return err;
}

struct werr *
store_fidelity_cells_json(struct store *store, const char *run_id,
    int with_predictions, json_t **out)
{
	struct werr *err;
	json_t *cell, *preds;
	size_t i;

	if ((err = sr_query_rows(store, "SELECT * FROM fidelity_cells WHERE "
	    "run_id = ?1 AND state = 'done' ORDER BY seq", run_id, out)) != NULL)
		return err;
	if (!with_predictions)
		return NULL;
	json_array_foreach(*out, i, cell) {
		if ((err = cell_predictions(store, json_integer_value(
		    json_object_get(cell, "id")), &preds)) != NULL) {
			json_decref(*out);
			*out = NULL;
			return err;
		}
		json_object_set_new(cell, "predictions", preds);
	}
	return NULL;
}

