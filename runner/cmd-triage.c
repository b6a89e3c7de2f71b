/*
 * cmd-triage.c - `warden triage [--cycle C] [--engine E]... [--budget
 * N]`: triage a cycle (runner/triage: which engines broke, the shared
 * change, proof by pinning back, incidents and pin patches), show
 * progress (smoke run k of at most N), print what it found.
 *
 * Exit 0 when nothing broke (or there is nothing to triage yet); 1 when
 * engines broke (incidents opened, updated, or engines triage cannot
 * compare); 2 usage or input; 3 environment.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "buf.h"
#include "cmd.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "spawn.h"
#include "store.h"
#include "triage/environment.h"
#include "triage/triage.h"
#include "util.h"

static void
show_progress(void *arg, const struct triage_progress *p)
{
	const char *nl = strchr(p->what, '\n');

	(void)arg;
	/* The smoke runs are lines in a log; every other step is the live
	 * line (off a terminal, once per progress interval). */
	if (p->max == 0)
		output_progress_live("triage: %.*s", nl != NULL ?
		    (int)(nl - p->what) : (int)strlen(p->what), p->what);
	else
		output_progress(!output_is_tty(), "triage: %.*s", nl != NULL ?
		    (int)(nl - p->what) : (int)strlen(p->what), p->what);
}

/* v's text quoted for one line (package names, versions and reasons
 * come from package indexes and engines), or dflt. */
static const char *
str_or(const json_t *v, const char *dflt)
{
	return json_is_string(v) ? quote_msg(json_string_value(v)) : dflt;
}

/* "commit 1a2b3c4 (review 3) "subject": adapters/engines/x.json" */
static void
add_commit(struct buf *b, const json_t *x)
{
	json_t *p;
	size_t i;

	buf_printf(b, "commit %.7s", str_or(json_object_get(x, "commit"), "?"));
	if (json_integer_value(json_object_get(x, "review")) > 0)
		buf_printf(b, " (review %lld)", (long long)json_integer_value(
		    json_object_get(x, "review")));
	buf_printf(b, " \"%s\":", str_or(json_object_get(x, "summary"), ""));
	json_array_foreach(json_object_get(x, "paths"), i, p)
		buf_printf(b, "%s %s", i ? "," : "", str_or(p, "?"));
}

/* "shared 1.0 → 2.0 and tok 1.0 → 1.1", or add_commit() */
static void
add_culprits(struct buf *b, const json_t *culprits)
{
	json_t *x;
	size_t i;

	json_array_foreach((json_t *)culprits, i, x)
		if (json_is_string(json_object_get(x, "commit"))) {
			buf_puts(b, i ? " and " : "");
			add_commit(b, x);
		} else
			buf_printf(b, "%s%s %s \u2192 %s", i ? " and " : "",
			    str_or(json_object_get(x, "package"), "?"),
			    str_or(json_object_get(x, "from"), "(none)"),
			    str_or(json_object_get(x, "to"), "(removed)"));
}

/* The lines of the report wrap within OUTPUT_WIDTH, a line's further
 * lines HANG deeper than it, deeper than the lines under it. */
#define HANG 4

static void
print_suspects(const json_t *suspects)
{
	struct output_list l;
	json_t *s;
	size_t i;

	output_list_init(&l, "  suspects: ", NULL, 0);
	json_array_foreach((json_t *)suspects, i, s) {
		if (i == 6) {
			output_list_add(&l, "... (%zu more)",
			    json_array_size(suspects) - i);
			break;
		}
		output_list_add(&l, "%s %s \u2192 %s (%+lld)",
		    str_or(json_object_get(s, "package"), "?"),
		    str_or(json_object_get(s, "from"), "(none)"),
		    str_or(json_object_get(s, "to"), "(removed)"),
		    (long long)json_integer_value(json_object_get(s, "score")));
	}
	output_list_print(&l, NULL, NULL);
}

