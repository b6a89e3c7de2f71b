/*
 * cmd-campaign-print.c - how `warden campaign` and `warden campaign
 * show|list` print: the text report within 80 columns, CSV, the list of
 * runs. See cmd-campaign.h.
 *
 * The text report is two blocks per (model, split), so that it fits 80
 * columns on any terminal (and in any CI log) rather than choosing
 * columns by terminal width: what a reader looks for first (request and
 * token throughput, TTFT mean/p50/p99, E2E mean/p99), then TPOT and ITL
 * medians, the engine's and the system's memory peaks, completed and
 * the status (SiliconBench's cell vocabulary), with the sweep's outcome
 * and its reason under a sweep that did not complete, and its warmups
 * under one whose warmups did not all succeed. A p99 over fewer than 100
 * samples is marked; a split with fewer prompts than --limit is named
 * atop the report.
 * Everything else is in --json. Numbers come from the report as they
 * are; nothing here computes a figure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-report.h"
#include "cmd-campaign.h"
#include "jsonget.h"
#include "quote.h"
#include "util.h"

#define ENGINE_COL_MIN 6
/* The widest row is the outcome block's: the name, 51 columns, two
 * spaces and a status of up to 11 characters ("wrong-model"). */
#define ENGINE_COL_MAX 16

/* Right-aligned number of `width` with `decimals`, or "-". */
static void
cell(struct buf *b, int width, const json_t *v, int decimals)
{
	if (json_is_number(v))
		buf_printf(b, " %*.*f", width, decimals, json_number_value(v));
	else
		buf_printf(b, " %*s", width, "-");
}

/*
 * A p99 of fewer than P99_SAMPLES_MIN samples has at most one sample
 * beyond it: little more than the largest. Printed with a '*' (the
 * table's note says so), over n, the row's sample count of the metric.
 */
#define P99_SAMPLES_MIN 100
static int
cell_p99(struct buf *b, int width, const json_t *v, const json_t *n)
{
	if (!json_is_number(v) || !json_is_integer(n) ||
	    json_integer_value(n) >= P99_SAMPLES_MIN) {
		cell(b, width, v, 1);
		return 0;
	}
	buf_printf(b, " %*.1f*", width - 1, json_number_value(v));
	return 1;
}

static void
cell_mib(struct buf *b, int width, const json_t *v)
{
	if (json_is_integer(v))
		buf_printf(b, " %*.1f", width,
		    (double)json_integer_value(v) / 1048576.0);
	else
		buf_printf(b, " %*s", width, "-");
}

/* The engine column: its width, and a name cut to it (ending in '~'). */
static int
name_width(const json_t *rows)
{
	const json_t *r;
	size_t i, n, w = ENGINE_COL_MIN;

	json_array_foreach(rows, i, r)
		if ((n = strlen(jsonget_str(r, "engine"))) > w)
			w = n;
	return w > ENGINE_COL_MAX ? ENGINE_COL_MAX : (int)w;
}

static void
name_cell(struct buf *b, const char *name, int w)
{
	if ((int)strlen(name) <= w)
		buf_printf(b, "%-*s", w, name);
	else
		buf_printf(b, "%.*s~", w - 1, name);
}

/* "---- label ----" of exactly n characters. */
static void
dashed(struct buf *b, const char *label, int n)
{
	int len = (int)strlen(label) + 2, left = (n - len) / 2, i;

	for (i = 0; i < left; i++)
		buf_addch(b, '-');
	buf_printf(b, " %s ", label);
	for (i = left + len; i < n; i++)
		buf_addch(b, '-');
}

static void
flush_line(FILE *fp, struct buf *b)
{
	while (b->len > 0 && b->data[b->len - 1] == ' ')
		b->len--;
	fprintf(fp, "%.*s\n", (int)b->len, b->data ? b->data : "");
	buf_reset(b);
}

/* The latency block; 1 when a p99 in it was marked as resting on few
 * samples. */
