/*
 * store-agent.c - the agent runs' rows, and the campaign rows an
 * engine's task is built from. See store-agent.h.
 *
 * Plain statements run inside whatever transaction the caller holds.
 * Must never begin or end a transaction, write the journal, or decide
 * what a run's outcome means.
 */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <sqlite3.h>

#include "store-agent.h"
#include "store-campaign.h"
#include "store-json.h"
#include "util.h"

#define AGENT_COLUMNS "id, created, finished, pid, state, task_kind, " \
	"task_ref, base_commit, branch, worktree, log_path, sandbox, review_id"

static const char *const agent_json_cols[] = { "record", NULL };

struct werr *
store_agent_next_id(struct store *store, int64_t *id)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT coalesce(max(id), 0) + 1 "
	    "FROM agent_runs")) != NULL)
		return err;
	if (sqlite3_step(st) == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else
		err = store_error(store, "read agent runs");
	sqlite3_finalize(st);
	return err;
}

struct werr *
store_agent_insert(struct store *store, const struct store_agent_new *r,
    int64_t *id_out)
{
	char *record = json_dumps(r->record, JSON_COMPACT);
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "INSERT INTO agent_runs (created, "
	    "pid, state, task_kind, task_ref, base_commit, branch, worktree, "
	    "log_path, sandbox, record) VALUES (?, ?, 'running', ?, ?, ?, '', "
	    "'', '', ?, ?)")) != NULL)
		goto out;
	store_bind_text(st, 1, r->created);
	sqlite3_bind_int64(st, 2, r->pid);
	store_bind_text(st, 3, r->task_kind);
	store_bind_text(st, 4, r->task_ref);
	store_bind_text(st, 5, r->base_commit);
	store_bind_text(st, 6, r->sandbox);
	store_bind_text(st, 7, record);
	if ((err = store_step_done(store, st, "insert agent run")) == NULL)
		*id_out = sqlite3_last_insert_rowid(store_db(store));
out:
	free(record);
	return err;
}

struct werr *
store_agent_set_paths(struct store *store, int64_t id, const char *branch,
    const char *worktree, const char *log_path)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "UPDATE agent_runs SET branch = ?, "
	    "worktree = ?, log_path = ? WHERE id = ?")) != NULL)
		return err;
	store_bind_text(st, 1, branch);
	store_bind_text(st, 2, worktree);
	store_bind_text(st, 3, log_path);
	sqlite3_bind_int64(st, 4, id);
	return store_step_done(store, st, "update agent run");
}

struct werr *
store_agent_finish(struct store *store, int64_t id, const char *state,
    const char *finished, int64_t review_id, json_t *record)
{
	char *text = json_dumps(record, JSON_COMPACT);
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "UPDATE agent_runs SET state = ?, "
	    "finished = ?, review_id = ?, record = ? WHERE id = ?")) != NULL)
		goto out;
	store_bind_text(st, 1, state);
	store_bind_text(st, 2, finished);
	if (review_id > 0)
		sqlite3_bind_int64(st, 3, review_id);
	else
		sqlite3_bind_null(st, 3);
	store_bind_text(st, 4, text);
	sqlite3_bind_int64(st, 5, id);
	err = store_step_done(store, st, "finish agent run");
out:
	free(text);
	return err;
}

static int
pid_alive(long pid)
{
	if (pid <= 0)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

struct werr *
store_agent_mark_interrupted(struct store *store, const char *finished,
    json_t **ids)
{
	sqlite3_stmt *st, *up;
	struct werr *err;
	int rc;

	*ids = json_array();
	if ((err = store_prepare(store, &st, "SELECT id, pid FROM agent_runs "
	    "WHERE state = 'running'")) != NULL)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (pid_alive((long)sqlite3_column_int64(st, 1)))
			continue;
		if ((err = store_prepare(store, &up, "UPDATE agent_runs SET "
		    "state = 'interrupted', finished = ? WHERE id = ?")) != NULL)
			break;
		store_bind_text(up, 1, finished);
		sqlite3_bind_int64(up, 2, id);
		if ((err = store_step_done(store, up, "mark agent run")) != NULL)
			break;
		json_array_append_new(*ids, json_integer(id));
	}
	sqlite3_finalize(st);
	if (err == NULL && rc != SQLITE_DONE && rc != SQLITE_ROW)
		err = store_error(store, "read agent runs");
	return err;
}

struct werr *
store_agent_list(struct store *store, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	/* with its review's status now: a queued run whose fix was merged
	 * says so */
	if ((err = store_prepare(store, &st, "SELECT " AGENT_COLUMNS
	    ", (SELECT r.status FROM reviews r WHERE r.id = "
	    "agent_runs.review_id) AS review_status FROM agent_runs "
	    "ORDER BY id")) != NULL)
		return err;
	return store_rows_json(out, store, st, agent_json_cols,
	    "read agent runs");
}

struct werr *
store_agent_get(struct store *store, int64_t id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT " AGENT_COLUMNS
	    ", record FROM agent_runs WHERE id = ?")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	return store_row_json(out, store, st, agent_json_cols,
	    "read agent runs");
}

struct werr *
store_agent_engine_sweeps(struct store *store, const char *engine,
    json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *all = NULL, *s;
	char *run_id = NULL;
	size_t i;

	*out = json_array();
	if ((err = store_campaign_ensure(store)) != NULL ||
	    (err = store_prepare(store, &st, "SELECT s.run_id FROM "
	    "campaign_sweeps s JOIN campaign_runs r ON r.run_id = s.run_id "
	    "WHERE s.engine = ? AND s.state = 'done' "
	    "AND " STORE_CAMPAIGN_MEASURED_RUN " "
	    "AND s.run_id NOT LIKE 'agent-%' ORDER BY s.id DESC LIMIT 1")) != NULL)
		return err;
	store_bind_text(st, 1, engine);
	if (sqlite3_step(st) == SQLITE_ROW)
		run_id = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (run_id == NULL)
		return NULL;
	if ((err = store_campaign_sweeps_json(store, run_id, &all)) == NULL)
		json_array_foreach(all, i, s)
			if (strcmp(json_string_value(json_object_get(s,
			    "engine")), engine) == 0)
				json_array_append(*out, s);
	json_decref(all);
	free(run_id);
	return err;
}

struct werr *
store_agent_last_good(struct store *store, const char *engine,
    const char *run_id, json_t **provenance)
{
	sqlite3_stmt *st;
	struct werr *err;

	*provenance = NULL;
	if ((err = store_prepare(store, &st, "SELECT provenance FROM "
	    "campaign_sweeps WHERE engine = ? AND outcome = 'complete' AND "
	    "run_id <> ? AND run_id NOT LIKE 'agent-%' ORDER BY id DESC "
	    "LIMIT 1")) != NULL)
		return err;
	store_bind_text(st, 1, engine);
	store_bind_text(st, 2, run_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		*provenance = json_loads((const char *)sqlite3_column_text(st,
		    0), 0, NULL);
	sqlite3_finalize(st);
	return NULL;
}
