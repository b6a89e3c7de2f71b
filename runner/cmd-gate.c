/*
 * cmd-gate.c - `warden gate`: SiliconBench's Table 5 for a campaign (and
 * a fidelity run) through gate.c: per engine completion, fidelity and
 * coverage, each with why, speed and memory beside them; exit 1 when an
 * engine that passed in the last published snapshot fails now.
 *
 * No judging here: the verdicts come from gate_run(); this file prints.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmd-results.h"
#include "jsonget.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "util.h"
#include "results/gate.h"
#include "results/snapshot.h"

/* Passed, failed, or "-" not gated (a check policy turns off). */
static const char *
mark(const json_t *check)
{
	if (json_object_get(check, "not_gated") != NULL)
		return "-";
	return json_is_true(json_object_get(check, "pass")) ? "\u2713" :
	    "\u2717";
}

/*
 * The table fits OUTPUT_WIDTH columns: a row per engine, its three
 * verdicts and what is reported beside them, narrow columns named by the
 * note under the table. An engine's failures follow, at most
 * GATE_FAILURES lines a check (at 162 cells one check can fail in 18),
 * the rest counted with where they are whole (--json).
 */
#define GATE_FAILURES 3
#define GATE_LIST_LINES 4

/* A list of strings after label, wrapped, "none" when empty. */
static void
print_list(const char *label, const json_t *list)
{
	struct output_list l;
	const json_t *v;
	size_t i;

	output_list_init(&l, label, NULL, GATE_LIST_LINES);
	json_array_foreach(list, i, v)
		output_list_add(&l, "%s", quote_str(json_string_value(v)));
	output_list_print(&l, "none", "warden --json gate");
}

/* The runs judged: "campaign a, b; fidelity f; reference r". */
static void
print_runs(const json_t *g)
{
	static const char *const kinds[] = { "campaign", "fidelity",
	    "reference", NULL };
	const json_t *runs = json_object_get(g, "runs"), *v;
	struct output_list l;
	struct buf b = BUF_INIT;
	char label[64];
	size_t i, k;

	snprintf(label, sizeof(label), "gate over results %.16s: ",
	    quote_str(json_string_value(json_object_get(g,
	    "results_sha256"))));
	output_list_init(&l, label, "; ", 0);
	for (k = 0; kinds[k] != NULL; k++) {
		buf_reset(&b);
		json_array_foreach(json_object_get(runs, kinds[k]), i, v)
			buf_printf(&b, "%s%s", i ? ", " : " ",
			    quote_str(json_string_value(v)));
		output_list_add(&l, "%s%s", kinds[k], b.len > 0 ?
		    buf_cstr(&b) : " none");
	}
	output_list_print(&l, NULL, NULL);
	buf_free(&b);
}

static void
print_thresholds(const json_t *th)
{
	struct output_list l;
	struct buf b = BUF_INIT;
	const json_t *v;
	size_t i;

	output_list_init(&l, "thresholds: ", "; ", 0);
	buf_printf(&b, "completion >= %lld/%lld at every level of",
	    (long long)json_integer_value(json_object_get(th, "completion_min")),
	    (long long)json_integer_value(json_object_get(th, "completion_of")));
	json_array_foreach(json_object_get(th, "concurrency"), i, v)
		buf_printf(&b, "%s%lld", i ? "," : " c=",
		    (long long)json_integer_value(v));
	buf_puts(&b, " on");
	json_array_foreach(json_object_get(th, "splits"), i, v)
		buf_printf(&b, "%s %s", i ? "," : "",
		    quote_str(json_string_value(v)));
	output_list_add(&l, "%s", buf_cstr(&b));
	if (json_is_string(json_object_get(th, "fidelity_not_gated")))
		output_list_add(&l, "fidelity not gated (%s)", quote_str(
		    jsonget_str(th, "fidelity_not_gated")));
	else
		output_list_add(&l, "fidelity within %.2f pp of the reference",
		    json_number_value(json_object_get(th,
		    "fidelity_band_pp")));
	buf_reset(&b);
	json_array_foreach(json_object_get(th, "required_models"), i, v)
		buf_printf(&b, "%s %s", i ? "," : "",
		    quote_str(json_string_value(v)));
	output_list_add(&l, "models%s", b.len > 0 ? buf_cstr(&b) : " none");
	output_list_print(&l, NULL, NULL);
	buf_free(&b);
}

