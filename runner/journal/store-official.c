/*
 * store-official.c - rows of official_ops. See store-official.h.
 *
 * Plain statements inside whatever transaction the caller holds. Must
 * never begin or end a transaction, never write the journal, never touch
 * git.
 */
#include "config.h"

#include <string.h>

#include <sqlite3.h>

#include "store-official.h"
#include "util.h"

struct werr *
store_official_intent(struct store *store, const struct store_official_op *op,
    int64_t *id_out)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "INSERT INTO official_ops (kind, "
	    "op, ref, old_tip, new_tip, created, outcome) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?)")) != NULL)
		return err;
	store_bind_text(st, 1, op->kind);
	store_bind_text(st, 2, op->op);
	store_bind_text(st, 3, op->ref);
	store_bind_text(st, 4, op->old_tip);
	store_bind_text(st, 5, op->new_tip);
	store_bind_text(st, 6, op->created);
	store_bind_text(st, 7, op->outcome);
	if ((err = store_step_done(store, st, "record the intent")) != NULL)
		return err;
	*id_out = sqlite3_last_insert_rowid(store_db(store));
	return NULL;
}

struct werr *
store_official_open_ops(struct store *store, json_t **out)
{
	sqlite3_stmt *st;
	struct werr *err;
	json_t *arr;
	int rc, i;

	*out = NULL;
	if ((err = store_prepare(store, &st, "SELECT id, kind, op, ref, "
	    "old_tip, new_tip, created, outcome FROM official_ops WHERE "
	    "state = 'intent' ORDER BY id")) != NULL)
		return err;
	arr = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();

		json_object_set_new(o, "id",
		    json_integer(sqlite3_column_int64(st, 0)));
		for (i = 1; i < sqlite3_column_count(st); i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);

			json_object_set_new(o, sqlite3_column_name(st, i),
			    json_string(v != NULL ? v : ""));
		}
		json_array_append_new(arr, o);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		return store_error(store, "read official_ops");
	}
	*out = arr;
	return NULL;
}

struct werr *
store_official_settle(struct store *store, int64_t id, const char *state,
    const char *finished)
{
	sqlite3_stmt *st;
	struct werr *err;

	if ((err = store_prepare(store, &st, "UPDATE official_ops SET state = ?, "
	    "finished = ? WHERE id = ? AND state = 'intent'")) != NULL)
		return err;
	store_bind_text(st, 1, state);
	store_bind_text(st, 2, finished);
	sqlite3_bind_int64(st, 3, id);
	return store_step_done(store, st, "settle the intent");
}
