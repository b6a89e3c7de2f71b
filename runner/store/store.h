/*
 * store.h - the sqlite store at REPO/.warden/warden.db.
 *
 * Opening creates the database, turns on WAL, foreign keys and the busy
 * timeout, and runs forward migrations (PRAGMA user_version). Writes happen
 * in transactions begun with store_begin(): it takes the writer lock file
 * (.warden/warden.lock) so a second warden waits up to the busy timeout and
 * then fails naming the process that holds it, and it begins an IMMEDIATE
 * transaction. A state change and its journal entry go in one transaction.
 *
 * SQL lives only in store*.c and journal.c; other modules call them.
 */
#ifndef WARDEN_STORE_H
#define WARDEN_STORE_H

#include <sqlite3.h>

#include "error.h"

struct store;

/* Open or create REPO_ROOT/.warden/warden.db. cycle_id names the cycle that
 * journal entries of this process belong to (NULL: $WARDEN_CYCLE, else
 * "manual-YYYYMMDD" of today, UTC). who is recorded in the lock file. */
struct werr *store_open(struct store **out, const char *repo_root,
    const char *cycle_id, const char *who);
/*
 * Open REPO_ROOT/.warden/warden.db for the commands that only read
 * (journal show and verify, review list and show). Where there is no
 * database yet, an empty one in memory: nothing is created. Where warden
 * can write the database and its directory, or it is older than this
 * warden's schema, this is store_open(). Elsewhere (a
 * read-only file system, another user's repository) it opens it for
 * reading only: nothing is created, migrated or locked, and where the
 * -shm file cannot be made and no write-ahead log holds data, the file is
 * read as immutable; writing (store_begin) is refused and
 * store_readonly() says so.
 */
struct werr *store_open_readonly(struct store **out, const char *repo_root,
    const char *who);
int store_readonly(const struct store *store);
/* Was there no database to read (store_open_readonly made an empty one in
 * memory, and created nothing)? */
int store_empty(const struct store *store);
/* Open an existing database file read-only, without migrating. */
struct werr *store_open_path(struct store **out, const char *db_path,
    const char *who);
void store_close(struct store *store);

sqlite3 *store_db(struct store *store);
/* Wait up to ms for the writer lock and for sqlite's own locks. */
void store_set_busy_timeout(struct store *store, int ms);
const char *store_cycle(const struct store *store);
/* Can cycle id c name the file journals/C.md? (Not empty, no leading
 * dot, no slash, backslash or control character, at most 200 bytes.) */
int store_cycle_ok(const char *c);
/* From now on, journal entries of this process belong to cycle_id (the
 * cycle's own id, once `warden cycle` knows it); it must be able to name
 * journals/CYCLE.md (exit 2 otherwise). */
struct werr *store_set_cycle(struct store *store, const char *cycle_id);
const char *store_path(const struct store *store);
int store_schema_version(const struct store *store);

/* Begin a write transaction under the writer lock; commit or roll back.
 * Nesting is not supported. */
struct werr *store_begin(struct store *store);
struct werr *store_commit(struct store *store);
void store_rollback(struct store *store);

/*
 * Hold the writer lock across several transactions (and the git work
 * between them), so that no other warden writes in between: an operation
 * that records an intent, moves a ref, then records the outcome holds it
 * from before it reads the state it depends on until the outcome is
 * committed. Holds nest; store_begin/commit inside a hold keep the lock.
 */
struct werr *store_hold(struct store *store);
void store_unhold(struct store *store);

/* A werr from the database's last error: "WHAT: sqlite message". */
struct werr *store_error(struct store *store, const char *what);

/* Prepare one statement; the error names the database. */
struct werr *store_prepare(struct store *store, sqlite3_stmt **st, const char *sql);
/* Bind a string, or NULL as SQL NULL (the text is copied). */
void store_bind_text(sqlite3_stmt *st, int i, const char *s);

/* Step a statement that returns no row, then finalize it. */
struct werr *store_step_done(struct store *store, sqlite3_stmt *st,
    const char *what);

/* Run SQL with no results (outside or inside a transaction). */
struct werr *store_exec(struct store *store, const char *sql);

#endif
