/*
 * campaign-sweep.c - one point of the grid for campaign-walk.c: start (or
 * keep) the engine, check it serves the profile's model, run warmups and
 * the closed loop through the load generator, sample memory, and record
 * the sweep (or the skip outcome the walk decided) in the store as it
 * happens, with its progress and the run's ETA.
 *
 * Engine failures are outcomes: this file must never turn one into an
 * error, and must never leave an engine process behind. Never prints.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "campaign.h"
#include "campaign-input.h"
#include "campaign-private.h"
#include "engine.h"
#include "loadgen.h"
#include "machine-load.h"
#include "memsample.h"
#include "power.h"
#include "repo.h"
#include "sandbox/scratch.h"
#include "sha256.h"
#include "store-campaign.h"
#include "store-update.h"
#include "util.h"

static const struct workload *
run_workload(const struct run *r, const char *split)
{
	size_t i;

	for (i = 0; i < r->nworkloads; i++)
		if (strcmp(r->workloads[i].split, split) == 0)
			return &r->workloads[i];
	return NULL;
}

static const char *
signal_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	default: return "a signal";
	}
}

struct werr *
campaign_stopped(const struct run *r)
{
	if (r->o->stop == NULL || *r->o->stop == 0)
		return NULL;
	return werr_new(WEXIT_ENV, "interrupted by %s",
	    signal_name((int)*r->o->stop));
}

/* ---- one sweep ---- */

struct sweep {
	struct run *r;
	const struct point *pt;
	size_t k;
	struct engine *eng;
	int64_t sweep_id;
	const struct bodies *bodies;
	uint64_t hang_ns;
	uint64_t t0;
	size_t completed;	/* when done */
	struct store_campaign_writer *writer;
};

/* The whole run's ETA: see campaign.h. */
static double
campaign_eta(const struct run *r, const struct campaign_progress *p)
{
	double per = r->ran > 0 ? r->ran_s / (double)r->ran : -1;
	size_t after = p->sweeps - p->sweep;

	if (p->outcome != NULL)
		return after == 0 ? 0 : per >= 0 ? per * (double)after : -1;
	if (p->eta_s < 0) {
		/* not measuring yet: this sweep as long as the others */
		if (per < 0)
			return -1;
		return per * (double)(after + 1) > p->elapsed_s ?
		    per * (double)(after + 1) - p->elapsed_s : 0;
	}
	if (per < 0)
		per = p->elapsed_s + p->eta_s;
	return p->eta_s + per * (double)after;
}

static void
emit(struct sweep *sw, const char *phase, const struct loadgen_progress *lp,
    const char *outcome)
{
	struct campaign_progress p;
	double t;

	if (sw->r->o->on_progress == NULL)
		return;
	memset(&p, 0, sizeof(p));
	p.sweep = sw->k;
	p.sweeps = sw->r->npoints;
	p.engine = sw->pt->engine;
	p.model = sw->pt->model;
	p.split = sw->pt->split;
	p.concurrency = sw->pt->concurrency;
	p.phase = phase;
	p.outcome = outcome;
	p.total = sw->bodies != NULL ? sw->bodies->ntimed : 0;
	p.eta_s = -1;
	p.elapsed_s = (double)(mono_ns() - sw->t0) / 1e9;
	if (outcome != NULL) {
		p.done = p.total;
		p.ok = sw->completed;
	}
	if (lp != NULL) {
		p.done = lp->done;
		p.ok = lp->ok;
		t = lp->start_ns ? (double)(lp->now_ns - lp->start_ns) / 1e9 : 0;
		if (t > 0)
			p.tokens_per_s = (double)lp->output_tokens / t;
		if (lp->done > 0 && t > 0)
			p.eta_s = t * (double)(p.total - p.done) /
			    (double)lp->done;
	}
	p.campaign_eta_s = campaign_eta(sw->r, &p);
	sw->r->o->on_progress(sw->r->o->arg, &p);
}

