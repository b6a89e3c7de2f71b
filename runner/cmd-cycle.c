/*
 * cmd-cycle.c - `warden cycle`: run or continue the maintenance cycle
 * through runner/cycle/, with progress on stderr, and print its summary:
 * what changed, what broke, incidents, review items waiting (with the
 * exact command that approves each), what was published.
 *
 * Exit 0 healthy; 1 something broke that nothing handles (a gate
 * regression, a broken engine no fix waits for, an incident left open);
 * 4 done, the fixes it queued wait for review; 2 usage or input; 3
 * environment (the cycle is then resumable). No work logic here.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "quote.h"
#include "cycle/cycle.h"
#include "jsonget.h"
#include "output.h"
#include "regress/regress.h"
#include "spawn.h"
#include "stopsig.h"
#include "store.h"
#include "util.h"

static void
show_progress(void *arg, const struct cycle_progress *p)
{
	const struct cmd_ctx *ctx = arg;
	char eta[32] = "";

	if (ctx->verbosity < 0)
		return;
	if (p->eta_s >= 0)
		snprintf(eta, sizeof(eta), " (cycle eta %.0f min)",
		    p->eta_s / 60 + 0.5 > 1 ? p->eta_s / 60 : 1.0);
	if (p->interval_s >= 0)
		output_progress_interval(p->interval_s);
	if (p->step_done)
		output_progress(1, "%s: %s", p->step, p->what);
	else if (p->line)
		output_progress(!output_is_tty(), "%s%s: %s", p->step, eta,
		    p->what);
	else	/* off a terminal, once per interval: long work is alive */
		output_progress_live("%s: %s", p->step, p->what);
}

static void
print_list(const char *label, const json_t *arr, const char *none)
{
	const json_t *v;
	size_t i;

	printf("%s", label);
	if (json_array_size(arr) == 0)
		printf("%s", none);
	json_array_foreach((json_t *)arr, i, v)
		if (json_is_integer(v))	/* incidents: their numbers */
			printf("%s#%lld", i ? ", " : "",
			    (long long)json_integer_value(v));
		else
			printf("%s%s", i ? ", " : "", json_is_string(v) ?
			    quote_str(json_string_value(v)) : "?");
	printf("\n");
}

/* The alerts of the cycle's regressions step, one line each. */
static void
print_alerts(const json_t *r)
{
	static const char *const kinds[] = { "opened", "seen", "fixed", NULL };
	static const char *const how[] = { "new", "seen again",
	    "back within the threshold" };
	const json_t *a;
	const char *why;
	size_t i, k, n = 0;
	char *name, *change;

	if (!json_is_object(r))
		return;
	printf("alerts:   ");
	for (k = 0; kinds[k] != NULL; k++)
		json_array_foreach(json_object_get(r, kinds[k]), i, a) {
			name = regress_series_name(a);
			change = regress_change_text(a);
			printf("%s #%lld %s: %s (%+.1f %%), %s, %s\n",
			    n++ ? "          " : "", (long long)jsonget_int(a,
			    "id"), quote_str(name), quote_str(change),
			    json_number_value(json_object_get(a,
			    "change_pct")), how[k], quote_str(jsonget_str(a,
			    "state")));
			free(name);
			free(change);
		}
	why = json_string_value(json_object_get(r, "why"));
	if (why == NULL)
		why = json_string_value(json_object_get(json_object_get(r,
		    "baseline"), "why"));
	if (n == 0 && why != NULL)
		printf(" none: %s\n", quote_str(why));
	else if (n == 0)
		printf(" none (%lld series compared)\n",
		    (long long)jsonget_int(r, "compared"));
}

