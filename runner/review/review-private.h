/*
 * review-private.h - helpers shared by review.c, review-approve.c and
 * review-prcheck.c; not for other modules.
 */
#ifndef WARDEN_REVIEW_PRIVATE_H
#define WARDEN_REVIEW_PRIVATE_H

#include <stdint.h>

#include <git2.h>

#include "error.h"

struct store;

/* "Name <email>" as a signature (git's configured identity, else
 * "warden", when who is NULL); a usage error when who is not of that
 * form. */
struct werr *review_person(git_signature **out, git_repository *repo,
    const char *who);
/* "Name <email>" of sig; caller frees. */
char *review_person_string(const git_signature *sig);
/* Write a commit of tree_id on parent_id (no ref moves). */
struct werr *review_create_commit(git_oid *out, git_repository *repo,
    const git_oid *tree_id, const git_oid *parent_id,
    const git_signature *author, const git_signature *committer,
    const char *msg);
/* Patch and queued commit of review id, which must be pending (an input
 * error names its status otherwise); caller frees both. */
struct werr *review_load_pending(struct store *store, int64_t id,
    char **patch, char **commit);

#endif
