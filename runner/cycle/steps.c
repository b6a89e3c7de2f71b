/*
 * steps.c - the cycle's measuring steps, each a call of its module's
 * function: the checkout, update, campaign, fidelity, gate and triage.
 * A step decides nothing its module decides; it passes the cycle's
 * options, names its runs after the cycle (so a step killed half way
 * resumes its own run) and returns what the module reported.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "cycle-private.h"
#include "store-campaign.h"
#include "update.h"
#include "util.h"
#include "results/fidelity.h"
#include "results/fidelity-task.h"
#include "results/gate.h"
#include "results/store-results.h"
#include "triage/triage.h"

struct werr *
cycle_step_checkout(struct cyc *c, json_t **result, const char **state)
{
	struct werr *err;
	char *why;

	if (!c->policy->cycle.publish &&
	    (why = cycle_official_unrecorded(c->store, c->repo,
	    c->policy->official_branch, 1)) != NULL) {
		err = werr_new(WEXIT_PROBLEM, "%s", why);
		free(why);
		return err;
	}
	if ((err = cycle_checkout_sync(result, c->repo,
	    c->policy->official_branch)) != NULL)
		return err;
	*state = json_is_true(json_object_get(*result, "at_tip")) ? "done" :
	    "failed";
	cycle_say(c, CYCLE_DONE, "%s", json_string_value(json_object_get(*result,
	    "what")));
	return NULL;
}

/* ---- update ---- */

static void
update_progress(void *arg, size_t k, size_t n, const char *engine,
    const char *phase)
{
	cycle_say(arg, strcmp(phase, "done") == 0 ? CYCLE_LINE : CYCLE_LIVE,
	    "engine %zu/%zu %s: %s", k, n, engine, phase);
}

struct werr *
cycle_step_update(struct cyc *c, json_t **result, const char **state)
{
	struct update_report rep;
	struct update_ctx u;
	struct werr *err;
	json_t *engines, *joined;
	size_t i;

	if (!c->policy->cycle.update) {
		*result = json_pack("{s:s}", "why", "policy 'cycle.update' is "
		    "false");
		*state = "skipped";
		return NULL;
	}
	memset(&u, 0, sizeof(u));
	memset(&rep, 0, sizeof(rep));
	u.repo_root = c->o->repo_root;
	u.policy = c->policy;
	u.on_progress = update_progress;
	u.arg = c;
	if ((err = update_run(&rep, &u, c->store, (const char *const *)
	    c->roster->engines.v)) != NULL)
		return err;
	engines = json_array();
	for (i = 0; i < rep.n; i++) {
		const struct update_engine_result *e = &rep.v[i];

		json_array_append_new(engines, json_pack("{s:s, s:s, s:s?, "
		    "s:O?, s:I}", "engine", e->engine, "outcome", e->outcome,
		    "detail", e->detail, "changes", e->changes, "manifest",
		    (json_int_t)e->manifest_id));
	}
	/* engines outside the roster that joined for a policy group */
	joined = json_array();
	for (i = 0; i < rep.n_joined; i++)
		json_array_append_new(joined, json_pack("{s:s, s:s, s:s, s:s}",
		    "engine", rep.joined[i].engine, "group",
		    rep.joined[i].group, "package", rep.joined[i].package,
		    "held_by", rep.joined[i].held_by));
	*result = json_pack("{s:o, s:i, s:o}", "engines", engines, "failed",
	    rep.failed, "joined", joined);
	*state = "done";
	cycle_say(c, CYCLE_DONE, "%zu engine%s, %d failed", rep.n, rep.n == 1 ? "" : "s",
	    rep.failed);
	update_report_free(&rep);
	return NULL;
}

/* ---- campaign ---- */

static void
campaign_progress(void *arg, const struct campaign_progress *p)
{
	struct cyc *c = arg;

	cycle_step_eta(c, p->campaign_eta_s);
	if (strcmp(p->phase, "done") == 0)
		cycle_say(c, CYCLE_LINE, "sweep %zu/%zu %s %s %s c=%u: %s", p->sweep,
		    p->sweeps, p->engine, p->model, p->split, p->concurrency,
		    p->outcome);
	else
		cycle_say(c, CYCLE_LIVE, "sweep %zu/%zu %s %s %s c=%u: %s %zu/%zu",
		    p->sweep, p->sweeps, p->engine, p->model, p->split,
		    p->concurrency, p->phase, p->done, p->total);
}

