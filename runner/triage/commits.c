/*
 * commits.c - the changes to an engine that are not packages: commits on
 * the official branch between the run of its last healthy cycle and the
 * failing one that change what the engine runs with - its adapter, its
 * model profiles (its entry, or the model's own fields: weights and
 * their digest), the policy, the workloads - searched for the one that
 * broke it. See triage-private.h (triage_commit_suspects,
 * triage_commit_search).
 *
 * The commits are in first-parent order, oldest first; state 0 is the
 * tree before the first of them, state j the tree of the j-th. The last
 * state fails in the cycle's campaign; state 0 must pass a smoke run (or
 * nothing in these commits explains the failure), then the halving finds
 * the first failing state j, and a smoke run of state j itself (when the
 * halving did not run it) confirms it: the culprit is the j-th commit,
 * healthy at its parent's state, failing at its own. Each state is a
 * checkout of that commit's tree, smoked in the sandbox like any
 * scratch run (smoke.c). Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "repo.h"
#include "triage-private.h"
#include "util.h"

/* A profile with its "engines" object left out: the model's own fields. */
static json_t *
model_part(const json_t *profile)
{
	json_t *m = json_deep_copy(profile);

	json_object_del(m, "engines");
	return m;
}

/* Does the change of a profile between two trees concern engine: its
 * entry changed, or the model's own fields did in a profile that serves
 * it? */
static int
profile_concerns(git_repository *repo, const git_oid *old,
    const git_oid *new, const char *path, const char *engine)
{
	json_t *a = repo_tree_json(repo, old, path);
	json_t *b = repo_tree_json(repo, new, path);
	json_t *ea = json_object_get(json_object_get(a, "engines"), engine);
	json_t *eb = json_object_get(json_object_get(b, "engines"), engine);
	json_t *ma, *mb;
	int yes;

	if (ea == NULL && eb == NULL)
		yes = 0;
	else if (ea == NULL || eb == NULL || !json_equal(ea, eb))
		yes = 1;
	else {
		ma = model_part(a);
		mb = model_part(b);
		yes = !json_equal(ma, mb);
		json_decref(ma);
		json_decref(mb);
	}
	json_decref(a);
	json_decref(b);
	return yes;
}

/* Does a change to path concern engine? */
static int
concerns(git_repository *repo, const git_oid *old, const git_oid *new,
    const char *path, const char *engine)
{
	char *adapter = xasprintf("adapters/engines/%s.json", engine);
	int yes = strcmp(path, adapter) == 0 ||
	    strcmp(path, "policy/warden.json") == 0 ||
	    str_startswith(path, "workloads/");

	free(adapter);
	if (!yes && str_startswith(path, "adapters/profiles/") &&
	    str_endswith(path, ".json"))
		yes = profile_concerns(repo, old, new, path, engine);
	return yes;
}

/* The review a commit came in by (its Warden-Review trailer), or 0. */
static json_int_t
review_of(const git_commit *commit)
{
	git_message_trailer_array tr;
	json_int_t id = 0;
	size_t i;

	memset(&tr, 0, sizeof(tr));
	if (git_message_trailers(&tr, git_commit_message(commit)) < 0)
		return 0;
	for (i = 0; i < tr.count; i++)
		if (strcmp(tr.trailers[i].key, "Warden-Review") == 0)
			id = strtoll(tr.trailers[i].value, NULL, 10);
	git_message_trailer_array_free(&tr);
	return id > 0 ? id : 0;
}

/* The paths a commit changes against its first parent that concern
 * engine: a new array, empty when none does. */
static struct werr *
commit_paths(json_t **out, git_repository *repo, git_commit *commit,
    const char *engine)
{
	git_commit *parent = NULL;
	git_tree *old = NULL, *new = NULL;
	git_diff *diff = NULL;
	const git_diff_delta *d;
	struct werr *err = NULL;
	size_t i, n;

	*out = json_array();
	if (git_commit_parentcount(commit) == 0)
		return NULL;
	if (git_commit_parent(&parent, commit, 0) < 0 ||
	    git_commit_tree(&old, parent) < 0 ||
	    git_commit_tree(&new, commit) < 0 ||
	    git_diff_tree_to_tree(&diff, repo, old, new, NULL) < 0) {
		err = werr_git("cannot diff commit %s", git_oid_tostr_s(
		    git_commit_id(commit)));
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n; i++) {
		d = git_diff_get_delta(diff, i);
		if (concerns(repo, git_tree_id(old), git_tree_id(new),
		    d->new_file.path, engine))
			json_array_append_new(*out, json_string(
			    d->new_file.path));
		else if (strcmp(d->old_file.path, d->new_file.path) != 0 &&
		    concerns(repo, git_tree_id(old), git_tree_id(new),
		    d->old_file.path, engine))
			json_array_append_new(*out, json_string(
			    d->old_file.path));
	}
out:
	git_diff_free(diff);
	git_tree_free(old);
	git_tree_free(new);
	git_commit_free(parent);
	return err;
}

