/*
 * store-results.h - the tables of the results area: fidelity runs, their
 * cells (engine x model x shots) and per-item predictions, and the record
 * of each gate evaluation. The one place that knows their SQL.
 *
 * A fidelity run mirrors a campaign run: an explicit id, the machine it
 * ran on, its grid and provenance; a cell is 'running' from its start
 * until it is 'done', when its predictions and scores land in one
 * transaction with the journal entry. On resume a cell left 'running' is
 * discarded and run again. An imported reference is a run of kind
 * 'imported'; a run becomes the reference when marked (newest mark wins).
 * Every state change carries its journal entry. Never prints.
 */
#ifndef WARDEN_STORE_RESULTS_H
#define WARDEN_STORE_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

/* The schema: one migration of store-migrations.c's list. */
#define STORE_RESULTS_SCHEMA \
	"CREATE TABLE fidelity_runs (" \
	"  run_id TEXT PRIMARY KEY," \
	"  created TEXT NOT NULL," \
	"  machine TEXT NOT NULL," \
	"  kind TEXT NOT NULL CHECK (kind IN ('measured','imported'))," \
	"  state TEXT NOT NULL CHECK (state IN ('running','done'))," \
	"  finished TEXT," \
	"  task TEXT NOT NULL," \
	"  grid TEXT NOT NULL," \
	"  provenance TEXT NOT NULL," \
	"  reference_marked TEXT," \
	"  reference_engine TEXT" \
	");" \
	"CREATE TABLE fidelity_cells (" \
	"  id INTEGER PRIMARY KEY AUTOINCREMENT," \
	"  run_id TEXT NOT NULL REFERENCES fidelity_runs(run_id)," \
	"  seq INTEGER NOT NULL," \
	"  engine TEXT NOT NULL, model TEXT NOT NULL," \
	"  shots INTEGER NOT NULL," \
	"  state TEXT NOT NULL CHECK (state IN ('running','done'))," \
	"  outcome TEXT, detail TEXT, served_model TEXT," \
	"  started TEXT NOT NULL, finished TEXT," \
	"  total INTEGER NOT NULL," \
	"  scores TEXT," \
	"  provenance TEXT NOT NULL," \
	"  UNIQUE (run_id, seq)" \
	");" \
	"CREATE TABLE fidelity_predictions (" \
	"  cell_id INTEGER NOT NULL" \
	"    REFERENCES fidelity_cells(id) ON DELETE CASCADE," \
	"  idx INTEGER NOT NULL," \
	"  item_id TEXT NOT NULL," \
	"  gold TEXT NOT NULL," \
	"  predicted TEXT NOT NULL," \
	"  parse TEXT NOT NULL," \
	"  outcome TEXT NOT NULL," \
	"  answer TEXT, error TEXT," \
	"  PRIMARY KEY (cell_id, idx)" \
	");" \
	"CREATE TABLE gate_results (" \
	"  id INTEGER PRIMARY KEY," \
	"  created TEXT NOT NULL," \
	"  results_sha256 TEXT NOT NULL," \
	"  runs TEXT NOT NULL," \
	"  result TEXT NOT NULL" \
	");" \
	"CREATE INDEX gate_results_by_digest ON gate_results(results_sha256, id);" \
	"CREATE TABLE publishes (" \
	"  snapshot_id TEXT PRIMARY KEY," \
	"  published TEXT NOT NULL," \
	"  commit_id TEXT NOT NULL," \
	"  measured_commit TEXT NOT NULL," \
	"  archive_sha256 TEXT NOT NULL," \
	"  results_sha256 TEXT NOT NULL," \
	"  tag TEXT NOT NULL" \
	");"

/* ---- fidelity runs ---- */

/* A new run, 'running'; an existing run_id is an error (WEXIT_INPUT).
 * kind is "measured" or "imported"; task, grid and provenance are
 * borrowed. */
struct werr *store_fidelity_run_create(struct store *store,
    const char *run_id, const char *machine, const char *kind, json_t *task,
    json_t *grid, json_t *provenance);
