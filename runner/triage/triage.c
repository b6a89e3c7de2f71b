/*
 * triage.c - triage_run(): one cycle triaged, step by step (see
 * triage.h): which engines broke (detect.c), incidents settled by this
 * cycle's outcomes and by maintainers' decisions (incident.c), new
 * releases of fixed incidents' culprits (lift.c), suspects scored
 * across engines (suspects.c), each broken engine searched (culprit.c)
 * unless an open incident already explains it, and the incidents opened
 * (incident.c). The run and its result are recorded and journaled.
 * Never prints.
 */
#include "config.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "store-triage.h"
#include "suspects.h"
#include "triage-private.h"
#include "util.h"

void
triage_progress(struct triage_ctx *c, const char *phase, const char *engine,
    size_t run, size_t max, const char *fmt, ...)
{
	struct triage_progress p;
	struct buf b = BUF_INIT;
	va_list ap;

	if (c->o->on_progress == NULL)
		return;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	memset(&p, 0, sizeof(p));
	p.phase = phase;
	p.engine = engine;
	p.run = run;
	p.max = max;
	p.what = buf_cstr(&b);
	c->o->on_progress(c->o->arg, &p);
	buf_free(&b);
}

int
triage_engine_selected(const struct triage_ctx *c, const char *engine)
{
	const char *const *e = c->o->engines;

	if (e == NULL || e[0] == NULL)
		return 1;
	for (; *e != NULL; e++)
		if (strcmp(*e, engine) == 0)
			return 1;
	return 0;
}

void
triage_report_incident(struct triage_ctx *c, const char *what, int64_t id)
{
	json_t *a = json_object_get(c->report, what), *v;
	size_t i;

	json_array_foreach(a, i, v)
		if (json_integer_value(v) == id)
			return;
	json_array_append_new(a, json_integer(id));
}

void
triage_result_free(struct triage_result *res)
{
	free(res->cycle);
	json_decref(res->broken);
	json_decref(res->cannot_compare);
	json_decref(res->opened);
	json_decref(res->updated);
	json_decref(res->fixed);
	json_decref(res->reopened);
	json_decref(res->reviews);
	json_decref(res->report);
	memset(res, 0, sizeof(*res));
}

/*
 * Remove the scratch environments triage runs left: at the start, those
 * of earlier runs (killed midway), keeping this run's; at the end, all.
 * One triage runs at a time in a repository.
 */
static void
remove_scratch(const struct triage_ctx *c, int keep_mine)
{
	char *root = xasprintf("%s/.warden/triage", c->o->repo_root);
	char *mine = xasprintf("%lld", (long long)c->run_id), *path;
	struct dirent *de;
	DIR *d;

	if ((d = opendir(root)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.' || (keep_mine &&
			    strcmp(de->d_name, mine) == 0))
				continue;
			path = path_join(root, de->d_name);
			werr_free(path_remove_tree(path));
			free(path);
		}
		closedir(d);
	}
	free(root);
	free(mine);
}

/* The newest cycle with a campaign run (caller frees), or NULL. */
static struct werr *
newest_cycle(char **out, struct triage_ctx *c)
{
	struct werr *err;
	size_t n;

	*out = NULL;
	if ((err = store_triage_cycles(c->o->store, &c->cycles)) != NULL)
		return err;
	n = json_array_size(c->cycles);
	if (n > 0)
		*out = xstrdup(json_string_value(json_array_get(c->cycles, n - 1)));
	return NULL;
}

/* The scoring input: every engine's status, changes and own package. */
static json_t *
scoring_input(const struct triage_ctx *c)
{
	json_t *in = json_object(), *e, *o;
	const char *engine;

	json_object_foreach(c->engines, engine, e) {
		o = json_pack("{s:O}", "status", json_object_get(e, "status"));
		if (json_object_get(e, "changes") != NULL)
			json_object_set(o, "changes", json_object_get(e, "changes"));
		if (json_is_string(json_object_get(json_object_get(e, "manifest"),
		    "engine_package")))
			json_object_set(o, "own", json_object_get(json_object_get(e,
			    "manifest"), "engine_package"));
		json_object_set_new(in, engine, o);
	}
	return in;
}

/* Does a package search's kind name what broke the engine? */
static int
explained(const json_t *search)
{
	const char *kind = json_string_value(json_object_get(search, "kind"));

	return kind != NULL && (strcmp(kind, "single") == 0 ||
	    strcmp(kind, "combination") == 0 || strcmp(kind, "own_release") == 0);
}

