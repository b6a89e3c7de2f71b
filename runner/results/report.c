/*
 * report.c - comparison.json and REPORT.md. See report.h. Pure: no I/O,
 * no clock.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-report.h"
#include "jsonget.h"
#include "machine-load.h"
#include "quote.h"
#include "util.h"
#include "results/report.h"

#define MIB 1048576.0
#define GIB 1073741824.0

static json_t *
table_for(json_t *tables, const char *model, const char *split)
{
	json_t *t;
	size_t i;

	json_array_foreach(tables, i, t)
		if (strcmp(jsonget_str(t, "model"), model) == 0 &&
		    strcmp(jsonget_str(t, "split"), split) == 0)
			return t;
	t = json_pack("{s:s, s:s, s:[], s:[]}", "model", model, "split", split,
	    "rows", "scaling");
	json_array_append_new(tables, t);
	return t;
}

static json_t *
num_or_null(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

/* a - b of two figures of o, or null when either is missing. */
static json_t *
difference(const json_t *o, const char *a, const char *b)
{
	const json_t *x = json_object_get(o, a), *y = json_object_get(o, b);

	return json_is_number(x) && json_is_number(y) ? json_real(
	    json_number_value(x) - json_number_value(y)) : json_null();
}

static json_t *
bytes_or_null(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return v != NULL ? json_incref((json_t *)v) : json_null();
}

/* {"from": the first sweep's start, "to": the last one's end} (ISO 8601,
 * UTC) of the rows of tables, each null when none says. */
static json_t *
measured(const json_t *tables)
{
	const json_t *t, *r;
	const char *from = NULL, *to = NULL, *s;
	size_t i, j;

	json_array_foreach((json_t *)tables, i, t)
		json_array_foreach(json_object_get(t, "rows"), j, r) {
			if ((s = json_string_value(json_object_get(r,
			    "started"))) != NULL && (from == NULL ||
			    strcmp(s, from) < 0))
				from = s;
			if ((s = json_string_value(json_object_get(r,
			    "finished"))) != NULL && (to == NULL ||
			    strcmp(s, to) > 0))
				to = s;
		}
	return json_pack("{s:s?, s:s?}", "from", from, "to", to);
}

/* The figures of a row taken from the sweep's summary as they are, in
 * the order the row carries them (input_throughput, derived, after the
 * first two); each under its vllm bench serve name (glossary). */
static const char *const row_figures[] = { "output_throughput",
    "total_token_throughput", "median_ttft_ms", "p90_ttft_ms",
    "p99_ttft_ms", "median_tpot_ms", "p90_tpot_ms", "p99_tpot_ms",
    "median_itl_ms", "p90_itl_ms", "p99_itl_ms", NULL };

json_t *
report_comparison(const struct resultset *rs, const struct policy *pol)
{
	json_t *docs = resultset_docs(rs, "campaign"), *tables = json_array();
	json_t *t, *row;
	const json_t *lo, *hi;
	const json_t *doc, *c, *sum;
	size_t i, j, k;

	json_array_foreach(docs, i, doc) {
		t = table_for(tables, jsonget_str(doc, "model"),
		    jsonget_str(doc, "split"));
		lo = hi = NULL;
		json_array_foreach(json_object_get(doc, "concurrency_results"),
		    j, c) {
			sum = json_object_get(c, "summary");
			row = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:I, "
			    "s:I}", "engine", jsonget_str(doc, "engine"),
			    "machine", jsonget_str(doc, "machine"),
			    "run_id", jsonget_str(doc, "run_id"),
			    "concurrency", jsonget_int(c, "concurrency"),
			    "status", campaign_level_status(c, pol),
			    "outcome", jsonget_str(c, "outcome"),
			    "completed", jsonget_int(c, "completed"),
			    "total", jsonget_int(c, "total"));
			for (k = 0; k < 2; k++)
				json_object_set_new(row, row_figures[k],
				    num_or_null(sum, row_figures[k]));
			json_object_set_new(row, "input_throughput",
			    difference(sum, "total_token_throughput",
			    "output_throughput"));
			for (; row_figures[k] != NULL; k++)
				json_object_set_new(row, row_figures[k],
				    num_or_null(sum, row_figures[k]));
			/* when and how busy: the sweep's times and the
			 * machine's load while it measured */
			json_object_set_new(row, "started",
			    bytes_or_null(c, "started"));
			json_object_set_new(row, "finished",
			    bytes_or_null(c, "finished"));
			json_object_set_new(row, "machine_load", bytes_or_null(
			    json_object_get(c, "provenance"), "machine_load"));
			json_object_set_new(row, "peak_system_memory_bytes",
			    bytes_or_null(c, "peak_system_memory_bytes"));
			json_object_set_new(row, "peak_engine_memory_bytes",
			    bytes_or_null(c, "peak_engine_memory_bytes"));
			json_array_append(json_object_get(t, "rows"), row);
			campaign_level_span(row, &lo, &hi);
			json_decref(row);
		}
		if (lo != NULL && lo != hi)
			json_array_append_new(json_object_get(t, "scaling"),
			    json_pack("{s:s, s:s, s:I, s:I, s:o}",
			    "engine", jsonget_str(doc, "engine"),
			    "machine", jsonget_str(doc, "machine"),
			    "from", jsonget_int(lo, "concurrency"),
			    "to", jsonget_int(hi, "concurrency"), "ratio",
			    campaign_scaling_ratio(lo, hi)));
	}
	json_decref(docs);
	return json_pack("{s:i, s:o, s:o}", "schema", 1, "measured",
	    measured(tables), "tables", tables);
}

