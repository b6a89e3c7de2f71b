/*
 * store-campaign.c - the SQL of the campaign tables. See store-campaign.h.
 *
 * Every write happens between store_begin() and store_commit(), under
 * the writer lock, and every state change (run created, sweep begun,
 * sweep finished, sweep discarded, run finished) carries its journal
 * entry in the same transaction. Request rows are plain inserts, written
 * in batches by the writer thread in store-campaign-writer.c. The
 * queries are in store-campaign-read.c. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "journal.h"
#include "machine-load.h"
#include "store-campaign.h"
#include "store-json.h"
#include "util.h"

static void
bind_ns(sqlite3_stmt *st, int i, uint64_t ns)
{
	if (ns == 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, (sqlite3_int64)ns);
}

/* Does the statement compile (the tables and columns it names exist)? */
static int
sql_compiles(struct store *store, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int ok;

	ok = sqlite3_prepare_v2(store_db(store), sql, -1, &st, NULL) ==
	    SQLITE_OK;
	sqlite3_finalize(st);
	return ok;
}

struct werr *
store_campaign_ensure(struct store *store)
{
	struct werr *err;

	if (sql_compiles(store, "SELECT connect_ms FROM campaign_requests "
	    "LIMIT 0") && sql_compiles(store, "SELECT 1 FROM campaign_memory "
	    "LIMIT 0"))
		return NULL;
	if ((err = store_begin(store)) != NULL)
		return err;
	err = store_exec(store, STORE_CAMPAIGN_SCHEMA);
	if (err == NULL && !sql_compiles(store, "SELECT connect_ms FROM "
	    "campaign_requests LIMIT 0"))
		err = store_exec(store, STORE_CAMPAIGN_SCHEMA_5);
	return store_tx_end(store, err);
}

struct werr *
store_campaign_run_create(struct store *store, const char *run_id,
    const char *machine, json_t *grid, json_t *provenance)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32];
	json_t *body;
	int found = 0;

	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_campaign_run_get(store, run_id, &found, NULL, NULL,
	    NULL)) != NULL)
		return store_tx_end(store, err);
	if (found)
		return store_tx_end(store, werr_new(WEXIT_INPUT,
		    "run '%s' exists; continue it with --resume", run_id));
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "INSERT INTO campaign_runs (run_id, "
	    "created, machine, state, grid, provenance) VALUES "
	    "(?1, ?2, ?3, 'running', ?4, ?5)")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, run_id);
	store_bind_text(st, 2, now);
	store_bind_text(st, 3, machine);
	store_bind_json(st, 4, grid);
	store_bind_json(st, 5, provenance);
	err = store_step_done(store, st, "insert run");
	if (err == NULL) {
		body = json_pack("{s:s, s:s, s:O}", "run_id", run_id,
		    "machine", machine, "grid", grid);
		err = journal_append(store, "campaign.run.start", run_id, body,
		    NULL);
		json_decref(body);
	}
	return store_tx_end(store, err);
}

struct werr *
store_campaign_run_finish(struct store *store, const char *run_id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32];
	json_t *body;

	if ((err = store_begin(store)) != NULL)
		return err;
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "UPDATE campaign_runs SET state = "
	    "'done', finished = ?2 WHERE run_id = ?1")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, run_id);
	store_bind_text(st, 2, now);
	err = store_step_done(store, st, "finish run");
	if (err == NULL) {
		body = json_pack("{s:s}", "run_id", run_id);
		err = journal_append(store, "campaign.run.finish", run_id, body,
		    NULL);
		json_decref(body);
	}
	return store_tx_end(store, err);
}

static char *
sweep_subject(sqlite3_stmt *st, int first)
{
	return xasprintf("%s/%s/%s/c%d",
	    (const char *)sqlite3_column_text(st, first),
	    (const char *)sqlite3_column_text(st, first + 1),
	    (const char *)sqlite3_column_text(st, first + 2),
	    sqlite3_column_int(st, first + 3));
}

