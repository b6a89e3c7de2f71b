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
#include "isotime.h"
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
	char eta[64] = "", d[48];

	if (ctx->verbosity < 0)
		return;
	if (p->eta_s >= 0) {
		isotime_estimate(d, sizeof(d), p->eta_s);
		snprintf(eta, sizeof(eta), " (cycle eta %s)", d);
	}
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

/*
 * The summary fits OUTPUT_WIDTH columns at any size of the benchmark
 * (nine engines, three models, two splits, three levels: 162 cells): a
 * list wraps under its label and stops after SUMMARY_LINES lines with a
 * count and where the rest is; version changes are grouped by what moved
 * (one line for a dependency every engine took), broken cells by engine.
 */
#define SUMMARY_LINES 4
#define SUMMARY_BROKE 6		/* lines of broken cells */
#define SUMMARY_GROUPS 6	/* version changes: lines of groups */
#define SUMMARY_ALERTS 5
#define SUMMARY_APPROVE 5
#define INDENT "           "	/* under the labels' values */

static void
print_list(const char *label, const json_t *arr, const char *none,
    const char *more)
{
	struct output_list l;
	const json_t *v;
	size_t i;

	output_list_init(&l, label, NULL, SUMMARY_LINES);
	json_array_foreach((json_t *)arr, i, v)
		if (json_is_integer(v))	/* incidents: their numbers */
			output_list_add(&l, "#%lld",
			    (long long)json_integer_value(v));
		else
			output_list_add(&l, "%s", json_is_string(v) ?
			    quote_str(json_string_value(v)) : "?");
	output_list_print(&l, none, more);
}

/* The command that shows the cycle's journal: its export on official, or,
 * not exported, the store's entries. */
static char *
journal_where(const json_t *res)
{
	const char *branch = jsonget_str(json_object_get(res, "journal"),
	    "official_branch");

	if (json_is_string(json_object_get(res, "not_exported")))
		return xasprintf("warden journal show --cycle %s",
		    quote_str(jsonget_str(res, "cycle")));
	return xasprintf("git show %s:journals/%s.md",
	    branch[0] != '\0' ? quote_str(branch) : "official",
	    quote_str(jsonget_str(res, "cycle")));
}

/* Where the whole of what the summary cut is: the cycle's journal. */
static char *
journal_pointer(const json_t *res, const char *section)
{
	char *where = journal_where(res), *out;

	out = xasprintf("%s (%s)", where, section);
	free(where);
	return out;
}

/* A version change: "PKG OLD -> NEW", the engines that took it. */
struct change {
	char *what;
	json_t *engines;
};

/* The cycle's version changes grouped by what moved, the change most
 * engines took first (the shared dependency that broke three of them). */
static struct change *
changes_grouped(const json_t *versions, size_t *n)
{
	struct change *c = xcalloc(json_array_size(versions) + 1, sizeof(*c));
	struct change t;
	const json_t *v;
	size_t i, k;
	char *what;

	*n = 0;
	json_array_foreach((json_t *)versions, i, v) {
		what = xasprintf("%s %s -> %s", quote_str(jsonget_str(v,
		    "package")), json_is_string(json_object_get(v, "old")) ?
		    quote_str(jsonget_str(v, "old")) : "(none)",
		    json_is_string(json_object_get(v, "new")) ?
		    quote_str(jsonget_str(v, "new")) : "(removed)");
		for (k = 0; k < *n && strcmp(c[k].what, what) != 0; k++)
			;
		if (k == *n) {
			c[k].what = what;
			c[k].engines = json_array();
			(*n)++;
		} else
			free(what);
		json_array_append_new(c[k].engines,
		    json_string(jsonget_str(v, "engine")));
	}
	for (i = 1; i < *n; i++)	/* stable: first seen first on ties */
		for (k = i; k > 0 && json_array_size(c[k].engines) >
		    json_array_size(c[k - 1].engines); k--) {
			t = c[k];
			c[k] = c[k - 1];
			c[k - 1] = t;
		}
	return c;
}

