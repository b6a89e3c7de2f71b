/*
 * store-cycle.c - SQL of the cycle. See store-cycle.h.
 *
 * Each writing function is one transaction with its journal entry; the
 * readers run in whatever the caller holds. Must never decide what a
 * step's result means.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "journal.h"
#include "store-cycle.h"
#include "store-json.h"
#include "util.h"

#define CYCLE_COLUMNS "id, seq, created, finished, roster, machine, state, " \
	"round, pid, exit_code"

static const char *const cycle_json_cols[] = { "journal", "result", "cells",
    NULL };

struct werr *
store_cycle_create(struct store *store, const char *id, const char *roster,
    const char *machine, long pid)
{
	sqlite3_stmt *st;
	struct werr *err;
	char now[40];
	json_t *body;
	int found;

	utc_now_iso(now, sizeof(now));
	body = json_pack("{s:s, s:s, s:I}", "roster", roster, "machine",
	    machine, "pid", (json_int_t)pid);
	if ((err = journal_check_entry("cycle.started", id, body)) != NULL ||
	    (err = store_begin(store)) != NULL)
		goto out;
	if ((err = store_prepare(store, &st, "SELECT count(*) FROM cycles "
	    "WHERE id = ?")) != NULL) {
		store_rollback(store);
		goto out;
	}
	store_bind_text(st, 1, id);
	found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	if (found) {
		store_rollback(store);
		err = werr_new(WEXIT_INPUT, "there is already a cycle '%s'", id);
		goto out;
	}
	if ((err = store_prepare(store, &st, "INSERT INTO cycles (id, seq, "
	    "created, roster, machine, state, round, pid) VALUES (?1, "
	    "(SELECT coalesce(max(seq), 0) + 1 FROM cycles), ?2, ?3, ?4, "
	    "'running', 1, ?5)")) == NULL) {
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, now);
		store_bind_text(st, 3, roster);
		store_bind_text(st, 4, machine);
		sqlite3_bind_int64(st, 5, pid);
		err = store_step_done(store, st, "insert cycle");
	}
	if (err == NULL)
		err = journal_append(store, "cycle.started", id, body, NULL);
	err = store_tx_end(store, err);
out:
	json_decref(body);
	return err;
}

struct werr *
store_cycle_get(struct store *store, const char *id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT " CYCLE_COLUMNS
	    ", journal FROM cycles WHERE id = ?")) != NULL)
		return err;
	store_bind_text(st, 1, id);
	return store_row_json(out, store, st, cycle_json_cols, "read cycles");
}

struct werr *
store_cycle_latest(struct store *store, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	int have;

	/* a database no cycle has touched, opened read-only (status) */
	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT count(*) FROM "
	    "sqlite_master WHERE type = 'table' AND name = 'cycles'")) != NULL)
		return err;
	have = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	if (!have)
		return NULL;

	if ((err = store_prepare(store, &st, "SELECT " CYCLE_COLUMNS
	    ", journal FROM cycles ORDER BY seq DESC LIMIT 1")) != NULL)
		return err;
	return store_row_json(out, store, st, cycle_json_cols, "read cycles");
}

struct werr *
store_cycle_previous(struct store *store, const char *id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT " CYCLE_COLUMNS
	    ", journal FROM cycles WHERE journal IS NOT NULL AND seq < "
	    "(SELECT seq FROM cycles WHERE id = ?) ORDER BY seq DESC "
	    "LIMIT 1")) != NULL)
		return err;
	store_bind_text(st, 1, id);
	return store_row_json(out, store, st, cycle_json_cols, "read cycles");
}

struct werr *
store_cycles(struct store *store, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT " CYCLE_COLUMNS
	    " FROM cycles ORDER BY seq DESC")) != NULL)
		return err;
	return store_rows_json(out, store, st, cycle_json_cols, "read cycles");
}

/* UPDATE cycles (?1 the id, ?2 an integer) in a transaction with an
 * entry of kind. */
static struct werr *
update_journaled(struct store *store, const char *id, const char *sql,
    int64_t n, const char *kind, json_t *body)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = journal_check_entry(kind, id, body)) != NULL ||
	    (err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, sql)) == NULL) {
		store_bind_text(st, 1, id);
		sqlite3_bind_int64(st, 2, n);
		err = store_step_done(store, st, "update cycle");
	}
	if (err == NULL && sqlite3_changes(store_db(store)) != 1)
		err = werr_new(WEXIT_INPUT, "no cycle '%s'", id);
	if (err == NULL)
		err = journal_append(store, kind, id, body, NULL);
	return store_tx_end(store, err);
}