struct werr *
store_campaign_discard_unfinished(struct store *store, const char *run_id,
    int *n)
{
	sqlite3_stmt *st = NULL, *del = NULL;
	struct werr *err;
	json_t *body;
	char *subject;

	*n = 0;
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "SELECT id, seq, attempt, engine, "
	    "model, split, concurrency FROM campaign_sweeps WHERE run_id = ?1 "
	    "AND state = 'running' ORDER BY seq")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, run_id);
	while (err == NULL && sqlite3_step(st) == SQLITE_ROW) {
		subject = sweep_subject(st, 3);
		body = json_pack("{s:s, s:i, s:i, s:I}", "run_id", run_id,
		    "seq", sqlite3_column_int(st, 1),
		    "attempt", sqlite3_column_int(st, 2),
		    "requests_discarded", (json_int_t)0);
		err = store_prepare(store, &del, "DELETE FROM campaign_sweeps "
		    "WHERE id = ?1");
		if (err == NULL) {
			sqlite3_bind_int64(del, 1, sqlite3_column_int64(st, 0));
			err = store_step_done(store, del, "discard sweep");
		}
		if (err == NULL) {
			json_object_set_new(body, "requests_discarded",
			    json_integer(sqlite3_changes(store_db(store))));
			err = journal_append(store, "campaign.sweep.discard",
			    subject, body, NULL);
		}
		json_decref(body);
		free(subject);
		(*n)++;
	}
	sqlite3_finalize(st);
	return store_tx_end(store, err);
}

/* Attempts so far of (run_id, seq), counted from the journal. */
static int
sweep_attempts(struct store *store, const char *run_id, int seq)
{
	sqlite3_stmt *st = NULL;
	int n = 0;

	if (sqlite3_prepare_v2(store_db(store), "SELECT count(*) FROM journal "
	    "WHERE kind = 'campaign.sweep.start' "
	    "AND json_extract(body, '$.run_id') = ?1 "
	    "AND json_extract(body, '$.seq') = ?2", -1, &st, NULL) != SQLITE_OK)
		return 0;
	store_bind_text(st, 1, run_id);
	sqlite3_bind_int(st, 2, seq);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

struct werr *
store_campaign_sweep_begin(struct store *store,
    const struct store_sweep_key *k, int64_t *sweep_id)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32], *subject;
	json_t *body;
	int attempt;

	if ((err = store_begin(store)) != NULL)
		return err;
	attempt = sweep_attempts(store, k->run_id, k->seq) + 1;
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "INSERT INTO campaign_sweeps (run_id, "
	    "seq, engine, model, split, concurrency, attempt, state, started, "
	    "total, log_path, provenance) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
	    "'running', ?8, ?9, ?10, ?11)")) != NULL)
		return store_tx_end(store, err);
	store_bind_text(st, 1, k->run_id);
	sqlite3_bind_int(st, 2, k->seq);
	store_bind_text(st, 3, k->engine);
	store_bind_text(st, 4, k->model);
	store_bind_text(st, 5, k->split);
	sqlite3_bind_int(st, 6, (int)k->concurrency);
	sqlite3_bind_int(st, 7, attempt);
	store_bind_text(st, 8, now);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)k->total);
	store_bind_text(st, 10, k->log_path);
	store_bind_json(st, 11, k->provenance);
	if ((err = store_step_done(store, st, "insert sweep")) != NULL)
		return store_tx_end(store, err);
	*sweep_id = sqlite3_last_insert_rowid(store_db(store));
	subject = xasprintf("%s/%s/%s/c%u", k->engine, k->model, k->split,
	    k->concurrency);
	body = json_pack("{s:s, s:i, s:i, s:I}", "run_id", k->run_id,
	    "seq", k->seq, "attempt", attempt, "sweep_id",
	    (json_int_t)*sweep_id);
	err = journal_append(store, "campaign.sweep.start", subject, body,
	    NULL);
	json_decref(body);
	free(subject);
	return store_tx_end(store, err);
}

static void
bind_ms(sqlite3_stmt *st, int i, uint64_t from, uint64_t to)
{
	if (from == 0 || to == 0 || to < from)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, (double)(to - from) / 1e6);
}

/* The gaps between successive token times as a JSON array of ns (NULL
 * for fewer than two tokens). */
static void
bind_gaps(sqlite3_stmt *st, int i, const uint64_t *t, size_t n)
{
	json_t *a;
	size_t k;

	if (t == NULL || n < 2) {
		sqlite3_bind_null(st, i);
		return;
	}
	a = json_array();
	for (k = 1; k < n; k++)
		json_array_append_new(a, json_integer((json_int_t)(t[k] -
		    t[k - 1])));
	store_bind_json(st, i, a);
	json_decref(a);
}

