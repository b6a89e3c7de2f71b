/*
 * detect.c - which engines of a cycle broke, decided from stored
 * outcomes only (sweeps and update attempts, never logs), and against
 * which earlier cycle and manifest each is compared. See
 * triage-private.h (triage_detect).
 *
 * A cycle's cells are the done sweeps of its campaign runs; when a cell
 * ran more than once in the cycle the newest run's sweep counts. An
 * engine whose cells pass but whose performance regressed (an open
 * alert the cycle saw, regress.h) is broken in the regressed series. Until
 * the gate decides per cell, a cell passes when its sweep completed and
 * completed at least gates.completion_min of every gates.completion_of
 * requests. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "campaign-report.h"
#include "environment.h"
#include "manifest.h"
#include "regress/regress.h"
#include "store-campaign.h"
#include "store-triage.h"
#include "triage-private.h"
#include "util.h"

int
triage_sweep_passes(const json_t *s, const struct policy *pol)
{
	const char *outcome = json_string_value(json_object_get(s, "outcome"));
	json_int_t done = json_integer_value(json_object_get(s, "completed"));
	json_int_t total = json_integer_value(json_object_get(s, "total"));

	if (outcome != NULL && strcmp(outcome, "skipped") == 0)
		return -1;
	if (outcome == NULL || strcmp(outcome, "complete") != 0)
		return 0;
	return done * pol->gates.completion_of >=
	    total * pol->gates.completion_min;
}

/* The key of a cell: "model/split/cC". Caller frees. */
static char *
cell_key(const json_t *s)
{
	return xasprintf("%s/%s/c%lld",
	    json_string_value(json_object_get(s, "model")),
	    json_string_value(json_object_get(s, "split")),
	    (long long)json_integer_value(json_object_get(s, "concurrency")));
}

/* A failing cell as the agent's problem names it, its status
 * (campaign_level_status) beside its outcome. */
static json_t *
cell_json(const json_t *s, const struct policy *pol)
{
	return json_pack("{s:O, s:O, s:O, s:O, s:O, s:s, s:O, s:O, s:O, s:O, "
	    "s:O}",
	    "engine", json_object_get(s, "engine"),
	    "model", json_object_get(s, "model"),
	    "split", json_object_get(s, "split"),
	    "concurrency", json_object_get(s, "concurrency"),
	    "outcome", json_object_get(s, "outcome"),
	    "status", campaign_level_status(s, pol),
	    "detail", json_object_get(s, "detail"),
	    "completed", json_object_get(s, "completed"),
	    "total", json_object_get(s, "total"),
	    "run_id", json_object_get(s, "run_id"),
	    "log_path", json_object_get(s, "log_path"));
}

/* The commit of the repository a campaign run ran from, when it ran
 * from a clean checkout (what it ran with is then that commit's tree),
 * else null. */
static json_t *
run_commit(struct store *store, const char *run_id, json_t **os,
    struct werr **err)
{
	json_t *run = NULL, *prov, *commit, *out = json_null();

	*os = json_null();
	if ((*err = store_campaign_run_json(store, run_id, &run)) != NULL)
		return out;
	prov = json_object_get(run, "provenance");
	commit = json_object_get(prov, "repo_commit");
	if (json_is_false(json_object_get(prov, "repo_dirty")) &&
	    json_string_length(commit) == 40)
		out = json_incref(commit);
	if (json_is_object(json_object_get(prov, "os"))) {
		json_decref(*os);
		*os = json_incref(json_object_get(prov, "os"));
	}
	json_decref(run);
	return out;
}

/*
 * The engines of one cycle: {ENGINE: {"cells": {KEY: sweep}}}, the
 * newest run's sweep per cell, each with "run_commit" and "run_os"
 * (run_commit()).
 */
