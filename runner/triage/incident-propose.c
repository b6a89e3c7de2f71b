/*
 * incident-propose.c - what triage proposes for a confirmed incident:
 * the pins of its culprit packages in each engine's adapter, or the
 * revert of the commit that broke them (proposal.c makes the patch and
 * queues it through the gate), recorded in the incident with the review
 * and the gate's answer; the smoke runs that confirmed it attached to
 * the review as evidence. See triage-private.h
 * (triage_incident_propose_missing). Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "regress/regress.h"
#include "review.h"
#include "store-review.h"
#include "store-triage.h"
#include "triage-private.h"
#include "util.h"

/* The run ids of the smoke runs whose outcome is outcome, a new array. */
static json_t *
runs_of(const json_t *smoke, const char *outcome)
{
	json_t *ids = json_array(), *s;
	size_t i;

	json_array_foreach((json_t *)smoke, i, s)
		if (json_is_string(json_object_get(s, "run_id")) &&
		    json_is_string(json_object_get(s, "outcome")) &&
		    strcmp(json_string_value(json_object_get(s, "outcome")),
		    outcome) == 0)
			json_array_append(ids, json_object_get(s, "run_id"));
	return ids;
}

/* The speed of the proposal: the smoke runs that failed (the culprit in)
 * against those that passed (it out), by the regressions rule
 * (regress_compare()); {"error"} when it cannot be read. */
static json_t *
smoke_speed(struct triage_ctx *c, const json_t *smoke)
{
	json_t *before = runs_of(smoke, "fail"), *after = runs_of(smoke,
	    "pass"), *speed = NULL;
	struct werr *err;

	if ((err = regress_compare(&speed, c->o->store, c->o->policy, before,
	    after)) != NULL) {
		speed = json_pack("{s:s}", "error", err->msg);
		werr_free(err);
	}
	json_object_set_new(speed, "before_is", json_string("the smoke runs "
	    "that failed"));
	json_object_set_new(speed, "after_is", json_string("the smoke runs "
	    "that passed"));
	json_decref(before);
	json_decref(after);
	return speed;
}

struct werr *
triage_attach_smoke(struct triage_ctx *c, int64_t review, int64_t id,
    const json_t *rec)
{
	json_t *have = NULL, *smoke = NULL, *body = NULL, *x;
	struct werr *err;
	size_t i;

	if ((err = store_review_evidence(c->o->store, review, &have)) != NULL)
		return err;
	json_array_foreach(have, i, x)
		if (strcmp(json_string_value(json_object_get(x, "kind")) ?
		    json_string_value(json_object_get(x, "kind")) : "",
		    "triage-smoke") == 0)
			goto out;
	if ((err = triage_record_smoke(&smoke, c->o->store, rec)) != NULL)
		goto out;
	body = json_pack("{s:I, s:O?, s:O, s:o}", "incident", (json_int_t)id,
	    "culprits", json_object_get(rec, "culprits"), "smoke", smoke,
	    "speed", smoke_speed(c, smoke));
	err = review_add_evidence(c->o->store, review, "triage-smoke", body);
out:
	json_decref(body);
	json_decref(have);
	json_decref(smoke);
	return err;
}

/* Record a proposal in the incident (and its review in the report). */
static struct werr *
record_proposal(struct triage_ctx *c, int64_t id, json_t *rec,
    json_t *proposal, int64_t review, const char *reason)
{
	struct store_incident_save sv;
	json_t *props = json_object_get(rec, "proposals");

	if (props == NULL) {
		props = json_array();
		json_object_set_new(rec, "proposals", props);
	}
	json_array_append_new(props, proposal);
	if (review > 0)
		json_array_append_new(json_object_get(c->report, "reviews"),
		    json_integer(review));
	memset(&sv, 0, sizeof(sv));
	sv.id = id;
	sv.record = rec;
	sv.reason = reason;
	sv.journal_kind = "incident.updated";
	return store_triage_incident_save(c->o->store, &sv, NULL);
}

/*
 * A change incident: propose reverting the commit, for its engines (a
 * commit that breaks several engines is one revert). The proposal names
 * each engine with no pins, so it counts as proposed for them.
 */
