/*
 * store-regress.c - the SQL of the regression alerts: the alerts and
 * their transitions, and the reads of what was published (publishes, the
 * gate record of each, the campaign runs it covered and their cycles).
 * See regress-private.h. The writes run inside the caller's transaction
 * and journal what they change; the reads never change a row. Never
 * prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "journal.h"
#include "jsonget.h"
#include "regress-private.h"
#include "store-json.h"
#include "util.h"

/* The columns of an alert as regress.h names them. */
#define ALERT_COLUMNS \
	"id, created, updated, cycle, round, run_id, last_cycle, engine, " \
	"model, split, concurrency, metric, before_value AS before, " \
	"after_value AS after, change_pct, p_value, state, record"

static const char *const alert_json_cols[] = { "record", NULL };

struct werr *
store_regress_run_machine(char **machine, struct store *store,
    const char *run_id)
{
	sqlite3_stmt *st;
	struct werr *err;
	int rc;

	*machine = NULL;
	if ((err = store_prepare(store, &st, "SELECT machine FROM "
	    "campaign_runs WHERE run_id = ?1")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*machine = xstrdup((const char *)sqlite3_column_text(st, 0));
	else if (rc != SQLITE_DONE)
		err = store_error(store, "read campaign run");
	sqlite3_finalize(st);
	return err;
}

/* The publishes, newest first, each with the campaign runs of the
 * newest gate record of its result set. */
static struct werr *
publishes(json_t **out, struct store *store)
{
	static const char *const cols[] = { "runs", NULL };
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT p.snapshot_id AS "
	    "snapshot, p.published, (SELECT g.runs FROM gate_results g "
	    "WHERE g.results_sha256 = p.results_sha256 ORDER BY g.id DESC "
	    "LIMIT 1) AS runs FROM publishes p ORDER BY p.published DESC, "
	    "p.rowid DESC")) != NULL)
		return err;
	return store_rows_json(out, store, st, cols, "read publishes");
}

/* A done campaign run's machine and the cycle of its start entry. */
static struct werr *
run_origin(json_t **out, struct store *store, const char *run_id)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT r.machine, (SELECT "
	    "j.cycle FROM journal j WHERE j.kind = 'campaign.run.start' AND "
	    "j.subject = r.run_id ORDER BY j.seq LIMIT 1) AS cycle FROM "
	    "campaign_runs r WHERE r.run_id = ?1 AND r.state = 'done'")) != NULL)
		return err;
	store_bind_text(st, 1, run_id);
	return store_row_json(out, store, st, NULL, "read campaign run");
}

struct werr *
store_regress_baseline(json_t **out, struct store *store, const char *machine,
    const char *exclude, size_t max)
{
	json_t *pubs = NULL, *p, *v, *origin, *runs, *seen = json_object();
	struct werr *err;
	const char *run;
	size_t i, j;

	*out = json_array();
	if ((err = publishes(&pubs, store)) != NULL)
		goto out;
	json_array_foreach(pubs, i, p) {
		if (json_array_size(*out) >= max)
			break;
		runs = json_array();
		json_array_foreach(json_object_get(json_object_get(p, "runs"),
		    "campaign"), j, v) {
			run = json_string_value(v);
			if (run == NULL || (exclude != NULL &&
			    strcmp(run, exclude) == 0) ||
			    json_object_get(seen, run) != NULL)
				continue;
			if ((err = run_origin(&origin, store, run)) != NULL) {
				json_decref(runs);
				goto out;
			}
			if (origin != NULL && strcmp(jsonget_str(origin,
			    "machine"), machine) == 0) {
				json_array_append_new(runs, json_string(run));
				json_object_set_new(seen, run, json_true());
				if (json_is_string(json_object_get(origin,
				    "cycle")))
					json_object_set(p, "cycle",
					    json_object_get(origin, "cycle"));
			}
			json_decref(origin);
		}
		if (json_array_size(runs) > 0)
			json_array_append_new(*out, json_pack("{s:O, s:O, s:O?, "
			    "s:o}", "snapshot", json_object_get(p, "snapshot"),
			    "published", json_object_get(p, "published"),
			    "cycle", json_object_get(p, "cycle"), "runs", runs));
		else
			json_decref(runs);
	}
out:
	json_decref(pubs);
	json_decref(seen);
	if (err != NULL) {
		json_decref(*out);
		*out = NULL;
	}
	return err;
}

struct werr *
store_regress_alerts(json_t **out, struct store *store, const char *state,
    const char *engine, int open_only)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT " ALERT_COLUMNS " FROM "
	    "regression_alerts WHERE (?1 IS NULL OR state = ?1) AND (?2 IS "
	    "NULL OR engine = ?2) AND (?3 = 0 OR state IN ('untriaged', "
	    "'acknowledged')) ORDER BY id")) != NULL)
		return err;
	store_bind_text(st, 1, state);
	store_bind_text(st, 2, engine);
	sqlite3_bind_int(st, 3, open_only);
	return store_rows_json(out, store, st, alert_json_cols,
	    "read regression alerts");
}

