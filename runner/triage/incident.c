/*
 * incident.c - the searches of a triage run become incidents: one per
 * culprit (a dependency, a combination of changes, an engine's own
 * release), or one per engine triage could not explain; engines already
 * explained by an open incident are counted there; confirmed
 * dependencies get their pin proposed (incident-settle.c settles them).
 * See triage-private.h. Never prints.
 *
 * An incident's record (JSON, doc/triage.md "Incidents"): kind, culprits
 * [{package, from, to}], engines, healthy_with (engines that took the
 * same release and stayed healthy), per_engine {ENGINE: {search, runs,
 * bound, changes, smoke, good_cycle, good_manifest, bad_manifest,
 * failing_cells, versions, from}}, proposals [{note, pins, review,
 * gate}], lift {tried, version, state, review, gate}.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "environment.h"
#include "manifest.h"
#include "review.h"
#include "store-review.h"
#include "store-triage.h"
#include "store-update.h"
#include "triage-private.h"
#include "util.h"

/* States in which triage keeps an incident open (all but fixed). */
static int
is_open(const char *state)
{
	return state != NULL && strcmp(state, "fixed") != 0;
}

/* Is s one of the strings of array a? */
static int
has(const json_t *a, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach((json_t *)a, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

/* The identity of a culprit: "dependency:shared=2.0", ... Caller frees. */
static char *
culprit_key(const char *kind, const char *engine, const json_t *culprits)
{
	struct buf b = BUF_INIT;
	json_t *x;
	size_t i;

	buf_printf(&b, "%s:", kind);
	if (strcmp(kind, "dependency") != 0 && strcmp(kind, "combination") != 0)
		buf_printf(&b, "%s:", engine);
	json_array_foreach((json_t *)culprits, i, x)
		if (json_is_string(json_object_get(x, "commit")))
			buf_printf(&b, "%s%s", i ? "+" : "", json_string_value(
			    json_object_get(x, "commit")));
		else
			buf_printf(&b, "%s%s=%s", i ? "+" : "",
			    json_string_value(json_object_get(x, "package")),
			    json_string_value(json_object_get(x, "to")) ?
			    json_string_value(json_object_get(x, "to")) : "-");
	return buf_detach(&b);
}

/* The incident kind of a search's kind. */
static const char *
incident_kind(const char *search)
{
	if (strcmp(search, "single") == 0)
		return "dependency";
	if (strcmp(search, "combination") == 0)
		return "combination";
	if (strcmp(search, "own_release") == 0 ||
	    strcmp(search, "own_release_unconfirmed") == 0)
		return "own_release";
	if (strcmp(search, "commit") == 0)
		return "change";
	return "unexplained";
}

/* The healthy engines of this cycle that took package to version to. */
static json_t *
healthy_with(const struct triage_ctx *c, const json_t *culprits)
{
	json_t *out = json_array(), *e, *x, *ch;
	const char *engine, *pkg, *to, *nv;
	size_t i;
	int all;

	json_object_foreach(c->engines, engine, e) {
		if (strcmp(json_string_value(json_object_get(e, "status")),
		    "healthy") != 0)
			continue;
		all = json_array_size(culprits) > 0;
		json_array_foreach((json_t *)culprits, i, x) {
			pkg = json_string_value(json_object_get(x, "package"));
			to = json_string_value(json_object_get(x, "to"));
			if (pkg == NULL) {
				/* a commit: it changed this engine alone */
				all = 0;
				break;
			}
			ch = json_object_get(json_object_get(e, "changes"), pkg);
			nv = json_string_value(json_object_get(ch, "new"));
			if (to == NULL || nv == NULL || strcmp(to, nv) != 0)
				all = 0;
		}
		if (all)
			json_array_append_new(out, json_string(engine));
	}
	return out;
}

/* v, or null when it is NULL (for json_object_set). */
static json_t *
or_null(json_t *v)
{
	return v != NULL ? v : json_null();
}

/* What the incident keeps of one engine. */
static json_t *
engine_entry(const struct triage_ctx *c, const char *engine, const json_t *s)
{
	json_t *e = json_object_get(c->engines, engine), *from = json_object();
	json_t *good = json_object_get(e, "good_manifest");
	json_t *bad = json_object_get(e, "manifest"), *x, *o;
	size_t i;

	json_array_foreach(json_object_get(s, "culprits"), i, x)
		if (json_is_string(json_object_get(x, "package")))
			json_object_set(from, json_string_value(json_object_get(x,
			    "package")), json_object_get(x, "from"));
	o = json_pack("{s:s, s:o}", "cycle", c->cycle, "from", from);
	json_object_set(o, "search", or_null(json_object_get(s, "kind")));
	json_object_set_new(o, "runs", json_integer(json_integer_value(
	    json_object_get(s, "runs"))));
	json_object_set(o, "bound", or_null(json_object_get(s, "bound")));
	json_object_set(o, "changes", or_null(json_object_get(s, "changes")));
	json_object_set(o, "smoke", or_null(json_object_get(s, "smoke")));
	json_object_set(o, "good_cycle", or_null(json_object_get(e,
	    "good_cycle")));
	json_object_set(o, "good_manifest", or_null(json_object_get(good, "id")));
	json_object_set(o, "bad_manifest", or_null(json_object_get(bad, "id")));
	json_object_set(o, "failing_cells", or_null(json_object_get(e,
	    "failing_cells")));
	json_object_set_new(o, "versions", json_pack("{s:O, s:O}",
	    "before", or_null(json_object_get(good, "packages")),
	    "after", or_null(json_object_get(bad, "packages"))));
	if (json_object_get(s, "why") != NULL)
		json_object_set(o, "why", json_object_get(s, "why"));
	if (json_array_size(json_object_get(e, "environment")) > 0)
		json_object_set(o, "environment", json_object_get(e,
		    "environment"));
	return o;
}

/* The why of an unexplained group, with what else changed for its first
 * engine that no smoke run can test (the OS, the toolchain, a model's
 * weights), as a new string; other kinds: their why. */
static json_t *
group_why(const char *kind, const json_t *first, const json_t *per_engine)
{
	const json_t *why = json_object_get(first, "why"), *e, *env = NULL;
	struct buf b = BUF_INIT;
	const char *engine;
	json_t *out;

	json_object_foreach((json_t *)per_engine, engine, e)
		if (env == NULL && json_array_size(json_object_get(e,
		    "environment")) > 0)
			env = json_object_get(e, "environment");
	if (strcmp(kind, "unexplained") != 0 || env == NULL)
		return why != NULL ? json_incref((json_t *)why) : json_null();
	buf_puts(&b, json_string_value(why) ? json_string_value(why) :
	    "no culprit found");
	buf_puts(&b, "; changed meanwhile, which no smoke run can test: ");
	environment_text(&b, env);
	out = json_string(buf_cstr(&b));
	buf_free(&b);
	return out;
}

char *
triage_engine_names(const json_t *engines)
{
	struct buf b = BUF_INIT;
	size_t i, n = json_array_size(engines);

	for (i = 0; i < n; i++)
		buf_printf(&b, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ",
		    json_string_value(json_array_get(engines, i)));
	return buf_detach(&b);
}

/* "commit 1a2b3c4 (review 3: "subject")" */
static void
commit_text(struct buf *b, const json_t *x)
{
	json_int_t review = json_integer_value(json_object_get(x, "review"));

	buf_printf(b, "commit %.7s (", json_string_value(json_object_get(x,
	    "commit")));
	if (review > 0)
		buf_printf(b, "review %lld: ", (long long)review);
	buf_printf(b, "\"%s\")", json_string_value(json_object_get(x,
	    "summary")));
}

/* "shared 1.0 → 2.0 (and tok 1.0 → 1.1)", or commit_text(). */
static void
culprits_text(struct buf *b, const json_t *culprits)
{
	json_t *x;
	size_t i;

	json_array_foreach((json_t *)culprits, i, x)
		if (json_is_string(json_object_get(x, "commit"))) {
			buf_puts(b, i ? " together with " : "");
			commit_text(b, x);
		} else
			buf_printf(b, "%s%s %s → %s", i ? " together with " : "",
			    json_string_value(json_object_get(x, "package")),
			    json_string_value(json_object_get(x, "from")) ?
			    json_string_value(json_object_get(x, "from")) : "(none)",
			    json_string_value(json_object_get(x, "to")) ?
			    json_string_value(json_object_get(x, "to")) : "(removed)");
}

static char *
summary_of(const char *kind, const json_t *culprits, const json_t *engines,
    const json_t *why)
{
	struct buf b = BUF_INIT;
	char *who = triage_engine_names(engines);

	if (strcmp(kind, "own_release") == 0) {
		buf_printf(&b, "%s broke with its own release ", who);
		culprits_text(&b, culprits);
	} else if (strcmp(kind, "unexplained") == 0) {
		buf_printf(&b, "%s broke: %s", who, json_string_value(why) ?
		    json_string_value(why) : "no culprit found");
	} else {
		culprits_text(&b, culprits);
		buf_printf(&b, " broke %s", who);
	}
	free(who);
	return buf_detach(&b);
}

/* "shared back at 1.0" or "shared 2.0" for each culprit, joined. */
static void
culprit_versions(struct buf *b, const json_t *culprits, int back)
{
	json_t *x;
	size_t i, n = json_array_size(culprits);
	const char *v;

	json_array_foreach((json_t *)culprits, i, x) {
		v = json_string_value(json_object_get(x, back ? "from" : "to"));
		buf_printf(b, "%s%s%s%s", i == 0 ? "" : i + 1 == n ? " and " :
		    ", ", json_string_value(json_object_get(x, "package")),
		    back ? " back at " : " ", v != NULL ? v : "(none)");
	}
}

/* " (smoke runs: mlxlm 3, vmetal 2)" */
static void
runs_text(struct buf *b, const json_t *per_engine)
{
	const char *engine;
	json_t *e;
	int first = 1;

	buf_puts(b, " (smoke runs:");
	json_object_foreach((json_t *)per_engine, engine, e) {
		buf_printf(b, "%s %s %lld", first ? "" : ",", engine,
		    (long long)json_integer_value(json_object_get(e, "runs")));
		first = 0;
	}
	buf_puts(b, ")");
}

/* The state a new incident opens in, and why. Caller frees *reason. */
static const char *
open_state(const char *search, const json_t *s, const json_t *per_engine,
    char **reason)
{
	struct buf b = BUF_INIT;
	const char *why = json_string_value(json_object_get(s, "why"));
	const json_t *culprits = json_object_get(s, "culprits");
	const json_t *x;
	const char *state;

	if (strcmp(search, "single") == 0 || strcmp(search, "combination") == 0) {
		state = "confirmed";
		buf_puts(&b, "confirmed by pinning back: healthy with ");
		culprit_versions(&b, culprits, 1);
		buf_puts(&b, ", failing with ");
		culprit_versions(&b, culprits, 0);
		buf_puts(&b, json_array_size(culprits) > 1 ? " together, "
		    "healthy with any one of them alone" : " alone");
		runs_text(&b, per_engine);
	} else if (strcmp(search, "commit") == 0) {
		state = "confirmed";
		x = json_array_get(culprits, 0);
		buf_printf(&b, "confirmed by smoke runs of official's trees: "
		    "healthy at %.7s, its parent, failing at %.7s",
		    json_string_value(json_object_get(x, "parent")),
		    json_string_value(json_object_get(x, "commit")));
		runs_text(&b, per_engine);
	} else if (strcmp(search, "own_release") == 0) {
		state = "upstream";
		buf_puts(&b, "broken by its own release ");
		culprits_text(&b, culprits);
		buf_puts(&b, ", confirmed by pinning it back: skipped until a "
		    "new release");
	} else if (strcmp(search, "unconfirmed") == 0 ||
	    strcmp(search, "budget") == 0) {
		state = "investigating";
		buf_printf(&b, "%s; smallest failing set so far: ", why ? why :
		    search);
		culprits_text(&b, culprits);
	} else {
		state = "untriaged";
		buf_puts(&b, why ? why : "no culprit found");
	}
	*reason = buf_detach(&b);
	return state;
}

/* The open incident of key, or 0; *inc (new reference) its row. */
static struct werr *
find_open(int64_t *id, json_t **inc, struct store *store, const char *key)
{
	json_t *all = NULL, *row;
	struct werr *err;
	size_t i;

	*id = 0;
	*inc = NULL;
	if ((err = store_triage_incidents(store, NULL, &all)) != NULL)
		return err;
	json_array_foreach(all, i, row)
		if (strcmp(json_string_value(json_object_get(row, "key")), key) ==
		    0 && is_open(json_string_value(json_object_get(row, "state")))) {
			*id = json_integer_value(json_object_get(row, "id"));
			json_decref(*inc);
			*inc = json_incref(row);
		}
	json_decref(all);
	return NULL;
}

/* A group of engines with one culprit (or one engine alone). */
struct group {
	char *key;
	const char *kind;	/* incident kind */
	const char *search;	/* the first engine's search kind */
	const json_t *first;	/* the first engine's search */
	json_t *engines;
	json_t *per_engine;
};

static struct werr *
open_group(struct triage_ctx *c, struct group *g)
{
	struct store_incident_save sv;
	json_t *inc = NULL, *rec = NULL, *added = json_array(), *v, *first;
	json_t *why = group_why(g->kind, g->first, g->per_engine);
	const json_t *culprits = json_object_get(g->first, "culprits");
	const char *engine, *state;
	struct werr *err;
	char *summary = NULL, *reason = NULL, *who;
	int64_t id;

	if ((err = find_open(&id, &inc, c->o->store, g->key)) != NULL)
		goto out;
	memset(&sv, 0, sizeof(sv));
	sv.cycle = c->cycle;
	if (id > 0) {
		/* seen again: add the engines it did not name */
		rec = json_deep_copy(json_object_get(inc, "record"));
		json_object_foreach(g->per_engine, engine, v) {
			if (!has(json_object_get(rec, "engines"), engine)) {
				json_array_append_new(json_object_get(rec,
				    "engines"), json_string(engine));
				json_array_append_new(added, json_string(engine));
			}
			json_object_set(json_object_get(rec, "per_engine"),
			    engine, v);
		}
		who = triage_engine_names(added);
		summary = summary_of(g->kind, json_object_get(rec, "culprits"),
		    json_object_get(rec, "engines"), why);
		reason = json_array_size(added) > 0 ? xasprintf("seen again in "
		    "cycle %s; engines added: %s", c->cycle, who) :
		    xasprintf("seen again in cycle %s", c->cycle);
		free(who);
		sv.id = id;
		sv.summary = summary;
		sv.record = rec;
		sv.reason = reason;
		sv.journal_kind = "incident.updated";
		triage_report_incident(c, "updated", id);
	} else {
		rec = json_pack("{s:s, s:O, s:O, s:o, s:O}", "kind", g->kind,
		    "culprits", culprits, "engines", g->engines,
		    "healthy_with", healthy_with(c, culprits),
		    "per_engine", g->per_engine);
		json_array_extend(added, g->engines);
		summary = summary_of(g->kind, culprits, g->engines, why);
		first = json_deep_copy(g->first);
		json_object_set(first, "why", why);
		state = open_state(g->search, first, g->per_engine, &reason);
		json_decref(first);
		sv.kind = g->kind;
		sv.key = g->key;
		sv.summary = summary;
		sv.record = rec;
		sv.state = state;
		sv.who = TRIAGE_WHO;
		sv.reason = reason;
		sv.journal_kind = "incident.opened";
	}
	if ((err = store_triage_incident_save(c->o->store, &sv, &id)) != NULL)
		goto out;
	if (sv.id == 0)
		triage_report_incident(c, "opened", id);
	err = triage_incident_propose_missing(c, id);
out:
	json_decref(inc);
	json_decref(rec);
	json_decref(added);
	json_decref(why);
	free(summary);
	free(reason);
	return err;
}

static struct group *
group_of(struct group **v, size_t *n, const char *key)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i].key, key) == 0)
			return &(*v)[i];
	return NULL;
}

