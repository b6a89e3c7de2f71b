/*
 * query.c - the alerts as `warden regressions` and the cycle read them:
 * the list, one alert with its transitions, a maintainer's transition,
 * the alerts a cycle opened, saw again or fixed (for its journal), and
 * the engines a cycle found regressed (for triage). See regress.h.
 * Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "regress-private.h"
#include "store-json.h"
#include "util.h"

struct werr *
regress_list(json_t **out, struct store *store, const char *state,
    const char *engine)
{
	if (state != NULL && !regress_state_valid(state))
		return werr_new(WEXIT_INPUT, "'%s' is not an alert state "
		    "(untriaged, acknowledged, invalid, fixed)", state);
	return store_regress_alerts(out, store, state, engine, 0);
}

struct werr *
regress_show(json_t **out, struct store *store, int64_t id)
{
	struct werr *err;

	if ((err = store_regress_alert(out, store, id)) != NULL)
		return err;
	if (*out == NULL)
		return werr_new(WEXIT_INPUT, "no regression alert %lld",
		    (long long)id);
	return NULL;
}

struct werr *
regress_set(struct store *store, int64_t id, const char *state,
    const char *reason, const char *who)
{
	json_t *a = NULL;
	struct werr *err;

	if ((err = text_check("--reason", reason)) != NULL ||
	    (err = text_check("--by", who)) != NULL)
		return err;
	if (!regress_state_valid(state))
		return werr_new(WEXIT_INPUT, "'%s' is not an alert state "
		    "(untriaged, acknowledged, invalid, fixed)", state);
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_regress_alert(&a, store, id)) == NULL) {
		if (a == NULL)
			err = werr_new(WEXIT_INPUT, "no regression alert %lld",
			    (long long)id);
		else if (strcmp(jsonget_str(a, "state"), state) == 0)
			err = werr_new(WEXIT_INPUT, "regression alert %lld is "
			    "already %s", (long long)id, state);
		else
			err = store_regress_transition(store, id,
			    jsonget_str(a, "state"), state, who, reason);
	}
	json_decref(a);
	return store_tx_end(store, err);
}

/* The figures of the alert's sighting in cycle, else its own. */
static const json_t *
sighting(const json_t *a, const char *cycle)
{
	const json_t *seen = json_object_get(json_object_get(a, "record"),
	    "seen"), *s, *found = a;
	size_t i;

	json_array_foreach((json_t *)seen, i, s)
		if (strcmp(jsonget_str(s, "cycle"), cycle) == 0)
			found = s;
	return found;
}

struct werr *
regress_cycle_regressed(json_t **out, struct store *store, const char *cycle)
{
	json_t *all = NULL, *e, *cell;
	const json_t *a, *rec, *s, *cycles;
	const struct regress_metric *m;
	struct werr *err;
	size_t i;

	*out = json_object();
	if ((err = store_regress_alerts(&all, store, NULL, NULL, 1)) != NULL)
		return err;
	json_array_foreach(all, i, a) {
		if (strcmp(jsonget_str(a, "last_cycle"), cycle) != 0 ||
		    regress_alert_accepted(a))
			continue;	/* accepted at approval: a decision */
		rec = json_object_get(a, "record");
		s = sighting(a, cycle);
		m = regress_metric_find(jsonget_str(a, "metric"));
		cell = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O?, "
		    "s:O?, s:O?, s:s, s:O, s:O?, s:O}", "engine",
		    json_object_get(a, "engine"), "model", json_object_get(a,
		    "model"), "split", json_object_get(a, "split"),
		    "concurrency", json_object_get(a, "concurrency"), "metric",
		    json_object_get(a, "metric"), "before", json_object_get(a,
		    "before"), "after", json_object_get(s, "after"),
		    "worse_pct", json_object_get(s == a ? rec : s, "worse_pct"),
		    "p_value", json_object_get(s, "p_value"), "threshold_pct",
		    json_object_get(rec, "threshold_pct"), "unit", m != NULL ?
		    m->unit : "", "alert", json_object_get(a, "id"), "run_id",
		    json_object_get(s, "run_id"), "state",
		    json_object_get(a, "state"));
		if ((e = json_object_get(*out, jsonget_str(a, "engine"))) ==
		    NULL) {
			e = json_pack("{s:[]}", "cells");
			cycles = json_object_get(json_object_get(rec,
			    "baseline"), "cycles");
			if (json_is_string(json_array_get(cycles, 0)))
				json_object_set(e, "good_cycle",
				    json_array_get(cycles, 0));
			json_object_set_new(*out, jsonget_str(a, "engine"), e);
		}
		json_array_append_new(json_object_get(e, "cells"), cell);
	}
	json_decref(all);
	return NULL;
}

/* An alert as a cycle's journal lists it, with the figures of sighting
 * s (the alert itself when opened there). */
static json_t *
journal_alert(const json_t *a, const json_t *s)
{
	const struct regress_metric *m = regress_metric_find(jsonget_str(a,
	    "metric"));
	double before = json_number_value(json_object_get(a, "before"));
	double after = json_number_value(json_object_get(s, "after"));

	return json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:s, s:f, "
	    "s:f, s:f, s:O?}", "id", json_object_get(a, "id"), "state",
	    json_object_get(a, "state"), "cycle", json_object_get(a, "cycle"),
	    "engine", json_object_get(a, "engine"), "model",
	    json_object_get(a, "model"), "split", json_object_get(a, "split"),
	    "concurrency", json_object_get(a, "concurrency"), "metric",
	    json_object_get(a, "metric"), "unit", m != NULL ? m->unit : "",
	    "before", before, "after", after, "change_pct", before > 0 ?
	    (after / before) * 100 - 100 : 0.0, "p_value",
	    json_object_get(s, "p_value"));
}

struct werr *
regress_cycle_alerts(json_t **out, struct store *store, const char *cycle)
{
	json_t *all = NULL, *opened = json_array(), *seen = json_array();
	json_t *fixed = json_array();
	const json_t *a, *s, *last;
	struct werr *err;
	size_t i, j;

	*out = NULL;
	if ((err = store_regress_alerts(&all, store, NULL, NULL, 0)) != NULL)
		goto out;
	json_array_foreach(all, i, a) {
		if (strcmp(jsonget_str(a, "cycle"), cycle) == 0)
			json_array_append_new(opened, journal_alert(a, a));
		last = NULL;
		json_array_foreach(json_object_get(json_object_get(a,
		    "record"), "seen"), j, s)
			if (strcmp(jsonget_str(s, "cycle"), cycle) == 0)
				last = s;
		if (last == NULL)
			continue;
		if (json_is_true(json_object_get(last, "fixed")))
			json_array_append_new(fixed, journal_alert(a, last));
		else if (strcmp(jsonget_str(a, "cycle"), cycle) != 0)
			json_array_append_new(seen, journal_alert(a, last));
	}
	*out = json_pack("{s:O, s:O, s:O}", "opened", opened, "seen", seen,
	    "fixed", fixed);
out:
	json_decref(all);
	json_decref(opened);
	json_decref(seen);
	json_decref(fixed);
	return err;
}
