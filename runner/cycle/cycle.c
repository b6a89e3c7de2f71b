/*
 * cycle.c - run or continue a cycle: with the cycle pick.c found (or
 * made), run the steps of its round from the first that is not over,
 * recording each against the cycle, then its journal and export; and
 * the step rows and progress (with ETA) the steps share. See cycle.h for
 * what a cycle is.
 *
 * Must never run a step without .warden/cycle.lock (held for the whole
 * run), never read policy from a working tree (the official branch's is
 * the one), and never lose what a step recorded: a step that fails with
 * an error stays 'running' for the next run to take up.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign-input.h"
#include "cycle-private.h"
#include "fault.h"
#include "isotime.h"
#include "journal.h"
#include "jsonget.h"
#include "official.h"
#include "store-campaign.h"
#include "store-cycle.h"
#include "util.h"

const char *const cycle_steps[] = {
	"checkout", "update", "campaign", "fidelity", "gate", "regressions",
	"triage", "agent", "publish", "journal", "export", NULL,
};

static const struct {
	const char *name;
	cycle_step_fn fn;
} step_fns[] = {
	{ "checkout", cycle_step_checkout },
	{ "update", cycle_step_update },
	{ "campaign", cycle_step_campaign },
	{ "fidelity", cycle_step_fidelity },
	{ "gate", cycle_step_gate },
	{ "regressions", cycle_step_regressions },
	{ "triage", cycle_step_triage },
	{ "agent", cycle_step_agent },
	{ "publish", cycle_step_publish },
	{ NULL, NULL },
};

static const json_t *
step_row(const json_t *steps, int round, const char *step)
{
	const json_t *r;
	size_t i;

	json_array_foreach(steps, i, r)
		if (json_integer_value(json_object_get(r, "round")) == round &&
		    strcmp(jsonget_str(r, "step"), step) == 0)
			return r;
	return NULL;
}

const char *
cycle_step_state(const struct cyc *c, int round, const char *step)
{
	const json_t *r = step_row(c->steps, round, step);

	return r != NULL ? jsonget_str(r, "state") : NULL;
}

const json_t *
cycle_step_result(const struct cyc *c, int round, const char *step)
{
	const json_t *r = step_row(c->steps, round, step);

	return r != NULL ? json_object_get(r, "result") : NULL;
}

char *
cycle_run_id(const struct cyc *c, int round, const char *what)
{
	return xasprintf("%s-r%d-%s", c->id, round, what);
}

struct werr *
cycle_round_cells(json_t **out, struct cyc *c, int round)
{
	const char *run = json_string_value(json_object_get(cycle_step_result(
	    c, round, "campaign"), "run"));
	json_t *sweeps = NULL;
	struct werr *err;

	*out = NULL;
	if (run == NULL) {
		*out = json_array();
		return NULL;
	}
	if ((err = store_campaign_sweeps_json(c->store, run, &sweeps)) != NULL)
		return err;
	*out = cycle_cells(sweeps, c->policy);
	json_decref(sweeps);
	return NULL;
}

json_t *
cycle_queued_reviews(struct cyc *c)
{
	json_t *ids = json_array(), *tasks = NULL, *t, *v;
	const json_t *r;
	struct werr *err;
	size_t i, j;

	if ((err = store_cycle_agent_tasks(c->store, c->id, &tasks)) != NULL)
		werr_free(err);	/* read again at the next step */
	json_array_foreach(tasks, i, t)
		if (json_integer_value(json_object_get(t, "review")) > 0)
			json_array_append(ids, json_object_get(t, "review"));
	json_array_foreach(c->steps, i, r)
		if (strcmp(jsonget_str(r, "step"), "triage") == 0)
			json_array_foreach(json_object_get(json_object_get(r,
			    "result"), "reviews"), j, v)
				json_array_append(ids, v);
	json_decref(tasks);
	return ids;
}

/* Seconds between two UTC stamps of the store, or -1. */
static double
span_s(const char *from, const char *to)
{
	double a = isotime_seconds(from), b = isotime_seconds(to);

	return a >= 0 && b >= 0 ? b - a : -1;
}

/* The previous cycle's time for step in round 1, or -1. */
static double
prev_duration(const struct cyc *c, const char *step)
{
	const json_t *r = step_row(c->prev_steps, 1, step);

	return r != NULL ? span_s(jsonget_str(r, "started"),
	    jsonget_str(r, "finished")) : -1;
}

/* The cycle's ETA: the step under way (its own estimate, else the
 * previous cycle's time less what it took so far), plus the previous
 * cycle's times of the steps after it; -1 when any is unknown. */