struct werr *
triage_incidents_open(struct triage_ctx *c, const json_t *searches)
{
	struct group *groups = NULL, *g;
	struct werr *err = NULL;
	const char *engine, *search, *kind;
	size_t n = 0, i;
	json_t *s;
	char *key;

	json_object_foreach((json_t *)searches, engine, s) {
		search = json_string_value(json_object_get(s, "kind"));
		kind = incident_kind(search);
		key = culprit_key(kind, engine, json_object_get(s, "culprits"));
		if (strcmp(kind, "unexplained") == 0) {
			free(key);
			key = xasprintf("unexplained:%s:%s", engine, c->cycle);
		}
		if ((g = group_of(&groups, &n, key)) == NULL) {
			groups = xrealloc(groups, (n + 1) * sizeof(*groups));
			g = &groups[n++];
			memset(g, 0, sizeof(*g));
			g->key = key;
			g->kind = kind;
			g->search = search;
			g->first = s;
			g->engines = json_array();
			g->per_engine = json_object();
		} else
			free(key);
		json_array_append_new(g->engines, json_string(engine));
		json_object_set_new(g->per_engine, engine, engine_entry(c, engine,
		    s));
	}
	for (i = 0; i < n && err == NULL; i++)
		err = open_group(c, &groups[i]);
	for (i = 0; i < n; i++) {
		free(groups[i].key);
		json_decref(groups[i].engines);
		json_decref(groups[i].per_engine);
	}
	free(groups);
	return err;
}

