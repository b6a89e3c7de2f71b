/*
 * journal.h - the append-only, hash-chained maintenance journal.
 *
 * Each entry: seq, UTC time, cycle id, kind, subject, JSON body, prev_hash
 * and hash = sha256(prev_hash || canonical JSON of the entry), where the
 * canonical JSON is {"body","cycle","kind","seq","subject","time"} with
 * keys sorted and no whitespace (jansson JSON_COMPACT|JSON_SORT_KEYS).
 * journal_append() must be called inside store_begin()/store_commit() so an
 * entry lands together with the state change it records.
 */
#ifndef WARDEN_JOURNAL_H
#define WARDEN_JOURNAL_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct store;

struct journal_entry {
	int64_t seq;
	char *time;
	char *cycle;
	char *kind;
	char *subject;
	json_t *body;
	char *prev_hash;
	char *hash;
};

struct journal_filter {
	const char *since;	/* UTC time prefix compare, inclusive; NULL any */
	const char *cycle;	/* NULL any */
	const char *kind;	/* exact, or prefix ending in '.'; NULL any */
	int64_t after_seq;	/* entries with seq > after_seq */
};

/* Append an entry; body is borrowed. seq_out may be NULL. */
struct werr *journal_append(struct store *store, const char *kind,
    const char *subject, json_t *body, int64_t *seq_out);

/* Call fn for each matching entry in seq order; fn returns non-NULL to stop. */
struct werr *journal_each(struct store *store, const struct journal_filter *f,
    struct werr *(*fn)(void *arg, const struct journal_entry *e), void *arg);

/* Verify the chain. *broken_seq is 0 when intact, else the first seq whose
 * row was edited, deleted, inserted or reordered; why says how. */
struct werr *journal_verify(struct store *store, int64_t *broken_seq,
    char **why, int64_t *count);

/* The canonical JSON of an entry (without hashes); caller frees. */
char *journal_canonical(const struct journal_entry *e);
/* hash_out: 65 bytes. */
void journal_hash(const char *prev_hash, const char *canonical, char *hash_out);
/* The entry as a JSON object (with hashes); new reference. */
json_t *journal_entry_json(const struct journal_entry *e);

/* Write journals/CYCLE.md for each cycle (or just cycle) and append new
 * entries to journals/journal.jsonl; idempotent. files_out counts files written. */
struct werr *journal_export(struct store *store, const char *repo_root,
    const char *cycle, int *entries_out);

/* Check that every entry in REPO/journals/journal.jsonl is still in the
 * database unchanged; *broken_seq 0 when so. */
struct werr *journal_verify_export(struct store *store, const char *repo_root,
    int64_t *broken_seq, char **why);

#endif
