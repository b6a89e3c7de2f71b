/*
 * journal.c - the hash-chained, append-only maintenance journal: append,
 * query, and the rows verify and export read (journal-verify.c and
 * journal-export.c do the rest). See journal.h for the hash rule. The
 * journal is the record of who did what; nothing here may rewrite a stored
 * entry.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "sha256.h"
#include "store.h"
#include "util.h"

#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"

char *
journal_canonical(const struct journal_entry *e)
{
	json_t *o;
	char *s;

	o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:O}",
	    "seq", (json_int_t)e->seq, "time", e->time, "cycle", e->cycle,
	    "kind", e->kind, "subject", e->subject, "body", e->body);
	if (o == NULL)
		return NULL;
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII |
	    JSON_REAL_PRECISION(17));
	json_decref(o);
	return s;
}

struct werr *
journal_check_entry(const char *kind, const char *subject, json_t *body)
{
	if (!text_is_utf8(kind))
		return werr_new(WEXIT_INPUT, "journal entry kind is not valid "
		    "UTF-8 text");
	if (subject != NULL && !text_is_utf8(subject))
		return werr_new(WEXIT_INPUT, "the subject of journal entry "
		    "'%s' is not valid UTF-8 text", kind);
	if (body == NULL)
		return werr_new(WEXIT_INPUT, "journal entry '%s' cannot be "
		    "built (text that is not valid UTF-8?)", kind);
	return NULL;
}

struct werr *
journal_head(struct store *store, int64_t *seq, char *hash_out)
{
	sqlite3_stmt *st = NULL;
	const char *h;

	*seq = 0;
	memcpy(hash_out, ZERO_HASH, sizeof(ZERO_HASH));
	if (sqlite3_prepare_v2(store_db(store), "SELECT seq, hash FROM journal "
	    "ORDER BY seq DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return store_error(store, "read journal head");
	if (sqlite3_step(st) == SQLITE_ROW) {
		*seq = sqlite3_column_int64(st, 0);
		h = (const char *)sqlite3_column_text(st, 1);
		snprintf(hash_out, SHA256_HEX_LEN + 1, "%s", h != NULL ? h : "");
	}
	sqlite3_finalize(st);
	return NULL;
}

void
journal_hash(const char *prev_hash, const char *canonical, char *hash_out)
{
	struct sha256_ctx *c = sha256_new();

	sha256_update(c, prev_hash, strlen(prev_hash));
	sha256_update(c, canonical, strlen(canonical));
	sha256_final_hex(c, hash_out);
}

json_t *
journal_entry_json(const struct journal_entry *e)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:s, s:O, s:s, s:s}",
	    "seq", (json_int_t)e->seq, "time", e->time, "cycle", e->cycle,
	    "kind", e->kind, "subject", e->subject, "body", e->body,
	    "prev_hash", e->prev_hash, "hash", e->hash);
}

/* body with the bench's root written as "." (json_paths_relative), as
 * given and as the file system names it: the journal is published, and
 * a local path is nobody else's. A new reference. */
static json_t *
body_relative(struct store *store, const json_t *body)
{
	static const char tail[] = "/.warden/warden.db";
	const char *path = store_path(store);
	size_t n = strlen(path);
	char real[PATH_MAX], *root;
	json_t *a, *b;

	if (n <= sizeof(tail) - 1 || strcmp(path + n - (sizeof(tail) - 1),
	    tail) != 0)
		return json_incref((json_t *)body);
	root = xstrndup(path, n - (sizeof(tail) - 1));
	a = json_paths_relative(body, root);
	if (realpath(root, real) != NULL && strcmp(real, root) != 0) {
		b = json_paths_relative(a, real);
		json_decref(a);
		a = b;
	}
	free(root);
	return a;
}

