/*
 * scan.h - the gate's own reading of a patch text, before libgit2 sees
 * it, and the in-memory repository handle. Internal to the allowlist
 * library.
 */
#ifndef WARDEN_ALLOWLIST_SCAN_H
#define WARDEN_ALLOWLIST_SCAN_H

#include <stddef.h>

#include "allowlist.h"

struct scan {
	size_t headers;
	int in_section, creates, has_body;
	long old_left, new_left;	/* lines left in the current hunk */
	unsigned seen;			/* header keys seen in this section */
	char *path;			/* of the current section */
	char **empty;			/* sections adding/deleting empty files */
	size_t nempty;
	int refused;			/* the text is not handed to libgit2 */
};

/*
 * Count file headers, check the paths of header lines, refuse repeated
 * header lines and unbalanced quotes (sc->refused: do not hand the text
 * to libgit2), and note sections that add or delete an empty file.
 * Violations go to r. Free sc with scan_free().
 */
void scan_patch_text(struct allowlist_report *r, struct scan *sc,
    const char *text, size_t len);
void scan_free(struct scan *sc);

/* A repository handle on repo's objects whose writes stay in memory (in
 * *mempack, which the handle owns). */
struct werr *allowlist_dry_repo(git_repository **out,
    git_odb_backend **mempack, git_repository *repo);

#endif
