/*
 * cmd-campaign.c - `warden campaign`: parse the grid filters, run (or
 * resume) the campaign through campaign.c with progress on stderr, and
 * print its report; `warden campaign list` and `warden campaign show RUN`
 * print past runs. The report is campaign-report.c's, printed as text or
 * CSV by cmd-campaign-print.c, or as JSON.
 *
 * SIGINT, SIGTERM and SIGHUP ask the campaign to stop: it stops the engine,
 * leaves the sweep under way unfinished, and this file says how to resume.
 * No measuring and no SQL here.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "campaign-report.h"
#include "cmd.h"
#include "cmd-campaign.h"
#include "isotime.h"
#include "output.h"
#include "policy.h"
#include "stopsig.h"
#include "util.h"

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

/* ---- progress ---- */

struct progress {
	int tty;
	double interval_s;	/* not on a terminal: seconds between lines */
	size_t sweep;		/* the sweep last announced */
	uint64_t last_ns;	/* when its last line was printed */
};

/* "6 s", "3 min", "1.5 h" (isotime_estimate) */
static void
add_duration(struct buf *b, double s)
{
	char t[32];

	isotime_estimate(t, sizeof(t), s);
	buf_puts(b, t);
}

/*
 * One progress line. The estimates come first, right after "sweep K/N",
 * so that a terminal narrower than the line keeps them: output.c clips
 * the end. On a terminal every update redraws the line; otherwise, for
 * CI logs, a line when a sweep starts, one every interval_s while it
 * runs, and one when it ends.
 */
static void
show_progress(void *arg, const struct campaign_progress *p)
{
	struct progress *st = arg;
	int final = strcmp(p->phase, "done") == 0, print;
	struct buf b = BUF_INIT;
	uint64_t now = mono_ns();

	buf_printf(&b, "sweep %zu/%zu ", p->sweep, p->sweeps);
	if (!final && (p->eta_s >= 0 || p->campaign_eta_s >= 0)) {
		buf_addch(&b, '(');
		if (p->eta_s >= 0) {
			buf_puts(&b, "eta ");
			add_duration(&b, p->eta_s);
		}
		if (p->campaign_eta_s >= 0) {
			buf_puts(&b, p->eta_s >= 0 ? ", campaign eta " :
			    "campaign eta ");
			add_duration(&b, p->campaign_eta_s);
		}
		buf_puts(&b, ") ");
	}
	buf_printf(&b, "%s %s %s c=%u: ", p->engine, p->model, p->split,
	    p->concurrency);
	if (final)
		buf_printf(&b, "%s, %zu/%zu ok, %.1f s", p->outcome, p->ok,
		    p->total, p->elapsed_s);
	else if (p->done > 0 || p->tokens_per_s > 0)
		buf_printf(&b, "%s %zu/%zu requests, %.1f tok/s", p->phase,
		    p->done, p->total, p->tokens_per_s);
	else {
		buf_puts(&b, p->phase);
		if (strcmp(p->phase, "starting") == 0 && p->elapsed_s >= 1) {
			buf_puts(&b, ", waited ");
			add_duration(&b, p->elapsed_s);
		}
	}
	print = st->tty || final || p->sweep != st->sweep ||
	    (st->interval_s > 0 && (double)(now - st->last_ns) / 1e9 >=
	    st->interval_s);
	if (print) {
		output_progress(final, "%s", buf_cstr(&b));
		st->sweep = p->sweep;
		st->last_ns = now;
	}
	buf_free(&b);
}

/* ---- printing a report ---- */

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

static struct werr *
print_run(struct store *store, const struct policy *pol, const char *run_id,
    enum format fmt, int per_request)
{
	struct werr *err;
	json_t *doc;

