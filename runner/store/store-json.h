/*
 * store-json.h - the one way the store*.c files move JSON in and out of
 * sqlite: a value bound as column text, a row read back as an object
 * named by its columns, and the end of a transaction the caller began.
 * For store*.c only (SQL lives there); never runs SQL of its own.
 */
#ifndef WARDEN_STORE_JSON_H
#define WARDEN_STORE_JSON_H

#include <jansson.h>
#include <sqlite3.h>

#include "error.h"
#include "store.h"

/* Bind v as compact JSON text with sorted keys (any value; NULL binds
 * SQL NULL). */
void store_bind_json(sqlite3_stmt *st, int i, const json_t *v);

/* The current row of st as an object named by its columns: SQL NULL as
 * null, integers and reals as numbers, text as a string (bytes that are
 * not UTF-8 replaced, see json_text), except the columns named in
 * json_cols (NULL-terminated, or NULL for none), whose text is JSON and
 * is parsed (null when it does not parse). New reference. */
json_t *store_row_object(sqlite3_stmt *st, const char *const *json_cols);

/* Every row of st (bound, not yet stepped) as an array of
 * store_row_object()s; finalizes st. A failed step is an error about
 * what ("read reviews"). */
struct werr *store_rows_json(json_t **out, struct store *store,
    sqlite3_stmt *st, const char *const *json_cols, const char *what);

/* The first such row, or *out NULL when st gives none; finalizes st. */
struct werr *store_row_json(json_t **out, struct store *store,
    sqlite3_stmt *st, const char *const *json_cols, const char *what);

/* Finish a transaction the caller began with store_begin(): commit when
 * err is NULL, else roll back and return err. */
struct werr *store_tx_end(struct store *store, struct werr *err);

#endif
