/*
 * campaign.h - the campaign: the grid engine x model x split x concurrency
 * run against fresh engine servers, every request and memory sample in
 * the store as it happens, resumable after a kill at any moment.
 *
 * A run has an explicit id and the fingerprint of the machine it runs on;
 * its grid (the points, in order, and the prompt limit) is stored with it,
 * so --resume runs exactly the points not yet done, re-running the one a
 * kill interrupted. Engine failures are outcomes recorded per sweep
 * (start_failed, not_ready, server_crash, hang, wrong_model,
 * port_conflict, setup_failed, engine_cap, unsupported, skipped,
 * adapter_error, profile_error), never errors: the campaign moves on. A
 * profile that says an engine does not serve a model gives `skipped` with
 * its reason, never a speed result. An error means warden itself could
 * not go on (store, workload file, policy), or was asked to stop (*stop):
 * then the sweep under way stays unfinished, for --resume to run again.
 *
 * One campaign runs per machine and per repository (runlock.h): a second
 * one, or a --resume of a run still live, exits 3 naming the holder.
 *
 * Never prints: progress goes to the caller's callback.
 */
#ifndef WARDEN_CAMPAIGN_H
#define WARDEN_CAMPAIGN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "store.h"

struct scratch_usage;

struct campaign_progress {
	size_t sweep;		/* 1-based position among the run's points */
	size_t sweeps;
	const char *engine, *model, *split;
	unsigned concurrency;
	const char *phase;	/* "starting", "warmup", "measuring", "done" */
	size_t done, total;	/* timed requests of this sweep */
	size_t ok;
	double tokens_per_s;	/* live output tok/s of this sweep */
	double eta_s;		/* of this sweep, -1 unknown */
	/* Of the whole run, -1 unknown: this sweep's ETA plus the points
	 * after it at the mean time of the sweeps run so far (this one's
	 * expected time before the first ends). An estimate. */
	double campaign_eta_s;
	const char *outcome;	/* when phase is "done" */
	double elapsed_s;	/* since this sweep began */
};

/*
 * Run engine from another environment than its live one
 * (.warden/envs/ENGINE): triage's smoke runs of a scratch build. Its
 * sweeps' provenance then carries that build's manifest (manifest_id, as
 * the update step recorded it; 0: none) instead of the engine's current
 * one, and the run's provenance lists the overrides under "env_dirs".
 */
struct campaign_env {
	const char *engine;
	const char *env_dir;
	int64_t manifest_id;
};

struct campaign_opts {
	const char *repo_root;		/* .warden/ (store, logs, envs) */
	const char *tree_root;		/* adapters, profiles, workloads and
					   the engines' {repo}; NULL: repo_root
					   (a smoke run of a change gives the
					   change's checkout) */
	const char *tree_label;		/* provenance "tree" when tree_root is
					   set (what that checkout is) */
	const struct policy *policy;
	struct store *store;
	const char *roster;		/* NULL: policy default roster */
	const char *const *engines;	/* NULL-terminated filters; NULL: all */
	const char *const *models;
	const char *const *splits;
	const int *concurrency;		/* NULL: policy campaign.concurrency */
	size_t n_concurrency;
	size_t limit;			/* timed prompts per sweep; 0: all */
	int resume;
	const char *run_id;		/* NULL: a new id (or, with resume,
					   the newest unfinished run here) */
	unsigned shard_index;		/* --shard K/N: K (1-based) ... */
	unsigned shard_count;		/* ... and N; 0: the whole grid */
	const char *who;		/* the command line, for the locks */
	/* tree_root (or an env override) holds content no maintainer has
	 * approved (a smoke run of an agent's change, a pull request, a
	 * triage scratch environment): every engine, pre_start and stop
	 * step runs in the sandbox (sandbox/sandbox.h), as policy
	 * agent.sandbox says: "required" (no sandbox here: an error before
	 * anything runs), "best-effort" (run without and record "none"),
	 * "off". The run's provenance records "sandbox". */
	int untrusted;
	/* An untrusted run writes only into its own folder,
	 * .warden/unreviewed/RUN (sandbox/scratch.h): when the run ends it
	 * is measured into *left (when non-NULL) and removed. */
	struct scratch_usage *left;
	const struct campaign_env *envs;	/* per engine environment */
	size_t n_envs;				/* overrides; 0: none */
	void (*on_progress)(void *arg, const struct campaign_progress *p);
	void *arg;
	/* Set (to the signal's number) when the campaign must stop: checked
	 * between points, while an engine starts and at every load tick. */
	const volatile sig_atomic_t *stop;
};

/*
 * Keep in points (a grid's "points" array, in grid order) the cells of
 * shard index of count: whole engines, the i-th engine of the grid (from
 * 0) in shard i mod count + 1. *info_out (new reference) records the
 * shard for the run's grid: index, count, unit "engine", its engines,
 * the grid's engines, grid_points and grid_sha256 of the whole grid. A
 * shard with no cell is a usage error.
 */
struct werr *campaign_shard_points(json_t **info_out, json_t *points,
    unsigned index, unsigned count);

/*
 * The levels of opts that the policy's campaign.concurrency does not
 * list (ad hoc levels), in order; *n of them. The caller frees *out.
 */
void campaign_ad_hoc_levels(const struct campaign_opts *opts, int **out,
    size_t *n);

/* Run (or resume) a campaign. *run_id_out (caller frees) names it. */
struct werr *campaign_run(const struct campaign_opts *opts, char **run_id_out);

#endif
