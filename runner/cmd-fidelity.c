/*
 * cmd-fidelity.c - `warden fidelity`: run the fidelity task against the
 * roster's engines (fidelity.c), show a run's table with the comparison
 * against the reference, list runs, import a reference engine's answers,
 * and mark a measured run as the reference.
 *
 * No scoring and no SQL here: rows come from fidelity_table() over the
 * run's documents (resultset.c).
 */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "jsonget.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "util.h"
#include "results/fidelity.h"
#include "results/fidelity-table.h"
#include "results/resultset.h"
#include "results/store-results.h"

/* "0,5" into shots; 0 on success. */
static int
parse_shots(const char *s, int **out, size_t *n)
{
	const char *p = s;
	char *end;
	long v;

	*out = NULL;
	*n = 0;
	while (*p != '\0') {
		v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > 64 || (*end != ',' && *end != '\0'))
			return -1;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = (int)v;
		p = *end == ',' ? end + 1 : end;
	}
	return *n == 0 ? -1 : 0;
}

static int
id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64 || id[0] == '.' || id[0] == '-')
		return 0;
	return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == n;
}

static struct werr *
load_task(struct cmd_ctx *ctx, const char *arg, struct fidelity_task **t)
{
	const char *root;
	struct werr *err;
	char *dir;

	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if (arg != NULL)
		return fidelity_task_load(t, arg, arg);
	dir = path_join(root, "workloads/fidelity");
	err = fidelity_task_load(t, dir, "workloads/fidelity");
	free(dir);
	return err;
}

static void
show_progress(void *arg, const struct fidelity_progress *p)
{
	int final = strcmp(p->phase, "done") == 0;

	if (final && p->weighted_f1 < 0) {
		output_progress(1, "cell %zu/%zu %s %s %d-shot: %s, %zu/%zu "
		    "answered, no score, %.1f s", p->cell, p->cells,
		    p->engine, p->model, p->shots, p->outcome, p->ok, p->total,
		    p->elapsed_s);
		return;
	}
	if (final) {
		output_progress(1, "cell %zu/%zu %s %s %d-shot: %s, %zu/%zu "
		    "answered, weighted F1 %.1f %%, %.1f s", p->cell, p->cells,
		    p->engine, p->model, p->shots, p->outcome, p->ok, p->total,
		    p->weighted_f1 * 100, p->elapsed_s);
		return;
	}
	/* off a terminal, once per progress interval */
	output_progress_live("cell %zu/%zu %s %s %d-shot: %s %zu/%zu",
	    p->cell, p->cells, p->engine, p->model, p->shots, p->phase,
	    p->done, p->total);
}

/* ---- the table of a run ---- */

static struct werr *
run_table(struct store *store, const char *run_id, json_t **out)
{
	struct resultset rs, refs;
	json_t *docs = NULL, *rdocs = NULL, *row = NULL;
	char *ref = NULL, *ref_engine = NULL;
	struct werr *err;
	json_int_t limit, items;

	resultset_init(&rs);
	resultset_init(&refs);
	*out = NULL;
	if ((err = resultset_add_fidelity(&rs, store, run_id, NULL)) != NULL ||
	    (err = store_fidelity_reference(store, &ref, &ref_engine)) != NULL ||
	    (err = store_fidelity_run_get(store, run_id, &row)) != NULL)
		goto out;
	if (ref != NULL && (err = resultset_add_fidelity(&refs, store, ref,
	    ref_engine)) != NULL)
		goto out;
	docs = resultset_docs(&rs, "fidelity");
	rdocs = resultset_docs(&refs, "reference");
	limit = json_integer_value(json_object_get(json_object_get(row, "grid"),
	    "limit"));
	items = json_integer_value(json_object_get(json_object_get(row, "task"),
	    "items"));
	*out = json_pack("{s:s, s:O, s:I, s:O, s:s?, s:s?, s:o}", "run_id",
	    run_id, "kind", json_object_get(row, "kind"), "items",
	    limit > 0 && limit < items ? limit : items,
	    "task", json_object_get(row, "task"), "reference", ref,
	    "reference_engine", ref_engine,
	    "rows", fidelity_table(docs, rdocs));
out:
	json_decref(docs);
	json_decref(rdocs);
	json_decref(row);
	free(ref);
	free(ref_engine);
	resultset_free(&rs);
	resultset_free(&refs);
	return err;
}

static void
print_pct(const json_t *v, int width)
{
	if (json_is_number(v))
		printf(" %*.1f", width, json_number_value(v) * 100);
	else
		printf(" %*s", width, "-");
}