struct werr *
store_cycle_claim(struct store *store, const char *id, long pid,
    const char *why)
{
	json_t *body = json_pack("{s:I, s:s}", "pid", (json_int_t)pid, "why",
	    why);
	struct werr *err;

	err = update_journaled(store, id, "UPDATE cycles SET pid = ?2 "
	    "WHERE id = ?1", pid, "cycle.resumed", body);
	json_decref(body);
	return err;
}

struct werr *
store_cycle_round(struct store *store, const char *id, int round,
    const char *why)
{
	json_t *body = json_pack("{s:i, s:s}", "round", round, "why", why);
	struct werr *err;

	err = update_journaled(store, id, "UPDATE cycles SET round = ?2, "
	    "state = 'running', finished = NULL, exit_code = NULL "
	    "WHERE id = ?1", round, "cycle.round", body);
	json_decref(body);
	return err;
}

struct werr *
store_cycle_step_begin(struct store *store, const char *id, int round,
    const char *step)
{
	sqlite3_stmt *st;
	struct werr *err;
	char now[40];

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "INSERT INTO cycle_steps (cycle, "
	    "round, step, state, started) VALUES (?1, ?2, ?3, 'running', ?4) "
	    "ON CONFLICT (cycle, round, step) DO UPDATE SET state = "
	    "'running', finished = NULL, result = NULL")) == NULL) {
		store_bind_text(st, 1, id);
		sqlite3_bind_int(st, 2, round);
		store_bind_text(st, 3, step);
		store_bind_text(st, 4, now);
		err = store_step_done(store, st, "begin cycle step");
	}
	return store_tx_end(store, err);
}

/* End step (inside a transaction): its row and its entry. */
static struct werr *
step_end(struct store *store, const char *id, int round, const char *step,
    const char *state, json_t *result)
{
	json_t *body = json_pack("{s:i, s:s, s:s, s:O?}", "round", round,
	    "step", step, "state", state, "result", result);
	char now[40], *subject;
	sqlite3_stmt *st;
	struct werr *err;

	utc_now_iso(now, sizeof(now));
	subject = xasprintf("%s %s", step, state);
	if ((err = store_prepare(store, &st, "UPDATE cycle_steps SET state = "
	    "?4, finished = ?5, result = ?6 WHERE cycle = ?1 AND round = ?2 "
	    "AND step = ?3")) == NULL) {
		store_bind_text(st, 1, id);
		sqlite3_bind_int(st, 2, round);
		store_bind_text(st, 3, step);
		store_bind_text(st, 4, state);
		store_bind_text(st, 5, now);
		store_bind_json(st, 6, result);
		err = store_step_done(store, st, "end cycle step");
	}
	if (err == NULL && sqlite3_changes(store_db(store)) != 1)
		err = werr_new(WEXIT_ENV, "cycle '%s': step %s of round %d was "
		    "never begun", id, step, round);
	if (err == NULL)
		err = journal_append(store, "cycle.step", subject, body, NULL);
	free(subject);
	json_decref(body);
	return err;
}

struct werr *
store_cycle_step_end(struct store *store, const char *id, int round,
    const char *step, const char *state, json_t *result)
{
	struct werr *err;

	if ((err = store_begin(store)) != NULL)
		return err;
	return store_tx_end(store, step_end(store, id, round, step, state,
	    result));
}

struct werr *
store_cycle_steps(struct store *store, const char *id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT round, step, state, "
	    "started, finished, result FROM cycle_steps WHERE cycle = ? "
	    "ORDER BY id")) != NULL)
		return err;
	store_bind_text(st, 1, id);
	return store_rows_json(out, store, st, cycle_json_cols, "read cycles");
}

struct werr *
store_cycle_journal(struct store *store, const char *id, int round,
    json_t *journal)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = journal_check_entry("cycle.journal", id, journal)) != NULL ||
	    (err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "UPDATE cycles SET journal = ?2, "
	    "exit_code = ?3 WHERE id = ?1")) == NULL) {
		store_bind_text(st, 1, id);
		store_bind_json(st, 2, journal);
		sqlite3_bind_int64(st, 3, json_integer_value(json_object_get(
		    journal, "exit")));
		err = store_step_done(store, st, "store the cycle journal");
	}
	if (err == NULL)
		err = step_end(store, id, round, "journal", "done", NULL);
	if (err == NULL)
		err = journal_append(store, "cycle.journal", id, journal, NULL);
	return store_tx_end(store, err);
}