static void
print_summary(const json_t *res)
{
	const json_t *j = json_object_get(res, "journal");
	const json_t *s = json_object_get(j, "summary"), *v, *g;
	const char **keys;
	size_t i, nkeys;
	int n = 0;

	printf("cycle %s (roster %s), round %lld: %s, exit %lld\n",
	    quote_str(jsonget_str(res, "cycle")), quote_str(jsonget_str(j,
	    "roster")), (long long)json_integer_value(json_object_get(res,
	    "round")), quote_str(jsonget_str(res, "state")),
	    (long long)json_integer_value(json_object_get(res, "exit")));
	printf("cells:     %lld", (long long)json_integer_value(
	    json_object_get(s, "cells")));
	keys = cycle_statuses_ordered(json_object_get(s, "statuses"), &nkeys);
	for (i = 0; i < nkeys; i++)
		printf("%s%lld %s", n++ ? ", " : " (", (long long)
		    jsonget_int(json_object_get(s, "statuses"), keys[i]),
		    quote_str(keys[i]));
	free(keys);
	printf("%s\n", n ? ")" : "");
	printf("changed:  ");
	if (json_array_size(json_object_get(s, "versions")) == 0)
		printf(" nothing");
	json_array_foreach(json_object_get(s, "versions"), i, v)
		printf("%s %s %s %s -> %s", i ? "," : "",
		    quote_str(jsonget_str(v, "engine")),
		    quote_str(jsonget_str(v, "package")),
		    json_is_string(json_object_get(v, "old")) ?
		    quote_str(jsonget_str(v, "old")) : "(none)",
		    json_is_string(json_object_get(v, "new")) ?
		    quote_str(jsonget_str(v, "new")) : "(removed)");
	json_array_foreach(json_object_get(s, "update_failed"), i, v)
		printf("; %s: update %s", quote_str(jsonget_str(v, "engine")),
		    quote_str(jsonget_str(v, "outcome")));
	printf("\nbroke:    ");
	if (json_array_size(json_object_get(s, "broke")) == 0)
		printf(" nothing");
	json_array_foreach(json_object_get(s, "broke"), i, v)
		printf("%s %s (%s%s)", i ? "," : "", quote_str(jsonget_str(v,
		    "cell")), quote_str(jsonget_str(v, "status")),
		    json_is_true(json_object_get(v, "fixed")) ? ", fixed" : "");
	printf("\n");
	g = json_object_get(s, "gate");
	print_list("gate:      passed ", json_object_get(g, "passed"), "none");
	print_list("           failed ", json_object_get(g, "failed"), "none");
	print_list("           newly failing ", json_object_get(g,
	    "regressions"), "none");
	if (json_object_get(s, "incidents_opened") == NULL)
		printf("incidents: no triage ran\n");
	else {
		print_list("incidents: opened ", json_object_get(s,
		    "incidents_opened"), "none");
		print_list("           fixed ", json_object_get(s,
		    "incidents_fixed"), "none");
	}
	print_alerts(json_object_get(j, "regressions"));
	printf("review:   ");
	if (json_array_size(json_object_get(s, "reviews_waiting")) == 0)
		printf(" nothing waiting");
	json_array_foreach(json_object_get(s, "reviews_waiting"), i, v)
		printf("%s #%lld (%s)", i ? "," : "", (long long)
		    json_integer_value(json_object_get(v, "id")),
		    quote_str(jsonget_str(v, "source")));
	printf("\n");
	v = json_object_get(s, "published");
	if (v != NULL)
		printf("published: snapshot %s, commit %.12s, tag %s\n"
		    "           %s\n", quote_str(jsonget_str(v, "snapshot")),
		    quote_str(jsonget_str(v, "commit")),
		    quote_str(jsonget_str(v, "tag")), quote_str(jsonget_str(v,
		    "path")));
	else
		printf("published: no: %s\n", quote_str(jsonget_str(s,
		    "not_published")));
	json_array_foreach(json_object_get(res, "approve"), i, v)
		printf("%s %s\n", i ? "          " : "approve:  ",
		    quote_str(json_string_value(v)));
	if (strcmp(jsonget_str(res, "state"), "waiting") == 0)
		printf("then:      warden cycle   (measures again at the new "
		    "official tip and publishes)\n");
	printf("journal:   git show %s:journals/%s.md\n",
	    quote_str(jsonget_str(j, "official_branch"))[0] ?
	    quote_str(jsonget_str(j, "official_branch")) : "official",
	    quote_str(jsonget_str(res, "cycle")));
}

