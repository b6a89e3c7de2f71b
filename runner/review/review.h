/*
 * review.h - the human-review queue over the allowlist gate: check a
 * change against the official branch tip, queue it as a commit kept under
 * refs/warden/review/N, approve it onto the official branch with a
 * Reviewed-by trailer, or reject it; and pr-check a commit range.
 *
 * Policy always comes from the trusted base (the official tip, or BASE
 * for pr-check), never from the change. Nothing here touches a working
 * tree or an index file. A commit trailer is a record: approval lives in
 * the store and the journal. Never prints.
 */
#ifndef WARDEN_REVIEW_H
#define WARDEN_REVIEW_H

#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "allowlist.h"
#include "buf.h"
#include "error.h"

struct policy;
struct store;

/* The trusted base of a check: a commit, its tree, and its policy. */
struct review_base {
	git_oid commit;
	git_oid tree;
	char *rev;			/* as resolved, for messages */
	struct policy *policy;		/* policy/warden.json of that tree */
	struct allowlist_policy gate;	/* a view of policy's gate fields */
};

/* Resolve rev (a branch name or any revision) and load policy from its
 * tree. */
struct werr *review_base_open(struct review_base *b, git_repository *repo,
    const char *rev);
void review_base_free(struct review_base *b);

/* The gate result as JSON: {"ok", "violations": [...], "files": [...]}. */
json_t *review_report_json(const struct allowlist_report *r);

/* Gate a patch text against the base (dry run: writes nothing). */
struct werr *review_check(struct allowlist_report *r, git_repository *repo,
    const struct review_base *b, const char *text, size_t len);

struct review_submission {
	const char *source;		/* agent, community, triage */
	const char *author;		/* "Name <email>", or NULL: git config */
	const char *note;		/* first line of the message, or NULL */
	const char *patch;
	size_t len;
	/* NULL, or the kind of evidence the submitter will attach before the
	 * change may be approved (the agent run: "smoke", once the post-run
	 * guard found nothing). Recorded with the review in one transaction
	 * as evidence of kind "expects", so a run killed before it attached
	 * the evidence leaves a review approve refuses. */
	const char *expects;
};

/*
 * Check, apply in memory and queue. A refused change is journaled with its
 * violations ("review.refused") and not queued: *id_out is 0 and r holds
 * why. A queued change gets a commit on top of the base, kept under
 * refs/warden/review/N, a row, and a "review.submitted" entry.
 */
struct werr *review_submit(int64_t *id_out, struct allowlist_report *r,
    struct store *store, git_repository *repo, const struct review_base *b,
    const struct review_submission *s);

/* Rows as JSON; status NULL for all. */
struct werr *review_list(json_t **out, struct store *store,
    const char *status);
/* One review with its patch, gate result and evidence. */
struct werr *review_show(json_t **out, struct store *store, int64_t id);

/*
 * Re-run the gate against the current official tip (with the tip's
 * policy) and, when clean, commit the change on top of the tip with a
 * Reviewed-by trailer and move the official branch there (a fast-forward
 * of the branch) through official.c, so a crash at any point leaves the
 * branch and the review's status in agreement. A change that no longer
 * applies stays pending. Text that is not UTF-8 in as or comment is an
 * input error before anything changes. A review that expects evidence
 * (review_submission.expects) it does not have stays pending
 * (WEXIT_PROBLEM, journaled as review.approve-failed) unless flags has
 * REVIEW_WITHOUT_EVIDENCE; the journal's review.approve entry then says
 * what was missing. A change its newest smoke measured as a regression
 * (review_smoke_regressed()) stays pending the same way unless flags has
 * REVIEW_ACCEPT_REGRESSION; the entry then has "accepted_regression":
 * {"text", "cells"}, which the next cycle's regression alerts read.
 */
#define REVIEW_WITHOUT_EVIDENCE 1u
#define REVIEW_ACCEPT_REGRESSION 2u
struct werr *review_approve(char *commit_out /* 41 */,
    struct allowlist_report *r, struct store *store, git_repository *repo,
    const char *official_branch, int64_t id, const char *as,
    const char *comment, unsigned flags);
/* The store side of a landed approval (official_kinds[]'s finish for
 * "review.approve"): review op becomes approved with commit. */
struct werr *review_approve_finish(struct store *store, const char *op,
    const char *commit, json_t *data);
struct werr *review_reject(struct store *store, int64_t id,
    const char *reason, const char *by);
/* Attach evidence (smoke results, agent logs) to a review. */
struct werr *review_add_evidence(struct store *store, int64_t id,
    const char *kind, json_t *body);

/* How long pr-check's two parts took, wall seconds. */
struct review_prcheck_times {
	double gate_s;
	double lint_s;
};

/* pr-check: the gate over merge-base(BASE, HEAD)..HEAD with BASE's
 * policy; lint problems of the changed adapters and profiles at HEAD go
 * to lint (an array of {"file","line","column","field","message",
 * "class"}, as `warden lint --json` lists them). A BASE or HEAD that does
 * not resolve is an input error. times may be NULL. */
struct werr *review_prcheck(struct allowlist_report *r, json_t **lint,
    git_repository *repo, const char *base, const char *head,
    struct review_prcheck_times *times);

/* A patch from a file, or from standard input for "-". */
struct werr *review_read_input(struct buf *out, const char *path);
/* "S PATH +ADDED -DELETED" lines (S: A, D, M, R, C, T; a rename or copy
 * as "R OLD -> NEW ..."), for people: paths quoted (quote.h). */
void review_format_files(struct buf *out, const struct allowlist_report *r);
/* "CODE PATH: REASON (commit C)" lines, for people, quoted (quote.h). */
void review_format_violations(struct buf *out,
    const struct allowlist_report *r);

#endif
