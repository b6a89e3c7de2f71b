/*
 * fidelity-import.c - import a reference engine's answers to the
 * fidelity task (e.g. vLLM on an A100, run elsewhere) as a run of kind
 * "imported", scored by the same parse rule as a measured run, and mark
 * it as the reference. See fidelity.h for the file format.
 *
 * An answer file that does not cover the task, names an unknown item or
 * repeats one is refused with its file and line before anything is
 * stored. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-input.h"
#include "schema.h"
#include "util.h"
#include "results/fidelity.h"
#include "results/fidelity-score.h"
#include "results/store-results.h"

/* The answers of one (model, shots): answer[i] for task item i. */
struct group {
	char *model;
	int shots;
	char **answer;
	int *have;		/* 1 answered (answer may be NULL: failed) */
	int *line;		/* where each came from */
};

struct import {
	const struct fidelity_task *t;
	struct group *g;
	size_t ng;
};

static struct group *
group_of(struct import *im, const char *model, int shots)
{
	struct group *g;
	size_t i;

	for (i = 0; i < im->ng; i++)
		if (strcmp(im->g[i].model, model) == 0 && im->g[i].shots == shots)
			return &im->g[i];
	im->g = xrealloc(im->g, (im->ng + 1) * sizeof(*im->g));
	g = &im->g[im->ng++];
	g->model = xstrdup(model);
	g->shots = shots;
	g->answer = xcalloc(im->t->nitems + 1, sizeof(*g->answer));
	g->have = xcalloc(im->t->nitems + 1, sizeof(*g->have));
	g->line = xcalloc(im->t->nitems + 1, sizeof(*g->line));
	return g;
}

static void
import_free(struct import *im)
{
	size_t i, j;

	for (i = 0; i < im->ng; i++) {
		for (j = 0; j < im->t->nitems; j++)
			free(im->g[i].answer[j]);
		free(im->g[i].answer);
		free(im->g[i].have);
		free(im->g[i].line);
		free(im->g[i].model);
	}
	free(im->g);
}

static struct werr *
parse_line(struct import *im, const struct policy *pol, const char *line,
    const char *file, int lineno)
{
	json_error_t jerr;
	json_t *o, *model, *shots, *id, *answer;
	struct werr *err = NULL;
	struct group *g;
	long i = -1;

	if ((o = json_loads(line, 0, &jerr)) == NULL)
		return werr_at(file, lineno, jerr.column, NULL, "not JSON: %s",
		    jerr.text);
	model = json_object_get(o, "model");
	shots = json_object_get(o, "shots");
	id = json_object_get(o, "id");
	answer = json_object_get(o, "answer");
	if (!json_is_string(model))
		err = werr_at(file, lineno, 0, "model", "must be a string");
	else if (!strlist_contains(&pol->models, json_string_value(model)))
		err = werr_at(file, lineno, 0, "model", "'%s' is not a model of "
		    "the policy", json_string_value(model));
	else if (!json_is_integer(shots) || json_integer_value(shots) < 0 ||
	    json_integer_value(shots) > (json_int_t)im->t->nexemplars)
		err = werr_at(file, lineno, 0, "shots", "must be an integer "
		    "from 0 to %zu", im->t->nexemplars);
	else if (!json_is_string(id))
		err = werr_at(file, lineno, 0, "id", "must be a string");
	else if ((i = fidelity_task_item_index(im->t,
	    json_string_value(id))) < 0)
		err = werr_at(file, lineno, 0, "id", "'%s' is not an item of "
		    "the task", json_string_value(id));
	else if (answer == NULL || !(json_is_string(answer) ||
	    json_is_null(answer)))
		err = werr_at(file, lineno, 0, "answer", "must be a string, or "
		    "null for a failed request");
	if (err != NULL)
		goto out;
	g = group_of(im, json_string_value(model),
	    (int)json_integer_value(shots));
	if (g->have[i]) {
		err = werr_at(file, lineno, 0, "id", "'%s' was answered for "
		    "%s %d-shot already on line %d", json_string_value(id),
		    g->model, g->shots, g->line[i]);
		goto out;
	}
	g->have[i] = 1;
	g->line[i] = lineno;
	if (json_is_string(answer))
		g->answer[i] = xstrdup(json_string_value(answer));
out:
	json_decref(o);
	return err;
}

static struct werr *
read_answers(struct import *im, const struct policy *pol, const char *path,
    const char *file, char *digest)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	char *line, *next;
	int lineno = 0;
	size_t i, j;

	if ((err = schema_read_input(&b, path, FILE_MAX_DATA)) != NULL)
		return err;
	sha256_hex(b.data, b.len, digest);
	for (line = b.len ? b.data : NULL; line != NULL && *line != '\0' &&
	    err == NULL; line = next) {
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (*line != '\0')
			err = parse_line(im, pol, line, file, lineno);
	}
	if (err == NULL && im->ng == 0)
		err = werr_at(file, 0, 0, NULL, "holds no answers");
	for (i = 0; err == NULL && i < im->ng; i++)
		for (j = 0; j < im->t->nitems; j++)
			if (!im->g[i].have[j]) {
				err = werr_at(file, 0, 0, NULL, "%s %d-shot does "
				    "not answer item '%s' (a reference must "
				    "answer every item; null for a failed "
				    "request)", im->g[i].model,
				    im->g[i].shots, im->t->items[j].id);
				break;
			}
	buf_free(&b);
	return err;
}

