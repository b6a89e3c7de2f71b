/*
 * store.c - the sqlite store: open, migrate, lock, transactions.
 *
 * Schema changes are forward migrations appended to `migrations` below;
 * never edit a migration that has shipped. PRAGMA user_version holds the
 * number applied. The writer lock file names its holder so a second warden
 * can say who it waited for. This file and journal.c are where SQL lives.
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
#include "journal.h"
#include "store.h"
#include "store-campaign.h"
#include "store-official.h"
#include "agent/store-agent.h"
#include "store-update.h"
#include "triage/store-triage.h"
#include "util.h"
#include "cycle/store-cycle.h"
#include "results/store-results.h"

#define STORE_DEFAULT_BUSY_MS 5000

struct store {
	sqlite3 *db;
	char *path;
	char *lock_path;
	char *cycle;
	char *who;
	int lock_fd;
	int busy_ms;
	int in_tx;
	int holds;		/* store_hold() depth: the lock outlives commits */
	int version;
	int readonly;		/* store_open_readonly: nothing is written */
};

/* Migration N (1-based) is migrations[N - 1]. Append only. */
static const char *const migrations[] = {
	/* 1: the journal and a small key/value table. */
	"CREATE TABLE journal ("
	"  seq INTEGER PRIMARY KEY,"
	"  time TEXT NOT NULL,"
	"  cycle TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  subject TEXT NOT NULL DEFAULT '',"
	"  body TEXT NOT NULL,"
	"  prev_hash TEXT NOT NULL,"
	"  hash TEXT NOT NULL"
	");"
	"CREATE INDEX journal_by_cycle ON journal(cycle, seq);"
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal"
	"  BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;"
	"CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal"
	"  BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;",

	/* 2: the review queue: one row per submitted change, its gate
	 * result, the decision, and evidence attached by other commands. */
	"CREATE TABLE reviews ("
	"  id INTEGER PRIMARY KEY,"
	"  status TEXT NOT NULL DEFAULT 'pending'"
	"    CHECK (status IN ('pending', 'approved', 'rejected')),"
	"  source TEXT NOT NULL"
	"    CHECK (source IN ('agent', 'community', 'triage')),"
	"  author TEXT NOT NULL,"
	"  note TEXT NOT NULL DEFAULT '',"
	"  created TEXT NOT NULL,"
	"  base_commit TEXT NOT NULL,"
	"  commit_id TEXT NOT NULL,"
	"  patch TEXT NOT NULL,"
	"  gate TEXT NOT NULL,"
	"  decided TEXT,"
	"  decided_by TEXT,"
	"  comment TEXT,"
	"  merged_commit TEXT"
	");"
	"CREATE INDEX reviews_by_status ON reviews(status, id);"
	"CREATE TABLE review_evidence ("
	"  id INTEGER PRIMARY KEY,"
	"  review_id INTEGER NOT NULL REFERENCES reviews(id),"
	"  time TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  body TEXT NOT NULL"
	");",

	/* 3: campaign runs, sweeps, requests, memory traces. */
	STORE_CAMPAIGN_SCHEMA,

	/* 4: moves of the official branch: intent, then outcome. */
	STORE_OFFICIAL_SCHEMA,

	/* 5: the maintainer agent's runs. */
	STORE_AGENT_SCHEMA,

	/* 6: connect time, connection reuse and token gaps per request. */
	STORE_CAMPAIGN_SCHEMA STORE_CAMPAIGN_SCHEMA_5,

	/* 7: fidelity runs, cells and predictions; gate records. */
	STORE_RESULTS_SCHEMA,

	/* 8: version manifests, their packages, update attempts, and each
	 * engine's current manifest. */
	STORE_UPDATE_SCHEMA,

	/* 9: triage: its runs, smoke runs, incidents and their transitions. */
	STORE_TRIAGE_SCHEMA,

	/* 10: cycles, their steps and their agent tasks. */
	STORE_CYCLE_SCHEMA,

	/* 11: update attempts may be group_rolled_back. */
	STORE_UPDATE_SCHEMA_11,
};

#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

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