struct werr *
cycle_step_campaign(struct cyc *c, json_t **result, const char **state)
{
	struct campaign_opts co;
	json_t *sweeps = NULL, *outcomes, *s, *n;
	char *run_id = cycle_run_id(c, c->round, "campaign"), *got = NULL;
	struct werr *err;
	int found = 0;
	size_t i;

	if ((err = store_campaign_ensure(c->store)) != NULL ||
	    (err = store_campaign_run_get(c->store, run_id, &found, NULL, NULL,
	    NULL)) != NULL)
		goto out;
	memset(&co, 0, sizeof(co));
	co.repo_root = c->o->repo_root;
	co.policy = c->policy;
	co.store = c->store;
	co.roster = c->roster->name;
	co.limit = c->policy->cycle.limit;
	co.resume = found;
	co.run_id = run_id;
	co.on_progress = campaign_progress;
	co.arg = c;
	co.stop = c->o->stop;
	if (found)
		cycle_say(c, CYCLE_LINE, "resuming campaign run %s", run_id);
	if ((err = campaign_run(&co, &got)) != NULL ||
	    (err = store_campaign_sweeps_json(c->store, run_id, &sweeps)) != NULL)
		goto out;
	outcomes = json_object();
	json_array_foreach(sweeps, i, s) {
		const char *o = json_string_value(json_object_get(s, "outcome"));

		n = json_object_get(outcomes, o != NULL ? o : "?");
		json_object_set_new(outcomes, o != NULL ? o : "?", json_integer(
		    json_integer_value(n) + 1));
	}
	*result = json_pack("{s:s, s:I, s:o}", "run", run_id, "sweeps",
	    (json_int_t)json_array_size(sweeps), "outcomes", outcomes);
	*state = "done";
	cycle_say(c, CYCLE_DONE, "run %s, %zu sweeps", run_id, json_array_size(sweeps));
out:
	json_decref(sweeps);
	free(run_id);
	free(got);
	return err;
}

/* ---- fidelity ---- */

static void
fidelity_progress(void *arg, const struct fidelity_progress *p)
{
	if (strcmp(p->phase, "done") == 0 && p->weighted_f1 < 0)
		cycle_say(arg, CYCLE_LINE, "cell %zu/%zu %s %s %d-shot: %s, no "
		    "score", p->cell, p->cells, p->engine, p->model, p->shots,
		    p->outcome);
	else if (strcmp(p->phase, "done") == 0)
		cycle_say(arg, CYCLE_LINE, "cell %zu/%zu %s %s %d-shot: %s, weighted F1 "
		    "%.1f %%", p->cell, p->cells, p->engine, p->model, p->shots,
		    p->outcome, p->weighted_f1 * 100);
	else
		cycle_say(arg, CYCLE_LIVE, "cell %zu/%zu %s %s %d-shot: %s %zu/%zu",
		    p->cell, p->cells, p->engine, p->model, p->shots, p->phase,
		    p->done, p->total);
}

struct werr *
cycle_step_fidelity(struct cyc *c, json_t **result, const char **state)
{
	struct fidelity_task *task = NULL;
	struct fidelity_opts fo;
	char *run_id = cycle_run_id(c, c->round, "fidelity"), *got = NULL;
	char *dir = path_join(c->o->repo_root, "workloads/fidelity");
	json_t *row = NULL;
	struct werr *err = NULL;
	const char *st;

	if (!c->policy->cycle.fidelity || !path_is_dir(dir)) {
		*result = json_pack("{s:s}", "why", !c->policy->cycle.fidelity ?
		    "policy 'cycle.fidelity' is false" :
		    "the repository has no fidelity task (workloads/fidelity)");
		*state = "skipped";
		goto out;
	}
	if ((err = fidelity_task_load(&task, dir, "workloads/fidelity")) != NULL ||
	    (err = store_fidelity_run_get(c->store, run_id, &row)) != NULL)
		goto out;
	st = json_string_value(json_object_get(row, "state"));
	if (st == NULL || strcmp(st, "done") != 0) {
		memset(&fo, 0, sizeof(fo));
		fo.repo_root = c->o->repo_root;
		fo.policy = c->policy;
		fo.store = c->store;
		fo.task = task;
		fo.roster = c->roster->name;
		fo.shots = c->policy->cycle.fidelity_shots;
		fo.nshots = c->policy->cycle.n_fidelity_shots;
		fo.limit = c->policy->cycle.fidelity_limit;
		fo.resume = row != NULL;
		fo.run_id = run_id;
		fo.on_progress = fidelity_progress;
		fo.arg = c;
		if ((err = fidelity_run(&fo, &got)) != NULL)
			goto out;
	}
	*result = json_pack("{s:s}", "run", run_id);
	*state = "done";
	cycle_say(c, CYCLE_DONE, "run %s", run_id);
out:
	fidelity_task_free(task);
	json_decref(row);
	free(run_id);
	free(got);
	free(dir);
	return err;
}

/* ---- gate ---- */

