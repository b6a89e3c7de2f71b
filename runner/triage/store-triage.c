/*
 * store-triage.c - SQL of triage. See store-triage.h. Every write is one
 * transaction with its journal entry; the reads never change a row.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "journal.h"
#include "store-campaign.h"
#include "store-json.h"
#include "store-triage.h"
#include "util.h"

static char *
dump(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (s == NULL)
		fatal("store-triage: cannot serialise JSON");
	return s;
}

static void
bind_id(sqlite3_stmt *st, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

/* The first column of every row, as strings. */
static struct werr *
strings(struct store *store, sqlite3_stmt *st, json_t **out)
{
	json_t *v = json_array();
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(v, json_text((const char *)
		    sqlite3_column_text(st, 0)));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(v);
		return store_error(store, "select");
	}
	*out = v;
	return NULL;
}

struct werr *
store_triage_cycles(struct store *store, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT j.cycle FROM journal j "
	    "JOIN campaign_runs r ON r.run_id = j.subject "
	    "WHERE j.kind = 'campaign.run.start' AND " STORE_CAMPAIGN_MEASURED_RUN " "
	    "GROUP BY j.cycle ORDER BY min(j.seq)")) != NULL)
		return err;
	return strings(store, st, out);
}

struct werr *
store_triage_cycle_runs(struct store *store, const char *cycle, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT r.run_id FROM journal j "
	    "JOIN campaign_runs r ON r.run_id = j.subject "
	    "WHERE j.kind = 'campaign.run.start' AND j.cycle = ?1 AND "
	    STORE_CAMPAIGN_MEASURED_RUN " ORDER BY j.seq")) != NULL)
		return err;
	store_bind_text(st, 1, cycle);
	return strings(store, st, out);
}

struct werr *
store_triage_update_failures(struct store *store, const char *cycle,
    json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *rows = NULL, *row, *o;
	size_t i;

	if ((err = store_prepare(store, &st, "SELECT a.engine, a.outcome, "
	    "a.detail FROM update_attempts a WHERE a.cycle = ?1 AND a.id = "
	    "(SELECT max(b.id) FROM update_attempts b WHERE b.cycle = a.cycle "
	    "AND b.engine = a.engine) AND a.outcome IN ('failed', "
	    "'build_failed', 'model_mismatch') ORDER BY a.engine")) != NULL)
		return err;
	store_bind_text(st, 1, cycle);
	if ((err = store_rows_json(&rows, store, st, NULL, "select")) != NULL)
		return err;
	o = json_object();
	json_array_foreach(rows, i, row)
		json_object_set_new(o, json_string_value(json_object_get(row,
		    "engine")), json_pack("{s:O, s:O}", "outcome",
		    json_object_get(row, "outcome"), "detail",
		    json_object_get(row, "detail")));
	json_decref(rows);
	*out = o;
	return NULL;
}

struct werr *
store_triage_run_begin(struct store *store, const char *cycle, int64_t *id_out)
{
	sqlite3_stmt *st;
	struct werr *err;
	char now[40];

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "INSERT INTO triage_runs (cycle, "
	    "started) VALUES (?1, ?2)")) == NULL) {
		store_bind_text(st, 1, cycle);
		store_bind_text(st, 2, now);
		err = store_step_done(store, st, "insert triage run");
	}
	if (err == NULL)
		*id_out = sqlite3_last_insert_rowid(store_db(store));
	return store_tx_end(store, err);
}

struct werr *
store_triage_run_finish(struct store *store, int64_t id, const json_t *result)
{
	sqlite3_stmt *st;
	struct werr *err;
	char now[40], *subject;

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "UPDATE triage_runs SET finished "
	    "= ?2, result = ?3 WHERE id = ?1")) == NULL) {
		sqlite3_bind_int64(st, 1, id);
		store_bind_text(st, 2, now);
		store_bind_json(st, 3, result);
		err = store_step_done(store, st, "finish triage run");
	}
	subject = xasprintf("%lld", (long long)id);
	if (err == NULL)
		err = journal_append(store, "triage.run", subject, (json_t *)result,
		    NULL);
	free(subject);
	return store_tx_end(store, err);
}

/* What a smoke run is reused for: its pins and its adapter. */
static char *
pins_key(const json_t *pins, const char *adapter_sha256)
{
	json_t *k = json_pack("{s:O, s:s?}", "pins", pins, "adapter",
	    adapter_sha256);
	char *s = dump(k);

	json_decref(k);
	return s;
}