/* Insert one request row with a prepared statement. */
static struct werr *
request_insert(struct store *store, sqlite3_stmt *st, int64_t sweep_id,
    const struct loadgen_record *r, const char *prompt_id)
{
	char wall[32];
	int64_t wall_ns;

	wall_ns = r->anchor_realtime_ns +
	    ((int64_t)r->submit_ns - (int64_t)r->anchor_mono_ns);
	utc_iso_from_time(wall, sizeof(wall), (time_t)(wall_ns / 1000000000LL));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, sweep_id);
	sqlite3_bind_int(st, 2, r->warmup ? 1 : 0);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)r->index);
	store_bind_text(st, 4, prompt_id);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)r->submit_ns);
	bind_ns(st, 6, r->first_token_ns);
	bind_ns(st, 7, r->last_token_ns);
	bind_ns(st, 8, r->end_ns);
	store_bind_text(st, 9, wall);
	bind_ms(st, 10, r->submit_ns, r->first_token_ns);
	bind_ms(st, 11, r->submit_ns, r->last_token_ns);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)r->chunks);
	sqlite3_bind_int64(st, 13, (sqlite3_int64)r->token_events);
	sqlite3_bind_int64(st, 14, (sqlite3_int64)r->coalesced_events);
	sqlite3_bind_int64(st, 15, (sqlite3_int64)r->max_events_per_read);
	if (r->prompt_tokens >= 0)
		sqlite3_bind_int64(st, 16, r->prompt_tokens);
	sqlite3_bind_int64(st, 17, r->completion_tokens);
	store_bind_text(st, 18, loadgen_usage_source_name(r->usage_source));
	sqlite3_bind_int64(st, 19, (sqlite3_int64)r->content_bytes);
	sqlite3_bind_int64(st, 20, (sqlite3_int64)r->reasoning_bytes);
	sqlite3_bind_int64(st, 21, (sqlite3_int64)r->tool_calls);
	store_bind_text(st, 22, r->finish_reason);
	if (r->http_status > 0)
		sqlite3_bind_int64(st, 23, r->http_status);
	store_bind_text(st, 24, loadgen_outcome_name(r->outcome));
	store_bind_text(st, 25, r->error);
	if (r->connect_ns != 0 || r->new_connection || r->http_status > 0)
		sqlite3_bind_double(st, 26, (double)r->connect_ns / 1e6);
	sqlite3_bind_int(st, 27, r->new_connection ? 1 : 0);
	bind_gaps(st, 28, r->token_ns, r->ntoken_ns);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_error(store, "insert request");
	return NULL;
}

struct werr *
store_campaign_requests_add(struct store *store, int64_t sweep_id,
    const struct loadgen_record *const *recs, const char *const *prompt_ids,
    size_t n)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	size_t i;

	if (n == 0)
		return NULL;
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_prepare(store, &st, "INSERT INTO campaign_requests ("
	    "sweep_id, warmup, idx, prompt_id, submit_ns, first_token_ns, "
	    "last_token_ns, end_ns, submit_wall, ttft_ms, e2el_ms, chunks, "
	    "token_events, coalesced_events, max_events_per_read, "
	    "prompt_tokens, completion_tokens, usage_source, content_bytes, "
	    "reasoning_bytes, tool_calls, finish_reason, http_status, outcome, "
	    "error, connect_ms, new_connection, itl_ns) VALUES (?1, ?2, ?3, "
	    "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
	    "?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)"))
	    != NULL)
		return store_tx_end(store, err);
	for (i = 0; i < n && err == NULL; i++)
		err = request_insert(store, st, sweep_id, recs[i],
		    prompt_ids[i] != NULL ? prompt_ids[i] : "");
	sqlite3_finalize(st);
	return store_tx_end(store, err);
}

struct werr *
store_campaign_request_add(struct store *store, int64_t sweep_id,
    const struct loadgen_record *r, const char *prompt_id)
{
	return store_campaign_requests_add(store, sweep_id, &r, &prompt_id, 1);
}