static enum loadgen_tick_action
sweep_tick(void *arg, const struct loadgen_progress *lp)
{
	struct sweep *sw = arg;
	uint64_t quiet_bytes, quiet_log;

	if (sw->r->o->stop != NULL && *sw->r->o->stop != 0)
		return LOADGEN_TICK_STOP;
	if (!engine_alive(sw->eng))
		return LOADGEN_TICK_SERVER_CRASH;
	/* A hang: neither responses nor the engine's log moved. */
	if (sw->hang_ns != 0 && lp->in_flight > 0) {
		quiet_bytes = lp->now_ns > lp->last_byte_ns ?
		    lp->now_ns - lp->last_byte_ns : 0;
		quiet_log = engine_log_quiet_ns(sw->eng, lp->now_ns);
		if (quiet_bytes >= sw->hang_ns && quiet_log >= sw->hang_ns)
			return LOADGEN_TICK_HANG;
	}
	emit(sw, lp->warming_up ? "warmup" : "measuring", lp, NULL);
	return LOADGEN_TICK_CONTINUE;
}

static void
sweep_record(void *arg, const struct loadgen_record *rec)
{
	struct sweep *sw = arg;
	const char *id;

	if (rec->warmup)
		id = rec->index < sw->bodies->nwarm ?
		    sw->bodies->warm_ids[rec->index] : NULL;
	else
		id = rec->index < sw->bodies->ntimed ?
		    sw->bodies->timed_ids[rec->index] : NULL;
	store_campaign_writer_push(sw->writer, rec, id != NULL ? id : "");
}

/* The engine's current version manifest (the update step's), or that of
 * the environment the options put it in; null when there is none. */
static json_t *
sweep_manifest(const struct run *r, const char *engine)
{
	const struct campaign_env *env = campaign_env_of(r, engine);
	struct werr *err;
	json_t *m = NULL, *rel;

	if (env != NULL)
		err = env->manifest_id > 0 ? store_update_manifest(r->o->store,
		    env->manifest_id, &m) : NULL;
	else
		err = store_update_current(r->o->store, engine, &m);
	if (err != NULL) {
		werr_free(err);
		return json_null();
	}
	if (m == NULL)
		return json_null();
	rel = json_paths_relative(m, r->o->repo_root);
	json_decref(m);
	return rel;
}

static json_t *
sweep_provenance(const struct run *r, const struct walk *w,
    const struct point *pt, const struct engine *e)
{
	const struct workload *wl = run_workload(r, pt->split);

	return json_pack("{s:o, s:o, s:s, s:s?, s:o}",
	    "adapter_sha256", provenance_repo_digest(r->o->repo_root,
	    w->adapter ? w->adapter->path : NULL),
	    "profile_sha256", provenance_repo_digest(r->o->repo_root,
	    w->profile ? w->profile->path : NULL),
	    "workload_sha256", wl ? wl->digest : "",
	    "engine_argv", e != NULL ? e->argv_provenance : NULL,
	    "engine_manifest", sweep_manifest(r, pt->engine));
}

struct werr *
campaign_sweep_skip(struct run *r, struct walk *w, size_t i, const char *outcome,
    const char *detail)
{
	const struct point *pt = &r->points[i];
	const struct workload *wl = run_workload(r, pt->split);
	struct store_sweep_key k;
	struct store_sweep_result res;
	struct sweep sw;
	struct werr *err;
	int64_t id;

	memset(&k, 0, sizeof(k));
	k.run_id = r->run_id;
	k.seq = (int)i;
	k.engine = pt->engine;
	k.model = pt->model;
	k.split = pt->split;
	k.concurrency = pt->concurrency;
	k.total = r->limit && r->limit < wl->ntimed ? r->limit : wl->ntimed;
	k.provenance = sweep_provenance(r, w, pt, NULL);
	err = store_campaign_sweep_begin(r->o->store, &k, &id);
	json_decref(k.provenance);
	if (err != NULL)
		return err;
	memset(&res, 0, sizeof(res));
	res.outcome = outcome;
	res.detail = detail;
	res.failed = 0;
	if ((err = store_campaign_sweep_finish(r->o->store, id, &res)) != NULL)
		return err;
	memset(&sw, 0, sizeof(sw));
	sw.r = r;
	sw.pt = pt;
	sw.k = i + 1;
	sw.t0 = mono_ns();
	emit(&sw, "done", NULL, outcome);
	return NULL;
}