/* A check mark in a column of width w (the marks are 3 bytes, 1 wide). */
static void
print_mark(const json_t *check, int w)
{
	printf(" %s%*s", mark(check), w - 1, "");
}

/* GiB in five columns: two decimals under 10, one above. */
static void
print_gib(const json_t *v)
{
	double gib;

	if (!json_is_integer(v)) {
		printf(" %5s", "-");
		return;
	}
	gib = (double)json_integer_value(v) / 1073741824.0;
	printf(gib < 10 ? " %5.2f" : " %5.1f", gib);
}

static void
print_pct(const json_t *v)
{
	if (json_is_number(v))
		printf(" %3.0f%%", json_number_value(v) * 100);
	else
		printf(" %4s", "-");
}

/* An engine's failures of one check, at most GATE_FAILURES lines. */
static void
print_failures(const char *engine, const char *check, const json_t *fails)
{
	struct output_list l;
	const json_t *f;
	size_t i, n = json_array_size(fails);
	char *label = xasprintf("%s %s \u2717 ", engine, check);

	json_array_foreach(fails, i, f) {
		if (i == GATE_FAILURES - 1 && n > GATE_FAILURES) {
			printf("%sand %zu more: warden --json gate\n", label,
			    n - i);
			break;
		}
		output_list_init(&l, label, NULL, 0);
		output_list_add(&l, "%s", quote_msg(json_string_value(
		    json_object_get(f, "why"))));
		output_list_print(&l, NULL, NULL);
	}
	free(label);
}

void
cmd_gate_print(const json_t *g)
{
	const json_t *e, *mem, *v;
	static const char *const checks[] = { "completion", "fidelity",
	    "coverage", NULL };
	size_t i, k, nfail = 0;

	print_runs(g);
	print_thresholds(json_object_get(g, "thresholds"));
	printf("\n%-15s %-8s %-8s %-8s %-6s %7s %5s %4s %4s %6s\n",
	    "engine", "complete", "fidelity", "coverage", "result", "tok/s",
	    "GiB", "RAM", "hint", "growth");
	json_array_foreach(json_object_get(g, "engines"), i, e) {
		mem = json_object_get(e, "memory");
		printf("%-15s", quote_str(json_string_value(json_object_get(e,
		    "engine"))));
		print_mark(json_object_get(e, "completion"), 8);
		print_mark(json_object_get(e, "fidelity"), 8);
		print_mark(json_object_get(e, "coverage"), 8);
		printf(" %-6s", json_is_true(json_object_get(e, "pass")) ?
		    "pass" : "FAIL");
		v = json_object_get(e, "best_output_throughput");
		if (json_is_number(v))
			printf(" %7.1f", json_number_value(v));
		else
			printf(" %7s", "-");
		print_gib(json_object_get(mem, "peak_system_memory_bytes"));
		print_pct(json_object_get(mem, "peak_vs_ram"));
		print_pct(json_object_get(mem, "peak_vs_hint"));
		v = json_object_get(json_object_get(mem, "growth"), "ratio");
		if (json_is_number(v))
			printf(" %5.2fx\n", json_number_value(v));
		else
			printf(" %6s\n", "-");
	}
	json_array_foreach(json_object_get(g, "engines"), i, e)
		for (k = 0; checks[k] != NULL; k++)
			nfail += json_array_size(json_object_get(
			    json_object_get(e, checks[k]), "failures"));
	if (nfail > 0)
		printf("\n");	/* the failures as a block of their own */
	json_array_foreach(json_object_get(g, "engines"), i, e)
		for (k = 0; checks[k] != NULL; k++)
			print_failures(quote_str(json_string_value(
			    json_object_get(e, "engine"))), checks[k],
			    json_object_get(json_object_get(e, checks[k]),
			    "failures"));
	printf("\ntok/s is the best output throughput; GiB the peak system "
	    "memory in use, RAM and\nhint its share of RAM and of the Metal "
	    "working-set hint; growth the engine's\nfootprint from the "
	    "lowest level to the highest. Speed and memory are reported,\n"
	    "never gated.\n");
	print_list("passed: ", json_object_get(g, "passed"));
	print_list("failed: ", json_object_get(g, "failed"));
	if (json_is_object(json_object_get(g, "previous"))) {
		char label[64];

		snprintf(label, sizeof(label), "last published (%.12s) "
		    "passed: ", quote_str(json_string_value(json_object_get(
		    json_object_get(g, "previous"), "commit"))));
		print_list(label, json_object_get(json_object_get(g,
		    "previous"), "passed"));
		print_list("now failing after passing there: ",
		    json_object_get(g, "regressions"));
	}
}

