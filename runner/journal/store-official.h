/*
 * store-official.h - the table of moves of the official branch
 * (official_ops, migration 4 of store-migrations.c): one row per move, written as an
 * intent before the ref moves and settled after. The one place that knows
 * its SQL.
 *
 * These functions only read and write rows inside the caller's
 * transaction; official.c decides what a row means. Never prints.
 */
#ifndef WARDEN_STORE_OFFICIAL_H
#define WARDEN_STORE_OFFICIAL_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

#define STORE_OFFICIAL_SCHEMA \
	"CREATE TABLE official_ops (" \
	"  id INTEGER PRIMARY KEY," \
	"  kind TEXT NOT NULL," \
	"  op TEXT NOT NULL," \
	"  ref TEXT NOT NULL," \
	"  old_tip TEXT NOT NULL," \
	"  new_tip TEXT NOT NULL," \
	"  state TEXT NOT NULL DEFAULT 'intent'" \
	"    CHECK (state IN ('intent', 'done', 'rolled-back'))," \
	"  created TEXT NOT NULL," \
	"  finished TEXT," \
	"  outcome TEXT NOT NULL" \
	");" \
	"CREATE INDEX official_ops_open ON official_ops(state, id);"

/* A move about to happen; strings are not copied. */
struct store_official_op {
	const char *kind;	/* review.approve, journal.export, publish */
	const char *op;		/* the operation's id within its kind */
	const char *ref;	/* refs/heads/official */
	const char *old_tip;	/* hex */
	const char *new_tip;	/* hex */
	const char *created;	/* UTC ISO time */
	const char *outcome;	/* JSON text: what settling it records */
};

/* Record the intent; *id_out is its row id. */
struct werr *store_official_intent(struct store *store,
    const struct store_official_op *op, int64_t *id_out);
/* The intents not yet settled, oldest first, as an array of objects
 * named by their columns (outcome as stored: JSON text). */
struct werr *store_official_open_ops(struct store *store, json_t **out);
/* Settle intent id as "done" or "rolled-back". */
struct werr *store_official_settle(struct store *store, int64_t id,
    const char *state, const char *finished);

#endif
