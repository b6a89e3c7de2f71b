/*
 * fidelity-table.c - fidelity rows and the comparison with the
 * reference. See fidelity-table.h. Pure: no I/O.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "util.h"
#include "results/fidelity-score.h"
#include "results/fidelity-table.h"

static int
label_index(const json_t *labels, const char *s)
{
	const json_t *v;
	size_t i;

	json_array_foreach(labels, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return (int)i;
	return -1;
}

/* The reference document and cell of (model, shots), or NULL. */
static const json_t *
reference_cell(const json_t *refs, const char *model, json_int_t shots,
    const json_t **doc_out)
{
	const json_t *doc, *c;
	size_t i, j;

	json_array_foreach(refs, i, doc) {
		if (strcmp(jsonget_str(doc, "model"), model) != 0)
			continue;
		json_array_foreach(json_object_get(doc, "cells"), j, c)
			if (json_integer_value(json_object_get(c, "shots")) ==
			    shots) {
				*doc_out = doc;
				return c;
			}
	}
	return NULL;
}

/* Did the cell's run end complete (every item asked, the engine up)? An
 * imported reference is: it answers every item, a failed answer (null)
 * counting as wrong, never dropped. */
static int
complete(const json_t *cell)
{
	return strcmp(jsonget_str(cell, "outcome"), "complete") == 0 ||
	    strcmp(jsonget_str(cell, "outcome"), "imported") == 0;
}

/* Compare a cell with the reference cell over their common items. */
static json_t *
compare(const json_t *doc, const json_t *cell, const json_t *rdoc,
    const json_t *rcell)
{
	const json_t *labels = json_object_get(json_object_get(doc, "task"),
	    "labels");
	const json_t *preds = json_object_get(cell, "predictions");
	const json_t *rpreds = json_object_get(rcell, "predictions");
	const json_t *p, *q;
	json_t *byid, *out;
	struct fidelity_scores a, b;
	int *gold, *pa, *pb;
	size_t i, n = 0, agree = 0, nl = json_array_size(labels);
	double agreement;

	if (strcmp(jsonget_str(json_object_get(doc, "task"), "sha256"),
	    jsonget_str(json_object_get(rdoc, "task"), "sha256")) != 0)
		return json_pack("{s:s, s:s, s:s}", "run_id",
		    jsonget_str(rdoc, "run_id"), "engine",
		    jsonget_str(rdoc, "engine"), "error",
		    "the reference was measured on another task");
	if (!complete(cell))
		/* an engine that crashed or hung answered only some items: no
		 * figure, and not a distance from the reference */
		return json_pack("{s:s, s:s, s:O?, s:n, s:n, s:n, s:s}",
		    "run_id", jsonget_str(rdoc, "run_id"), "engine",
		    jsonget_str(rdoc, "engine"), "weighted_f1",
		    json_object_get(json_object_get(rcell, "scores"),
		    "weighted_f1"), "this_f1", "delta_pp", "agreement",
		    "not_measured", jsonget_str(cell, "outcome"));
	byid = json_object();
	json_array_foreach(rpreds, i, q)
		json_object_set(byid, json_string_value(json_array_get(q, 0)),
		    (json_t *)q);
	gold = xcalloc(json_array_size(preds) + 1, sizeof(*gold));
	pa = xcalloc(json_array_size(preds) + 1, sizeof(*pa));
	pb = xcalloc(json_array_size(preds) + 1, sizeof(*pb));
	json_array_foreach(preds, i, p) {
		q = json_object_get(byid, json_string_value(json_array_get(p, 0)));
		if (q == NULL)
			continue;
		gold[n] = label_index(labels, json_string_value(json_array_get(p,
		    1)));
		pa[n] = label_index(labels, json_string_value(json_array_get(p,
		    2)));
		pb[n] = label_index(labels, json_string_value(json_array_get(q,
		    2)));
		n++;
	}
	fidelity_score(&a, gold, pa, n, nl);
	fidelity_score(&b, gold, pb, n, nl);
	agreement = fidelity_agreement(pa, pb, n, &agree);
	out = json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:I}", "run_id",
	    jsonget_str(rdoc, "run_id"), "engine", jsonget_str(rdoc, "engine"),
	    "compared", (json_int_t)n, "weighted_f1", b.weighted_f1, "this_f1",
	    a.weighted_f1, "delta_pp", (a.weighted_f1 - b.weighted_f1) * 100.0,
	    "agreement", agreement, "agree", (json_int_t)agree);
	fidelity_scores_free(&a);
	fidelity_scores_free(&b);
	free(gold);
	free(pa);
	free(pb);
	json_decref(byid);
	return out;
}

json_t *
fidelity_table(const json_t *docs, const json_t *refs)
{
	const json_t *doc, *cell, *sc, *rdoc = NULL, *rcell;
	json_t *rows = json_array(), *row;
	size_t i, j;

	json_array_foreach(docs, i, doc) {
		json_array_foreach(json_object_get(doc, "cells"), j, cell) {
			sc = json_object_get(cell, "scores");
			row = json_pack("{s:s, s:s, s:O?, s:s, s:s, s:O?, s:O?, "
			    "s:O?, s:O?, s:O?, s:O?, s:O?}", "engine",
			    jsonget_str(doc, "engine"), "model",
			    jsonget_str(doc, "model"), "shots",
			    json_object_get(cell, "shots"), "machine",
			    jsonget_str(doc, "machine"), "run_id",
			    jsonget_str(doc, "run_id"), "outcome",
			    json_object_get(cell, "outcome"), "items",
			    json_object_get(sc, "items"), "weighted_f1",
			    json_object_get(sc, "weighted_f1"), "macro_f1",
			    json_object_get(sc, "macro_f1"), "accuracy",
			    json_object_get(sc, "accuracy"), "parse_failures",
			    json_object_get(sc, "parse_failures"),
			    "request_failures", json_object_get(sc,
			    "request_failures"));
			if (!complete(cell)) {
				/* no success is not a score of zero */
				json_object_set_new(row, "weighted_f1",
				    json_null());
				json_object_set_new(row, "macro_f1", json_null());
				json_object_set_new(row, "accuracy", json_null());
			}
			rcell = reference_cell(refs, jsonget_str(doc, "model"),
			    json_integer_value(json_object_get(cell, "shots")),
			    &rdoc);
			json_object_set_new(row, "reference", rcell != NULL ?
			    compare(doc, cell, rdoc, rcell) : json_null());
			json_array_append_new(rows, row);
		}
	}
	return rows;
}
