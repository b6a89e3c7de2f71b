/*
 * review-smoke.c - the smoke campaign of a change (an agent's, a queued
 * review's, a pull request's): the engines it touches, run for a few
 * prompts at low concurrency from the base tree (before) and from the
 * change (after), each a campaign run of its own in the store. See
 * review-smoke.h.
 *
 * Both trees are checked out by warden from git objects (without
 * symlinks): exactly what the gate passed, never a worktree with
 * whatever was left beside the diff. Engine failures are results. Never
 * prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adapter.h"
#include "allowlist.h"
#include "buf.h"
#include "campaign.h"
#include "fault.h"
#include "policy.h"
#include "regress/regress.h"
#include "repo.h"
#include "review.h"
#include "review-private.h"
#include "review-smoke.h"
#include "sandbox/guard.h"
#include "sandbox/scratch.h"
#include "store-campaign.h"
#include "store-review.h"
#include "util.h"

static void
add_engine(json_t *engines, const char *name)
{
	json_t *e;
	size_t i;

	json_array_foreach(engines, i, e)
		if (strcmp(json_string_value(e), name) == 0)
			return;
	json_array_append_new(engines, json_string(name));
}

/* Engines whose entry differs between the two versions of a profile. */
static void
profile_engines(json_t *engines, const struct review_smoke_opts *o,
    const char *path)
{
	json_t *a = repo_tree_json(o->repo, o->base_tree, path);
	json_t *b = repo_tree_json(o->repo, o->change_tree, path);
	json_t *ea = json_object_get(a, "engines");
	json_t *eb = json_object_get(b, "engines");
	const char *k;
	json_t *v;

	json_object_foreach(eb, k, v)
		if (!json_equal(v, json_object_get(ea, k)))
			add_engine(engines, k);
	json_object_foreach(ea, k, v)
		if (json_object_get(eb, k) == NULL)
			add_engine(engines, k);
	json_decref(a);
	json_decref(b);
}

/* The roster to smoke engine in: the default one when it has it. */
static const char *
roster_of(const struct policy *pol, const char *engine)
{
	const struct roster *r = policy_engine_roster(pol, engine);

	return r != NULL ? r->name : NULL;
}

int
review_sweep_failed(const json_t *s, const struct policy *pol)
{
	const char *outcome = json_string_value(json_object_get(s, "outcome"));
	json_int_t done = json_integer_value(json_object_get(s, "completed"));
	json_int_t total = json_integer_value(json_object_get(s, "total"));

	if (outcome == NULL || strcmp(outcome, "complete") != 0)
		return 1;
	return done * pol->gates.completion_of <
	    total * pol->gates.completion_min;
}

json_t *
review_smoke_engines(const struct review_smoke_opts *o)
{
	json_t *engines = json_array(), *e, *kept = json_array();
	const struct allowlist_report *r = o->gate;
	size_t i;

	json_array_foreach(o->engines, i, e)
		if (json_is_string(e))
			add_engine(engines, json_string_value(e));
	for (i = 0; i < r->nfiles; i++) {
		const char *paths[2] = { r->files[i].old_path,
		    r->files[i].new_path };
		int k;

		for (k = 0; k < 2; k++) {
			char *name = adapter_engine_of_path(paths[k]);

			if (name != NULL)
				add_engine(engines, name);
			free(name);
			if (paths[k] != NULL &&
			    str_startswith(paths[k], "adapters/profiles/") &&
			    str_endswith(paths[k], ".json"))
				profile_engines(engines, o, paths[k]);
		}
	}
	json_array_foreach(engines, i, e)
		if (roster_of(o->policy, json_string_value(e)) != NULL)
			json_array_append(kept, e);
	json_decref(engines);
	return kept;
}

/* One engine's smoke campaign from tree dir, round round (1: run id
 * PREFIX-ENGINE-PHASE, then PREFIX-ENGINE-PHASE-ROUND): {"engine",
 * "run_id", "round", "passed", "sweeps"|"error"}. */
