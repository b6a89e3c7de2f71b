/*
 * wtread.h - the bounded walk of a worktree (wtread.c) and what it
 * shares with worktree.c. Internal to the allowlist library.
 */
#ifndef WARDEN_ALLOWLIST_WTREAD_H
#define WARDEN_ALLOWLIST_WTREAD_H

#include <stddef.h>
#include <stdint.h>

#include "allowlist.h"

struct change {
	char *path;
	uint32_t mode;
	git_oid id;
};

struct wt {
	struct allowlist_report *r;
	git_repository *arepo;		/* writes go to memory */
	git_odb *odb;
	git_repository *irepo;		/* ignore rules; NULL: none */
	git_index *base;		/* the base tree's files */
	unsigned char *seen;		/* per base entry: found */
	char **dirs;			/* the base tree's directories */
	size_t ndirs, capdirs;
	char **kept;			/* refused paths: base entries stay */
	size_t nkept, capkept;
	struct change *ch;
	size_t nch, capch;
	size_t file_cap, total_cap, total;
	size_t entries, entries_cap, base_entries;
	int cut;			/* the walk stopped at its cap */
};

/* Append s (taken over) to the array *v of *n, grown through *cap. */
void wt_push(char ***v, size_t *n, size_t *cap, char *s);
int wt_cmp_strp(const void *a, const void *b);
/* Is path, or a directory above it, a path the walk refused? */
int wt_is_kept(const struct wt *w, const char *path);
/*
 * Walk the directory open as fd (taken over), at rel ("" at the top,
 * where .git is passed over): refusals to w->r, changed files to w->ch,
 * base files found to w->seen; stops at w->entries_cap (w->cut).
 */
struct werr *wt_walk_dir(struct wt *w, int fd, const char *rel, int depth);

#endif
