/*
 * fidelity.c - run the fidelity task: the grid of (engine, model, shots)
 * cells, one engine server per (engine, model) started by engine.h,
 * prompts sent by loadgen.h, answers parsed and scored, every prediction
 * stored. See fidelity.h.
 *
 * Engine failures are outcomes and every item gets a prediction: this
 * file must never drop an item from a score, never turn an engine's
 * failure into an error, and never leave an engine process behind.
 * Never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "campaign-input.h"
#include "engine.h"
#include "fault.h"
#include "loadgen.h"
#include "memsample.h"
#include "util.h"
#include "results/fidelity.h"
#include "results/fidelity-private.h"
#include "results/fidelity-score.h"
#include "results/store-results.h"

char *
fidelity_new_run_id(const char *machine)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	return xasprintf("%s-%.8s-%04x", stamp, machine,
	    (unsigned)((uint64_t)getpid() ^ mono_ns()) & 0xffffu);
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

static struct werr *
grid_build(json_t **out, const struct fidelity_opts *o)
{
	static const int default_shots[] = { 0, 5 };
	const struct policy *pol = o->policy;
	const char *name = o->roster ? o->roster : pol->default_roster;
	const struct roster *ro = policy_roster(pol, name);
	const int *shots = o->shots ? o->shots : default_shots;
	size_t nshots = o->shots ? o->nshots : 2, e, m, s;
	json_t *points;

	if (ro == NULL)
		return werr_new(WEXIT_INPUT, "no roster '%s' in policy", name);
	for (s = 0; s < nshots; s++)
		if ((size_t)shots[s] > o->task->nexemplars)
			return werr_usage("%d-shot needs %d exemplars; the "
			    "task has %zu", shots[s], shots[s],
			    o->task->nexemplars);
	points = json_array();
	for (e = 0; e < ro->engines.n; e++) {
		if (!listed(o->engines, ro->engines.v[e]))
			continue;
		for (m = 0; m < pol->models.n; m++) {
			if (!listed(o->models, pol->models.v[m]))
				continue;
			for (s = 0; s < nshots; s++)
				json_array_append_new(points, json_pack(
				    "{s:s, s:s, s:i}", "engine", ro->engines.v[e],
				    "model", pol->models.v[m], "shots", shots[s]));
		}
	}
	if (json_array_size(points) == 0) {
		json_decref(points);
		return werr_usage("no fidelity cell matches the given filters");
	}
	*out = json_pack("{s:o, s:I, s:I, s:s}", "points", points, "limit",
	    (json_int_t)o->limit, "concurrency", (json_int_t)(o->concurrency ?
	    o->concurrency : 8), "roster", name);
	return NULL;
}

static struct werr *
grid_load(struct frun *r)
{
	json_t *pts = json_object_get(r->grid, "points"), *p;
	size_t i, limit;

	limit = (size_t)json_integer_value(json_object_get(r->grid, "limit"));
	r->nitems = limit && limit < r->o->task->nitems ? limit :
	    r->o->task->nitems;
	r->concurrency = (unsigned)json_integer_value(json_object_get(r->grid,
	    "concurrency"));
	if (r->concurrency == 0)
		r->concurrency = 8;
	r->ncells = json_array_size(pts);
	r->cells = xcalloc(r->ncells + 1, sizeof(*r->cells));
	json_array_foreach(pts, i, p) {
		r->cells[i].engine = json_string_value(json_object_get(p,
		    "engine"));
		r->cells[i].model = json_string_value(json_object_get(p, "model"));
		r->cells[i].shots = (int)json_integer_value(json_object_get(p,
		    "shots"));
		if (r->cells[i].engine == NULL || r->cells[i].model == NULL)
			return werr_new(WEXIT_ENV, "fidelity run '%s': bad grid "
			    "point %zu", r->run_id, i);
	}
	return NULL;
}

static void
walk_skip(struct fwalk *w, const char *outcome, const char *detail)
{
	free(w->skip_outcome);
	free(w->skip_detail);
	w->skip_outcome = xstrdup(outcome);
	w->skip_detail = xstrdup(detail != NULL ? detail : outcome);
}

static void
walk_block(struct frun *r, struct fwalk *w, const struct cell *c)
{
	const struct profile_engine *pe;
	struct werr *err;
	char *detail;

	engine_free(w->eng);
	adapter_free(w->adapter);
	profile_free(w->profile);
	free(w->skip_outcome);
	free(w->skip_detail);
	memset(w, 0, sizeof(*w));
	w->engine = c->engine;
	w->model = c->model;
	w->deadline = mono_ns() + (uint64_t)(r->o->policy->caps.engine_wall_s *
	    1e9);
	if ((err = adapter_load_named(&w->adapter, r->o->repo_root,
	    c->engine)) != NULL) {
		walk_skip(w, "adapter_error", err->msg);
		werr_free(err);
		return;
	}
	if ((err = profile_load_named(&w->profile, r->o->repo_root,
	    c->model)) != NULL) {
		detail = xasprintf("model '%s': %s", c->model, err->msg);
		walk_skip(w, "profile_error", detail);
		free(detail);
		werr_free(err);
		return;
	}
	if ((pe = profile_engine(w->profile, c->engine)) == NULL) {
		detail = xasprintf("profile '%s' names no model for engine "
		    "'%s'", c->model, c->engine);
		walk_skip(w, "unsupported", detail);
		free(detail);
	} else if (pe->unsupported != NULL) {
		/* as the campaign: the profile says it does not serve it */
		detail = xasprintf("profile '%s': engine '%s' does not serve "
		    "this model: %s", c->model, c->engine, pe->unsupported);
		walk_skip(w, "skipped", detail);
		free(detail);
	}
}

