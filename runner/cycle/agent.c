/*
 * agent.c - the cycle's agent step: the maintainer agent on what broke,
 * through runner/agent/'s agent_run(), when policy's cycle.agent allows.
 *
 * A task is an open incident of triage's with no fix in review
 * (incidents.c), or an engine with failing cells of no open incident. The agent runs at most once per task
 * and cycle: the task is recorded before the agent starts, so a cycle
 * killed while the agent ran never starts it again for the same cells.
 * A task the agent already had in the previous cycle, failing the same
 * way with nothing changed since (same engine manifest, adapter and
 * profile, and no fix of it approved), is not given to it again: the
 * journal lists it under Skipped, saying so. At most
 * cycle.budgets.agent_runs runs per cycle.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "cycle-private.h"
#include "fault.h"
#include "jsonget.h"
#include "store-cycle.h"
#include "util.h"

static void
agent_progress(void *arg, const char *what)
{
	cycle_say(arg, CYCLE_LIVE, "%s", what);
}

/* The previous cycle's cell of key, or NULL. */
static const json_t *
prev_cell(const json_t *prev, const char *key)
{
	const json_t *split, *cell;
	size_t i, j;
	char *k;
	int same;

	json_array_foreach(json_object_get(prev, "splits"), i, split)
		json_array_foreach(json_object_get(split, "cells"), j, cell) {
			k = cycle_cell_key(cell);
			same = strcmp(k, key) == 0;
			free(k);
			if (same)
				return cell;
		}
	return NULL;
}

/* Did the previous cycle give task to the agent, with no fix of it
 * approved? Its agent record, or NULL. */
static const json_t *
prev_attempt(const json_t *prev, const char *task)
{
	const json_t *a;
	size_t i;

	json_array_foreach(json_object_get(prev, "agent"), i, a)
		if (strcmp(jsonget_str(a, "task"), task) == 0 &&
		    json_integer_value(json_object_get(a, "agent_run")) > 0 &&
		    strcmp(jsonget_str(a, "review_status"), "approved") != 0)
			return a;
	return NULL;
}

/*
 * Not retried blindly: every failing cell of the task failed the same
 * way (status and reason) in the previous cycle, with the same inputs,
 * and the agent had the task then without a fix approved. *why (caller
 * frees) says so.
 */
static int
same_as_before(char **why, const json_t *prev, const char *task,
    const json_t *cells)
{
	const json_t *cell, *was, *attempt;
	size_t i;
	char *key;
	int same = 1;

	*why = NULL;
	if (prev == NULL || (attempt = prev_attempt(prev, task)) == NULL)
		return 0;
	json_array_foreach(cells, i, cell) {
		key = cycle_cell_key(cell);
		was = prev_cell(prev, key);
		free(key);
		if (was == NULL || strcmp(jsonget_str(was, "status"),
		    jsonget_str(cell, "status")) != 0 ||
		    strcmp(jsonget_str(was, "reason"),
		    jsonget_str(cell, "reason")) != 0 ||
		    !json_equal(json_object_get(was, "inputs"),
		    json_object_get(cell, "inputs")))
			same = 0;
	}
	if (same)
		*why = xasprintf("failing as in cycle %s, where agent run %lld "
		    "had it (%s) and no fix was approved; its engine, adapter "
		    "and profile are unchanged: not retried",
		    jsonget_str(prev, "cycle"), (long long)json_integer_value(
		    json_object_get(attempt, "agent_run")), jsonget_str(attempt,
		    "state"));
	return same;
}

/* Run the agent on engine's task, or on incident's when it is not 0;
 * *entry what came of it. */
static struct werr *
run_task(json_t **entry, struct cyc *c, const char *task_name,
    const char *engine, int64_t incident)
{
	struct agent_run_opts ao;
	struct agent_task task;
	json_t *rec = NULL;
	struct werr *err;
	int64_t id, review;
	const char *st;

	memset(&task, 0, sizeof(task));
	err = incident != 0 ? agent_task_incident(&task, c->store, incident) :
	    agent_task_engine(&task, c->store, c->policy, engine);
	if (err != NULL) {
		if (err->exit == WEXIT_ENV)
			return err;
		/* no task to give (the engine's cells): an outcome */
		*entry = json_pack("{s:s, s:I, s:s, s:I, s:s}", "task",
		    task_name, "agent_run", (json_int_t)0, "state", "no-task",
		    "review", (json_int_t)0, "error", err->msg);
		werr_free(err);
		return store_cycle_agent_end(c->store, c->id, task_name, 0,
		    "no-task", 0);
	}
	memset(&ao, 0, sizeof(ao));
	ao.repo_root = c->o->repo_root;
	ao.repo = c->repo;
	ao.store = c->store;
	ao.official_branch = c->policy->official_branch;
	ao.task = &task;
	ao.on_progress = agent_progress;
	ao.arg = c;
	err = agent_run(&rec, &ao);
	agent_task_free(&task);
	if (rec == NULL || !json_is_integer(json_object_get(rec, "id"))) {
		json_decref(rec);
		if (err == NULL)
			err = werr_new(WEXIT_ENV, "the agent run left no record");
		return err;
	}
	/* A run that could not go on (no sandbox where policy requires
	 * one) is recorded; the cycle goes on without it. */
	id = json_integer_value(json_object_get(rec, "id"));
	review = json_integer_value(json_object_get(rec, "review"));
	st = json_string_value(json_object_get(rec, "state"));
	if (st == NULL)
		st = err != NULL ? "error" : "?";
	*entry = json_pack("{s:s, s:I, s:s, s:I}", "task", task_name,
	    "agent_run", (json_int_t)id, "state", st, "review",
	    (json_int_t)review);
	if (err != NULL) {
		json_object_set_new(*entry, "error", json_string(err->msg));
		werr_free(err);
	}
	json_decref(rec);
	return store_cycle_agent_end(c->store, c->id, task_name, id,
	    json_string_value(json_object_get(*entry, "state")), review);
}

