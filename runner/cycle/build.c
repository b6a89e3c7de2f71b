/*
 * build.c - the cycle's structured journal, from what the store holds:
 * the cells of each round's campaign (judged by cells.c), the previous
 * cycle's journal (for `fixed`, what broke and how often a cell was
 * skipped before), the steps' results, the agent's tasks, the review
 * queue. The fields are warden-cycle(1)'s THE CYCLE JOURNAL; render.c turns
 * them into SiliconBench's Markdown.
 *
 * Reads only; decides nothing a step has not recorded, and never reads a
 * log.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "cycle-private.h"
#include "jsonget.h"
#include "review.h"
#include "store-cycle.h"
#include "util.h"

/* The cell of key among a journal's splits (or a flat array), or NULL. */
static const json_t *
find_cell(const json_t *cells, const char *key)
{
	const json_t *c;
	size_t i;
	char *k;
	int same;

	json_array_foreach(cells, i, c) {
		k = cycle_cell_key(c);
		same = strcmp(k, key) == 0;
		free(k);
		if (same)
			return c;
	}
	return NULL;
}

/* Every cell of a journal, flat (new reference). */
static json_t *
journal_cells(const json_t *journal)
{
	json_t *all = json_array();
	const json_t *split;
	size_t i;

	json_array_foreach(json_object_get(journal, "splits"), i, split)
		json_array_extend(all, json_object_get(split, "cells"));
	return all;
}

/*
 * The final cells: the last round's, each with its status made final
 * against the earlier round and the previous cycle (ok after a failure
 * is fixed), "was" (the earlier status and where) and, for a skipped
 * cell, how many cycles in a row it was skipped for the same reason.
 */
static json_t *
final_cells(json_t *rounds, const json_t *prev_cells, const char *prev_id,
    const char *id, json_t *broke)
{
	json_t *last = json_array_get(rounds, json_array_size(rounds) - 1);
	json_t *out = json_array(), *cell;
	const json_t *first, *was;
	const char *st;
	char *key, *note;
	int fail1, failn;
	size_t i;

	json_array_foreach(last, i, cell) {
		key = cycle_cell_key(cell);
		cell = json_deep_copy(cell);
		st = jsonget_str(cell, "status");
		first = json_array_size(rounds) > 1 ?
		    find_cell(json_array_get(rounds, 0), key) : NULL;
		was = find_cell(prev_cells, key);
		if (first != NULL && cycle_status_failing(jsonget_str(first,
		    "status")))
			json_object_set_new(cell, "was",
			    json_pack("{s:s, s:s, s:s}", "status",
			    jsonget_str(first, "status"), "where", "round 1",
			    "reason", jsonget_str(first, "reason")));
		else if (was != NULL && cycle_status_failing(jsonget_str(was,
		    "status")))
			json_object_set_new(cell, "was",
			    json_pack("{s:s, s:s+, s:s}", "status",
			    jsonget_str(was, "status"), "where", "cycle ",
			    prev_id, "reason", jsonget_str(was, "reason")));
		if (strcmp(st, "ok") == 0 && json_object_get(cell, "was")) {
			was = json_object_get(cell, "was");
			note = xasprintf("%s; %s in %s: %s",
			    jsonget_str(cell, "notes"),
			    jsonget_str(was, "status"),
			    jsonget_str(was, "where"),
			    jsonget_str(was, "reason"));
			json_object_set_new(cell, "notes", json_string(note));
			json_object_set_new(cell, "status", json_string("fixed"));
			free(note);
		}
		/* broke: failing in some round of this cycle, not failing
		 * in the last (or new since) */
		was = find_cell(prev_cells, key);
		fail1 = first != NULL && cycle_status_failing(jsonget_str(first,
		    "status"));
		failn = cycle_status_failing(jsonget_str(cell, "status"));
		if ((fail1 || failn) && (was == NULL ||
		    !cycle_status_failing(jsonget_str(was, "status"))))
			json_array_append_new(broke,
			    json_pack("{s:s, s:s, s:b}", "cell", key, "status",
			    fail1 ? jsonget_str(first,
			    "status") : jsonget_str(cell, "status"), "fixed",
			    !failn));
		if (strcmp(jsonget_str(cell, "status"), "skipped") == 0) {
			int same = was != NULL &&
			    strcmp(jsonget_str(was, "status"),
			    "skipped") == 0 && strcmp(jsonget_str(was,
			    "reason"), jsonget_str(cell, "reason")) == 0;

			json_object_set_new(cell, "prior", json_integer(same ?
			    jsonget_int(was, "prior") + 1 : 0));
			json_object_set_new(cell, "since", json_string(same ?
			    jsonget_str(was, "since") : id));
		}
		json_array_append_new(out, cell);
		free(key);
	}
	return out;
}

