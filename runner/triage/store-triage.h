/*
 * store-triage.h - triage's tables and the reads it makes of the
 * campaign's and the update step's: which campaign runs belong to which
 * cycle (their campaign.run.start entries), every smoke run triage made
 * (what was pinned, the outcome, the log tail), every incident with its
 * state and every transition with who and why. The one place that knows
 * triage's SQL.
 *
 * Each write is one transaction with its journal entry. Smoke runs of
 * other commands (the agent's, triage's own) are never a cycle's
 * evidence: a run whose provenance names another tree or environment
 * (tree, env_dirs) is left out. Never prints.
 */
#ifndef WARDEN_STORE_TRIAGE_H
#define WARDEN_STORE_TRIAGE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

/* The schema: appended to store.c's migrations. */
#define STORE_TRIAGE_SCHEMA \
	"CREATE TABLE triage_runs (" \
	"  id INTEGER PRIMARY KEY," \
	"  cycle TEXT NOT NULL," \
	"  started TEXT NOT NULL," \
	"  finished TEXT," \
	"  result TEXT" \
	");" \
	"CREATE TABLE triage_smoke (" \
	"  id INTEGER PRIMARY KEY," \
	"  triage_run INTEGER NOT NULL REFERENCES triage_runs(id)," \
	"  cycle TEXT NOT NULL," \
	"  engine TEXT NOT NULL," \
	"  base_manifest INTEGER," \
	"  purpose TEXT NOT NULL," \
	"  pins TEXT NOT NULL," \
	"  pins_key TEXT NOT NULL," \
	"  manifest_id INTEGER REFERENCES update_manifests(id)," \
	"  run_id TEXT," \
	"  outcome TEXT NOT NULL CHECK (outcome IN ('pass', 'fail'," \
	"    'build_failed'))," \
	"  detail TEXT," \
	"  log_tail TEXT," \
	"  time TEXT NOT NULL" \
	");" \
	"CREATE INDEX triage_smoke_by_key ON triage_smoke(cycle, engine," \
	"  base_manifest, pins_key);" \
	"CREATE TABLE triage_incidents (" \
	"  id INTEGER PRIMARY KEY," \
	"  opened TEXT NOT NULL," \
	"  updated TEXT NOT NULL," \
	"  cycle TEXT NOT NULL," \
	"  last_cycle TEXT NOT NULL," \
	"  state TEXT NOT NULL CHECK (state IN ('untriaged', 'investigating'," \
	"    'confirmed', 'fixed', 'wontfix', 'upstream'))," \
	"  kind TEXT NOT NULL CHECK (kind IN ('dependency', 'own_release'," \
	"    'combination', 'unexplained'))," \
	"  key TEXT NOT NULL," \
	"  summary TEXT NOT NULL," \
	"  record TEXT NOT NULL" \
	");" \
	"CREATE INDEX triage_incidents_by_state ON triage_incidents(state, id);" \
	"CREATE TABLE triage_transitions (" \
	"  id INTEGER PRIMARY KEY," \
	"  incident_id INTEGER NOT NULL REFERENCES triage_incidents(id)," \
	"  time TEXT NOT NULL," \
	"  from_state TEXT," \
	"  to_state TEXT NOT NULL," \
	"  who TEXT NOT NULL," \
	"  reason TEXT NOT NULL" \
	");"

/* Migration 12: incidents of kind "change" (a commit on official). */
#define STORE_TRIAGE_SCHEMA_12 \
	"CREATE TABLE triage_incidents_12 (" \
	"  id INTEGER PRIMARY KEY," \
	"  opened TEXT NOT NULL," \
	"  updated TEXT NOT NULL," \
	"  cycle TEXT NOT NULL," \
	"  last_cycle TEXT NOT NULL," \
	"  state TEXT NOT NULL CHECK (state IN ('untriaged', 'investigating'," \
	"    'confirmed', 'fixed', 'wontfix', 'upstream'))," \
	"  kind TEXT NOT NULL CHECK (kind IN ('dependency', 'own_release'," \
	"    'combination', 'unexplained', 'change'))," \
	"  key TEXT NOT NULL," \
	"  summary TEXT NOT NULL," \
	"  record TEXT NOT NULL" \
	");" \
	"INSERT INTO triage_incidents_12 SELECT * FROM triage_incidents;" \
	"DROP TABLE triage_incidents;" \
	"ALTER TABLE triage_incidents_12 RENAME TO triage_incidents;" \
	"CREATE INDEX triage_incidents_by_state ON triage_incidents(state, id);"