struct werr *
store_cycle_end(struct store *store, const char *id, int round,
    json_t *result, const char *state, int exit_code)
{
	json_t *body = json_pack("{s:i, s:s, s:i}", "round", round, "state",
	    state, "exit", exit_code);
	const char *kind = strcmp(state, "waiting") == 0 ? "cycle.waiting" :
	    "cycle.finished";
	sqlite3_stmt *st;
	struct werr *err;
	char now[40];

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		goto out;
	err = step_end(store, id, round, "export", "done", result);
	if (err == NULL && (err = store_prepare(store, &st, "UPDATE cycles SET "
	    "state = ?2, exit_code = ?3, finished = ?4, pid = NULL "
	    "WHERE id = ?1")) == NULL) {
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, state);
		sqlite3_bind_int(st, 3, exit_code);
		store_bind_text(st, 4, now);
		err = store_step_done(store, st, "end cycle");
	}
	if (err == NULL)
		err = journal_append(store, kind, id, body, NULL);
	err = store_tx_end(store, err);
out:
	json_decref(body);
	return err;
}

struct werr *
store_cycle_agent_begin(struct store *store, const char *id,
    const char *task, json_t *cells, int *fresh)
{
	json_t *body = json_pack("{s:s, s:O}", "task", task, "cells", cells);
	sqlite3_stmt *st;
	struct werr *err;
	char now[40];

	*fresh = 0;
	utc_now_iso(now, sizeof(now));
	if ((err = journal_check_entry("cycle.agent", task, body)) != NULL ||
	    (err = store_begin(store)) != NULL)
		goto out;
	if ((err = store_prepare(store, &st, "INSERT INTO cycle_agent (cycle, "
	    "task, cells, started) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO "
	    "NOTHING")) == NULL) {
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, task);
		store_bind_json(st, 3, cells);
		store_bind_text(st, 4, now);
		err = store_step_done(store, st, "record an agent task");
	}
	if (err == NULL && sqlite3_changes(store_db(store)) == 1) {
		*fresh = 1;
		err = journal_append(store, "cycle.agent", task, body, NULL);
	}
	err = store_tx_end(store, err);
out:
	json_decref(body);
	return err;
}

struct werr *
store_cycle_agent_end(struct store *store, const char *id, const char *task,
    int64_t agent_run, const char *state, int64_t review)
{
	json_t *body = json_pack("{s:s, s:I, s:s, s:I}", "task", task,
	    "agent_run", (json_int_t)agent_run, "state", state, "review",
	    (json_int_t)review);
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = journal_check_entry("cycle.agent.done", task, body)) != NULL ||
	    (err = store_begin(store)) != NULL) {
		json_decref(body);
		return err;
	}
	if ((err = store_prepare(store, &st, "UPDATE cycle_agent SET "
	    "agent_run = ?3, state = ?4, review = ?5 WHERE cycle = ?1 AND "
	    "task = ?2")) == NULL) {
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, task);
		if (agent_run > 0)
			sqlite3_bind_int64(st, 3, agent_run);
		else
			sqlite3_bind_null(st, 3);
		store_bind_text(st, 4, state);
		if (review > 0)
			sqlite3_bind_int64(st, 5, review);
		else
			sqlite3_bind_null(st, 5);
		err = store_step_done(store, st, "record an agent task's end");
	}
	if (err == NULL)
		err = journal_append(store, "cycle.agent.done", task, body, NULL);
	json_decref(body);
	return store_tx_end(store, err);
}

struct werr *
store_cycle_agent_tasks(struct store *store, const char *id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT task, cells, started, "
	    "agent_run, state, review FROM cycle_agent WHERE cycle = ? "
	    "ORDER BY started, task")) != NULL)
		return err;
	store_bind_text(st, 1, id);
	return store_rows_json(out, store, st, cycle_json_cols, "read cycles");
}

/* One integer or real of a one-row query with ?1 bound to text. */
static struct werr *
scalar(struct store *store, const char *sql, const char *arg, double *out)
{
	sqlite3_stmt *st;
	struct werr *err;

	*out = -1;
	if ((err = store_prepare(store, &st, sql)) != NULL)
		return err;
	store_bind_text(st, 1, arg);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		*out = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return NULL;
}