/* Every column of run_id (task, grid, provenance parsed), or *row NULL. */
struct werr *store_fidelity_run_get(struct store *store, const char *run_id,
    json_t **row);
/* The newest run of machine still 'running' (*run_id NULL if none). */
struct werr *store_fidelity_run_unfinished(struct store *store,
    const char *machine, char **run_id);
struct werr *store_fidelity_run_finish(struct store *store,
    const char *run_id);
/* Every run, oldest first, without grid and provenance; "reference" is
 * 1 for the current reference. */
struct werr *store_fidelity_runs(struct store *store, json_t **out);
/* The newest done measured run (*run_id NULL if none). */
struct werr *store_fidelity_run_latest(struct store *store, char **run_id);
/* Mark the cells of engine in a done run as the reference (journaled);
 * the newest mark wins. engine may be NULL when the run has cells of one
 * engine only. */
struct werr *store_fidelity_mark_reference(struct store *store,
    const char *run_id, const char *engine);
/* The reference run and engine (*run_id NULL if none is marked). */
struct werr *store_fidelity_reference(struct store *store, char **run_id,
    char **engine);

/* Discard the cells of run_id left 'running' (and their rows); *n counts
 * them. One transaction, a journal entry per cell. */
struct werr *store_fidelity_discard_unfinished(struct store *store,
    const char *run_id, int *n);
struct werr *store_fidelity_cell_done(struct store *store, const char *run_id,
    int seq, int *done);

struct store_fidelity_cell_key {
	const char *run_id;
	int seq;
	const char *engine, *model;
	int shots;
	size_t total;
	json_t *provenance;	/* borrowed */
};
struct werr *store_fidelity_cell_begin(struct store *store,
    const struct store_fidelity_cell_key *key, int64_t *cell_id);

/* One item's prediction; strings are copied into the row. */
struct store_fidelity_prediction {
	const char *item_id, *gold;
	const char *predicted;		/* a label, or "none" */
	const char *parse;		/* fidelity_parse_name() */
	const char *outcome;		/* loadgen_outcome_name(), or
					   "not_run" */
	const char *answer;		/* the reply text (cut), may be NULL */
	const char *error;		/* may be NULL */
};

struct store_fidelity_cell_result {
	const char *outcome;		/* complete, server_crash, ... */
	const char *detail;
	const char *served_model;
	json_t *scores;			/* borrowed */
	const char *engine_argv;	/* into provenance; may be NULL */
	const struct store_fidelity_prediction *predictions;
	size_t n;
};

/* Predictions, scores and 'done' with a journal entry, in one
 * transaction. */
struct werr *store_fidelity_cell_finish(struct store *store, int64_t cell_id,
    const struct store_fidelity_cell_result *res);

/* The done cells of run_id in seq order: their columns, scores and
 * provenance parsed, and with_predictions: "predictions" as an array of
 * [item_id, gold, predicted, parse, outcome] in item order. */
struct werr *store_fidelity_cells_json(struct store *store, const char *run_id,
    int with_predictions, json_t **out);

/* ---- gate records ---- */

/* Record a gate evaluation of the result set with digest results_sha256
 * (runs: the run ids it covered; result: the gate JSON), journaled. */
struct werr *store_gate_record(struct store *store, const char *results_sha256,
    json_t *runs, json_t *result, int64_t *id);
/* The newest gate record of that digest (any digest when NULL), as
 * {"id", "created", "results_sha256", "runs", "result"}; NULL if none. */
struct werr *store_gate_find(struct store *store, const char *results_sha256,
    json_t **row);

/* ---- publishes ---- */

/* Record a landed publish (inside the caller's transaction: official.c's
 * outcome). publish: {"snapshot", "measured_commit", "sha256",
 * "results_sha256", "tag"}. Recording one twice is a no-op. */
struct werr *store_publish_record(struct store *store, const char *commit,
    const json_t *publish);
/* Every publish, newest first: {"snapshot_id", "commit_id", ...}. */
struct werr *store_publishes(struct store *store, json_t **out);

#endif
