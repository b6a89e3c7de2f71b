/*
 * lift.c - a fixed incident's question reopened by a new release: when
 * the culprit of a fixed dependency incident has a release newer than
 * the one that broke (what `warden update` would install once the pin
 * is gone, policy holds and release age included), the incident is
 * reopened, the release is smoke-tested in every affected engine from
 * its current environment, and lifting the pin is proposed when it
 * passes everywhere; otherwise the incident is fixed again, the pin
 * staying. A release is tried once. See triage-private.h. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "manifest.h"
#include "store-triage.h"
#include "store-update.h"
#include "triage-private.h"
#include "update.h"
#include "util.h"
#include "version.h"

/* Drop every pin of package from the adapter (its own pin too). */
static void
unpin(struct adapter *a, const char *package)
{
	char *own = a->source.package != NULL ?
	    manifest_package_name(a->source.package) : NULL;
	const char *eq;
	char *raw, *name;
	size_t i, k = 0;

	if (own != NULL && strcmp(own, package) == 0) {
		free(a->source.pin);
		a->source.pin = NULL;
	}
	free(own);
	for (i = 0; i < a->source.pins.n; i++) {
		eq = strstr(a->source.pins.v[i], "==");
		raw = xstrndup(a->source.pins.v[i], eq ? (size_t)(eq -
		    a->source.pins.v[i]) : strlen(a->source.pins.v[i]));
		name = manifest_package_name(raw);
		free(raw);
		if (strcmp(name, package) == 0)
			free(a->source.pins.v[i]);
		else
			a->source.pins.v[k++] = a->source.pins.v[i];
		free(name);
	}
	a->source.pins.n = k;
	a->source.pins.v[k] = NULL;
}

/*
 * The version of package engine would move to without the pin (a dry
 * run: nothing changes), or NULL when that cannot be said.
 */
static char *
newest(struct triage_ctx *c, const char *engine, const char *package)
{
	struct update_build_result res;
	struct update_build b;
	struct update_ctx uc;
	struct adapter *a = NULL;
	struct werr *err;
	json_t *current = NULL;
	char *dir = NULL, *log_dir, *log_path, *v = NULL;
	const char *got;

	log_dir = xasprintf("%s/.warden/logs/triage/%lld", c->o->repo_root,
	    (long long)c->run_id);
	log_path = xasprintf("%s/%s.log", log_dir, engine);
	memset(&res, 0, sizeof(res));
	if ((err = mkdir_p(log_dir)) != NULL ||
	    (err = adapter_load_named(&a, c->o->repo_root, engine)) != NULL ||
	    (err = store_update_current(c->o->store, engine, &current)) != NULL)
		goto out;
	if (a->source.kind != SOURCE_PIP && a->source.kind != SOURCE_GIT)
		goto out;
	unpin(a, package);
	dir = update_env_dir(c->o->repo_root, engine);
	memset(&uc, 0, sizeof(uc));
	uc.repo_root = c->o->repo_root;
	uc.policy = c->o->policy;
	uc.dry_run = 1;
	memset(&b, 0, sizeof(b));
	b.adapter = a;
	b.env_dir = dir;
	b.current = current;
	b.log_path = log_path;
	b.k = b.n = 1;
	if ((err = update_env_build(&res, &uc, &b)) == NULL &&
	    (got = manifest_package_version(res.manifest, package)) != NULL)
		v = xstrdup(got);
out:
	werr_free(err);	/* no answer: nothing to try this time */
	update_build_result_free(&res);
	adapter_free(a);
	json_decref(current);
	free(dir);
	free(log_dir);
	free(log_path);
	return v;
}

/* Smoke the release in every engine: "pass" when it passes in all. */
static struct werr *
try_release(json_t *tried, struct triage_ctx *c, const json_t *rec,
    const char *package, const char *version)
{
	json_t *engines = json_object_get(rec, "engines"), *e, *base, *pins;
	json_t *smoke = json_array(), *failed = json_array();
	struct triage_smoke_req r;
	struct triage_smoke_res res;
	struct werr *err = NULL;
	const char *engine;
	size_t i;

	json_array_foreach(engines, i, e) {
		engine = json_string_value(e);
		base = NULL;
		if ((err = store_update_current(c->o->store, engine, &base))
		    != NULL)
			break;
		pins = json_pack("{s:s}", package, version);
		memset(&r, 0, sizeof(r));
		r.engine = engine;
		r.base = base;
		r.pins = pins;
		r.cells = json_object_get(json_object_get(json_object_get(rec,
		    "per_engine"), engine), "failing_cells");
		r.purpose = "lift";
		r.k = 1;
		r.max = 1;
		err = base != NULL ? triage_smoke(&res, c, &r) : NULL;
		if (base == NULL) {
			res.verdict = "build_failed";
			res.id = 0;
		}
		json_decref(pins);
		json_decref(base);
		triage_smoke_cleanup(c, engine);
		if (err != NULL)
			break;
		if (res.id > 0)
			json_array_append_new(smoke, json_integer(res.id));
		if (strcmp(res.verdict, "pass") != 0)
			json_array_append_new(failed, json_string(engine));
	}
	json_object_set_new(tried, version, json_pack("{s:s, s:o, s:o}",
	    "verdict", json_array_size(failed) == 0 ? "pass" : "fail",
	    "smoke", smoke, "failed", failed));
	return err;
}