/*
 * Search one broken engine: its changed packages (suspects, possibly
 * NULL), then, when they do not explain it, the commits on official that
 * changed what it runs with (commits.c). The search that found the
 * culprit is the engine's; the other is kept beside it ("commits" or
 * "packages").
 */
static struct werr *
search_engine(json_t **out, struct triage_ctx *c, const char *engine,
    const json_t *suspects)
{
	json_t *e = json_object_get(c->engines, engine);
	json_t *commits = json_object_get(e, "commits"), *pk = NULL, *cm = NULL;
	struct werr *err;

	*out = NULL;
	if (json_object_size(json_object_get(e, "changes")) > 0 ||
	    json_array_size(commits) == 0) {
		json_t *none = json_array();

		err = triage_culprit(&pk, c, engine, suspects != NULL ?
		    suspects : none);
		json_decref(none);
		if (err != NULL)
			return err;
		if (explained(pk) || json_array_size(commits) == 0) {
			*out = pk;
			return NULL;
		}
	}
	if ((err = triage_commit_search(&cm, c, engine, commits)) != NULL) {
		json_decref(pk);
		return err;
	}
	if (pk != NULL && strcmp(json_string_value(json_object_get(cm,
	    "kind")), "commit") != 0) {
		json_object_set_new(pk, "commits", cm);
		*out = pk;
	} else {
		if (pk != NULL)
			json_object_set_new(cm, "packages", pk);
		*out = cm;
	}
	return NULL;
}

/* Search each broken engine no open incident explains. */
static struct werr *
search_broken(struct triage_ctx *c, json_t *searches)
{
	json_t *in = scoring_input(c), *suspects = suspects_rank(in), *e, *s;
	json_t *broken = json_object_get(c->report, "broken");
	json_t *cannot = json_object_get(c->report, "cannot_compare");
	struct werr *err = NULL;
	const char *engine, *status;
	json_t *commits;
	int64_t covering;

	json_object_set(c->report, "suspects", suspects);
	json_object_foreach(c->engines, engine, e) {
		status = json_string_value(json_object_get(e, "status"));
		if (strcmp(status, "broken") != 0 ||
		    !triage_engine_selected(c, engine))
			continue;
		if ((err = triage_commit_suspects(&commits, c, engine)) != NULL)
			break;
		json_object_set_new(e, "commits", commits);
		json_object_set(json_object_get(json_object_get(c->report,
		    "engines"), engine), "commits", commits);
		if (json_object_get(e, "changes") == NULL &&
		    json_array_size(commits) == 0) {
			json_array_append_new(cannot, json_pack("{s:s, s:O}",
			    "engine", engine, "why", json_object_get(e, "why")));
			continue;
		}
		json_array_append_new(broken, json_string(engine));
		if ((err = triage_incident_covering(&covering, c, engine)) != NULL)
			break;
		if (covering > 0) {
			json_object_set_new(searches, engine, json_pack("{s:s, s:I}",
			    "kind", "covered", "incident", (json_int_t)covering));
			continue;
		}
		if ((err = search_engine(&s, c, engine, json_object_get(
		    suspects, engine))) != NULL)
			break;
		json_object_set_new(searches, engine, s);
	}
	json_decref(in);
	json_decref(suspects);
	return err;
}

/* Mark the incidents that already explained an engine as seen again. */
static struct werr *
touch_covered(struct triage_ctx *c, const json_t *searches)
{
	struct store_incident_save sv;
	const char *engine;
	struct werr *err;
	json_t *s, *fresh = json_object();
	char *reason;

	json_object_foreach((json_t *)searches, engine, s) {
		if (strcmp(json_string_value(json_object_get(s, "kind")),
		    "covered") != 0) {
			json_object_set(fresh, engine, s);
			continue;
		}
		reason = xasprintf("%s still broken in cycle %s", engine,
		    c->cycle);
		memset(&sv, 0, sizeof(sv));
		sv.id = json_integer_value(json_object_get(s, "incident"));
		sv.cycle = c->cycle;
		sv.reason = reason;
		sv.journal_kind = "incident.updated";
		err = store_triage_incident_save(c->o->store, &sv, NULL);
		free(reason);
		if (err == NULL)
			err = triage_incident_propose_missing(c, sv.id);
		if (err != NULL) {
			json_decref(fresh);
			return err;
		}
		triage_report_incident(c, "updated", sv.id);
	}
	err = triage_incidents_open(c, fresh);
	json_decref(fresh);
	return err;
}