/* ---- reads of the campaign's and the update step's records ---- */

/* The cycles with a campaign run (smoke runs left out), oldest first: a
 * new array of strings. */
struct werr *store_triage_cycles(struct store *store, json_t **out);
/* The campaign runs of cycle (smoke runs left out), oldest first: a new
 * array of run ids. */
struct werr *store_triage_cycle_runs(struct store *store, const char *cycle,
    json_t **out);
/* The last update attempt in cycle of each engine whose update failed
 * there: a new object {engine: {"outcome", "detail"}}. */
struct werr *store_triage_update_failures(struct store *store,
    const char *cycle, json_t **out);

/* ---- triage runs and smoke runs ---- */

struct werr *store_triage_run_begin(struct store *store, const char *cycle,
    int64_t *id_out);
/* Record the result (borrowed); journaled as 'triage.run'. */
struct werr *store_triage_run_finish(struct store *store, int64_t id,
    const json_t *result);

struct store_triage_smoke {
	int64_t triage_run;
	const char *cycle;
	const char *engine;
	int64_t base_manifest;		/* the broken manifest; 0: none */
	const char *purpose;
	const json_t *pins;		/* {package: version} pinned */
	const char *adapter_sha256;	/* of the adapter smoked: with the
					   pins, what a run is reused for */
	int64_t manifest_id;		/* the scratch build's; 0: none */
	const char *run_id;		/* the smoke campaign; NULL: none */
	const char *outcome;		/* pass, fail, build_failed */
	const char *detail;
	const char *log_tail;
};

/* Record a smoke run; journaled as 'triage.smoke'. */
struct werr *store_triage_smoke_add(struct store *store,
    const struct store_triage_smoke *s, int64_t *id_out);
/* The newest smoke run of the same cycle, engine, broken manifest, pins
 * and adapter (a new object with the columns), or *out NULL. */
struct werr *store_triage_smoke_find(struct store *store, const char *cycle,
    const char *engine, int64_t base_manifest, const json_t *pins,
    const char *adapter_sha256, json_t **out);
/* Smoke runs by id: a new array of objects with the columns. */
struct werr *store_triage_smoke_get(struct store *store, const json_t *ids,
    json_t **out);

/* ---- incidents ---- */

struct store_incident_save {
	int64_t id;			/* 0: a new incident */
	const char *kind;		/* new incidents */
	const char *key;		/* new incidents */
	const char *cycle;		/* the cycle seen (opened in, or last) */
	const char *summary;		/* NULL: unchanged */
	const json_t *record;		/* NULL: unchanged */
	const char *state;		/* NULL: unchanged */
	const char *expect_state;	/* NULL: any; else must be the state */
	const char *who;		/* of a transition */
	const char *reason;		/* of a transition, or of the update */
	const char *journal_kind;	/* incident.opened, incident.updated */
};

/*
 * Open or update an incident, with a transition when the state changes
 * (every transition journaled as 'incident.state' with who and why),
 * all in one transaction. A state that is not expect_state is an input
 * error and changes nothing. *id_out (may be NULL) names the incident.
 */
struct werr *store_triage_incident_save(struct store *store,
    const struct store_incident_save *s, int64_t *id_out);
/* One incident with its record and transitions (a new object), or
 * *out NULL. */
struct werr *store_triage_incident_get(struct store *store, int64_t id,
    json_t **out);
/* Incidents, oldest first, state NULL for all: a new array of objects
 * with their records. */
struct werr *store_triage_incidents(struct store *store, const char *state,
    json_t **out);

#endif