static json_t *
smoke_engine(const struct review_smoke_opts *o, const char *engine,
    const char *phase, const char *dir, const char *label, int round)
{
	const char *engines[] = { engine, NULL };
	struct scratch_usage left;
	struct campaign_opts co;
	json_t *res, *rows = NULL, *sweeps = json_array(), *s;
	char *run_id = round > 1 ? xasprintf("%s-%s-%s-%d", o->run_prefix,
	    engine, phase, round) : xasprintf("%s-%s-%s", o->run_prefix,
	    engine, phase);
	char *got = NULL;
	struct werr *err;
	int passed = 1;
	size_t i;

	memset(&co, 0, sizeof(co));
	co.repo_root = o->repo_root;
	co.tree_root = dir;
	co.tree_label = label;
	co.policy = o->policy;
	co.store = o->store;
	co.roster = roster_of(o->policy, engine);
	co.engines = engines;
	co.concurrency = o->policy->agent.smoke_concurrency;
	co.n_concurrency = o->policy->agent.smoke_n_concurrency;
	co.limit = (size_t)o->policy->agent.smoke_prompts;
	co.run_id = run_id;
	co.untrusted = 1;
	co.left = &left;
	memset(&left, 0, sizeof(left));
	res = json_pack("{s:s, s:s, s:i}", "engine", engine, "run_id", run_id,
	    "round", round);
	if ((err = campaign_run(&co, &got)) == NULL)
		err = store_campaign_sweeps_json(o->store, run_id, &rows);
	/* What the run left in its own folder, removed since. */
	json_object_set_new(res, "left", json_pack("{s:I, s:I, s:I, s:b}",
	    "files", (json_int_t)left.files, "bytes", (json_int_t)left.bytes,
	    "disk_bytes", (json_int_t)left.disk_bytes, "cut", left.cut));
	if (err != NULL) {
		json_object_set_new(res, "error", json_string(err->msg));
		werr_free(err);
		passed = 0;
	}
	json_array_foreach(rows, i, s) {
		int failed = review_sweep_failed(s, o->policy);

		json_array_append_new(sweeps, json_pack("{s:O, s:O, s:O, s:O, "
		    "s:O, s:O, s:O, s:b}", "model", json_object_get(s, "model"),
		    "split", json_object_get(s, "split"),
		    "concurrency", json_object_get(s, "concurrency"),
		    "outcome", json_object_get(s, "outcome"),
		    "detail", json_object_get(s, "detail"),
		    "completed", json_object_get(s, "completed"),
		    "total", json_object_get(s, "total"), "passed", !failed));
		if (failed)
			passed = 0;
	}
	if (json_array_size(sweeps) == 0)
		passed = 0;
	json_object_set_new(res, "passed", json_boolean(passed));
	json_object_set_new(res, "sweeps", sweeps);
	json_decref(rows);
	free(run_id);
	free(got);
	return res;
}

/* One side of the smoke: its tree checked out, its label, its runs. */
struct side {
	const char *phase;
	char *dir, *label;
	json_t *res;		/* {"passed", "runs"[, "error"]} */
};

static void
side_open(struct side *sd, const struct review_smoke_opts *o,
    const char *phase, const git_oid *tree)
{
	char hex[GIT_OID_HEXSZ + 1];
	struct werr *err;

	sd->phase = phase;
	sd->dir = xasprintf("%s/smoke-%s", o->work_dir, phase);
	sd->label = xasprintf("%s %s: tree %s", o->label, phase,
	    git_oid_tostr(hex, sizeof(hex), tree));
	sd->res = json_pack("{s:b, s:[]}", "passed", 1, "runs");
	if ((err = repo_tree_materialize(o->repo, tree, sd->dir)) != NULL) {
		json_object_set_new(sd->res, "error", json_string(err->msg));
		json_object_set_new(sd->res, "passed", json_false());
		werr_free(err);
	}
}