static struct werr *
memory_add(struct store *store, int64_t sweep_id, const struct memsampler *m)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	size_t i;

	if ((err = store_prepare(store, &st, "INSERT OR IGNORE INTO campaign_memory "
	    "(sweep_id, t_ns, system_used_bytes, engine_bytes, engine_procs) "
	    "VALUES (?1, ?2, ?3, ?4, ?5)")) != NULL)
		return err;
	for (i = 0; i < m->n && err == NULL; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, sweep_id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)m->samples[i].t_ns);
		sqlite3_bind_int64(st, 3,
		    (sqlite3_int64)m->samples[i].system_used);
		sqlite3_bind_int64(st, 4,
		    (sqlite3_int64)m->samples[i].engine_rss);
		sqlite3_bind_int(st, 5, (int)m->samples[i].engine_procs);
		if (sqlite3_step(st) != SQLITE_DONE)
			err = store_error(store, "insert memory sample");
	}
	sqlite3_finalize(st);
	return err;
}

static void
bind_bytes(sqlite3_stmt *st, int i, uint64_t v, int have)
{
	if (have)
		sqlite3_bind_int64(st, i, (sqlite3_int64)v);
	else
		sqlite3_bind_null(st, i);
}

struct werr *
store_campaign_sweep_finish(struct store *store, int64_t sweep_id,
    const struct store_sweep_result *res)
{
	sqlite3_stmt *st = NULL;
	struct werr *err;
	char now[32], *subject = NULL;
	json_t *body;
	const struct memsampler *m = res->memory;
	int have = m != NULL && m->n > 0;

	if ((err = store_begin(store)) != NULL)
		return err;
	if (m != NULL && (err = memory_add(store, sweep_id, m)) != NULL)
		return store_tx_end(store, err);
	if ((err = store_prepare(store, &st, "SELECT run_id, seq, engine, model, "
	    "split, concurrency FROM campaign_sweeps WHERE id = ?1 AND "
	    "state = 'running'")) != NULL)
		return store_tx_end(store, err);
	sqlite3_bind_int64(st, 1, sweep_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return store_tx_end(store, werr_new(WEXIT_ENV,
		    "sweep %lld is not running", (long long)sweep_id));
	}
	subject = sweep_subject(st, 2);
	body = json_pack("{s:s, s:i, s:s, s:I, s:I}",
	    "run_id", (const char *)sqlite3_column_text(st, 0),
	    "seq", sqlite3_column_int(st, 1), "outcome", res->outcome,
	    "completed", (json_int_t)res->completed,
	    "failed", (json_int_t)res->failed);
	sqlite3_finalize(st);
	utc_now_iso(now, sizeof(now));
	if ((err = store_prepare(store, &st, "UPDATE campaign_sweeps SET state = "
	    "'done', outcome = ?2, detail = ?3, served_model = ?4, "
	    "finished = ?5, completed = ?6, failed = ?7, summary = ?8, "
	    "peak_system_bytes = ?9, peak_engine_bytes = ?10, "
	    "system_total_bytes = ?11, gpu_hint_bytes = ?12, "
	    "log_path = coalesce(?13, log_path), "
	    "provenance = json_set(CASE WHEN ?14 IS NULL THEN provenance ELSE "
	    "json_set(provenance, '$.engine_argv', ?14) END, "
	    "'$.machine_load', json(coalesce(?15, 'null'))) "
	    "WHERE id = ?1")) != NULL)
		goto out;
	sqlite3_bind_int64(st, 1, sweep_id);
	store_bind_text(st, 2, res->outcome);
	store_bind_text(st, 3, res->detail);
	store_bind_text(st, 4, res->served_model);
	store_bind_text(st, 5, now);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)res->completed);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)res->failed);
	store_bind_json(st, 8, res->summary);
	bind_bytes(st, 9, have ? m->peak_system : 0, have);
	bind_bytes(st, 10, have ? m->peak_engine : 0, have);
	bind_bytes(st, 11, have ? m->system_total : 0, have);
	bind_bytes(st, 12, res->gpu_hint, res->gpu_hint != 0);
	store_bind_text(st, 13, res->log_path);
	store_bind_text(st, 14, res->engine_argv);
	store_bind_json(st, 15, res->load);
	if (res->load != NULL) {
		char *warn = machine_load_warning(res->load);

		if (warn != NULL)
			json_object_set_new(body, "warning", json_sprintf("the "
			    "machine was not quiet while it measured: %s",
			    warn));
		free(warn);
	}
	if ((err = store_step_done(store, st, "finish sweep")) != NULL)
		goto out;
	err = journal_append(store, "campaign.sweep.finish", subject, body,
	    NULL);
out:
	json_decref(body);
	free(subject);
	return store_tx_end(store, err);
}
