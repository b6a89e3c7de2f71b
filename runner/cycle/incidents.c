/*
 * incidents.c - what the cycle's agent step makes of triage's incidents.
 *
 * An engine of an open incident is not the agent's as an engine: when
 * triage queued a pin for the incident (its newest proposal pending or
 * approved), the fix is already in review; an upstream incident waits
 * for the engine's next release; an open incident without a fix in
 * review is given to the agent whole (task "incident:N", the problem
 * triage recorded: agent_task_incident()). Engines of no open incident
 * stay the agent's one by one.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cycle-private.h"
#include "jsonget.h"
#include "store-review.h"
#include "triage/triage.h"
#include "util.h"

static int
is_open(const char *state)
{
	return strcmp(state, "untriaged") == 0 ||
	    strcmp(state, "investigating") == 0 ||
	    strcmp(state, "confirmed") == 0 || strcmp(state, "upstream") == 0;
}

/* The status of the incident's newest proposal's review; NULL: none. */
static struct werr *
proposal_status(char **status, int64_t *review, struct store *store,
    const json_t *rec)
{
	const json_t *props = json_object_get(rec, "proposals");
	const json_t *r = json_object_get(json_array_get(props,
	    json_array_size(props) - 1), "review");
	struct store_review row;
	struct werr *err;
	int found = 0;

	*status = NULL;
	*review = 0;
	if (!json_is_integer(r))
		return NULL;
	*review = json_integer_value(r);
	memset(&row, 0, sizeof(row));
	if ((err = store_review_get(store, *review, &found, &row)) == NULL &&
	    found && row.status != NULL)
		*status = xstrdup(row.status);
	store_review_free(&row);
	return err;
}

struct werr *
cycle_incident_cover(json_t **cover, struct store *store,
    const json_t *failing)
{
	json_t *all = NULL, *row, *rec, *v, *task;
	struct werr *err;
	const char *state, *engine;
	char *status = NULL, *why, *name;
	int64_t id, review;
	size_t i, j;
	int touches;

	*cover = json_object();
	if ((err = triage_incident_list(&all, store, NULL)) != NULL)
		return err;
	json_array_foreach(all, i, row) {
		state = jsonget_str(row, "state");
		rec = json_object_get(row, "record");
		id = json_integer_value(json_object_get(row, "id"));
		if (!is_open(state))
			continue;
		touches = 0;
		json_array_foreach(json_object_get(rec, "engines"), j, v)
			if (json_object_get(failing, json_string_value(v)))
				touches = 1;
		if (!touches)
			continue;
		if ((err = proposal_status(&status, &review, store, rec)) != NULL)
			break;
		task = NULL;
		if (strcmp(state, "upstream") == 0)
			why = xasprintf("incident %lld: broken by its own release "
			    "(upstream), left until a new release", (long long)id);
		else if (status != NULL && (strcmp(status, "pending") == 0 ||
		    strcmp(status, "approved") == 0))
			why = xasprintf("incident %lld: triage's %s is in review "
			    "%lld (%s)", (long long)id, strcmp(jsonget_str(row,
			    "kind"), "change") == 0 ? "revert" : "pin",
			    (long long)review, status);
		else {
			why = NULL;
			name = xasprintf("incident:%lld", (long long)id);
			task = json_pack("{s:s, s:I}", "task", name, "incident",
			    (json_int_t)id);
			free(name);
		}
		free(status);
		status = NULL;
		json_array_foreach(json_object_get(rec, "engines"), j, v) {
			engine = json_string_value(v);
			if (engine == NULL || json_object_get(*cover, engine))
				continue;
			json_object_set_new(*cover, engine, task != NULL ?
			    json_deep_copy(task) : json_string(why));
		}
		json_decref(task);
		free(why);
	}
	json_decref(all);
	if (err != NULL) {
		json_decref(*cover);
		*cover = NULL;
	}
	return err;
}