struct werr *
cycle_step_agent(struct cyc *c, json_t **result, const char **state)
{
	json_t *cells = NULL, *engines = json_object(), *order = json_array();
	json_t *runs = json_array(), *skipped = json_array(), *tasks = NULL;
	json_t *prev = NULL, *prow = NULL, *cell, *list, *keys, *entry, *v;
	json_t *cover = NULL, *given = json_object(), *cv, *w;
	struct werr *err = NULL;
	const char *engine;
	char *task, *why, *key;
	size_t i, j, k, used;
	int64_t incident;
	int fresh;

	if (!c->policy->cycle.agent) {
		*result = json_pack("{s:s}", "why", "policy 'cycle.agent' is "
		    "false");
		*state = "skipped";
		goto out;
	}
	if ((err = cycle_round_cells(&cells, c, c->round)) != NULL ||
	    (err = store_cycle_previous(c->store, c->id, &prow)) != NULL ||
	    (err = store_cycle_agent_tasks(c->store, c->id, &tasks)) != NULL)
		goto out;
	prev = json_object_get(prow, "journal");
	json_array_foreach(cells, i, cell) {
		if (!cycle_status_failing(json_string_value(json_object_get(
		    cell, "status"))))
			continue;
		engine = json_string_value(json_object_get(cell, "engine"));
		if ((list = json_object_get(engines, engine)) == NULL) {
			list = json_array();
			json_object_set_new(engines, engine, list);
			json_array_append_new(order, json_string(engine));
		}
		json_array_append(list, cell);
	}
	if ((err = cycle_incident_cover(&cover, c->store, engines)) != NULL)
		goto out;
	used = json_array_size(tasks);
	json_array_foreach(order, i, v) {
		engine = json_string_value(v);
		list = json_object_get(engines, engine);
		cv = json_object_get(cover, engine);
		incident = json_integer_value(json_object_get(cv, "incident"));
		if (incident != 0 && json_object_get(given, jsonget_str(cv,
		    "task")))
			continue;	/* the incident's task, given already */
		task = incident != 0 ? xstrdup(jsonget_str(cv, "task")) :
		    xasprintf("engine:%s", engine);
		keys = json_array();
		json_array_foreach(order, k, w) {
			/* an incident's task: the failing cells of its engines */
			if (k != i && (incident == 0 || !json_equal(json_object_get(
			    cover, json_string_value(w)), cv)))
				continue;
			json_array_foreach(json_object_get(engines,
			    json_string_value(w)), j, cell) {
				key = cycle_cell_key(cell);
				json_array_append_new(keys, json_string(key));
				free(key);
			}
		}
		if (incident != 0)
			json_object_set_new(given, task, json_true());
		entry = NULL;
		if (json_is_string(cv)) {
			entry = json_pack("{s:s, s:O, s:O}", "task", task,
			    "cells", keys, "why", cv);
		} else if (same_as_before(&why, prev, task, list)) {
			entry = json_pack("{s:s, s:O, s:s}", "task", task,
			    "cells", keys, "why", why);
			free(why);
		} else if ((int)used >= c->policy->cycle.agent_runs) {
			entry = json_pack("{s:s, s:O, s:s}", "task", task,
			    "cells", keys, "why", "the cycle's agent budget "
			    "(cycle.budgets.agent_runs) is spent");
		} else if ((err = store_cycle_agent_begin(c->store, c->id, task,
		    keys, &fresh)) == NULL && !fresh) {
			entry = json_pack("{s:s, s:O, s:s}", "task", task,
			    "cells", keys, "why", "the agent already had these "
			    "cells in this cycle");
		}
		if (entry != NULL)
			json_array_append_new(skipped, entry);
		else if (err == NULL) {
			fault_point("cycle.agent");
			used++;
			cycle_say(c, CYCLE_LINE, "agent on %s (%zu failing cell%s)",
			    incident != 0 ? task : engine, json_array_size(keys),
			    json_array_size(keys) == 1 ? "" : "s");
			if ((err = run_task(&entry, c, task, engine,
			    incident)) == NULL) {
				json_object_set(entry, "cells", keys);
				json_array_append_new(runs, entry);
			} else
				json_decref(entry);
		}
		json_decref(keys);
		free(task);
		if (err != NULL)
			goto out;
	}
	*result = json_pack("{s:O, s:O}", "runs", runs, "skipped", skipped);
	*state = "done";
	cycle_say(c, CYCLE_DONE, "%zu run%s, %zu task%s skipped", json_array_size(runs),
	    json_array_size(runs) == 1 ? "" : "s", json_array_size(skipped),
	    json_array_size(skipped) == 1 ? "" : "s");
out:
	json_decref(cells);
	json_decref(engines);
	json_decref(order);
	json_decref(runs);
	json_decref(skipped);
	json_decref(tasks);
	json_decref(prow);
	json_decref(cover);
	json_decref(given);
	return err;
}