static const char *
end_outcome(enum loadgen_end end)
{
	switch (end) {
	case LOADGEN_END_COMPLETE:
		return "complete";
	case LOADGEN_END_HANG:
		return "hang";
	case LOADGEN_END_DEADLINE:
		return "engine_cap";
	case LOADGEN_END_SERVER_CRASH:
		return "server_crash";
	case LOADGEN_END_STOPPED:
		return "stopped";
	default:
		return "unknown";
	}
}

/* While the engine starts: progress, and whether to give up. */
static int
sweep_wait(void *arg, double waited_s)
{
	struct sweep *sw = arg;

	(void)waited_s;
	emit(sw, "starting", NULL, NULL);
	return sw->r->o->stop != NULL && *sw->r->o->stop != 0;
}

/* Start (or keep) the engine of point pt. */
static struct werr *
sweep_engine(struct run *r, struct walk *w, const struct point *pt,
    struct sweep *sw, struct engine **out)
{
	int64_t sweep_id = sw->sweep_id;
	const struct policy *pol = r->o->policy;
	struct engine_params ep;
	struct werr *err;
	char *env_dir, *log_rel, *log_path, *own_dir = NULL;

	if (w->kept != NULL && w->kept_point != NULL &&
	    strcmp(w->kept_point->model, pt->model) == 0 &&
	    strcmp(w->kept_point->split, pt->split) == 0 &&
	    engine_alive(w->kept)) {
		*out = w->kept;
		w->kept = NULL;
		return NULL;
	}
	engine_free(w->kept);
	w->kept = NULL;
	if (campaign_env_of(r, pt->engine) != NULL)
		env_dir = xstrdup(campaign_env_of(r, pt->engine)->env_dir);
	else
		env_dir = xasprintf("%s/.warden/envs/%s", r->o->repo_root,
		    pt->engine);
	log_rel = xasprintf(".warden/logs/%s/%s/%s/%s-c%u-s%lld.log", r->run_id,
	    pt->engine, pt->model, pt->split, pt->concurrency,
	    (long long)sweep_id);
	log_path = path_join(r->o->repo_root, log_rel);
	memset(&ep, 0, sizeof(ep));
	ep.adapter = w->adapter;
	ep.profile = w->profile;
	ep.split = pt->split;
	ep.concurrency = pt->concurrency;
	ep.repo_root = r->tree;
	ep.sandbox_repo = r->sandbox != NULL ? r->o->repo_root : NULL;
	if (r->o->untrusted) {
		own_dir = xasprintf("%s/%s/%s/%s", r->o->repo_root,
		    SCRATCH_ROOT, r->run_id, pt->engine);
		ep.own_dir = own_dir;
	}
	ep.env_dir = env_dir;
	ep.log_path = log_path;
	ep.ready_timeout_s = w->adapter->serve.ready_timeout_s > 0 ?
	    w->adapter->serve.ready_timeout_s : pol->caps.ready_timeout_s;
	ep.stop_grace_ms = (unsigned)(pol->caps.stop_grace_s * 1000);
	if (ep.stop_grace_ms == 0)
		ep.stop_grace_ms = 1;
	ep.on_wait = sweep_wait;
	ep.wait_arg = sw;
	err = engine_start(out, &ep);
	free(env_dir);
	free(log_rel);
	free(log_path);
	free(own_dir);
	return err;
}