struct werr *
store_triage_smoke_add(struct store *store, const struct store_triage_smoke *s,
    int64_t *id_out)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *body = NULL;
	char now[40], *key = pins_key(s->pins, s->adapter_sha256);
	int64_t id = 0;

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL) {
		free(key);
		return err;
	}
	if ((err = store_prepare(store, &st, "INSERT INTO triage_smoke "
	    "(triage_run, cycle, engine, base_manifest, purpose, pins, pins_key, "
	    "manifest_id, run_id, outcome, detail, log_tail, time) VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6, ?13, ?7, ?8, ?9, ?10, ?11, ?12)")) == NULL) {
		sqlite3_bind_int64(st, 1, s->triage_run);
		store_bind_text(st, 2, s->cycle);
		store_bind_text(st, 3, s->engine);
		bind_id(st, 4, s->base_manifest);
		store_bind_text(st, 5, s->purpose);
		store_bind_json(st, 6, s->pins);
		bind_id(st, 7, s->manifest_id);
		store_bind_text(st, 8, s->run_id);
		store_bind_text(st, 9, s->outcome);
		store_bind_text(st, 10, s->detail);
		store_bind_text(st, 11, s->log_tail);
		store_bind_text(st, 12, now);
		store_bind_text(st, 13, key);
		err = store_step_done(store, st, "insert smoke run");
	}
	if (err == NULL) {
		id = sqlite3_last_insert_rowid(store_db(store));
		body = json_pack("{s:I, s:I, s:s, s:O, s:s, s:s?, s:s?}",
		    "smoke", (json_int_t)id, "triage_run",
		    (json_int_t)s->triage_run, "purpose", s->purpose,
		    "pins", s->pins, "outcome", s->outcome,
		    "detail", s->detail, "run_id", s->run_id);
		if (s->manifest_id > 0)
			json_object_set_new(body, "manifest_id",
			    json_integer(s->manifest_id));
		err = journal_append(store, "triage.smoke", s->engine, body, NULL);
	}
	json_decref(body);
	free(key);
	if ((err = store_tx_end(store, err)) == NULL && id_out != NULL)
		*id_out = id;
	return err;
}

static const char *const smoke_json_columns[] = { "pins", NULL };

struct werr *
store_triage_smoke_find(struct store *store, const char *cycle,
    const char *engine, int64_t base_manifest, const json_t *pins,
    const char *adapter_sha256, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *rows = NULL;
	char *key = pins_key(pins, adapter_sha256);

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT * FROM triage_smoke WHERE "
	    "cycle = ?1 AND engine = ?2 AND base_manifest IS ?3 AND pins_key = "
	    "?4 ORDER BY id DESC LIMIT 1")) == NULL) {
		store_bind_text(st, 1, cycle);
		store_bind_text(st, 2, engine);
		bind_id(st, 3, base_manifest);
		store_bind_text(st, 4, key);
		err = store_rows_json(&rows, store, st, smoke_json_columns,
		    "select");
	}
	free(key);
	if (err == NULL && json_array_size(rows) > 0)
		*out = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	return err;
}

struct werr *
store_triage_smoke_get(struct store *store, const json_t *ids, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *all = json_array(), *rows, *id;
	size_t i;

	json_array_foreach((json_t *)ids, i, id) {
		if ((err = store_prepare(store, &st, "SELECT * FROM triage_smoke "
		    "WHERE id = ?1")) == NULL) {
			sqlite3_bind_int64(st, 1, json_integer_value(id));
			err = store_rows_json(&rows, store, st,
			    smoke_json_columns, "select");
		}
		if (err != NULL) {
			json_decref(all);
			return err;
		}
		json_array_extend(all, rows);
		json_decref(rows);
	}
	*out = all;
	return NULL;
}

/* The state of incident id now (caller frees), or NULL. */
static struct werr *
incident_state(struct store *store, int64_t id, char **state)
{
	sqlite3_stmt *st;
	struct werr *err;
	int rc;

	*state = NULL;
	if ((err = store_prepare(store, &st, "SELECT state FROM "
	    "triage_incidents WHERE id = ?1")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*state = xstrdup((const char *)sqlite3_column_text(st, 0));
	else if (rc != SQLITE_DONE)
		err = store_error(store, "select incident");
	sqlite3_finalize(st);
	return err;
}

static struct werr *
insert_incident(struct store *store, const struct store_incident_save *s,
    const char *now, int64_t *id)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "INSERT INTO triage_incidents "
	    "(opened, updated, cycle, last_cycle, state, kind, key, summary, "
	    "record) VALUES (?1, ?1, ?2, ?2, ?3, ?4, ?5, ?6, ?7)")) != NULL)
		return err;
	store_bind_text(st, 1, now);
	store_bind_text(st, 2, s->cycle);
	store_bind_text(st, 3, s->state);
	store_bind_text(st, 4, s->kind);
	store_bind_text(st, 5, s->key);
	store_bind_text(st, 6, s->summary);
	store_bind_json(st, 7, s->record);
	if ((err = store_step_done(store, st, "insert incident")) == NULL)
		*id = sqlite3_last_insert_rowid(store_db(store));
	return err;
}

