/*
 * cmd-campaign.c - `warden campaign`: parse the grid filters, run (or
 * resume) the campaign through campaign.c, show progress, and print the
 * results per (model, split) as SiliconBench prints them: out tok/s,
 * TTFT p50/p90, ITL p50, peak memory, completed N/total, and the scaling
 * from the lowest to the highest concurrency. --json prints the same data.
 *
 * No measuring and no SQL here: the numbers come from the sweep rows the
 * campaign stored (store-campaign.c), grouped for printing.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "cmd.h"
#include "output.h"
#include "policy.h"
#include "store-campaign.h"
#include "util.h"

struct names {
	const char **v;
	size_t n;
};

static void
names_add(struct names *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

/* "1,8,16" into levels; 0 on success. */
static int
parse_levels(const char *s, int **out, size_t *n)
{
	const char *p = s;
	char *end;
	long v;

	*out = NULL;
	*n = 0;
	while (*p != '\0') {
		v = strtol(p, &end, 10);
		if (end == p || v < 1 || v > 100000 || (*end != ',' && *end != '\0'))
			return -1;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = (int)v;
		p = *end == ',' ? end + 1 : end;
	}
	return *n == 0 ? -1 : 0;
}

/* "K/N" with 1 <= K <= N <= 1000; 0 on success. */
static int
parse_shard(const char *s, unsigned *index, unsigned *count)
{
	char *end;
	long k, n;

	if (!isdigit((unsigned char)*s))
		return -1;
	k = strtol(s, &end, 10);
	if (*end != '/' || !isdigit((unsigned char)end[1]))
		return -1;
	s = end + 1;
	n = strtol(s, &end, 10);
	if (*end != '\0' || k < 1 || n < 1 || k > n || n > 1000)
		return -1;
	*index = (unsigned)k;
	*count = (unsigned)n;
	return 0;
}

static void
show_progress(void *arg, const struct campaign_progress *p)
{
	int final = strcmp(p->phase, "done") == 0;

	if (!final && !output_is_tty())
		return;
	if (final) {
		output_progress(1, "sweep %zu/%zu %s %s %s c=%u: %s, "
		    "%zu/%zu ok, %.1f s", p->sweep, p->sweeps, p->engine,
		    p->model, p->split, p->concurrency, p->outcome, p->ok,
		    p->total, p->elapsed_s);
		return;
	}
	if (p->eta_s >= 0)
		output_progress(0, "sweep %zu/%zu %s %s %s c=%u: %s %zu/%zu "
		    "requests, %.1f tok/s, eta %.0f s", p->sweep, p->sweeps,
		    p->engine, p->model, p->split, p->concurrency, p->phase,
		    p->done, p->total, p->tokens_per_s, p->eta_s);
	else
		output_progress(0, "sweep %zu/%zu %s %s %s c=%u: %s",
		    p->sweep, p->sweeps, p->engine, p->model, p->split,
		    p->concurrency, p->phase);
}

/* ---- the report: sweep rows grouped into tables ---- */

static json_t *
table_for(json_t *tables, const char *model, const char *split)
{
	json_t *t;
	size_t i;

	json_array_foreach(tables, i, t) {
		if (strcmp(json_string_value(json_object_get(t, "model")), model) == 0 &&
		    strcmp(json_string_value(json_object_get(t, "split")), split) == 0)
			return t;
	}
	t = json_pack("{s:s, s:s, s:[], s:[]}", "model", model, "split", split,
	    "rows", "scaling");
	json_array_append_new(tables, t);
	return t;
}

