/*
 * verify.h - re-check a snapshot: every member against the sha256 the
 * manifest lists for it (a changed byte, a removed member, an added
 * member each named), the manifest against its own seal (any changed
 * byte of it), the archive against the one warden writes of those
 * members (byte for byte: path order, warden's headers, one gzip member,
 * nothing after it), and, where a signature is present or required, the
 * signature against an allowed_signers file.
 *
 * What it proves: the archive holds exactly what its manifest lists, in
 * the one form warden writes it, and the manifest is as warden wrote it.
 * Without a signature anyone who can rewrite the archive can rewrite the
 * manifest too; with one, only a key in allowed_signers can. Never
 * prints.
 */
#ifndef WARDEN_VERIFY_H
#define WARDEN_VERIFY_H

#include <stddef.h>

#include "error.h"
#include "policy.h"
#include "results/sign.h"
#include "results/snapshot.h"

struct verify_report {
	char **problems;	/* one sentence each, naming the member */
	size_t nproblems;
	size_t members;		/* checked against the manifest */
	char id[17];		/* from the manifest's bytes */
	int signed_ok;		/* a signature verified */
	char *signer;		/* its principal */
};

/* Check s (as snapshot_read() read it). signers may be NULL (a present
 * signature is then a problem: it cannot be checked). An error only when
 * the check cannot run (ssh-keygen missing). */
struct werr *verify_snapshot(struct verify_report *r, const struct snapshot *s,
    const struct signers *signers, int require_signature);
void verify_report_free(struct verify_report *r);

/*
 * The signers and requirement a snapshot handed to gate or publish is
 * checked with: the trusted policy's (policy_load_trusted, the official
 * branch's tip), whatever the working tree holds. A relative
 * publish.allowed_signers is read from the tip's tree, an absolute one
 * from the file system; out->name is NULL when policy names none.
 */
struct werr *verify_trusted_signers(struct signers *out, int *required,
    const char *repo_root);

/*
 * The signers and requirement verify and merge check with. In a
 * repository with an official branch, the trusted policy's (as
 * verify_trusted_signers), the file arg in place of its signers when
 * given: a working tree (a pull request's checkout) never names the keys
 * a snapshot is checked with. Where there is no official branch yet (a
 * bench before its first publish) there is no trusted policy: the working
 * tree's policy worktree (NULL outside a repository), its
 * publish.allowed_signers under repo_root. out->name is NULL for none.
 */
struct werr *verify_signers_for(struct signers *out, int *required,
    const char *repo_root, const struct policy *worktree, const char *arg);

#endif
