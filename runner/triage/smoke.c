/*
 * smoke.c - one smoke run of triage: the engine's environment rebuilt in
 * a scratch directory (.warden/triage/RUN/ENGINE, never the live one)
 * with every package at the version of the manifest reproduced, some
 * pinned to other versions, then a small campaign of the engine from
 * that environment (policy triage.smoke: its levels and prompts, over
 * the models and splits of its failing cells; for a performance
 * regression, at the regressed levels), and the verdict recorded with
 * what was pinned and the log tail: a regressed series still worse than
 * published by the alert's threshold fails (smoke-regression.c). A run
 * for a commit of official (commits.c) reads that commit's tree, checked
 * out beside the scratch environment (.warden/triage/RUN/ENGINE@tree),
 * and its policy. See triage-private.h. The
 * build and the campaign run what no maintainer approved: both in the
 * sandbox (update.h ctx->untrusted, campaign.h untrusted), both checked
 * by the post-run guard (sandbox/guard.h).
 *
 * Never prints; never touches the engine's live environment or its
 * current manifest (the scratch build is recorded as a scratch
 * manifest, never current).
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "campaign.h"
#include "campaign-report.h"
#include "engine.h"
#include "manifest.h"
#include "policy.h"
#include "repo.h"
#include "sandbox/guard.h"
#include "sha256.h"
#include "store-campaign.h"
#include "store-triage.h"
#include "store-update.h"
#include "triage-private.h"
#include "update.h"
#include "util.h"

#define SMOKE_LOG_TAIL_BYTES 2000

/* What a smoke run reads its adapters, profiles, policy and workloads
 * from: the repository (dir NULL), or a checkout of a commit of
 * official. */
struct tree {
	char *dir;
	char *label;
	struct policy *policy;		/* that commit's (trusted: on
					   official) */
};

static char *
scratch_dir(const struct triage_ctx *c, const char *engine)
{
	return xasprintf("%s/.warden/triage/%lld/%s", c->o->repo_root,
	    (long long)c->run_id, engine);
}

/* Where a commit's tree is checked out for engine's smoke runs. */
static char *
tree_dir(const struct triage_ctx *c, const char *engine)
{
	return xasprintf("%s/.warden/triage/%lld/%s@tree", c->o->repo_root,
	    (long long)c->run_id, engine);
}

void
triage_smoke_cleanup(struct triage_ctx *c, const char *engine)
{
	char *dir = scratch_dir(c, engine), *tree = tree_dir(c, engine);

	werr_free(path_remove_tree(dir));
	werr_free(path_remove_tree(tree));
	free(dir);
	free(tree);
}

static void
tree_free(struct tree *t)
{
	free(t->dir);
	free(t->label);
	policy_free(t->policy);
	memset(t, 0, sizeof(*t));
}

/*
 * Check out commit (r->tree_commit) of official for engine's smoke run,
 * over the checkout of an earlier run, with its policy. A commit that is
 * gone or whose policy does not load is an error: triage found it on
 * official.
 */
static struct werr *
tree_open(struct tree *t, struct triage_ctx *c, const char *engine,
    const char *hex)
{
	git_commit *commit = NULL;
	struct werr *err = NULL;
	git_oid id;

	memset(t, 0, sizeof(*t));
	t->dir = tree_dir(c, engine);
	t->label = xasprintf("official at %.12s", hex);
	if ((err = path_remove_tree(t->dir)) != NULL)
		return err;
	if (git_oid_fromstr(&id, hex) < 0 ||
	    git_commit_lookup(&commit, c->o->repo, &id) < 0)
		return werr_git("no commit %s in the repository", hex);
	if ((err = repo_tree_materialize(c->o->repo, git_commit_tree_id(commit),
	    t->dir)) == NULL)
		err = policy_load_commit(&t->policy, c->o->repo, commit, hex);
	git_commit_free(commit);
	return err;
}

/* The roster to smoke engine in: the default one when it has it. */
static const char *
roster_of(const struct policy *pol, const char *engine)
{
	const struct roster *r = policy_engine_roster(pol, engine);

	return r != NULL ? r->name : NULL;
}

/* The distinct values of field over cells, NULL-terminated (caller frees
 * the array, not the strings, which cells keep). */
static const char **
distinct(const json_t *cells, const char *field)
{
	const char **v = xcalloc(json_array_size(cells) + 1, sizeof(*v));
	const char *s;
	json_t *cell;
	size_t i, k, n = 0;

	json_array_foreach((json_t *)cells, i, cell) {
		s = json_string_value(json_object_get(cell, field));
		if (s == NULL)
			continue;
		for (k = 0; k < n && strcmp(v[k], s) != 0; k++)
			;
		if (k == n)
			v[n++] = s;
	}
	return v;
}