/* ---- Markdown ---- */

/* A number cell: v / scale with that many decimals ("+" shown when
 * sign), then suffix; "-" when v is not a number. */
static void
cell_num(struct buf *b, const json_t *v, double scale, int decimals,
    int sign, const char *suffix)
{
	buf_puts(b, " | ");
	if (!json_is_number(v)) {
		buf_puts(b, "-");
		return;
	}
	buf_printf(b, sign ? "%+.*f%s" : "%.*f%s", decimals,
	    json_number_value(v) / scale, suffix);
}

/* Table cells must not break the table (quote_md). */
static void
cell_text(struct buf *b, const char *s)
{
	buf_puts(b, " | ");
	quote_md(b, s);
}

static int
fleet(const json_t *comparison)
{
	const json_t *t, *r;
	const char *first = NULL;
	size_t i, j;

	json_array_foreach(json_object_get(comparison, "tables"), i, t)
		json_array_foreach(json_object_get(t, "rows"), j, r) {
			if (first == NULL)
				first = jsonget_str(r, "machine");
			else if (strcmp(first, jsonget_str(r, "machine")) != 0)
				return 1;
		}
	return 0;
}

static void
engine_cell(struct buf *b, const json_t *row, int many)
{
	buf_puts(b, "| ");
	quote_md(b, jsonget_str(row, "engine"));
	if (many)
		buf_printf(b, " @%.8s", jsonget_str(row, "machine"));
}

static void
md_gate(struct buf *b, const json_t *gate)
{
	static const char *const checks[] = { "completion", "fidelity",
	    "coverage", NULL };
	const json_t *th = json_object_get(gate, "thresholds"), *e, *f, *v;
	size_t i, j, k;

	buf_puts(b, "## Audit gates (SiliconBench Table 5)\n\n"
	    "| engine | completion | fidelity | coverage | result |\n"
	    "|---|:-:|:-:|:-:|---|\n");
	json_array_foreach(json_object_get(gate, "engines"), i, e) {
		buf_printf(b, "| %s", jsonget_str(e, "engine"));
		for (k = 0; checks[k] != NULL; k++)
			buf_printf(b, " | %s", json_is_true(json_object_get(
			    json_object_get(e, checks[k]), "pass")) ?
			    "\u2713" : "\u2717");
		buf_printf(b, " | %s |\n", json_is_true(json_object_get(e,
		    "pass")) ? "pass" : "**fail**");
	}
	/* a share of the requests sent, whatever their number (a short
	 * run sends 8, not 100) */
	buf_printf(b, "\nA stack passes when it completes at least %lld of "
	    "every %lld requests it is sent (%.0f %%) at every concurrency "
	    "level (", (long long)jsonget_int(th, "completion_min"),
	    (long long)jsonget_int(th, "completion_of"),
	    jsonget_int(th, "completion_of") > 0 ? 100.0 * (double)
	    jsonget_int(th, "completion_min") / (double)jsonget_int(th,
	    "completion_of") : 0.0);
	json_array_foreach(json_object_get(th, "concurrency"), i, v)
		buf_printf(b, "%s%lld", i ? ", " : "", (long long)
		    json_integer_value(v));
	buf_puts(b, ") on every split (");
	json_array_foreach(json_object_get(th, "splits"), i, v)
		buf_printf(b, "%s%s", i ? ", " : "", json_string_value(v));
	buf_printf(b, "), is within %.2f percentage points of the reference's "
	    "weighted F1 for every measured model and shot count, and serves "
	    "every required model (", json_number_value(json_object_get(th,
	    "fidelity_band_pp")));
	json_array_foreach(json_object_get(th, "required_models"), i, v)
		buf_printf(b, "%s%s", i ? ", " : "", json_string_value(v));
	buf_puts(b, "). Speed and memory are reported, not gated.\n");
	k = 0;
	json_array_foreach(json_object_get(gate, "engines"), i, e)
		for (j = 0; checks[j] != NULL; j++) {
			size_t m;

			json_array_foreach(json_object_get(json_object_get(e,
			    checks[j]), "failures"), m, f) {
				if (k++ == 0)
					buf_puts(b, "\nWhy:\n\n");
				buf_puts(b, "- ");
				quote_md(b, jsonget_str(e, "engine"));
				buf_printf(b, ", %s: ", checks[j]);
				quote_md(b, jsonget_str(f, "why"));
				buf_addch(b, '\n');
			}
		}
	buf_puts(b, "\n");
}