static struct werr *
cycle_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "roster", required_argument, NULL, 'r' },
		{ "resume", no_argument, NULL, 'R' },
		{ "id", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	struct stopsig_saved sigs;
	struct cycle_opts o;
	struct werr *err = NULL;
	json_t *res = NULL;
	const char *env, *id = NULL;
	int ch;

	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_cycle_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'r')
			o.roster = optarg;
		else if (ch == 'R')
			o.resume = 1;
		else if (ch == 'i')
			id = optarg;
		else
			return cmd_usage_error(&cmd_cycle_entry, "bad option");
	}
	if (err != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_cycle_entry, "'cycle' takes no "
		    "arguments");
	if (id != NULL && !store_cycle_ok(id))
		return cmd_usage_error(&cmd_cycle_entry, "'--id %s' is not a "
		    "cycle id", id);
	if (id != NULL)
		o.new_id = id;
	else if ((env = getenv("WARDEN_CYCLE")) != NULL && env[0] != '\0')
		o.new_id = env;
	if ((err = cmd_ctx_repo(ctx, &o.repo_root)) != NULL ||
	    (err = cmd_ctx_store(ctx, &o.store)) != NULL)
		return err;
	o.on_progress = show_progress;
	o.arg = ctx;
	o.stop = &stopsig_flag;
	stopsig_catch(&sigs);
	if (ctx->verbosity >= 0)
		spawn_set_wait_hook(output_progress_tick);
	err = cycle_run(&res, &o);
	spawn_set_wait_hook(NULL);
	stopsig_restore(&sigs);
	output_progress_end();
	if (err != NULL && stopsig_flag != 0) {
		struct werr *e = werr_new(err->exit, "%s; the cycle stopped "
		    "where it was: 'warden cycle' continues it", err->msg);

		werr_free(err);
		err = e;
	}
	if (err != NULL)
		goto out;
	if (ctx->json)
		output_json(res);
	else
		print_summary(res);
	if (json_integer_value(json_object_get(res, "exit")) == WEXIT_WAITING)
		err = werr_new(WEXIT_WAITING, "cycle %s: waiting for review",
		    jsonget_str(res, "cycle"));
	else if (json_integer_value(json_object_get(res, "exit")) != 0)
		err = werr_new(WEXIT_PROBLEM, "cycle %s: %s",
		    jsonget_str(res, "cycle"),
		    strcmp(jsonget_str(res, "state"), "waiting") == 0 ?
		    "waiting for review, and something broke that no fix "
		    "waits for (see its journal)" :
		    "something broke (see its journal)");
out:
	json_decref(res);
	return err;
}

const struct cmd_entry cmd_cycle_entry = {
	"cycle",
	"[--roster R] [--id ID] [--resume] [--json]",
	"run or continue the maintenance cycle",
	"Runs the maintenance cycle under one cycle id: checkout (a detached\n"
	"HEAD moved forward to the official tip), update, campaign, fidelity,\n"
	"gate, regressions (each series against the last published cycles,\n"
	"alerts as 'warden regressions' shows them), triage, agent (policy\n"
	"cycle.agent), publish (policy cycle.publish), the cycle journal and\n"
	"its export to the official branch. Every cell (engine x model x\n"
	"split) ends with a status: ok, fixed, degraded, all-failed,\n"
	"wrong-model, capped, hang, oom, skipped or crashed. When the cycle\n"
	"queued fixes and policy waits for review, it stops waiting; run it\n"
	"again once they are reviewed and it measures again at the new tip\n"
	"and publishes. An unfinished cycle (killed, interrupted, waiting) is\n"
	"continued by the next 'warden cycle'.\n"
	"  --roster R   the roster of a new cycle (default: the policy's)\n"
	"  --id ID      the id of a new cycle (default: $WARDEN_CYCLE, else\n"
	"               cycle-YYYYMMDD-HHMMSS, UTC)\n"
	"  --resume     continue the unfinished cycle; never start a new one\n"
	"  --json       print the result and the cycle's journal as JSON\n"
	"Exit 0 healthy; 1 something broke that nothing handles (a gate\n"
	"regression, a broken engine no queued fix waits for, an incident left\n"
	"open); 4 done, the fixes it queued wait for review; 2 usage or input;\n"
	"3 environment (then the cycle is resumable). SIGINT or SIGTERM stops\n"
	"it (exit 3).\n"
	"Examples:\n"
	"  git switch --detach official && warden cycle\n"
	"  warden cycle --id demo-2\n"
	"  warden cycle --resume\n",
	cycle_exec,
};
