/*
 * resultset.c - build result sets from the store or from snapshot
 * members, check them, and name them by digest. See resultset.h.
 * Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-report.h"
#include "jsonget.h"
#include "store-campaign.h"
#include "util.h"
#include "results/resultset.h"
#include "results/store-results.h"

void
resultset_init(struct resultset *rs)
{
	rs->docs = json_object();
}

void
resultset_free(struct resultset *rs)
{
	json_decref(rs->docs);
	rs->docs = NULL;
}

char *
resultset_doc_text(const json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS |
	    JSON_REAL_PRECISION(10));
	char *t = xasprintf("%s\n", s != NULL ? s : "null");

	free(s);
	return t;
}

/* Move the named members of from into to. */
static void
take(json_t *to, json_t *from, const char *const *keys)
{
	size_t i;

	for (i = 0; keys[i] != NULL; i++)
		json_object_set(to, keys[i], json_object_get(from, keys[i]) ?
		    json_object_get(from, keys[i]) : json_null());
}

/* Logs live under REPO/.warden/logs: publish the path from .warden on,
 * so where the repository happens to be (a user's home, a CI runner's
 * work directory) never enters a result. */
static void
relative_log_path(json_t *sweep, const char *repo_root)
{
	const char *p = json_string_value(json_object_get(sweep, "log_path"));
	const char *w = p != NULL ? strstr(p, "/.warden/") : NULL;
	size_t n = strlen(repo_root);

	if (p != NULL && strncmp(p, repo_root, n) == 0 && p[n] == '/')
		json_object_set_new(sweep, "log_path", json_string(p + n + 1));
	else if (w != NULL)
		json_object_set_new(sweep, "log_path", json_string(w + 1));
}

struct werr *
resultset_add_campaign(struct resultset *rs, struct store *store,
    const struct policy *pol, const char *repo_root, const char *run_id)
{
	static const char *const sweep_keys[] = { "concurrency", "attempt",
	    "outcome", "detail", "served_model", "started", "finished",
	    "total", "completed", "failed", "summary",
	    "peak_system_memory_bytes", "peak_engine_memory_bytes",
	    "system_memory_bytes",
	    "gpu_working_set_hint_bytes",
	    "log_path", "provenance", NULL };
	json_t *run = NULL, *sweeps = NULL, *sw, *doc, *c, *mem;
	struct werr *err;
	char *path;
	size_t i;

	if ((err = store_campaign_run_json(store, run_id, &run)) != NULL)
		return err;
	if (run == NULL)
		return werr_new(WEXIT_INPUT, "no campaign run '%s'", run_id);
	if (strcmp(jsonget_str(run, "state"), "done") != 0) {
		err = werr_new(WEXIT_INPUT, "campaign run '%s' is not finished; "
		    "finish it with 'warden campaign --resume --run-id %s'",
		    run_id, run_id);
		goto out;
	}
	if ((err = store_campaign_sweeps_json(store, run_id, &sweeps)) != NULL)
		goto out;
	json_array_foreach(sweeps, i, sw) {
		path = xasprintf("results/%s/%s/%s_%s.json",
		    jsonget_str(sw, "model"), jsonget_str(sw, "split"),
		    jsonget_str(sw, "engine"), run_id);
		doc = json_object_get(rs->docs, path);
		if (doc == NULL) {
			doc = json_pack("{s:i, s:s, s:s, s:O, s:O, s:O, s:O, "
			    "s:O, s:O, s:[]}", "schema", 1,
			    "kind", "campaign", "run_id", run_id,
			    "machine", json_object_get(run, "machine"),
			    "engine", json_object_get(sw, "engine"),
			    "model", json_object_get(sw, "model"),
			    "split", json_object_get(sw, "split"),
			    "created", json_object_get(run, "created"),
			    "provenance", json_object_get(run, "provenance"),
			    "concurrency_results");
			json_object_set_new(rs->docs, path, doc);
		}
		free(path);
		c = json_object();
		take(c, sw, sweep_keys);
		json_object_set_new(c, "status", json_string(
		    campaign_level_status(c, pol)));
		relative_log_path(c, repo_root);
		if ((err = store_campaign_memory_json(store, json_integer_value(
		    json_object_get(sw, "id")), &mem)) != NULL) {
			json_decref(c);
			goto out;
		}
		json_object_set_new(c, "memory_trace", mem);
		json_array_append_new(json_object_get(doc,
		    "concurrency_results"), c);
	}
out:
	json_decref(run);
	json_decref(sweeps);
	return err;
}

