/*
 * store-tx.c - the store's writer lock and transactions. The lock file
 * (.warden/warden.lock) names its holder so a second warden can say who
 * it waited for; store_hold() keeps the lock across several commits.
 * Never runs SQL other than BEGIN, COMMIT and ROLLBACK.
 */
#include "config.h"

#include <sys/file.h>

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

/*
 * Tests only: hold the lock ms milliseconds, or, with a path, until that
 * file exists (ms then only bounds a test that died before making it),
 * so that a test waits for a state and not for the clock.
 */
static void
test_hold(long ms, const char *until)
{
	uint64_t end = mono_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000ull;
	struct timespec ts = { 0, 10 * 1000000L };

	while (mono_ns() < end && (until == NULL || access(until, F_OK) != 0))
		nanosleep(&ts, NULL);
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
	if (hold != NULL)
		test_hold(atol(hold), getenv("WARDEN_TEST_HOLD_LOCK_UNTIL"));
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