/* What the incident keeps of a commit. */
static json_t *
commit_json(git_commit *commit, json_t *paths)
{
	char hex[GIT_OID_HEXSZ + 1], parent[GIT_OID_HEXSZ + 1];
	const char *summary = git_commit_summary(commit);
	json_int_t review = review_of(commit);

	git_oid_tostr(hex, sizeof(hex), git_commit_id(commit));
	git_oid_tostr(parent, sizeof(parent), git_commit_parent_id(commit, 0));
	return json_pack("{s:s, s:s, s:s, s:o, s:o}", "commit", hex,
	    "parent", parent, "summary", summary ? summary : "", "paths", paths,
	    "review", review > 0 ? json_integer(review) : json_null());
}

struct werr *
triage_commit_suspects(json_t **out, struct triage_ctx *c, const char *engine)
{
	json_t *e = json_object_get(c->engines, engine), *list = json_array();
	const char *good = json_string_value(json_object_get(e, "good_commit"));
	const char *bad = json_string_value(json_object_get(e, "commit"));
	git_repository *repo = c->o->repo;
	git_revwalk *walk = NULL;
	git_commit *commit = NULL;
	git_oid g, b, id;
	struct werr *err = NULL;
	json_t *paths;

	*out = list;
	if (good == NULL || bad == NULL || strcmp(good, bad) == 0 ||
	    git_oid_fromstr(&g, good) < 0 || git_oid_fromstr(&b, bad) < 0)
		return NULL;
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL |
	    GIT_SORT_REVERSE) < 0 ||
	    git_revwalk_simplify_first_parent(walk) < 0 ||
	    git_revwalk_push(walk, &b) < 0 || git_revwalk_hide(walk, &g) < 0) {
		/* a commit no longer in the repository: nothing to search */
		git_revwalk_free(walk);
		return NULL;
	}
	while (err == NULL && git_revwalk_next(&id, walk) == 0) {
		if (git_commit_lookup(&commit, repo, &id) < 0) {
			err = werr_git("cannot read commit %s",
			    git_oid_tostr_s(&id));
			break;
		}
		if ((err = commit_paths(&paths, repo, commit, engine)) == NULL) {
			if (json_array_size(paths) > 0)
				json_array_append_new(list, commit_json(commit,
				    paths));
			else
				json_decref(paths);
		}
		git_commit_free(commit);
		commit = NULL;
	}
	git_revwalk_free(walk);
	return err;
}

/* ---- the search ---- */

struct search {
	struct triage_ctx *c;
	const char *engine;
	const json_t *commits;
	const json_t *base;		/* the failing manifest */
	const json_t *cells;
	json_t *smoke;			/* [id] */
	size_t runs;
};

/* The commit whose tree state j is (see the top of this file). */
static const char *
state_commit(const struct search *s, size_t j)
{
	const json_t *x = json_array_get(s->commits, j == 0 ? 0 : j - 1);

	return json_string_value(json_object_get(x, j == 0 ? "parent" :
	    "commit"));
}

/* Smoke state j: *verdict "pass", "fail" or "build_failed". */
static struct werr *
test_state(const char **verdict, struct search *s, size_t j,
    const char *purpose, size_t max)
{
	struct triage_smoke_req r;
	struct triage_smoke_res res;
	struct werr *err;
	json_t *pins = json_object(), *id;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.engine = s->engine;
	r.base = s->base;
	r.pins = pins;
	r.cells = s->cells;
	r.purpose = purpose;
	r.tree_commit = state_commit(s, j);
	r.k = s->runs + 1;
	r.max = max;
	err = triage_smoke(&res, s->c, &r);
	json_decref(pins);
	if (err != NULL)
		return err;
	if (!res.cached)
		s->runs++;
	json_array_foreach(s->smoke, i, id)
		if (json_integer_value(id) == res.id)
			break;
	if (i == json_array_size(s->smoke))
		json_array_append_new(s->smoke, json_integer(res.id));
	*verdict = res.verdict;
	return NULL;
}