static json_t *
num_or_null(const json_t *summary, const char *key)
{
	json_t *v = json_object_get(summary, key);

	return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

static json_t *
row_of(const json_t *sw)
{
	const json_t *sum = json_object_get(sw, "summary");
	json_t *row;

	row = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O}",
	    "engine", json_object_get(sw, "engine"),
	    "concurrency", json_object_get(sw, "concurrency"),
	    "outcome", json_object_get(sw, "outcome"),
	    "completed", json_object_get(sw, "completed"),
	    "total", json_object_get(sw, "total"),
	    "served_model", json_object_get(sw, "served_model"));
	json_object_set_new(row, "output_throughput",
	    num_or_null(sum, "output_throughput"));
	json_object_set_new(row, "median_ttft_ms", num_or_null(sum, "median_ttft_ms"));
	json_object_set_new(row, "p90_ttft_ms", num_or_null(sum, "p90_ttft_ms"));
	/* DESIGN.md's per-request ITL is vllm's TPOT. */
	json_object_set_new(row, "median_itl_ms", num_or_null(sum, "median_tpot_ms"));
	json_object_set(row, "peak_memory_bytes",
	    json_object_get(sw, "peak_system_bytes"));
	json_object_set(row, "peak_engine_memory_bytes",
	    json_object_get(sw, "peak_engine_bytes"));
	json_object_set(row, "detail", json_object_get(sw, "detail"));
	json_object_set(row, "client_limited", json_object_get(sum, "client_limited")
	    ? json_object_get(sum, "client_limited") : json_false());
	return row;
}

/* Per engine of a table: throughput at its highest level over its lowest. */
static void
table_scaling(json_t *t)
{
	json_t *rows = json_object_get(t, "rows"), *a, *b, *lo, *hi;
	const char *eng;
	size_t i, j;

	json_array_foreach(rows, i, a) {
		eng = json_string_value(json_object_get(a, "engine"));
		lo = hi = NULL;
		for (j = 0; j < i; j++)
			if (strcmp(json_string_value(json_object_get(
			    json_array_get(rows, j), "engine")), eng) == 0)
				break;
		if (j < i)
			continue;	/* engine seen already */
		json_array_foreach(rows, j, b) {
			if (strcmp(json_string_value(json_object_get(b, "engine")),
			    eng) != 0)
				continue;
			if (lo == NULL || json_integer_value(json_object_get(b,
			    "concurrency")) < json_integer_value(json_object_get(lo,
			    "concurrency")))
				lo = b;
			if (hi == NULL || json_integer_value(json_object_get(b,
			    "concurrency")) > json_integer_value(json_object_get(hi,
			    "concurrency")))
				hi = b;
		}
		if (lo == hi)
			continue;
		json_array_append_new(json_object_get(t, "scaling"), json_pack(
		    "{s:s, s:O, s:O, s:o}", "engine", eng,
		    "from", json_object_get(lo, "concurrency"),
		    "to", json_object_get(hi, "concurrency"), "ratio",
		    json_number_value(json_object_get(lo, "output_throughput")) > 0 &&
		    json_is_number(json_object_get(hi, "output_throughput")) ?
		    json_real(json_number_value(json_object_get(hi,
		    "output_throughput")) / json_number_value(json_object_get(lo,
		    "output_throughput"))) : json_null()));
	}
}

static struct werr *
campaign_report(struct store *store, const char *run_id, json_t **out)
{
	char *machine = NULL, *state = NULL;
	json_t *sweeps = NULL, *tables, *sw, *doc;
	struct werr *err;
	int found;
	size_t i;

	if ((err = store_campaign_run_get(store, run_id, &found, &machine,
	    &state, NULL)) != NULL)
		return err;
	if (!found)
		return werr_new(WEXIT_INPUT, "no campaign run '%s'", run_id);
	if ((err = store_campaign_sweeps_json(store, run_id, &sweeps)) != NULL)
		goto out;
	tables = json_array();
	json_array_foreach(sweeps, i, sw)
		json_array_append_new(json_object_get(table_for(tables,
		    json_string_value(json_object_get(sw, "model")),
		    json_string_value(json_object_get(sw, "split"))), "rows"),
		    row_of(sw));
	json_array_foreach(tables, i, sw)
		table_scaling(sw);
	doc = json_pack("{s:s, s:s, s:s, s:o, s:O}", "run_id", run_id,
	    "machine", machine, "state", state, "tables", tables,
	    "sweeps", sweeps);
	*out = doc;
out:
	json_decref(sweeps);
	free(machine);
	free(state);
	return err;
}

static void
print_cell_ms(const json_t *v)
{
	if (json_is_number(v))
		printf(" %9.1f", json_number_value(v));
	else
		printf(" %9s", "-");
}

