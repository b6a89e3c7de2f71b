/*
 * review-smoke.h - the smoke campaign of a change: the engines it
 * touches, run for a few prompts at low concurrency from the trusted base
 * tree (before) and from the change (after), in the sandbox, each a
 * campaign run of its own in the store; and the evidence a review must
 * carry before it is approved.
 *
 * Used by `warden review smoke N`, `warden pr-check --smoke` and the
 * agent's run. Both trees are checked out by warden from git objects
 * (without symlinks): exactly what the gate passed. Engine failures are
 * results. Never prints.
 */
#ifndef WARDEN_REVIEW_SMOKE_H
#define WARDEN_REVIEW_SMOKE_H

#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "allowlist.h"
#include "error.h"

struct policy;
struct review_base;
struct store;

struct review_smoke_opts {
	const char *repo_root;
	git_repository *repo;
	struct store *store;
	const struct policy *policy;	/* trusted: the base's */
	const json_t *engines;		/* smoke these too (an agent's task's
					   engines), or NULL */
	const git_oid *base_tree, *change_tree;
	const struct allowlist_report *gate;	/* the changed files */
	const char *run_prefix;		/* run ids PREFIX-ENGINE-PHASE */
	const char *label;		/* "agent run 3", "review 5" */
	const char *work_dir;		/* trees go to WORK_DIR/smoke-PHASE
					   and are removed after */
	void (*on_progress)(void *arg, const char *what);
	void *arg;
};

/*
 * The engines a change touches, as a new array of names, each in a
 * roster of the policy: an adapter changed, added or removed, a
 * profile whose entry for it changed, and opts->engines.
 */
json_t *review_smoke_engines(const struct review_smoke_opts *o);

/*
 * Smoke campaigns of those engines from the base tree and from the
 * change, interleaved: before, after, before, after... (policy
 * agent.smoke.rounds per side; an engine that fails on a side in the
 * first round is not run again), and the two sides' speed and memory
 * judged by regress_compare(): {"engines", "before", "after", "speed",
 * "regressed", "passed"} where each side is {"passed", "runs":
 * [{"engine", "run_id", "round", "passed", "sweeps"|"error"}]}, "speed"
 * is regress_compare()'s object with "rounds" (or {"error"}), and
 * "passed" is the after side's and not "regressed". No engine:
 * {"engines": [], "passed": false, "skipped": why}.
 */
struct werr *review_smoke(json_t **out, const struct review_smoke_opts *o);

/* A smoke sweep (a campaign row) that did not complete at the gate's
 * completion line. */
int review_sweep_failed(const json_t *sweep, const struct policy *policy);

/*
 * Smoke the change r (the gate's result on b) under the post-run guard:
 * campaign runs NAME-STAMP-ENGINE-PHASE, the trees checked out under
 * .warden/smoke/. *out: review_smoke's object with "base" (b's commit);
 * should the campaign change the repository, .git is put back and *out
 * has "quarantined" (one reason each) and "restored", "passed" false.
 * No engine to smoke: {"engines": [], "skipped": why}.
 */
struct werr *review_smoke_guarded(json_t **out, struct store *store,
    git_repository *repo, const char *repo_root,
    const struct review_base *b, const struct allowlist_report *r,
    const char *name, void (*on_progress)(void *arg, const char *what),
    void *arg);

/*
 * `warden review smoke N`: gate pending review id against the official
 * tip again, smoke the engines it touches before and after under the
 * post-run guard, and attach the result as evidence of kind "smoke"
 * (with "base": the tip it was measured against). Should the smoke
 * campaign change the repository, .git is put back and the review is
 * rejected as quarantined (the evidence says why). *out: the evidence
 * body. A review that touches no engine is an input error.
 */
struct werr *review_smoke_review(json_t **out, struct store *store,
    git_repository *repo, const char *repo_root,
    const char *official_branch, int64_t id,
    void (*on_progress)(void *arg, const char *what), void *arg);

/*
 * What approve asks of a review's evidence (store_review_evidence's
 * rows): the engines of engines (an array) no "smoke" or "triage-smoke"
 * evidence covers, as "sim-a, sim-b" (caller frees), or NULL when every
 * one is covered.
 */
char *review_smoke_missing(const json_t *evidence, const json_t *engines);

/*
 * The cells of engines (an array) the newest smoke evidence of each
 * measured as regressed (regress_compare()'s verdict), as a new array of
 * {engine, model, split, concurrency, text, metrics}; empty when none.
 * Approve takes such a change only when told to accept the regression.
 */
json_t *review_smoke_regressed(const json_t *evidence, const json_t *engines);

/* The measured effect of a change: each cell of its newest smoke's speed
 * as "ENGINE MODEL/SPLIT c=N: VERDICT IN WORDS", a new array (empty when
 * no smoke measured its speed). */
json_t *review_smoke_effect(const json_t *evidence);

#endif
