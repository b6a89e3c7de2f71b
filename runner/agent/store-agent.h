/*
 * store-agent.h - the agent runs' table (a migration of store-migrations.c's list)
 * and the campaign rows a task is built from. The one place that knows
 * the agent's SQL.
 *
 * These functions only read and write rows: they never begin, commit or
 * roll back a transaction (run.c does, so a row and its journal entry land
 * together), never judge a run and never print.
 */
#ifndef WARDEN_AGENT_STORE_AGENT_H
#define WARDEN_AGENT_STORE_AGENT_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

/*
 * One row per `warden agent run`: inserted 'running' before the worktree
 * and its branch exist (so a kill -9 leaves a row naming them), finished
 * with its outcome. record holds the whole run as JSON (argv, exit,
 * duration, sandbox, diffstat, gate, smoke, reasons).
 */
#define STORE_AGENT_SCHEMA \
	"CREATE TABLE agent_runs (" \
	"  id INTEGER PRIMARY KEY," \
	"  created TEXT NOT NULL," \
	"  finished TEXT," \
	"  pid INTEGER NOT NULL," \
	"  state TEXT NOT NULL CHECK (state IN ('running', 'queued'," \
	"    'rejected', 'quarantined', 'no-change', 'agent-failed'," \
	"    'refused', 'error', 'interrupted'))," \
	"  task_kind TEXT NOT NULL CHECK (task_kind IN ('engine', 'incident'))," \
	"  task_ref TEXT NOT NULL," \
	"  base_commit TEXT NOT NULL," \
	"  branch TEXT NOT NULL," \
	"  worktree TEXT NOT NULL," \
	"  log_path TEXT NOT NULL," \
	"  sandbox TEXT NOT NULL," \
	"  review_id INTEGER REFERENCES reviews(id)," \
	"  record TEXT NOT NULL" \
	");" \
	"CREATE INDEX agent_runs_by_state ON agent_runs(state, id);"

struct store_agent_new {
	const char *created;		/* UTC ISO time */
	long pid;
	const char *task_kind, *task_ref;
	const char *base_commit;
	const char *sandbox;		/* what will be in force */
	json_t *record;			/* borrowed */
};

/* The id the next run will get (for a dry run's paths). */
struct werr *store_agent_next_id(struct store *store, int64_t *id);
/* Insert a 'running' row; branch, worktree and log path are derived by
 * the caller from the id and set with store_agent_set_paths. */
struct werr *store_agent_insert(struct store *store,
    const struct store_agent_new *r, int64_t *id_out);
struct werr *store_agent_set_paths(struct store *store, int64_t id,
    const char *branch, const char *worktree, const char *log_path);
/* Finish run id: its state, review (0: none) and record. */
struct werr *store_agent_finish(struct store *store, int64_t id,
    const char *state, const char *finished, int64_t review_id,
    json_t *record);
/* Rows left 'running' by a process that is gone become 'interrupted';
 * their ids go to *ids (a JSON array, new reference). */
struct werr *store_agent_mark_interrupted(struct store *store,
    const char *finished, json_t **ids);

/* Every run (newest last) without its record; or one run with it
 * (*out NULL when there is none). */
struct werr *store_agent_list(struct store *store, json_t **out);
struct werr *store_agent_get(struct store *store, int64_t id, json_t **out);

/* The done sweeps of engine in the newest campaign run that has it (an
 * empty array when none), with summary and provenance parsed. */
struct werr *store_agent_engine_sweeps(struct store *store,
    const char *engine, json_t **out);
/* The provenance of the newest complete sweep of engine outside run_id
 * (NULL when none). */
struct werr *store_agent_last_good(struct store *store, const char *engine,
    const char *run_id, json_t **provenance);

#endif