/* The cells grouped per (model, split), in order of first appearance. */
static json_t *
splits_of(const json_t *cells)
{
	json_t *splits = json_array(), *s;
	const json_t *cell;
	size_t i, j;
	int found;

	json_array_foreach(cells, i, cell) {
		found = 0;
		json_array_foreach(splits, j, s)
			if (strcmp(jsonget_str(s, "model"),
			    jsonget_str(cell, "model")) == 0 &&
			    strcmp(jsonget_str(s, "split"),
			    jsonget_str(cell, "split")) == 0) {
				json_array_append(json_object_get(s, "cells"),
				    (json_t *)cell);
				found = 1;
				break;
			}
		if (!found)
			json_array_append_new(splits,
			    json_pack("{s:s, s:s, s:[O]}", "model",
			    jsonget_str(cell, "model"), "split",
			    jsonget_str(cell, "split"), "cells", cell));
	}
	return splits;
}

/* Version changes and failed updates of every round. */
static void
versions(json_t *summary, const json_t *steps)
{
	json_t *changed = json_array(), *failed = json_array();
	const json_t *r, *e, *ch;
	const char *pkg;
	size_t i, j;

	json_array_foreach(steps, i, r) {
		if (strcmp(jsonget_str(r, "step"), "update") != 0)
			continue;
		json_array_foreach(json_object_get(json_object_get(r, "result"),
		    "engines"), j, e) {
			json_object_foreach(json_object_get(e, "changes"), pkg, ch)
				json_array_append_new(changed,
				    json_pack("{s:s, s:s, s:O?, s:O?, s:I}",
				    "engine", jsonget_str(e, "engine"),
				    "package", pkg, "old",
				    json_object_get(ch, "old"), "new",
				    json_object_get(ch, "new"), "round",
				    jsonget_int(r, "round")));
			if (strcmp(jsonget_str(e, "outcome"), "updated") != 0 &&
			    strcmp(jsonget_str(e, "outcome"), "unchanged") != 0)
				json_array_append_new(failed,
				    json_pack("{s:s, s:s, s:s, s:I}",
				    "engine", jsonget_str(e, "engine"),
				    "outcome", jsonget_str(e, "outcome"),
				    "detail", jsonget_str(e, "detail"), "round",
				    jsonget_int(r, "round")));
		}
	}
	json_object_set_new(summary, "versions", changed);
	json_object_set_new(summary, "update_failed", failed);
}

/* Are the engine's cells all ok, fixed or degraded (it was measured)? */
static int
engine_well(const json_t *cells, const char *engine)
{
	const json_t *cell;
	const char *st;
	size_t i;
	int any = 0;

	json_array_foreach(cells, i, cell) {
		if (strcmp(jsonget_str(cell, "engine"), engine) != 0)
			continue;
		st = jsonget_str(cell, "status");
		if (strcmp(st, "ok") != 0 && strcmp(st, "fixed") != 0 &&
		    strcmp(st, "degraded") != 0)
			return 0;
		any = 1;
	}
	return any;
}

