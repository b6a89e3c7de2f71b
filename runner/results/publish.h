/*
 * publish.h - official results: regenerate the results tree only from a
 * clean checkout of the official branch's tip, and commit it there.
 *
 * Publishing refuses, naming the failed condition, unless: HEAD is the
 * official tip; the working tree is clean; every result was measured at
 * exactly that commit with a clean tree (the reference, an input to the
 * fidelity comparison, is exempt); every commit since the last publish
 * is an approved review's (in the store) or a maintainer's that changes
 * nothing in the allowlist zone (the repository's first commit, its
 * layout, is exempt); and the gate ran on exactly these results. Then it
 * writes the snapshot (snapshot.h) to snapshots/ID.tar.gz, commits the
 * results tree on the official branch through official.c with a
 * `Warden-Snapshot: ID sha256:HEX` trailer, and tags the commit
 * `snapshot/ID` (the tag is made when the move is recorded, so a crash
 * in between is finished by recovery). Its journal entry lists the
 * maintainer's commits it accepted ("adopted"), so journal verify finds
 * every move of official recorded. Never prints; never touches the
 * working tree or the index.
 */
#ifndef WARDEN_PUBLISH_H
#define WARDEN_PUBLISH_H

#include <stddef.h>

#include <git2.h>
#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "store.h"
#include "results/resultset.h"

struct publish_opts {
	const char *repo_root;
	struct store *store;
	/* the results: runs from the store (as for gate_run()), or the
	 * result set of a (merged) snapshot */
	const char *const *campaigns;
	size_t ncampaigns;
	const char *const *fidelity;
	size_t nfidelity;
	int no_fidelity;
	const char *snapshot;
	const char *sign_key;		/* NULL: unsigned (unless policy
					   requires a signature) */
	const char *sign_key_arg;	/* --sign-key, for the refusal */
	const char *cycle;		/* the cycle publishing, or NULL */
};

/*
 * Publish, or refuse with WEXIT_PROBLEM naming the first condition that
 * does not hold. *out: {"snapshot", "path", "sha256", "commit", "tag",
 * "measured_commit", "results_sha256", "passed", "failed"}.
 */
struct werr *publish_run(json_t **out, const struct publish_opts *o);

/* The preconditions (publish-check.c), each returning the refusal. */
struct publish_state {
	git_repository *repo;
	const char *repo_root;
	const char *branch;		/* the official branch */
	git_oid tip_oid;
	char tip[41];			/* its tip */
	struct policy *policy;		/* of the tip's tree (trusted) */
};

/* Open repo_root, find the official tip and load its policy. */
struct werr *publish_state_open(struct publish_state *st,
    const char *repo_root);
void publish_state_free(struct publish_state *st);

struct werr *publish_check_head(struct publish_state *st);
struct werr *publish_check_clean(struct publish_state *st);
struct werr *publish_check_measured(struct publish_state *st,
    const struct resultset *rs);
struct werr *publish_check_reviews(struct publish_state *st,
    struct store *store, json_t *adopted);
struct werr *publish_check_gate(struct store *store,
    const struct resultset *rs);

/* The official kind's finish: tag the published commit (official.h). */
struct werr *publish_finish(struct store *store, const char *op,
    const char *commit, json_t *data);

#endif
