/*
 * repo.h - the benchmark repository: finding it, its HEAD commit and dirty
 * flag, and checking a tree out elsewhere, through libgit2.
 */
#ifndef WARDEN_REPO_H
#define WARDEN_REPO_H

#include <git2.h>
#include <jansson.h>

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

/* Check tree out into dir, or over the repository's own working tree
 * (dir NULL), forcing; symlinks as the handle's core.symlinks says. */
struct werr *repo_tree_checkout(git_repository *repo, const git_oid *tree,
    const char *dir);
/* Check tree out into dir (made; must not exist). */
struct werr *repo_tree_materialize(git_repository *repo, const git_oid *tree,
    const char *dir);

/* The file at path in tree (a blob), as text (caller frees), or NULL
 * when there is none. */
char *repo_tree_text(git_repository *repo, const git_oid *tree,
    const char *path);
/* The same, parsed as JSON (new reference), or NULL. */
json_t *repo_tree_json(git_repository *repo, const git_oid *tree,
    const char *path);

#endif
