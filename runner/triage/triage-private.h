/*
 * triage-private.h - what the files of runner/triage/ share: the state
 * of one triage run, and the steps triage_run() takes (detect.c,
 * culprit.c, smoke.c, incident.c, proposal.c, lift.c). Internal: nothing
 * outside runner/triage/ and the triage commands may include it; the
 * contract is triage.h.
 */
#ifndef WARDEN_TRIAGE_PRIVATE_H
#define WARDEN_TRIAGE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "triage.h"

/* Who triage's own transitions and patches are by. */
#define TRIAGE_WHO "warden triage"
#define TRIAGE_AUTHOR "warden triage <triage@warden.invalid>"

/* The defaults of the policy's triage section. */
#define TRIAGE_DEFAULT_PROMPTS 4
#define TRIAGE_DEFAULT_BUDGET 16

/* One triage run. */
struct triage_ctx {
	const struct triage_opts *o;
	int64_t run_id;			/* triage_runs.id */
	char *cycle;
	size_t budget;			/* smoke runs per engine */
	size_t smoke_seq;		/* smoke campaigns made by this run */
	json_t *cycles;			/* detect.c: every cycle, oldest first */
	json_t *engines;		/* detect.c: {ENGINE: state} */
	json_t *report;			/* what triage_run returns */
};

