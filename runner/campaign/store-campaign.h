/*
 * store-campaign.h - the campaign's tables: runs, sweeps, requests and
 * memory samples. The one place that knows the campaign's SQL.
 *
 * A run is named by an explicit id and carries the machine fingerprint it
 * ran on; every row below it hangs off its run id, so nothing a run
 * writes can touch another run's rows. A sweep is one (engine, model,
 * split, concurrency) point of the grid at position seq; it is 'running'
 * from its start until it is 'done'. On resume, a sweep left 'running' by
 * a killed warden is discarded with its requests and samples (in one
 * transaction with a journal entry) and run again, so no row is ever
 * duplicated. Every request row is written the moment the request ends.
 * Never prints.
 */
#ifndef WARDEN_STORE_CAMPAIGN_H
#define WARDEN_STORE_CAMPAIGN_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "loadgen.h"
#include "memsample.h"
#include "store.h"

/*
 * The schema: migration 3 of store-migrations.c's list. Idempotent (IF NOT EXISTS),
 * so store_campaign_ensure() can also create it on a database migrated
 * before the slot existed.
 */
#define STORE_CAMPAIGN_SCHEMA \
	"CREATE TABLE IF NOT EXISTS campaign_runs (" \
	"  run_id TEXT PRIMARY KEY," \
	"  created TEXT NOT NULL," \
	"  machine TEXT NOT NULL," \
	"  state TEXT NOT NULL CHECK (state IN ('running','done'))," \
	"  finished TEXT," \
	"  grid TEXT NOT NULL," \
	"  provenance TEXT NOT NULL" \
	");" \
	"CREATE TABLE IF NOT EXISTS campaign_sweeps (" \
	"  id INTEGER PRIMARY KEY AUTOINCREMENT," \
	"  run_id TEXT NOT NULL REFERENCES campaign_runs(run_id)," \
	"  seq INTEGER NOT NULL," \
	"  engine TEXT NOT NULL, model TEXT NOT NULL, split TEXT NOT NULL," \
	"  concurrency INTEGER NOT NULL," \
	"  attempt INTEGER NOT NULL," \
	"  state TEXT NOT NULL CHECK (state IN ('running','done'))," \
	"  outcome TEXT, detail TEXT, served_model TEXT," \
	"  started TEXT NOT NULL, finished TEXT," \
	"  total INTEGER NOT NULL, completed INTEGER, failed INTEGER," \
	"  summary TEXT," \
	"  peak_system_bytes INTEGER, peak_engine_bytes INTEGER," \
	"  system_total_bytes INTEGER, gpu_hint_bytes INTEGER," \
	"  log_path TEXT, provenance TEXT NOT NULL," \
	"  UNIQUE (run_id, seq)" \
	");" \
	"CREATE TABLE IF NOT EXISTS campaign_requests (" \
	"  sweep_id INTEGER NOT NULL" \
	"    REFERENCES campaign_sweeps(id) ON DELETE CASCADE," \
	"  warmup INTEGER NOT NULL, idx INTEGER NOT NULL," \
	"  prompt_id TEXT NOT NULL," \
	"  submit_ns INTEGER NOT NULL, first_token_ns INTEGER," \
	"  last_token_ns INTEGER, end_ns INTEGER," \
	"  submit_wall TEXT NOT NULL," \
	"  ttft_ms REAL, e2el_ms REAL," \
	"  chunks INTEGER NOT NULL, token_events INTEGER NOT NULL," \
	"  coalesced_events INTEGER NOT NULL," \
	"  max_events_per_read INTEGER NOT NULL," \
	"  prompt_tokens INTEGER, completion_tokens INTEGER," \
	"  usage_source TEXT NOT NULL," \
	"  content_bytes INTEGER NOT NULL, reasoning_bytes INTEGER NOT NULL," \
	"  tool_calls INTEGER NOT NULL, finish_reason TEXT," \
	"  http_status INTEGER, outcome TEXT NOT NULL, error TEXT," \
	"  PRIMARY KEY (sweep_id, warmup, idx)" \
	");" \
	"CREATE TABLE IF NOT EXISTS campaign_memory (" \
	"  sweep_id INTEGER NOT NULL" \
	"    REFERENCES campaign_sweeps(id) ON DELETE CASCADE," \
	"  t_ns INTEGER NOT NULL," \
	"  system_used_bytes INTEGER NOT NULL," \
	"  engine_bytes INTEGER NOT NULL," \
	"  engine_procs INTEGER NOT NULL," \
	"  PRIMARY KEY (sweep_id, t_ns)" \
	");" \
	"CREATE INDEX IF NOT EXISTS campaign_sweeps_by_point" \
	"  ON campaign_sweeps(engine, model, split, concurrency);"

