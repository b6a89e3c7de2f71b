/*
 * regressions.c - the cycle's regressions step, after the gate: the
 * round's campaign run compared with the last published cycles by
 * runner/regress/'s regress_run() (every series, the test and the
 * policy's threshold), its alerts recorded; and the journal's part of
 * them. The triage step that follows reads the regressed engines from
 * the store (regress_cycle_regressed) and treats them as broken.
 *
 * Decides nothing regress.h does not; never prints (progress goes to
 * cycle_say).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cycle-private.h"
#include "jsonget.h"
#include "regress/regress.h"
#include "util.h"

/* The alerts' ids; a new array. */
static json_t *
ids(const json_t *alerts)
{
	json_t *out = json_array(), *a;
	size_t i;

	json_array_foreach((json_t *)alerts, i, a)
		json_array_append(out, json_object_get(a, "id"));
	return out;
}

/* Why series were not compared, counted: {why: n}. */
static json_t *
why_counts(const json_t *not)
{
	json_t *out = json_object(), *n;
	const json_t *v;
	size_t i;

	json_array_foreach((json_t *)not, i, v) {
		n = json_object_get(out, jsonget_str(v, "why"));
		json_object_set_new(out, jsonget_str(v, "why"), json_integer(
		    json_integer_value(n) + 1));
	}
	return out;
}

struct werr *
cycle_step_regressions(struct cyc *c, json_t **result, const char **state)
{
	const char *run = json_string_value(json_object_get(cycle_step_result(
	    c, c->round, "campaign"), "run"));
	struct regress_opts o;
	struct werr *err;
	json_t *res = NULL, *base;

	if (c->policy->regressions.metrics.n == 0 || run == NULL) {
		*result = json_pack("{s:s}", "why", run == NULL ? "the round "
		    "has no campaign run" : "policy 'regressions.metrics' is "
		    "empty");
		*state = "skipped";
		return NULL;
	}
	memset(&o, 0, sizeof(o));
	o.store = c->store;
	o.policy = c->policy;
	o.run_id = run;
	o.cycle = c->id;
	o.round = c->round;
	o.who = "warden cycle";
	if ((err = regress_run(&res, &o)) != NULL)
		return err;
	base = json_object_get(res, "baseline");
	*result = json_pack("{s:s, s:O, s:O, s:O, s:o, s:o, s:o, s:o, s:O}",
	    "run", run, "baseline", base, "policy", json_object_get(res,
	    "policy"), "compared", json_object_get(res, "compared"),
	    "not_compared", why_counts(json_object_get(res, "not_compared")),
	    "opened", ids(json_object_get(res, "opened")), "seen",
	    ids(json_object_get(res, "seen")), "fixed",
	    ids(json_object_get(res, "fixed")), "regressed_engines",
	    json_object_get(res, "regressed_engines"));
	*state = "done";
	if (json_array_size(json_object_get(base, "runs")) == 0)
		cycle_say(c, CYCLE_DONE, "nothing to compare with: %s",
		    jsonget_str(base, "why"));
	else
		cycle_say(c, CYCLE_DONE, "%lld series compared with %zu "
		    "published cycle%s: %zu alert%s opened, %zu seen again, "
		    "%zu fixed", (long long)jsonget_int(res, "compared"),
		    json_array_size(json_object_get(base, "cycles")),
		    json_array_size(json_object_get(base, "cycles")) == 1 ? "" :
		    "s", json_array_size(json_object_get(res, "opened")),
		    json_array_size(json_object_get(res, "opened")) == 1 ? "" :
		    "s", json_array_size(json_object_get(res, "seen")),
		    json_array_size(json_object_get(res, "fixed")));
	json_decref(res);
	return NULL;
}

struct werr *
cycle_journal_regressions(json_t **out, struct cyc *c)
{
	const json_t *r = NULL, *row;
	json_t *alerts = NULL;
	struct werr *err;
	size_t i;

	*out = NULL;
	json_array_foreach(c->steps, i, row)
		if (strcmp(jsonget_str(row, "step"), "regressions") == 0 &&
		    strcmp(jsonget_str(row, "state"), "running") != 0)
			r = row;
	if ((err = regress_cycle_alerts(&alerts, c->store, c->id)) != NULL)
		return err;
	if (r == NULL)
		json_object_set_new(alerts, "why", json_string("the cycle did "
		    "not compare its series"));
	else if (strcmp(jsonget_str(r, "state"), "skipped") == 0)
		json_object_set(alerts, "why", json_object_get(json_object_get(r,
		    "result"), "why"));
	else {
		row = json_object_get(r, "result");
		json_object_set(alerts, "baseline", json_object_get(row,
		    "baseline"));
		json_object_set(alerts, "policy", json_object_get(row,
		    "policy"));
		json_object_set(alerts, "compared", json_object_get(row,
		    "compared"));
		json_object_set(alerts, "round", json_object_get(r, "round"));
	}
	*out = alerts;
	return NULL;
}
