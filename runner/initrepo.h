/*
 * initrepo.h - create a new benchmark repository: the layout, a default
 * policy, an example adapter and profile, one commit, and the official
 * branch at that commit.
 */
#ifndef WARDEN_INITREPO_H
#define WARDEN_INITREPO_H

#include "error.h"

/* dir must not exist or be an empty directory. commit_out: 41 bytes. */
struct werr *initrepo_create(const char *dir, char *commit_out,
    char **official_branch_out);

#endif
