/*
 * incident-query.c - incidents for people and for the agent: list,
 * show (record, transitions, every smoke run), a maintainer's
 * transition (journaled with who and why), and an incident as the
 * maintainer agent's problem (agent.h's fields). See triage.h. Never
 * prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "store-triage.h"
#include "triage-private.h"
#include "triage.h"
#include "util.h"

const char *const triage_states[] = {
	"untriaged", "investigating", "confirmed", "fixed", "wontfix",
	"upstream", NULL,
};

int
triage_state_valid(const char *state)
{
	size_t i;

	for (i = 0; state != NULL && triage_states[i] != NULL; i++)
		if (strcmp(triage_states[i], state) == 0)
			return 1;
	return 0;
}

struct werr *
triage_incident_list(json_t **out, struct store *store, const char *state)
{
	if (state != NULL && !triage_state_valid(state))
		return werr_new(WEXIT_INPUT, "'%s' is not an incident state "
		    "(untriaged, investigating, confirmed, fixed, wontfix, "
		    "upstream)", state);
	return store_triage_incidents(store, state, out);
}

/* Every smoke run id the record names, in order. */
static json_t *
smoke_ids(const json_t *rec)
{
	json_t *ids = json_array(), *e, *id, *t;
	const char *engine, *ver;
	size_t i;

	json_object_foreach(json_object_get(rec, "per_engine"), engine, e)
		json_array_foreach(json_object_get(e, "smoke"), i, id)
			json_array_append(ids, id);
	json_object_foreach(json_object_get(json_object_get(rec, "lift"),
	    "tried"), ver, t)
		json_array_foreach(json_object_get(t, "smoke"), i, id)
			json_array_append(ids, id);
	return ids;
}

struct werr *
triage_record_smoke(json_t **out, struct store *store, const json_t *rec)
{
	json_t *ids = smoke_ids(rec);
	struct werr *err = store_triage_smoke_get(store, ids, out);

	json_decref(ids);
	return err;
}

struct werr *
triage_incident_show(json_t **out, struct store *store, int64_t id)
{
	json_t *inc = NULL, *ids, *smoke = NULL;
	struct werr *err;

	*out = NULL;
	if ((err = store_triage_incident_get(store, id, &inc)) != NULL)
		return err;
	if (inc == NULL)
		return werr_new(WEXIT_INPUT, "no incident %lld", (long long)id);
	ids = smoke_ids(json_object_get(inc, "record"));
	err = store_triage_smoke_get(store, ids, &smoke);
	json_decref(ids);
	if (err != NULL) {
		json_decref(inc);
		return err;
	}
	json_object_set_new(inc, "smoke", smoke);
	*out = inc;
	return NULL;
}

struct werr *
triage_incident_set(struct store *store, int64_t id, const char *state,
    const char *reason, const char *who)
{
	struct store_incident_save sv;
	json_t *inc = NULL;
	struct werr *err;

	if ((err = text_check("--reason", reason)) != NULL ||
	    (err = text_check("--as", who)) != NULL)
		return err;
	if (!triage_state_valid(state))
		return werr_new(WEXIT_INPUT, "'%s' is not an incident state "
		    "(untriaged, investigating, confirmed, fixed, wontfix, "
		    "upstream)", state);
	if ((err = store_triage_incident_get(store, id, &inc)) != NULL)
		return err;
	if (inc == NULL)
		return werr_new(WEXIT_INPUT, "no incident %lld", (long long)id);
	if (strcmp(json_string_value(json_object_get(inc, "state")), state) ==
	    0) {
		err = werr_new(WEXIT_INPUT, "incident %lld is already %s",
		    (long long)id, state);
		json_decref(inc);
		return err;
	}
	memset(&sv, 0, sizeof(sv));
	sv.id = id;
	sv.state = state;
	sv.expect_state = json_string_value(json_object_get(inc, "state"));
	sv.who = who;
	sv.reason = reason;
	err = store_triage_incident_save(store, &sv, NULL);
	json_decref(inc);
	return err;
}

/* The failing cells of every engine, as the agent's problem has them. */
static json_t *
failing_cells(const json_t *rec)
{
	json_t *cells = json_array(), *e, *c;
	const char *engine;
	size_t i;

	json_object_foreach(json_object_get(rec, "per_engine"), engine, e)
		json_array_foreach(json_object_get(e, "failing_cells"), i, c)
			json_array_append(cells, c);
	return cells;
}

/* {ENGINE: {before, after}} of the versions the record keeps. */
static json_t *
versions(const json_t *rec)
{
	json_t *out = json_object(), *e, *v, *o;
	const char *engine;

	json_object_foreach(json_object_get(rec, "per_engine"), engine, e) {
		v = json_object_get(e, "versions");
		o = json_object();
		if (json_is_object(json_object_get(v, "before")))
			json_object_set(o, "before", json_object_get(v, "before"));
		if (json_is_object(json_object_get(v, "after")))
			json_object_set(o, "after", json_object_get(v, "after"));
		json_object_set_new(out, engine, o);
	}
	return out;
}

/* What the agent sees of a smoke run. */
static json_t *
evidence(const json_t *smoke)
{
	json_t *out = json_array(), *s;
	size_t i;

	json_array_foreach((json_t *)smoke, i, s)
		json_array_append_new(out, json_pack("{s:O, s:O, s:O, s:O, s:O, "
		    "s:O, s:O}", "smoke", json_object_get(s, "id"),
		    "engine", json_object_get(s, "engine"),
		    "purpose", json_object_get(s, "purpose"),
		    "pinned", json_object_get(s, "pins"),
		    "outcome", json_object_get(s, "outcome"),
		    "detail", json_object_get(s, "detail"),
		    "log_tail", json_object_get(s, "log_tail")));
	return out;
}

struct werr *
triage_incident_problem(json_t **out, struct store *store, int64_t id)
{
	json_t *inc = NULL, *rec, *p, *culprit, *props, *pins, *first, *spec;
	const char *engine;
	struct werr *err;

	*out = NULL;
	if ((err = triage_incident_show(&inc, store, id)) != NULL)
		return err;
	rec = json_object_get(inc, "record");
	p = json_pack("{s:s, s:O, s:O, s:I}", "kind", "incident",
	    "summary", json_object_get(inc, "summary"),
	    "engines", json_object_get(rec, "engines"),
	    "incident", (json_int_t)id);
	culprit = json_array_get(json_object_get(rec, "culprits"), 0);
	if (json_is_string(json_object_get(culprit, "package")))
		json_object_set_new(p, "culprit", json_pack("{s:O, s:O, s:O}",
		    "package", json_object_get(culprit, "package"),
		    "from", json_object_get(culprit, "from"),
		    "to", json_object_get(culprit, "to")));
	json_object_set_new(p, "versions", versions(rec));
	props = json_object_get(rec, "proposals");
	pins = json_object_get(json_array_get(props, 0), "pins");
	json_object_foreach(pins, engine, first) {
		const char *pkg;

		json_object_foreach(first, pkg, spec)
			if (json_is_string(spec)) {
				json_object_set_new(p, "proposed_pin", json_pack(
				    "{s:s, s:O}", "engine", engine, "pin", spec));
				break;
			}
		break;
	}
	json_object_set_new(p, "evidence", evidence(json_object_get(inc,
	    "smoke")));
	json_object_set_new(p, "failing_cells", failing_cells(rec));
	json_decref(inc);
	*out = p;
	return NULL;
}