struct werr *
store_regress_alert(json_t **out, struct store *store, int64_t id)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *tr = NULL;

	if ((err = store_prepare(store, &st, "SELECT " ALERT_COLUMNS " FROM "
	    "regression_alerts WHERE id = ?1")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	if ((err = store_row_json(out, store, st, alert_json_cols,
	    "read regression alert")) != NULL || *out == NULL)
		return err;
	if ((err = store_prepare(store, &st, "SELECT time, from_state AS "
	    "\"from\", to_state AS \"to\", who, reason FROM "
	    "regression_transitions WHERE alert_id = ?1 ORDER BY id")) == NULL) {
		sqlite3_bind_int64(st, 1, id);
		err = store_rows_json(&tr, store, st, NULL,
		    "read regression transitions");
	}
	if (err != NULL) {
		json_decref(*out);
		*out = NULL;
		return err;
	}
	json_object_set_new(*out, "transitions", tr);
	return NULL;
}

static struct werr *
transition_row(struct store *store, int64_t id, const char *from,
    const char *to, const char *who, const char *reason, const char *now)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "INSERT INTO "
	    "regression_transitions (alert_id, time, from_state, to_state, "
	    "who, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, from);
	store_bind_text(st, 4, to);
	store_bind_text(st, 5, who);
	store_bind_text(st, 6, reason);
	return store_step_done(store, st, "insert regression transition");
}

static struct werr *
journal(struct store *store, const char *kind, int64_t id, json_t *body)
{
	char *subject = xasprintf("%lld", (long long)id);
	struct werr *err;

	err = journal_append(store, kind, subject, body, NULL);
	free(subject);
	return err;
}

struct werr *
store_regress_insert(struct store *store, const json_t *a, const char *who,
    const char *reason, int64_t *id)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *body;
	char now[40];

	utc_now_iso(now, sizeof(now));
	*id = 0;
	if ((err = store_prepare(store, &st, "INSERT OR IGNORE INTO "
	    "regression_alerts "
	    "(created, updated, cycle, round, run_id, last_cycle, engine, "
	    "model, split, concurrency, metric, before_value, after_value, "
	    "change_pct, p_value, state, record) VALUES (?1, ?1, ?2, ?3, ?4, "
	    "?2, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'untriaged', ?14)"))
	    != NULL)
		return err;
	store_bind_text(st, 1, now);
	store_bind_text(st, 2, jsonget_str(a, "cycle"));
	sqlite3_bind_int64(st, 3, jsonget_int(a, "round"));
	store_bind_text(st, 4, jsonget_str(a, "run_id"));
	store_bind_text(st, 5, jsonget_str(a, "engine"));
	store_bind_text(st, 6, jsonget_str(a, "model"));
	store_bind_text(st, 7, jsonget_str(a, "split"));
	sqlite3_bind_int64(st, 8, jsonget_int(a, "concurrency"));
	store_bind_text(st, 9, jsonget_str(a, "metric"));
	sqlite3_bind_double(st, 10, json_number_value(json_object_get(a,
	    "before")));
	sqlite3_bind_double(st, 11, json_number_value(json_object_get(a,
	    "after")));
	sqlite3_bind_double(st, 12, json_number_value(json_object_get(a,
	    "change_pct")));
	sqlite3_bind_double(st, 13, json_number_value(json_object_get(a,
	    "p_value")));
	store_bind_json(st, 14, json_object_get(a, "record"));
	if ((err = store_step_done(store, st, "insert regression alert")) != NULL)
		return err;
	if (sqlite3_changes(store_db(store)) == 0)
		return NULL;	/* this run alerted the series already */
	*id = sqlite3_last_insert_rowid(store_db(store));
	if ((err = transition_row(store, *id, NULL, "untriaged", who, reason,
	    now)) != NULL)
		return err;
	body = json_deep_copy(a);
	json_object_set_new(body, "alert", json_integer(*id));
	json_object_set_new(body, "state", json_string("untriaged"));
	json_object_set_new(body, "who", json_string(who));
	json_object_set_new(body, "why", json_string(reason));
	err = journal(store, "regression.opened", *id, body);
	json_decref(body);
	return err;
}

struct werr *
store_regress_seen(struct store *store, int64_t id, const char *cycle,
    const json_t *seen)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *body;
	char now[40];

	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "UPDATE regression_alerts SET "
	    "updated = ?2, last_cycle = ?3, record = json_set(record, "
	    "'$.seen', json_insert(coalesce(json_extract(record, '$.seen'), "
	    "json('[]')), '$[#]', json(?4))) WHERE id = ?1")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, cycle);
	store_bind_json(st, 4, seen);
	if ((err = store_step_done(store, st, "update regression alert")) != NULL)
		return err;
	body = json_pack("{s:I, s:s, s:O}", "alert", (json_int_t)id, "cycle",
	    cycle, "seen", seen);
	err = journal(store, "regression.seen", id, body);
	json_decref(body);
	return err;
}

struct werr *
store_regress_transition(struct store *store, int64_t id, const char *from,
    const char *to, const char *who, const char *reason)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *body;
	char now[40];
	int changed;

	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "UPDATE regression_alerts SET "
	    "state = ?3, updated = ?4 WHERE id = ?1 AND state = ?2")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, from);
	store_bind_text(st, 3, to);
	store_bind_text(st, 4, now);
	if ((err = store_step_done(store, st, "update regression alert")) != NULL)
		return err;
	changed = sqlite3_changes(store_db(store));
	if (changed == 0)
		return werr_new(WEXIT_INPUT, "regression alert %lld is no longer "
		    "%s", (long long)id, from);
	if ((err = transition_row(store, id, from, to, who, reason, now)) != NULL)
		return err;
	body = json_pack("{s:I, s:s, s:s, s:s, s:s}", "alert", (json_int_t)id,
	    "from", from, "to", to, "who", who, "reason", reason);
	err = journal(store, "regression.state", id, body);
	json_decref(body);
	return err;
}
