/*
 * update.c - the update step over a roster: plan every engine when the
 * policy names groups (a dry run each, so a shared dependency moves to
 * one version everywhere or nowhere), then per engine build its
 * environment (envbuild.c), make its models present and check their
 * digests (models.c), and record the attempt with its manifest in the
 * store. A failing engine is recorded as an outcome and the next engine
 * goes on; only the store stops the step. Never prints.
 *
 * Groups are all-or-none. An engine whose venv moves a group package
 * keeps its old venv aside first (stash.c) and its attempt waits; when
 * every engine is done, the waiting attempts of each group are recorded
 * in one transaction (the commit point): as they are when no engine
 * holding a package of their group failed, else as group_rolled_back
 * with their current manifest unchanged. Then each kept venv is dropped
 * (committed) or put back (rolled back), by comparing the store's
 * current manifest with the one the stash names: the rule that also
 * settles, at the start of the next run, a swap a kill -9 interrupted.
 * A group move keeps old environments aside rather than staging new ones
 * because a venv cannot be moved once built (its scripts name its path).
 * Engines the caller did not name join the run when they hold a group
 * package the run holds (join.c), so naming engines never splits a group.
 * The group's pins and its commit point are in group.c.
 */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "manifest.h"
#include "store-update.h"
#include "update-private.h"
#include "util.h"
#include "version.h"


char *
update_env_dir(const char *repo_root, const char *engine)
{
	return xasprintf("%s/.warden/envs/%s", repo_root, engine);
}

void
update_report_free(struct update_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].engine);
		free(r->v[i].outcome);
		free(r->v[i].detail);
		free(r->v[i].log_path);
		json_decref(r->v[i].changes);
		json_decref(r->v[i].held);
	}
	for (i = 0; i < r->n_joined; i++) {
		free(r->joined[i].engine);
		free(r->joined[i].group);
		free(r->joined[i].package);
		free(r->joined[i].held_by);
	}
	free(r->joined);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static struct update_engine_result *
report_add(struct update_report *r, const char *engine, const char *outcome)
{
	struct update_engine_result *e;

	r->v = xrealloc(r->v, (r->n + 1) * sizeof(*r->v));
	e = &r->v[r->n++];
	memset(e, 0, sizeof(*e));
	e->engine = xstrdup(engine);
	e->outcome = xstrdup(outcome);
	return e;
}

static void
progress(const struct update_ctx *ctx, size_t k, size_t n, const char *engine,
    const char *phase)
{
	if (ctx->on_progress != NULL)
		ctx->on_progress(ctx->arg, k, n, engine, phase);
}

static void
job_build(struct update_build *b, struct engine_job *j, size_t k, size_t n)
{
	memset(b, 0, sizeof(*b));
	b->adapter = j->adapter;
	b->env_dir = j->env_dir;
	b->pins = &j->pins;
	b->current = j->current;
	b->log_path = j->log_path;
	b->k = k;
	b->n = n;
}

/* Check the models; copy their entries into the manifest. */
static struct werr *
job_models(const struct update_ctx *ctx, struct engine_job *j, json_t *manifest,
    int *mismatch)
{
	struct werr *err;
	json_t *models;

	err = update_models(&models, mismatch, ctx, j->adapter, j->env_dir,
	    j->log_path);
	if (err == NULL && manifest != NULL)
		json_object_set_new(manifest, "models", models);
	else
		json_decref(models);
	return err;
}

/* Update one engine and record the attempt. Only store errors return. */
static struct werr *
job_run(struct update_report *rep, const struct update_ctx *ctx,
    struct store *store, struct engine_job *j, size_t k, size_t n)
{
	struct update_build_result res;
	struct store_update_attempt at;
	struct update_engine_result *e;
	struct update_build b;
	struct werr *err, *serr = NULL;
	json_t *changes, *models_first = NULL;
	int64_t previous_id = json_integer_value(json_object_get(j->current,
	    "id"));
	int mismatch = 0, same;

