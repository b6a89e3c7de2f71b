/*
 * store-update.c - SQL of the update step. See store-update.h.
 * Everything a call writes is one transaction with its journal entry.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "manifest.h"
#include "store-update.h"
#include "util.h"

static char *
dump(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);

	if (s == NULL)
		fatal("store-update: cannot serialise JSON");
	return s;
}

/* Insert a manifest and its package rows; inside a transaction. */
static struct werr *
insert_manifest(struct store *store, const char *engine, const char *env_dir,
    int scratch, const json_t *manifest, int64_t *id_out, char *hex)
{
	sqlite3_stmt *st;
	struct werr *err;
	const char *key;
	char created[40];
	json_t *v;
	char *text;
	int64_t id;

	manifest_digest(manifest, hex);
	utc_now_iso(created, sizeof(created));
	if ((err = store_prepare(store, &st, "INSERT INTO update_manifests "
	    "(cycle, engine, created, scratch, env_dir, sha256, manifest) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")) != NULL)
		return err;
	text = dump(manifest);
	store_bind_text(st, 1, store_cycle(store));
	store_bind_text(st, 2, engine);
	store_bind_text(st, 3, created);
	sqlite3_bind_int(st, 4, scratch);
	store_bind_text(st, 5, env_dir != NULL ? env_dir : "");
	store_bind_text(st, 6, hex);
	store_bind_text(st, 7, text);
	free(text);
	if ((err = store_step_done(store, st, "insert manifest")) != NULL)
		return err;
	id = sqlite3_last_insert_rowid(store_db(store));
	json_object_foreach(json_object_get(manifest, "packages"), key, v) {
		if ((err = store_prepare(store, &st, "INSERT INTO update_packages "
		    "(manifest_id, name, version) VALUES (?1, ?2, ?3)")) != NULL)
			return err;
		sqlite3_bind_int64(st, 1, id);
		store_bind_text(st, 2, key);
		store_bind_text(st, 3, json_string_value(v));
		if ((err = store_step_done(store, st, "insert package")) != NULL)
			return err;
	}
	*id_out = id;
	return NULL;
}

/* One attempt, its manifest and the current pointer; inside a transaction. */
static struct werr *
record_one(struct store *store, const struct store_update_attempt *a,
    int64_t *id_out)
{
	json_t *empty = json_object(), *body = NULL;
	sqlite3_stmt *st;
	struct werr *err;
	char time[40], hex[65] = "";
	int64_t id = 0;
	char *text;

	*id_out = 0;
	if (a->manifest != NULL && (err = insert_manifest(store, a->engine,
	    a->env_dir, 0, a->manifest, &id, hex)) != NULL)
		goto out;
	utc_now_iso(time, sizeof(time));
	if ((err = store_prepare(store, &st, "INSERT INTO update_attempts "
	    "(cycle, engine, time, outcome, detail, log_path, manifest_id, "
	    "previous_id, changes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"))
	    != NULL)
		goto out;
	text = dump(a->changes != NULL ? a->changes : empty);
	store_bind_text(st, 1, store_cycle(store));
	store_bind_text(st, 2, a->engine);
	store_bind_text(st, 3, time);
	store_bind_text(st, 4, a->outcome);
	store_bind_text(st, 5, a->detail);
	store_bind_text(st, 6, a->log_path);
	if (id != 0)
		sqlite3_bind_int64(st, 7, id);
	else
		sqlite3_bind_null(st, 7);
	if (a->previous_id != 0)
		sqlite3_bind_int64(st, 8, a->previous_id);
	else
		sqlite3_bind_null(st, 8);
	store_bind_text(st, 9, text);
	free(text);
	if ((err = store_step_done(store, st, "insert update attempt")) != NULL)
		goto out;
	if (id != 0) {
		if ((err = store_prepare(store, &st, "INSERT INTO update_current "
		    "(engine, manifest_id) VALUES (?1, ?2) ON CONFLICT(engine) "
		    "DO UPDATE SET manifest_id = excluded.manifest_id")) != NULL)
			goto out;
		store_bind_text(st, 1, a->engine);
		sqlite3_bind_int64(st, 2, id);
		if ((err = store_step_done(store, st, "set current manifest")) != NULL)
			goto out;
	}
	body = json_pack("{s:s, s:s?, s:s?, s:O}", "outcome", a->outcome,
	    "detail", a->detail, "log", a->log_path,
	    "changes", a->changes != NULL ? a->changes : empty);
	if (id != 0) {
		json_object_set_new(body, "manifest_id", json_integer(id));
		json_object_set_new(body, "manifest_sha256", json_string(hex));
	}
	if (a->previous_id != 0)
		json_object_set_new(body, "previous_id", json_integer(a->previous_id));
	if ((err = journal_append(store, "update.engine", a->engine, body,
	    NULL)) != NULL)
		goto out;
	*id_out = id;
out:
	json_decref(body);
	json_decref(empty);
	return err;
}

struct werr *
store_update_record(struct store *store, const struct store_update_attempt *a,
    int64_t *manifest_id_out)
{
	int64_t id = 0;

	return store_update_record_all(store, a, 1, manifest_id_out != NULL ?
	    manifest_id_out : &id);
}