static struct werr *
sweep_measure(struct sweep *sw, struct walk *w, struct loadgen_summary *sum)
{
	const struct policy *pol = sw->r->o->policy;
	struct loadgen_config cfg;
	struct werr *err;
	char *url = xasprintf("%s/v1/chat/completions", sw->eng->base_url);
	char *id_prefix = xasprintf("%s-s%lld-", sw->r->run_id,
	    (long long)sw->sweep_id);
	char *health = xasprintf("%s%s", sw->eng->base_url,
	    w->adapter->serve.health ? w->adapter->serve.health : "/health");

	memset(&cfg, 0, sizeof(cfg));
	cfg.url = url;
	cfg.request_id_prefix = id_prefix;
	cfg.bodies = sw->bodies->timed;
	cfg.nbodies = sw->bodies->ntimed;
	cfg.warmups = sw->bodies->warm;
	cfg.nwarmups = sw->bodies->nwarm;
	cfg.concurrency = sw->pt->concurrency;
	cfg.preconnect_url = health;
	cfg.request_timeout_ns = (uint64_t)(pol->caps.request_timeout_s * 1e9);
	cfg.deadline_ns = w->deadline;
	cfg.hang_ns = 0;	/* sweep_tick also watches the engine's log */
	cfg.max_event_bytes = pol->caps.max_event_bytes;
	cfg.tick_ms = 100;
	cfg.raise_priority = pol->campaign.client_realtime;
	cfg.on_tick = sweep_tick;
	cfg.on_record = sweep_record;
	cfg.arg = sw;
	err = loadgen_run(&cfg, sum);
	free(health);
	free(id_prefix);
	free(url);
	return err;
}

/* Count a sweep that ran (for the campaign ETA). */
static void
sweep_ran(struct sweep *sw)
{
	sw->r->ran++;
	sw->r->ran_s += (double)(mono_ns() - sw->t0) / 1e9;
}

