/*
 * campaign.c - run the grid: for each point start a fresh engine (unless
 * policy server_per_level is false), check it serves the profile's model,
 * run warmups and the closed loop through the load generator, sample
 * memory, and record everything in the store as it happens. See
 * campaign.h for the contract; the walk over the grid (one sweep per
 * point) is in campaign-sweep.c, the SQL in store-campaign.c.
 *
 * Engine failures are outcomes: this file must never turn one into an
 * error, and must never leave an engine process behind. Never prints.
 */
#include "config.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "buf.h"
#include "campaign.h"
#include "campaign-input.h"
#include "campaign-private.h"
#include "engine.h"
#include "loadgen.h"
#include "memsample.h"
#include "power.h"
#include "repo.h"
#include "runlock.h"
#include "sandbox/scratch.h"
#include "sha256.h"
#include "store-campaign.h"
#include "util.h"

const struct campaign_env *
campaign_env_of(const struct run *r, const char *engine)
{
	size_t i;

	for (i = 0; i < r->o->n_envs; i++)
		if (strcmp(r->o->envs[i].engine, engine) == 0)
			return &r->o->envs[i];
	return NULL;
}

static json_t *
run_provenance(const struct run *r, const char *machine)
{
	json_t *o, *wl;
	size_t i;

	o = provenance_run(r->o->repo_root, r->o->policy->path, machine,
	    r->gpu_hint);
	if (r->o->tree_root != NULL) {
		/* a smoke run of a change measures the change's checkout, not
		 * the repository's HEAD */
		json_object_del(o, "repo_commit");
		json_object_del(o, "repo_dirty");
		json_object_del(o, "repo_error");
		json_object_set_new(o, "tree", json_string(r->o->tree_label ?
		    r->o->tree_label : r->o->tree_root));
	}
	if (r->o->n_envs > 0) {
		json_t *envs = json_object();

		for (i = 0; i < r->o->n_envs; i++)
			json_object_set_new(envs, r->o->envs[i].engine,
			    json_string(r->o->envs[i].env_dir));
		json_object_set_new(o, "env_dirs", envs);
	}
	if (r->o->untrusted)
		json_object_set_new(o, "sandbox", json_string(r->sandbox ?
		    r->sandbox : "none"));
	wl = json_object();
	for (i = 0; i < r->nworkloads; i++)
		json_object_set_new(wl, r->workloads[i].split,
		    json_string(r->workloads[i].digest));
	json_object_set_new(o, "workload_sha256", wl);
	return o;
}
/* ---- the grid ---- */

static int
listed(const char *const *filter, const char *s)
{
	if (filter == NULL || filter[0] == NULL)
		return 1;
	for (; *filter != NULL; filter++)
		if (strcmp(*filter, s) == 0)
			return 1;
	return 0;
}

/* "a, b, c" of a list of names. */
static char *
names_text(const struct strlist *l)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < l->n; i++)
		buf_printf(&b, "%s%s", i > 0 ? ", " : "", l->v[i]);
	if (l->n == 0)
		buf_puts(&b, "none");
	return buf_detach(&b);
}

/* Every value of a filter must name something there is: the first that
 * does not is a usage error naming the option, the value and what there
 * is (an empty grid is never left to explain itself). */
static struct werr *
filter_check(const char *const *filter, const struct strlist *known,
    const char *option, const char *what, const char *where)
{
	struct werr *err;
	char *text;

	for (; filter != NULL && *filter != NULL; filter++) {
		if (strlist_contains(known, *filter))
			continue;
		text = names_text(known);
		err = werr_usage("'--%s %s': %s '%s' is not in %s (its %ss: %s)",
		    option, *filter, what, *filter, where, what, text);
		free(text);
		return err;
	}
	return NULL;
}

void
campaign_ad_hoc_levels(const struct campaign_opts *o, int **out, size_t *n)
{
	const struct policy *pol = o->policy;
	size_t i, j;

	*out = NULL;
	*n = 0;
	for (i = 0; o->concurrency != NULL && i < o->n_concurrency; i++) {
		for (j = 0; j < pol->campaign.n_concurrency; j++)
			if (pol->campaign.concurrency[j] == o->concurrency[i])
				break;
		if (j < pol->campaign.n_concurrency)
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = o->concurrency[i];
	}
}