/* The figures of a row of the per-concurrency table, in its order. */
static const struct {
	const char *key;
	double scale;
	int decimals;
} figures[] = {
	{ "output_throughput", 1, 1 },
	{ "input_throughput", 1, 1 },
	{ "total_token_throughput", 1, 1 },
	{ "median_ttft_ms", 1, 1 },
	{ "p99_ttft_ms", 1, 1 },
	{ "median_tpot_ms", 1, 2 },
	{ "p90_tpot_ms", 1, 2 },
	{ "p99_tpot_ms", 1, 2 },
	{ "median_itl_ms", 1, 2 },
	{ "p90_itl_ms", 1, 2 },
	{ "p99_itl_ms", 1, 2 },
	{ "peak_system_memory_bytes", MIB, 0 },
	{ NULL, 0, 0 },
};

/* The machine's 1-minute load at the sweep's first and last request,
 * "0.4 → 1.2" ("!" after it when it was not quiet), or "-". */
static void
load_cell(struct buf *b, const json_t *load)
{
	const json_t *s = json_object_get(load, "start");
	const json_t *e = json_object_get(load, "end");

	buf_puts(b, " | ");
	if (!json_is_object(s) || !json_is_object(e)) {
		buf_puts(b, "-");
		return;
	}
	buf_printf(b, "%.1f \u2192 %.1f%s", json_number_value(json_object_get(
	    s, "load1")), json_number_value(json_object_get(e, "load1")),
	    json_is_false(json_object_get(load, "quiet")) ? " !" : "");
}

/* The sweeps of table t measured while the machine was not quiet. */
static void
md_busy(struct buf *b, const json_t *t)
{
	const json_t *r;
	char *why;
	size_t i, n = 0;

	json_array_foreach(json_object_get(t, "rows"), i, r) {
		if ((why = machine_load_warning(json_object_get(r,
		    "machine_load"))) == NULL)
			continue;
		buf_puts(b, n++ == 0 ? "\n**Warning: the machine was not "
		    "quiet** (1-minute load at or above its cores) while it "
		    "measured " : "; ");
		quote_md(b, jsonget_str(r, "engine"));
		buf_printf(b, " c=%lld (%s)", (long long)jsonget_int(r,
		    "concurrency"), why);
		free(why);
	}
	if (n > 0)
		buf_puts(b, ": those figures may be slower than the engine "
		    "is.\n");
}

