/*
 * culprit.c - what broke one engine: its changes, most suspicious first
 * (suspects.c), searched (search.c) with smoke runs in a scratch
 * environment (smoke.c) as the oracle. See triage-private.h
 * (triage_culprit). Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "search.h"
#include "suspects.h"
#include "triage-private.h"
#include "util.h"

struct oracle {
	struct triage_ctx *c;
	const char *engine;
	const json_t *base;		/* the broken manifest */
	const json_t *cells;
	const json_t *changes;		/* the bisectable suspects, in order */
	json_t *smoke;			/* [id] of the runs made or reused */
};

static struct werr *
oracle_test(void *arg, const unsigned char *pinned, size_t n,
    enum search_purpose purpose, size_t k, size_t max,
    enum search_verdict *out)
{
	struct oracle *o = arg;
	struct triage_smoke_req r;
	struct triage_smoke_res res;
	json_t *pins = json_object(), *s, *id;
	struct werr *err;
	size_t i;

	for (i = 0; i < n; i++)
		if (pinned[i]) {
			s = json_array_get(o->changes, i);
			json_object_set(pins, json_string_value(json_object_get(s,
			    "package")), json_object_get(s, "from"));
		}
	memset(&r, 0, sizeof(r));
	r.engine = o->engine;
	r.base = o->base;
	r.pins = pins;
	r.cells = o->cells;
	r.purpose = search_purpose_name(purpose);
	r.k = k;
	r.max = max;
	err = triage_smoke(&res, o->c, &r);
	json_decref(pins);
	if (err != NULL)
		return err;
	json_array_foreach(o->smoke, i, id)
		if (json_integer_value(id) == res.id)
			break;
	if (i == json_array_size(o->smoke))
		json_array_append_new(o->smoke, json_integer(res.id));
	*out = strcmp(res.verdict, "pass") == 0 ? SEARCH_PASS :
	    strcmp(res.verdict, "fail") == 0 ? SEARCH_FAIL : SEARCH_UNRESOLVED;
	return NULL;
}

/* Why an engine of this source kind cannot be rebuilt in a scratch
 * directory, or NULL when it can. */
static const char *
not_rebuildable(const struct triage_ctx *c, const char *engine)
{
	struct adapter *a = NULL;
	struct werr *err;
	const char *why = NULL;

	if ((err = adapter_load_named(&a, c->o->repo_root, engine)) != NULL) {
		werr_free(err);
		return "its adapter does not load";
	}
	if (a->source.kind == SOURCE_BREW)
		why = "brew installs globally: there is no scratch environment "
		    "to pin back in";
	else if (a->source.kind == SOURCE_NONE)
		why = "a program on PATH: warden cannot install another version";
	adapter_free(a);
	return why;
}

static json_t *
culprit_list(const json_t *changes, const unsigned char *flags)
{
	json_t *list = json_array(), *s;
	size_t i;

	json_array_foreach((json_t *)changes, i, s)
		if (flags[i])
			json_array_append_new(list, json_pack("{s:O, s:O, s:O, s:O}",
			    "package", json_object_get(s, "package"),
			    "from", json_object_get(s, "from"),
			    "to", json_object_get(s, "to"),
			    "own", json_object_get(s, "own")));
	return list;
}

struct werr *
triage_culprit(json_t **out, struct triage_ctx *c, const char *engine,
    const json_t *suspects)
{
	json_t *e = json_object_get(c->engines, engine);
	json_t *changes = json_array(), *skipped = json_array(), *s, *res;
	struct search_oracle so;
	struct search_result sr;
	struct oracle o;
	struct werr *err;
	const char *why, *kind;
	size_t i, n;

	json_array_foreach((json_t *)suspects, i, s)
		json_array_append(json_is_true(json_object_get(s, "bisectable")) ?
		    changes : skipped, s);
	n = json_array_size(changes);
	res = json_pack("{s:I, s:I, s:O, s:[], s:[]}", "changes", (json_int_t)n,
	    "bound", (json_int_t)search_bound(n), "not_bisected", skipped,
	    "culprits", "smoke");
	if (json_array_size(suspects) == 0) {
		json_object_set_new(res, "kind", json_string("no_change"));
		json_object_set_new(res, "why", json_string("its version "
		    "manifest is the same as in its healthy cycle: not a "
		    "version change"));
		goto done;
	}
	if ((why = not_rebuildable(c, engine)) != NULL || n == 0) {
		json_object_set_new(res, "kind", json_string(
		    suspects_own_release_only(suspects) ?
		    "own_release_unconfirmed" : "not_bisectable"));
		json_object_set_new(res, "why", json_string(why != NULL ? why :
		    "only added or removed packages changed: nothing to pin "
		    "back"));
		if (suspects_own_release_only(suspects)) {
			unsigned char one = 1;

			json_object_set_new(res, "culprits", culprit_list(
			    suspects, &one));
		}
		goto done;
	}
	memset(&o, 0, sizeof(o));
	o.c = c;
	o.engine = engine;
	o.base = json_object_get(e, "manifest");
	o.cells = json_object_get(e, "failing_cells");
	o.changes = changes;
	o.smoke = json_object_get(res, "smoke");
	so.test = oracle_test;
	so.arg = &o;
	triage_progress(c, "search", engine, 0, 0, "%s: %zu changed package%s "
	    "since %s; at most %zu smoke runs to find one culprit", engine, n,
	    n == 1 ? "" : "s", json_string_value(json_object_get(e,
	    "good_cycle")), search_bound(n));
	err = search_run(&sr, n, c->budget, &so);
	triage_smoke_cleanup(c, engine);
	if (err != NULL) {
		search_result_free(&sr);
		json_decref(res);
		json_decref(changes);
		json_decref(skipped);
		return err;
	}
	kind = search_kind_name(sr.kind);
	json_object_set_new(res, "culprits", culprit_list(changes, sr.culprits));
	if (sr.kind == SEARCH_SINGLE && json_is_true(json_object_get(
	    json_array_get(json_object_get(res, "culprits"), 0), "own")))
		kind = "own_release";
	json_object_set_new(res, "kind", json_string(kind));
	json_object_set_new(res, "runs", json_integer((json_int_t)sr.runs));
	json_object_set_new(res, "bisect_runs",
	    json_integer((json_int_t)sr.bisect_runs));
	json_object_set_new(res, "ddmin", json_boolean(sr.used_ddmin));
	if (sr.kind == SEARCH_UNEXPLAINED)
		json_object_set_new(res, "why", json_string("pinning back every "
		    "changed package does not make it healthy"));
	else if (sr.kind == SEARCH_UNCONFIRMED)
		json_object_set_new(res, "why", json_string("pinning back the "
		    "smallest failing set of changes does not make it healthy"));
	else if (sr.kind == SEARCH_BUDGET)
		json_object_set_new(res, "why", json_string("the smoke run "
		    "budget ran out (triage.budget, --budget)"));
	search_result_free(&sr);
done:
	json_decref(changes);
	json_decref(skipped);
	*out = res;
	return NULL;
}