/* OOM and suspicious findings of the final cells, and the gate's. */
static void
findings(json_t *journal, const json_t *cells, const json_t *gate)
{
	json_t *oom = json_array(), *sus = json_array();
	const json_t *cell, *lv, *f, *fails;
	const char *engine;
	size_t i, j;

	json_array_foreach(cells, i, cell) {
		json_array_foreach(json_object_get(cell, "levels"), j, lv) {
			if (strcmp(jsonget_str(lv, "status"), "oom") == 0)
				json_array_append_new(oom,
				    json_pack("{s:s, s:s, "
				    "s:s, s:I, s:s, s:O?, s:O?}", "engine",
				    jsonget_str(cell, "engine"), "model",
				    jsonget_str(cell, "model"), "split",
				    jsonget_str(cell, "split"), "concurrency",
				    jsonget_int(lv, "concurrency"), "detail",
				    jsonget_str(lv, "detail"),
				    "peak_system_memory_bytes",
				    json_object_get(lv,
				    "peak_system_memory_bytes"),
				    "system_memory_bytes",
				    json_object_get(lv,
				    "system_memory_bytes")));
			if (json_is_true(json_object_get(lv, "client_limited")))
				json_array_append_new(sus,
				    json_pack("{s:s, s:s, s:s, s:I, s:s}",
				    "engine", jsonget_str(cell, "engine"),
				    "model", jsonget_str(cell, "model"),
				    "split", jsonget_str(cell, "split"),
				    "concurrency",
				    jsonget_int(lv, "concurrency"), "why",
				    "warden's client was the limit "
				    "(client_limited): the figures may "
				    "understate the engine"));
			if (jsonget_int(lv, "usage_streamed") > 0)
				json_array_append_new(sus,
				    json_pack("{s:s, s:s, s:s, s:I, s:s}",
				    "engine", jsonget_str(cell, "engine"),
				    "model", jsonget_str(cell, "model"),
				    "split", jsonget_str(cell, "split"),
				    "concurrency",
				    jsonget_int(lv, "concurrency"), "why",
				    "the engine reported no usage: output "
				    "tokens counted from the stream"));
		}
	}
	/* speed against published cycles is regressions.c's (alerts with a
	 * test and a threshold), not a suspicion of this file's */
	/* a fidelity failure of an engine whose cells are all well: the
	 * speed figures look fine, the answers do not */
	json_object_foreach((json_t *)json_object_get(gate, "failures"),
	    engine, fails)
		json_array_foreach(fails, j, f)
			if (strcmp(jsonget_str(f, "check"), "fidelity") == 0 &&
			    engine_well(cells, engine))
				json_array_append_new(sus,
				    json_pack("{s:s, s:s}", "engine", engine,
				    "why", jsonget_str(f, "why")));
	json_object_set_new(journal, "oom", oom);
	json_object_set_new(journal, "suspicious", sus);
}

/* The skipped cells and the agent's skipped tasks. */
static json_t *
skipped(const json_t *cells, const json_t *steps)
{
	json_t *out = json_array();
	const json_t *cell, *r, *s;
	size_t i, j;

	json_array_foreach(cells, i, cell)
		if (strcmp(jsonget_str(cell, "status"), "skipped") == 0)
			json_array_append_new(out,
			    json_pack("{s:s, s:s, s:s, s:s, s:O?, s:O?}",
			    "engine", jsonget_str(cell, "engine"), "model",
			    jsonget_str(cell, "model"), "split",
			    jsonget_str(cell, "split"), "reason",
			    jsonget_str(cell, "reason"), "prior",
			    json_object_get(cell, "prior"), "since",
			    json_object_get(cell, "since")));
	json_array_foreach(steps, i, r)
		if (strcmp(jsonget_str(r, "step"), "agent") == 0)
			json_array_foreach(json_object_get(json_object_get(r,
			    "result"), "skipped"), j, s)
				json_array_append_new(out,
				    json_pack("{s:s, s:O?, s:s, s:I}",
				    "task", jsonget_str(s, "task"), "cells",
				    json_object_get(s, "cells"), "reason",
				    jsonget_str(s, "why"), "round",
				    jsonget_int(r, "round")));
	return out;
}