static void
md_tables(struct buf *b, const json_t *comparison,
    const struct plot_file *plots, size_t nplots)
{
	const json_t *t, *r, *sc;
	int many = fleet(comparison);
	size_t i, j, k;

	json_array_foreach(json_object_get(comparison, "tables"), i, t) {
		buf_printf(b, "## %s / %s\n\n| engine | c | requests | "
		    "output tok/s | input tok/s | total tok/s | TTFT p50 (ms) | "
		    "TTFT p99 (ms) | TPOT p50 (ms) | TPOT p90 (ms) | TPOT p99 "
		    "(ms) | ITL p50 (ms) | ITL p90 (ms) | ITL p99 (ms) | peak "
		    "system MiB | load | status | outcome |\n"
		    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
		    "--:|--:|---|---|\n", jsonget_str(t, "model"),
		    jsonget_str(t, "split"));
		json_array_foreach(json_object_get(t, "rows"), j, r) {
			engine_cell(b, r, many);
			buf_printf(b, " | %lld | %lld/%lld", (long long)
			    jsonget_int(r, "concurrency"), (long long)
			    jsonget_int(r, "completed"), (long long)
			    jsonget_int(r, "total"));
			for (k = 0; figures[k].key != NULL; k++)
				cell_num(b, json_object_get(r, figures[k].key),
				    figures[k].scale, figures[k].decimals, 0,
				    "");
			load_cell(b, json_object_get(r, "machine_load"));
			cell_text(b, jsonget_str(r, "status"));
			cell_text(b, jsonget_str(r, "outcome"));
			buf_puts(b, " |\n");
		}
		md_busy(b, t);
		json_array_foreach(json_object_get(t, "scaling"), j, sc) {
			if (j == 0)
				buf_puts(b, "\nScaling (output throughput at the "
				    "highest level over the lowest):");
			buf_printf(b, "%s %s", j ? "," : "",
			    jsonget_str(sc, "engine"));
			if (json_is_number(json_object_get(sc, "ratio")))
				buf_printf(b, " %.2fx (c%lld/c%lld)",
				    json_number_value(json_object_get(sc,
				    "ratio")), (long long)jsonget_int(sc, "to"),
				    (long long)jsonget_int(sc, "from"));
			else
				buf_puts(b, " -");
		}
		buf_puts(b, json_array_size(json_object_get(t, "scaling")) ?
		    ".\n\n" : "\n");
		for (k = 0; k < nplots; k++)
			if (strcmp(plots[k].model,
			    jsonget_str(t, "model")) == 0 &&
			    strcmp(plots[k].split,
			    jsonget_str(t, "split")) == 0 &&
			    strncmp(plots[k].name, "plots/memory", 12) != 0 &&
			    strncmp(plots[k].name, "plots/throughput-memory",
			    23) != 0)
				buf_printf(b, "![%s](%s)\n", plots[k].title,
				    plots[k].name);
		buf_puts(b, "\n");
	}
}

