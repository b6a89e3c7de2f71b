/*
 * store-regress.h - the tables of the regression alerts: one row per
 * alert (a series a campaign run found regressed, its figures before and
 * after, the test's p-value, its state and a record of the test and the
 * baseline) and one per transition, with who and why. The one place
 * that knows their SQL (store-regress.c), and the reads it makes of
 * what was published: the publishes, the gate record of each (the
 * campaign runs it covered) and the cycle of each run.
 *
 * The writes run inside the caller's transaction, each with its journal
 * entry (regression.opened, regression.seen, regression.state). Never
 * prints.
 */
#ifndef WARDEN_STORE_REGRESS_H
#define WARDEN_STORE_REGRESS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

/* The schema: one migration of store-migrations.c's list. */
#define STORE_REGRESS_SCHEMA \
	"CREATE TABLE regression_alerts (" \
	"  id INTEGER PRIMARY KEY," \
	"  created TEXT NOT NULL," \
	"  updated TEXT NOT NULL," \
	"  cycle TEXT NOT NULL," \
	"  round INTEGER NOT NULL," \
	"  run_id TEXT NOT NULL," \
	"  last_cycle TEXT NOT NULL," \
	"  engine TEXT NOT NULL, model TEXT NOT NULL, split TEXT NOT NULL," \
	"  concurrency INTEGER NOT NULL," \
	"  metric TEXT NOT NULL," \
	"  before_value REAL NOT NULL, after_value REAL NOT NULL," \
	"  change_pct REAL NOT NULL, p_value REAL NOT NULL," \
	"  state TEXT NOT NULL CHECK (state IN ('untriaged', 'acknowledged'," \
	"    'invalid', 'fixed'))," \
	"  record TEXT NOT NULL," \
	"  UNIQUE (run_id, engine, model, split, concurrency, metric)" \
	");" \
	"CREATE INDEX regression_alerts_by_state ON regression_alerts(state, id);" \
	"CREATE TABLE regression_transitions (" \
	"  id INTEGER PRIMARY KEY," \
	"  alert_id INTEGER NOT NULL REFERENCES regression_alerts(id)," \
	"  time TEXT NOT NULL," \
	"  from_state TEXT," \
	"  to_state TEXT NOT NULL," \
	"  who TEXT NOT NULL," \
	"  reason TEXT NOT NULL" \
	");"

/* Migration 14: the metrics of stored alerts under the glossary's names
 * (ttft_p50 was median_ttft_ms, ...); the journal keeps what it said. */
#define STORE_REGRESS_SCHEMA_14 \
	"UPDATE regression_alerts SET metric = CASE metric" \
	"  WHEN 'ttft_p50' THEN 'median_ttft_ms'" \
	"  WHEN 'ttft_p99' THEN 'p99_ttft_ms'" \
	"  WHEN 'tpot_p50' THEN 'median_tpot_ms'" \
	"  WHEN 'peak_engine_memory' THEN 'peak_engine_memory_bytes'" \
	"  ELSE metric END;"

/*
 * The last max publishes with a campaign run measured on machine (other
 * than exclude), newest first: [{"snapshot", "published", "cycle" (of
 * its newest such run), "runs": [run ids]}]. A publish of runs this
 * store does not hold (merged from another machine) is left out.
 */
struct werr *store_regress_baseline(json_t **out, struct store *store,
    const char *machine, const char *exclude, size_t max);
/* The machine a campaign run ran on (caller frees), or *machine NULL. */
struct werr *store_regress_run_machine(char **machine, struct store *store,
    const char *run_id);

/* Alerts as objects ({id, created, updated, cycle, round, run_id,
 * last_cycle, engine, model, split, concurrency, metric, before, after,
 * change_pct, p_value, state, record}), oldest first; the filters may be
 * NULL. open_only: untriaged and acknowledged. */
struct werr *store_regress_alerts(json_t **out, struct store *store,
    const char *state, const char *engine, int open_only);
/* One alert with "transitions", or *out NULL. */
struct werr *store_regress_alert(json_t **out, struct store *store,
    int64_t id);

/* Inside the caller's transaction: a new alert, untriaged, with its
 * transition and `regression.opened` entry (alert: the object's fields
 * as store_regress_alerts names them, without id and state). A run
 * alerts a series once: *id is 0 when this run already has. */
struct werr *store_regress_insert(struct store *store, const json_t *alert,
    const char *who, const char *reason, int64_t *id);
/* Inside the caller's transaction: the alert was seen regressed again
 * in cycle (last_cycle; seen: the figures of this sighting, appended to
 * the record's "seen"), journaled `regression.seen`. */
struct werr *store_regress_seen(struct store *store, int64_t id,
    const char *cycle, const json_t *seen);
/* Inside the caller's transaction: state from (checked) to to, with who
 * and why, journaled `regression.state`. A state other than from is an
 * input error. */
struct werr *store_regress_transition(struct store *store, int64_t id,
    const char *from, const char *to, const char *who, const char *reason);

#endif