/* Start the block's engine if none is running. */
static struct werr *
walk_engine(struct frun *r, struct fwalk *w, int64_t cell_id)
{
	const struct policy *pol = r->o->policy;
	struct engine_params ep;
	struct werr *err;
	char *env_dir, *log_rel, *log_path;

	if (w->eng != NULL && engine_alive(w->eng))
		return NULL;
	engine_free(w->eng);
	w->eng = NULL;
	env_dir = xasprintf("%s/.warden/envs/%s", r->o->repo_root, w->engine);
	log_rel = xasprintf(".warden/logs/%s/%s/%s/fidelity-f%lld.log",
	    r->run_id, w->engine, w->model, (long long)cell_id);
	log_path = path_join(r->o->repo_root, log_rel);
	memset(&ep, 0, sizeof(ep));
	ep.adapter = w->adapter;
	ep.profile = w->profile;
	ep.split = "fidelity";
	ep.concurrency = r->concurrency;
	ep.repo_root = r->o->repo_root;
	ep.env_dir = env_dir;
	ep.log_path = log_path;
	ep.ready_timeout_s = w->adapter->serve.ready_timeout_s > 0 ?
	    w->adapter->serve.ready_timeout_s : pol->caps.ready_timeout_s;
	ep.stop_grace_ms = (unsigned)(pol->caps.stop_grace_s * 1000);
	if (ep.stop_grace_ms == 0)
		ep.stop_grace_ms = 1;
	err = engine_start(&w->eng, &ep);
	free(env_dir);
	free(log_rel);
	free(log_path);
	return err;
}

static struct werr *
walk_cell(struct frun *r, struct fwalk *w, size_t k)
{
	const struct cell *c = &r->cells[k];
	struct store_fidelity_cell_key key;
	struct answers a;
	enum loadgen_end end;
	struct werr *err;
	int64_t cell_id;
	int done;

	if ((err = store_fidelity_cell_done(r->o->store, r->run_id, (int)k,
	    &done)) != NULL || done)
		return err;
	if (w->engine == NULL || strcmp(w->engine, c->engine) != 0 ||
	    strcmp(w->model, c->model) != 0)
		walk_block(r, w, c);
	fidelity_emit(r, k, c, "starting", 0, 0, NULL, 0);
	memset(&key, 0, sizeof(key));
	key.run_id = r->run_id;
	key.seq = (int)k;
	key.engine = c->engine;
	key.model = c->model;
	key.shots = c->shots;
	key.total = r->nitems;
	key.provenance = fidelity_cell_provenance(r, w);
	err = store_fidelity_cell_begin(r->o->store, &key, &cell_id);
	json_decref(key.provenance);
	if (err != NULL)
		return err;
	fault_point("fidelity.cell");
	fidelity_answers_init(&a, r, k);
	if (w->skip_outcome == NULL && mono_ns() >= w->deadline)
		walk_skip(w, "engine_cap", "the engine wall cap was reached");
	if (w->skip_outcome != NULL) {
		err = fidelity_cell_finish(r, cell_id, &a, w->skip_outcome,
		    w->skip_detail, NULL);
		goto out;
	}
	if ((err = walk_engine(r, w, cell_id)) != NULL)
		goto out;
	if (w->eng->state != ENGINE_READY) {
		walk_skip(w, engine_state_name(w->eng->state), w->eng->detail);
		err = fidelity_cell_finish(r, cell_id, &a, w->skip_outcome,
		    w->skip_detail, w->eng);
		goto out;
	}
	if ((err = fidelity_cell_ask(r, w, &a, &end)) != NULL)
		goto out;
	err = fidelity_cell_finish(r, cell_id, &a, fidelity_end_outcome(end),
	    end == LOADGEN_END_SERVER_CRASH ? w->eng->detail :
	    end == LOADGEN_END_DEADLINE ? "the engine wall cap ended the cell" :
	    end == LOADGEN_END_HANG ? "no response bytes and no engine log "
	    "output for the hang limit" : NULL, w->eng);
	if (end == LOADGEN_END_DEADLINE)
		walk_skip(w, "engine_cap", "not run: the engine wall cap was "
		    "reached");
	else if (end != LOADGEN_END_COMPLETE) {
		/* a fresh server for the next cell */
		engine_free(w->eng);
		w->eng = NULL;
	}
out:
	fidelity_answers_free(&a);
	return err;
}