struct werr *
store_cycle_run_now(struct store *store, const char *kind,
    const char *run_id, json_t **out)
{
	int campaign = strcmp(kind, "campaign") == 0;
	sqlite3_stmt *st;
	struct werr *err;
	json_t *grid = NULL, *row = NULL;
	double done, mean, n;
	char *sql;

	*out = NULL;
	sql = xasprintf("SELECT grid FROM %s_runs WHERE run_id = ?1",
	    campaign ? "campaign" : "fidelity");
	err = store_prepare(store, &st, sql);
	free(sql);
	if (err != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		grid = json_loads((const char *)sqlite3_column_text(st, 0), 0,
		    NULL);
	sqlite3_finalize(st);
	if (grid == NULL)
		return NULL;	/* not begun */
	sql = xasprintf("SELECT count(*) FROM %s WHERE run_id = ?1 AND state "
	    "= 'done'", campaign ? "campaign_sweeps" : "fidelity_cells");
	err = scalar(store, sql, run_id, &done);
	free(sql);
	if (err != NULL)
		goto out;
	sql = xasprintf("SELECT avg((julianday(finished) - julianday(started)) "
	    "* 86400) FROM %s WHERE run_id = ?1 AND state = 'done'",
	    campaign ? "campaign_sweeps" : "fidelity_cells");
	err = scalar(store, sql, run_id, &mean);
	free(sql);
	if (err != NULL)
		goto out;
	sql = campaign ? xstrdup("SELECT id, engine, model, split, "
	    "concurrency, started, total, (julianday('now') - "
	    "julianday(started)) * 86400 FROM campaign_sweeps WHERE run_id = "
	    "?1 AND state = 'running' ORDER BY seq DESC LIMIT 1") :
	    xstrdup("SELECT id, engine, model, shots, NULL, started, total, "
	    "(julianday('now') - julianday(started)) * 86400 FROM "
	    "fidelity_cells WHERE run_id = ?1 AND state = 'running' ORDER BY "
	    "seq DESC LIMIT 1");
	err = store_prepare(store, &st, sql);
	free(sql);
	if (err != NULL)
		goto out;
	store_bind_text(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		row = campaign ? json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:f}",
		    "engine", sqlite3_column_text(st, 1), "model",
		    sqlite3_column_text(st, 2), "split",
		    sqlite3_column_text(st, 3), "concurrency",
		    (json_int_t)sqlite3_column_int64(st, 4), "started",
		    sqlite3_column_text(st, 5), "total",
		    (json_int_t)sqlite3_column_int64(st, 6), "elapsed_s",
		    sqlite3_column_double(st, 7)) :
		    json_pack("{s:s, s:s, s:I, s:s, s:I, s:f}", "engine",
		    sqlite3_column_text(st, 1), "model",
		    sqlite3_column_text(st, 2), "shots",
		    (json_int_t)sqlite3_column_int64(st, 3), "started",
		    sqlite3_column_text(st, 5), "total",
		    (json_int_t)sqlite3_column_int64(st, 6), "elapsed_s",
		    sqlite3_column_double(st, 7));
		json_object_set_new(row, "id", json_integer(
		    sqlite3_column_int64(st, 0)));
	}
	sqlite3_finalize(st);
	if (row != NULL) {
		sql = xasprintf("SELECT count(*) FROM %s WHERE %s = %lld%s",
		    campaign ? "campaign_requests" : "fidelity_predictions",
		    campaign ? "sweep_id" : "cell_id", (long long)
		    json_integer_value(json_object_get(row, "id")),
		    campaign ? " AND warmup = 0 AND ?1 IS NOT NULL" :
		    " AND ?1 IS NOT NULL");
		err = scalar(store, sql, run_id, &n);
		free(sql);
		json_object_set_new(row, "done", json_integer((json_int_t)
		    (n > 0 ? n : 0)));
		json_object_del(row, "id");
	}
	*out = json_pack("{s:I, s:I, s:o?, s:o}", "points", (json_int_t)
	    json_array_size(json_object_get(grid, "points")), "done",
	    (json_int_t)done, "mean_s", mean >= 0 ? json_real(mean) : NULL,
	    "current", row != NULL ? row : json_null());
	row = NULL;
out:
	json_decref(grid);
	json_decref(row);
	return err;
}