static struct werr *
update_incident(struct store *store, const struct store_incident_save *s,
    const char *now)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "UPDATE triage_incidents SET "
	    "updated = ?2, last_cycle = coalesce(?3, last_cycle), "
	    "state = coalesce(?4, state), summary = coalesce(?5, summary), "
	    "record = coalesce(?6, record) WHERE id = ?1")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, s->id);
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, s->cycle);
	store_bind_text(st, 4, s->state);
	store_bind_text(st, 5, s->summary);
	if (s->record != NULL)
		store_bind_json(st, 6, s->record);
	else
		sqlite3_bind_null(st, 6);
	return store_step_done(store, st, "update incident");
}

static struct werr *
transition(struct store *store, int64_t id, const char *from, const char *to,
    const char *who, const char *reason, const char *now)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *body;
	char *subject;

	if ((err = store_prepare(store, &st, "INSERT INTO triage_transitions "
	    "(incident_id, time, from_state, to_state, who, reason) VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6)")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, from);
	store_bind_text(st, 4, to);
	store_bind_text(st, 5, who);
	store_bind_text(st, 6, reason);
	if ((err = store_step_done(store, st, "insert transition")) != NULL)
		return err;
	body = json_pack("{s:I, s:s?, s:s, s:s, s:s}", "incident",
	    (json_int_t)id, "from", from, "to", to, "who", who,
	    "reason", reason);
	subject = xasprintf("%lld", (long long)id);
	err = journal_append(store, "incident.state", subject, body, NULL);
	free(subject);
	json_decref(body);
	return err;
}

struct werr *
store_triage_incident_save(struct store *store,
    const struct store_incident_save *s, int64_t *id_out)
{
	struct werr *err;
	json_t *body = NULL;
	char now[40], *old = NULL, *subject = NULL;
	int64_t id = s->id;

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		return err;
	if (id > 0) {
		if ((err = incident_state(store, id, &old)) != NULL)
			goto out;
		if (old == NULL) {
			err = werr_new(WEXIT_INPUT, "no incident %lld",
			    (long long)id);
			goto out;
		}
		if (s->expect_state != NULL && strcmp(old, s->expect_state) != 0) {
			err = werr_new(WEXIT_INPUT, "incident %lld is %s, not %s",
			    (long long)id, old, s->expect_state);
			goto out;
		}
		err = update_incident(store, s, now);
	} else
		err = insert_incident(store, s, now, &id);
	if (err != NULL)
		goto out;
	subject = xasprintf("%lld", (long long)id);
	if (s->journal_kind != NULL) {
		body = json_pack("{s:I, s:s?, s:s?, s:s?, s:s?}", "incident",
		    (json_int_t)id, "cycle", s->cycle, "summary", s->summary,
		    "state", s->state, "why", s->reason);
		if (s->record != NULL)
			json_object_set(body, "record", (json_t *)s->record);
		if ((err = journal_append(store, s->journal_kind, subject, body,
		    NULL)) != NULL)
			goto out;
	}
	if (s->state != NULL && (old == NULL || strcmp(old, s->state) != 0))
		err = transition(store, id, old, s->state, s->who ? s->who :
		    "warden triage", s->reason ? s->reason : "", now);
out:
	json_decref(body);
	free(subject);
	free(old);
	if ((err = store_tx_end(store, err)) == NULL && id_out != NULL)
		*id_out = id;
	return err;
}

static const char *const incident_json_columns[] = { "record", NULL };

struct werr *
store_triage_incident_get(struct store *store, int64_t id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *rows = NULL, *tr = NULL;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT * FROM triage_incidents "
	    "WHERE id = ?1")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	if ((err = store_rows_json(&rows, store, st, incident_json_columns,
	    "select")) != NULL)
		return err;
	if (json_array_size(rows) == 0) {
		json_decref(rows);
		return NULL;
	}
	if ((err = store_prepare(store, &st, "SELECT time, from_state AS "
	    "\"from\", to_state AS \"to\", who, reason FROM triage_transitions "
	    "WHERE incident_id = ?1 ORDER BY id")) == NULL) {
		sqlite3_bind_int64(st, 1, id);
		err = store_rows_json(&tr, store, st, NULL, "select");
	}
	if (err == NULL) {
		*out = json_incref(json_array_get(rows, 0));
		json_object_set_new(*out, "transitions", tr);
	}
	json_decref(rows);
	return err;
}

struct werr *
store_triage_incidents(struct store *store, const char *state, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT * FROM triage_incidents "
	    "WHERE ?1 IS NULL OR state = ?1 ORDER BY id")) != NULL)
		return err;
	store_bind_text(st, 1, state);
	return store_rows_json(out, store, st, incident_json_columns,
	    "select");
}