/* ceil(log2(n)) + 2: state 0, the halving, the confirmation. */
static size_t
bound(size_t n)
{
	size_t b = 2, k = 1;

	while (k < n) {
		k *= 2;
		b++;
	}
	return b;
}

static void
set_kind(json_t *res, const char *kind, const char *why)
{
	json_object_set_new(res, "kind", json_string(kind));
	if (why != NULL)
		json_object_set_new(res, "why", json_string(why));
}

struct werr *
triage_commit_search(json_t **out, struct triage_ctx *c, const char *engine,
    const json_t *commits)
{
	json_t *e = json_object_get(c->engines, engine), *res;
	size_t n = json_array_size(commits), lo = 0, hi = n, mid;
	size_t max = bound(n) < c->budget ? bound(n) : c->budget;
	struct werr *err = NULL;
	struct search s;
	const char *v = NULL;
	char *why;

	memset(&s, 0, sizeof(s));
	s.c = c;
	s.engine = engine;
	s.commits = commits;
	s.base = json_object_get(e, "manifest");
	s.cells = json_object_get(e, "failing_cells");
	res = json_pack("{s:s, s:I, s:I, s:[], s:[]}", "kind", "unexplained",
	    "changes", (json_int_t)n, "bound", (json_int_t)bound(n),
	    "culprits", "smoke");
	s.smoke = json_object_get(res, "smoke");
	*out = res;
	if (n == 0)
		return NULL;
	triage_progress(c, "search", engine, 0, 0, "%s: %zu commit%s on "
	    "official since %s change%s what it runs with; at most %zu smoke "
	    "runs to find the one that broke it", engine, n, n == 1 ? "" : "s",
	    json_string_value(json_object_get(e, "good_cycle")),
	    n == 1 ? "s" : "", max);
	/* state 0: before the first commit, it must pass */
	if ((err = test_state(&v, &s, 0, "before the first commit", max))
	    != NULL)
		goto out;
	if (strcmp(v, "pass") != 0) {
		why = xasprintf("it %s at %.7s, before the first of these "
		    "commits, too: they do not explain it", strcmp(v, "fail")
		    == 0 ? "fails" : "does not build", state_commit(&s, 0));
		set_kind(res, strcmp(v, "fail") == 0 ? "unexplained" :
		    "unresolved", why);
		free(why);
		goto out;
	}
	while (hi - lo > 1) {
		if (s.runs >= c->budget) {
			set_kind(res, "budget", "the smoke run budget ran out "
			    "(triage.budget, --budget)");
			goto out;
		}
		mid = lo + (hi - lo) / 2;
		if ((err = test_state(&v, &s, mid, "a halving step", max))
		    != NULL)
			goto out;
		if (strcmp(v, "pass") == 0)
			lo = mid;
		else if (strcmp(v, "fail") == 0)
			hi = mid;
		else {
			why = xasprintf("%.7s does not build in a scratch "
			    "environment", state_commit(&s, mid));
			set_kind(res, "unresolved", why);
			free(why);
			goto out;
		}
	}
	/* the culprit's own state, when the halving did not run it (hi = n:
	 * only the cycle's campaign saw it fail) */
	if (hi == n) {
		if ((err = test_state(&v, &s, hi, "the culprit alone", max))
		    != NULL)
			goto out;
		if (strcmp(v, "fail") != 0) {
			why = xasprintf("it %s at %.7s, the newest of these "
			    "commits, in a smoke run: the cycle's failure does "
			    "not reproduce", strcmp(v, "pass") == 0 ? "passes" :
			    "does not build", state_commit(&s, hi));
			set_kind(res, strcmp(v, "pass") == 0 ? "unconfirmed" :
			    "unresolved", why);
			free(why);
			goto out;
		}
	}
	json_array_append(json_object_get(res, "culprits"),
	    json_array_get(commits, hi - 1));
	set_kind(res, "commit", NULL);
out:
	json_object_set_new(res, "runs", json_integer((json_int_t)s.runs));
	triage_smoke_cleanup(c, engine);
	if (err != NULL) {
		json_decref(res);
		*out = NULL;
	}
	return err;
}
