/*
 * campaign-private.h - what campaign.c, campaign-walk.c and
 * campaign-sweep.c share: the run being walked, its grid points, and the
 * state the walk carries from one point to the next. Internal to the
 * campaign module: nothing outside runner/campaign/campaign*.c may include
 * it; the public contract is campaign.h.
 */
#ifndef WARDEN_CAMPAIGN_PRIVATE_H
#define WARDEN_CAMPAIGN_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "campaign.h"
#include "campaign-input.h"
#include "engine.h"
#include "error.h"

struct point {
	const char *engine, *model, *split;	/* borrowed from the grid JSON */
	unsigned concurrency;
};

struct run {
	const struct campaign_opts *o;
	const char *tree;		/* o->tree_root, else o->repo_root */
	const char *sandbox;		/* the sandbox engines run in
					   (o->untrusted), or NULL */
	char *run_id;
	json_t *grid;
	struct point *points;
	size_t npoints;
	size_t limit;
	struct workload *workloads;
	size_t nworkloads;
	uint64_t gpu_hint;
	int finished;			/* resuming a run that is done */
	/* For the campaign ETA: the sweeps this process ran and the time
	 * they took, engine start included. */
	size_t ran;
	double ran_s;
};

/* The override of engine's environment in r's options, or NULL. */
const struct campaign_env *campaign_env_of(const struct run *r,
    const char *engine);

/* What the grid walk carries from one point to the next. */
struct walk {
	const char *engine;		/* the engine of the current block */
	struct adapter *adapter;
	struct profile *profile;
	uint64_t deadline;		/* the engine's wall cap, mono ns */
	char *skip_outcome;		/* the rest of this engine's grid */
	char *skip_detail;
	char *skip_model;		/* wrong_model: this model only */
	char *skip_model_detail;
	struct engine *kept;		/* server_per_level false */
	const struct point *kept_point;
	struct werr *adapter_err;
};

/*
 * Run point i of r: skip it if already recorded, else record it as a
 * sweep or as a skip outcome. Engine failures are outcomes, not errors.
 */
struct werr *campaign_walk_point(struct run *r, struct walk *w, size_t i);
/* campaign-walk.c: the rest of the current engine's block is skipped
 * with outcome, the detail "not run: " and the first clause of detail
 * (or the outcome). */
void campaign_walk_skip(struct walk *w, const char *outcome,
    const char *detail);

/* campaign-sweep.c: record point i as not run, with its outcome and
 * detail (and its progress). */
struct werr *campaign_sweep_skip(struct run *r, struct walk *w, size_t i,
    const char *outcome, const char *detail);
/* Run point i as a sweep and record it (or its start failure). */
struct werr *campaign_sweep_run(struct run *r, struct walk *w, size_t i);
/* The error that ends the run when opts->stop is set (NULL if not). */
struct werr *campaign_stopped(const struct run *r);
/* Stop any kept engine and free what the walk holds. */
void campaign_walk_free(struct walk *w);

#endif