/* Run engine on side sd in round; 1 when it passed. */
static int
side_run(struct side *sd, const struct review_smoke_opts *o,
    const char *engine, int round)
{
	json_t *r;
	char *what;
	int passed;

	if (json_object_get(sd->res, "error") != NULL)
		return 0;
	what = round > 1 ? xasprintf("smoke %s: %s (round %d)", sd->phase,
	    engine, round) : xasprintf("smoke %s: %s", sd->phase, engine);
	if (o->on_progress != NULL)
		o->on_progress(o->arg, what);
	free(what);
	r = smoke_engine(o, engine, sd->phase, sd->dir, sd->label, round);
	passed = json_is_true(json_object_get(r, "passed"));
	if (!passed)
		json_object_set_new(sd->res, "passed", json_false());
	json_array_append_new(json_object_get(sd->res, "runs"), r);
	return passed;
}

static void
side_close(struct side *sd)
{
	werr_free(path_remove_tree(sd->dir));
	free(sd->dir);
	free(sd->label);
}

/* The run ids of a side's runs, a new array. */
static json_t *
run_ids(const json_t *side)
{
	json_t *ids = json_array(), *r;
	size_t i;

	json_array_foreach(json_object_get(side, "runs"), i, r)
		json_array_append(ids, json_object_get(r, "run_id"));
	return ids;
}

/*
 * review_smoke() of engines (review_smoke_engines(o), taken). Each
 * engine is run before, after, before, after... (policy agent.smoke
 * rounds), so that drift and a busy machine hit both sides alike; an
 * engine that fails on a side in the first round is not run again
 * (nothing of its speed can be told). The sides' speed is compared by
 * regress_compare(): "speed", and "passed" false when it regressed.
 */
static json_t *
smoke_of(const struct review_smoke_opts *o, json_t *engines)
{
	struct side before, after;
	json_t *e, *speed = NULL, *ib, *ia, *res;
	struct werr *err;
	int round, rounds = o->policy->agent.smoke_rounds, pb, pa;
	size_t i;

	if (json_array_size(engines) == 0)
		return json_pack("{s:o, s:b, s:s}", "engines", engines,
		    "passed", 0, "skipped", "no engine of a roster is "
		    "concerned");
	side_open(&before, o, "before", o->base_tree);
	side_open(&after, o, "after", o->change_tree);
	json_array_foreach(engines, i, e)
		for (round = 1; round <= (rounds > 0 ? rounds : 1); round++) {
			pb = side_run(&before, o, json_string_value(e), round);
			pa = side_run(&after, o, json_string_value(e), round);
			if (!pb || !pa)
				break;
		}
	side_close(&before);
	side_close(&after);
	ib = run_ids(before.res);
	ia = run_ids(after.res);
	if ((err = regress_compare(&speed, o->store, o->policy, ib, ia))
	    != NULL) {
		speed = json_pack("{s:s}", "error", err->msg);
		werr_free(err);
	}
	json_decref(ib);
	json_decref(ia);
	json_object_set_new(speed, "rounds", json_integer(rounds));
	res = json_pack("{s:o, s:b, s:o, s:o, s:o, s:b}", "engines", engines,
	    "passed", json_is_true(json_object_get(after.res, "passed")) &&
	    !json_is_true(json_object_get(speed, "regressed")), "before",
	    before.res, "after", after.res, "speed", speed, "regressed",
	    json_is_true(json_object_get(speed, "regressed")));
	return res;
}

struct werr *
review_smoke(json_t **out, const struct review_smoke_opts *o)
{
	*out = smoke_of(o, review_smoke_engines(o));
	return NULL;
}

/* Is engine among the engines some smoke evidence of ev (store rows)
 * ran? A smoke campaign the guard quarantined is no evidence: a warden
 * killed after attaching it and before rejecting the review leaves it
 * on a pending review. */
static int
covered(const json_t *ev, const char *engine)
{
	const json_t *x, *e, *body;
	const char *kind;
	size_t i, j;

	json_array_foreach(ev, i, x) {
		kind = json_string_value(json_object_get(x, "kind"));
		body = json_object_get(x, "body");
		if (kind == NULL || !json_is_object(body) ||
		    json_object_get(body, "quarantined") != NULL)
			continue;
		if (strcmp(kind, "smoke") == 0)
			json_array_foreach(json_object_get(body, "engines"),
			    j, e)
				if (json_is_string(e) && strcmp(
				    json_string_value(e), engine) == 0)
					return 1;
		if (strcmp(kind, "triage-smoke") == 0)
			json_array_foreach(json_object_get(body, "smoke"),
			    j, e)
				if (json_is_string(json_object_get(e,
				    "engine")) && strcmp(json_string_value(
				    json_object_get(e, "engine")), engine) == 0)
					return 1;
	}
	return 0;
}