static const json_t *
last_result(const json_t *steps, const char *step)
{
	const json_t *r, *found = NULL;
	size_t i;

	json_array_foreach(steps, i, r)
		if (strcmp(jsonget_str(r, "step"), step) == 0 &&
		    strcmp(jsonget_str(r, "state"), "running") != 0)
			found = r;
	return found;
}

/* The engines whose adapter a fix this cycle queued changes, the fix
 * still waiting for review: their breaks are handled, a maintainer's
 * approval away. An object of names. */
static json_t *
engines_awaiting_fix(struct cyc *c, const json_t *summary)
{
	json_t *own = cycle_own_waiting(c, json_object_get(summary,
	    "reviews_waiting"));
	json_t *engines = json_object(), *w, *r, *f;
	struct werr *err;
	size_t i, j;

	json_array_foreach(own, i, w) {
		if ((err = review_show(&r, c->store, json_integer_value(
		    json_object_get(w, "id")))) != NULL) {
			werr_free(err);
			continue;
		}
		json_array_foreach(json_object_get(json_object_get(r, "gate"),
		    "files"), j, f) {
			char *e = adapter_engine_of_path(jsonget_str(f, "new_path") ?
			    jsonget_str(f, "new_path") : jsonget_str(f,
			    "old_path"));

			if (e != NULL)
				json_object_set_new(engines, e, json_true());
			free(e);
		}
		json_decref(r);
	}
	json_decref(own);
	return engines;
}

/*
 * 0 healthy; 1 something broke that nothing handles (a gate regression
 * or a broken cell whose engine no fix of this cycle waits for, an open
 * incident of a cycle that waits for nothing); WEXIT_WAITING (4) when
 * the cycle did its job and waits for review of the fixes it queued.
 */
static int
exit_code(const json_t *summary, struct cyc *c)
{
	json_t *awaiting = NULL;
	const json_t *b;
	size_t i;
	int code = c->waiting ? WEXIT_WAITING : WEXIT_OK;

	const json_t *e;

	if (!c->waiting && json_array_size(json_object_get(summary,
	    "incidents_open")) > 0)
		return WEXIT_PROBLEM;
	if (c->waiting)
		awaiting = engines_awaiting_fix(c, summary);
	json_array_foreach(json_object_get(json_object_get(summary, "gate"),
	    "regressions"), i, e)
		if (awaiting == NULL || json_object_get(awaiting,
		    json_string_value(e)) == NULL)
			code = WEXIT_PROBLEM;
	json_array_foreach(json_object_get(summary, "broke"), i, b) {
		const char *cell = jsonget_str(b, "cell");
		const char *slash = cell != NULL ? strchr(cell, '/') : NULL;
		char *engine;

		if (json_is_true(json_object_get(b, "fixed")))
			continue;
		engine = slash != NULL ? xstrndup(cell, (size_t)(slash - cell)) :
		    xstrdup(cell != NULL ? cell : "");
		if (awaiting == NULL || json_object_get(awaiting, engine) == NULL)
			code = WEXIT_PROBLEM;
		free(engine);
	}
	json_decref(awaiting);
	return code;
}