/*
 * Migration 5: per request, libcurl's connect time (connect_ms, NULL
 * when it never connected), whether the request opened its connection
 * (new_connection), and the gaps between its token events (itl_ns, a
 * JSON array of nanoseconds, the per-request ITLs of vllm's "itls").
 * The campaign tables are created first where they are missing.
 */
#define STORE_CAMPAIGN_SCHEMA_5 \
	"ALTER TABLE campaign_requests ADD COLUMN connect_ms REAL;" \
	"ALTER TABLE campaign_requests ADD COLUMN new_connection INTEGER;" \
	"ALTER TABLE campaign_requests ADD COLUMN itl_ns TEXT;"

/* Create the tables (all migrations of the campaign) if this database
 * lacks them. */
/* Seconds the finished sweeps of engine in run_id took (from their UTC
 * start and finish records), so the engine wall cap holds across --resume. */
struct werr *store_campaign_engine_seconds(struct store *store,
    const char *run_id, const char *engine, double *seconds);
struct werr *store_campaign_ensure(struct store *store);

/* A new run; an existing run_id is an error (WEXIT_INPUT). grid and
 * provenance are borrowed. */
struct werr *store_campaign_run_create(struct store *store,
    const char *run_id, const char *machine, json_t *grid,
    json_t *provenance);
/* Look a run up: *found 0 when absent; otherwise machine, state and grid
 * are set (caller frees / json_decref). Any out pointer may be NULL. */
struct werr *store_campaign_run_get(struct store *store, const char *run_id,
    int *found, char **machine, char **state, json_t **grid);
/* The newest run of machine still 'running' (*run_id NULL if none). */
struct werr *store_campaign_run_unfinished(struct store *store,
    const char *machine, char **run_id);
struct werr *store_campaign_run_finish(struct store *store,
    const char *run_id);

/* Discard every sweep of run_id left 'running' (and its rows); count
 * them in *n. One transaction with one journal entry per sweep. */
struct werr *store_campaign_discard_unfinished(struct store *store,
    const char *run_id, int *n);
/* Is sweep seq of run_id done? */
struct werr *store_campaign_sweep_done(struct store *store,
    const char *run_id, int seq, int *done);

struct store_sweep_key {
	const char *run_id;
	int seq;
	const char *engine, *model, *split;
	unsigned concurrency;
	size_t total;		/* timed requests */
	const char *log_path;
	json_t *provenance;	/* borrowed */
};

struct werr *store_campaign_sweep_begin(struct store *store,
    const struct store_sweep_key *key, int64_t *sweep_id);

/* One request row, written now. prompt_id names the workload line. */
struct werr *store_campaign_request_add(struct store *store, int64_t sweep_id,
    const struct loadgen_record *r, const char *prompt_id);
/* n rows in one transaction (the rows of requests that ended together). */
struct werr *store_campaign_requests_add(struct store *store, int64_t sweep_id,
    const struct loadgen_record *const *recs, const char *const *prompt_ids,
    size_t n);