static void
print_table(const json_t *doc)
{
	const json_t *task = json_object_get(doc, "task"), *row, *ref;
	long long items = json_integer_value(json_object_get(task, "items"));
	long long asked = json_integer_value(json_object_get(doc, "items"));
	struct buf title = BUF_INIT;
	size_t i;

	buf_printf(&title, "fidelity run %s (task %s, sha256 %.12s, ",
	    quote_str(json_string_value(json_object_get(doc, "run_id"))),
	    quote_str(json_string_value(json_object_get(task, "name"))),
	    quote_str(json_string_value(json_object_get(task, "sha256"))));
	if (asked > 0 && asked < items)
		buf_printf(&title, "%lld of ", asked);
	output_line(4, "%s%lld items%s)", buf_cstr(&title), items,
	    json_is_true(json_object_get(task, "synthetic")) ?
	    ", synthetic" : "");
	buf_free(&title);
	if (json_is_string(json_object_get(doc, "reference")))
		printf("reference: run %s, engine %s\n",
		    quote_str(json_string_value( json_object_get(doc,
		    "reference"))), quote_str(json_string_value(
		    json_object_get(doc, "reference_engine"))));
	else
		printf("reference: none (warden fidelity import-reference FILE, "
		    "or mark-reference RUN)\n");
	/* Within OUTPUT_WIDTH at nine engines: a row per model and shots
	 * under its engine's line, model names cut at 15 columns. */
	printf("\n%-17s %5s %5s %5s %5s %6s %6s %4s %4s  %s\n", "engine/model",
	    "shots", "wF1", "mF1", "acc", "vs ref", "agree", "unp", "fail",
	    "outcome");
	json_array_foreach(json_object_get(doc, "rows"), i, row) {
		const char *engine = json_string_value(json_object_get(row,
		    "engine")), *model = quote_str(json_string_value(
		    json_object_get(row, "model")));

		if (i == 0 || strcmp(engine, json_string_value(json_object_get(
		    json_array_get(json_object_get(doc, "rows"), i - 1),
		    "engine"))) != 0)
			printf("%s\n", quote_str(engine));
		ref = json_object_get(row, "reference");
		printf("  %-15.15s %5lld", model, (long long)json_integer_value(
		    json_object_get(row, "shots")));
		print_pct(json_object_get(row, "weighted_f1"), 5);
		print_pct(json_object_get(row, "macro_f1"), 5);
		print_pct(json_object_get(row, "accuracy"), 5);
		if (json_is_number(json_object_get(ref, "delta_pp")))
			printf(" %+6.2f", json_number_value(json_object_get(ref,
			    "delta_pp")));
		else
			printf(" %6s", "-");
		print_pct(json_object_get(ref, "agreement"), 5);
		printf("%s %4lld %4lld  %s\n",
		    json_is_number(json_object_get(ref, "agreement")) ? "%" :
		    " ", (long long)json_integer_value(json_object_get(row,
		    "parse_failures")),
		    (long long)json_integer_value(json_object_get(row,
		    "request_failures")),
		    quote_str(json_string_value(json_object_get(row,
		    "outcome"))));
	}
	printf("\nwF1, mF1 (weighted and macro F1) and acc in %%; vs ref: "
	    "weighted F1 minus the\nreference's, in percentage points, over "
	    "the items both answered; agree: items\nwith the same label; "
	    "unp: answers without exactly one label; fail: requests\nthat "
	    "failed or never ran. Both count as wrong (class 'none').\n");
}

static struct werr *
print_run(struct cmd_ctx *ctx, struct store *store, const char *run_id)
{
	struct werr *err;
	json_t *doc;

	if ((err = run_table(store, run_id, &doc)) != NULL)
		return err;
	if (ctx->json)
		output_json(doc);
	else
		print_table(doc);
	json_decref(doc);
	return NULL;
}

/* ---- subcommands ---- */