static int
block_latency(FILE *fp, const json_t *rows, int w)
{
	struct buf b = BUF_INIT;
	const json_t *r;
	size_t i;
	int few = 0;

	buf_printf(&b, "%*s ", w + 23, "");
	dashed(&b, "TTFT ms", 23);
	buf_addch(&b, ' ');
	dashed(&b, "E2E ms", 15);
	flush_line(fp, &b);
	buf_printf(&b, "%-*s %4s %7s %9s %7s %7s %7s %7s %7s", w, "engine", "c",
	    "req/s", "out tok/s", "mean", "p50", "p99", "mean", "p99");
	flush_line(fp, &b);
	json_array_foreach(rows, i, r) {
		name_cell(&b, jsonget_str(r, "engine"), w);
		buf_printf(&b, " %4lld", (long long)json_integer_value(
		    json_object_get(r, "concurrency")));
		cell(&b, 7, json_object_get(r, "request_throughput"), 2);
		cell(&b, 9, json_object_get(r, "output_throughput"), 1);
		cell(&b, 7, json_object_get(r, "mean_ttft_ms"), 1);
		cell(&b, 7, json_object_get(r, "median_ttft_ms"), 1);
		few |= cell_p99(&b, 7, json_object_get(r, "p99_ttft_ms"),
		    json_object_get(r, "ttft_samples"));
		cell(&b, 7, json_object_get(r, "mean_e2el_ms"), 1);
		few |= cell_p99(&b, 7, json_object_get(r, "p99_e2el_ms"),
		    json_object_get(r, "e2el_samples"));
		flush_line(fp, &b);
	}
	buf_free(&b);
	return few;
}

/* Print text indented by two, wrapped at spaces to the table's width,
 * in at most REASON_LINES lines (the last one cut). */
#define REASON_LINES 3
static void
wrapped(FILE *fp, const char *text)
{
	const size_t width = CAMPAIGN_TABLE_COLUMNS - 2;
	size_t len, cut;
	int line;

	for (line = 0; *text != '\0' && line < REASON_LINES; line++) {
		len = strlen(text);
		cut = len;
		if (len > width && line < REASON_LINES - 1) {
			for (cut = width; cut > 0 && text[cut] != ' '; cut--)
				;
			if (cut == 0)
				cut = width;
		} else if (len > width) {
			cut = width;
		}
		fprintf(fp, "  %.*s\n", (int)cut, text);
		text += cut;
		while (*text == ' ')
			text++;
	}
}

/* The line under a row: the outcome of a sweep that did not complete
 * and why, or why its figures may be the client's. */
static void
reason_line(FILE *fp, const json_t *r)
{
	const char *outcome = jsonget_str(r, "outcome");
	char *reason = NULL;

	if (strcmp(outcome, "complete") != 0) {
		char *why = campaign_reason(json_string_value(json_object_get(r,
		    "detail")));

		reason = xasprintf("outcome %s%s%s", outcome, why != NULL &&
		    *why != '\0' ? ": " : "", why != NULL ? why : "");
		free(why);
	} else if (json_is_true(json_object_get(r, "client_limited")))
		reason = xstrdup("client_limited: warden's loop lagged or used "
		    "most of a core; figures may be the client's");
	else if (json_is_true(json_object_get(r, "connection_reuse_stopped")))
		reason = xasprintf("the engine closed kept-alive connections "
		    "before answering: %lld connection retries, not its "
		    "failures; each request then opened its own connection",
		    (long long)json_integer_value(json_object_get(r,
		    "connection_retries")));
	if (reason != NULL)	/* may hold an engine's words: one line, quoted */
		wrapped(fp, quote_msg(reason));
	free(reason);
}

/* The line under a row whose warmups did not all succeed. */
static void
warmup_line(FILE *fp, const json_t *r)
{
	json_int_t ok = jsonget_int(r, "warmups_ok");
	json_int_t failed = jsonget_int(r, "warmups_failed");

	if (failed > 0)
		fprintf(fp, "  warmups: %lld of %lld succeeded\n", (long long)ok,
		    (long long)(ok + failed));
}