char *
review_smoke_missing(const json_t *evidence, const json_t *engines)
{
	struct buf b = BUF_INIT;
	const json_t *e;
	size_t i;

	json_array_foreach(engines, i, e)
		if (!covered(evidence, json_string_value(e)))
			buf_printf(&b, "%s%s", b.len > 0 ? ", " : "",
			    json_string_value(e));
	if (b.len > 0)
		return buf_detach(&b);
	buf_free(&b);
	return NULL;
}

/* The newest smoke evidence of ev (store rows, oldest first) that ran
 * engine and was not quarantined, or NULL. */
static const json_t *
newest_smoke(const json_t *ev, const char *engine)
{
	const json_t *x, *e, *body, *found = NULL;
	size_t i, j;

	json_array_foreach(ev, i, x) {
		body = json_object_get(x, "body");
		if (!json_is_string(json_object_get(x, "kind")) || strcmp(
		    json_string_value(json_object_get(x, "kind")), "smoke")
		    != 0 || !json_is_object(body) ||
		    json_object_get(body, "quarantined") != NULL)
			continue;
		json_array_foreach(json_object_get(body, "engines"), j, e)
			if (json_is_string(e) && strcmp(json_string_value(e),
			    engine) == 0)
				found = body;
	}
	return found;
}

json_t *
review_smoke_regressed(const json_t *evidence, const json_t *engines)
{
	json_t *out = json_array();
	const json_t *e, *body, *c;
	size_t i, j;

	json_array_foreach(engines, i, e) {
		if ((body = newest_smoke(evidence, json_string_value(e))) ==
		    NULL)
			continue;
		json_array_foreach(json_object_get(json_object_get(body,
		    "speed"), "cells"), j, c)
			if (json_equal(json_object_get(c, "engine"), e) &&
			    json_is_string(json_object_get(c, "verdict")) &&
			    strcmp(json_string_value(json_object_get(c,
			    "verdict")), "regressed") == 0)
				json_array_append_new(out, json_pack("{s:O, "
				    "s:O, s:O, s:O, s:O, s:O}", "engine",
				    json_object_get(c, "engine"), "model",
				    json_object_get(c, "model"), "split",
				    json_object_get(c, "split"), "concurrency",
				    json_object_get(c, "concurrency"), "text",
				    json_object_get(c, "text"), "metrics",
				    json_object_get(c, "metrics")));
	}
	return out;
}

json_t *
review_smoke_effect(const json_t *evidence)
{
	const json_t *x, *body, *newest = NULL, *c;
	json_t *out = json_array();
	const char *kind;
	size_t i;

	json_array_foreach(evidence, i, x) {
		kind = json_string_value(json_object_get(x, "kind"));
		body = json_object_get(x, "body");
		if (kind != NULL && strcmp(kind, "smoke") == 0 &&
		    json_object_get(body, "quarantined") == NULL &&
		    json_is_array(json_object_get(json_object_get(body,
		    "speed"), "cells")))
			newest = body;
	}
	json_array_foreach(json_object_get(json_object_get(newest, "speed"),
	    "cells"), i, c)
		json_array_append_new(out, json_sprintf("%s %s/%s c=%lld: %s",
		    json_string_value(json_object_get(c, "engine")),
		    json_string_value(json_object_get(c, "model")),
		    json_string_value(json_object_get(c, "split")),
		    (long long)json_integer_value(json_object_get(c,
		    "concurrency")), json_string_value(json_object_get(c,
		    "text"))));
	return out;
}

