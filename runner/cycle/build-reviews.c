/*
 * build-reviews.c - what the cycle journal says of the review queue: the
 * agent's tasks with their review's status, the reviews approved since the
 * previous cycle began (with the incidents that blame them and the kinds
 * of evidence each carries) and every review still waiting. build.c calls
 * these; the fields are warden-cycle(1)'s "The cycle journal".
 *
 * Reads only.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cycle-private.h"
#include "jsonget.h"
#include "review.h"
#include "review-smoke.h"
#include "store-review.h"
#include "store-cycle.h"
#include "triage/store-triage.h"

/* The agent's tasks with their review's status. */
struct werr *
cycle_agent_tasks(json_t **out, struct cyc *c)
{
	json_t *tasks = NULL, *t, *rv;
	struct werr *err;
	size_t i;

	if ((err = store_cycle_agent_tasks(c->store, c->id, &tasks)) != NULL)
		return err;
	json_array_foreach(tasks, i, t) {
		if (jsonget_int(t, "review") <= 0)
			continue;
		if ((err = review_show(&rv, c->store,
		    jsonget_int(t, "review"))) != NULL)
			break;
		json_object_set(t, "review_status", json_object_get(rv,
		    "status"));
		json_object_set(t, "review_note", json_object_get(rv, "note"));
		json_decref(rv);
	}
	*out = tasks;
	return err;
}

/*
 * The incidents that blame review id (kind "change", its commit the
 * culprit): a new array of {"incident", "state", "engines", "revert"
 * (the review of its revert, or null)}, empty when none does.
 */
static json_t *
blamed_by(const json_t *incidents, json_int_t id)
{
	json_t *out = json_array(), *inc, *rec, *x, *p;
	size_t i;

	json_array_foreach((json_t *)incidents, i, inc) {
		rec = json_object_get(inc, "record");
		x = json_array_get(json_object_get(rec, "culprits"), 0);
		if (strcmp(jsonget_str(inc, "kind"), "change") != 0 ||
		    jsonget_int(x, "review") != id)
			continue;
		p = json_array_get(json_object_get(rec, "proposals"), 0);
		json_array_append_new(out, json_pack("{s:O, s:O, s:O, s:O}",
		    "incident", json_object_get(inc, "id"), "state",
		    json_object_get(inc, "state"), "engines",
		    json_object_get(rec, "engines"), "revert",
		    json_is_integer(json_object_get(p, "review")) ?
		    json_object_get(p, "review") : json_null()));
	}
	return out;
}

/* The kinds of evidence review id carries ("smoke", "triage-smoke",
 * "agent-run"; not a submitter's promise), each once, as a new array;
 * *effect: its smoke's measured effect (review_smoke_effect()). */
static struct werr *
evidence_kinds(json_t **out, json_t **effect, struct store *store,
    int64_t id)
{
	json_t *ev = NULL, *x, *k;
	const char *kind;
	struct werr *err;
	size_t i, j;
	int seen;

	*out = json_array();
	*effect = NULL;
	if ((err = store_review_evidence(store, id, &ev)) != NULL)
		return err;
	*effect = review_smoke_effect(ev);
	json_array_foreach(ev, i, x) {
		kind = jsonget_str(x, "kind");
		seen = strcmp(kind, "expects") == 0;
		json_array_foreach(*out, j, k)
			if (strcmp(json_string_value(k), kind) == 0)
				seen = 1;
		if (!seen)
			json_array_append_new(*out, json_string(kind));
	}
	json_decref(ev);
	return NULL;
}

/* Reviews approved since the previous cycle began (fixes that landed,
 * or changes an incident blames), and every review waiting. */
struct werr *
cycle_reviews(json_t *journal, json_t *summary, struct store *store,
    const char *since)
{
	json_t *approved = NULL, *pending = NULL, *landed = json_array(), *r;
	json_t *incidents = NULL, *blame, *kinds, *effect;
	struct werr *err;
	size_t i;

	if ((err = review_list(&approved, store, "approved")) != NULL ||
	    (err = review_list(&pending, store, "pending")) != NULL ||
	    (err = store_triage_incidents(store, NULL, &incidents)) != NULL)
		goto out;
	json_array_foreach(approved, i, r) {
		if (since != NULL && strcmp(jsonget_str(r, "decided"),
		    since) < 0)
			continue;
		blame = blamed_by(incidents, jsonget_int(r, "id"));
		if ((err = evidence_kinds(&kinds, &effect, store,
		    jsonget_int(r, "id"))) != NULL) {
			json_decref(blame);
			goto out;
		}
		json_array_append_new(landed, json_pack("{s:O, s:O?, s:O?, "
		    "s:O?, s:O?, s:O?, s:o, s:o, s:o}", "id", json_object_get(r,
		    "id"),
		    "source", json_object_get(r, "source"), "note",
		    json_object_get(r, "note"), "decided", json_object_get(r,
		    "decided"), "decided_by", json_object_get(r, "decided_by"),
		    "merged_commit", json_object_get(r, "merged_commit"),
		    "blamed_by", blame, "evidence", kinds, "effect", effect));
	}
	json_object_set(journal, "approved", landed);
	json_object_set_new(summary, "reviews_waiting", json_array());
	json_array_foreach(pending, i, r)
		json_array_append_new(json_object_get(summary,
		    "reviews_waiting"), json_pack("{s:O, s:O?, s:O?, s:O?}",
		    "id", json_object_get(r, "id"), "source",
		    json_object_get(r, "source"), "author", json_object_get(r,
		    "author"), "note", json_object_get(r, "note")));
out:
	json_decref(approved);
	json_decref(pending);
	json_decref(incidents);
	json_decref(landed);
	return err;
}
