/*
 * cells.c - a cell's status (engine x model x split) in SiliconBench's
 * journal vocabulary, decided from the sweeps the campaign stored: their
 * outcomes, their request counts and failure classes, their memory
 * peaks. Pure functions of stored data; never reads a log, never
 * touches the store. A level's status is campaign_level_status(), the
 * one mapping from outcomes (doc/glossary.md "Cell statuses").
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-report.h"
#include "cycle.h"
#include "jsonget.h"
#include "sha256.h"
#include "util.h"

/* Worst first: the status of a cell is its worst level's. */
static const char *const severity[] = {
	"oom", "crashed", "hang", "capped", "wrong-model", "all-failed",
	"degraded", "ok", "skipped", NULL,
};

static int
rank(const char *status)
{
	int i;

	for (i = 0; severity[i] != NULL; i++)
		if (strcmp(severity[i], status) == 0)
			return i;
	return i;
}

int
cycle_status_failing(const char *status)
{
	return strcmp(status, "ok") != 0 && strcmp(status, "fixed") != 0 &&
	    strcmp(status, "skipped") != 0;
}

int
cycle_status_known(const char *status)
{
	return rank(status) < (int)(sizeof(severity) / sizeof(severity[0]) - 1) ||
	    strcmp(status, "fixed") == 0;
}

static int
by_severity(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int d = rank(x) - rank(y);

	return d != 0 ? d : strcmp(x, y);
}

const char **
cycle_statuses_ordered(const json_t *counts, size_t *n)
{
	const char **keys = xcalloc(json_object_size(counts) + 1,
	    sizeof(*keys));
	const char *key;
	json_t *v;

	*n = 0;
	json_object_foreach((json_t *)counts, key, v)
		keys[(*n)++] = key;
	qsort(keys, *n, sizeof(*keys), by_severity);
	return keys;
}

/* The first line of a sweep's detail, without its log tail. */
static char *
detail_line(const char *detail)
{
	size_t n = strcspn(detail, "\n");
	const char *tail = strstr(detail, "; log tail:");

	if (tail != NULL && (size_t)(tail - detail) < n)
		n = (size_t)(tail - detail);
	return xstrndup(detail, n);
}

/* One level's status (campaign_level_status) and its failed request
 * count (none for a skipped level). */
static const char *
level_status(const json_t *sweep, const struct policy *pol,
    json_int_t *failed)
{
	const char *st = campaign_level_status(sweep, pol);

	*failed = strcmp(st, "skipped") == 0 ? 0 : jsonget_int(sweep, "total") -
	    jsonget_int(sweep, "completed");
	return st;
}

/* "6 http_status, 2 timeout" from a summary's failed_by_class. */
static void
classes(struct buf *b, const json_t *summary)
{
	const json_t *by = json_object_get(summary, "failed_by_class"), *v;
	const char *key;
	int n = 0;

	json_object_foreach((json_t *)by, key, v)
		if (json_integer_value(v) > 0)
			buf_printf(b, "%s%lld %s", n++ ? ", " : "",
			    (long long)json_integer_value(v), key);
	if (jsonget_int(summary, "not_started") > 0)
		buf_printf(b, "%s%lld not started", n++ ? ", " : "",
		    (long long)jsonget_int(summary, "not_started"));
}

/*
 * What the engine was made of: sha256 of its manifest's own version, its
 * packages and its source commit (canonical JSON), so two cycles of an
 * engine nothing moved in compare equal (a manifest's own digest covers
 * when it was made). null when the update step recorded none.
 */
static json_t *
engine_digest(const json_t *manifest)
{
	char hex[SHA256_HEX_LEN + 1], *text;
	json_t *what;

	if (!json_is_object(manifest))
		return json_null();
	what = json_pack("{s:O?, s:O?, s:O?}", "engine_version",
	    json_object_get(manifest, "engine_version"), "packages",
	    json_object_get(manifest, "packages"), "commit", json_object_get(
	    json_object_get(manifest, "source"), "commit"));
	text = json_dumps(what, JSON_COMPACT | JSON_SORT_KEYS);
	sha256_hex(text, strlen(text), hex);
	free(text);
	json_decref(what);
	return json_string(hex);
}