static struct werr *
cycle_cells(json_t **out, struct store *store, const char *cycle)
{
	json_t *runs = NULL, *engines = json_object(), *sweeps, *s, *e, *run;
	json_t *commit, *os;
	struct werr *err;
	const char *engine;
	size_t i, k;
	char *key;

	if ((err = store_triage_cycle_runs(store, cycle, &runs)) != NULL)
		goto out;
	json_array_foreach(runs, i, run) {
		sweeps = NULL;
		if ((err = store_campaign_sweeps_json(store,
		    json_string_value(run), &sweeps)) != NULL)
			goto out;
		commit = run_commit(store, json_string_value(run), &os, &err);
		if (err != NULL) {
			json_decref(sweeps);
			json_decref(os);
			goto out;
		}
		json_array_foreach(sweeps, k, s) {
			json_object_set(s, "run_commit", commit);
			json_object_set(s, "run_os", os);
			engine = json_string_value(json_object_get(s, "engine"));
			if ((e = json_object_get(engines, engine)) == NULL) {
				e = json_pack("{s:{}}", "cells");
				json_object_set_new(engines, engine, e);
			}
			key = cell_key(s);
			json_object_set(json_object_get(e, "cells"), key, s);
			free(key);
		}
		json_decref(commit);
		json_decref(os);
		json_decref(sweeps);
	}
out:
	json_decref(runs);
	if (err != NULL) {
		json_decref(engines);
		return err;
	}
	*out = engines;
	return NULL;
}

/*
 * Judge each engine of a cycle's cells: "healthy" (every cell that ran
 * passed), "broken"; its failing cells, and the manifest and the
 * commit its newest sweep ran (null when none was recorded).
 */
static void
judge(json_t *engines, const struct policy *pol)
{
	json_t *e, *cells, *s, *failing, *manifest, *commit, *os;
	const char *engine, *key, *newest;
	int pass, ran;

	json_object_foreach(engines, engine, e) {
		cells = json_object_get(e, "cells");
		failing = json_array();
		manifest = NULL;
		commit = NULL;
		os = NULL;
		newest = NULL;
		ran = 0;
		json_object_foreach(cells, key, s) {
			const char *started = json_string_value(
			    json_object_get(s, "started"));

			pass = triage_sweep_passes(s, pol);
			if (pass < 0)
				continue;
			ran++;
			if (!pass)
				json_array_append_new(failing, cell_json(s,
				    pol));
			if (started != NULL && (newest == NULL ||
			    strcmp(started, newest) > 0)) {
				newest = started;
				manifest = json_object_get(json_object_get(s,
				    "provenance"), "engine_manifest");
				commit = json_object_get(s, "run_commit");
				os = json_object_get(s, "run_os");
			}
		}
		json_object_set_new(e, "status", json_string(ran == 0 ? "none" :
		    json_array_size(failing) > 0 ? "broken" : "healthy"));
		json_object_set_new(e, "failing_cells", failing);
		json_object_set_new(e, "cell_count", json_integer(ran));
		json_object_set(e, "manifest", json_is_object(manifest) ?
		    manifest : json_null());
		json_object_set(e, "commit", commit != NULL ? commit :
		    json_null());
		json_object_set_new(e, "env", newest != NULL ?
		    environment_of(manifest, os) : json_null());
		json_object_del(e, "cells");
	}
}

/* The engines of cycle, judged. */
static struct werr *
cycle_engines(json_t **out, struct triage_ctx *c, const char *cycle)
{
	struct werr *err;

	if ((err = cycle_cells(out, c->o->store, cycle)) != NULL)
		return err;
	judge(*out, c->o->policy);
	return NULL;
}

/* Engines whose update failed in the cycle are broken, cells or not. */
static struct werr *
update_failures(struct triage_ctx *c)
{
	json_t *fails = NULL, *f, *e;
	const char *engine;
	struct werr *err;

	if ((err = store_triage_update_failures(c->o->store, c->cycle,
	    &fails)) != NULL)
		return err;
	json_object_foreach(fails, engine, f) {
		if ((e = json_object_get(c->engines, engine)) == NULL) {
			e = json_pack("{s:[], s:i, s:n}", "failing_cells",
			    "cell_count", 0, "manifest");
			json_object_set_new(c->engines, engine, e);
		}
		json_object_set_new(e, "status", json_string("broken"));
		json_object_set(e, "update_failed", f);
	}
	json_decref(fails);
	return NULL;
}

/* Packages of a manifest with its id: what the report keeps of it. */
static json_t *
manifest_brief(const json_t *m)
{
	if (!json_is_object(m))
		return json_null();
	return json_pack("{s:O, s:O, s:O, s:O}", "id", json_object_get(m, "id"),
	    "engine_package", json_object_get(m, "engine_package"),
	    "engine_version", json_object_get(m, "engine_version"),
	    "packages", json_object_get(m, "packages"));
}