static struct werr *
fidelity_show(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	char *run = NULL;

	if ((err = cmd_no_options(ctx, &cmd_fidelity_entry, argc, argv)) != NULL)
		return err;
	if (argc - optind > 1)
		return cmd_usage_error(&cmd_fidelity_entry,
		    "'fidelity show' takes at most one run id");
	if ((err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	if (optind < argc)
		run = xstrdup(argv[optind]);
	else if ((err = store_fidelity_run_latest(store, &run)) != NULL)
		return err;
	if (run == NULL)
		return werr_new(WEXIT_INPUT, "no finished fidelity run");
	err = print_run(ctx, store, run);
	free(run);
	return err;
}

/* The runs as a table under a header, the reference marked. */
static void
print_runs(const json_t *runs)
{
	const json_t *r;
	size_t i, n, w = 3;

	json_array_foreach(runs, i, r)
		if ((n = strlen(quote_str(jsonget_str(r, "run_id")))) > w)
			w = n;
	printf("%-*s  %-8s  %-7s  %s\n", (int)w, "run", "kind", "state",
	    "created");
	json_array_foreach(runs, i, r)
		printf("%-*s  %-8s  %-7s  %s%s\n", (int)w,
		    quote_str(jsonget_str(r, "run_id")),
		    quote_str(jsonget_str(r, "kind")),
		    quote_str(jsonget_str(r, "state")),
		    quote_str(jsonget_str(r, "created")),
		    json_integer_value(json_object_get(r, "reference")) == 1 ?
		    "  (reference)" : "");
}

static struct werr *
fidelity_list(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	json_t *runs;

	if ((err = cmd_no_options(ctx, &cmd_fidelity_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_fidelity_entry,
		    "'fidelity list' takes no arguments");
	if ((err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = store_fidelity_runs(store, &runs)) != NULL)
		return err;
	if (ctx->json)
		output_json(runs);
	else if (json_array_size(runs) == 0)
		cmd_list_empty(ctx, "fidelity runs (warden fidelity runs one)");
	else
		print_runs(runs);
	json_decref(runs);
	return NULL;
}

static struct werr *
fidelity_mark(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "engine", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	const char *engine = NULL;
	struct store *store;
	struct werr *err = NULL;
	int ch;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_fidelity_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch != 'e')
			return cmd_usage_error(&cmd_fidelity_entry, "bad option");
		engine = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_fidelity_entry,
		    "'fidelity mark-reference' takes one run id");
	if ((err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = store_fidelity_mark_reference(store, argv[optind],
	    engine)) != NULL)
		return err;
	if (ctx->json)
		return print_run(ctx, store, argv[optind]);
	printf("fidelity run %s is the reference\n", argv[optind]);
	return NULL;
}

static struct werr *
fidelity_import(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "engine", required_argument, NULL, 'e' },
		{ "task", required_argument, NULL, 't' },
		{ "run-id", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	struct fidelity_task *task = NULL;
	const char *engine = "reference", *task_dir = NULL, *run_id = NULL;
	const char *root;
	struct policy *pol;
	struct store *store;
	struct werr *err, *gerr = NULL;
	char *id = NULL;
	int ch;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_fidelity_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 'e':
			if (!id_ok(optarg))
				return cmd_usage_error(&cmd_fidelity_entry,
				    "'--engine' takes a plain name");
			engine = optarg;
			break;
		case 't':
			task_dir = optarg;
			break;
		case 'i':
			if (!id_ok(optarg))
				return cmd_usage_error(&cmd_fidelity_entry,
				    "'--run-id' takes 1 to 64 letters, digits, "
				    "'.', '_' or '-'");
			run_id = optarg;
			break;
		default:
			return cmd_usage_error(&cmd_fidelity_entry, "bad option");
		}
	}
	if (gerr != NULL)
		return gerr;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_fidelity_entry,
		    "'fidelity import-reference' takes one FILE");
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, &pol)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = load_task(ctx, task_dir, &task)) != NULL)
		goto out;
	if ((err = fidelity_import_reference(store, root, pol, task,
	    argv[optind], argv[optind], engine, run_id, &id)) != NULL)
		goto out;
	if (!ctx->json)
		printf("imported %s as fidelity run %s, now the reference\n\n",
		    argv[optind], id);
	err = print_run(ctx, store, id);
out:
	fidelity_task_free(task);
	free(id);
	return err;
}