static void
result_fill(struct triage_result *res, struct triage_ctx *c)
{
	json_t *r = c->report;

	res->cycle = c->cycle != NULL ? xstrdup(c->cycle) : NULL;
	res->broken = json_incref(json_object_get(r, "broken"));
	res->cannot_compare = json_incref(json_object_get(r, "cannot_compare"));
	res->opened = json_incref(json_object_get(r, "opened"));
	res->updated = json_incref(json_object_get(r, "updated"));
	res->fixed = json_incref(json_object_get(r, "fixed"));
	res->reopened = json_incref(json_object_get(r, "reopened"));
	res->reviews = json_incref(json_object_get(r, "reviews"));
	res->nothing_broke = json_is_true(json_object_get(r, "nothing_broke"));
	res->nothing_to_compare = json_is_true(json_object_get(r,
	    "nothing_to_compare"));
	res->report = json_incref(r);
}

/* The engines part of the report: what detect.c found, briefly. */
static json_t *
engines_report(const struct triage_ctx *c)
{
	json_t *out = json_object(), *e, *o;
	const char *engine;
	const char *keys[] = { "status", "good_cycle", "why", "changes",
	    "environment", "failing_cells", "update_failed", NULL };
	size_t k;

	json_object_foreach(c->engines, engine, e) {
		o = json_object();
		for (k = 0; keys[k] != NULL; k++)
			if (json_object_get(e, keys[k]) != NULL)
				json_object_set(o, keys[k], json_object_get(e,
				    keys[k]));
		json_object_set(o, "manifest", json_object_get(json_object_get(e,
		    "manifest"), "id"));
		json_object_set(o, "good_manifest", json_object_get(
		    json_object_get(e, "good_manifest"), "id"));
		json_object_set_new(out, engine, o);
	}
	return out;
}

struct werr *
triage_run(struct triage_result *res, const struct triage_opts *o)
{
	struct triage_ctx c;
	struct werr *err;
	json_t *searches = json_object();
	size_t nbroken;

	memset(res, 0, sizeof(*res));
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.budget = o->budget > 0 ? o->budget : o->policy->triage.budget > 0 ?
	    (size_t)o->policy->triage.budget : TRIAGE_DEFAULT_BUDGET;
	c.report = json_pack("{s:n, s:[], s:[], s:[], s:[], s:[], s:[], s:[], "
	    "s:b, s:b, s:I}", "cycle", "broken", "cannot_compare", "opened",
	    "updated", "fixed", "reopened", "reviews", "nothing_broke", 0,
	    "nothing_to_compare", 0, "budget", (json_int_t)c.budget);
	if (o->cycle != NULL)
		c.cycle = xstrdup(o->cycle);
	else if ((err = newest_cycle(&c.cycle, &c)) != NULL)
		goto out;
	if (c.cycle == NULL) {
		json_object_set_new(c.report, "nothing_to_compare", json_true());
		json_object_set_new(c.report, "why", json_string("no campaign "
		    "run recorded: nothing to triage"));
		goto done;
	}
	json_object_set_new(c.report, "cycle", json_string(c.cycle));
	if ((err = triage_detect(&c)) != NULL ||
	    (err = store_triage_run_begin(o->store, c.cycle, &c.run_id)) != NULL)
		goto out;
	json_object_set_new(c.report, "triage_run", json_integer(c.run_id));
	remove_scratch(&c, 1);
	json_object_set_new(c.report, "engines", engines_report(&c));
	triage_progress(&c, "settle", NULL, 0, 0, "cycle %s: settling open "
	    "incidents", c.cycle);
	if ((err = triage_incidents_settle(&c)) != NULL ||
	    (err = triage_lift(&c)) != NULL ||
	    (err = search_broken(&c, searches)) != NULL)
		goto out;
	json_object_set(c.report, "searches", searches);
	if ((err = touch_covered(&c, searches)) != NULL)
		goto out;
	nbroken = json_array_size(json_object_get(c.report, "broken"));
	if (nbroken == 0 && json_array_size(json_object_get(c.report,
	    "cannot_compare")) == 0)
		json_object_set_new(c.report, "nothing_broke", json_true());
	else if (nbroken == 0)
		json_object_set_new(c.report, "nothing_to_compare", json_true());
	remove_scratch(&c, 0);
	err = store_triage_run_finish(o->store, c.run_id, c.report);
	if (err != NULL)
		goto out;
done:
	result_fill(res, &c);
out:
	json_decref(searches);
	json_decref(c.report);
	json_decref(c.engines);
	json_decref(c.cycles);
	free(c.cycle);
	return err;
}
