/*
 * cmd-smoke-print.c - a smoke campaign of a change as people read it, for
 * `review smoke`, `review show`, `pr-check --smoke` and `agent run`: its
 * verdict, the before/after table of outcomes, and its speed (each
 * engine x model x split x c judged by the regressions rule, with every
 * metric before -> after).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "jsonget.h"
#include "output.h"
#include "quote.h"
#include "util.h"

/* The row of rows for a run's sweep (same engine, model, split, c),
 * added when there is none. */
static json_t *
smoke_row(json_t *rows, const char *engine, const json_t *sw)
{
	json_t *row;
	char c[24];
	size_t i;

	snprintf(c, sizeof(c), "%lld", (long long)jsonget_int(sw,
	    "concurrency"));
	json_array_foreach(rows, i, row)
		if (strcmp(jsonget_str(row, "engine"), engine) == 0 &&
		    strcmp(jsonget_str(row, "model"), jsonget_str(sw,
		    "model")) == 0 && strcmp(jsonget_str(row, "split"),
		    jsonget_str(sw, "split")) == 0 &&
		    strcmp(jsonget_str(row, "c"), c) == 0)
			return row;
	row = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "engine", engine,
	    "model", jsonget_str(sw, "model"), "split", jsonget_str(sw,
	    "split"), "c", c, "before", "-", "after", "-");
	json_array_append_new(rows, row);
	return row;
}

/* One side's sweeps into rows, as "OUTCOME K/T" in column side: K and T
 * summed over the side's rounds, OUTCOME the first that was not
 * "complete" (else "complete"). */
static void
smoke_side_rows(json_t *rows, const json_t *smoke, const char *side)
{
	const json_t *run, *sw;
	json_t *row;
	char *cell, *kk = xasprintf("%s_k", side), *kt = xasprintf("%s_t", side);
	const char *was;
	size_t i, j;

	json_array_foreach(json_object_get(json_object_get(smoke, side),
	    "runs"), i, run) {
		const char *engine = jsonget_str(run, "engine");

		if (json_is_string(json_object_get(run, "error"))) {
			json_t *none = json_pack("{s:s, s:s, s:i}", "model",
			    "-", "split", "-", "concurrency", 0);

			row = smoke_row(rows, engine, none);
			json_decref(none);
			json_object_set_new(row, "c", json_string("-"));
			json_object_set_new(row, side, json_string("error"));
			json_object_set_new(row, "error", json_string(
			    jsonget_str(run, "error")));
		}
		json_array_foreach(json_object_get(run, "sweeps"), j, sw) {
			row = smoke_row(rows, engine, sw);
			json_object_set_new(row, kk, json_integer(
			    jsonget_int(row, kk) + jsonget_int(sw,
			    "completed")));
			json_object_set_new(row, kt, json_integer(
			    jsonget_int(row, kt) + jsonget_int(sw, "total")));
			was = jsonget_str(row, side);
			if (strcmp(was, "-") == 0 ||
			    strncmp(was, "complete ", 9) == 0)
				was = jsonget_str(sw, "outcome");
			cell = xasprintf("%.*s %lld/%lld", (int)strcspn(was,
			    " "), was, (long long)
			    jsonget_int(row, kk), (long long)jsonget_int(row,
			    kt));
			json_object_set_new(row, side, json_string(cell));
			free(cell);
		}
	}
	free(kk);
	free(kt);
}

/* A figure of a metric for the speed table: bytes as MiB. */
static void
speed_figure(char *out, size_t n, const json_t *m, const char *key)
{
	double v = json_number_value(json_object_get(m, key));

	if (!(v > 0))
		snprintf(out, n, "-");
	else if (strcmp(jsonget_str(m, "unit"), "bytes") == 0)
		snprintf(out, n, "%.1f MiB", v / 1048576.0);
	else
		snprintf(out, n, "%.*f %s", v >= 100 ? 0 : 2, v,
		    jsonget_str(m, "unit"));
}

/* The speed of a smoke: per engine x model x split x c its verdict in
 * words, then each metric before -> after, the ratio and its verdict. */