static void
print_changed(const json_t *res, const json_t *s)
{
	const json_t *j = json_object_get(res, "journal"), *v;
	struct output_list l;
	struct change *c;
	size_t i, k, n, lines = 0;
	char *label, *more;

	c = changes_grouped(json_object_get(s, "versions"), &n);
	if (json_is_string(json_object_get(j, "previous")))
		more = xasprintf("warden versions --diff %s %s",
		    quote_str(jsonget_str(j, "previous")),
		    quote_str(jsonget_str(res, "cycle")));
	else
		more = xasprintf("warden versions --cycle %s",
		    quote_str(jsonget_str(res, "cycle")));
	if (n == 0)
		printf("changed:   nothing\n");
	for (i = 0; i < n; i++) {
		if (lines + 1 >= SUMMARY_GROUPS && i + 1 < n) {
			printf(INDENT "and %zu more changes: %s\n", n - i,
			    more);
			break;
		}
		label = xasprintf("%s%s: ", i == 0 ? "changed:   " : INDENT,
		    c[i].what);
		output_list_init(&l, label, NULL, 2);
		json_array_foreach(c[i].engines, k, v)
			output_list_add(&l, "%s", quote_str(json_string_value(v)));
		lines += output_list_print(&l, NULL, more);
		free(label);
	}
	for (i = 0; i < n; i++) {
		free(c[i].what);
		json_decref(c[i].engines);
	}
	free(c);
	free(more);
}

/* Updates that failed: "llama.cpp (build_failed)". */
static void
print_update_failed(const json_t *s)
{
	const json_t *failed = json_object_get(s, "update_failed"), *v;
	struct output_list l;
	size_t i;

	if (json_array_size(failed) == 0)
		return;
	output_list_init(&l, "update:    failed ", NULL, SUMMARY_LINES);
	json_array_foreach(failed, i, v)
		output_list_add(&l, "%s (%s)", quote_str(jsonget_str(v,
		    "engine")), quote_str(jsonget_str(v, "outcome")));
	output_list_print(&l, NULL, "warden journal show --kind update.");
}

/*
 * The broken cells by engine: a cell alone as "ENGINE/MODEL/SPLIT
 * (STATUS)", an engine's several as "ENGINE: N cells STATUS" or, their
 * statuses mixed, "ENGINE: N cells (K STATUS, ...)",
 * so nine engines broken everywhere still read in a few lines.
 */
static void
print_broke(const json_t *res, const json_t *s)
{
	const json_t *broke = json_object_get(s, "broke"), *v, *w;
	json_t *engines = json_array(), *counts;
	struct output_list l;
	const char *engine, **keys;
	size_t i, k, m = 0, nkeys, cells, fixed;
	struct buf b = BUF_INIT;
	char *more;

	json_array_foreach(broke, i, v) {
		engine = jsonget_str(v, "cell");
		for (k = 0; k < json_array_size(engines); k++)
			if (strncmp(json_string_value(json_array_get(engines,
			    k)), engine, strcspn(engine, "/")) == 0 &&
			    json_string_length(json_array_get(engines, k)) ==
			    strcspn(engine, "/"))
				break;
		if (k == json_array_size(engines))
			json_array_append_new(engines, json_stringn(engine,
			    strcspn(engine, "/")));
	}
	output_list_init(&l, "broke:     ", NULL, SUMMARY_BROKE);
	json_array_foreach(engines, k, w) {
		counts = json_object();
		cells = fixed = 0;
		json_array_foreach(broke, i, v) {
			engine = jsonget_str(v, "cell");
			if (strncmp(engine, json_string_value(w),
			    json_string_length(w)) != 0 ||
			    engine[json_string_length(w)] != '/')
				continue;
			cells++;
			fixed += json_is_true(json_object_get(v, "fixed"));
			json_object_set_new(counts, jsonget_str(v, "status"),
			    json_integer(jsonget_int(counts, jsonget_str(v,
			    "status")) + 1));
			if (cells == 1)
				m = i;
		}
		if (cells == 1) {
			v = json_array_get(broke, m);
			output_list_add(&l, "%s (%s%s)", quote_str(jsonget_str(v,
			    "cell")), quote_str(jsonget_str(v, "status")),
			    json_is_true(json_object_get(v, "fixed")) ?
			    ", fixed" : "");
		} else {
			buf_reset(&b);
			keys = cycle_statuses_ordered(counts, &nkeys);
			for (i = 0; i < nkeys; i++)
				buf_printf(&b, "%s%lld %s", i ? ", " : "",
				    (long long)jsonget_int(counts, keys[i]),
				    quote_str(keys[i]));
			free(keys);
			if (fixed > 0)
				buf_printf(&b, "; %zu fixed", fixed);
			output_list_add(&l, nkeys == 1 && fixed == 0 ?
			    "%s: %zu cells %s" : "%s: %zu cells (%s)",
			    quote_str(json_string_value(w)), cells,
			    buf_cstr(&b) + (nkeys == 1 && fixed == 0 ?
			    strcspn(buf_cstr(&b), " ") + 1 : 0));
		}
		json_decref(counts);
	}
	more = journal_pointer(res, "Broke");
	output_list_print(&l, "nothing", more);
	free(more);
	buf_free(&b);
	json_decref(engines);
}

