/*
 * update.h - the update step: bring each engine of a roster to the
 * newest version its adapter and the policy allow, make its models
 * present and check their digests, and record a version manifest of the
 * whole environment per engine per cycle.
 *
 * Layout of an engine's environment (env_dir, .warden/envs/ENGINE for the
 * live one): pip sources in env_dir/venv; git sources fetched into the
 * bare repository env_dir/git, built incrementally in two persistent
 * work trees env_dir/builds/work-a and work-b, and env_dir/src a symbolic
 * link to the build in use (swapped only when a build succeeded, the
 * next build going to the other tree); brew is global (the brew shim).
 *
 * Triage builds an engine's environment in a scratch directory with
 * suspects pinned back through update_env_build(), and diffs manifests
 * with manifest_diff() (manifest.h): the same functions `warden update`
 * uses. An engine whose update fails is an outcome (failed, build_failed,
 * model_mismatch), never an error: only the store or an unusable policy
 * stop the step. Never prints: progress goes to the caller's callback.
 */
#ifndef WARDEN_UPDATE_H
#define WARDEN_UPDATE_H

#include <jansson.h>

#include "adapter.h"
#include "error.h"
#include "policy.h"
#include "store.h"

struct update_box;

struct update_ctx {
	const char *repo_root;
	const struct policy *policy;
	int dry_run;			/* change nothing; say what would */
	int retry_failed;		/* build a git commit that failed
					   to build before (gitbuild.c) */
	/*
	 * A triage scratch build: the environment is content no maintainer
	 * approved, and every program update_env_build() runs for it (the
	 * venv, the shims, a git source's build steps, version probes)
	 * runs in the OS sandbox named by sandbox (scratchbox.c: it reads
	 * the system and what warden names, writes only the environment's
	 * directory) with a scrubbed environment; sandbox NULL: it runs
	 * without one (policy agent.sandbox "off", or "best-effort" where
	 * none works). Either way the log says so beside each program and
	 * the manifest records "sandbox". The caller decides sandbox with
	 * engine_sandbox_decide() (engine.h). 0: `warden update`, whose
	 * adapters a maintainer approved, running unsandboxed.
	 */
	int untrusted;
	const char *sandbox;		/* "bubblewrap", "sandbox-exec", or
					   NULL: none */
	/* Internal to runner/update/: the sandbox update_env_build()
	 * prepared for an untrusted build; callers leave it NULL. */
	const struct update_box *box;
	/* progress: engine k of n is in phase ("fetch", "plan", "install",
	 * "build", "models", "done"); may be NULL */
	void (*on_progress)(void *arg, size_t k, size_t n, const char *engine,
	    const char *phase);
	void *arg;
};

/* What to build. */
struct update_build {
	const struct adapter *adapter;
	const char *env_dir;		/* made when missing */
	const struct strlist *pins;	/* "pkg==version" over the adapter's
					   pin and pins; NULL: none */
	const json_t *current;		/* the environment's manifest now, for
					   holds and old versions; NULL: none */
	const char *log_path;		/* shim and build output, appended */
	size_t k, n;			/* for progress */
};

struct update_build_result {
	json_t *manifest;	/* the environment's manifest (without models);
				   dry run: what it would be */
	const char *outcome;	/* on error: "failed" or "build_failed" */
	char *log_tail;		/* on error: the log's last lines, or NULL */
	json_t *held;		/* {package: why} releases held back */
};

/*
 * Build (or bring up to date) the environment of b->adapter in
 * b->env_dir, with b->pins overriding the adapter's, and return its
 * manifest in res. An error means this environment could not be built
 * (res->outcome says how); the previous environment stays usable: a pip
 * install that fails changes nothing, a git build happens in the work
 * tree not in use, which replaces the one in use only when the build
 * succeeded.
 * Free res with update_build_result_free().
 */
struct werr *update_env_build(struct update_build_result *res,
    const struct update_ctx *ctx, const struct update_build *b);
void update_build_result_free(struct update_build_result *res);

/* One engine's result of update_run(). */
struct update_engine_result {
	char *engine;
	char *outcome;		/* updated, unchanged, failed, build_failed,
				   model_mismatch, reverted,
				   group_rolled_back; dry run:
				   would_update, would_stay */
	char *detail;		/* why, for a failure */
	json_t *changes;	/* manifest_diff(old, new) */
	json_t *held;		/* {package: why} */
	int64_t manifest_id;	/* 0: none recorded */
	char *log_path;
};

/* An engine a run took in because it holds a policy group's package. */
struct update_join {
	char *engine;
	char *group;
	char *package;		/* as the policy names it */
	char *held_by;		/* the engine of the run it joins for */
};

struct update_report {
	struct update_engine_result *v;
	size_t n;
	int failed;		/* how many engines failed */
	struct update_join *joined;	/* in the order they joined */
	size_t n_joined;
};

/*
 * Update engines (NULL-terminated names; NULL: the policy's default
 * roster), recording every attempt and manifest in store (not with
 * ctx->dry_run, which records nothing). An engine of any roster whose
 * current manifest holds a package of a policy group that an engine of
 * the run holds (now or in its plan) joins the run (out->joined), and so
 * on from the engines that joined. A policy group is all or none:
 * when an engine holding one of its packages fails, every engine whose
 * venv moved one of them in this run gets its venv and current manifest
 * back (group_rolled_back). A real run first settles the venvs a killed
 * run left aside (update.c, stash.c).
 */
struct werr *update_run(struct update_report *out, const struct update_ctx *ctx,
    struct store *store, const char *const *engines);
void update_report_free(struct update_report *r);

/*
 * Each engine's last upstream activity (git: newest commit or tag date,
 * after a fetch; pip: newest release date from the package index; brew
 * and none: unknown) against the policy's retirement_days: a new array
 * of {"engine", "kind", "last_activity" (UTC or null), "what", "age_days"
 * (or null), "retirement_days", "status": active|stale|unknown,
 * "detail"}. Reports only; changes nothing but the git fetch cache.
 */
struct werr *update_stale(json_t **out, const struct update_ctx *ctx,
    const char *const *engines);

/* The live environment directory of engine name; caller frees. */
char *update_env_dir(const char *repo_root, const char *engine);

#endif