struct werr *
cycle_build_journal(json_t **out, struct cyc *c)
{
	json_t *row = NULL, *prow = NULL, *rounds = json_array(), *cells = NULL;
	json_t *prev_cells = NULL, *broke = json_array(), *summary, *journal;
	json_t *statuses = json_object(), *tasks = NULL, *rc, *regs;
	const json_t *gate, *pub, *cell, *tr;
	const char *prev_id = NULL;
	struct werr *err;
	char now[40];
	size_t i;
	int r;

	*out = NULL;
	if ((err = store_cycle_get(c->store, c->id, &row)) != NULL ||
	    (err = store_cycle_previous(c->store, c->id, &prow)) != NULL)
		goto out;
	if (prow != NULL) {
		prev_cells = journal_cells(json_object_get(prow, "journal"));
		prev_id = jsonget_str(prow, "id");
	}
	for (r = 1; r <= c->round; r++) {
		if ((err = cycle_round_cells(&rc, c, r)) != NULL)
			goto out;
		json_array_append_new(rounds, rc);
	}
	cells = final_cells(rounds, prev_cells, prev_id, c->id, broke);
	json_array_foreach(cells, i, cell)
		json_object_set_new(statuses, jsonget_str(cell, "status"),
		    json_integer(jsonget_int(statuses,
		    jsonget_str(cell, "status")) + 1));
	utc_now_iso(now, sizeof(now));
	gate = json_object_get(last_result(c->steps, "gate"), "result");
	pub = last_result(c->steps, "publish");
	tr = json_object_get(last_result(c->steps, "triage"), "result");
	summary = json_pack("{s:I, s:o, s:o, s:{s:O?, s:O?, s:O?}, s:O?, "
	    "s:O?, s:O?}", "cells", (json_int_t)json_array_size(cells),
	    "statuses", statuses, "broke", broke, "gate", "passed",
	    json_object_get(gate, "passed"), "failed", json_object_get(gate,
	    "failed"), "regressions", json_object_get(gate, "regressions"),
	    "incidents_opened", json_object_get(tr, "opened"),
	    "incidents_fixed", json_object_get(tr, "fixed"), "incidents_open",
	    json_object_get(tr, "open"));
	statuses = broke = NULL;
	if (json_object_get(tr, "opened") == NULL) {
		/* no triage ran: nothing to say about incidents */
		json_object_del(summary, "incidents_opened");
		json_object_del(summary, "incidents_fixed");
		json_object_del(summary, "incidents_open");
	}
	versions(summary, c->steps);
	if (pub != NULL && strcmp(jsonget_str(pub, "state"), "done") == 0)
		json_object_set(summary, "published", json_object_get(pub,
		    "result"));
	else
		json_object_set_new(summary, "not_published",
		    json_string(pub != NULL ? jsonget_str(json_object_get(pub,
		    "result"), "why") : "the cycle did not reach publish"));
	journal = json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, "
	    "s:o, s:o}", "schema", 1, "cycle", c->id, "roster", c->roster->name,
	    "official_branch", c->policy->official_branch, "machine",
	    c->machine, "rounds", c->round, "started",
	    jsonget_str(row, "created"), "finished", now, "state",
	    c->waiting ? "waiting" : "done", "summary", summary, "splits",
	    splits_of(cells));
	if ((err = cycle_agent_tasks(&tasks, c)) != NULL ||
	    (err = cycle_reviews(journal, summary, c->store, prow != NULL ?
	    jsonget_str(prow, "created") : NULL)) != NULL) {
		json_decref(journal);
		goto out;
	}
	json_object_set(journal, "agent", tasks);
	json_object_set_new(journal, "skipped", skipped(cells, c->steps));
	findings(journal, cells, gate);
	if ((err = cycle_journal_regressions(&regs, c)) != NULL) {
		json_decref(journal);
		goto out;
	}
	json_object_set_new(summary, "alerts", json_pack("{s:I, s:I, s:I}",
	    "opened", (json_int_t)json_array_size(json_object_get(regs,
	    "opened")), "seen", (json_int_t)json_array_size(json_object_get(
	    regs, "seen")), "fixed", (json_int_t)json_array_size(
	    json_object_get(regs, "fixed"))));
	json_object_set_new(journal, "regressions", regs);
	json_object_set_new(journal, "ran", cycle_what_ran(c));
	json_object_set_new(journal, "timeline", cycle_timeline(c->steps));
	json_object_set_new(journal, "previous", prev_id != NULL ?
	    json_string(prev_id) : json_null());
	json_object_set_new(journal, "exit", json_integer(exit_code(summary,
	    c)));
	*out = journal;
out:
	json_decref(row);
	json_decref(prow);
	json_decref(rounds);
	json_decref(cells);
	json_decref(prev_cells);
	json_decref(broke);
	json_decref(statuses);
	json_decref(tasks);
	return err;
}