	job_build(&b, j, k, n);
	memset(&res, 0, sizeof(res));
	/* With an environment in place, models are checked before it
	 * changes, so a bad digest leaves everything as it was. */
	if (!ctx->dry_run && j->current != NULL) {
		progress(ctx, k, n, j->name, "models");
		models_first = json_object();
		if ((err = job_models(ctx, j, models_first, &mismatch)) != NULL) {
			res.outcome = mismatch ? "model_mismatch" : "failed";
			goto failed;
		}
	}
	if (!ctx->dry_run && memchr(j->moves, 1,
	    ctx->policy->update.n_groups) != NULL) {
		if ((err = update_stash_keep(j->env_dir, previous_id)) != NULL)
			goto failed;
		j->stashed = 1;
	}
	progress(ctx, k, n, j->name, ctx->dry_run ? "plan" : "install");
	if ((err = update_env_build(&res, ctx, &b)) != NULL)
		goto failed;
	if (!ctx->dry_run) {
		if (models_first != NULL)
			json_object_set(res.manifest, "models",
			    json_object_get(models_first, "models"));
		else {
			progress(ctx, k, n, j->name, "models");
			if ((err = job_models(ctx, j, res.manifest, &mismatch)) != NULL) {
				res.outcome = mismatch ? "model_mismatch" : "failed";
				goto failed;
			}
		}
	}
	changes = manifest_diff(j->current, res.manifest);
	same = manifest_same_version(j->current, res.manifest);
	e = report_add(rep, j->name, ctx->dry_run ? (same ? "would_stay" :
	    "would_update") : (same ? "unchanged" : "updated"));
	e->changes = changes;
	e->held = json_incref(res.held);
	e->log_path = xstrdup(j->log_path);
	if (!ctx->dry_run) {
		/* the environment changed; its record is not yet made */
		fault_point("update.built");
		if (j->stashed) {
			/* recorded with its group, by update_groups_finish() */
			j->waiting = json_incref(res.manifest);
			j->report_i = rep->n - 1;
			goto out;
		}
		memset(&at, 0, sizeof(at));
		at.engine = j->name;
		at.outcome = e->outcome;
		at.log_path = j->log_path;
		at.manifest = res.manifest;
		at.env_dir = j->env_dir;
		at.previous_id = json_integer_value(json_object_get(j->current, "id"));
		at.changes = changes;
		serr = store_update_record(store, &at, &e->manifest_id);
	}
	goto out;
failed:
	e = report_add(rep, j->name, res.outcome != NULL ? res.outcome : "failed");
	e->detail = xstrdup(err->msg);
	e->changes = json_object();
	e->held = res.held != NULL ? json_incref(res.held) : json_object();
	e->log_path = xstrdup(j->log_path);
	rep->failed++;
	j->failed = 1;
	j->report_i = rep->n - 1;
	werr_free(err);
	if (!ctx->dry_run) {
		memset(&at, 0, sizeof(at));
		at.engine = j->name;
		at.outcome = e->outcome;
		at.detail = e->detail;
		at.log_path = j->log_path;
		at.previous_id = previous_id;
		serr = store_update_record(store, &at, NULL);
		/* its current manifest stays previous_id: the venv goes back */
		if (serr == NULL && j->stashed)
			serr = update_stash_settle(NULL, j->env_dir, previous_id);
	}
out:
	progress(ctx, k, n, j->name, "done");
	json_decref(models_first);
	update_build_result_free(&res);
	return serr;
}

static struct werr *
job_open(struct engine_job *j, const struct update_ctx *ctx,
    struct store *store, const char *name)
{
	char *dir;
	struct werr *err;

	memset(j, 0, sizeof(*j));
	j->name = name;
	j->holds = xcalloc(ctx->policy->update.n_groups + 1, 1);
	j->moves = xcalloc(ctx->policy->update.n_groups + 1, 1);
	j->env_dir = update_env_dir(ctx->repo_root, name);
	dir = xasprintf("%s/.warden/logs/update/%s", ctx->repo_root,
	    store != NULL && !ctx->dry_run ? store_cycle(store) : "dry-run");
	j->log_path = xasprintf("%s/%s.log", dir, name);
	err = mkdir_p(dir);
	free(dir);
	if (err == NULL && store != NULL)
		err = store_update_current(store, name, &j->current);
	return err;
}

static void
job_free(struct engine_job *j)
{
	adapter_free(j->adapter);
	free(j->env_dir);
	free(j->log_path);
	json_decref(j->current);
	json_decref(j->plan);
	json_decref(j->waiting);
	free(j->holds);
	free(j->moves);
	strlist_free(&j->pins);
}

/* Plan engines from..n-1 of a group run without changing anything. */
static void
plan_all(const struct update_ctx *ctx, struct engine_job *jobs, size_t from,
    size_t n)
{
	struct update_ctx dry = *ctx;
	struct update_build_result res;
	struct update_build b;
	struct werr *err;
	size_t i;

	dry.dry_run = 1;
	for (i = from; i < n; i++) {
		if (jobs[i].adapter == NULL)
			continue;
		progress(ctx, i + 1, n, jobs[i].name, "plan");
		job_build(&b, &jobs[i], i + 1, n);
		b.pins = NULL;
		if ((err = update_env_build(&res, &dry, &b)) != NULL) {
			jobs[i].plan_failed = 1;
			werr_free(err);
		} else
			jobs[i].plan = json_incref(res.manifest);
		update_build_result_free(&res);
	}
}

/*
 * Settle every stash a previous run left (killed between keeping a venv
 * aside and settling it): against the engine's current manifest now.
 */