static struct werr *
gate_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "campaign", required_argument, NULL, 'c' },
		{ "fidelity", required_argument, NULL, 'f' },
		{ "no-fidelity", no_argument, NULL, 'N' },
		{ "snapshot", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_names camps = { 0 }, fids = { 0 };
	struct gate_input in;
	struct resultset rs;
	const char *snapshot = NULL;
	struct werr *err = NULL, *gerr = NULL;
	json_t *gate = NULL;
	int ch, have_rs = 0;

	memset(&in, 0, sizeof(in));
	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_gate_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 'c':
			cmd_names_add(&camps, optarg);
			break;
		case 'f':
			cmd_names_add(&fids, optarg);
			break;
		case 'N':
			in.no_fidelity = 1;
			break;
		case 's':
			snapshot = optarg;
			break;
		default:
			err = cmd_usage_error(&cmd_gate_entry, "bad option");
			goto out;
		}
	}
	if (gerr != NULL) {
		err = gerr;
		goto out;
	}
	if (optind != argc) {
		err = cmd_usage_error(&cmd_gate_entry, "'gate' takes no "
		    "arguments");
		goto out;
	}
	if (snapshot != NULL && (camps.n || fids.n || in.no_fidelity)) {
		err = cmd_usage_error(&cmd_gate_entry, "'--snapshot' judges the "
		    "runs in the snapshot; it takes no run options");
		goto out;
	}
	if ((err = cmd_ctx_repo(ctx, &in.repo_root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, (struct policy **)&in.policy)) != NULL ||
	    (err = cmd_ctx_store(ctx, &in.store)) != NULL)
		goto out;
	in.campaigns = camps.v;
	in.ncampaigns = camps.n;
	in.fidelity = fids.v;
	in.nfidelity = fids.n;
	if (snapshot != NULL)
		err = snapshot_read_resultset(&rs, snapshot, in.repo_root);
	else
		err = gate_resultset(&rs, &in);
	if (err != NULL)
		goto out;
	have_rs = 1;
	if ((err = gate_judge(&gate, &in, &rs)) != NULL)
		goto out;
	if (ctx->json)
		output_json(gate);
	else
		cmd_gate_print(gate);
	if (json_array_size(json_object_get(gate, "regressions")) > 0)
		err = werr_new(WEXIT_PROBLEM, "%zu engine(s) that passed in the "
		    "last published snapshot fail now",
		    json_array_size(json_object_get(gate, "regressions")));
out:
	if (have_rs)
		resultset_free(&rs);
	json_decref(gate);
	free(camps.v);
	free(fids.v);
	return err;
}

const struct cmd_entry cmd_gate_entry = {
	"gate",
	"[--campaign RUN]... [--fidelity RUN]... [--no-fidelity] "
	"[--snapshot FILE] [--json]",
	"judge engines by the audit gates: completion, fidelity, coverage",
	"SiliconBench's Table 5 per engine: completion >= gates.completion_min\n"
	"of gates.completion_of at every concurrency level on every split,\n"
	"fidelity within gates.fidelity_band_pp of the reference for every\n"
	"measured (model, shots), and coverage of every gates.required_models;\n"
	"each pass or fail with the failing cell and its figure. Speed and\n"
	"memory are reported beside it, never gated. The result is recorded\n"
	"(publish requires it).\n"
	"  --campaign RUN      judge this campaign run (repeatable; default:\n"
	"                      the newest finished measured run, not a\n"
	"                      smoke or triage run)\n"
	"  --fidelity RUN      with this fidelity run (repeatable; default: the\n"
	"                      newest finished measured run)\n"
	"  --no-fidelity       without a fidelity run (fidelity then fails)\n"
	"  --snapshot FILE     judge the runs of a snapshot (e.g. a merge),\n"
	"                      verified with the official tip's policy signers\n"
	"  --json              print the result as JSON\n"
	"Exit 1 when an engine that passed in the last published snapshot\n"
	"(results/gate.json on the official branch) fails now.\n"
	"Examples:\n"
	"  warden gate\n"
	"  warden gate --campaign demo-2-r2-campaign --fidelity demo-2-r2-fidelity\n"
	"  warden gate --snapshot merged.tar.gz\n",
	gate_exec,
};
