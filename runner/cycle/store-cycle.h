/*
 * store-cycle.h - the cycle's tables: one row per cycle, one per step of
 * each round, one per agent task the cycle started. The one place that
 * knows their SQL.
 *
 * A cycle is 'running' from its start until it is 'waiting' (for the
 * review of the fixes it queued) or 'done'; its steps are rows that are
 * 'running' until they end 'done', 'skipped' or 'failed', so a cycle
 * killed at any moment continues at the first step of its round that is
 * not over. An agent task is recorded before the agent starts, so the
 * agent runs at most once per task and cycle, even across a kill. Every
 * change lands in one transaction with its journal entry. Never prints.
 */
#ifndef WARDEN_STORE_CYCLE_H
#define WARDEN_STORE_CYCLE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

#define STORE_CYCLE_SCHEMA \
	"CREATE TABLE cycles (" \
	"  id TEXT PRIMARY KEY," \
	"  seq INTEGER NOT NULL UNIQUE," \
	"  created TEXT NOT NULL," \
	"  finished TEXT," \
	"  roster TEXT NOT NULL," \
	"  machine TEXT NOT NULL," \
	"  state TEXT NOT NULL" \
	"    CHECK (state IN ('running','waiting','done'))," \
	"  round INTEGER NOT NULL DEFAULT 1," \
	"  pid INTEGER," \
	"  exit_code INTEGER," \
	"  journal TEXT" \
	");" \
	"CREATE TABLE cycle_steps (" \
	"  id INTEGER PRIMARY KEY," \
	"  cycle TEXT NOT NULL REFERENCES cycles(id)," \
	"  round INTEGER NOT NULL," \
	"  step TEXT NOT NULL," \
	"  state TEXT NOT NULL" \
	"    CHECK (state IN ('running','done','skipped','failed'))," \
	"  started TEXT NOT NULL," \
	"  finished TEXT," \
	"  result TEXT," \
	"  UNIQUE (cycle, round, step)" \
	");" \
	"CREATE TABLE cycle_agent (" \
	"  cycle TEXT NOT NULL REFERENCES cycles(id)," \
	"  task TEXT NOT NULL," \
	"  cells TEXT NOT NULL," \
	"  started TEXT NOT NULL," \
	"  agent_run INTEGER," \
	"  state TEXT," \
	"  review INTEGER," \
	"  PRIMARY KEY (cycle, task)" \
	");"

/* A new cycle, 'running', round 1, with its `cycle.started` entry. An
 * existing id is an input error. */
struct werr *store_cycle_create(struct store *store, const char *id,
    const char *roster, const char *machine, long pid);
/* The cycle's row ({"id", "seq", "created", "finished", "roster",
 * "machine", "state", "round", "pid", "exit_code", "journal" (parsed or
 * null)}), or *out NULL when there is none. */
struct werr *store_cycle_get(struct store *store, const char *id,
    json_t **out);
/* The newest cycle, or *out NULL. */
struct werr *store_cycle_latest(struct store *store, json_t **out);
/* The newest cycle before id that has a journal, or *out NULL. */
struct werr *store_cycle_previous(struct store *store, const char *id,
    json_t **out);
/* Every cycle, newest first, without journals. */
struct werr *store_cycles(struct store *store, json_t **out);

/* A process takes the cycle over (its pid), journaled `cycle.resumed`
 * with why. */
struct werr *store_cycle_claim(struct store *store, const char *id, long pid,
    const char *why);
/* The cycle goes on to round (after waiting), journaled
 * `cycle.round`, with why. */
struct werr *store_cycle_round(struct store *store, const char *id,
    int round, const char *why);

/* A step starts (or starts again after a kill): its row is 'running'. */
struct werr *store_cycle_step_begin(struct store *store, const char *id,
    int round, const char *step);
/* A step ends: state 'done', 'skipped' or 'failed', its result (borrowed,
 * may be NULL), journaled `cycle.step`. */
struct werr *store_cycle_step_end(struct store *store, const char *id,
    int round, const char *step, const char *state, json_t *result);
/* The steps of a cycle in the order they began: {"round", "step",
 * "state", "started", "finished", "result"}. */
struct werr *store_cycle_steps(struct store *store, const char *id,
    json_t **out);

/*
 * The journal step: the cycle's structured journal (borrowed) is stored
 * with the cycle, the step 'journal' of round ends 'done', and the whole
 * journal is journaled as `cycle.journal` -- one transaction. The cycle's
 * exit code is the journal's "exit".
 */
struct werr *store_cycle_journal(struct store *store, const char *id,
    int round, json_t *journal);
/* The export step ended: step 'export' of round 'done' with result
 * (borrowed), and the cycle 'waiting' or 'done' with its exit code,
 * journaled `cycle.finished` or `cycle.waiting`. */
struct werr *store_cycle_end(struct store *store, const char *id, int round,
    json_t *result, const char *state, int exit_code);

/* Before the agent runs on task ("engine:E", "incident:N") for cells (a
 * JSON array, borrowed): its row, journaled `cycle.agent`. *fresh is 0
 * when the cycle already has the task (the agent ran or was started). */
struct werr *store_cycle_agent_begin(struct store *store, const char *id,
    const char *task, json_t *cells, int *fresh);
/* What came of it: the agent run's id (0: none), state and review item
 * (0: none). */
struct werr *store_cycle_agent_end(struct store *store, const char *id,
    const char *task, int64_t agent_run, const char *state, int64_t review);
/* The cycle's agent tasks: {"task", "cells", "started", "agent_run",
 * "state", "review"}. */
struct werr *store_cycle_agent_tasks(struct store *store, const char *id,
    json_t **out);

/*
 * For `warden status`: where the campaign or fidelity (kind) run run_id
 * stands: {"points", "done", "mean_s" (of a done point, or null),
 * "current": {"engine", "model", "split" or "shots", "concurrency",
 * "started", "elapsed_s", "total", "done"} or null}; *out NULL when the
 * run has not begun. Reads only.
 */
struct werr *store_cycle_run_now(struct store *store, const char *kind,
    const char *run_id, json_t **out);

#endif
