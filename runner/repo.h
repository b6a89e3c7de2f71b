/*
 * repo.h - the benchmark repository: finding it, its HEAD commit and dirty
 * flag, through libgit2.
 */
#ifndef WARDEN_REPO_H
#define WARDEN_REPO_H

#include "error.h"

/* Call once before any libgit2 use (main does). */
void repo_lib_init(void);
void repo_lib_shutdown(void);

/* The working-tree root of the repository holding start (discovery upward). */
struct werr *repo_find_root(char **root_out, const char *start);
/* HEAD commit id (40 hex, or "" on an unborn branch) and whether the working
 * tree differs from HEAD (untracked files outside .gitignore count). */
struct werr *repo_head_state(const char *root, char *commit_out /* 41 */,
    int *dirty_out);

#endif