/* Progress: a line for people (engine may be NULL). */
void triage_progress(struct triage_ctx *c, const char *phase,
    const char *engine, size_t run, size_t max, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Is engine among the options' filter (no filter: every engine)? */
int triage_engine_selected(const struct triage_ctx *c, const char *engine);

/* "enga, engb and engc" (incident.c). Caller frees. */
char *triage_engine_names(const json_t *engines);

/* Add an incident id to the array named what of the report ("opened",
 * "updated", "fixed", "reopened"), once. */
void triage_report_incident(struct triage_ctx *c, const char *what,
    int64_t id);

/* ---- detect.c ---- */

/*
 * Decide from stored outcomes which engines of c->cycle broke: fills
 * c->engines with, per engine of the cycle, {"status": "broken" |
 * "healthy", "failing_cells": [...], "cells": N, "manifest": the
 * manifest its sweeps ran (or null), "commit" (the clean checkout its
 * newest sweep's run ran from, or null), "good_cycle", "good_manifest",
 * "good_commit" (the last earlier cycle where it was healthy, or
 * absent), "changes"
 * (manifest_diff, when both manifests exist), "why" (for an engine
 * triage cannot compare), "update_failed" {outcome, detail}}. A cell
 * fails when its sweep did not complete or completed fewer than
 * gates.completion_min of gates.completion_of requests; a cell the
 * profile skips counts neither way; an update that failed in the cycle
 * breaks the engine.
 */
struct werr *triage_detect(struct triage_ctx *c);
/* The position of cycle among c->cycles (oldest 0), -1 when absent. */
long triage_cycle_index(const struct triage_ctx *c, const char *cycle);
/* Does a stored sweep (its columns as JSON) pass? -1: neither (skipped). */
int triage_sweep_passes(const json_t *sweep, const struct policy *policy);

/* ---- culprit.c ---- */

/*
 * Search engine's changes (its suspects, most suspicious first) for what
 * broke it, in scratch environments: a new object {"kind" (search.h's
 * kinds, or "own_release_unconfirmed", "not_bisectable"), "culprits":
 * [{package, from, to}], "changes" (n), "bound", "runs", "smoke": [ids],
 * "why"}.
 */
struct werr *triage_culprit(json_t **out, struct triage_ctx *c,
    const char *engine, const json_t *suspects);

/* ---- commits.c ---- */

/*
 * The commits on official between engine's good_commit and commit (the
 * runs of its healthy and failing cycles, detect.c), first parent, oldest
 * first, that change what the engine runs with: its adapter, its model
 * profiles, the policy, the workloads. A new array of {"commit",
 * "parent", "summary", "paths": [changed paths that concern it],
 * "review": the review it came in by (Warden-Review trailer) or null};
 * empty when either commit is unknown or they are the same.
 */
struct werr *triage_commit_suspects(json_t **out, struct triage_ctx *c,
    const char *engine);
/*
 * Find which of commits (triage_commit_suspects) broke engine, by smoke
 * runs of checkouts of official's trees: a new object {"kind": "commit"
 * (found and confirmed), "unexplained" (it fails before the first of
 * them too), "unconfirmed" (the newest passes), "unresolved" (a state
 * did not build), "budget"; "culprits": [the commit], "changes",
 * "bound", "runs", "smoke": [ids], "why"}.
 */
struct werr *triage_commit_search(json_t **out, struct triage_ctx *c,
    const char *engine, const json_t *commits);

/* ---- smoke.c ---- */

struct triage_smoke_req {
	const char *engine;
	const json_t *base;		/* the manifest reproduced (id,
					   packages) */
	const json_t *pins;		/* {package: version} over base's */
	const json_t *cells;		/* the failing cells: their models and
					   splits are smoked */
	const char *purpose;
	const char *tree_commit;	/* NULL: the adapters, profiles,
					   policy and workloads of the
					   repository; else those of this
					   commit (40 hex) of official, checked
					   out for the run */
	size_t k, max;			/* smoke run k of at most max */
};

struct triage_smoke_res {
	const char *verdict;		/* "pass", "fail", "build_failed" */
	int64_t id;			/* triage_smoke.id */
	int cached;			/* an earlier run of the same pins */
};

/*
 * Rebuild the environment of base with pins in a scratch directory
 * (never the live one), run a smoke campaign of the engine from it, and
 * record what was pinned, the outcome and the log tail. A run of the
 * same cycle, engine, base and pins already recorded is not repeated.
 * Errors are warden's (store, campaign); an engine that does not build
 * or fails is a verdict.
 */
struct werr *triage_smoke(struct triage_smoke_res *res, struct triage_ctx *c,
    const struct triage_smoke_req *r);
/* Remove this run's scratch environment of engine. */
void triage_smoke_cleanup(struct triage_ctx *c, const char *engine);

/* ---- smoke-regression.c: the smoke runs of a performance regression ---- */

/* The concurrency levels of cells' regressed series (a new array of *n,
 * NULL when no cell is a regression), raising *limit to at least the
 * highest so the level is reached. */
int *triage_regression_levels(const json_t *cells, size_t *n, size_t *limit);
/* Why the smoke sweeps fail a regressed series of cells (still worse
 * than published by the alert's threshold, or not measured); caller
 * frees. NULL: none fails. */
char *triage_regression_fails(const json_t *sweeps, const json_t *cells);

/* ---- incident.c ---- */

/*
 * Turn the searches ({ENGINE: culprit.c's object}) of the broken
 * engines into incidents: open new ones, add engines to an open incident
 * of the same culprit, mark the rest updated; propose pins for the
 * confirmed ones (proposal.c).
 */
struct werr *triage_incidents_open(struct triage_ctx *c, const json_t *searches);
/* The open incidents that already explain engine's breakage in this
 * cycle (their culprit is still in its manifest): the first one's id,
 * or 0. */
struct werr *triage_incident_covering(int64_t *id, struct triage_ctx *c,
    const char *engine);
/* Propose the pins of a confirmed incident for the engines no proposal
 * names yet (all of them when a run was killed before it recorded the
 * one it queued: that review is found by its note, not queued again). */
struct werr *triage_incident_propose_missing(struct triage_ctx *c,
    int64_t id);
/* The smoke runs of incident id's record (rec), attached to review as
 * its evidence (kind "triage-smoke": {"incident", "culprits", "smoke"}),
 * once: a run resumed after a kill finds them there. For a pin, a
 * revert and a lift alike. incident-propose.c */
struct werr *triage_attach_smoke(struct triage_ctx *c, int64_t review,
    int64_t id, const json_t *rec);
/* Open incidents whose engines are all healthy now: fixed; lift
 * proposals decided by a maintainer: settled. */
struct werr *triage_incidents_settle(struct triage_ctx *c);

/* ---- proposal.c ---- */

/*
 * Queue the patch that makes, in each engine's adapter on the official
 * tip, the edits pins[ENGINE] = {package: "pkg==version" to pin it, or
 * null to drop its pins}, through the allowlist gate with source
 * triage. note ("triage: incident 3: ...") names the proposal: a triage
 * review with that note already queued (a run killed after submitting)
 * is taken instead of queueing again. *review is the review's id, 0
 * when nothing was queued (*gate says why: the gate's JSON, or
 * {"ok": false, "why"} when there was nothing to change).
 */
struct werr *triage_propose(int64_t *review, json_t **gate,
    struct triage_ctx *c, const json_t *pins, const char *note);
/*
 * The same for the revert of commit (40 hex) on the official tip (git
 * revert, in memory): *gate {"ok": false, "why"} when it does not apply
 * cleanly or would change nothing. The gate refuses a revert outside the
 * allowlist (the policy, workloads): a maintainer reverts those.
 */
struct werr *triage_propose_revert(int64_t *review, json_t **gate,
    struct triage_ctx *c, const char *commit, const char *note);

/* ---- lift.c ---- */

/* For each fixed incident whose culprit has a newer release than the
 * one that broke: reopen it, smoke the new release in every engine, and
 * propose lifting the pin when it passes. */
struct werr *triage_lift(struct triage_ctx *c);

/* The smoke runs an incident's record names, in order (a new array of
 * their rows). incident-query.c */
struct werr *triage_record_smoke(json_t **out, struct store *store,
    const json_t *rec);

#endif
