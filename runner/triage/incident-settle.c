/*
 * incident-settle.c - open incidents settled by what a cycle shows and by
 * maintainers' decisions: an incident whose engines are all healthy when
 * measured again (a later cycle, or a later campaign run of the cycle it
 * was opened in) becomes fixed (naming its pin's
 * review and status); a reopened incident whose lift of the pin a
 * maintainer approved or rejected becomes fixed again. wontfix incidents
 * are left alone. See triage-private.h (triage_incidents_settle). Never
 * prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "store-review.h"
#include "store-triage.h"
#include "triage-private.h"
#include "util.h"

/* A proposal's review status, or NULL; caller frees. */
static struct werr *
review_status(char **status, struct store *store, const json_t *review)
{
	struct store_review r;
	struct werr *err;
	int found = 0;

	*status = NULL;
	if (!json_is_integer(review))
		return NULL;
	memset(&r, 0, sizeof(r));
	if ((err = store_review_get(store, json_integer_value(review), &found,
	    &r)) == NULL && found && r.status != NULL)
		*status = xstrdup(r.status);
	store_review_free(&r);
	return err;
}

static struct werr *
set_state(struct triage_ctx *c, int64_t id, const char *from, const char *to,
    const json_t *rec, const char *reason)
{
	struct store_incident_save sv;

	memset(&sv, 0, sizeof(sv));
	sv.id = id;
	sv.state = to;
	sv.expect_state = from;
	sv.record = rec;
	sv.who = TRIAGE_WHO;
	sv.reason = reason;
	return store_triage_incident_save(c->o->store, &sv, NULL);
}

/* A lift proposal decided by a maintainer settles a reopened incident. */
static struct werr *
settle_lift(struct triage_ctx *c, const json_t *row, int *done)
{
	json_t *rec = json_deep_copy(json_object_get(row, "record"));
	json_t *lift = json_object_get(rec, "lift");
	int64_t id = json_integer_value(json_object_get(row, "id"));
	struct werr *err;
	char *status = NULL, *reason = NULL;

	*done = 0;
	if ((err = review_status(&status, c->o->store, json_object_get(lift,
	    "review"))) != NULL || status == NULL ||
	    strcmp(status, "pending") == 0)
		goto out;
	*done = 1;
	json_object_set_new(lift, "state", json_string(strcmp(status,
	    "approved") == 0 ? "lifted" : "rejected"));
	reason = strcmp(status, "approved") == 0 ? xasprintf("the pin was "
	    "lifted: review %lld approved", (long long)json_integer_value(
	    json_object_get(lift, "review"))) : xasprintf("lifting the pin "
	    "was rejected in review %lld: the pin stays",
	    (long long)json_integer_value(json_object_get(lift, "review")));
	if ((err = set_state(c, id, json_string_value(json_object_get(row,
	    "state")), "fixed", rec, reason)) == NULL)
		triage_report_incident(c, "fixed", id);
out:
	json_decref(rec);
	free(status);
	free(reason);
	return err;
}

/* Every engine of the record healthy in this cycle? */
static int
all_healthy(const struct triage_ctx *c, const json_t *rec)
{
	json_t *v;
	size_t i;

	if (json_array_size(json_object_get(rec, "engines")) == 0)
		return 0;
	json_array_foreach(json_object_get(rec, "engines"), i, v) {
		const char *st = json_string_value(json_object_get(
		    json_object_get(c->engines, json_string_value(v)), "status"));

		if (st == NULL || strcmp(st, "healthy") != 0)
			return 0;
	}
	return 1;
}

/*
 * Were the record's engines measured again after the incident was
 * opened? In a later cycle always; in the cycle it was opened in (the
 * cycle's second round, at the tip with its pin approved) when no cell
 * judged now comes from a campaign run the incident saw failing.
 */
static int
measured_again(const struct triage_ctx *c, const json_t *row)
{
	const json_t *rec = json_object_get(row, "record"), *pe, *fc, *cell;
	const char *engine, *key;
	size_t i;
	long ci = triage_cycle_index(c, c->cycle), oi = triage_cycle_index(c,
	    json_string_value(json_object_get(row, "cycle")));

	if (ci != oi)
		return ci > oi;
	json_object_foreach(json_object_get(rec, "per_engine"), engine, pe)
		json_array_foreach(json_object_get(pe, "failing_cells"), i, fc)
			json_object_foreach(json_object_get(json_object_get(
			    c->engines, engine), "cells"), key, cell)
				if (json_equal(json_object_get(cell, "run_id"),
				    json_object_get(fc, "run_id")))
					return 0;
	return 1;
}

struct werr *
triage_incidents_settle(struct triage_ctx *c)
{
	json_t *all = NULL, *row, *rec, *props;
	const char *state, *lift_state;
	struct werr *err;
	char *status = NULL, *reason;
	int64_t id;
	size_t i;
	int done;

	if ((err = store_triage_incidents(c->o->store, NULL, &all)) != NULL)
		return err;
	json_array_foreach(all, i, row) {
		state = json_string_value(json_object_get(row, "state"));
		rec = json_object_get(row, "record");
		id = json_integer_value(json_object_get(row, "id"));
		if (strcmp(state, "fixed") == 0 || strcmp(state, "wontfix") == 0)
			continue;
		lift_state = json_string_value(json_object_get(json_object_get(
		    rec, "lift"), "state"));
		if (lift_state != NULL && strcmp(lift_state, "proposed") == 0) {
			if ((err = settle_lift(c, row, &done)) != NULL)
				break;
			continue;
		}
		if (!measured_again(c, row) || !all_healthy(c, rec))
			continue;
		props = json_object_get(rec, "proposals");
		if ((err = review_status(&status, c->o->store, json_object_get(
		    json_array_get(props, json_array_size(props) - 1),
		    "review"))) != NULL)
			break;
		reason = status != NULL ? xasprintf("every engine healthy in "
		    "cycle %s (the pin's review %lld: %s)", c->cycle,
		    (long long)json_integer_value(json_object_get(json_array_get(
		    props, json_array_size(props) - 1), "review")), status) :
		    xasprintf("every engine healthy in cycle %s", c->cycle);
		free(status);
		status = NULL;
		err = set_state(c, id, state, "fixed", NULL, reason);
		free(reason);
		if (err != NULL)
			break;
		triage_report_incident(c, "fixed", id);
	}
	json_decref(all);
	return err;
}
