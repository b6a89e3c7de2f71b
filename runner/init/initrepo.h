/*
 * initrepo.h - create a new benchmark repository: the layout, a default
 * policy whose roster is the simulated engine, its adapter, a profile, a
 * small workload per split, one commit, and the official branch at that
 * commit, so that `warden campaign` runs on it at once.
 */
#ifndef WARDEN_INITREPO_H
#define WARDEN_INITREPO_H

#include "error.h"

/* The small example workload of split SPLIT as JSONL text (caller
 * frees): 3 warmup and 16 timed prompts, the same bytes every time. */
char *initrepo_workload_text(const char *split);

/* The example fidelity task's FILE (task.json, items.jsonl or
 * exemplars.jsonl) as text (caller frees), the same bytes every time. */
char *initrepo_fidelity_text(const char *file);

/* dir must not exist or be an empty directory. commit_out: 41 bytes.
 * signer not NULL: an SSH key pair for that principal at
 * .warden/signing-key (git config warden.signingKey names it),
 * policy/allowed_signers, and a policy that requires signed snapshots. */
struct werr *initrepo_create(const char *dir, char *commit_out,
    char **official_branch_out, const char *signer);

#endif