static struct werr *
settle_all(const struct update_ctx *ctx, struct store *store)
{
	char *envs = path_join(ctx->repo_root, ".warden/envs"), *dir;
	struct werr *err = NULL;
	struct dirent *de;
	json_t *cur;
	int64_t prev;
	DIR *d;

	if ((d = opendir(envs)) == NULL) {
		free(envs);
		return NULL;	/* no environment yet */
	}
	while (err == NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		dir = path_join(envs, de->d_name);
		if (update_stash_pending(dir, &prev) &&
		    (err = store_update_current(store, de->d_name, &cur)) == NULL) {
			err = update_stash_settle(NULL, dir,
			    json_integer_value(json_object_get(cur, "id")));
			json_decref(cur);
		}
		free(dir);
	}
	closedir(d);
	free(envs);
	return err;
}

/* Load j's adapter; one that does not load is j's failed attempt. */
static struct werr *
job_load(struct update_report *rep, const struct update_ctx *ctx,
    struct store *store, struct engine_job *j)
{
	struct store_update_attempt at;
	struct update_engine_result *e;
	struct werr *aerr, *err = NULL;

	if ((aerr = adapter_load_named(&j->adapter, ctx->repo_root,
	    j->name)) == NULL)
		return NULL;
	e = report_add(rep, j->name, "failed");
	e->detail = xstrdup(aerr->msg);
	e->changes = json_object();
	e->held = json_object();
	rep->failed++;
	j->failed = j->plan_failed = 1;
	j->report_i = rep->n - 1;
	if (!ctx->dry_run) {
		memset(&at, 0, sizeof(at));
		at.engine = j->name;
		at.outcome = "failed";
		at.detail = aerr->msg;
		err = store_update_record(store, &at, NULL);
	}
	werr_free(aerr);
	return err;
}

/*
 * Plan the run, and take in every engine that holds a group package the
 * run holds (join.c), then plan those, until none joins: so a group is
 * moved in all its engines however few the caller named.
 */
static struct werr *
join_all(struct update_report *rep, const struct update_ctx *ctx,
    struct store *store, struct engine_job **jobs, size_t *n)
{
	struct update_member *m;
	struct werr *err = NULL;
	size_t from = 0, had, i;

	while (err == NULL && from < *n) {
		plan_all(ctx, *jobs, from, *n);
		m = xcalloc(*n, sizeof(*m));
		for (i = 0; i < *n; i++) {
			m[i].name = (*jobs)[i].name;
			m[i].current = (*jobs)[i].current;
			m[i].plan = (*jobs)[i].plan;
		}
		had = rep->n_joined;
		err = update_group_joins(rep, ctx, store, m, *n);
		free(m);
		from = *n;
		*jobs = xrealloc(*jobs, (*n + rep->n_joined - had) *
		    sizeof(**jobs));
		for (i = had; i < rep->n_joined && err == NULL; i++) {
			err = job_open(&(*jobs)[(*n)++], ctx, store,
			    rep->joined[i].engine);
			if (err == NULL)
				err = job_load(rep, ctx, store, &(*jobs)[*n - 1]);
		}
	}
	return err;
}

struct werr *
update_run(struct update_report *out, const struct update_ctx *ctx,
    struct store *store, const char *const *engines)
{
	const struct policy *pol = ctx->policy;
	const struct roster *ro = policy_roster(pol, pol->default_roster);
	struct engine_job *jobs;
	struct werr *err = NULL;
	size_t n = 0, i;

	memset(out, 0, sizeof(*out));
	if (engines != NULL && engines[0] != NULL)
		while (engines[n] != NULL)
			n++;
	else if (ro != NULL)
		n = ro->engines.n;
	if (n == 0)
		return werr_new(WEXIT_INPUT, "no engine to update");
	jobs = xcalloc(n, sizeof(*jobs));
	for (i = 0; i < n && err == NULL; i++)
		err = job_open(&jobs[i], ctx, store, engines != NULL &&
		    engines[0] != NULL ? engines[i] : ro->engines.v[i]);
	if (err != NULL || (!ctx->dry_run && (err = settle_all(ctx, store)) != NULL))
		goto out;
	for (i = 0; i < n && err == NULL; i++)
		err = job_load(out, ctx, store, &jobs[i]);
	if (err == NULL && pol->update.n_groups > 0 &&
	    (err = join_all(out, ctx, store, &jobs, &n)) == NULL)
		update_group_pins(ctx, jobs, n);
	if (err != NULL)
		goto out;
	for (i = 0; i < n && err == NULL; i++)
		if (jobs[i].adapter != NULL)
			err = job_run(out, ctx, store, &jobs[i], i + 1, n);
	if (err == NULL && !ctx->dry_run)
		err = update_groups_finish(out, ctx, store, jobs, n);
out:
	for (i = 0; i < n; i++)
		job_free(&jobs[i]);
	free(jobs);
	return err;
}