struct werr *
store_update_record_all(struct store *store,
    const struct store_update_attempt *v, size_t n, int64_t *ids_out)
{
	struct werr *err;
	size_t i;

	for (i = 0; i < n; i++)
		ids_out[i] = 0;
	if ((err = store_begin(store)) != NULL)
		return err;
	for (i = 0; i < n && err == NULL; i++)
		err = record_one(store, &v[i], &ids_out[i]);
	if (err == NULL)
		err = store_commit(store);
	else
		store_rollback(store);
	if (err != NULL)
		for (i = 0; i < n; i++)
			ids_out[i] = 0;
	return err;
}

struct werr *
store_update_record_scratch(struct store *store, const char *engine,
    const char *env_dir, const json_t *manifest, int64_t *manifest_id_out)
{
	struct werr *err;
	json_t *body;
	char hex[65];
	int64_t id;

	*manifest_id_out = 0;
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = insert_manifest(store, engine, env_dir, 1, manifest, &id,
	    hex)) == NULL) {
		body = json_pack("{s:I, s:s, s:s}", "manifest_id", (json_int_t)id,
		    "manifest_sha256", hex, "env_dir", env_dir);
		err = journal_append(store, "update.scratch", engine, body, NULL);
		json_decref(body);
	}
	if (err == NULL && (err = store_commit(store)) == NULL)
		*manifest_id_out = id;
	if (err != NULL)
		store_rollback(store);
	return err;
}

/* Parse the row's manifest and add id, cycle, sha256. */
static json_t *
row_manifest(sqlite3_stmt *st)
{
	const char *text = (const char *)sqlite3_column_text(st, 3);
	json_error_t jerr;
	json_t *m;

	m = text != NULL ? json_loads(text, 0, &jerr) : NULL;
	if (!json_is_object(m)) {
		json_decref(m);
		m = json_object();
	}
	json_object_set_new(m, "id", json_integer(sqlite3_column_int64(st, 0)));
	json_object_set_new(m, "cycle", json_string((const char *)
	    sqlite3_column_text(st, 1)));
	json_object_set_new(m, "sha256", json_string((const char *)
	    sqlite3_column_text(st, 2)));
	return m;
}

#define MANIFEST_COLUMNS "m.id, m.cycle, m.sha256, m.manifest, m.engine"

static struct werr *
query_one(struct store *store, sqlite3_stmt *st, json_t **out)
{
	int rc = sqlite3_step(st);

	*out = NULL;
	if (rc == SQLITE_ROW)
		*out = row_manifest(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_error(store, "read manifest");
	return NULL;
}

struct werr *
store_update_manifest(struct store *store, int64_t id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT " MANIFEST_COLUMNS
	    " FROM update_manifests m WHERE m.id = ?1")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	return query_one(store, st, out);
}

struct werr *
store_update_current(struct store *store, const char *engine, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT " MANIFEST_COLUMNS
	    " FROM update_current c JOIN update_manifests m ON m.id = "
	    "c.manifest_id WHERE c.engine = ?1")) != NULL)
		return err;
	store_bind_text(st, 1, engine);
	return query_one(store, st, out);
}

static struct werr *
query_map(struct store *store, sqlite3_stmt *st, json_t **out)
{
	int rc;

	*out = json_object();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(*out, (const char *)sqlite3_column_text(st, 4),
		    row_manifest(st));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(*out);
		*out = NULL;
		return store_error(store, "read manifests");
	}
	return NULL;
}

struct werr *
store_update_cycle(struct store *store, const char *cycle, const char *engine,
    json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT " MANIFEST_COLUMNS
	    " FROM update_manifests m WHERE m.scratch = 0 AND m.cycle = ?1 AND "
	    "(?2 IS NULL OR m.engine = ?2) AND m.id = (SELECT max(x.id) FROM "
	    "update_manifests x WHERE x.scratch = 0 AND x.cycle = m.cycle AND "
	    "x.engine = m.engine) ORDER BY m.engine")) != NULL)
		return err;
	store_bind_text(st, 1, cycle);
	store_bind_text(st, 2, engine);
	return query_map(store, st, out);
}

struct werr *
store_update_between(struct store *store, const char *engine,
    int64_t after_id, int64_t upto_id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	int rc;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT " MANIFEST_COLUMNS
	    " FROM update_manifests m WHERE m.scratch = 0 AND m.engine = ?1 "
	    "AND m.id > ?2 AND m.id <= ?3 ORDER BY m.id")) != NULL)
		return err;
	store_bind_text(st, 1, engine);
	sqlite3_bind_int64(st, 2, after_id);
	sqlite3_bind_int64(st, 3, upto_id);
	*out = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(*out, row_manifest(st));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(*out);
		*out = NULL;
		return store_error(store, "read manifests");
	}
	return NULL;
}

struct werr *
store_update_current_all(struct store *store, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT " MANIFEST_COLUMNS
	    " FROM update_current c JOIN update_manifests m ON m.id = "
	    "c.manifest_id ORDER BY m.engine")) != NULL)
		return err;
	return query_map(store, st, out);
}
