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

/* A query with one text parameter (NULL: none) into an array of rows. */
struct werr *sr_query_rows(struct store *store, const char *sql,
    const char *param, json_t **out);
/* The first column of the first row as a string (NULL if no row). */
struct werr *sr_query_string(struct store *store, const char *sql,
    const char *param, char **out);

#endif