static void
md_fidelity(struct buf *b, const json_t *rows)
{
	const json_t *r, *ref;
	size_t i;

	buf_puts(b, "## Fidelity\n\n");
	if (json_array_size(rows) == 0) {
		buf_puts(b, "No fidelity run in this snapshot.\n\n");
		return;
	}
	buf_puts(b, "| engine | model | shots | items | weighted F1 % | "
	    "macro F1 % | vs reference (pp) | on items | agreement % | "
	    "unparsable | failed | outcome |\n"
	    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
	json_array_foreach(rows, i, r) {
		ref = json_object_get(r, "reference");
		buf_printf(b, "| %s | %s | %lld", jsonget_str(r, "engine"),
		    jsonget_str(r, "model"), (long long)jsonget_int(r,
		    "shots"));
		cell_num(b, json_object_get(r, "items"), 1, 0, 0, "");
		cell_num(b, json_object_get(r, "weighted_f1"), 0.01, 1, 0, "");
		cell_num(b, json_object_get(r, "macro_f1"), 0.01, 1, 0, "");
		cell_num(b, json_object_get(ref, "delta_pp"), 1, 2, 1, "");
		cell_num(b, json_object_get(ref, "compared"), 1, 0, 0, "");
		cell_num(b, json_object_get(ref, "agreement"), 0.01, 1, 0, "");
		buf_printf(b, " | %lld | %lld", (long long)jsonget_int(r,
		    "parse_failures"), (long long)jsonget_int(r,
		    "request_failures"));
		cell_text(b, jsonget_str(r, "outcome"));
		buf_puts(b, " |\n");
	}
	buf_puts(b, "\nItems is how many fidelity items each score rests on; "
	    "weighted F1 is against the gold labels; \"vs reference\" "
	    "is the weighted F1 minus the reference engine's, over the items "
	    "both answered (\"on items\": how many), and agreement the share of items given the same "
	    "label. Unparsable answers (no label, or several) and failed "
	    "requests are wrong predictions of the class `none`, counted "
	    "apart and never dropped.\n\n");
}

static void
md_memory(struct buf *b, const json_t *gate, const struct plot_file *plots,
    size_t nplots)
{
	const json_t *e, *m, *g;
	size_t i;

	buf_puts(b, "## Memory\n\n| engine | highest peak at | peak system GiB | "
	    "of RAM | of Metal hint | peak engine MiB | engine growth |\n"
	    "|---|---|--:|--:|--:|--:|---|\n");
	json_array_foreach(json_object_get(gate, "engines"), i, e) {
		m = json_object_get(e, "memory");
		if (!json_is_object(m))
			continue;
		g = json_object_get(m, "growth");
		buf_printf(b, "| %s | %s / %s c=%lld", jsonget_str(e, "engine"),
		    jsonget_str(m, "model"), jsonget_str(m, "split"),
		    (long long)jsonget_int(m, "concurrency"));
		cell_num(b, json_object_get(m, "peak_system_memory_bytes"),
		    GIB, 2, 0, "");
		cell_num(b, json_object_get(m, "peak_vs_ram"),
		    0.01, 0, 0, " %");
		cell_num(b, json_object_get(m, "peak_vs_hint"),
		    0.01, 0, 0, " %");
		cell_num(b, json_object_get(m, "peak_engine_memory_bytes"),
		    MIB, 0, 0, "");
		if (json_is_object(g))
			buf_printf(b,
			    " | %.2fx, c=%lld to c=%lld (%s / %s) |\n",
			    json_number_value(json_object_get(g, "ratio")),
			    (long long)jsonget_int(g, "from"),
			    (long long)jsonget_int(g, "to"),
			    jsonget_str(g, "model"), jsonget_str(g, "split"));
		else
			buf_puts(b, " | - |\n");
	}
	buf_puts(b, "\nPeak system memory is all memory in use on the machine "
	    "while the engine served; the engine's footprint is its process "
	    "tree's. The Metal hint is macOS's recommendedMaxWorkingSetSize "
	    "(\"-\" where there is none).\n\n");
	for (i = 0; i < nplots; i++)
		if (strncmp(plots[i].name, "plots/memory", 12) == 0 ||
		    strncmp(plots[i].name, "plots/throughput-memory", 23) == 0)
			buf_printf(b, "![%s](%s)\n", plots[i].title,
			    plots[i].name);
	buf_puts(b, "\n");
}

char *
report_markdown(const json_t *info, const json_t *comparison,
    const json_t *gate, const json_t *fidelity_rows,
    const struct plot_file *plots, size_t nplots)
{
	const json_t *runs = json_object_get(gate, "runs"), *v, *m;
	static const char *const kinds[] = { "campaign", "fidelity",
	    "reference", NULL };
	struct buf b = BUF_INIT;
	size_t i, k;

	buf_puts(&b, "# Results\n\n");
	if (json_is_string(json_object_get(comparison, "cycle")))
		buf_printf(&b, "Cycle `%s`. ", jsonget_str(comparison,
		    "cycle"));
	m = json_object_get(comparison, "measured");
	if (json_is_string(json_object_get(m, "from")))
		buf_printf(&b, "Measured from %s to %s (UTC). ",
		    jsonget_str(m, "from"), jsonget_str(m, "to"));
	buf_printf(&b, "Measured at commit `%s` with warden %s. "
	    "Result set sha256 `%s`.\n\n", jsonget_str(info, "commit"),
	    jsonget_str(info, "warden_version"), jsonget_str(gate,
	    "results_sha256"));
	for (k = 0; kinds[k] != NULL; k++) {
		buf_printf(&b, "%s runs:", kinds[k]);
		if (json_array_size(json_object_get(runs, kinds[k])) == 0)
			buf_puts(&b, " none");
		json_array_foreach(json_object_get(runs, kinds[k]), i, v)
			buf_printf(&b, "%s `%s`", i ? "," : "",
			    json_string_value(v));
		buf_puts(&b, ".  \n");
	}
	buf_puts(&b, "\nEvery figure comes from the per-run files beside this "
	    "report (`MODEL/SPLIT/ENGINE_RUNID.json`, `fidelity/…`), named by "
	    "run id; `manifest.json` holds the sha256 of every input and "
	    "output. Throughput is output tokens of successful requests over "
	    "the sweep's wall time; TTFT runs to the first streamed content; "
	    "TPOT is per request, (last − first token) / (tokens − 1); "
	    "peak system MiB is the machine's memory in use at its highest "
	    "during the sweep. Each figure is defined once, with the name "
	    "every file gives it, in warden's doc/glossary.md.\n\n");
	report_md_what_ran(&b, json_object_get(info, "ran"));
	md_gate(&b, gate);
	md_tables(&b, comparison, plots, nplots);
	if (json_is_object(json_object_get(comparison, "since")))
		report_md_since(&b, json_object_get(comparison, "since"));
	md_fidelity(&b, fidelity_rows);
	md_memory(&b, gate, plots, nplots);
	quote_md_doc(&b);
	return buf_detach(&b);
}