static struct werr *
fidelity_measure(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "roster", required_argument, NULL, 'r' },
		{ "engine", required_argument, NULL, 'e' },
		{ "model", required_argument, NULL, 'm' },
		{ "shots", required_argument, NULL, 's' },
		{ "task", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' },
		{ "concurrency", required_argument, NULL, 'c' },
		{ "run-id", required_argument, NULL, 'i' },
		{ "resume", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_names engines = { 0 }, models = { 0 };
	struct fidelity_task *task = NULL;
	struct fidelity_opts o;
	const char *task_dir = NULL;
	struct werr *err = NULL, *gerr = NULL;
	char *run_id = NULL, *end;
	int ch, *shots = NULL;
	size_t nshots = 0;
	long v;

	memset(&o, 0, sizeof(o));
	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_fidelity_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 'r':
			o.roster = optarg;
			break;
		case 'e':
			cmd_names_add(&engines, optarg);
			break;
		case 'm':
			cmd_names_add(&models, optarg);
			break;
		case 's':
			free(shots);
			if (parse_shots(optarg, &shots, &nshots) != 0) {
				err = cmd_usage_error(&cmd_fidelity_entry,
				    "'--shots' takes counts like 0,5");
				goto out;
			}
			break;
		case 't':
			task_dir = optarg;
			break;
		case 'n':
		case 'c':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v > (ch == 'c' ? 4096 :
			    INT_MAX)) {
				err = cmd_usage_error(&cmd_fidelity_entry,
				    "'--%s' takes a positive number",
				    ch == 'c' ? "concurrency" : "limit");
				goto out;
			}
			if (ch == 'c')
				o.concurrency = (unsigned)v;
			else
				o.limit = (size_t)v;
			break;
		case 'i':
			if (!id_ok(optarg)) {
				err = cmd_usage_error(&cmd_fidelity_entry,
				    "'--run-id' takes 1 to 64 letters, digits, "
				    "'.', '_' or '-', not starting with '.' or "
				    "'-'");
				goto out;
			}
			o.run_id = optarg;
			break;
		case 'R':
			o.resume = 1;
			break;
		default:
			err = cmd_usage_error(&cmd_fidelity_entry, "bad option");
			goto out;
		}
	}
	if (gerr != NULL) {
		err = gerr;
		goto out;
	}
	if (optind != argc) {
		err = cmd_usage_error(&cmd_fidelity_entry, "unknown subcommand "
		    "'%s'", argv[optind]);
		goto out;
	}
	if (o.resume && (engines.n || models.n || shots || o.limit ||
	    o.roster || o.concurrency)) {
		err = cmd_usage_error(&cmd_fidelity_entry, "'--resume' runs the "
		    "stored grid of the run; it takes no filters");
		goto out;
	}
	if ((err = cmd_ctx_repo(ctx, &o.repo_root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, (struct policy **)&o.policy)) != NULL ||
	    (err = cmd_ctx_store(ctx, &o.store)) != NULL ||
	    (err = load_task(ctx, task_dir, &task)) != NULL)
		goto out;
	o.task = task;
	o.engines = engines.v;
	o.models = models.v;
	o.shots = shots;
	o.nshots = nshots;
	o.on_progress = ctx->verbosity >= 0 ? show_progress : NULL;
	output_progress_interval(o.policy->campaign.progress_interval_s);
	err = fidelity_run(&o, &run_id);
	if (run_id == NULL)
		goto out;
	if (err != NULL) {
		fprintf(stderr, "warden: fidelity run %s stopped; continue it "
		    "with 'warden fidelity --resume --run-id %s'\n", run_id,
		    run_id);
		goto out;
	}
	err = print_run(ctx, o.store, run_id);
out:
	fidelity_task_free(task);
	free(run_id);
	free(shots);
	free(engines.v);
	free(models.v);
	return err;
}

static struct werr *
fidelity_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return fidelity_show(ctx, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return fidelity_list(ctx, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "import-reference") == 0)
		return fidelity_import(ctx, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "mark-reference") == 0)
		return fidelity_mark(ctx, argc - 1, argv + 1);
	return fidelity_measure(ctx, argc, argv);
}

const struct cmd_entry cmd_fidelity_entry = {
	"fidelity",
	"[--roster R] [--engine E]... [--model M]... [--shots 0,5] "
	"[--task DIR] [--limit N] [--concurrency N] [--run-id ID] [--resume] "
	"[--json]\n"
	"show [RUN]\n"
	"list\n"
	"import-reference [--engine NAME] [--task DIR] [--run-id ID] FILE\n"
	"mark-reference [--engine E] RUN",
	"score engines on the fidelity task against gold and the reference",
	"Asks every item of the fidelity task (workloads/fidelity) of each\n"
	"engine x model x shots, through the campaign's load generator and\n"
	"engine lifecycle, parses each answer into a label, and prints weighted\n"
	"and macro F1 with the difference from the reference in percentage\n"
	"points and the per-item agreement. A failed request or an answer\n"
	"without exactly one label is a wrong prediction, counted on its own.\n"
	"  --roster R          the roster (default: policy default_roster)\n"
	"  --engine E          only engine E (repeatable)\n"
	"  --model M           only model M (repeatable)\n"
	"  --shots L           exemplar counts, e.g. 0,5 (default 0,5)\n"
	"  --task DIR          the task directory (default workloads/fidelity)\n"
	"  --limit N           the first N items\n"
	"  --concurrency N     requests in flight (default 8)\n"
	"  --run-id ID         name the run\n"
	"  --resume            continue the newest unfinished run of this\n"
	"                      machine (or --run-id ID)\n"
	"  --json              print the table as JSON\n"
	"show [RUN]            the table of a run (default: the newest)\n"
	"list                  every run, the reference marked\n"
	"import-reference FILE import a reference engine's answers (JSON\n"
	"                      Lines of {model, shots, id, answer}) and make it\n"
	"                      the reference; --engine names it\n"
	"mark-reference RUN    make a finished run's cells of one engine\n"
	"                      (--engine E when it has several) the reference\n"
	"Engine failures are results: exit 0 when the grid ran to its end.\n"
	"Examples:\n"
	"  warden fidelity --engine sim-continuous --shots 0 --limit 60\n"
	"  warden fidelity mark-reference demo-reference\n"
	"  warden fidelity show demo-2-r2-fidelity\n",
	fidelity_exec,
};