static void
block_outcome(FILE *fp, const json_t *rows, int w)
{
	struct buf b = BUF_INIT;
	const json_t *r;
	size_t i;

	buf_printf(&b, "%*s ", w + 5, "");
	dashed(&b, "p50 ms", 15);
	buf_addch(&b, ' ');
	dashed(&b, "peak MiB", 17);
	flush_line(fp, &b);
	buf_printf(&b, "%-*s %4s %7s %7s %8s %8s %9s  %s", w, "engine", "c",
	    "TPOT", "ITL", "engine", "system", "completed", "status");
	flush_line(fp, &b);
	json_array_foreach(rows, i, r) {
		name_cell(&b, jsonget_str(r, "engine"), w);
		buf_printf(&b, " %4lld", (long long)json_integer_value(
		    json_object_get(r, "concurrency")));
		cell(&b, 7, json_object_get(r, "median_tpot_ms"), 2);
		cell(&b, 7, json_object_get(r, "median_itl_ms"), 2);
		cell_mib(&b, 8, json_object_get(r, "peak_engine_memory_bytes"));
		cell_mib(&b, 8, json_object_get(r, "peak_system_memory_bytes"));
		buf_printf(&b, " %4lld/%-4lld  %s",
		    (long long)json_integer_value(json_object_get(r,
		    "completed")), (long long)json_integer_value(
		    json_object_get(r, "total")), jsonget_str(r, "status"));
		flush_line(fp, &b);
		reason_line(fp, r);
		warmup_line(fp, r);
	}
	buf_free(&b);
}

static void
print_table(FILE *fp, const json_t *t)
{
	const json_t *rows = json_object_get(t, "rows"), *sc, *v;
	int w = name_width(rows), few;
	size_t i;

	fprintf(fp, "\n%s / %s\n", jsonget_str(t, "model"),
	    jsonget_str(t, "split"));
	few = block_latency(fp, rows, w);
	if (few)
		fprintf(fp, "* p99 of fewer than %d samples (its sweep's "
		    "completed requests): at most\n  one beyond it\n",
		    P99_SAMPLES_MIN);
	fputc('\n', fp);
	block_outcome(fp, rows, w);
	json_array_foreach(json_object_get(t, "scaling"), i, sc) {
		v = json_object_get(sc, "ratio");
		if (!json_is_number(v))
			continue;	/* nothing measured at one end */
		fprintf(fp, "scaling c%lld/c%lld %s: %.2fx\n",
		    (long long)json_integer_value(json_object_get(sc, "to")),
		    (long long)json_integer_value(json_object_get(sc, "from")),
		    jsonget_str(sc, "engine"), json_number_value(v));
	}
}

void
campaign_print_report(FILE *fp, const json_t *doc)
{
	const json_t *t, *lv;
	size_t i;

	fprintf(fp, "campaign run %s (machine %s, %s",
	    jsonget_str(doc, "run_id"), jsonget_str(doc, "machine"),
	    jsonget_str(doc, "state"));
	json_array_foreach(json_object_get(doc, "ad_hoc_levels"), i, lv)
		fprintf(fp, "%s%lld", i == 0 ? "; ad hoc levels: " : ", ",
		    (long long)json_integer_value(lv));
	fprintf(fp, ")\n");
	json_array_foreach(json_object_get(doc, "limit_beyond"), i, lv)
		fprintf(fp, "warning: --limit %lld, but split '%s' has %lld "
		    "timed prompts: its sweeps ran %lld\n",
		    (long long)jsonget_int(doc, "limit"),
		    quote_msg(jsonget_str(lv, "split")),
		    (long long)jsonget_int(lv, "prompts"),
		    (long long)jsonget_int(lv, "prompts"));
	json_array_foreach(json_object_get(doc, "tables"), i, t)
		print_table(fp, t);
	fprintf(fp, "\nTTFT, E2E, TPOT and ITL in ms. TPOT is per request (last "
	    "- first token) /\n(tokens - 1); ITL is every gap between chunks. "
	    "Peak MiB: engine is the\nengine's process tree, system is all "
	    "memory in use on the machine.\n");
}