struct werr *
cycle_step_gate(struct cyc *c, json_t **result, const char **state)
{
	const json_t *camp = cycle_step_result(c, c->round, "campaign");
	const json_t *fid = cycle_step_result(c, c->round, "fidelity");
	const char *runs[2] = { NULL, NULL }, *fruns[2] = { NULL, NULL };
	json_t *gate = NULL, *failures, *e, *f;
	struct gate_input in;
	struct werr *err;
	size_t i, j;

	memset(&in, 0, sizeof(in));
	in.repo_root = c->o->repo_root;
	in.policy = c->policy;
	in.store = c->store;
	runs[0] = json_string_value(json_object_get(camp, "run"));
	if (runs[0] == NULL)
		return werr_new(WEXIT_ENV, "cycle '%s': the gate of round %d "
		    "has no campaign run", c->id, c->round);
	in.campaigns = runs;
	in.ncampaigns = 1;
	fruns[0] = json_string_value(json_object_get(fid, "run"));
	if (fruns[0] != NULL) {
		in.fidelity = fruns;
		in.nfidelity = 1;
	} else
		in.no_fidelity = 1;
	if ((err = gate_run(&gate, &in)) != NULL)
		return err;
	failures = json_object();
	json_array_foreach(json_object_get(gate, "engines"), i, e) {
		static const char *const checks[] = { "completion", "fidelity",
		    "coverage", NULL };
		json_t *why = json_array();
		int k;

		for (k = 0; checks[k] != NULL; k++)
			json_array_foreach(json_object_get(json_object_get(e,
			    checks[k]), "failures"), j, f)
				json_array_append_new(why, json_pack("{s:s, "
				    "s:O?, s:O?}", "check", checks[k], "cell",
				    json_object_get(f, "cell"), "why",
				    json_object_get(f, "why")));
		if (json_array_size(why) > 0)
			json_object_set_new(failures, json_string_value(
			    json_object_get(e, "engine")), why);
		else
			json_decref(why);
	}
	*result = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:o}", "record",
	    json_object_get(gate, "record"), "results_sha256",
	    json_object_get(gate, "results_sha256"), "passed",
	    json_object_get(gate, "passed"), "failed", json_object_get(gate,
	    "failed"), "regressions", json_object_get(gate, "regressions"),
	    "failures", failures);
	*state = "done";
	/* "regressions" are the performance alerts' word: an engine that
	 * passed when last published and fails now is newly failing */
	cycle_say(c, CYCLE_DONE, "%zu passed, %zu failed, %zu newly failing",
	    json_array_size(json_object_get(gate, "passed")),
	    json_array_size(json_object_get(gate, "failed")),
	    json_array_size(json_object_get(gate, "regressions")));
	json_decref(gate);
	return NULL;
}

/* ---- triage ---- */

/* Triage's own line says the engine and the smoke run; it is said once. */
static void
triage_progress(void *arg, const struct triage_progress *p)
{
	cycle_say(arg, CYCLE_LIVE, "%s", p->what != NULL ? p->what : p->phase);
}

/* The incidents still open (untriaged, investigating, confirmed). */
static json_t *
open_incidents(struct store *store)
{
	json_t *all = NULL, *ids = json_array(), *v;
	struct werr *err;
	const char *st;
	size_t i;

	if ((err = triage_incident_list(&all, store, NULL)) != NULL) {
		werr_free(err);
		return ids;
	}
	json_array_foreach(all, i, v) {
		st = json_string_value(json_object_get(v, "state"));
		if (st != NULL && (strcmp(st, "untriaged") == 0 ||
		    strcmp(st, "investigating") == 0 ||
		    strcmp(st, "confirmed") == 0))
			json_array_append(ids, json_object_get(v, "id"));
	}
	json_decref(all);
	return ids;
}

/*
 * triage_run() on this cycle: broken engines, incidents and pin
 * proposals are results, never a failed step. A cycle whose campaign
 * recorded no run has nothing to triage.
 */
struct werr *
cycle_step_triage(struct cyc *c, json_t **result, const char **state)
{
	struct triage_result res;
	struct triage_opts o;
	struct werr *err;
	char *what;

	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	o.repo_root = c->o->repo_root;
	o.repo = c->repo;
	o.policy = c->policy;
	o.store = c->store;
	o.cycle = c->id;
	o.budget = (size_t)c->policy->cycle.triage_smoke_runs;
	o.on_progress = triage_progress;
	o.arg = c;
	if ((err = triage_run(&res, &o)) != NULL) {
		triage_result_free(&res);
		return err;
	}
	if (res.cycle == NULL) {
		*result = json_pack("{s:s}", "why", "the cycle recorded no "
		    "campaign run");
		*state = "skipped";
		cycle_say(c, CYCLE_DONE, "skipped: no campaign run to triage");
		triage_result_free(&res);
		return NULL;
	}
	*result = json_pack("{s:b, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:o}",
	    "nothing_broke", res.nothing_broke, "broken", res.broken,
	    "cannot_compare", res.cannot_compare, "opened", res.opened,
	    "updated", res.updated, "fixed", res.fixed, "reopened",
	    res.reopened, "reviews", res.reviews, "open",
	    open_incidents(c->store));
	*state = "done";
	what = cycle_step_what("triage", *result);	/* as the journal */
	cycle_say(c, CYCLE_DONE, "%s", what);
	free(what);
	triage_result_free(&res);
	return NULL;
}