static struct werr *
grid_build(json_t **out, const struct campaign_opts *o)
{
	const struct policy *pol = o->policy;
	const char *name = o->roster ? o->roster : pol->default_roster;
	const struct roster *ro = policy_roster(pol, name);
	const int *levels = o->concurrency ? o->concurrency :
	    pol->campaign.concurrency;
	size_t nlevels = o->concurrency ? o->n_concurrency :
	    pol->campaign.n_concurrency;
	json_t *points, *adhoc, *shard = NULL;
	struct werr *err;
	char *where;
	int *ad;
	size_t e, m, s, c, nad;

	if (ro == NULL)
		return werr_new(WEXIT_INPUT, "no roster '%s' in policy",
		    name ? name : "(default)");
	where = xasprintf("roster '%s'", name);
	err = filter_check(o->engines, &ro->engines, "engine", "engine",
	    where);
	free(where);
	if (err == NULL)
		err = filter_check(o->models, &pol->models, "model", "model",
		    "the policy");
	if (err == NULL)
		err = filter_check(o->splits, &pol->campaign.splits, "split",
		    "split", "the policy");
	if (err != NULL)
		return err;
	points = json_array();
	for (e = 0; e < ro->engines.n; e++) {
		if (!listed(o->engines, ro->engines.v[e]))
			continue;
		for (m = 0; m < pol->models.n; m++) {
			if (!listed(o->models, pol->models.v[m]))
				continue;
			for (s = 0; s < pol->campaign.splits.n; s++) {
				if (!listed(o->splits, pol->campaign.splits.v[s]))
					continue;
				for (c = 0; c < nlevels; c++)
					json_array_append_new(points, json_pack(
					    "{s:s, s:s, s:s, s:i}",
					    "engine", ro->engines.v[e],
					    "model", pol->models.v[m],
					    "split", pol->campaign.splits.v[s],
					    "concurrency", levels[c]));
			}
		}
	}
	if (json_array_size(points) == 0) {
		json_decref(points);
		return werr_usage("roster '%s' has no engine to run", name);
	}
	if (o->shard_count > 0 && (err = campaign_shard_points(&shard, points,
	    o->shard_index, o->shard_count)) != NULL) {
		json_decref(points);
		return err;
	}
	campaign_ad_hoc_levels(o, &ad, &nad);
	adhoc = json_array();
	for (c = 0; c < nad; c++)
		json_array_append_new(adhoc, json_integer(ad[c]));
	free(ad);
	*out = json_pack("{s:o, s:I, s:s, s:o}", "points", points, "limit",
	    (json_int_t)o->limit, "roster", name, "ad_hoc_levels", adhoc);
	if (shard != NULL)
		json_object_set_new(*out, "shard", shard);
	return NULL;
}

static struct werr *
grid_load(struct run *r)
{
	json_t *pts = json_object_get(r->grid, "points"), *p;
	struct werr *err;
	size_t i, j;

	r->limit = (size_t)json_integer_value(json_object_get(r->grid, "limit"));
	r->npoints = json_array_size(pts);
	r->points = xcalloc(r->npoints + 1, sizeof(*r->points));
	json_array_foreach(pts, i, p) {
		r->points[i].engine = json_string_value(json_object_get(p, "engine"));
		r->points[i].model = json_string_value(json_object_get(p, "model"));
		r->points[i].split = json_string_value(json_object_get(p, "split"));
		r->points[i].concurrency = (unsigned)json_integer_value(
		    json_object_get(p, "concurrency"));
		if (!r->points[i].engine || !r->points[i].model ||
		    !r->points[i].split || r->points[i].concurrency == 0)
			return werr_new(WEXIT_ENV, "run '%s': bad grid point %zu",
			    r->run_id, i);
		for (j = 0; j < r->nworkloads; j++)
			if (strcmp(r->workloads[j].split, r->points[i].split) == 0)
				break;
		if (j < r->nworkloads)
			continue;
		r->workloads = xrealloc(r->workloads,
		    (r->nworkloads + 1) * sizeof(*r->workloads));
		if ((err = workload_load(&r->workloads[r->nworkloads],
		    r->tree, r->points[i].split)) != NULL) {
			workload_free(&r->workloads[r->nworkloads]);
			return err;
		}
		r->nworkloads++;
	}
	return NULL;
}

