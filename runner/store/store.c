/*
 * store.c - the sqlite store: open (read-write, read-only, by path) and
 * migrate. The migrations are in store-migrations.c, the writer lock and
 * transactions in store-tx.c.
 *
 * PRAGMA user_version holds the number of migrations applied.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"
#include "store.h"
#include "store-private.h"
#include "util.h"

#define STORE_DEFAULT_BUSY_MS 5000


/* ": strerror" of the system call behind an I/O error ("File too large",
 * "No space left on device"), else "". */
static const char *
system_detail(struct store *store, char *out, size_t outlen)
{
	int rc = sqlite3_errcode(store->db) & 0xff;
	int e = sqlite3_system_errno(store->db);

	out[0] = '\0';
	if (e != 0 && (rc == SQLITE_IOERR || rc == SQLITE_FULL ||
	    rc == SQLITE_CANTOPEN))
		snprintf(out, outlen, ": %s", strerror(e));
	return out;
}

struct werr *
store_error(struct store *store, const char *what)
{
	char sys[128];

	return werr_new(WEXIT_ENV, "%s: %s%s (%s)", what,
	    sqlite3_errmsg(store->db), system_detail(store, sys, sizeof(sys)),
	    store->path);
}

struct werr *
store_prepare(struct store *store, sqlite3_stmt **st, const char *sql)
{
	if (sqlite3_prepare_v2(store->db, sql, -1, st, NULL) != SQLITE_OK)
		return store_error(store, "prepare");
	return NULL;
}

void
store_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s == NULL)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

struct werr *
store_step_done(struct store *store, sqlite3_stmt *st, const char *what)
{
	struct werr *err = NULL;

	if (sqlite3_step(st) != SQLITE_DONE)
		err = store_error(store, what);
	sqlite3_finalize(st);
	return err;
}