static void
walk_free(struct fwalk *w)
{
	engine_free(w->eng);
	adapter_free(w->adapter);
	profile_free(w->profile);
	free(w->skip_outcome);
	free(w->skip_detail);
}

/* ---- the run ---- */

static struct werr *
run_open(struct frun *r, const char *machine)
{
	const struct fidelity_opts *o = r->o;
	json_t *row = NULL, *prov, *task;
	const char *state, *digest;
	struct werr *err;
	int n;

	if (!o->resume) {
		r->run_id = o->run_id ? xstrdup(o->run_id) :
		    fidelity_new_run_id(machine);
		if ((err = grid_build(&r->grid, o)) != NULL)
			return err;
		prov = provenance_run(o->repo_root, o->policy->path, machine,
		    memsample_gpu_hint());
		json_object_set_new(prov, "task_sha256",
		    json_string(o->task->digest));
		task = fidelity_task_json(o->task);
		err = store_fidelity_run_create(o->store, r->run_id, machine,
		    "measured", task, r->grid, prov);
		json_decref(prov);
		json_decref(task);
		r->recorded = err == NULL;
		return err;
	}
	if (o->run_id != NULL)
		r->run_id = xstrdup(o->run_id);
	else if ((err = store_fidelity_run_unfinished(o->store, machine,
	    &r->run_id)) != NULL)
		return err;
	if (r->run_id == NULL)
		return werr_new(WEXIT_INPUT, "no unfinished fidelity run on "
		    "this machine to resume");
	if ((err = store_fidelity_run_get(o->store, r->run_id, &row)) != NULL)
		return err;
	if (row == NULL)
		return werr_new(WEXIT_INPUT, "no fidelity run '%s'", r->run_id);
	state = json_string_value(json_object_get(row, "state"));
	digest = json_string_value(json_object_get(json_object_get(row,
	    "task"), "sha256"));
	if (strcmp(json_string_value(json_object_get(row, "machine")),
	    machine) != 0)
		err = werr_new(WEXIT_INPUT, "fidelity run '%s' was made on "
		    "machine %s, this is %s", r->run_id, json_string_value(
		    json_object_get(row, "machine")), machine);
	else if (strcmp(state, "running") != 0)
		err = werr_new(WEXIT_INPUT, "fidelity run '%s' is %s",
		    r->run_id, state);
	else if (digest == NULL || strcmp(digest, o->task->digest) != 0)
		err = werr_new(WEXIT_INPUT, "the fidelity task changed since "
		    "run '%s' started (sha256 %.12s, now %.12s)", r->run_id,
		    digest ? digest : "?", o->task->digest);
	if (err == NULL) {
		r->recorded = 1;
		r->grid = json_incref(json_object_get(row, "grid"));
		err = store_fidelity_discard_unfinished(o->store, r->run_id, &n);
	}
	json_decref(row);
	return err;
}

struct werr *
fidelity_run(const struct fidelity_opts *o, char **run_id_out)
{
	struct fwalk w;
	struct frun r;
	struct werr *err;
	char machine[17];
	size_t k;

	*run_id_out = NULL;
	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	r.o = o;
	r.t0 = mono_ns();
	campaign_machine_id(machine);
	if ((err = run_open(&r, machine)) != NULL)
		goto out;
	if ((err = grid_load(&r)) != NULL)
		goto out;
	for (k = 0; k < r.ncells && err == NULL; k++)
		err = walk_cell(&r, &w, k);
	walk_free(&w);
	if (err == NULL)
		err = store_fidelity_run_finish(o->store, r.run_id);
out:
	if (r.recorded)
		*run_id_out = r.run_id;
	else
		free(r.run_id);
	free(r.cells);
	json_decref(r.grid);
	return err;
}