/* Are every culprit's new versions still in the engine's manifest? */
static int
still_there(const json_t *culprits, const json_t *manifest)
{
	const char *pkg, *to, *now;
	json_t *x;
	size_t i;

	if (json_array_size(culprits) == 0)
		return 0;
	json_array_foreach((json_t *)culprits, i, x) {
		pkg = json_string_value(json_object_get(x, "package"));
		to = json_string_value(json_object_get(x, "to"));
		now = json_string_value(json_object_get(json_object_get(manifest,
		    "packages"), pkg));
		if (to == NULL || now == NULL || strcmp(to, now) != 0)
			return 0;
	}
	return 1;
}

/* Is the culprit commit in the history the engine ran from now? */
static int
commit_still_in(const struct triage_ctx *c, const json_t *culprits,
    const json_t *e)
{
	const char *culprit = json_string_value(json_object_get(
	    json_array_get(culprits, 0), "commit"));
	const char *now = json_string_value(json_object_get(e, "commit"));
	git_oid a, b;

	if (culprit == NULL || now == NULL || git_oid_fromstr(&a, culprit) < 0 ||
	    git_oid_fromstr(&b, now) < 0)
		return 0;
	return git_oid_equal(&a, &b) ||
	    git_graph_descendant_of(c->o->repo, &b, &a) == 1;
}