static void
print_table(const json_t *t)
{
	const json_t *row, *sc, *v;
	size_t i;

	printf("\n%s / %s\n", json_string_value(json_object_get(t, "model")),
	    json_string_value(json_object_get(t, "split")));
	printf("%-16s %5s %10s %9s %9s %9s %10s %11s  %s\n", "engine", "c",
	    "out tok/s", "TTFT p50", "TTFT p90", "ITL p50", "peak MiB",
	    "completed", "outcome");
	json_array_foreach(json_object_get(t, "rows"), i, row) {
		printf("%-16s %5lld", json_string_value(json_object_get(row, "engine")),
		    (long long)json_integer_value(json_object_get(row, "concurrency")));
		v = json_object_get(row, "output_throughput");
		if (json_is_number(v))
			printf(" %10.1f", json_number_value(v));
		else
			printf(" %10s", "-");
		print_cell_ms(json_object_get(row, "median_ttft_ms"));
		print_cell_ms(json_object_get(row, "p90_ttft_ms"));
		print_cell_ms(json_object_get(row, "median_itl_ms"));
		v = json_object_get(row, "peak_memory_bytes");
		if (json_is_integer(v))
			printf(" %10.0f", (double)json_integer_value(v) / 1048576.0);
		else
			printf(" %10s", "-");
		printf(" %5lld/%-5lld  %s\n",
		    (long long)json_integer_value(json_object_get(row, "completed")),
		    (long long)json_integer_value(json_object_get(row, "total")),
		    json_string_value(json_object_get(row, "outcome")));
	}
	json_array_foreach(json_object_get(t, "scaling"), i, sc) {
		v = json_object_get(sc, "ratio");
		printf("scaling c%lld/c%lld %s: ",
		    (long long)json_integer_value(json_object_get(sc, "to")),
		    (long long)json_integer_value(json_object_get(sc, "from")),
		    json_string_value(json_object_get(sc, "engine")));
		if (json_is_number(v))
			printf("%.2fx\n", json_number_value(v));
		else
			printf("-\n");
	}
}

static void
print_report(const json_t *doc)
{
	const json_t *t;
	size_t i;

	printf("campaign run %s (machine %s, %s)\n",
	    json_string_value(json_object_get(doc, "run_id")),
	    json_string_value(json_object_get(doc, "machine")),
	    json_string_value(json_object_get(doc, "state")));
	json_array_foreach(json_object_get(doc, "tables"), i, t)
		print_table(t);
	printf("\nTTFT and ITL in ms; ITL is per request (last - first token)/"
	    "(tokens - 1); peak memory is system memory in use, MiB\n");
}

/* A run id names .warden/logs/<id> and goes into X-Request-Id. */
static int
run_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64 || id[0] == '.' || id[0] == '-')
		return 0;
	return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == n;
}