/* The alerts of the cycle's regressions step, one each (wrapped). */
static void
print_alerts(const json_t *r)
{
	static const char *const kinds[] = { "opened", "seen", "fixed", NULL };
	static const char *const how[] = { "new", "seen again",
	    "back within the threshold" };
	struct output_list l;
	const json_t *a;
	const char *why;
	size_t i, k, n = 0, total = 0;
	char *name, *change;

	if (!json_is_object(r))
		return;
	for (k = 0; kinds[k] != NULL; k++)
		total += json_array_size(json_object_get(r, kinds[k]));
	for (k = 0; kinds[k] != NULL; k++)
		json_array_foreach(json_object_get(r, kinds[k]), i, a) {
			if (n == SUMMARY_ALERTS - 1 && total > SUMMARY_ALERTS) {
				printf(INDENT "and %zu more alerts: warden "
				    "regressions\n", total - n);
				return;
			}
			name = regress_series_name(a);
			change = regress_change_text(a);
			/* wrapped between its parts, never inside one */
			output_list_init(&l, n++ ? INDENT : "alerts:    ",
			    " ", 0);
			output_list_add(&l, "#%lld %s:", (long long)jsonget_int(a,
			    "id"), quote_str(name));
			output_list_add(&l, "%s", quote_str(change));
			output_list_add(&l, "(%+.1f %%),", json_number_value(
			    json_object_get(a, "change_pct")));
			output_list_add(&l, "%s,", how[k]);
			output_list_add(&l, "%s", quote_str(jsonget_str(a,
			    "state")));
			output_list_print(&l, NULL, NULL);
			free(name);
			free(change);
		}
	if (n > 0)
		return;
	why = json_string_value(json_object_get(r, "why"));
	if (why == NULL)
		why = json_string_value(json_object_get(json_object_get(r,
		    "baseline"), "why"));
	output_list_init(&l, "alerts:    ", NULL, 0);
	if (why != NULL)
		output_list_add(&l, "none: %s", quote_str(why));
	else
		output_list_add(&l, "none (%lld series compared)",
		    (long long)jsonget_int(r, "compared"));
	output_list_print(&l, NULL, NULL);
}

/* The snapshot's path as the maintainer finds it: under the repository,
 * relative to its root. */
static const char *
repo_relative(const char *path, const char *root)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/* A command to copy, after prefix (as wide as INDENT): one line, or where
 * that passes OUTPUT_WIDTH, broken before its " --as " with a backslash,
 * so that it still pastes whole into a shell. */
static void
print_command(const char *prefix, const char *cmd)
{
	const char *as = strstr(cmd, " --as ");

	if (strlen(INDENT) + strlen(cmd) <= OUTPUT_WIDTH || as == NULL) {
		printf("%s%s\n", prefix, cmd);
		return;
	}
	printf("%s%.*s \\\n" INDENT "    %s\n", prefix, (int)(as - cmd), cmd,
	    as + 1);
}