struct werr *
store_exec(struct store *store, const char *sql)
{
	char *msg = NULL, sys[128];
	struct werr *err;

	if (sqlite3_exec(store->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return NULL;
	err = werr_new(WEXIT_ENV, "database '%s': %s%s", store->path,
	    msg != NULL ? msg : sqlite3_errmsg(store->db),
	    system_detail(store, sys, sizeof(sys)));
	sqlite3_free(msg);
	return err;
}

static int
read_user_version(struct store *store)
{
	sqlite3_stmt *st = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(store->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Does the schema hold a row whose foreign key names no row? */
static struct werr *
keys_check(struct store *store)
{
	sqlite3_stmt *st = NULL;
	struct werr *err = NULL;
	int rc;

	if (sqlite3_prepare_v2(store->db, "PRAGMA foreign_key_check", -1, &st,
	    NULL) != SQLITE_OK)
		return store_error(store, "check foreign keys");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err = werr_new(WEXIT_ENV, "database '%s': a migration left a "
		    "row of %s naming no row of %s", store->path,
		    (const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 2));
	else if (rc != SQLITE_DONE)
		err = store_error(store, "check foreign keys");
	sqlite3_finalize(st);
	return err;
}

static struct werr *
migrate_locked(struct store *store);

/*
 * Apply the migrations not yet applied, in one transaction. A migration
 * may rebuild a table that others refer to (SQLite changes a constraint
 * by copying the table): foreign keys are off while they run, as SQLite
 * asks for that, and checked before they commit.
 */
static struct werr *
migrate(struct store *store)
{
	struct werr *err, *on;

	if (read_user_version(store) == store_n_migrations) {
		store->version = store_n_migrations;
		return NULL;
	}
	if ((err = store_exec(store, "PRAGMA foreign_keys = OFF")) != NULL)
		return err;
	err = migrate_locked(store);
	on = store_exec(store, "PRAGMA foreign_keys = ON");
	if (err == NULL)
		return on;
	werr_free(on);
	return err;
}

static struct werr *
migrate_locked(struct store *store)
{
	struct werr *err;
	char *sql;
	int v;

	if ((err = store_begin(store)) != NULL)
		return err;
	v = read_user_version(store);
	if (v > store_n_migrations) {
		store_rollback(store);
		return werr_new(WEXIT_ENV, "database '%s' has schema version %d, "
		    "newer than this warden knows (%d); upgrade warden",
		    store->path, v, store_n_migrations);
	}
	for (; v < store_n_migrations; v++) {
		if ((err = store_exec(store, store_migrations[v])) != NULL) {
			store_rollback(store);
			return werr_wrap(err, "migration %d", v + 1);
		}
		sql = xasprintf("PRAGMA user_version = %d", v + 1);
		err = store_exec(store, sql);
		free(sql);
		if (err != NULL) {
			store_rollback(store);
			return err;
		}
	}
	if ((err = keys_check(store)) != NULL) {
		store_rollback(store);
		return err;
	}
	store->version = v;
	return store_commit(store);
}

static char *
default_cycle(void)
{
	const char *env = getenv("WARDEN_CYCLE");
	char day[16];
	struct tm tm;
	time_t now;

	if (env != NULL && env[0] != '\0')
		return xstrdup(env);
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(day, sizeof(day), "%Y%m%d", &tm);
	return xasprintf("manual-%s", day);
}

static struct werr *
open_db(struct store *s, int flags)
{
	const char *env;

	if (sqlite3_open_v2(s->path, &s->db, flags, NULL) != SQLITE_OK) {
		struct werr *err = werr_new(WEXIT_ENV, "open database '%s': %s",
		    s->path, s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
		return err;
	}
	env = getenv("WARDEN_BUSY_TIMEOUT_MS");
	s->busy_ms = env != NULL ? atoi(env) : STORE_DEFAULT_BUSY_MS;
	sqlite3_busy_timeout(s->db, s->busy_ms);
	sqlite3_extended_result_codes(s->db, 1);
	return NULL;
}

/* May this process create files in the directory of path? */
static int
dir_writable(const char *path)
{
	char *dir = xstrndup(path, (size_t)(strrchr(path, '/') - path));
	int ok = access(dir, W_OK) == 0;

	free(dir);
	return ok;
}

static struct werr *unwritable_error(const struct store *s);

struct werr *
store_open(struct store **out, const char *repo_root, const char *cycle_id,
    const char *who)
{
	struct store *s;
	struct werr *err;
	char *dir;

	*out = NULL;
	dir = path_join(repo_root, ".warden");
	err = mkdir_p(dir);
	if (err != NULL) {
		free(dir);
		return err;
	}
	s = xcalloc(1, sizeof(*s));
	s->lock_fd = -1;
	s->path = path_join(dir, "warden.db");
	s->lock_path = path_join(dir, "warden.lock");
	s->cycle = cycle_id != NULL ? xstrdup(cycle_id) : default_cycle();
	s->who = xstrdup(who != NULL ? who : "warden");
	free(dir);
	err = text_check(cycle_id != NULL ? "cycle id" : "WARDEN_CYCLE", s->cycle);
	if (err == NULL && !store_cycle_ok(s->cycle))
		err = werr_new(WEXIT_INPUT, "'%s' ('%s') cannot name a file "
		    "under journals/", cycle_id != NULL ? "cycle id" :
		    "WARDEN_CYCLE", s->cycle);
	if (err == NULL &&
	    (err = open_db(s, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) != NULL &&
	    !dir_writable(s->path)) {
		werr_free(err);
		err = unwritable_error(s);
	}
	/* sqlite opens a file it may not write for reading only. */
	if (err == NULL && sqlite3_db_readonly(s->db, "main") == 1)
		err = unwritable_error(s);
	if (err == NULL)
		err = store_exec(s, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;"
		    "PRAGMA synchronous = NORMAL;");
	if (err == NULL)
		err = migrate(s);
	if (err != NULL) {
		store_close(s);
		return err;
	}
	*out = s;
	return NULL;
}

/* Why the database cannot be written: the file system is read-only, or
 * warden may not write the file or its directory. */
static struct werr *
unwritable_error(const struct store *s)
{
	char *dir = xstrndup(s->path, (size_t)(strrchr(s->path, '/') -
	    s->path));
	struct statvfs sv;
	struct werr *err;

	if (statvfs(dir, &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0)
		err = werr_new(WEXIT_ENV, "database '%s' cannot be written: "
		    "the file system is read-only (commands that only read "
		    "work there)", s->path);
	else
		err = werr_new(WEXIT_ENV, "database '%s' cannot be written: "
		    "warden may not write it or its directory '%s' (commands "
		    "that only read work there)", s->path, dir);
	free(dir);
	return err;
}

/* A file: URI for path with sqlite's query parameters after it. */
static char *
uri_of(const char *path, const char *query)
{
	struct buf b = BUF_INIT;
	const char *p;

	buf_puts(&b, "file:");
	for (p = path; *p != '\0'; p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			buf_printf(&b, "%%%02X", (unsigned char)*p);
		else
			buf_addch(&b, *p);
	}
	buf_printf(&b, "?%s", query);
	return buf_detach(&b);
}

/* Size of path, 0 when absent. */
static off_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* An empty database of this warden's schema in memory, read-only to its
 * callers, standing for db_path, which does not exist. */
static struct werr *
open_empty(struct store **out, const char *db_path, const char *who)
{
	struct store *s = xcalloc(1, sizeof(*s));
	struct werr *err = NULL;

	s->lock_fd = -1;
	s->path = xstrdup(db_path);
	s->lock_path = xasprintf("%s.lock", db_path);
	s->cycle = default_cycle();
	s->who = xstrdup(who != NULL ? who : "warden");
	if (sqlite3_open_v2(":memory:", &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK)
		err = werr_new(WEXIT_ENV, "open an empty database in memory");
	s->holds = 1;	/* no lock file: nothing else can see it */
	if (err == NULL)
		err = migrate(s);
	s->holds = 0;
	if (err != NULL) {
		store_close(s);
		return err;
	}
	s->readonly = 1;
	s->empty = 1;
	*out = s;
	return NULL;
}

struct werr *
store_open_readonly(struct store **out, const char *repo_root,
    const char *who)
{
	char *path = path_join(repo_root, ".warden/warden.db");
	char *dir = path_join(repo_root, ".warden");
	char *wal = xasprintf("%s-wal", path);
	struct store *s = NULL;
	struct werr *err = NULL;
	int immutable = 0;

	*out = NULL;
	/* Nothing recorded yet: an empty store in memory, so that a command
	 * that only reads creates nothing. */
	if (!path_exists(path)) {
		err = open_empty(out, path, who);
		goto done;
	}
	/* A store warden can write: the ordinary open (which migrates, and
	 * lets the caller settle what a crash interrupted). */
	if (dir_writable(path) && access(path, W_OK) == 0) {
		err = store_open(out, repo_root, NULL, who);
		goto done;
	}
	/*
	 * A reader of a WAL database needs its -shm file, and creates it
	 * when absent. Where it cannot (a read-only file system, a
	 * directory warden may not write) and no write-ahead log holds
	 * data, the database file alone is the whole database: read it as
	 * immutable. A non-empty -wal is read through its -shm.
	 */
	immutable = !dir_writable(path) && file_size(wal) == 0;
	s = xcalloc(1, sizeof(*s));
	s->lock_fd = -1;
	s->path = xstrdup(path);
	s->lock_path = path_join(dir, "warden.lock");
	s->cycle = default_cycle();
	s->who = xstrdup(who != NULL ? who : "warden");
	s->readonly = 1;
	if (immutable) {
		char *uri = uri_of(path, "immutable=1");

		if (sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY |
		    SQLITE_OPEN_URI, NULL) != SQLITE_OK)
			err = store_error(s, "open database");
		free(uri);
		if (err == NULL)
			sqlite3_extended_result_codes(s->db, 1);
	} else
		err = open_db(s, SQLITE_OPEN_READONLY);
	if (err == NULL && (s->version = read_user_version(s)) < 0) {
		if (file_size(wal) > 0 && !dir_writable(path))
			err = werr_new(WEXIT_ENV, "database '%s' has a write-"
			    "ahead log that cannot be read where its shared-"
			    "memory file '%s-shm' cannot be made; open it once "
			    "where it can be written", path, path);
		else
			err = store_error(s, "read database");
	}
	if (err == NULL && s->version > store_n_migrations)
		err = werr_new(WEXIT_ENV, "database '%s' has schema version %d, "
		    "newer than this warden knows (%d); upgrade warden",
		    path, s->version, store_n_migrations);
	if (err == NULL && s->version < store_n_migrations) {
		/* An older schema: the ordinary open migrates it (or says
		 * why it cannot write). */
		store_close(s);
		s = NULL;
		err = store_open(out, repo_root, NULL, who);
		goto done;
	}
	if (err != NULL) {
		store_close(s);
		s = NULL;
	}
	*out = s;
done:
	free(wal);
	free(dir);
	free(path);
	return err;
}

int
store_readonly(const struct store *store)
{
	return store->readonly;
}

int
store_empty(const struct store *store)
{
	return store->empty;
}

struct werr *
store_open_path(struct store **out, const char *db_path, const char *who)
{
	struct store *s;
	struct werr *err;

	*out = NULL;
	s = xcalloc(1, sizeof(*s));
	s->lock_fd = -1;
	s->path = xstrdup(db_path);
	s->lock_path = xasprintf("%s.lock", db_path);
	s->cycle = default_cycle();
	s->who = xstrdup(who != NULL ? who : "warden");
	if ((err = open_db(s, SQLITE_OPEN_READONLY)) != NULL) {
		store_close(s);
		return err;
	}
	s->version = read_user_version(s);
	*out = s;
	return NULL;
}

void
store_close(struct store *store)
{
	if (store == NULL)
		return;
	if (store->in_tx)
		store_rollback(store);
	sqlite3_close(store->db);
	if (store->lock_fd != -1)
		close(store->lock_fd);
	free(store->path);
	free(store->lock_path);
	free(store->cycle);
	free(store->who);
	free(store);
}

void
store_set_busy_timeout(struct store *store, int ms)
{
	store->busy_ms = ms;
	sqlite3_busy_timeout(store->db, ms);
}

sqlite3 *
store_db(struct store *store)
{
	return store->db;
}

const char *
store_cycle(const struct store *store)
{
	return store->cycle;
}

int
store_cycle_ok(const char *c)
{
	if (c[0] == '\0' || c[0] == '.' || strlen(c) > 200)
		return 0;
	for (; *c != '\0'; c++)
		if (*c == '/' || *c == '\\' || (unsigned char)*c < 0x20)
			return 0;
	return 1;
}

struct werr *
store_set_cycle(struct store *store, const char *cycle_id)
{
	if (!store_cycle_ok(cycle_id))
		return werr_new(WEXIT_INPUT, "cycle id '%s' cannot name a file "
		    "under journals/", cycle_id);
	free(store->cycle);
	store->cycle = xstrdup(cycle_id);
	return NULL;
}

const char *
store_path(const struct store *store)
{
	return store->path;
}

int
store_schema_version(const struct store *store)
{
	return store->version;
}