static double
eta(const struct cyc *c)
{
	double total, d, spent;
	size_t i;
	int after = 0;

	if (c->step == NULL)
		return -1;
	spent = (double)(mono_ns() - c->step_started_ns) / 1e9;
	if (c->step_eta_s >= 0)
		total = c->step_eta_s;
	else if ((d = prev_duration(c, c->step)) >= 0)
		total = d > spent ? d - spent : 0;
	else
		return -1;
	for (i = 0; cycle_steps[i] != NULL; i++) {
		if (after) {
			if ((d = prev_duration(c, cycle_steps[i])) < 0)
				return -1;
			total += d;
		}
		if (strcmp(cycle_steps[i], c->step) == 0)
			after = 1;
	}
	return total;
}

void
cycle_step_eta(struct cyc *c, double eta_s)
{
	c->step_eta_s = eta_s;
}

void
cycle_say(struct cyc *c, int level, const char *fmt, ...)
{
	struct cycle_progress p;
	struct buf b = BUF_INIT;
	va_list ap;

	if (c->o->on_progress == NULL)
		return;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	memset(&p, 0, sizeof(p));
	p.cycle = c->id;
	p.round = c->round;
	p.step = c->step != NULL ? c->step : "";
	p.what = buf_cstr(&b);
	p.step_done = level == CYCLE_DONE;
	p.line = level != CYCLE_LIVE;
	p.eta_s = eta(c);
	p.interval_s = c->policy != NULL ?
	    c->policy->campaign.progress_interval_s : -1;
	c->o->on_progress(c->o->arg, &p);
	buf_free(&b);
}

struct werr *
cycle_reload_steps(struct cyc *c)
{
	json_decref(c->steps);
	c->steps = NULL;
	return store_cycle_steps(c->store, c->id, &c->steps);
}

/* ---- the steps ---- */

static struct werr *
stopped(const struct cyc *c)
{
	if (c->o->stop == NULL || *c->o->stop == 0)
		return NULL;
	return werr_new(WEXIT_ENV, "cycle '%s' interrupted by signal %d; "
	    "continue it with 'warden cycle --resume'", c->id,
	    (int)*c->o->stop);
}

static struct werr *
run_step(struct cyc *c, const char *step, cycle_step_fn fn)
{
	json_t *result = NULL;
	const char *state = "done";
	struct werr *err;

	c->step = step;
	c->step_started_ns = mono_ns();
	c->step_eta_s = -1;
	cycle_say(c, CYCLE_LINE, "starting");
	if ((err = store_cycle_step_begin(c->store, c->id, c->round, step)) != NULL)
		return err;
	fault_point("cycle.step");
	if ((err = fn(c, &result, &state)) == NULL)
		err = store_cycle_step_end(c->store, c->id, c->round, step,
		    state, result);
	if (err == NULL && strcmp(state, "skipped") == 0 &&
	    strcmp(step, "publish") != 0 && strcmp(step, "triage") != 0)
		cycle_say(c, CYCLE_DONE, "skipped: %s", json_string_value(
		    json_object_get(result, "why")));
	json_decref(result);
	if (err == NULL)
		err = cycle_reload_steps(c);
	return err;
}

static struct werr *
journal_step(struct cyc *c, json_t **journal)
{
	struct werr *err;

	c->step = "journal";
	c->step_started_ns = mono_ns();
	c->step_eta_s = -1;
	if ((err = store_cycle_step_begin(c->store, c->id, c->round,
	    "journal")) != NULL ||
	    (err = cycle_build_journal(journal, c)) != NULL ||
	    (err = store_cycle_journal(c->store, c->id, c->round,
	    *journal)) != NULL)
		return err;
	cycle_say(c, CYCLE_DONE, "cycle journal recorded (exit %lld)",
	    (long long)json_integer_value(json_object_get(*journal, "exit")));
	return cycle_reload_steps(c);
}

/*
 * Export the journal to official and end the cycle. A commit a maintainer
 * made on official that no entry records yet (cycle.publish true: the
 * checkout let it through for the publish to adopt) breaks the journal's
 * proof until a publish adopts it or `warden journal adopt` records it;
 * where this cycle did not publish, the export waits for that and the
 * cycle still ends with its own result (*skipped says why), not as a
 * failure of the journal. Any other break fails the export.
 */
