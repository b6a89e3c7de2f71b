/*
 * store-private.h - the store's own state, shared by store.c (open,
 * migrate), store-tx.c (lock, transactions) and store-migrations.c. No
 * other file includes it: everything else goes through store.h.
 */
#ifndef WARDEN_STORE_PRIVATE_H
#define WARDEN_STORE_PRIVATE_H

#include <sqlite3.h>

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
	int empty;		/* store_open_readonly of a repository with no
				   database: an empty one in memory */
};

/* Migration N (1-based) is store_migrations[N - 1]. */
extern const char *const store_migrations[];
extern const int store_n_migrations;

#endif
