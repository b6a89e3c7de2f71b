/*
 * store-results-private.h - helpers the results area's SQL files
 * (store-results.c, store-fidelity.c) share. Nothing else includes it.
 */
#ifndef WARDEN_STORE_RESULTS_PRIVATE_H
#define WARDEN_STORE_RESULTS_PRIVATE_H

#include <sqlite3.h>
#include <jansson.h>

#include "error.h"
#include "store.h"

/* Bind a JSON value as compact sorted text (NULL stays NULL). */
void sr_bind_json(sqlite3_stmt *st, int i, const json_t *v);
/* Roll back on err (returned), else commit. */
struct werr *sr_finish_tx(struct store *store, struct werr *err);
/* The current row as an object named by its columns (JSON columns
 * parsed). */
json_t *sr_row_json(sqlite3_stmt *st);
/* A query with one text parameter (NULL: none) into an array of rows. */
struct werr *sr_query_rows(struct store *store, const char *sql,
    const char *param, json_t **out);
/* The first column of the first row as a string (NULL if no row). */
struct werr *sr_query_string(struct store *store, const char *sql,
    const char *param, char **out);

#endif