static struct werr *
propose_revert(struct triage_ctx *c, int64_t id, json_t *rec,
    const json_t *engines)
{
	const json_t *x = json_array_get(json_object_get(rec, "culprits"), 0);
	const char *commit = json_string_value(json_object_get(x, "commit"));
	json_t *gate = NULL, *pins = json_object(), *e;
	struct buf note = BUF_INIT;
	struct werr *err;
	int64_t review = 0;
	char *who = triage_engine_names(engines), *reason;
	size_t i;

	json_array_foreach((json_t *)engines, i, e)
		json_object_set_new(pins, json_string_value(e), json_object());
	buf_printf(&note, "triage: incident %lld: revert %.7s", (long long)id,
	    commit);
	if (json_integer_value(json_object_get(x, "review")) > 0)
		buf_printf(&note, " (review %lld)", (long long)
		    json_integer_value(json_object_get(x, "review")));
	buf_printf(&note, ", which broke %s", who);
	triage_progress(c, "propose", NULL, 0, 0, "incident %lld: proposing "
	    "the revert of %.7s", (long long)id, commit);
	if ((err = triage_propose_revert(&review, &gate, c, commit,
	    buf_cstr(&note))) != NULL ||
	    (review > 0 && (err = triage_attach_smoke(c, review, id, rec)) != NULL))
		goto out;
	reason = review > 0 ? xasprintf("revert of %.7s proposed in review "
	    "%lld", commit, (long long)review) : xasprintf("revert of %.7s not "
	    "queued: %s", commit, json_string_value(json_object_get(gate,
	    "why")) ? json_string_value(json_object_get(gate, "why")) :
	    "the gate refused it");
	err = record_proposal(c, id, rec, json_pack("{s:s, s:s, s:O, s:o, "
	    "s:o}", "note", buf_cstr(&note), "revert", commit, "pins", pins,
	    "review", review > 0 ? json_integer(review) : json_null(), "gate",
	    gate ? gate : json_null()), review, reason);
	gate = NULL;
	free(reason);
out:
	json_decref(gate);
	json_decref(pins);
	buf_free(&note);
	free(who);
	return err;
}

/* Propose the pins of a confirmed incident for engines (all of its
 * engines, or those just added), and record the proposal. */
static struct werr *
propose(struct triage_ctx *c, int64_t id, json_t *rec, const json_t *engines)
{
	json_t *pins, *x, *gate = NULL, *e, *edits;
	const char *pkg, *from;
	struct buf note = BUF_INIT;
	struct werr *err;
	int64_t review = 0;
	size_t i, k;
	char *who, *reason;

	if (strcmp(json_string_value(json_object_get(rec, "kind")), "change")
	    == 0)
		return propose_revert(c, id, rec, engines);
	pins = json_object();
	who = triage_engine_names(engines);
	buf_printf(&note, "triage: incident %lld: pin", (long long)id);
	json_array_foreach(json_object_get(rec, "culprits"), k, x) {
		pkg = json_string_value(json_object_get(x, "package"));
		json_array_foreach((json_t *)engines, i, e) {
			from = json_string_value(json_object_get(json_object_get(
			    json_object_get(json_object_get(rec, "per_engine"),
			    json_string_value(e)), "from"), pkg));
			if (from == NULL)
				from = json_string_value(json_object_get(x, "from"));
			if ((edits = json_object_get(pins, json_string_value(e)))
			    == NULL) {
				edits = json_object();
				json_object_set_new(pins, json_string_value(e),
				    edits);
			}
			json_object_set_new(edits, pkg, json_pack("s++", pkg, "==",
			    from));
		}
		buf_printf(&note, "%s %s==%s", k ? "," : "", pkg,
		    json_string_value(json_object_get(x, "from")));
	}
	buf_printf(&note, " in %s", who);
	triage_progress(c, "propose", NULL, 0, 0, "incident %lld: proposing "
	    "the pin in %s", (long long)id, who);
	if ((err = triage_propose(&review, &gate, c, pins,
	    buf_cstr(&note))) != NULL ||
	    (review > 0 && (err = triage_attach_smoke(c, review, id, rec)) != NULL))
		goto out;
	reason = review > 0 ? xasprintf("pin proposed for %s in review %lld",
	    who, (long long)review) : xasprintf("pin for %s not queued: the "
	    "gate refused it or nothing was left to change", who);
	err = record_proposal(c, id, rec, json_pack("{s:s, s:O, s:o, s:o}",
	    "note", buf_cstr(&note), "pins", pins, "review", review > 0 ?
	    json_integer(review) : json_null(), "gate", gate ? gate :
	    json_null()), review, reason);
	gate = NULL;
	free(reason);
out:
	json_decref(pins);
	json_decref(gate);
	buf_free(&note);
	free(who);
	return err;
}

/* Is engine named in one of the record's proposals? */
static int
proposed(const json_t *rec, const char *engine)
{
	json_t *p;
	size_t i;

	json_array_foreach(json_object_get(rec, "proposals"), i, p)
		if (json_object_get(json_object_get(p, "pins"), engine) != NULL)
			return 1;
	return 0;
}

struct werr *
triage_incident_propose_missing(struct triage_ctx *c, int64_t id)
{
	json_t *inc = NULL, *rec, *missing = json_array(), *e;
	const char *state;
	struct werr *err;
	size_t i;

	if ((err = store_triage_incident_get(c->o->store, id, &inc)) != NULL ||
	    inc == NULL)
		goto out;
	state = json_string_value(json_object_get(inc, "state"));
	rec = json_object_get(inc, "record");
	if (strcmp(state, "confirmed") != 0 ||
	    json_array_size(json_object_get(rec, "culprits")) == 0)
		goto out;
	json_array_foreach(json_object_get(rec, "engines"), i, e)
		if (!proposed(rec, json_string_value(e)))
			json_array_append(missing, e);
	if (json_array_size(missing) > 0)
		err = propose(c, id, rec, missing);
out:
	json_decref(inc);
	json_decref(missing);
	return err;
}