/* "pkg==version" for every package of base, those in pins at theirs. */
static void
pin_list(struct strlist *l, const json_t *base, const json_t *pins)
{
	json_t *pk = json_object_get(base, "packages"), *v;
	const char *name, *ver;
	size_t i = 0;

	l->n = json_object_size(pk) + json_object_size(pins);
	l->v = xcalloc(l->n + 1, sizeof(*l->v));
	json_object_foreach(pk, name, v) {
		if (json_object_get(pins, name) != NULL)
			continue;
		l->v[i++] = xasprintf("%s==%s", name, json_string_value(v));
	}
	json_object_foreach((json_t *)pins, name, v)
		if ((ver = json_string_value(v)) != NULL)
			l->v[i++] = xasprintf("%s==%s", name, ver);
	l->n = i;
	l->v[i] = NULL;
}

/* Did the build give every pinned package its version? */
static char *
pins_missed(const json_t *manifest, const json_t *pins)
{
	const char *name, *want, *got;
	json_t *v;

	json_object_foreach((json_t *)pins, name, v) {
		want = json_string_value(v);
		got = manifest_package_version(manifest, name);
		if (want != NULL && (got == NULL || strcmp(got, want) != 0))
			return xasprintf("the build has %s %s, not %s", name,
			    got ? got : "absent", want);
	}
	return NULL;
}

struct outcome {
	const char *verdict;
	char *detail;
	char *log_tail;
	char *run_id;
	int64_t manifest_id;
	int built;			/* a scratch environment to run from */
};


/*
 * Build the scratch environment, in the sandbox as policy agent.sandbox
 * says (the decision a campaign of unreviewed engines makes: "required"
 * with no sandbox here is an error before anything runs); on failure o
 * says why.
 */
static struct werr *
build(struct outcome *o, struct triage_ctx *c, const struct triage_smoke_req *r,
    const struct adapter *a, const char *dir, const char *log_path)
{
	struct update_build_result res;
	struct update_build b;
	struct update_ctx uc;
	struct strlist pins = { NULL, 0 };
	struct werr *err;
	char *missed;

	memset(&uc, 0, sizeof(uc));
	uc.repo_root = c->o->repo_root;
	uc.policy = c->o->policy;
	uc.untrusted = 1;
	if ((err = engine_sandbox_decide(&uc.sandbox,
	    c->o->policy->agent.sandbox, "triage's scratch builds")) != NULL)
		return err;
	memset(&b, 0, sizeof(b));
	b.adapter = a;
	b.env_dir = dir;
	pin_list(&pins, r->base, r->pins);
	b.pins = &pins;
	b.log_path = log_path;
	b.k = r->k;
	b.n = r->max;
	err = update_env_build(&res, &uc, &b);
	strlist_free(&pins);
	if (err != NULL) {
		o->verdict = "build_failed";
		o->detail = xstrdup(err->msg);
		o->log_tail = res.log_tail != NULL ? xstrdup(res.log_tail) : NULL;
		werr_free(err);
		update_build_result_free(&res);
		return NULL;
	}
	o->built = 1;
	if ((missed = pins_missed(res.manifest, r->pins)) != NULL) {
		o->verdict = "build_failed";
		o->detail = missed;
	}
	err = store_update_record_scratch(c->o->store, r->engine, dir,
	    res.manifest, &o->manifest_id);
	update_build_result_free(&res);
	return err;
}

/*
 * The scratch build under the post-run guard: the repository is recorded
 * before (*guard, which the smoke campaign's check uses too) and checked
 * after, so a build step that touched it (refs, hooks, config, the
 * checkout) is caught, .git is put back and the smoke run stops with the
 * guard's error.
 */
static struct werr *
guarded_build(struct outcome *o, struct triage_ctx *c,
    const struct triage_smoke_req *r, const struct adapter *a,
    const char *dir, const char *log_path, struct sandbox_guard **guard)
{
	struct werr *err;
	char *step;

	if ((err = sandbox_guard_campaign(guard, c->o->repo,
	    c->o->repo_root)) != NULL ||
	    (err = build(o, c, r, a, dir, log_path)) != NULL)
		return err;
	step = xasprintf("triage's scratch build of %s (%s)", r->engine,
	    r->purpose);
	err = sandbox_guard_check(*guard, c->o->repo, step);
	free(step);
	return err;
}