	if ((err = campaign_report(&doc, store, pol, run_id,
	    per_request)) != NULL)
		return err;
	if (fmt == FORMAT_JSON)
		output_json(doc);
	else if (fmt == FORMAT_CSV)
		campaign_print_report_csv(stdout, doc);
	else
		campaign_print_report(stdout, doc);
	if (strcmp(json_string_value(json_object_get(doc, "state")), "done") != 0)
		fprintf(stderr, "warden: note: run '%s' is not finished (%lld of "
		    "%lld sweeps); continue it with 'warden campaign --resume "
		    "--run-id %s'\n", run_id, (long long)json_integer_value(
		    json_object_get(doc, "sweeps_done")), (long long)
		    json_integer_value(json_object_get(doc, "sweeps")), run_id);
	json_decref(doc);
	return NULL;
}

/* --json, --csv and --per-request of list and show. */
static struct werr *
report_options(struct cmd_ctx *ctx, int argc, char **argv, const char *sub,
    enum format *fmt, int *per_request)
{
	static const struct option opts[] = {
		{ "csv", no_argument, NULL, 'c' },
		{ "per-request", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct werr *err = NULL;
	int ch, csv = 0;

	*per_request = 0;
	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_campaign_entry, argc, argv, opts,
	    &err)) != -1) {
		switch (ch) {
		case 'c':
			csv = 1;
			break;
		case 'p':
			if (per_request == NULL || strcmp(sub, "list") == 0)
				goto bad;
			*per_request = 1;
			break;
		default:
			goto bad;
		}
	}
	if (err != NULL)
		return err;
	if (ctx->json && csv)
		return cmd_usage_error(&cmd_campaign_entry, "'campaign %s' takes "
		    "--json or --csv, not both", sub);
	if (*per_request && !ctx->json)
		return cmd_usage_error(&cmd_campaign_entry, "'--per-request' "
		    "adds arrays to --json");
	*fmt = ctx->json ? FORMAT_JSON : csv ? FORMAT_CSV : FORMAT_TEXT;
	return NULL;
bad:
	return cmd_usage_error(&cmd_campaign_entry, "bad option to 'campaign %s'",
	    sub);
}

static struct werr *
campaign_list(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	enum format fmt;
	json_t *runs;
	int per_request;

	if ((err = report_options(ctx, argc, argv, "list", &fmt,
	    &per_request)) != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_campaign_entry, "'campaign list' "
		    "takes no arguments");
	if ((err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = campaign_run_list(&runs, store)) != NULL)
		return err;
	if (fmt == FORMAT_JSON)
		output_json(runs);
	else if (fmt == FORMAT_CSV)
		campaign_print_runs_csv(stdout, runs);
	else if (json_array_size(runs) == 0)
		cmd_list_empty(ctx, "campaign runs (start one with 'warden "
		    "campaign')");
	else
		campaign_print_runs(stdout, runs);
	json_decref(runs);
	return NULL;
}

