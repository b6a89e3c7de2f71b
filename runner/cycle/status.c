/*
 * status.c - where the current or last cycle stands, for `warden
 * status`: its step, the cell under way and an ETA, read from the store
 * (WAL: a reader never waits for the cycle writing) and from the cycle
 * lock, which it tests without taking. It must never write: not the
 * store, not the lock.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cycle-private.h"
#include "isotime.h"
#include "jsonget.h"
#include "store-cycle.h"
#include "store-review.h"
#include "triage/store-triage.h"
#include "util.h"

/* The pid holding .warden/cycle.lock, or 0 when no process does. */
static long
lock_holder(const char *repo_root)
{
	char *path = path_join(repo_root, ".warden/cycle.lock");
	struct flock fl;
	long pid = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		pid = (long)fl.l_pid;
	close(fd);
	return pid;
}

static double
seconds_since(const char *stamp)
{
	double t = isotime_seconds(stamp);

	return t >= 0 ? (double)time(NULL) - t : -1;
}

static double
duration(const json_t *row)
{
	double a = isotime_seconds(jsonget_str(row, "started"));
	double b = isotime_seconds(jsonget_str(row, "finished"));

	return a >= 0 && b >= 0 ? b - a : -1;
}

/*
 * What a maintainer asks the morning after: the last round's cells by
 * status (from the cycle's journal, once written), the snapshot it
 * published, and what waits now: reviews pending, incidents open.
 */
static struct werr *
summary(json_t **out, struct store *store, const json_t *row,
    const json_t *steps)
{
	json_t *cells = json_object(), *reviews = NULL, *incidents = NULL;
	json_t *open = json_array(), *v;
	const json_t *journal = json_object_get(row, "journal"), *sp, *c, *r;
	const char *snapshot = NULL, *state;
	struct werr *err;
	size_t i, j;

	*out = NULL;
	json_array_foreach(json_object_get(journal, "splits"), i, sp)
		json_array_foreach(json_object_get(sp, "cells"), j, c) {
			const char *st = jsonget_str(c, "status");

			v = json_object_get(cells, st);
			json_object_set_new(cells, st, json_integer(
			    json_integer_value(v) + 1));
		}
	json_array_foreach((json_t *)steps, i, r)
		if (strcmp(jsonget_str(r, "step"), "publish") == 0 &&
		    json_is_string(json_object_get(json_object_get(r,
		    "result"), "snapshot")))
			snapshot = jsonget_str(json_object_get(r, "result"),
			    "snapshot");
	if ((err = store_review_list(store, "pending", &reviews)) != NULL ||
	    (err = store_triage_incidents(store, NULL, &incidents)) != NULL)
		goto out;
	json_array_foreach(incidents, i, r) {
		state = jsonget_str(r, "state");
		if (strcmp(state, "fixed") != 0 && strcmp(state, "wontfix") != 0)
			json_array_append(open, json_object_get(r, "id"));
	}
	*out = json_pack("{s:O, s:s?, s:I, s:O}", "cells", cells, "published",
	    snapshot, "reviews_waiting", (json_int_t)json_array_size(reviews),
	    "incidents_open", open);
out:
	json_decref(cells);
	json_decref(open);
	json_decref(reviews);
	json_decref(incidents);
	return err;
}

/* The previous cycle's time of step (round 1), or -1. */
static double
prev_time(const json_t *prev_steps, const char *step)
{
	const json_t *r;
	size_t i;

	json_array_foreach((json_t *)prev_steps, i, r)
		if (json_integer_value(json_object_get(r, "round")) == 1 &&
		    strcmp(jsonget_str(r, "step"), step) == 0)
			return duration(r);
	return -1;
}

/* The run of the step under way and where it is; sets *left to the
 * step's estimated seconds left (-1 unknown) and *what to a line. */
