/*
 * store-review.c - the review queue's rows in sqlite. See store-review.h.
 *
 * Plain statements over reviews and review_evidence, run inside whatever
 * transaction the caller holds. Must never begin or end a transaction,
 * never write the journal, and never decide what a state change means.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store-json.h"
#include "store-review.h"
#include "util.h"

#define REVIEW_COLUMNS "id, status, source, author, note, created, " \
	"base_commit, commit_id, decided, decided_by, comment, merged_commit"

static char *
column_strdup(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s != NULL ? xstrdup(s) : NULL;
}

struct werr *
store_review_insert(struct store *store, const struct store_review_new *r,
    int64_t *id_out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "INSERT INTO reviews (source, author, "
	    "note, created, base_commit, commit_id, patch, gate) VALUES "
	    "(?, ?, ?, ?, ?, '', ?, ?)")) != NULL)
		return err;
	store_bind_text(st, 1, r->source);
	store_bind_text(st, 2, r->author);
	store_bind_text(st, 3, r->note);
	store_bind_text(st, 4, r->created);
	store_bind_text(st, 5, r->base_commit);
	sqlite3_bind_text(st, 6, r->patch, (int)r->len, SQLITE_TRANSIENT);
	store_bind_text(st, 7, r->gate);
	if ((err = store_step_done(store, st, "queue the review")) != NULL)
		return err;
	*id_out = sqlite3_last_insert_rowid(store_db(store));
	return NULL;
}

struct werr *
store_review_set_commit(struct store *store, int64_t id, const char *commit)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "UPDATE reviews SET commit_id = ? "
	    "WHERE id = ?")) != NULL)
		return err;
	store_bind_text(st, 1, commit);
	sqlite3_bind_int64(st, 2, id);
	return store_step_done(store, st, "record the commit");
}

struct werr *
store_review_get(struct store *store, int64_t id, int *found,
    struct store_review *out)
{
	sqlite3_stmt *st;
	struct werr *err;

	*found = 0;
	memset(out, 0, sizeof(*out));
	if ((err = store_prepare(store, &st, "SELECT status, patch, commit_id, "
	    "source FROM reviews WHERE id = ?")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*found = 1;
		out->status = column_strdup(st, 0);
		out->patch = column_strdup(st, 1);
		out->commit_id = column_strdup(st, 2);
		out->source = column_strdup(st, 3);
	}
	sqlite3_finalize(st);
	return NULL;
}

void
store_review_free(struct store_review *r)
{
	free(r->status);
	free(r->patch);
	free(r->commit_id);
	free(r->source);
	memset(r, 0, sizeof(*r));
}

struct werr *
store_review_list(struct store *store, const char *status, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT " REVIEW_COLUMNS " FROM reviews "
	    "WHERE ?1 IS NULL OR status = ?1 ORDER BY id")) != NULL)
		return err;
	store_bind_text(st, 1, status);
	return store_rows_json(out, store, st, NULL, "read reviews");
}

struct werr *
store_review_row(struct store *store, int64_t id, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT " REVIEW_COLUMNS ", patch, gate "
	    "FROM reviews WHERE id = ?")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	return store_rows_json(out, store, st, NULL, "read reviews");
}

struct werr *
store_review_evidence(struct store *store, int64_t id, json_t **out)
{
	static const char *const json_cols[] = { "body", NULL };
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "SELECT time, kind, body FROM "
	    "review_evidence WHERE review_id = ? ORDER BY id")) != NULL)
		return err;
	sqlite3_bind_int64(st, 1, id);
	return store_rows_json(out, store, st, json_cols, "read reviews");
}

struct werr *
store_review_decide(struct store *store, int64_t id,
    const struct store_review_decision *d)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "UPDATE reviews SET status = ?, "
	    "decided = ?, decided_by = ?, comment = ?, merged_commit = "
	    "COALESCE(?, merged_commit) WHERE id = ? AND status = "
	    "'pending'")) != NULL)
		return err;
	store_bind_text(st, 1, d->status);
	store_bind_text(st, 2, d->decided);
	store_bind_text(st, 3, d->by);
	store_bind_text(st, 4, d->comment);
	store_bind_text(st, 5, d->merged_commit);
	sqlite3_bind_int64(st, 6, id);
	return store_step_done(store, st, strcmp(d->status, "approved") == 0 ?
	    "approve the review" : "reject the review");
}

struct werr *
store_review_add_evidence(struct store *store, int64_t id, const char *time,
    const char *kind, const char *body, int *found)
{
	sqlite3_stmt *st;
	struct werr *err;

	*found = 0;
	if ((err = store_prepare(store, &st, "INSERT INTO review_evidence "
	    "(review_id, time, kind, body) SELECT id, ?, ?, ? FROM reviews "
	    "WHERE id = ?")) != NULL)
		return err;
	store_bind_text(st, 1, time);
	store_bind_text(st, 2, kind);
	store_bind_text(st, 3, body);
	sqlite3_bind_int64(st, 4, id);
	if ((err = store_step_done(store, st, "attach evidence")) != NULL)
		return err;
	*found = sqlite3_changes(store_db(store)) != 0;
	return NULL;
}