static struct werr *
migrate(struct store *store)
{
	struct werr *err;
	char *sql;
	int v;

	v = read_user_version(store);
	if (v == N_MIGRATIONS) {
		store->version = v;
		return NULL;
	}
	if ((err = store_begin(store)) != NULL)
		return err;
	v = read_user_version(store);
	if (v > N_MIGRATIONS) {
		store_rollback(store);
		return werr_new(WEXIT_ENV, "database '%s' has schema version %d, "
		    "newer than this warden knows (%d); upgrade warden",
		    store->path, v, N_MIGRATIONS);
	}
	for (; v < N_MIGRATIONS; v++) {
		if ((err = store_exec(store, migrations[v])) != NULL) {
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
	if (err == NULL && !journal_cycle_ok(s->cycle))
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
	/* Nothing recorded yet, or a store warden can write: the ordinary
	 * open (which creates, migrates, and lets the caller settle what a
	 * crash interrupted). */
	if (!path_exists(path) || (dir_writable(path) &&
	    access(path, W_OK) == 0)) {
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
	if (err == NULL && s->version > N_MIGRATIONS)
		err = werr_new(WEXIT_ENV, "database '%s' has schema version %d, "
		    "newer than this warden knows (%d); upgrade warden",
		    path, s->version, N_MIGRATIONS);
	if (err == NULL && s->version < N_MIGRATIONS) {
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

struct werr *
store_set_cycle(struct store *store, const char *cycle_id)
{
	if (!journal_cycle_ok(cycle_id))
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

static struct werr *
lock_holder_error(struct store *store, int waited_ms)
{
	struct buf holder = BUF_INIT;
	struct werr *err;
	size_t n;

	if (file_read(&holder, store->lock_path) == NULL && holder.len > 0) {
		n = holder.len;
		while (n > 0 && holder.data[n - 1] == '\n')
			holder.data[--n] = '\0';
		err = werr_new(WEXIT_ENV, "database '%s' is locked by %s; "
		    "gave up after %d ms", store->path, holder.data, waited_ms);
	} else
		err = werr_new(WEXIT_ENV, "database '%s' is locked by another "
		    "warden; gave up after %d ms", store->path, waited_ms);
	buf_free(&holder);
	return err;
}

/* Take the writer lock file, waiting up to the busy timeout. */
static struct werr *
lock_take(struct store *store)
{
	uint64_t start = mono_ns(), deadline;
	char stamp[40];
	char *note;

	if (store->holds > 0)
		return NULL;	/* store_hold() has it */
	if (store->lock_fd == -1) {
		store->lock_fd = open(store->lock_path,
		    O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (store->lock_fd == -1)
			return werr_errno("open lock file", store->lock_path);
	}
	deadline = start + (uint64_t)store->busy_ms * 1000000ull;
	while (flock(store->lock_fd, LOCK_EX | LOCK_NB) == -1) {
		struct timespec ts = { 0, 20 * 1000000L };

		if (errno != EWOULDBLOCK && errno != EINTR)
			return werr_errno("lock", store->lock_path);
		if (mono_ns() >= deadline)
			return lock_holder_error(store,
			    (int)((mono_ns() - start) / 1000000ull));
		nanosleep(&ts, NULL);
	}
	utc_now_iso(stamp, sizeof(stamp));
	note = xasprintf("pid %ld (%s) since %s\n", (long)getpid(), store->who, stamp);
	if (ftruncate(store->lock_fd, 0) == 0 &&
	    pwrite(store->lock_fd, note, strlen(note), 0) < 0) {
		/* The note is a courtesy for error messages; the lock holds. */
	}
	free(note);
	return NULL;
}

static void
lock_release(struct store *store)
{
	if (store->lock_fd == -1 || store->holds > 0)
		return;
	if (ftruncate(store->lock_fd, 0) == -1) {
		/* A stale note is harmless: it is only read when locked. */
	}
	flock(store->lock_fd, LOCK_UN);
}

struct werr *
store_begin(struct store *store)
{
	const char *hold;
	struct werr *err;
	int rc;

	if (store->in_tx)
		fatal("store_begin: transaction already open");
	if (store->readonly)
		return werr_new(WEXIT_ENV, "database '%s' was opened for "
		    "reading only", store->path);
	if ((err = lock_take(store)) != NULL)
		return err;
	rc = sqlite3_exec(store->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		if ((rc & 0xff) == SQLITE_BUSY)
			err = werr_new(WEXIT_ENV, "database '%s' is locked by a "
			    "process that is not warden; gave up after %d ms",
			    store->path, store->busy_ms);
		else
			err = store_error(store, "begin transaction");
		lock_release(store);
		return err;
	}
	store->in_tx = 1;
	/* Tests hold the lock on purpose to show a second warden waiting. */
	hold = getenv("WARDEN_TEST_HOLD_LOCK_MS");
	if (hold != NULL) {
		long ms = atol(hold);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	return NULL;
}

struct werr *
store_commit(struct store *store)
{
	struct werr *err = NULL;

	if (!store->in_tx)
		fatal("store_commit: no transaction");
	fault_point("store.commit");
	if (sqlite3_exec(store->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		err = store_error(store, "commit");
		sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
	} else
		fault_point("store.committed");
	store->in_tx = 0;
	lock_release(store);
	return err;
}

void
store_rollback(struct store *store)
{
	if (!store->in_tx)
		return;
	sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
	store->in_tx = 0;
	lock_release(store);
}

struct werr *
store_hold(struct store *store)
{
	struct werr *err;

	if (store->holds > 0) {
		store->holds++;
		return NULL;
	}
	if (store->in_tx)
		fatal("store_hold: inside a transaction");
	if ((err = lock_take(store)) != NULL)
		return err;
	store->holds = 1;
	return NULL;
}

void
store_unhold(struct store *store)
{
	if (store->holds == 0)
		fatal("store_unhold: not held");
	if (--store->holds == 0 && !store->in_tx)
		lock_release(store);
}