static void
print_summary(const json_t *res, const char *root)
{
	const json_t *j = json_object_get(res, "journal");
	const json_t *s = json_object_get(j, "summary"), *v, *g;
	struct output_list l;
	const char **keys;
	char label[64], *more, *where;
	size_t i, nkeys, n;

	printf("cycle %s (roster %s), round %lld: %s, exit %lld\n",
	    quote_str(jsonget_str(res, "cycle")), quote_str(jsonget_str(j,
	    "roster")), (long long)json_integer_value(json_object_get(res,
	    "round")), quote_str(jsonget_str(res, "state")),
	    (long long)json_integer_value(json_object_get(res, "exit")));
	snprintf(label, sizeof(label), "cells:     %lld: ", (long long)
	    json_integer_value(json_object_get(s, "cells")));
	output_list_init(&l, label, NULL, 0);
	keys = cycle_statuses_ordered(json_object_get(s, "statuses"), &nkeys);
	for (i = 0; i < nkeys; i++)
		output_list_add(&l, "%lld %s", (long long)jsonget_int(
		    json_object_get(s, "statuses"), keys[i]),
		    quote_str(keys[i]));
	free(keys);
	output_list_print(&l, "none", NULL);
	print_changed(res, s);
	print_update_failed(s);
	print_broke(res, s);
	g = json_object_get(s, "gate");
	more = journal_pointer(res, "Summary");
	print_list("gate:      passed ", json_object_get(g, "passed"), "none",
	    more);
	print_list(INDENT "failed ", json_object_get(g, "failed"), "none",
	    more);
	print_list(INDENT "newly failing ", json_object_get(g,
	    "regressions"), "none", more);
	free(more);
	if (json_object_get(s, "incidents_opened") == NULL)
		printf("incidents: no triage ran\n");
	else {
		print_list("incidents: opened ", json_object_get(s,
		    "incidents_opened"), "none", "warden incident list");
		print_list(INDENT "fixed ", json_object_get(s,
		    "incidents_fixed"), "none", "warden incident list");
	}
	print_alerts(json_object_get(j, "regressions"));
	output_list_init(&l, "review:    ", NULL, SUMMARY_LINES);
	json_array_foreach(json_object_get(s, "reviews_waiting"), i, v)
		output_list_add(&l, "#%lld (%s)", (long long)
		    json_integer_value(json_object_get(v, "id")),
		    quote_str(jsonget_str(v, "source")));
	output_list_print(&l, "nothing waiting", "warden review list");
	v = json_object_get(s, "published");
	output_list_init(&l, "published: ", NULL, 0);
	if (v != NULL) {
		output_list_add(&l, "snapshot %s", quote_str(jsonget_str(v,
		    "snapshot")));
		output_list_add(&l, "commit %.12s", quote_str(jsonget_str(v,
		    "commit")));
		output_list_add(&l, "tag %s", quote_str(jsonget_str(v, "tag")));
		output_list_print(&l, NULL, NULL);
		printf(INDENT "%s\n", quote_str(repo_relative(jsonget_str(v,
		    "path"), root)));
	} else {
		output_list_add(&l, "no: %s", quote_str(jsonget_str(s,
		    "not_published")));
		output_list_print(&l, NULL, NULL);
	}
	n = json_array_size(json_object_get(res, "approve"));
	json_array_foreach(json_object_get(res, "approve"), i, v) {
		if (i == SUMMARY_APPROVE - 1 && n > SUMMARY_APPROVE) {
			printf(INDENT "and %zu more: warden review list\n",
			    n - i);
			break;
		}
		print_command(i ? INDENT : "approve:   ",
		    quote_str(json_string_value(v)));
	}
	if (strcmp(jsonget_str(res, "state"), "waiting") == 0)
		printf("then:      warden cycle (measures again at the new "
		    "official tip, publishes)\n");
	where = journal_where(res);
	if (json_is_string(json_object_get(res, "not_exported"))) {
		output_line(11, "journal:   not exported: %s", quote_msg(
		    jsonget_str(res, "not_exported")));
		printf("           %s\n", where);
	} else
		printf("journal:   %s\n", where);
	free(where);
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
		print_summary(res, o.repo_root);
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