static struct werr *
campaign_show(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct policy *pol;
	struct store *store;
	struct werr *err;
	enum format fmt;
	int per_request;

	if ((err = report_options(ctx, argc, argv, "show", &fmt,
	    &per_request)) != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_campaign_entry, "'campaign show' "
		    "takes one RUN (see 'warden campaign list')");
	if ((err = cmd_ctx_policy(ctx, &pol)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	return print_run(store, pol, argv[optind], fmt, per_request);
}

/* ---- running ---- */

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

/* Say, before it runs, that a level is not the policy's. */
static void
note_ad_hoc(const struct campaign_opts *o)
{
	const struct policy *pol = o->policy;
	struct buf b = BUF_INIT;
	int *ad;
	size_t n, i;

	campaign_ad_hoc_levels(o, &ad, &n);
	if (n > 0) {
		for (i = 0; i < n; i++)
			buf_printf(&b, "%s%d", i > 0 ? ", " : "", ad[i]);
		buf_printf(&b, " %s not among the policy's levels (",
		    n > 1 ? "are" : "is");
		for (i = 0; i < pol->campaign.n_concurrency; i++)
			buf_printf(&b, "%s%d", i > 0 ? ", " : "",
			    pol->campaign.concurrency[i]);
		fprintf(stderr, "warden: note: concurrency %s); the run records "
		    "%s as ad hoc\n", buf_cstr(&b), n > 1 ? "them" : "it");
	}
	free(ad);
	buf_free(&b);
}

struct run_args {
	struct cmd_names engines, models, splits;
	int *levels;
	size_t nlevels;
	int per_request;
	double interval_s;	/* < 0: the policy's */
};

static struct werr *
parse_run(struct cmd_ctx *ctx, int argc, char **argv, struct campaign_opts *o,
    struct run_args *a)
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
		{ "progress-interval", required_argument, NULL, 'P' },
		{ "per-request", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct werr *err = NULL;
	char *end;
	double d;
	long limit;
	int ch;

	while ((ch = cmd_getopt(ctx, &cmd_campaign_entry, argc, argv, opts,
	    &err)) != -1) {
		switch (ch) {
		case 'r':
			o->roster = optarg;
			break;
		case 'e':
			cmd_names_add(&a->engines, optarg);
			break;
		case 'm':
			cmd_names_add(&a->models, optarg);
			break;
		case 's':
			cmd_names_add(&a->splits, optarg);
			break;
		case 'c':
			free(a->levels);
			if (parse_levels(optarg, &a->levels, &a->nlevels) != 0)
				return cmd_usage_error(&cmd_campaign_entry,
				    "'--concurrency' takes levels like 1,8,16");
			break;
		case 'n':
			limit = strtol(optarg, &end, 10);
			if (*end != '\0' || limit < 1 || limit > INT_MAX)
				return cmd_usage_error(&cmd_campaign_entry,
				    "'--limit' takes a positive number");
			o->limit = (size_t)limit;
			break;
		case 'R':
			o->resume = 1;
			break;
		case 'i':
			if (!run_id_ok(optarg))
				return cmd_usage_error(&cmd_campaign_entry,
				    "'--run-id' takes 1 to 64 letters, digits, "
				    "'.', '_' or '-', not starting with '.' or "
				    "'-' (it names a log directory and goes "
				    "into a request header)");
			o->run_id = optarg;
			break;
		case 'S':
			if (parse_shard(optarg, &o->shard_index,
			    &o->shard_count) != 0)
				return cmd_usage_error(&cmd_campaign_entry,
				    "'--shard' takes K/N, this machine's part K "
				    "of N (1 <= K <= N <= 1000), like 2/3");
			break;
		case 'P':
			d = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || !(d >= 0) || d > 1e6)
				return cmd_usage_error(&cmd_campaign_entry,
				    "'--progress-interval' takes seconds, 0 "
				    "or more");
			a->interval_s = d;
			break;
		case 'p':
			a->per_request = 1;
			break;
		default:
			return cmd_usage_error(&cmd_campaign_entry, "bad option");
		}
	}
	if (err != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_campaign_entry, "'campaign' takes no "
		    "arguments but 'list' or 'show RUN' first");
	if (o->resume && (a->engines.n || a->models.n || a->splits.n ||
	    a->levels || o->limit || o->roster || o->shard_count))
		return cmd_usage_error(&cmd_campaign_entry, "'--resume' runs the "
		    "stored grid of the run; it takes no filters");
	if (a->per_request && !ctx->json)
		return cmd_usage_error(&cmd_campaign_entry, "'--per-request' "
		    "adds arrays to --json");
	return NULL;
}

static struct werr *
campaign_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct run_args a;
	struct campaign_opts o;
	struct progress prog;
	struct stopsig_saved sigs;
	struct werr *err;
	char *run_id = NULL;

	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return campaign_list(ctx, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return campaign_show(ctx, argc - 1, argv + 1);
	memset(&o, 0, sizeof(o));
	memset(&a, 0, sizeof(a));
	a.interval_s = -1;
	o.who = ctx->cmdline;
	if ((err = parse_run(ctx, argc, argv, &o, &a)) != NULL ||
	    (err = cmd_ctx_repo(ctx, &o.repo_root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, (struct policy **)&o.policy)) != NULL ||
	    (err = cmd_ctx_store(ctx, &o.store)) != NULL)
		goto out;
	o.engines = a.engines.v;
	o.models = a.models.v;
	o.splits = a.splits.v;
	o.concurrency = a.levels;
	o.n_concurrency = a.nlevels;
	memset(&prog, 0, sizeof(prog));
	prog.tty = output_is_tty();
	prog.interval_s = a.interval_s >= 0 ? a.interval_s :
	    o.policy->campaign.progress_interval_s;
	o.on_progress = ctx->verbosity >= 0 ? show_progress : NULL;
	o.arg = &prog;
	o.stop = &stopsig_flag;
	if (!o.resume)
		note_ad_hoc(&o);
	stopsig_catch(&sigs);
	err = campaign_run(&o, &run_id);
	stopsig_restore(&sigs);
	output_progress_end();
	if (err != NULL && run_id != NULL) {
		/* one message: what stopped it and how to go on */
		struct werr *e = werr_new(err->exit, "campaign run %s %s%s; "
		    "continue it with 'warden campaign --resume --run-id %s'",
		    run_id, stopsig_flag != 0 ? "" : "stopped: ", err->msg,
		    run_id);

		werr_free(err);
		err = e;
		goto out;
	}
	if (err == NULL)
		err = print_run(o.store, o.policy, run_id, ctx->json ?
		    FORMAT_JSON : FORMAT_TEXT, a.per_request);
out:
	free(run_id);
	free(a.levels);
	free(a.engines.v);
	free(a.models.v);
	free(a.splits.v);
	return err;
}

const struct cmd_entry cmd_campaign_entry = {
	"campaign",
	"[--roster R] [--engine E]... [--model M]... [--split S]... "
	"[--concurrency 1,8,16] [--limit N] [--shard K/N] [--run-id ID] "
	"[--resume] [--progress-interval S] [--json [--per-request]]\n"
	"list [--json | --csv]\n"
	"show RUN [--json [--per-request] | --csv]",
	"run the benchmark grid and print its results; list and show past runs",
	"Runs engine x model x split x concurrency from policy and the roster,\n"
	"a fresh engine server per concurrency level (policy server_per_level),\n"
	"and prints per (model, split), within 80 columns: req/s, out tok/s,\n"
	"TTFT mean/p50/p99, E2E mean/p99, TPOT and ITL p50, the engine's and\n"
	"the system's peak memory, completed N/total, the outcome and why, and\n"
	"the scaling between the lowest and the highest level. Every request\n"
	"lands in .warden/warden.db as it ends.\n"	"One campaign runs per machine: exit 3 naming the one running (its lock\n"
	"is in $WARDEN_LOCK_DIR, default /tmp).\n"
	"  --roster R          the roster to run (default: policy default_roster)\n"
	"  --engine E          only engine E (repeatable; must be in the roster)\n"
	"  --model M           only model M (repeatable; must be in the policy)\n"
	"  --split S           only split S (repeatable; must be in the policy)\n"
	"  --concurrency L     levels, e.g. 1,8,16 (default: policy); a level\n"
	"                      the policy lacks runs, noted as ad hoc\n"
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
	"  --progress-interval S  not on a terminal, a progress line every S\n"
	"                      seconds (default: policy progress_interval_s, 30;\n"
	"                      0: only when a sweep starts and ends)\n"
	"  --json              print the results as JSON\n"
	"  --per-request       with --json: vllm's per-request arrays too\n"
	"list                  the runs, newest first (--json or --csv)\n"
	"show RUN              a run's results as the run printed them\n"
	"                      (--json [--per-request] or --csv)\n"
	"Engine failures (start_failed, not_ready, server_crash, hang,\n"
	"wrong_model, port_conflict, engine_cap) are results, not errors: exit 0\n"
	"when the grid ran to its end. SIGINT or SIGTERM stops the run (exit 3)\n"
	"and says how to resume it.\n"
	"Examples:\n"
	"  warden campaign --engine sim-continuous --concurrency 1,8 --limit 8\n"
	"  warden campaign list\n"
	"  warden campaign show demo-2-r2-campaign --csv >sweeps.csv\n",
	campaign_exec,
};
