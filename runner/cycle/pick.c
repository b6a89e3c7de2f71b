/*
 * pick.c - which cycle `warden cycle` works on: take .warden/cycle.lock,
 * then continue the unfinished cycle (or, when it waits for review items
 * that are still pending, say so and the approve commands), or start a
 * new one of the roster asked for.
 *
 * Must never start a cycle while another is unfinished, never continue a
 * cycle under a roster other than its own, and never run a step: that is
 * cycle.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cycle-private.h"
#include "jsonget.h"
#include "review.h"
#include "store-cycle.h"
#include "util.h"

/* Take .warden/cycle.lock for this process (a POSIX record lock, which
 * the kernel drops with the process, and which `warden status` can test
 * without taking it), or say which process runs a cycle. */
struct werr *
cycle_lock(int *fd_out, const char *repo_root)
{
	char *path = path_join(repo_root, ".warden/cycle.lock"), pid[32];
	struct werr *err = NULL;
	struct flock fl;
	int fd;

	*fd_out = -1;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) == -1) {
		err = werr_errno("open", path);
		goto out;
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_SETLK, &fl) == -1) {
		if (errno == EACCES || errno == EAGAIN) {
			memset(&fl, 0, sizeof(fl));
			fl.l_type = F_WRLCK;
			fl.l_whence = SEEK_SET;
			(void)fcntl(fd, F_GETLK, &fl);
			err = werr_new(WEXIT_ENV, "a cycle is already running "
			    "here (pid %ld); 'warden status' shows where it "
			    "stands", (long)fl.l_pid);
		} else
			err = werr_errno("lock", path);
		close(fd);
		goto out;
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, strlen(pid), 0) == -1) {
		err = werr_errno("write", path);
		close(fd);
		goto out;
	}
	*fd_out = fd;
out:
	free(path);
	return err;
}

/* Is any review item the waiting cycle queued still pending, and was none
 * of them approved? Then it goes on waiting. *why says what happened. */
static struct werr *
still_waiting(int *waiting, json_t **pending, char **why, struct cyc *c)
{
	json_t *ids = cycle_queued_reviews(c), *v, *r;
	struct buf b = BUF_INIT;
	struct werr *err = NULL;
	int approved = 0, rejected = 0;
	const char *st;
	size_t i;

	*pending = json_array();
	json_array_foreach(ids, i, v) {
		if ((err = review_show(&r, c->store, json_integer_value(v))) != NULL)
			break;
		st = jsonget_str(r, "status");
		if (strcmp(st, "pending") == 0)
			json_array_append(*pending, v);
		else if (strcmp(st, "approved") == 0) {
			buf_printf(&b, "%sreview %lld approved", b.len ? ", " :
			    "", (long long)json_integer_value(v));
			approved++;
		} else
			rejected++;
		json_decref(r);
	}
	*waiting = err == NULL && json_array_size(*pending) > 0 && approved == 0;
	if (b.len == 0)
		buf_printf(&b, "%d review item%s rejected, none pending",
		    rejected, rejected == 1 ? "" : "s");
	*why = buf_detach(&b);
	json_decref(ids);
	return err;
}

/* Who runs the cycle, as git knows them: "Name <email>", or a
 * placeholder to fill in. Caller frees. */
static char *
maintainer(git_repository *repo)
{
	git_config *cfg = NULL;
	git_buf name = { 0 }, email = { 0 };
	char *who;

	if (repo != NULL && git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_string_buf(&name, cfg, "user.name") == 0 &&
	    git_config_get_string_buf(&email, cfg, "user.email") == 0 &&
	    name.size > 0 && email.size > 0 && !strchr(name.ptr, '"'))
		who = xasprintf("%s <%s>", name.ptr, email.ptr);
	else
		who = xstrdup("Your Name <you@example.org>");
	git_buf_dispose(&name);
	git_buf_dispose(&email);
	git_config_free(cfg);
	return who;
}

/* "warden review approve N --as ..." for each pending review (an id,
 * or an object with "id"). */
json_t *
cycle_approve_commands(git_repository *repo, const json_t *pending)
{
	json_t *cmds = json_array(), *v;
	char *who = maintainer(repo);
	json_int_t id;
	size_t i;

	json_array_foreach((json_t *)pending, i, v) {
		id = json_is_object(v) ? json_integer_value(json_object_get(v,
		    "id")) : json_integer_value(v);
		json_array_append_new(cmds, json_sprintf("warden review "
		    "approve %lld --as \"%s\"", (long long)id, who));
	}
	free(who);
	return cmds;
}