/*
 * The request writer: a thread that writes request rows as they come,
 * so the load generator's event loop never waits on a commit. A row is
 * committed at most 100 ms after it is pushed, with the rows pushed
 * meanwhile. Only the writer uses the store until it is finished.
 */
struct store_campaign_writer;

struct werr *store_campaign_writer_start(struct store_campaign_writer **out,
    struct store *store, int64_t sweep_id);
/* Queue a row (copied; prompt_id must outlive the writer). Never blocks
 * on the database. */
void store_campaign_writer_push(struct store_campaign_writer *w,
    const struct loadgen_record *r, const char *prompt_id);
/* Write what is queued, stop and free the writer; the first error. */
struct werr *store_campaign_writer_finish(struct store_campaign_writer *w);

struct store_sweep_result {
	const char *outcome;	/* "complete", "server_crash", "hang", ... */
	const char *detail;	/* may be NULL */
	const char *served_model;
	size_t completed, failed;
	json_t *summary;	/* borrowed; may be NULL */
	const struct memsampler *memory;	/* may be NULL */
	uint64_t gpu_hint;
	const char *log_path;	/* the engine's log; NULL: none started */
	const char *engine_argv;	/* its command line, into provenance */
	const json_t *load;	/* machine_load_span(), into provenance as
				   "machine_load" (and a "warning" in the
				   journal entry when not quiet); may be
				   NULL */
};

/* Write the memory trace, the summary and 'done', with a journal entry,
 * in one transaction. */
struct werr *store_campaign_sweep_finish(struct store *store,
    int64_t sweep_id, const struct store_sweep_result *res);

/* Every done sweep of run_id in seq order, as JSON objects (new
 * reference): the columns, with summary and provenance parsed, the
 * memory columns under the glossary's names (campaign_sweep_names). */
struct werr *store_campaign_sweeps_json(struct store *store,
    const char *run_id, json_t **out);
/* The run's row (grid and provenance parsed) with sweeps_done, the count
 * of its done sweeps; *out NULL when there is no such run. */
struct werr *store_campaign_run_json(struct store *store,
    const char *run_id, json_t **out);
/* Every run, newest first: run_id, created, finished, state, machine,
 * grid (parsed), sweeps_done. */
struct werr *store_campaign_runs_json(struct store *store, json_t **out);
/* The timed request rows of a sweep in index order: idx, prompt_id,
 * ttft_ms, e2el_ms, prompt_tokens, completion_tokens, token_events,
 * outcome, error, connect_ms, new_connection, itl_ns (parsed). */
struct werr *store_campaign_requests_json(struct store *store,
    int64_t sweep_id, json_t **out);

/*
 * The memory figures of a sweep row or a published concurrency result
 * renamed to the glossary's names: peak_engine_bytes ->
 * peak_engine_memory_bytes, peak_system_bytes -> peak_system_memory_bytes,
 * system_total_bytes -> system_memory_bytes, gpu_hint_bytes ->
 * gpu_working_set_hint_bytes. The store's columns keep the short names;
 * snapshots made before the rename publish them, and are read so.
 */
void campaign_sweep_names(json_t *sweep);

/* The memory trace of a sweep: {"t_s": [...], "system_used_bytes":
 * [...], "engine_bytes": [...]}, seconds from its first sample. */
struct werr *store_campaign_memory_json(struct store *store, int64_t sweep_id,
    json_t **out);
/*
 * SQL: campaign run r (the table's alias must be r) is measured evidence,
 * not a smoke run of another tree (an agent's change, a pull request) nor
 * of other environments (triage's scratch installs).
 */
#define STORE_CAMPAIGN_MEASURED_RUN \
	"json_extract(r.provenance, '$.tree') IS NULL AND " \
	"json_extract(r.provenance, '$.env_dirs') IS NULL"
/* The newest finished measured run (*run_id NULL if none): what `warden
 * gate` judges by default, never a smoke or triage scratch run. */
struct werr *store_campaign_run_latest(struct store *store, char **run_id);

#endif