/* ---- CSV ---- */

static void
csv_text(FILE *fp, const char *s)
{
	if (s[strcspn(s, ",\"\r\n")] == '\0') {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

static void
csv_value(FILE *fp, const json_t *v)
{
	if (json_is_string(v))
		csv_text(fp, json_string_value(v));
	else if (json_is_integer(v))
		fprintf(fp, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		fprintf(fp, "%.6f", json_real_value(v));
	else if (json_is_boolean(v))
		fputs(json_is_true(v) ? "true" : "false", fp);
}

static const char *const sweep_columns[] = {
	"model", "split", "engine", "concurrency", "status", "outcome",
	"completed",
	"total", "warmups_ok", "warmups_failed", "ttft_samples",
	"e2el_samples", "duration", "request_throughput", "output_throughput",
	"mean_ttft_ms", "median_ttft_ms", "p90_ttft_ms", "p99_ttft_ms",
	"mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms",
	"median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms",
	"p99_e2el_ms", "peak_engine_memory_bytes", "peak_system_memory_bytes",
	"client_limited", "date", "detail", NULL,
};

void
campaign_print_report_csv(FILE *fp, const json_t *doc)
{
	const json_t *t, *r;
	size_t i, j, k;

	fputs("run_id", fp);
	for (k = 0; sweep_columns[k] != NULL; k++)
		fprintf(fp, ",%s", sweep_columns[k]);
	fputc('\n', fp);
	json_array_foreach(json_object_get(doc, "tables"), i, t) {
		json_array_foreach(json_object_get(t, "rows"), j, r) {
			csv_text(fp, jsonget_str(doc, "run_id"));
			for (k = 0; sweep_columns[k] != NULL; k++) {
				fputc(',', fp);
				csv_value(fp, json_object_get(r,
				    sweep_columns[k]));
			}
			fputc('\n', fp);
		}
	}
}

static const char *const run_columns[] = {
	"run_id", "created", "finished", "state", "sweeps", "sweeps_done",
	"roster", "machine", NULL,
};

void
campaign_print_runs_csv(FILE *fp, const json_t *runs)
{
	const json_t *r;
	size_t i, k;

	for (k = 0; run_columns[k] != NULL; k++)
		fprintf(fp, "%s%s", k > 0 ? "," : "", run_columns[k]);
	fputc('\n', fp);
	json_array_foreach(runs, i, r) {
		for (k = 0; run_columns[k] != NULL; k++) {
			if (k > 0)
				fputc(',', fp);
			csv_value(fp, json_object_get(r, run_columns[k]));
		}
		fputc('\n', fp);
	}
}

void
campaign_print_runs(FILE *fp, const json_t *runs)
{
	struct buf b = BUF_INIT;
	const json_t *r;
	size_t i, w = 3;

	json_array_foreach(runs, i, r)
		if (strlen(jsonget_str(r, "run_id")) > w)
			w = strlen(jsonget_str(r, "run_id"));
	buf_printf(&b, "%-*s  %-24s  %-7s  %7s  %s", (int)w, "run", "created",
	    "state", "sweeps", "roster");
	flush_line(fp, &b);
	json_array_foreach(runs, i, r) {
		char sweeps[48];

		snprintf(sweeps, sizeof(sweeps), "%lld/%lld",
		    (long long)json_integer_value(json_object_get(r,
		    "sweeps_done")), (long long)json_integer_value(
		    json_object_get(r, "sweeps")));
		buf_printf(&b, "%-*s  %-24s  %-7s  %7s  %s", (int)w,
		    jsonget_str(r, "run_id"), jsonget_str(r, "created"),
		    jsonget_str(r, "state"), sweeps, jsonget_str(r, "roster"));
		flush_line(fp, &b);
	}
	buf_free(&b);
}