struct werr *
campaign_sweep_run(struct run *r, struct walk *w, size_t i)
{
	const struct point *pt = &r->points[i];
	const struct workload *wl = run_workload(r, pt->split);
	const struct policy *pol = r->o->policy;
	const struct profile_engine *pe;
	struct store_sweep_key k;
	struct store_sweep_result res;
	struct loadgen_summary sum;
	struct memsampler mem;
	struct bodies bodies;
	struct sweep sw;
	struct werr *err;
	json_t *summary = NULL, *load_start, *load = NULL;
	double hz = pol->campaign.memory_sample_hz;

	memset(&sw, 0, sizeof(sw));
	memset(&res, 0, sizeof(res));
	memset(&k, 0, sizeof(k));
	sw.r = r;
	sw.pt = pt;
	sw.k = i + 1;
	sw.t0 = mono_ns();
	sw.hang_ns = (uint64_t)(pol->caps.hang_s * 1e9);
	pe = profile_engine(w->profile, pt->engine);
	bodies_build(&bodies, wl, r->limit, (size_t)pol->caps.warmups,
	    pe->model ? pe->model : w->profile->name, w->profile,
	    pol->campaign.send_tools);
	sw.bodies = &bodies;
	emit(&sw, "starting", NULL, NULL);
	k.run_id = r->run_id;
	k.seq = (int)i;
	k.engine = pt->engine;
	k.model = pt->model;
	k.split = pt->split;
	k.concurrency = pt->concurrency;
	k.total = bodies.ntimed;
	k.provenance = sweep_provenance(r, w, pt, NULL);
	err = store_campaign_sweep_begin(r->o->store, &k, &sw.sweep_id);
	json_decref(k.provenance);
	if (err != NULL)
		goto out;
	if ((err = sweep_engine(r, w, pt, &sw, &sw.eng)) != NULL)
		goto out;
	if (sw.eng->state == ENGINE_STOPPED) {
		/* interrupted while it started: the sweep stays unfinished */
		if ((err = campaign_stopped(r)) == NULL)
			err = werr_new(WEXIT_ENV, "the engine start was abandoned");
		goto out;
	}
	res.served_model = sw.eng->served_model;
	res.gpu_hint = r->gpu_hint;
	res.log_path = sw.eng->log_path;
	res.engine_argv = sw.eng->argv_provenance;
	if (sw.eng->state != ENGINE_READY) {
		res.outcome = engine_state_name(sw.eng->state);
		res.detail = sw.eng->detail;
		res.failed = 0;
		if (sw.eng->state == ENGINE_WRONG_MODEL) {
			free(w->skip_model);
			free(w->skip_model_detail);
			w->skip_model = xstrdup(pt->model);
			w->skip_model_detail = xasprintf("not run: %s",
			    sw.eng->detail);
		} else {
			campaign_walk_skip(w, res.outcome, sw.eng->detail);
		}
		err = store_campaign_sweep_finish(r->o->store, sw.sweep_id, &res);
		sweep_ran(&sw);
		emit(&sw, "done", NULL, res.outcome);
		goto out;
	}
	memsampler_init(&mem, sw.eng->proc.pid,
	    hz > 0 ? (unsigned)(1000.0 / hz) : 1000);
	if ((err = memsampler_start(&mem)) != NULL)
		goto out;
	if ((err = store_campaign_writer_start(&sw.writer, r->o->store,
	    sw.sweep_id)) != NULL) {
		memsampler_stop(&mem);
		memsampler_free(&mem);
		goto out;
	}
	load_start = machine_load_now();
	err = sweep_measure(&sw, w, &sum);
	load = machine_load_span(load_start, machine_load_now());
	memsampler_stop(&mem);
	if (err == NULL)
		err = store_campaign_writer_finish(sw.writer);
	else
		werr_free(store_campaign_writer_finish(sw.writer));
	if (err == NULL && sum.end == LOADGEN_END_STOPPED) {
		/* interrupted: the rows written so far stay with the
		 * unfinished sweep, which --resume discards and runs again */
		if ((err = campaign_stopped(r)) == NULL)
			err = werr_new(WEXIT_ENV, "the sweep was stopped");
	} else if (err == NULL) {
		res.outcome = end_outcome(sum.end);
		if (sum.end == LOADGEN_END_SERVER_CRASH)
			res.detail = sw.eng->detail;
		else if (sum.end == LOADGEN_END_DEADLINE)
			res.detail = "the engine wall cap ended the sweep";
		else if (sum.end == LOADGEN_END_HANG)
			res.detail = "no response bytes and no engine log output "
			    "for the hang limit";
		res.completed = sum.completed;
		res.failed = sum.failed + sum.not_started;
		res.memory = &mem;
		res.load = load;
		/* the memory peaks are the sweep's own columns */
		if ((err = loadgen_summary_to_json(&sum, &summary)) == NULL) {
			res.summary = summary;
			err = store_campaign_sweep_finish(r->o->store,
			    sw.sweep_id, &res);
		}
		if (sum.end == LOADGEN_END_DEADLINE) {
			free(w->skip_outcome);
			free(w->skip_detail);
			w->skip_outcome = xstrdup("engine_cap");
			w->skip_detail = xasprintf("not run: the engine wall cap "
			    "of %.0f s was reached", pol->caps.engine_wall_s);
		}
		sw.completed = res.completed;
		sweep_ran(&sw);
		emit(&sw, "done", NULL, res.outcome);
	}
	memsampler_free(&mem);
	if (err == NULL && !pol->campaign.server_per_level &&
	    sum.end == LOADGEN_END_COMPLETE) {
		w->kept = sw.eng;
		w->kept_point = pt;
		sw.eng = NULL;
	}
out:
	json_decref(summary);
	json_decref(load);
	engine_free(sw.eng);
	bodies_free(&bodies);
	return err;
}