/* The stored sweep of a cell in a run: {completed, total, log_path}. */
static struct werr *
regression_sweep(json_t **out, struct triage_ctx *c, json_t *runs,
    const json_t *cell)
{
	const char *run = json_string_value(json_object_get(cell, "run_id"));
	json_t *sweeps, *s;
	struct werr *err;
	size_t i;

	*out = NULL;
	if (run == NULL)
		return NULL;
	if ((sweeps = json_object_get(runs, run)) == NULL) {
		if ((err = store_campaign_sweeps_json(c->o->store, run,
		    &sweeps)) != NULL)
			return err;
		json_object_set_new(runs, run, sweeps);
	}
	json_array_foreach(sweeps, i, s)
		if (json_equal(json_object_get(s, "engine"),
		    json_object_get(cell, "engine")) &&
		    json_equal(json_object_get(s, "model"),
		    json_object_get(cell, "model")) &&
		    json_equal(json_object_get(s, "split"),
		    json_object_get(cell, "split")) &&
		    json_equal(json_object_get(s, "concurrency"),
		    json_object_get(cell, "concurrency")))
			*out = s;
	return NULL;
}

/* A regressed series as a failing cell: outcome "regression", with what
 * the smoke runs compare (metric, before, threshold_pct); its status is
 * its sweep's, which completed. */
static json_t *
regression_cell(const json_t *r, const json_t *sweep,
    const struct policy *pol)
{
	json_t *cell = json_deep_copy(r);
	char *change = regress_change_text(r), *detail;

	detail = xasprintf("%s %s (%.0f %% worse than published, threshold "
	    "%g %%): regression alert %lld", json_string_value(
	    json_object_get(r, "metric")), change, json_number_value(
	    json_object_get(r, "worse_pct")), json_number_value(
	    json_object_get(r, "threshold_pct")), (long long)
	    json_integer_value(json_object_get(r, "alert")));
	json_object_set_new(cell, "outcome", json_string("regression"));
	json_object_set_new(cell, "detail", json_string(detail));
	json_object_set(cell, "completed", sweep != NULL ?
	    json_object_get(sweep, "completed") : json_null());
	json_object_set(cell, "total", sweep != NULL ?
	    json_object_get(sweep, "total") : json_null());
	json_object_set_new(cell, "status", sweep != NULL ?
	    json_string(campaign_level_status(sweep, pol)) : json_null());
	json_object_set(cell, "log_path", sweep != NULL ?
	    json_object_get(sweep, "log_path") : json_null());
	free(change);
	free(detail);
	return cell;
}

/*
 * Engines healthy by their cells but with an open performance alert seen
 * in this cycle (regress.h) are broken in the regressed series, so they
 * are searched as a break is; their healthy cycle is the newest
 * published cycle the alert compared with ("good_cycle_wanted").
 */
static struct werr *
regressions(struct triage_ctx *c)
{
	json_t *reg = NULL, *runs = json_object(), *e, *cells, *r, *cell, *s;
	const char *engine, *good;
	struct werr *err;
	size_t i;

	if ((err = regress_cycle_regressed(&reg, c->o->store, c->cycle)) != NULL)
		goto out;
	json_object_foreach(reg, engine, r) {
		e = json_object_get(c->engines, engine);
		if (e == NULL || strcmp(json_string_value(json_object_get(e,
		    "status")), "healthy") != 0)
			continue;	/* broken anyway: its cells say how */
		cells = json_array();
		json_array_foreach(json_object_get(r, "cells"), i, cell) {
			if ((err = regression_sweep(&s, c, runs, cell)) != NULL) {
				json_decref(cells);
				goto out;
			}
			json_array_append_new(cells, regression_cell(cell, s,
			    c->o->policy));
		}
		json_object_set_new(e, "status", json_string("broken"));
		json_object_set_new(e, "failing_cells", cells);
		json_object_set_new(e, "regressed", json_true());
		good = json_string_value(json_object_get(r, "good_cycle"));
		if (good != NULL && triage_cycle_index(c, good) >= 0)
			json_object_set_new(e, "good_cycle_wanted",
			    json_string(good));
	}
out:
	json_decref(reg);
	json_decref(runs);
	return err;
}

/*
 * For each engine of the cycle, the last earlier cycle where it was
 * healthy (cycles: every cycle, oldest first; t: the cycle's index); a
 * regressed engine's is the published cycle its alert compared with.
 */