static struct werr *
run_progress(json_t **now, double *left, char **what, struct store *store,
    const char *cycle, int round, const char *step)
{
	char *run = xasprintf("%s-r%d-%s", cycle, round, step);
	const json_t *cur;
	double mean, remaining;
	json_int_t points, done;
	struct werr *err;

	*now = NULL;
	*what = NULL;
	*left = -1;
	if ((err = store_cycle_run_now(store, step, run, now)) != NULL ||
	    *now == NULL)
		goto out;
	json_object_set_new(*now, "run", json_string(run));
	points = json_integer_value(json_object_get(*now, "points"));
	done = json_integer_value(json_object_get(*now, "done"));
	mean = json_number_value(json_object_get(*now, "mean_s"));
	cur = json_object_get(*now, "current");
	if (json_object_get(*now, "mean_s") != NULL &&
	    json_is_number(json_object_get(*now, "mean_s"))) {
		remaining = (double)(points - done - (cur != NULL &&
		    !json_is_null(cur))) * mean;
		if (cur != NULL && !json_is_null(cur))
			remaining += mean > json_number_value(json_object_get(cur,
			    "elapsed_s")) ? mean - json_number_value(
			    json_object_get(cur, "elapsed_s")) : 0;
		*left = remaining > 0 ? remaining : 0;
	}
	if (cur != NULL && !json_is_null(cur)) {
		if (strcmp(step, "campaign") == 0)
			*what = xasprintf("sweep %lld/%lld %s %s %s c=%lld: "
			    "%lld/%lld requests", (long long)done + 1,
			    (long long)points, jsonget_str(cur, "engine"),
			    jsonget_str(cur, "model"),
			        jsonget_str(cur, "split"), (long long)
			    json_integer_value(json_object_get(cur,
			    "concurrency")), (long long)json_integer_value(
			    json_object_get(cur, "done")), (long long)
			    json_integer_value(json_object_get(cur, "total")));
		else
			*what = xasprintf("cell %lld/%lld %s %s %lld-shot: "
			    "%lld/%lld items", (long long)done + 1,
			    (long long)points, jsonget_str(cur, "engine"),
			    jsonget_str(cur, "model"),
			        (long long)json_integer_value(
			    json_object_get(cur, "shots")), (long long)
			    json_integer_value(json_object_get(cur, "done")),
			    (long long)json_integer_value(json_object_get(cur,
			    "total")));
	} else
		*what = xasprintf("%lld/%lld %s done", (long long)done,
		    (long long)points, strcmp(step, "campaign") == 0 ?
		    "sweeps" : "cells");
out:
	free(run);
	return err;
}

/* A commit on official no journal entry records: "blocked" when it stops
 * the cycle (no publish to adopt it: cycle.publish false, or a cycle
 * interrupted at its journal or export, as one before the export waited
 * for it was), as the cycle says it; else "unrecorded", what the next
 * publish adopts (cycle_official_unrecorded). */
static void
blocked(json_t *status, struct store *store, const char *repo_root)
{
	git_repository *repo = NULL;
	struct policy *pol = NULL;
	const char *step = json_string_value(json_object_get(status, "step"));
	char *branch, *why = NULL;
	struct werr *err;
	int blocks;

	if (git_repository_open(&repo, repo_root) < 0)
		return;
	if ((err = policy_load_trusted(&pol, NULL, repo)) != NULL) {
		werr_free(err);	/* the cycle says what is wrong with it */
		git_repository_free(repo);
		return;
	}
	blocks = !pol->cycle.publish || (step != NULL &&
	    (strcmp(step, "journal") == 0 || strcmp(step, "export") == 0) &&
	    strcmp(jsonget_str(status, "state"), "interrupted") == 0);
	branch = xstrdup(pol->official_branch);
	why = cycle_official_unrecorded(store, repo, branch, blocks);
	if (why != NULL)
		json_object_set_new(status, blocks ? "blocked" : "unrecorded",
		    json_string(why));
	free(why);
	free(branch);
	policy_free(pol);
	git_repository_free(repo);
}