struct werr *
resultset_add_fidelity(struct resultset *rs, struct store *store,
    const char *run_id, const char *ref_engine)
{
	int reference = ref_engine != NULL;
	static const char *const cell_keys[] = { "shots", "outcome", "detail",
	    "served_model", "started", "finished", "total", "scores",
	    "provenance", "predictions", NULL };
	json_t *run = NULL, *cells = NULL, *cl, *doc, *c;
	struct werr *err;
	char *path;
	size_t i;

	if ((err = store_fidelity_run_get(store, run_id, &run)) != NULL)
		return err;
	if (run == NULL)
		return werr_new(WEXIT_INPUT, "no fidelity run '%s'", run_id);
	if (strcmp(jsonget_str(run, "state"), "done") != 0) {
		err = werr_new(WEXIT_INPUT, "fidelity run '%s' is not "
		    "finished; finish it with 'warden fidelity --resume "
		    "--run-id %s'", run_id, run_id);
		goto out;
	}
	if ((err = store_fidelity_cells_json(store, run_id, 1, &cells)) != NULL)
		goto out;
	json_array_foreach(cells, i, cl) {
		if (reference && strcmp(jsonget_str(cl, "engine"),
		    ref_engine) != 0)
			continue;
		path = xasprintf("results/fidelity/%s%s/%s_%s.json",
		    reference ? "reference/" : "", jsonget_str(cl, "model"),
		    jsonget_str(cl, "engine"), run_id);
		doc = json_object_get(rs->docs, path);
		if (doc == NULL) {
			doc = json_pack("{s:i, s:s, s:b, s:s, s:O, s:O, s:O, "
			    "s:O, s:O, s:O, s:O, s:[]}", "schema", 1,
			    "kind", "fidelity", "reference", reference,
			    "run_id", run_id,
			    "run_kind", json_object_get(run, "kind"),
			    "machine", json_object_get(run, "machine"),
			    "engine", json_object_get(cl, "engine"),
			    "model", json_object_get(cl, "model"),
			    "created", json_object_get(run, "created"),
			    "task", json_object_get(run, "task"),
			    "provenance", json_object_get(run, "provenance"),
			    "cells");
			json_object_set_new(rs->docs, path, doc);
		}
		free(path);
		c = json_object();
		take(c, cl, cell_keys);
		json_array_append_new(json_object_get(doc, "cells"), c);
	}
out:
	json_decref(run);
	json_decref(cells);
	return err;
}

/* The path a document must have. */
static char *
doc_path(const json_t *doc)
{
	const char *kind = jsonget_str(doc, "kind");

	if (strcmp(kind, "campaign") == 0)
		return xasprintf("results/%s/%s/%s_%s.json",
		    jsonget_str(doc, "model"), jsonget_str(doc, "split"),
		    jsonget_str(doc, "engine"), jsonget_str(doc, "run_id"));
	if (strcmp(kind, "fidelity") == 0)
		return xasprintf("results/fidelity/%s%s/%s_%s.json",
		    json_is_true(json_object_get(doc,
		    "reference")) ? "reference/" : "",
		    jsonget_str(doc, "model"), jsonget_str(doc, "engine"),
		    jsonget_str(doc, "run_id"));
	return NULL;
}

static int
name_ok(const char *s)
{
	return s[0] != '\0' && s[0] != '.' && strchr(s, '/') == NULL &&
	    strchr(s, '\\') == NULL;
}

struct werr *
resultset_add_doc(struct resultset *rs, const char *path, json_t *doc,
    const char *src)
{
	char *want;
	struct werr *err = NULL;
	json_t *c;
	size_t i;

	if (!json_is_object(doc) || json_integer_value(json_object_get(doc,
	    "schema")) != 1)
		return werr_new(WEXIT_INPUT, "%s: '%s' is not a schema 1 result "
		    "document", src, path);
	if (!name_ok(jsonget_str(doc, "engine")) ||
	    !name_ok(jsonget_str(doc, "model")) ||
	    !name_ok(jsonget_str(doc, "run_id")))
		return werr_new(WEXIT_INPUT, "%s: '%s' has a bad engine, model "
		    "or run id", src, path);
	want = doc_path(doc);
	if (want == NULL || strcmp(want, path) != 0)
		err = werr_new(WEXIT_INPUT, "%s: '%s' should be named '%s' by "
		    "its content", src, path, want ? want : "(unknown kind)");
	else if (json_object_get(rs->docs, path) != NULL)
		err = werr_new(WEXIT_INPUT, "%s: '%s' is already in the result "
		    "set", src, path);
	else {
		/* a snapshot made before the names were one: read its
		 * figures under the glossary's names */
		json_array_foreach(json_object_get(doc, "concurrency_results"),
		    i, c)
			campaign_sweep_names(c);
		json_object_set(rs->docs, path, doc);
	}
	free(want);
	return err;
}