/* ---- the run ---- */

static char *
new_run_id(const char *machine)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	return xasprintf("%s-%.8s-%04x", stamp, machine,
	    (unsigned)((uint64_t)getpid() ^ mono_ns()) & 0xffffu);
}

/*
 * Engines of a warden killed with -9 may outlive it (one that ignores the
 * parent-death SIGTERM, or its children): whatever still writes into this
 * run's log directory is such an engine. Kill its process group.
 */
static void
reap_leftover_engines(const struct run *r)
{
	char *dir = xasprintf("%s/.warden/logs/%s", r->o->repo_root, r->run_id);
	struct werr *err;
	pid_t *pids = NULL, pgid;
	size_t n = 0, i;

	if ((err = memsample_procs_logging_under(dir, &pids, &n)) != NULL)
		werr_free(err);
	for (i = 0; i < n; i++) {
		if (pids[i] == getpid())
			continue;
		if ((pgid = getpgid(pids[i])) > 1 && pgid != getpgrp())
			(void)kill(-pgid, SIGKILL);
		(void)kill(pids[i], SIGKILL);
	}
	free(pids);
	free(dir);
}

/* Find the run to resume and check it belongs to this machine. */
static struct werr *
run_resume(struct run *r, const char *machine)
{
	const struct campaign_opts *o = r->o;
	char *run_machine = NULL, *state = NULL;
	struct werr *err;
	int found = 0, n = 0;

	if (o->run_id != NULL) {
		r->run_id = xstrdup(o->run_id);
	} else {
		if ((err = store_campaign_run_unfinished(o->store, machine,
		    &r->run_id)) != NULL)
			return err;
		if (r->run_id == NULL)
			return werr_new(WEXIT_INPUT, "no unfinished campaign "
			    "run on this machine to resume");
	}
	if ((err = store_campaign_run_get(o->store, r->run_id, &found,
	    &run_machine, &state, &r->grid)) != NULL)
		return err;
	if (!found)
		err = werr_new(WEXIT_INPUT, "no campaign run '%s'", r->run_id);
	else if (strcmp(run_machine, machine) != 0)
		err = werr_new(WEXIT_INPUT, "run '%s' was made on machine %s, "
		    "this is %s; results from two machines never mix",
		    r->run_id, run_machine, machine);
	else if (strcmp(state, "done") == 0)
		r->finished = 1;
	else
		err = store_campaign_discard_unfinished(o->store, r->run_id, &n);
	if (err == NULL && !r->finished)
		reap_leftover_engines(r);
	free(run_machine);
	free(state);
	return err;
}

/* The splits with fewer timed prompts than --limit asks for, recorded in
 * the grid as [{"split", "prompts"}]: their sweeps run every prompt. */
static void
limit_beyond(struct run *r)
{
	json_t *beyond = json_array();
	size_t i;

	for (i = 0; r->limit > 0 && i < r->nworkloads; i++)
		if (r->workloads[i].ntimed < r->limit)
			json_array_append_new(beyond, json_pack("{s:s, s:I}",
			    "split", r->workloads[i].split, "prompts",
			    (json_int_t)r->workloads[i].ntimed));
	json_object_set_new(r->grid, "limit_beyond", beyond);
}

static struct werr *
run_create(struct run *r, const char *machine)
{
	const struct campaign_opts *o = r->o;
	struct werr *err;
	json_t *prov;

	r->run_id = o->run_id ? xstrdup(o->run_id) : new_run_id(machine);
	if ((err = grid_build(&r->grid, o)) != NULL ||
	    (err = grid_load(r)) != NULL) {
		/* No run was recorded: nothing to resume. */
		free(r->run_id);
		r->run_id = NULL;
		return err;
	}
	limit_beyond(r);
	prov = run_provenance(r, machine);
	err = store_campaign_run_create(o->store, r->run_id, machine, r->grid,
	    prov);
	json_decref(prov);
	return err;
}

/* The sandbox for a run of unreviewed content, as policy says. */
static struct werr *
decide_sandbox(struct run *r)
{
	if (!r->o->untrusted)
		return NULL;
	return engine_sandbox_decide(&r->sandbox, r->o->policy->agent.sandbox,
	    "engines of unreviewed changes");
}