struct werr *
triage_incident_covering(int64_t *id, struct triage_ctx *c, const char *engine)
{
	json_t *all = NULL, *row, *rec, *mine, *e = json_object_get(c->engines,
	    engine);
	const char *kind;
	struct werr *err;
	size_t i;

	*id = 0;
	if ((err = store_triage_incidents(c->o->store, NULL, &all)) != NULL)
		return err;
	json_array_foreach(all, i, row) {
		rec = json_object_get(row, "record");
		if (!is_open(json_string_value(json_object_get(row, "state"))) ||
		    !has(json_object_get(rec, "engines"), engine))
			continue;
		mine = json_object_get(json_object_get(rec, "per_engine"), engine);
		kind = json_string_value(json_object_get(row, "kind"));
		if (strcmp(kind, "unexplained") == 0 ? json_equal(
		    json_object_get(mine, "bad_manifest"), json_object_get(
		    json_object_get(e, "manifest"), "id")) :
		    strcmp(kind, "change") == 0 ? commit_still_in(c,
		    json_object_get(rec, "culprits"), e) :
		    still_there(json_object_get(rec, "culprits"),
		    json_object_get(e, "manifest"))) {
			*id = json_integer_value(json_object_get(row, "id"));
			break;
		}
	}
	json_decref(all);
	return NULL;
}
