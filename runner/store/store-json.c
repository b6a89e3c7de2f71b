/*
 * store-json.c - JSON in and out of the store's rows. See store-json.h.
 *
 * Must never run SQL of its own, nor know any table: the store*.c files
 * say which columns hold JSON.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "store-json.h"
#include "util.h"

void
store_bind_json(sqlite3_stmt *st, int i, const json_t *v)
{
	char *s;

	if (v == NULL) {
		sqlite3_bind_null(st, i);
		return;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	sqlite3_bind_text(st, i, s != NULL ? s : "null", -1, SQLITE_TRANSIENT);
	free(s);
}

static int
is_json_column(const char *const *json_cols, const char *name)
{
	size_t k;

	for (k = 0; json_cols != NULL && json_cols[k] != NULL; k++)
		if (strcmp(json_cols[k], name) == 0)
			return 1;
	return 0;
}

json_t *
store_row_object(sqlite3_stmt *st, const char *const *json_cols)
{
	json_t *o = json_object(), *v;
	const char *name, *text;
	int i, n = sqlite3_column_count(st);

	for (i = 0; i < n; i++) {
		name = sqlite3_column_name(st, i);
		switch (sqlite3_column_type(st, i)) {
		case SQLITE_INTEGER:
			v = json_integer(sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			v = json_real(sqlite3_column_double(st, i));
			break;
		case SQLITE_NULL:
			v = json_null();
			break;
		default:
			text = (const char *)sqlite3_column_text(st, i);
			v = is_json_column(json_cols, name) ? json_loads(text,
			    JSON_DECODE_ANY, NULL) : json_text(text);
			break;
		}
		json_object_set_new(o, name, v != NULL ? v : json_null());
	}
	return o;
}

struct werr *
store_rows_json(json_t **out, struct store *store, sqlite3_stmt *st,
    const char *const *json_cols, const char *what)
{
	json_t *rows = json_array();
	int rc;

	*out = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(rows, store_row_object(st, json_cols));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(rows);
		return store_error(store, what);
	}
	*out = rows;
	return NULL;
}

struct werr *
store_row_json(json_t **out, struct store *store, sqlite3_stmt *st,
    const char *const *json_cols, const char *what)
{
	json_t *rows = NULL;
	struct werr *err;

	*out = NULL;
	if ((err = store_rows_json(&rows, store, st, json_cols, what)) != NULL)
		return err;
	if (json_array_size(rows) > 0)
		*out = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	return NULL;
}

struct werr *
store_tx_end(struct store *store, struct werr *err)
{
	if (err != NULL) {
		store_rollback(store);
		return err;
	}
	return store_commit(store);
}