static void
print_search(const json_t *s)
{
	const char *kind = str_or(json_object_get(s, "kind"), "?");
	json_int_t runs = json_integer_value(json_object_get(s, "runs"));
	json_int_t bound = json_integer_value(json_object_get(s, "bound"));
	struct buf c = BUF_INIT;

	add_culprits(&c, json_object_get(s, "culprits"));
	if (strcmp(kind, "covered") == 0)
		output_line(HANG, "  already explained by incident %lld",
		    (long long)json_integer_value(json_object_get(s,
		    "incident")));
	else if (strcmp(kind, "commit") == 0) {
		output_line(HANG, "  culprit: %s", buf_cstr(&c));
		output_line(HANG, "  confirmed in %lld smoke run%s of official's "
		    "trees (at most %lld): healthy at its parent, failing at "
		    "it", (long long)runs, runs == 1 ? "" : "s",
		    (long long)bound);
	} else if (strcmp(kind, "single") == 0 ||
	    strcmp(kind, "own_release") == 0 ||
	    strcmp(kind, "combination") == 0)
		output_line(HANG, "  culprit: %s%s, confirmed by pinning back "
		    "in %lld smoke run%s (one culprit: at most %lld)%s",
		    strcmp(kind, "own_release") == 0 ? "its own release " : "",
		    buf_cstr(&c), (long long)runs, runs == 1 ? "" : "s",
		    (long long)bound, json_is_true(json_object_get(s,
		    "ddmin")) ? " with ddmin" : "");
	else {
		output_line(HANG, "  no culprit confirmed (%s): %s", kind,
		    str_or(json_object_get(s, "why"), "-"));
		if (json_object_get(s, "commits") != NULL)
			output_line(HANG, "  commits on official: %s: %s",
			    str_or(json_object_get(json_object_get(s,
			    "commits"), "kind"), "?"), str_or(
			    json_object_get(json_object_get(s, "commits"),
			    "why"), "-"));
		if (json_array_size(json_object_get(s, "culprits")) > 0)
			output_line(HANG, "  smallest failing set so far: %s",
			    buf_cstr(&c));
	}
	buf_free(&c);
}

static void
print_incidents(struct store *store, const json_t *ids, const char *what)
{
	json_t *inc, *id, *tr;
	struct werr *err;
	size_t i;

	json_array_foreach((json_t *)ids, i, id) {
		inc = NULL;
		if ((err = triage_incident_show(&inc, store,
		    json_integer_value(id))) != NULL) {
			werr_free(err);
			continue;
		}
		output_line(HANG, "incident %lld %s (%s): %s",
		    (long long)json_integer_value(id), what, str_or(json_object_get(inc, "state"), "?"),
		    str_or(json_object_get(inc, "summary"), ""));
		tr = json_object_get(inc, "transitions");
		if (strcmp(what, "updated") != 0 && json_array_size(tr) > 0)
			output_line(HANG, "  %s", str_or(json_object_get(
			    json_array_get(tr, json_array_size(tr) - 1),
			    "reason"), ""));
		json_decref(inc);
	}
}

static void
print_report(struct store *store, const struct triage_result *res)
{
	const json_t *r = res->report, *engines, *e, *x;
	const char *engine, *status;
	size_t nb = 0, nh = 0, i, n, k;
	struct buf b = BUF_INIT;

	if (res->cycle == NULL) {
		output_line(HANG, "%s", str_or(json_object_get(r, "why"),
		    "nothing to triage"));
		return;
	}
	engines = json_object_get(r, "engines");
	json_object_foreach((json_t *)engines, engine, e) {
		status = str_or(json_object_get(e, "status"), "");
		if (strcmp(status, "broken") == 0)
			nb++;
		else
			nh++;
	}
	printf("cycle %s: %zu engine%s broken, %zu healthy\n", res->cycle, nb,
	    nb == 1 ? "" : "s", nh);
	json_array_foreach(res->broken, i, x) {
		engine = json_string_value(x);
		e = json_object_get(engines, engine);
		n = json_array_size(json_object_get(e, "commits"));
		k = json_object_size(json_object_get(e, "changes"));
		buf_reset(&b);
		buf_printf(&b, "%s: broken (healthy in %s); %zu package%s "
		    "changed", engine, str_or(json_object_get(e, "good_cycle"),
		    "?"), k, k == 1 ? "" : "s");
		if (n > 0)
			buf_printf(&b, ", %zu commit%s on official changed what "
			    "it runs with", n, n == 1 ? "" : "s");
		output_line(HANG, "%s", buf_cstr(&b));
		if (json_array_size(json_object_get(e, "environment")) > 0) {
			struct buf env = BUF_INIT;

			environment_text(&env, json_object_get(e,
			    "environment"));
			output_line(HANG, "  also changed, which no smoke run "
			    "can test: %s", quote_msg(buf_cstr(&env)));
			buf_free(&env);
		}
		if (json_array_size(json_object_get(json_object_get(r,
		    "suspects"), engine)) > 0)
			print_suspects(json_object_get(json_object_get(r,
			    "suspects"), engine));
		print_search(json_object_get(json_object_get(r, "searches"),
		    engine));
	}
	json_array_foreach(res->cannot_compare, i, x)
		output_line(HANG, "%s: broken, cannot compare: %s",
		    str_or(json_object_get(x, "engine"), "?"),
		    str_or(json_object_get(x, "why"), "?"));
	print_incidents(store, res->reopened, "reopened");
	print_incidents(store, res->opened, "opened");
	print_incidents(store, res->updated, "updated");
	print_incidents(store, res->fixed, "fixed");
	json_array_foreach(res->reviews, i, x)
		printf("review %lld queued (source triage): warden review show "
		    "%lld\n", (long long)json_integer_value(x),
		    (long long)json_integer_value(x));
	if (res->nothing_broke)
		printf("nothing broke in cycle %s: nothing to do\n", res->cycle);
	else if (res->nothing_to_compare)
		output_line(HANG, "nothing to compare in cycle %s: no engine "
		    "that failed was healthy in an earlier cycle", res->cycle);
	buf_free(&b);
}