/* Record key -> path in seen; an existing key is an overlap. */
static struct werr *
claim(json_t *seen, char *key, const char *path, const char *what)
{
	json_t *prev = json_object_get(seen, key);
	struct werr *err = NULL;

	if (prev != NULL)
		err = werr_new(WEXIT_INPUT, "overlapping %s %s: in '%s' and "
		    "'%s'", what, key, json_string_value(prev), path);
	else
		json_object_set_new(seen, key, json_string(path));
	free(key);
	return err;
}

struct werr *
resultset_check(const struct resultset *rs)
{
	json_t *seen = json_object(), *doc, *c;
	struct werr *err = NULL;
	const char *path;
	size_t i;

	json_object_foreach(rs->docs, path, doc) {
		if (strcmp(jsonget_str(doc, "kind"), "campaign") == 0) {
			json_array_foreach(json_object_get(doc,
			    "concurrency_results"), i, c)
				if (err == NULL)
					err = claim(seen,
					    xasprintf("%s/%s/%s/"
					    "c%lld on machine %s",
					    jsonget_str(doc, "engine"),
					    jsonget_str(doc, "model"),
					    jsonget_str(doc, "split"),
					    (long long)jsonget_int(c,
					    "concurrency"),
					    jsonget_str(doc, "machine")), path,
					    "campaign cell");
			continue;
		}
		json_array_foreach(json_object_get(doc, "cells"), i, c) {
			if (err != NULL)
				break;
			if (json_is_true(json_object_get(doc, "reference")))
				err = claim(seen,
				    xasprintf("%s/%d-shot",
				    jsonget_str(doc, "model"),
				    (int)json_integer_value(json_object_get(c,
				    "shots"))), path, "reference cell");
			else
				err = claim(seen,
				    xasprintf("%s/%s/%d-shot on machine %s",
				    jsonget_str(doc, "engine"),
				    jsonget_str(doc, "model"),
				    (int)json_integer_value(json_object_get(c,
				    "shots")), jsonget_str(doc, "machine")),
				    path, "fidelity cell");
		}
		if (err != NULL)
			break;
	}
	json_decref(seen);
	return err;
}

void
resultset_digest(const struct resultset *rs, char out[SHA256_HEX_LEN + 1])
{
	struct buf all = BUF_INIT;
	const char **paths;
	char hex[SHA256_HEX_LEN + 1], *text;
	const char *path;
	json_t *doc;
	size_t n = 0, i;

	paths = xcalloc(json_object_size(rs->docs) + 1, sizeof(*paths));
	json_object_foreach(rs->docs, path, doc)
		paths[n++] = path;
	qsort(paths, n, sizeof(*paths), strcmp_ptr);
	for (i = 0; i < n; i++) {
		text = resultset_doc_text(json_object_get(rs->docs, paths[i]));
		sha256_hex(text, strlen(text), hex);
		buf_printf(&all, "%s %s\n", paths[i], hex);
		free(text);
	}
	sha256_hex(all.data != NULL ? all.data : "", all.len, out);
	buf_free(&all);
	free(paths);
}

static const char *
doc_kind(const json_t *doc)
{
	if (strcmp(jsonget_str(doc, "kind"), "fidelity") == 0 &&
	    json_is_true(json_object_get(doc, "reference")))
		return "reference";
	return jsonget_str(doc, "kind");
}

json_t *
resultset_docs(const struct resultset *rs, const char *kind)
{
	const char **paths;
	const char *path;
	json_t *doc, *out = json_array();
	size_t n = 0, i;

	paths = xcalloc(json_object_size(rs->docs) + 1, sizeof(*paths));
	json_object_foreach(rs->docs, path, doc)
		if (strcmp(doc_kind(doc), kind) == 0)
			paths[n++] = path;
	qsort(paths, n, sizeof(*paths), strcmp_ptr);
	for (i = 0; i < n; i++)
		json_array_append(out, json_object_get(rs->docs, paths[i]));
	free(paths);
	return out;
}

json_t *
resultset_runs(const struct resultset *rs)
{
	static const char *const kinds[] = { "campaign", "fidelity",
	    "reference", NULL };
	json_t *out = json_object(), *list, *docs, *doc, *v;
	size_t k, i, j;

	for (k = 0; kinds[k] != NULL; k++) {
		list = json_array();
		docs = resultset_docs(rs, kinds[k]);
		json_array_foreach(docs, i, doc) {
			json_array_foreach(list, j, v)
				if (strcmp(json_string_value(v),
				    jsonget_str(doc, "run_id")) == 0)
					break;
			if (j == json_array_size(list))
				json_array_append_new(list,
				    json_string(jsonget_str(doc, "run_id")));
		}
		json_decref(docs);
		json_object_set_new(out, kinds[k], list);
	}
	return out;
}
