/*
 * store-update.h - the update step's tables: version manifests, their
 * packages (one row per package, so triage can join manifests in SQL),
 * every update attempt with its outcome, and which manifest is each
 * engine's current one. The one place that knows the update step's SQL.
 *
 * An attempt, its manifest and the move of the engine's current pointer
 * land in one transaction with their journal entry. A failed attempt
 * records no manifest and leaves the pointer where it was. Manifests
 * built in a scratch directory (triage) are recorded but never current.
 * Never prints.
 */
#ifndef WARDEN_STORE_UPDATE_H
#define WARDEN_STORE_UPDATE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

/* The schema: migration 8 of store-migrations.c's list (11 below amends it). */
#define STORE_UPDATE_SCHEMA \
	"CREATE TABLE update_manifests (" \
	"  id INTEGER PRIMARY KEY," \
	"  cycle TEXT NOT NULL," \
	"  engine TEXT NOT NULL," \
	"  created TEXT NOT NULL," \
	"  scratch INTEGER NOT NULL DEFAULT 0," \
	"  env_dir TEXT NOT NULL," \
	"  sha256 TEXT NOT NULL," \
	"  manifest TEXT NOT NULL" \
	");" \
	"CREATE INDEX update_manifests_by_engine ON update_manifests(engine, id);" \
	"CREATE INDEX update_manifests_by_cycle ON update_manifests(cycle, engine, id);" \
	"CREATE TABLE update_packages (" \
	"  manifest_id INTEGER NOT NULL REFERENCES update_manifests(id)," \
	"  name TEXT NOT NULL," \
	"  version TEXT NOT NULL," \
	"  PRIMARY KEY (manifest_id, name)" \
	");" \
	"CREATE TABLE update_attempts (" \
	"  id INTEGER PRIMARY KEY," \
	"  cycle TEXT NOT NULL," \
	"  engine TEXT NOT NULL," \
	"  time TEXT NOT NULL," \
	"  outcome TEXT NOT NULL CHECK (outcome IN ('updated', 'unchanged'," \
	"    'failed', 'build_failed', 'model_mismatch', 'reverted'))," \
	"  detail TEXT," \
	"  log_path TEXT," \
	"  manifest_id INTEGER REFERENCES update_manifests(id)," \
	"  previous_id INTEGER REFERENCES update_manifests(id)," \
	"  changes TEXT NOT NULL" \
	");" \
	"CREATE INDEX update_attempts_by_engine ON update_attempts(engine, id);" \
	"CREATE TABLE update_current (" \
	"  engine TEXT PRIMARY KEY," \
	"  manifest_id INTEGER NOT NULL REFERENCES update_manifests(id)" \
	");"

/*
 * Migration 11: the outcome group_rolled_back (an engine moved with its
 * policy group, then put back because another engine of the group
 * failed). SQLite cannot change a CHECK in place: the table is rebuilt.
 */
#define STORE_UPDATE_SCHEMA_11 \
	"CREATE TABLE update_attempts_11 (" \
	"  id INTEGER PRIMARY KEY," \
	"  cycle TEXT NOT NULL," \
	"  engine TEXT NOT NULL," \
	"  time TEXT NOT NULL," \
	"  outcome TEXT NOT NULL CHECK (outcome IN ('updated', 'unchanged'," \
	"    'failed', 'build_failed', 'model_mismatch', 'reverted'," \
	"    'group_rolled_back'))," \
	"  detail TEXT," \
	"  log_path TEXT," \
	"  manifest_id INTEGER REFERENCES update_manifests(id)," \
	"  previous_id INTEGER REFERENCES update_manifests(id)," \
	"  changes TEXT NOT NULL" \
	");" \
	"INSERT INTO update_attempts_11 SELECT * FROM update_attempts;" \
	"DROP TABLE update_attempts;" \
	"ALTER TABLE update_attempts_11 RENAME TO update_attempts;" \
	"CREATE INDEX update_attempts_by_engine ON update_attempts(engine, id);"

struct store_update_attempt {
	const char *engine;
	const char *outcome;		/* see the CHECK above */
	const char *detail;		/* NULL: none */
	const char *log_path;		/* NULL: none */
	const json_t *manifest;		/* NULL: none recorded (a failure) */
	const char *env_dir;		/* where the manifest's environment is */
	int64_t previous_id;		/* the current manifest before, 0: none */
	const json_t *changes;		/* manifest_diff(); NULL: {} */
};

/*
 * Record an attempt: its manifest (when given) becomes the engine's
 * current one. *manifest_id_out (may be NULL) is the new manifest's id,
 * or 0. Journaled as 'update.engine'.
 */
struct werr *store_update_record(struct store *store,
    const struct store_update_attempt *a, int64_t *manifest_id_out);

/*
 * Record n attempts in one transaction (all or none): the commit point
 * of a policy group, whose engines' manifests become current together.
 * ids_out[i] is attempt i's new manifest id, or 0.
 */
struct werr *store_update_record_all(struct store *store,
    const struct store_update_attempt *v, size_t n, int64_t *ids_out);

/* Record a manifest built in a scratch directory (never current);
 * journaled as 'update.scratch'. */
struct werr *store_update_record_scratch(struct store *store,
    const char *engine, const char *env_dir, const json_t *manifest,
    int64_t *manifest_id_out);

/*
 * The manifest with this id, or the engine's current one (*out NULL when
 * there is none). The object returned (new reference) is the manifest
 * with "id", "cycle" and "sha256" added.
 */
struct werr *store_update_manifest(struct store *store, int64_t id,
    json_t **out);
struct werr *store_update_current(struct store *store, const char *engine,
    json_t **out);

/* Every live manifest of engine recorded after manifest after_id up to
 * upto_id, oldest first: a new array (empty when upto_id <= after_id). */
struct werr *store_update_between(struct store *store, const char *engine,
    int64_t after_id, int64_t upto_id, json_t **out);

/* The newest live manifest of each engine recorded in cycle (engine
 * NULL: all engines): a new object {engine: manifest}. */
struct werr *store_update_cycle(struct store *store, const char *cycle,
    const char *engine, json_t **out);
/* Every engine's current manifest: a new object {engine: manifest}. */
struct werr *store_update_current_all(struct store *store, json_t **out);

#endif