json_t *
cycle_cell_judge(const json_t *sweeps, const struct policy *pol)
{
	const json_t *s, *prov, *first = json_array_get(sweeps, 0);
	const char *worst = NULL, *st;
	json_t *levels = json_array(), *cell;
	struct buf notes = BUF_INIT, reason = BUF_INIT, tail = BUF_INIT;
	json_int_t failed, total = 0, fails = 0;
	double best = -1;
	char *line;
	size_t i;

	json_array_foreach((json_t *)sweeps, i, s) {
		const json_t *sum = json_object_get(s, "summary");
		double tput = json_number_value(json_object_get(sum,
		    "output_throughput"));

		st = level_status(s, pol, &failed);
		line = detail_line(jsonget_str(s, "detail"));
		json_array_append_new(levels, json_pack("{s:I, s:s, s:s, s:I, "
		    "s:I, s:s, s:O?, s:O?, s:O?, s:b, s:I}", "concurrency",
		    jsonget_int(s, "concurrency"), "status", st, "outcome",
		    jsonget_str(s, "outcome"), "completed",
		    jsonget_int(s, "completed"), "total",
		    jsonget_int(s, "total"), "detail", line,
		    "peak_system_memory_bytes", json_object_get(s,
		    "peak_system_memory_bytes"), "system_memory_bytes",
		    json_object_get(s, "system_memory_bytes"),
		    "output_throughput", json_object_get(sum,
		    "output_throughput"), "client_limited",
		    json_is_true(json_object_get(sum, "client_limited")),
		    "usage_streamed", jsonget_int(sum, "usage_streamed")));
		if (worst == NULL || rank(st) < rank(worst)) {
			worst = st;
			buf_reset(&reason);
			buf_puts(&reason, line);
			if (reason.len == 0) {
				/* complete, failing: how the requests failed */
				buf_printf(&reason, "c=%lld: ", (long long)
				    jsonget_int(s, "concurrency"));
				classes(&reason, sum);
			}
		}
		if (strcmp(st, "skipped") != 0) {
			total += jsonget_int(s, "total");
			fails += failed;
			buf_printf(&notes, "%sc=%lld %lld/%lld",
			    notes.len ? ", " : "",
			    (long long)jsonget_int(s, "concurrency"),
			    (long long)jsonget_int(s, "completed"),
			    (long long)jsonget_int(s, "total"));
			buf_reset(&tail);
			classes(&tail, sum);
			if (strcmp(jsonget_str(s, "outcome"), "complete") != 0)
				buf_printf(&notes, " outcome %s",
				    jsonget_str(s, "outcome"));
			else if (tail.len > 0)
				buf_printf(&notes, " (%s)", buf_cstr(&tail));
			if (strcmp(jsonget_str(s, "outcome"),
			    "complete") == 0 && tput > best)
				best = tput;
		}
		free(line);
	}
	if (worst == NULL)
		worst = "skipped";	/* no sweep: nothing ran */
	if (strcmp(worst, "ok") == 0)
		buf_reset(&reason);
	if (strcmp(worst, "skipped") == 0) {
		buf_reset(&notes);
		buf_puts(&notes, buf_cstr(&reason));
	} else {
		if (best > 0)
			buf_printf(&notes, "; best %.1f tok/s", best);
		if (strcmp(worst, "ok") != 0 && strcmp(worst, "degraded") != 0 &&
		    strcmp(worst, "all-failed") != 0 && reason.len > 0)
			buf_printf(&notes, "; %s", buf_cstr(&reason));
	}
	prov = json_object_get(first, "provenance");
	cell = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:o, "
	    "s:{s:O?, s:O?, s:o}}", "engine", jsonget_str(first, "engine"),
	    "model", jsonget_str(first, "model"), "split",
	    jsonget_str(first, "split"), "status", worst, "reason",
	    buf_cstr(&reason), "notes", buf_cstr(&notes), "levels", levels,
	    "requests", total, "failed", fails, "best_output_throughput",
	    best > 0 ? json_real(best) : json_null(), "inputs",
	    "adapter_sha256", json_object_get(prov, "adapter_sha256"),
	    "profile_sha256", json_object_get(prov, "profile_sha256"), "engine",
	    engine_digest(json_object_get(prov, "engine_manifest")));
	buf_free(&notes);
	buf_free(&reason);
	buf_free(&tail);
	return cell;
}

json_t *
cycle_cells(const json_t *sweeps, const struct policy *pol)
{
	json_t *cells = json_array(), *groups = json_object(), *g;
	const json_t *s;
	const char *key;
	struct buf k = BUF_INIT;
	size_t i;

	/* group by (engine, model, split), in the order cells first appear */
	json_array_foreach((json_t *)sweeps, i, s) {
		buf_reset(&k);
		buf_printf(&k, "%s\x1f%s\x1f%s", jsonget_str(s, "engine"),
		    jsonget_str(s, "model"), jsonget_str(s, "split"));
		if ((g = json_object_get(groups, buf_cstr(&k))) == NULL) {
			g = json_array();
			json_object_set_new(groups, buf_cstr(&k), g);
			json_array_append_new(cells, json_string(buf_cstr(&k)));
		}
		json_array_append(g, (json_t *)s);
	}
	for (i = 0; i < json_array_size(cells); i++) {
		key = json_string_value(json_array_get(cells, i));
		g = cycle_cell_judge(json_object_get(groups, key), pol);
		json_array_set_new(cells, i, g);
	}
	json_decref(groups);
	buf_free(&k);
	return cells;
}

char *
cycle_cell_key(const json_t *cell)
{
	return xasprintf("%s/%s/%s", jsonget_str(cell, "engine"),
	    jsonget_str(cell, "model"), jsonget_str(cell, "split"));
}