struct werr *
review_smoke_guarded(json_t **out, struct store *store, git_repository *repo,
    const char *repo_root, const struct review_base *b,
    const struct allowlist_report *r, const char *name,
    void (*on_progress)(void *arg, const char *what), void *arg)
{
	struct review_smoke_opts so;
	struct sandbox_guard *guard = NULL;
	json_t *engines, *reasons = json_array(), *back = json_array();
	char stamp[32], hex[GIT_OID_HEXSZ + 1];
	char *prefix = NULL, *dir = NULL;
	struct werr *err = NULL;
	struct timespec now;
	struct tm tm;

	memset(&so, 0, sizeof(so));
	so.repo_root = repo_root;
	so.repo = repo;
	so.store = store;
	so.policy = b->policy;
	so.base_tree = &b->tree;
	so.change_tree = &r->result_tree;
	so.gate = r;
	*out = NULL;
	engines = review_smoke_engines(&so);
	if (json_array_size(engines) == 0) {
		*out = smoke_of(&so, engines);	/* skipped: nothing runs */
		engines = NULL;
		goto out;
	}
	/* Milliseconds: two smoke runs of one repository (one at a time,
	 * under its campaign lock) in one second get run ids of their own. */
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	so.run_prefix = prefix = xasprintf("%s-%s%03ldZ", name, stamp,
	    now.tv_nsec / 1000000L);
	so.label = name;
	so.work_dir = dir = xasprintf("%s/.warden/smoke/%s", repo_root, prefix);
	so.on_progress = on_progress;
	so.arg = arg;
	if ((err = mkdir_p(dir)) != NULL ||
	    (err = sandbox_guard_campaign(&guard, repo, repo_root)) != NULL)
		goto out;
	*out = smoke_of(&so, engines);
	engines = NULL;
	if ((err = sandbox_guard_settle(reasons, back, guard, repo)) != NULL)
		goto out;
	json_object_set_new(*out, "base", json_string(git_oid_tostr(hex,
	    sizeof(hex), &b->commit)));
	if (json_array_size(reasons) > 0) {
		json_object_set(*out, "quarantined", reasons);
		json_object_set(*out, "restored", back);
		json_object_set_new(*out, "passed", json_false());
	}
out:
	if (dir != NULL)
		werr_free(path_remove_tree(dir));
	sandbox_guard_free(guard);
	json_decref(engines);
	json_decref(reasons);
	json_decref(back);
	free(prefix);
	free(dir);
	return err;
}

struct werr *
review_smoke_review(json_t **out, struct store *store, git_repository *repo,
    const char *repo_root, const char *official_branch, int64_t id,
    void (*on_progress)(void *arg, const char *what), void *arg)
{
	struct allowlist_report r;
	struct review_base b;
	char *patch = NULL, *commit = NULL, *name = NULL;
	char *refname = xasprintf("refs/heads/%s", official_branch);
	struct werr *err;

	*out = NULL;
	memset(&b, 0, sizeof(b));
	allowlist_report_init(&r);
	if ((err = review_load_pending(store, id, &patch, &commit)) != NULL ||
	    (err = review_base_open(&b, repo, refname)) != NULL ||
	    (err = allowlist_gate_patch(&r, repo, &b.tree, patch,
	    strlen(patch), &b.gate, ALLOWLIST_WRITE)) != NULL)
		goto out;
	if (r.nv > 0 || !r.applied) {
		err = werr_new(WEXIT_PROBLEM, "review %lld does not pass the "
		    "gate against '%s' any more: nothing to smoke",
		    (long long)id, official_branch);
		goto out;
	}
	name = xasprintf("review-%lld", (long long)id);
	if ((err = review_smoke_guarded(out, store, repo, repo_root, &b, &r,
	    name, on_progress, arg)) != NULL)
		goto out;
	if (json_is_string(json_object_get(*out, "skipped"))) {
		err = werr_new(WEXIT_INPUT, "review %lld changes no engine of "
		    "a roster: there is nothing to smoke", (long long)id);
		goto out;
	}
	if ((err = review_add_evidence(store, id, "smoke", *out)) != NULL)
		goto out;
	fault_point("review.smoke.attached");
	if (json_object_get(*out, "quarantined") != NULL)
		err = review_reject(store, id, "quarantined: the smoke campaign "
		    "of this change changed the repository", "warden");
out:
	if (err != NULL) {
		json_decref(*out);
		*out = NULL;
	}
	allowlist_report_free(&r);
	review_base_free(&b);
	free(patch);
	free(commit);
	free(name);
	free(refname);
	return err;
}