/* Score and store one group as a cell of run_id. */
static struct werr *
store_group(struct store *store, const struct fidelity_task *t,
    const char *run_id, const char *engine, int seq, const struct group *g)
{
	struct store_fidelity_prediction *preds;
	struct store_fidelity_cell_result res;
	struct store_fidelity_cell_key key;
	enum fidelity_parse *how;
	int *gold, *pred;
	struct werr *err;
	int64_t cell_id;
	size_t i;

	memset(&key, 0, sizeof(key));
	key.run_id = run_id;
	key.seq = seq;
	key.engine = engine;
	key.model = g->model;
	key.shots = g->shots;
	key.total = t->nitems;
	key.provenance = json_pack("{s:s}", "task_sha256", t->digest);
	err = store_fidelity_cell_begin(store, &key, &cell_id);
	json_decref(key.provenance);
	if (err != NULL)
		return err;
	preds = xcalloc(t->nitems + 1, sizeof(*preds));
	how = xcalloc(t->nitems + 1, sizeof(*how));
	gold = xcalloc(t->nitems + 1, sizeof(*gold));
	pred = xcalloc(t->nitems + 1, sizeof(*pred));
	for (i = 0; i < t->nitems; i++) {
		gold[i] = fidelity_task_label_index(t, t->items[i].label);
		pred[i] = -1;
		how[i] = FIDELITY_FAILED;
		if (g->answer[i] != NULL)
			pred[i] = fidelity_parse_answer(&how[i],
			    (const char *const *)t->labels, t->nlabels,
			    g->answer[i], strlen(g->answer[i]));
		preds[i].item_id = t->items[i].id;
		preds[i].gold = t->items[i].label;
		preds[i].predicted = pred[i] >= 0 ? t->labels[pred[i]] : "none";
		preds[i].parse = fidelity_parse_name(how[i]);
		preds[i].outcome = g->answer[i] != NULL ? "ok" : "failed";
		preds[i].answer = g->answer[i];
	}
	memset(&res, 0, sizeof(res));
	res.outcome = "imported";
	res.scores = fidelity_cell_scores((const char *const *)t->labels,
	    t->nlabels, gold, pred, how, t->nitems);
	res.predictions = preds;
	res.n = t->nitems;
	err = store_fidelity_cell_finish(store, cell_id, &res);
	json_decref(res.scores);
	free(preds);
	free(how);
	free(gold);
	free(pred);
	return err;
}

struct werr *
fidelity_import_reference(struct store *store, const char *repo_root,
    const struct policy *policy, const struct fidelity_task *task,
    const char *path, const char *display, const char *engine,
    const char *run_id, char **run_id_out)
{
	struct import im = { task, NULL, 0 };
	char digest[SHA256_HEX_LEN + 1], machine[17];
	json_t *grid = NULL, *prov = NULL, *tj = NULL;
	struct werr *err;
	char *id = NULL;
	size_t i;

	*run_id_out = NULL;
	if ((err = read_answers(&im, policy, path, display, digest)) != NULL)
		goto out;
	campaign_machine_id(machine);
	id = run_id ? xstrdup(run_id) : fidelity_new_run_id(machine);
	grid = json_pack("{s:[], s:I, s:s}", "points", "limit", (json_int_t)0,
	    "engine", engine);
	for (i = 0; i < im.ng; i++)
		json_array_append_new(json_object_get(grid, "points"), json_pack(
		    "{s:s, s:s, s:i}", "engine", engine, "model", im.g[i].model,
		    "shots", im.g[i].shots));
	prov = provenance_run(repo_root, policy->path, machine, 0);
	json_object_set_new(prov, "task_sha256", json_string(task->digest));
	json_object_set_new(prov, "imported_from", json_string(display));
	json_object_set_new(prov, "imported_sha256", json_string(digest));
	tj = fidelity_task_json(task);
	if ((err = store_fidelity_run_create(store, id, "imported", "imported",
	    tj, grid, prov)) != NULL)
		goto out;
	for (i = 0; i < im.ng && err == NULL; i++)
		err = store_group(store, task, id, engine, (int)i, &im.g[i]);
	if (err == NULL)
		err = store_fidelity_run_finish(store, id);
	if (err == NULL)
		err = store_fidelity_mark_reference(store, id, engine);
	if (err == NULL) {
		*run_id_out = id;
		id = NULL;
	}
out:
	free(id);
	json_decref(grid);
	json_decref(prov);
	json_decref(tj);
	import_free(&im);
	return err;
}