static struct werr *
export_step(struct cyc *c, int exit_code, char **skipped)
{
	char commit[41] = "", unrecorded[41];
	json_t *result;
	struct werr *err;
	char *why;
	int n = 0;

	*skipped = NULL;
	c->step = "export";
	c->step_started_ns = mono_ns();
	c->step_eta_s = -1;
	if ((err = store_cycle_step_begin(c->store, c->id, c->round,
	    "export")) != NULL)
		return err;
	err = journal_export(&n, commit, unrecorded, c->store, c->repo,
	    c->policy->official_branch, NULL, cycle_render_markdown);
	if (err != NULL && unrecorded[0] == '\0')
		return err;
	if (err != NULL) {
		werr_free(err);
		why = cycle_unrecorded_text(unrecorded,
		    c->policy->official_branch, 0);
		*skipped = xasprintf("%s; the journal is exported then", why);
		free(why);
	}
	result = json_pack("{s:i, s:s?, s:s?}", "entries", n, "commit",
	    commit[0] != '\0' ? commit : NULL, "skipped", *skipped);
	err = store_cycle_end(c->store, c->id, c->round, result, c->waiting ?
	    "waiting" : "done", exit_code);
	json_decref(result);
	if (err == NULL && *skipped != NULL)
		cycle_say(c, CYCLE_DONE, "not exported: %s", *skipped);
	else if (err == NULL)
		cycle_say(c, CYCLE_DONE, commit[0] ? "%d entries to '%s', commit %.12s" :
		    "%d entries to '%s'%s", n, c->policy->official_branch,
		    commit[0] ? commit : ", nothing new");
	return err;
}

static struct werr *
run_round(json_t **journal, struct cyc *c)
{
	const json_t *r;
	struct werr *err;
	const char *st;
	size_t i;

	for (i = 0; step_fns[i].name != NULL; i++) {
		st = cycle_step_state(c, c->round, step_fns[i].name);
		if (st != NULL && strcmp(st, "running") != 0) {
			r = cycle_step_result(c, c->round, step_fns[i].name);
			if (json_is_true(json_object_get(r, "waiting")))
				c->waiting = 1;
			continue;
		}
		if ((err = stopped(c)) != NULL ||
		    (err = run_step(c, step_fns[i].name, step_fns[i].fn)) != NULL)
			return err;
	}
	st = cycle_step_state(c, c->round, "journal");
	if (st == NULL || strcmp(st, "done") != 0) {
		if ((err = journal_step(c, journal)) != NULL)
			return err;
	}
	return NULL;
}

static void
cyc_free(struct cyc *c)
{
	policy_free(c->policy);
	git_repository_free(c->repo);
	json_decref(c->steps);
	json_decref(c->prev_steps);
	free(c->id);
}

/* The trusted policy: the official branch's own (policy_load_trusted),
 * whatever the working tree holds. */
static struct werr *
official_policy(struct cyc *c)
{
	return policy_load_trusted(&c->policy, NULL, c->repo);
}

struct werr *
cycle_run(json_t **out, const struct cycle_opts *o)
{
	json_t *journal = NULL, *row = NULL, *prev = NULL, *own = NULL;
	struct werr *err;
	struct cyc c;
	char *skipped = NULL;
	int lock = -1, exit_code;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.store = o->store;
	campaign_machine_id(c.machine);
	if (git_repository_open(&c.repo, o->repo_root) < 0) {
		err = werr_git("cannot open the repository '%s'", o->repo_root);
		goto out;
	}
	if ((err = official_policy(&c)) != NULL ||
	    (err = official_check_free(c.repo, c.policy->official_branch)) != NULL ||
	    (err = cycle_lock(&lock, o->repo_root)) != NULL ||
	    (err = official_recover(c.store, c.repo, NULL)) != NULL ||
	    (err = cycle_pick(out, &c)) != NULL || *out != NULL)
		goto out;
	if ((err = store_cycle_previous(c.store, c.id, &prev)) != NULL)
		goto out;
	if (prev != NULL && (err = store_cycle_steps(c.store, jsonget_str(prev,
	    "id"), &c.prev_steps)) != NULL)
		goto out;
	if ((err = run_round(&journal, &c)) != NULL ||
	    (err = store_cycle_get(c.store, c.id, &row)) != NULL)
		goto out;
	if (journal == NULL)
		journal = json_incref(json_object_get(row, "journal"));
	exit_code = (int)json_integer_value(json_object_get(journal, "exit"));
	if ((err = export_step(&c, exit_code, &skipped)) != NULL)
		goto out;
	own = cycle_own_waiting(&c, json_object_get(json_object_get(journal,
	    "summary"), "reviews_waiting"));
	*out = json_pack("{s:s, s:i, s:s, s:i, s:b, s:O, s:o, s:s?}", "cycle",
	    c.id, "round", c.round, "state", c.waiting ? "waiting" : "done",
	    "exit", exit_code, "resumed", c.resumed, "journal", journal,
	    "approve", cycle_approve_commands(c.repo, own), "not_exported",
	    skipped);
out:
	free(skipped);
	if (lock != -1)
		close(lock);
	json_decref(journal);
	json_decref(row);
	json_decref(prev);
	json_decref(own);
	cyc_free(&c);
	return err;
}
