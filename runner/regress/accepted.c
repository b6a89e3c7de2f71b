/*
 * accepted.c - regressions a maintainer accepted at approval: a review
 * approved with --accept-regression (its `review.approved` journal entry
 * has "accepted_regression": {"text", "cells"}, each cell with the
 * metrics its smoke judged) is a decision, not an incident. The first
 * alert a cycle opens on a series it accepted is recorded as
 * acknowledged, naming the review; triage leaves such an alert alone.
 *
 * Reads the journal; never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "jsonget.h"
#include "regress-private.h"
#include "util.h"

struct find {
	const json_t *series;	/* engine, model, split, concurrency,
				   metric */
	const json_t *alerts;	/* every alert so far */
	json_t *found;		/* {review, by, text} of the newest */
};

/* Did a cell of an acceptance judge the series' metric regressed? */
static int
cell_covers(const json_t *cell, const json_t *s)
{
	const json_t *m;
	size_t i;

	if (!json_equal(json_object_get(cell, "engine"),
	    json_object_get(s, "engine")) ||
	    !json_equal(json_object_get(cell, "model"),
	    json_object_get(s, "model")) ||
	    !json_equal(json_object_get(cell, "split"),
	    json_object_get(s, "split")) ||
	    jsonget_int(cell, "concurrency") != jsonget_int(s, "concurrency"))
		return 0;
	json_array_foreach(json_object_get(cell, "metrics"), i, m)
		if (json_equal(json_object_get(m, "metric"),
		    json_object_get(s, "metric")) &&
		    strcmp(jsonget_str(m, "verdict"), "regressed") == 0)
			return 1;
	return 0;
}

/* Has an alert of the series already taken review id's acceptance? */
static int
taken(const json_t *alerts, const json_t *s, json_int_t id)
{
	const json_t *a;
	size_t i;

	json_array_foreach((json_t *)alerts, i, a)
		if (jsonget_int(json_object_get(a, "record"),
		    "accepted_review") == id && json_equal(json_object_get(a,
		    "engine"), json_object_get(s, "engine")) &&
		    json_equal(json_object_get(a, "model"), json_object_get(s,
		    "model")) && json_equal(json_object_get(a, "split"),
		    json_object_get(s, "split")) && jsonget_int(a,
		    "concurrency") == jsonget_int(s, "concurrency") &&
		    json_equal(json_object_get(a, "metric"),
		    json_object_get(s, "metric")))
			return 1;
	return 0;
}

static struct werr *
each(void *arg, const struct journal_entry *e)
{
	struct find *f = arg;
	const json_t *acc = json_object_get(e->body, "accepted_regression");
	const json_t *cell;
	json_int_t id = jsonget_int(e->body, "id");
	size_t i;

	json_array_foreach(json_object_get(acc, "cells"), i, cell)
		if (cell_covers(cell, f->series) &&
		    !taken(f->alerts, f->series, id)) {
			json_decref(f->found);
			f->found = json_pack("{s:I, s:s, s:s}", "review", id,
			    "by", jsonget_str(e->body, "by"), "text",
			    jsonget_str(cell, "text"));
		}
	return NULL;
}

struct werr *
regress_accepted_find(json_t **out, struct store *store,
    const json_t *series, const json_t *alerts)
{
	struct journal_filter jf;
	struct find f;
	struct werr *err;

	memset(&jf, 0, sizeof(jf));
	jf.kind = "review.approved";
	memset(&f, 0, sizeof(f));
	f.series = series;
	f.alerts = alerts;
	err = journal_each(store, &jf, each, &f);
	if (err != NULL) {
		json_decref(f.found);
		f.found = NULL;
	}
	*out = f.found;
	return err;
}

int
regress_alert_accepted(const json_t *alert)
{
	return jsonget_int(json_object_get(alert, "record"),
	    "accepted_review") > 0 && strcmp(jsonget_str(alert, "state"),
	    "acknowledged") == 0;
}