struct werr *
cycle_status(json_t **out, struct store *store, const char *repo_root)
{
	json_t *row = NULL, *steps = NULL, *prev = NULL, *prev_steps = NULL;
	json_t *now = NULL, *st, *sum = NULL;
	const json_t *r, *cur = NULL;
	const char *state, *step = NULL;
	double left = -1, total, d;
	char *what = NULL;
	struct werr *err;
	long pid;
	size_t i;
	int round, after = 0, known = 1;

	*out = NULL;
	if ((err = store_cycle_latest(store, &row)) != NULL || row == NULL)
		goto out;
	if ((err = store_cycle_steps(store, jsonget_str(row, "id"),
	    &steps)) != NULL || (err = store_cycle_previous(store,
	    jsonget_str(row, "id"), &prev)) != NULL ||
	    (prev != NULL && (err = store_cycle_steps(store, jsonget_str(prev,
	    "id"), &prev_steps)) != NULL))
		goto out;
	round = (int)json_integer_value(json_object_get(row, "round"));
	pid = lock_holder(repo_root);
	state = jsonget_str(row, "state");
	if (strcmp(state, "running") == 0 && pid == 0)
		state = "interrupted";
	json_array_foreach(steps, i, r)
		if (strcmp(jsonget_str(r, "state"), "running") == 0)
			cur = r;
	if (cur != NULL) {
		step = jsonget_str(cur, "step");
		if ((strcmp(step, "campaign") == 0 ||
		    strcmp(step, "fidelity") == 0) &&
		    (err = run_progress(&now, &left, &what, store,
		    jsonget_str(row, "id"), round, step)) != NULL)
			goto out;
		if (left < 0 && (d = prev_time(prev_steps, step)) >= 0) {
			d -= seconds_since(jsonget_str(cur, "started"));
			left = d > 0 ? d : 0;
		}
	} else if (strcmp(state, "running") == 0 ||
	    strcmp(state, "interrupted") == 0) {
		/* between steps: the first of the round not over */
		for (i = 0; cycle_steps[i] != NULL && step == NULL; i++) {
			int over = 0;
			size_t j;

			json_array_foreach(steps, j, r)
				if (json_integer_value(json_object_get(r,
				    "round")) == round &&
				    strcmp(jsonget_str(r, "step"),
				    cycle_steps[i]) == 0)
					over = 1;
			if (!over)
				step = cycle_steps[i];
		}
		left = -1;
	}
	total = left;
	if (step != NULL && strcmp(state, "running") == 0) {
		for (i = 0; cycle_steps[i] != NULL; i++) {
			if (after) {
				if ((d = prev_time(prev_steps, cycle_steps[i])) < 0)
					known = 0;
				else
					total += d;
			}
			if (strcmp(cycle_steps[i], step) == 0)
				after = 1;
		}
		if (left < 0 || !known)
			total = -1;
	} else
		total = -1;
	st = json_array();
	json_array_foreach(steps, i, r) {
		double a = isotime_seconds(jsonget_str(r, "started"));
		double b = json_is_string(json_object_get(r, "finished")) ?
		    isotime_seconds(jsonget_str(r, "finished")) : -1;

		json_array_append_new(st, json_pack("{s:O, s:O, s:O, s:O, s:O, "
		    "s:o}", "round", json_object_get(r, "round"), "step",
		    json_object_get(r, "step"), "state", json_object_get(r,
		    "state"), "started", json_object_get(r, "started"),
		    "finished", json_object_get(r, "finished"), "duration_s",
		    a >= 0 && b >= a ? json_real(b - a) : json_null()));
	}
	if ((err = summary(&sum, store, row, steps)) != NULL) {
		json_decref(st);
		goto out;
	}
	{
		double a = isotime_seconds(jsonget_str(row, "created"));
		double b = json_is_string(json_object_get(row, "finished")) ?
		    isotime_seconds(jsonget_str(row, "finished")) : -1;

		json_object_set_new(sum, "duration_s", a >= 0 && b >= a ?
		    json_real(b - a) : json_null());
	}
	*out = json_pack("{s:O, s:O, s:s, s:i, s:b, s:o, s:s?, s:s?, s:o?, "
	    "s:o, s:o, s:O, s:O, s:O, s:o}", "cycle", json_object_get(row, "id"),
	    "roster", json_object_get(row, "roster"), "state", state,
	    "round", round, "alive", pid != 0, "pid", pid != 0 ?
	    json_integer(pid) : json_null(), "step", step, "what", what,
	    "run", now, "eta_s", total >= 0 ? json_real(total) : json_null(),
	    "steps", st, "started", json_object_get(row, "created"),
	    "finished", json_object_get(row, "finished"), "exit",
	    json_object_get(row, "exit_code"), "summary", sum);
	now = NULL;
	blocked(*out, store, repo_root);
out:
	free(what);
	json_decref(now);
	json_decref(row);
	json_decref(steps);
	json_decref(prev);
	json_decref(prev_steps);
	return err;
}