static struct werr *
baselines(struct triage_ctx *c, const json_t *cycles, size_t t)
{
	json_t *earlier = NULL, *e, *prev;
	const char *engine, *status;
	struct werr *err = NULL;
	size_t i, left;

	for (i = t; i-- > 0;) {
		const char *cy = json_string_value(json_array_get(cycles, i));

		left = 0;
		json_object_foreach(c->engines, engine, e)
			if (json_object_get(e, "good_cycle") == NULL)
				left++;
		if (left == 0)
			break;
		if ((err = cycle_engines(&earlier, c, cy)) != NULL)
			return err;
		json_object_foreach(c->engines, engine, e) {
			const char *want = json_string_value(json_object_get(e,
			    "good_cycle_wanted"));

			if (json_object_get(e, "good_cycle") != NULL ||
			    (want != NULL && strcmp(want, cy) != 0))
				continue;
			prev = json_object_get(earlier, engine);
			status = json_string_value(json_object_get(prev, "status"));
			if (status == NULL || strcmp(status, "healthy") != 0)
				continue;
			json_object_set_new(e, "good_cycle", json_string(cy));
			json_object_set_new(e, "good_manifest", manifest_brief(
			    json_object_get(prev, "manifest")));
			json_object_set(e, "good_commit", json_object_get(prev,
			    "commit"));
			json_object_set(e, "good_env", json_object_get(prev,
			    "env"));
		}
		json_decref(earlier);
		earlier = NULL;
	}
	return NULL;
}

/* Changes and the reasons triage cannot compare. */
static void
compare(struct triage_ctx *c)
{
	json_t *e, *good, *bad, *m, *env;
	const char *engine, *status;

	json_object_foreach(c->engines, engine, e) {
		status = json_string_value(json_object_get(e, "status"));
		env = environment_diff(json_object_get(e, "good_env"),
		    json_object_get(e, "env"));
		if (json_array_size(env) > 0)
			json_object_set(e, "environment", env);
		json_decref(env);
		m = manifest_brief(json_object_get(e, "manifest"));
		json_object_set_new(e, "manifest", m);
		good = json_object_get(e, "good_manifest");
		bad = json_object_get(e, "manifest");
		if (json_object_get(e, "good_cycle") == NULL) {
			json_object_set_new(e, "why", json_string("no earlier "
			    "cycle where it was healthy"));
			continue;
		}
		if (json_object_get(e, "update_failed") != NULL &&
		    strcmp(status, "broken") == 0) {
			const char *how = json_string_value(json_object_get(
			    json_object_get(e, "update_failed"), "outcome"));
			char *why = xasprintf("its update failed (%s): no "
			    "manifest of what broke", how ? how : "failed");

			json_object_set_new(e, "why", json_string(why));
			free(why);
			continue;
		}
		if (!json_is_object(good) || !json_is_object(bad)) {
			json_object_set_new(e, "why", json_string(
			    !json_is_object(bad) ? "no version manifest of this "
			    "cycle (never updated)" : "no version manifest of "
			    "its healthy cycle"));
			continue;
		}
		json_object_set_new(e, "changes", manifest_diff(good, bad));
	}
}

long
triage_cycle_index(const struct triage_ctx *c, const char *cycle)
{
	json_t *v;
	size_t i;

	json_array_foreach(c->cycles, i, v)
		if (cycle != NULL && strcmp(json_string_value(v), cycle) == 0)
			return (long)i;
	return -1;
}

struct werr *
triage_detect(struct triage_ctx *c)
{
	json_t *cycles, *e;
	const char *engine;
	struct werr *err;
	size_t t, n;

	if (c->cycles == NULL && (err = store_triage_cycles(c->o->store,
	    &c->cycles)) != NULL)
		return err;
	cycles = c->cycles;
	n = json_array_size(cycles);
	for (t = 0; t < n; t++)
		if (strcmp(json_string_value(json_array_get(cycles, t)),
		    c->cycle) == 0)
			break;
	if (t == n)
		return werr_new(WEXIT_INPUT, "cycle '%s' has no campaign run",
		    c->cycle);
	/* Only a cycle that exists gets a progress line: bad input gets
	 * one message. */
	triage_progress(c, "detect", NULL, 0, 0, "cycle %s: which engines "
	    "broke", c->cycle);
	if ((err = cycle_engines(&c->engines, c, c->cycle)) == NULL &&
	    (err = update_failures(c)) == NULL &&
	    (err = regressions(c)) == NULL &&
	    (err = baselines(c, cycles, t)) == NULL)
		compare(c);
	json_object_foreach(c->engines, engine, e)
		if (strcmp(json_string_value(json_object_get(e, "status")),
		    "none") == 0)
			json_object_set_new(e, "status", json_string("healthy"));
	return err;
}