/* The verdict of the smoke campaign's sweeps. */
static void
judge(struct outcome *o, const json_t *sweeps, const struct triage_ctx *c,
    const json_t *cells)
{
	const struct policy *pol = c->o->policy;
	struct buf tail = BUF_INIT;
	const char *log;
	json_t *s;
	size_t i;

	o->verdict = json_array_size(sweeps) > 0 ? "pass" : "fail";
	if (json_array_size(sweeps) == 0)
		o->detail = xstrdup("the smoke campaign ran no cell");
	json_array_foreach((json_t *)sweeps, i, s) {
		if (triage_sweep_passes(s, pol) != 0)
			continue;
		o->verdict = "fail";
		o->detail = xasprintf("%s %s c=%lld: %s %lld/%lld %s%s%s",
		    json_string_value(json_object_get(s, "model")),
		    json_string_value(json_object_get(s, "split")),
		    (long long)json_integer_value(json_object_get(s,
		    "concurrency")),
		    json_string_value(json_object_get(s, "outcome")),
		    (long long)json_integer_value(json_object_get(s, "completed")),
		    (long long)json_integer_value(json_object_get(s, "total")),
		    campaign_level_status(s, pol),
		    json_is_string(json_object_get(s, "detail")) ? ": " : "",
		    json_is_string(json_object_get(s, "detail")) ?
		    json_string_value(json_object_get(s, "detail")) : "");
		if ((log = json_string_value(json_object_get(s, "log_path")))
		    != NULL) {
			char *path = log[0] == '/' ? xstrdup(log) :
			    path_join(c->o->repo_root, log);

			engine_log_tail(&tail, path, SMOKE_LOG_TAIL_BYTES);
			free(path);
			if (tail.len > 0) {
				text_make_utf8(&tail, 0);
				o->log_tail = buf_detach(&tail);
			}
		}
		break;
	}
	buf_free(&tail);
	if (strcmp(o->verdict, "pass") == 0 && (o->detail =
	    triage_regression_fails(sweeps, cells)) != NULL)
		o->verdict = "fail";
}

/* Run the smoke campaign of the engine from dir; the guard, taken
 * before the scratch build, checks the repository after it. */
static struct werr *
campaign(struct outcome *o, struct triage_ctx *c,
    const struct triage_smoke_req *r, const char *dir,
    const struct tree *t, const struct sandbox_guard *guard)
{
	const char *engines[2] = { r->engine, NULL };
	const char **models = distinct(r->cells, "model");
	const char **splits = distinct(r->cells, "split");
	const struct policy *pol = t->policy != NULL ? t->policy :
	    c->o->policy;
	struct campaign_env env;
	struct campaign_opts co;
	json_t *sweeps = NULL;
	struct werr *err;
	char *got = NULL;
	int *levels;
	size_t nlevels;

	memset(&co, 0, sizeof(co));
	co.repo_root = c->o->repo_root;
	co.policy = pol;
	co.store = c->o->store;
	co.roster = roster_of(pol, r->engine);
	co.engines = engines;
	co.models = models[0] != NULL ? models : NULL;
	co.splits = splits[0] != NULL ? splits : NULL;
	co.concurrency = pol->triage.smoke_concurrency;
	co.n_concurrency = pol->triage.smoke_n_concurrency;
	co.limit = (size_t)pol->triage.smoke_prompts;
	if ((levels = triage_regression_levels(r->cells, &nlevels,
	    &co.limit)) != NULL) {
		co.concurrency = levels;
		co.n_concurrency = nlevels;
	}
	if (t->dir != NULL) {
		co.tree_root = t->dir;
		co.tree_label = t->label;
	}
	env.engine = r->engine;
	env.env_dir = dir;
	env.manifest_id = o->manifest_id;
	if (o->built) {
		co.envs = &env;
		co.n_envs = 1;
	}
	o->run_id = xasprintf("triage-%lld-%s-%zu", (long long)c->run_id,
	    r->engine, ++c->smoke_seq);
	co.run_id = o->run_id;
	if (co.roster == NULL) {
		err = werr_new(WEXIT_INPUT, "engine '%s' is in no roster of "
		    "the policy", r->engine);
		goto out;
	}
	co.untrusted = 1;
	err = campaign_run(&co, &got);
	if (err == NULL) {
		char *step = xasprintf("triage's smoke run %s", o->run_id);

		err = sandbox_guard_check(guard, c->o->repo, step);
		free(step);
	}
	if (err != NULL || (err = store_campaign_sweeps_json(c->o->store,
	    o->run_id, &sweeps)) != NULL)
		goto out;
	judge(o, sweeps, c, r->cells);
out:
	json_decref(sweeps);
	free(got);
	free(models);
	free(splits);
	free(levels);
	return err;
}

/* sha256 of the engine's adapter file as the campaign will read it
 * ("" when it cannot be read): a changed adapter is not the same run. */
static void
adapter_digest(char *hex, const struct triage_ctx *c, const char *engine)
{
	char *path = xasprintf("%s/adapters/engines/%s.json", c->o->repo_root,
	    engine);
	struct werr *err = sha256_file_hex(path, hex);

	if (err != NULL)
		hex[0] = '\0';
	werr_free(err);
	free(path);
}