/*
 * The folders of unreviewed runs (sandbox/scratch.h) but this run's: a
 * run killed before it discarded its own left it behind. Holding the
 * repository's campaign lock, no other run is live.
 */
static void
scratch_sweep_stale(const struct run *r)
{
	char *root = path_join(r->o->repo_root, SCRATCH_ROOT);
	struct dirent *de;
	DIR *d;

	if ((d = opendir(root)) == NULL) {
		free(root);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char *sub;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    (r->run_id != NULL && strcmp(de->d_name, r->run_id) == 0))
			continue;
		sub = path_join(root, de->d_name);
		werr_free(scratch_discard(sub));
		free(sub);
	}
	closedir(d);
	free(root);
}

/* What this unreviewed run left, measured into o->left, then removed. */
static void
scratch_finish(const struct run *r)
{
	char *dir;

	if (!r->o->untrusted || r->run_id == NULL)
		return;
	dir = xasprintf("%s/%s/%s", r->o->repo_root, SCRATCH_ROOT, r->run_id);
	if (r->o->left != NULL)
		scratch_measure(dir, r->o->left);
	werr_free(scratch_discard(dir));
	free(dir);
}

/*
 * One campaign per repository (so --resume cannot take over a live run)
 * and per machine (so two never measure on the same CPUs).
 */
static struct werr *
locks_take(const struct campaign_opts *o, struct runlock **repo_lock,
    struct runlock **machine_lock)
{
	char *path = path_join(o->repo_root, ".warden/campaign.lock");
	struct werr *err;

	err = runlock_take(repo_lock, path, "a campaign of this repository",
	    o->who, o->repo_root);
	free(path);
	if (err != NULL)
		return o->resume ? werr_wrap(err, "--resume refuses a run that "
		    "is still live") : err;
	path = runlock_machine_path("campaign");
	err = runlock_take(machine_lock, path, "a campaign on this machine",
	    o->who, o->repo_root);
	free(path);
	if (err != NULL) {
		runlock_release(*repo_lock);
		*repo_lock = NULL;
		return werr_wrap(err, "one campaign at a time per machine");
	}
	return NULL;
}

struct werr *
campaign_run(const struct campaign_opts *o, char **run_id_out)
{
	struct runlock *repo_lock = NULL, *machine_lock = NULL;
	struct power_hold *hold = NULL;
	struct walk w;
	struct run r;
	struct werr *err;
	char machine[17];
	size_t i;

	*run_id_out = NULL;
	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	r.o = o;
	r.tree = o->tree_root != NULL ? o->tree_root : o->repo_root;
	if ((err = decide_sandbox(&r)) != NULL ||
	    (err = locks_take(o, &repo_lock, &machine_lock)) != NULL)
		return err;
	if ((err = store_campaign_ensure(o->store)) != NULL)
		goto out;
	campaign_machine_id(machine);
	r.gpu_hint = memsample_gpu_hint();
	if (o->resume) {
		if ((err = run_resume(&r, machine)) == NULL)
			err = grid_load(&r);
	} else {
		err = run_create(&r, machine);
	}
	if (err != NULL)
		goto out;
	scratch_sweep_stale(&r);
	if (r.finished)
		goto out;
	{
		char *note = xasprintf("run %s", r.run_id);

		runlock_note(repo_lock, note);
		runlock_note(machine_lock, note);
		free(note);
	}
	hold = power_hold_begin("warden campaign");
	for (i = 0; i < r.npoints && err == NULL; i++) {
		if ((err = campaign_stopped(&r)) == NULL)
			err = campaign_walk_point(&r, &w, i);
	}
	campaign_walk_free(&w);
	power_hold_end(hold);
	if (err == NULL)
		err = store_campaign_run_finish(o->store, r.run_id);
	scratch_finish(&r);
out:
	if (r.run_id != NULL) {
		*run_id_out = r.run_id;
		r.run_id = NULL;
	}
	for (i = 0; i < r.nworkloads; i++)
		workload_free(&r.workloads[i]);
	free(r.workloads);
	free(r.points);
	json_decref(r.grid);
	runlock_release(machine_lock);
	runlock_release(repo_lock);
	return err;
}