static struct werr *
campaign_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "roster", required_argument, NULL, 'r' },
		{ "engine", required_argument, NULL, 'e' },
		{ "model", required_argument, NULL, 'm' },
		{ "split", required_argument, NULL, 's' },
		{ "concurrency", required_argument, NULL, 'c' },
		{ "limit", required_argument, NULL, 'n' },
		{ "resume", no_argument, NULL, 'R' },
		{ "run-id", required_argument, NULL, 'i' },
		{ "shard", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct names engines = { 0 }, models = { 0 }, splits = { 0 };
	struct campaign_opts o;
	struct werr *err = NULL, *rerr;
	json_t *doc = NULL;
	char *run_id = NULL, *end;
	int ch, *levels = NULL;
	size_t nlevels = 0;
	long limit;

	memset(&o, 0, sizeof(o));
	while ((ch = cmd_getopt(ctx, &cmd_campaign_entry, argc, argv, opts,
	    &err)) != -1) {
		switch (ch) {
		case 'r':
			o.roster = optarg;
			break;
		case 'e':
			names_add(&engines, optarg);
			break;
		case 'm':
			names_add(&models, optarg);
			break;
		case 's':
			names_add(&splits, optarg);
			break;
		case 'c':
			free(levels);
			if (parse_levels(optarg, &levels, &nlevels) != 0) {
				err = cmd_usage_error(&cmd_campaign_entry,
				    "'--concurrency' takes levels like 1,8,16");
				goto out;
			}
			break;
		case 'n':
			limit = strtol(optarg, &end, 10);
			if (*end != '\0' || limit < 1 || limit > INT_MAX) {
				err = cmd_usage_error(&cmd_campaign_entry,
				    "'--limit' takes a positive number");
				goto out;
			}
			o.limit = (size_t)limit;
			break;
		case 'R':
			o.resume = 1;
			break;
		case 'i':
			if (!run_id_ok(optarg)) {
				err = cmd_usage_error(&cmd_campaign_entry,
				    "'--run-id' takes 1 to 64 letters, digits, "
				    "'.', '_' or '-', not starting with '.' or "
				    "'-' (it names a log directory and goes "
				    "into a request header)");
				goto out;
			}
			o.run_id = optarg;
			break;
		case 'S':
			if (parse_shard(optarg, &o.shard_index,
			    &o.shard_count) != 0) {
				err = cmd_usage_error(&cmd_campaign_entry,
				    "'--shard' takes K/N, this machine's part K "
				    "of N (1 <= K <= N <= 1000), like 2/3");
				goto out;
			}
			break;
		}
	}
	if (err != NULL)
		goto out;
	if (optind != argc) {
		err = cmd_usage_error(&cmd_campaign_entry,
		    "'campaign' takes no arguments");
		goto out;
	}
	if (o.resume && (engines.n || models.n || splits.n || levels ||
	    o.limit || o.roster || o.shard_count)) {
		err = cmd_usage_error(&cmd_campaign_entry, "'--resume' runs the "
		    "stored grid of the run; it takes no filters");
		goto out;
	}
	if ((err = cmd_ctx_repo(ctx, &o.repo_root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, (struct policy **)&o.policy)) != NULL ||
	    (err = cmd_ctx_store(ctx, &o.store)) != NULL)
		goto out;
	o.engines = engines.v;
	o.models = models.v;
	o.splits = splits.v;
	o.concurrency = levels;
	o.n_concurrency = nlevels;
	o.on_progress = ctx->verbosity >= 0 ? show_progress : NULL;
	err = campaign_run(&o, &run_id);
	if (run_id == NULL)
		goto out;
	if (err != NULL)
		fprintf(stderr, "warden: campaign run %s stopped; continue it "
		    "with 'warden campaign --resume --run-id %s'\n", run_id,
		    run_id);
	rerr = campaign_report(o.store, run_id, &doc);
	if (rerr == NULL && err == NULL) {
		if (ctx->json)
			output_json(doc);
		else
			print_report(doc);
	}
	if (err == NULL)
		err = rerr;
	else
		werr_free(rerr);
out:
	json_decref(doc);
	free(run_id);
	free(levels);
	free(engines.v);
	free(models.v);
	free(splits.v);
	return err;
}

const struct cmd_entry cmd_campaign_entry = {
	"campaign",
	"[--roster R] [--engine E]... [--model M]... [--split S]... "
	"[--concurrency 1,8,16] [--limit N] [--shard K/N] [--run-id ID] [--resume]",
	"run the benchmark grid and print its results",
	"Runs engine x model x split x concurrency from policy and the roster,\n"
	"a fresh engine server per concurrency level (policy server_per_level),\n"
	"and prints per (model, split) out tok/s, TTFT p50/p90, ITL p50, peak\n"
	"memory, completed N/total and the scaling between the lowest and the\n"
	"highest level. Every request lands in .warden/warden.db as it ends.\n"
	"  --roster R          the roster to run (default: policy default_roster)\n"
	"  --engine E          only engine E (repeatable)\n"
	"  --model M           only model M (repeatable)\n"
	"  --split S           only split S (repeatable)\n"
	"  --concurrency L     levels, e.g. 1,8,16 (default: policy)\n"
	"  --limit N           the first N timed prompts of each split\n"
	"  --shard K/N         run part K of N of the grid (after the filters):\n"
	"                      whole engines, dealt in grid order (engine i,\n"
	"                      from 0, to part i mod N + 1): N machines cover\n"
	"                      the grid once\n"
	"  --run-id ID         name the run (default: time, machine, random);\n"
	"                      letters, digits, '.', '_', '-', at most 64\n"
	"  --resume            continue the newest unfinished run of this machine\n"
	"                      (or --run-id ID): finished sweeps are kept, the\n"
	"                      interrupted one runs again\n"
	"  --json              print the results as JSON (a global option)\n"
	"  -q                  no progress lines\n"
	"Engine failures (server_crash, hang, wrong_model, not_ready, engine_cap)\n"
	"are results, not errors: exit 0 when the grid ran to its end.\n",
	campaign_exec,
};