/* The reviews of waiting (every pending one) that this cycle queued: the
 * ones whose approval the cycle asks for. A new array (borrowing). */
json_t *
cycle_own_waiting(struct cyc *c, const json_t *waiting)
{
	json_t *ids = cycle_queued_reviews(c), *own = json_array(), *w, *v;
	size_t i, j;

	json_array_foreach((json_t *)waiting, i, w)
		json_array_foreach(ids, j, v)
			if (json_integer_value(v) == json_integer_value(
			    json_object_get(w, "id"))) {
				json_array_append(own, w);
				break;
			}
	json_decref(ids);
	return own;
}

/* Find or make the cycle to run; *out set (and nothing to run) when the
 * cycle waits for review still. */
struct werr *
cycle_pick(json_t **out, struct cyc *c)
{
	const struct cycle_opts *o = c->o;
	json_t *latest = NULL, *pending = NULL;
	struct werr *err;
	const char *state;
	char id[64], *why = NULL;
	time_t now;
	struct tm tm;
	int waiting;

	if ((err = store_cycle_latest(c->store, &latest)) != NULL)
		return err;
	state = jsonget_str(latest, "state");
	if (latest != NULL && strcmp(state, "done") != 0) {
		c->id = xstrdup(jsonget_str(latest, "id"));
		c->round = (int)json_integer_value(json_object_get(latest,
		    "round"));
		if (o->roster != NULL && strcmp(o->roster, jsonget_str(latest,
		    "roster")) != 0) {
			err = werr_new(WEXIT_INPUT, "cycle '%s' of roster '%s' "
			    "is not finished; continue it with 'warden cycle' "
			    "(without '--roster %s')", c->id,
			    jsonget_str(latest, "roster"), o->roster);
			goto out;
		}
		c->resumed = 1;
		c->roster = policy_roster(c->policy,
		    jsonget_str(latest, "roster"));
		if (c->roster == NULL) {
			err = werr_new(WEXIT_INPUT,
			    "cycle '%s' ran roster '%s', "
			    "which the official policy no longer has", c->id,
			    jsonget_str(latest, "roster"));
			goto out;
		}
		if ((err = store_set_cycle(c->store, c->id)) != NULL ||
		    (err = cycle_reload_steps(c)) != NULL)
			goto out;
		if (strcmp(state, "waiting") == 0) {
			if ((err = still_waiting(&waiting, &pending, &why,
			    c)) != NULL)
				goto out;
			if (waiting) {
				/* as its end said it: the export's reason
				 * for waiting, if it did */
				const json_t *skip = json_object_get(
				    cycle_step_result(c, c->round, "export"),
				    "skipped");

				*out = json_pack("{s:s, s:i, s:s, s:i, s:b, "
				    "s:O, s:o, s:O?}", "cycle", c->id, "round",
				    c->round, "state", "waiting", "exit",
				    WEXIT_WAITING,
				    "resumed", 1, "journal", json_object_get(
				    latest, "journal"), "approve",
				    cycle_approve_commands(c->repo, pending),
				    "not_exported", skip);
				goto out;
			}
			c->round++;
			err = store_cycle_round(c->store, c->id, c->round, why);
		} else
			err = store_cycle_claim(c->store, c->id, (long)getpid(),
			    "continued after it was interrupted");
		goto out;
	}
	if (o->resume) {
		err = werr_new(WEXIT_INPUT, latest == NULL ? "there is no "
		    "cycle to resume" : "there is no cycle to resume: the last, "
		    "'%s', is done", jsonget_str(latest, "id"));
		goto out;
	}
	c->roster = policy_roster(c->policy, o->roster != NULL ? o->roster :
	    c->policy->default_roster);
	if (c->roster == NULL) {
		err = werr_new(WEXIT_INPUT, "'--roster %s': the official "
		    "policy has no roster '%s'", o->roster, o->roster);
		goto out;
	}
	if (o->new_id != NULL)
		snprintf(id, sizeof(id), "%s", o->new_id);
	else {
		now = time(NULL);
		gmtime_r(&now, &tm);
		strftime(id, sizeof(id), "cycle-%Y%m%d-%H%M%S", &tm);
	}
	c->id = xstrdup(id);
	c->round = 1;
	if ((err = store_set_cycle(c->store, c->id)) != NULL ||
	    (err = store_cycle_create(c->store, c->id, c->roster->name,
	    c->machine, (long)getpid())) != NULL)
		goto out;
	err = cycle_reload_steps(c);
out:
	json_decref(latest);
	json_decref(pending);
	free(why);
	return err;
}