static struct werr *
parse_budget(const char *s, size_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0 || v > 10000)
		return cmd_usage_error(&cmd_triage_entry, "'--budget %s': a "
		    "number of smoke runs from 1 to 10000", s);
	*out = (size_t)v;
	return NULL;
}

static struct werr *
triage_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cycle", required_argument, NULL, 'c' },
		{ "engine", required_argument, NULL, 'e' },
		{ "budget", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct triage_result res;
	struct triage_opts o;
	struct policy *policy;
	struct store *store;
	git_repository *repo = NULL;
	const char **engines = xcalloc((size_t)argc + 1, sizeof(*engines));
	struct werr *err = NULL;
	size_t ne = 0, i;
	int ch;

	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_triage_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'c')
			o.cycle = optarg;
		else if (ch == 'e')
			engines[ne++] = optarg;
		else if (ch == 'b' && (err = parse_budget(optarg,
		    &o.budget)) != NULL)
			break;
	}
	if (err == NULL && optind != argc)
		err = cmd_usage_error(&cmd_triage_entry, "unexpected argument "
		    "'%s'", argv[optind]);
	if (err == NULL && o.cycle != NULL && !store_cycle_ok(o.cycle))
		err = cmd_usage_error(&cmd_triage_entry, "'--cycle %s' is not "
		    "a cycle id", o.cycle);
	if (err != NULL ||
	    (err = cmd_ctx_repo(ctx, &o.repo_root)) != NULL ||
	    (err = cmd_ctx_trusted_policy(ctx, &policy)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL)
		goto out;
	if (git_repository_open(&repo, o.repo_root) < 0) {
		err = werr_git("cannot open '%s'", o.repo_root);
		goto out;
	}
	/* Rules from the official branch's policy, whatever the working
	 * tree holds; the adapters smoked are the working tree's, as the
	 * campaign's. */
	for (i = 0; i < ne; i++)
		if (!policy_engine_roster(policy, engines[i])) {
			err = cmd_usage_error(&cmd_triage_entry, "'--engine %s': "
			    "engine '%s' is in no roster of the policy",
			    engines[i], engines[i]);
			goto out;
		}
	o.repo = repo;
	o.policy = policy;
	o.store = store;
	o.engines = ne > 0 ? engines : NULL;
	o.on_progress = ctx->verbosity >= 0 && !ctx->json ? show_progress :
	    NULL;
	if (o.on_progress != NULL) {
		output_progress_interval(policy->campaign.progress_interval_s);
		spawn_set_wait_hook(output_progress_tick);	/* builds */
	}
	err = triage_run(&res, &o);
	spawn_set_wait_hook(NULL);
	output_progress_end();
	if (err != NULL)
		goto out;
	if (ctx->json)
		output_json(res.report);
	else
		print_report(store, &res);
	if (json_array_size(res.broken) > 0 ||
	    json_array_size(res.cannot_compare) > 0)
		err = werr_new(WEXIT_PROBLEM, "cycle %s: %zu engine%s broken",
		    res.cycle, json_array_size(res.broken) +
		    json_array_size(res.cannot_compare),
		    json_array_size(res.broken) +
		    json_array_size(res.cannot_compare) == 1 ? "" : "s");
out:
	triage_result_free(&res);
	git_repository_free(repo);
	free(engines);
	return err;
}

const struct cmd_entry cmd_triage_entry = {
	"triage",
	"[--cycle C] [--engine E]... [--budget N]",
	"find what broke engines, prove it by pinning back, open incidents",
	"Triages cycle C (default: the newest cycle with a campaign run): an\n"
	"engine broke when its cells fail now (stored outcomes: completion\n"
	"below the gate, crash, hang, not ready, zero tokens) or its update\n"
	"failed, and it was healthy in an earlier cycle. Its manifest is\n"
	"diffed against that cycle's; changes are scored across engines (the\n"
	"broken engines that took the same release, minus the healthy ones\n"
	"that did); then searched in a scratch environment with smoke runs\n"
	"(binary search, ddmin within the budget), each run recorded. Opens\n"
	"incidents, proposes pins through the gate (review source triage),\n"
	"marks incidents fixed, tries new releases of fixed culprits.\n"
	"  --cycle C     the cycle to triage\n"
	"  --engine E    triage only engine E (repeatable); every engine of\n"
	"                the cycle still counts when scoring suspects\n"
	"  --budget N    smoke runs per engine (default: policy\n"
	"                triage.budget, 16)\n"
	"  --json        the whole report as JSON\n"
	"Exit 0 when nothing broke, 1 when engines broke, 2 usage or input,\n"
	"3 environment.\n"
	"Examples:\n"
	"  warden triage --cycle demo-2\n"
	"  warden triage --engine sim-mlx-lm --budget 8\n",
	triage_exec,
};