/* One fixed incident: a newer release of its culprit? */
static struct werr *
lift_one(struct triage_ctx *c, const json_t *row)
{
	json_t *rec = json_deep_copy(json_object_get(row, "record"));
	json_t *culprit = json_array_get(json_object_get(rec, "culprits"), 0);
	json_t *lift, *tried, *t, *pins, *v, *gate = NULL;
	const char *pkg = json_string_value(json_object_get(culprit, "package"));
	const char *bad = json_string_value(json_object_get(culprit, "to"));
	int64_t id = json_integer_value(json_object_get(row, "id")), review = 0;
	struct store_incident_save sv;
	struct werr *err = NULL;
	char *ver = NULL, *reason = NULL, *note = NULL;
	size_t i;

	if (pkg == NULL || bad == NULL)
		goto out;
	json_array_foreach(json_object_get(rec, "engines"), i, v)
		if ((ver = newest(c, json_string_value(v), pkg)) != NULL)
			break;
	if ((lift = json_object_get(rec, "lift")) == NULL) {
		lift = json_pack("{s:{}}", "tried");
		json_object_set_new(rec, "lift", lift);
	}
	tried = json_object_get(lift, "tried");
	if (ver == NULL || version_compare(ver, bad) <= 0 ||
	    json_object_get(tried, ver) != NULL)
		goto out;
	reason = xasprintf("%s %s was released after %s broke it: trying it",
	    pkg, ver, bad);
	triage_progress(c, "lift", NULL, 0, 0, "incident %lld: %s", (long long)id,
	    reason);
	if ((err = store_triage_incident_save(c->o->store, &(struct
	    store_incident_save){ .id = id, .state = "investigating",
	    .expect_state = "fixed", .who = TRIAGE_WHO, .reason = reason },
	    NULL)) != NULL)
		goto out;
	triage_report_incident(c, "reopened", id);
	free(reason);
	reason = NULL;
	if ((err = try_release(tried, c, rec, pkg, ver)) != NULL)
		goto out;
	t = json_object_get(tried, ver);
	json_object_set_new(lift, "version", json_string(ver));
	memset(&sv, 0, sizeof(sv));
	sv.id = id;
	sv.record = rec;
	sv.who = TRIAGE_WHO;
	if (strcmp(json_string_value(json_object_get(t, "verdict")), "pass") == 0) {
		pins = json_object();
		json_array_foreach(json_object_get(rec, "engines"), i, v)
			json_object_set_new(pins, json_string_value(v),
			    json_pack("{s:n}", pkg));
		note = xasprintf("triage: incident %lld: lift the pin of %s "
		    "(%s passes)", (long long)id, pkg, ver);
		err = triage_propose(&review, &gate, c, pins, note);
		json_decref(pins);
		if (err == NULL && review > 0)
			err = triage_attach_smoke(c, review, id, rec);
		if (err != NULL)
			goto out;
		json_object_set_new(lift, "review", review > 0 ?
		    json_integer(review) : json_null());
		json_object_set_new(lift, "gate", gate != NULL ? gate :
		    json_null());
		gate = NULL;
		json_object_set_new(lift, "state", json_string(review > 0 ?
		    "proposed" : "refused"));
		if (review > 0) {
			json_array_append_new(json_object_get(c->report,
			    "reviews"), json_integer(review));
			reason = xasprintf("%s %s passes in every engine: review "
			    "%lld proposes lifting the pin", pkg, ver,
			    (long long)review);
		} else {
			sv.state = "fixed";
			reason = xasprintf("%s %s passes, but lifting the pin "
			    "was not queued (the gate refused it, or the pin is "
			    "already gone)", pkg, ver);
		}
	} else {
		json_object_set_new(lift, "state", json_string("kept"));
		sv.state = "fixed";
		reason = xasprintf("%s %s still breaks %s: the pin stays", pkg,
		    ver, json_string_value(json_array_get(json_object_get(t,
		    "failed"), 0)));
	}
	sv.reason = reason;
	sv.journal_kind = "incident.updated";
	if ((err = store_triage_incident_save(c->o->store, &sv, NULL)) == NULL &&
	    sv.state != NULL)
		triage_report_incident(c, "fixed", id);
out:
	json_decref(rec);
	json_decref(gate);
	free(ver);
	free(reason);
	free(note);
	return err;
}

struct werr *
triage_lift(struct triage_ctx *c)
{
	json_t *fixed = NULL, *row;
	struct werr *err;
	size_t i;

	if ((err = store_triage_incidents(c->o->store, "fixed", &fixed)) != NULL)
		return err;
	json_array_foreach(fixed, i, row) {
		const char *kind = json_string_value(json_object_get(row, "kind"));
		const char *ls = json_string_value(json_object_get(
		    json_object_get(json_object_get(row, "record"), "lift"),
		    "state"));

		if (strcmp(kind, "dependency") != 0 ||
		    (ls != NULL && strcmp(ls, "lifted") == 0))
			continue;
		if ((err = lift_one(c, row)) != NULL)
			break;
	}
	json_decref(fixed);
	return err;
}