/* An earlier run of the same pins: its verdict. */
static int
cached(struct triage_smoke_res *res, const json_t *row)
{
	if (row == NULL)
		return 0;
	res->verdict = strcmp(json_string_value(json_object_get(row,
	    "outcome")), "pass") == 0 ? "pass" : strcmp(json_string_value(
	    json_object_get(row, "outcome")), "fail") == 0 ? "fail" :
	    "build_failed";
	res->id = json_integer_value(json_object_get(row, "id"));
	res->cached = 1;
	return 1;
}

struct werr *
triage_smoke(struct triage_smoke_res *res, struct triage_ctx *c,
    const struct triage_smoke_req *r)
{
	int64_t base_id = json_integer_value(json_object_get(r->base, "id"));
	struct store_triage_smoke row;
	struct sandbox_guard *guard = NULL;
	struct adapter *a = NULL;
	struct outcome o;
	struct tree t;
	struct werr *err;
	json_t *seen = NULL;
	char *dir = NULL, *log_dir = NULL, *log_path = NULL, sha[65];

	memset(res, 0, sizeof(*res));
	memset(&o, 0, sizeof(o));
	memset(&t, 0, sizeof(t));
	if (r->tree_commit != NULL)
		/* what the run reads is that commit's tree */
		snprintf(sha, sizeof(sha), "tree:%.40s", r->tree_commit);
	else
		adapter_digest(sha, c, r->engine);
	if ((err = store_triage_smoke_find(c->o->store, c->cycle, r->engine,
	    base_id, r->pins, sha, &seen)) != NULL)
		return err;
	if (cached(res, seen)) {
		json_decref(seen);
		return NULL;
	}
	triage_progress(c, "smoke", r->engine, r->k, r->max, "%s: smoke run "
	    "%zu of at most %zu (%s)", r->engine, r->k, r->max, r->purpose);
	dir = scratch_dir(c, r->engine);
	log_dir = xasprintf("%s/.warden/logs/triage/%lld", c->o->repo_root,
	    (long long)c->run_id);
	log_path = xasprintf("%s/%s.log", log_dir, r->engine);
	if ((err = mkdir_p(log_dir)) != NULL)
		goto out;
	if (r->tree_commit != NULL && (err = tree_open(&t, c, r->engine,
	    r->tree_commit)) != NULL)
		goto out;
	if ((err = adapter_load_named(&a, t.dir != NULL ? t.dir :
	    c->o->repo_root, r->engine)) != NULL) {
		/* an adapter that does not load is a verdict, as in a campaign */
		o.verdict = "build_failed";
		o.detail = xstrdup(err->msg);
		werr_free(err);
		err = NULL;
	} else if (t.dir != NULL && (a->source.kind == SOURCE_NONE ||
	    a->source.kind == SOURCE_BREW)) {
		/* a tree's run of a program on PATH or a brew formula: there is
		 * nothing to build, the engine installed is the one that failed */
		if ((err = sandbox_guard_campaign(&guard, c->o->repo,
		    c->o->repo_root)) != NULL)
			goto out;
	} else if ((err = guarded_build(&o, c, r, a, dir, log_path,
	    &guard)) != NULL)
		goto out;
	if (o.verdict == NULL && (err = campaign(&o, c, r, dir, &t, guard))
	    != NULL)
		goto out;
	memset(&row, 0, sizeof(row));
	row.triage_run = c->run_id;
	row.cycle = c->cycle;
	row.engine = r->engine;
	row.base_manifest = base_id;
	row.purpose = r->purpose;
	row.pins = r->pins;
	row.adapter_sha256 = sha;
	row.manifest_id = o.manifest_id;
	row.run_id = o.run_id;
	row.outcome = o.verdict;
	row.detail = o.detail;
	row.log_tail = o.log_tail;
	if ((err = store_triage_smoke_add(c->o->store, &row, &res->id)) != NULL)
		goto out;
	res->verdict = strcmp(o.verdict, "pass") == 0 ? "pass" :
	    strcmp(o.verdict, "fail") == 0 ? "fail" : "build_failed";
	triage_progress(c, "smoke", r->engine, r->k, r->max, "%s: smoke run "
	    "%zu: %s%s%s", r->engine, r->k, res->verdict, o.detail ? ": " : "",
	    o.detail ? o.detail : "");
out:
	sandbox_guard_free(guard);
	adapter_free(a);
	tree_free(&t);
	free(o.detail);
	free(o.log_tail);
	free(o.run_id);
	free(dir);
	free(log_dir);
	free(log_path);
	return err;
}