struct werr *
journal_append(struct store *store, const char *kind, const char *subject,
    json_t *body, int64_t *seq_out)
{
	sqlite3 *db = store_db(store);
	sqlite3_stmt *st = NULL;
	struct journal_entry e;
	char prev[SHA256_HEX_LEN + 1] = ZERO_HASH;
	char hash[SHA256_HEX_LEN + 1];
	char now[40];
	char *canon = NULL, *body_text = NULL;
	struct werr *err = NULL;
	json_t *rel;

	if ((err = journal_check_entry(kind, subject, body)) != NULL)
		return err;
	rel = body_relative(store, body);
	body = rel;
	memset(&e, 0, sizeof(e));
	e.seq = 1;
	if (sqlite3_prepare_v2(db, "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1",
	    -1, &st, NULL) != SQLITE_OK) {
		err = store_error(store, "read journal head");
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW) {
		e.seq = sqlite3_column_int64(st, 0) + 1;
		snprintf(prev, sizeof(prev), "%s", (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	st = NULL;
	utc_now_iso(now, sizeof(now));
	e.time = now;
	e.cycle = (char *)store_cycle(store);
	e.kind = (char *)kind;
	e.subject = (char *)(subject != NULL ? subject : "");
	e.body = body;
	canon = journal_canonical(&e);
	body_text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17));
	if (canon == NULL || body_text == NULL) {
		err = werr_new(WEXIT_INPUT, "journal entry '%s' cannot be "
		    "built (its cycle id is not valid UTF-8 text?)", kind);
		goto out;
	}
	journal_hash(prev, canon, hash);
	if (sqlite3_prepare_v2(db, "INSERT INTO journal (seq, time, cycle, kind, "
	    "subject, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	    -1, &st, NULL) != SQLITE_OK) {
		err = store_error(store, "append to journal");
		goto out;
	}
	sqlite3_bind_int64(st, 1, e.seq);
	sqlite3_bind_text(st, 2, e.time, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, e.cycle, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, e.kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, e.subject, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, body_text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, prev, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, hash, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		err = store_error(store, "append to journal");
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "INSERT INTO meta (key, value) VALUES "
	    "('journal_head', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
	    -1, &st, NULL) != SQLITE_OK) {
		err = store_error(store, "record journal head");
		goto out;
	}
	{
		char *head = xasprintf("%lld %s", (long long)e.seq, hash);

		sqlite3_bind_text(st, 1, head, -1, SQLITE_TRANSIENT);
		free(head);
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		err = store_error(store, "record journal head");
	if (err == NULL && seq_out != NULL)
		*seq_out = e.seq;
out:
	sqlite3_finalize(st);
	json_decref(rel);
	free(canon);
	free(body_text);
	return err;
}

static char *
col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return xstrdup(t != NULL ? (const char *)t : "");
}

static void
entry_clear(struct journal_entry *e)
{
	free(e->time);
	free(e->cycle);
	free(e->kind);
	free(e->subject);
	json_decref(e->body);
	free(e->prev_hash);
	free(e->hash);
	memset(e, 0, sizeof(*e));
}

/* Read a row; a body that is not JSON becomes a JSON string so verify can
 * still hash it (and report the mismatch). */
static void
entry_from_row(struct journal_entry *e, sqlite3_stmt *st)
{
	const char *body = (const char *)sqlite3_column_text(st, 5);

	e->seq = sqlite3_column_int64(st, 0);
	e->time = col_dup(st, 1);
	e->cycle = col_dup(st, 2);
	e->kind = col_dup(st, 3);
	e->subject = col_dup(st, 4);
	e->body = json_loads(body != NULL ? body : "null", JSON_DECODE_ANY, NULL);
	if (e->body == NULL)
		e->body = json_string(body != NULL ? body : "");
	e->prev_hash = col_dup(st, 6);
	e->hash = col_dup(st, 7);
}

struct werr *
journal_each(struct store *store, const struct journal_filter *f,
    struct werr *(*fn)(void *arg, const struct journal_entry *e), void *arg)
{
	sqlite3_stmt *st = NULL;
	struct journal_entry e;
	struct werr *err = NULL;
	int rc;

	memset(&e, 0, sizeof(e));
	if (sqlite3_prepare_v2(store_db(store),
	    "SELECT seq, time, cycle, kind, subject, body, prev_hash, hash FROM journal"
	    " WHERE seq > ?1 AND (?2 IS NULL OR time >= ?2) AND (?3 IS NULL OR cycle = ?3)"
	    " AND (?4 IS NULL OR kind = ?4 OR (substr(?4, -1) = '.' AND"
	    "  substr(kind, 1, length(?4)) = ?4))"
	    " ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return store_error(store, "read journal");
	sqlite3_bind_int64(st, 1, f != NULL ? f->after_seq : 0);
	if (f != NULL && f->since != NULL)
		sqlite3_bind_text(st, 2, f->since, -1, SQLITE_STATIC);
	if (f != NULL && f->cycle != NULL)
		sqlite3_bind_text(st, 3, f->cycle, -1, SQLITE_STATIC);
	if (f != NULL && f->kind != NULL)
		sqlite3_bind_text(st, 4, f->kind, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		entry_from_row(&e, st);
		err = fn(arg, &e);
		entry_clear(&e);
		if (err != NULL)
			break;
	}
	if (err == NULL && rc != SQLITE_DONE)
		err = store_error(store, "read journal");
	sqlite3_finalize(st);
	return err;
}

struct werr *
journal_recorded_head(struct store *store, int64_t *seq, char *hash_out)
{
	sqlite3_stmt *st = NULL;
	const char *head, *h;
	int rc;

	*seq = -1;
	hash_out[0] = '\0';
	if (sqlite3_prepare_v2(store_db(store), "SELECT value FROM meta WHERE "
	    "key = 'journal_head'", -1, &st, NULL) != SQLITE_OK)
		return store_error(store, "read the recorded journal head");
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		head = (const char *)sqlite3_column_text(st, 0);
		*seq = head != NULL ? atoll(head) : 0;
		h = head != NULL ? strchr(head, ' ') : NULL;
		snprintf(hash_out, SHA256_HEX_LEN + 1, "%s", h != NULL ? h + 1 : "");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_error(store, "read the recorded journal head");
	return NULL;
}

char *
journal_entry_line(const struct journal_entry *e)
{
	json_t *o = journal_entry_json(e);
	char *s = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17)) : NULL;

	json_decref(o);
	return s;
}