void
cmd_print_smoke_speed(const json_t *smoke, const char *indent)
{
	const json_t *sp = json_object_get(smoke, "speed"), *c, *m;
	const json_t *pol = json_object_get(sp, "policy");
	struct buf head = BUF_INIT;
	char b[48], a[48];
	size_t i, j;

	if (json_is_string(json_object_get(sp, "error"))) {
		printf("%sspeed: not measured: %s\n", indent,
		    quote_msg(jsonget_str(sp, "error")));
		return;
	}
	if (json_is_string(json_object_get(sp, "why"))) {
		printf("%sspeed: not judged: %s\n", indent,
		    quote_msg(jsonget_str(sp, "why")));
		return;
	}
	if (json_array_size(json_object_get(sp, "cells")) == 0)
		return;
	/* the lines wrap within OUTPUT_WIDTH, further lines 4 deeper */
	if (json_is_string(json_object_get(sp, "before_is")))
		buf_printf(&head, "before: %s; after: %s", quote_str(
		    jsonget_str(sp, "before_is")), quote_str(jsonget_str(sp,
		    "after_is")));
	else
		buf_printf(&head, "%lld interleaved round%s a side",
		    (long long)jsonget_int(sp, "rounds"),
		    jsonget_int(sp, "rounds") == 1 ? "" : "s");
	output_line(4, "%sspeed (%s; regressions rule: %g %% worse at p < "
	    "%g):", indent, buf_cstr(&head), json_number_value(
	    json_object_get(pol, "threshold_pct")), json_number_value(
	    json_object_get(pol, "alpha")));
	buf_free(&head);
	json_array_foreach(json_object_get(sp, "cells"), i, c) {
		output_line(4, "%s  %s %s/%s c=%lld (%lld \u2192 %lld requests): "
		    "%s", indent, quote_str(jsonget_str(c, "engine")),
		    quote_str(jsonget_str(c, "model")),
		    quote_str(jsonget_str(c, "split")),
		    (long long)jsonget_int(c, "concurrency"),
		    (long long)jsonget_int(c, "requests_before"),
		    (long long)jsonget_int(c, "requests_after"),
		    quote_msg(jsonget_str(c, "text")));
		json_array_foreach(json_object_get(c, "metrics"), j, m) {
			speed_figure(b, sizeof(b), m, "before");
			speed_figure(a, sizeof(a), m, "after");
			printf("%s    %-24s %12s \u2192 %-12s %5.2f\u00d7  %s\n",
			    indent, quote_str(jsonget_str(m, "metric")), b, a,
			    json_number_value(json_object_get(m, "ratio")),
			    quote_str(jsonget_str(m, "verdict")));
		}
	}
}

void
cmd_print_smoke_table(const json_t *smoke, const char *indent)
{
	static const char *const cols[] = { "engine", "model", "split", "c",
	    "before", "after" };
	json_t *rows = json_array(), *row;
	int w[6], k, n;
	size_t i;

	smoke_side_rows(rows, smoke, "before");
	smoke_side_rows(rows, smoke, "after");
	for (k = 0; k < 6; k++) {
		w[k] = (int)strlen(cols[k]);
		json_array_foreach(rows, i, row)
			if ((n = (int)strlen(quote_str(jsonget_str(row,
			    cols[k])))) > w[k])
				w[k] = n;
	}
	printf("%s", indent);
	for (k = 0; k < 5; k++)
		printf("%-*s  ", w[k], cols[k]);
	printf("%s\n", cols[5]);
	json_array_foreach(rows, i, row) {
		printf("%s", indent);
		for (k = 0; k < 5; k++)
			printf("%-*s  ", w[k], quote_str(jsonget_str(row,
			    cols[k])));
		printf("%s\n", quote_str(jsonget_str(row, cols[5])));
		if (json_is_string(json_object_get(row, "error")))
			printf("%s  error: %s\n", indent,
			    quote_msg(jsonget_str(row, "error")));
	}
	json_decref(rows);
	cmd_print_smoke_speed(smoke, indent);
}

/* The verdict line of a smoke campaign: "after passes (before fails)". */
const char *
cmd_smoke_verdict(const json_t *smoke)
{
	int after = json_is_true(json_object_get(smoke, "passed"));
	int before = json_is_true(json_object_get(json_object_get(smoke,
	    "before"), "passed"));

	if (json_is_string(json_object_get(smoke, "skipped")))
		return quote_msg(jsonget_str(smoke, "skipped"));
	if (json_object_get(smoke, "quarantined") != NULL)
		return "quarantined: the smoke campaign changed the repository";
	if (!after && before && json_is_true(json_object_get(smoke,
	    "regressed")))
		return "passes before and after the change, REGRESSES after it";
	if (after)
		return before ? "passes before and after the change" :
		    "fails before the change, passes after it";
	return before ? "passes before the change, FAILS after it" :
	    "fails before and after the change";
}
