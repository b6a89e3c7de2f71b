/*
 * cmd-regressions.c - `warden regressions [list]|show|set`: the
 * performance alerts the cycle raised (a series of an engine found
 * significantly and sizeably worse than in the last published cycles),
 * one with its test, baseline and transitions, and a maintainer's
 * transition (journaled with who and why). The work is in
 * runner/regress/; this file parses options and prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "buf.h"
#include "cmd.h"
#include "jsonget.h"
#include "output.h"
#include "quote.h"
#include "regress/regress.h"
#include "util.h"

#define STATES "untriaged, acknowledged, invalid or fixed"
#define ROW_INDENT "     "	/* the lines under a row */

/* An alert in two lines within OUTPUT_WIDTH: id, state, cycle and its
 * series (engine, model, split, level, metric: wrapped under the row when
 * the real engines' names make it long), then the change and p under it. */
static void
print_row(const json_t *a)
{
	char *name = regress_series_name(a), *change = regress_change_text(a);
	struct output_list l;
	char *label;

	label = xasprintf("%-4lld %-12s %-12s ", (long long)jsonget_int(a,
	    "id"), quote_str(jsonget_str(a, "state")), quote_str(jsonget_str(a,
	    "cycle")));
	output_list_init(&l, label, NULL, 0);
	l.indent = strlen(ROW_INDENT);
	output_list_add(&l, "%s", quote_str(name));
	output_list_print(&l, NULL, NULL);
	output_list_init(&l, ROW_INDENT, NULL, 0);
	output_list_add(&l, "%s (%+.1f %%)", quote_str(change),
	    json_number_value(json_object_get(a, "change_pct")));
	output_list_add(&l, "p %.2g", json_number_value(json_object_get(a,
	    "p_value")));
	output_list_print(&l, NULL, NULL);
	free(label);
	free(name);
	free(change);
}

static struct werr *
list_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "engine", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL, *engine = NULL;
	struct store *store;
	json_t *rows = NULL, *row;
	struct werr *err = NULL;
	size_t i;
	int ch;

	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_regressions_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 's')
			state = optarg;
		else if (ch == 'e')
			engine = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_regressions_entry, "regressions "
		    "list takes no arguments, not '%s'", argv[optind]);
	if (state != NULL && !regress_state_valid(state))
		return cmd_usage_error(&cmd_regressions_entry, "'--state' takes "
		    STATES ", not '%s'", state);
	if ((err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = regress_list(&rows, store, state, engine)) != NULL)
		return err;
	if (ctx->json)
		output_json(rows);
	else if (json_array_size(rows) == 0)
		cmd_list_empty(ctx, "regression alerts%s%s%s%s",
		    state != NULL ? " in state " : "", state != NULL ? state : "",
		    engine != NULL ? " of engine " : "",
		    engine != NULL ? quote_str(engine) : "");
	else
		json_array_foreach(rows, i, row)
			print_row(row);
	json_decref(rows);
	return NULL;
}

static void
print_show(const json_t *a)
{
	const json_t *rec = json_object_get(a, "record"), *x, *b;
	char *name = regress_series_name(a), *change = regress_change_text(a);
	struct buf bl = BUF_INIT;
	size_t i;

	printf("regression alert %lld: %s\n", (long long)jsonget_int(a, "id"),
	    quote_str(jsonget_str(a, "state")));
	output_line(10, "series:   %s", quote_str(name));
	output_line(10, "change:   %s (%+.1f %%, %.1f %% worse; threshold %g %%)",
	    quote_str(change), json_number_value(json_object_get(a,
	    "change_pct")), json_number_value(json_object_get(rec,
	    "worse_pct")), json_number_value(json_object_get(rec,
	    "threshold_pct")));
	output_line(10, "test:     Mann-Whitney U = %.1f, z = %.2f, one-sided "
	    "(%s), p = %.3g (alpha %g); %lld samples now, %lld before",
	    json_number_value(json_object_get(rec, "u")),
	    json_number_value(json_object_get(rec, "z")),
	    quote_str(jsonget_str(rec, "alternative")),
	    json_number_value(json_object_get(a, "p_value")),
	    json_number_value(json_object_get(rec, "alpha")),
	    (long long)jsonget_int(rec, "n_after"),
	    (long long)jsonget_int(rec, "n_before"));
	output_line(10, "before:   %s", quote_str(jsonget_str(rec,
	    "before_is")));
	b = json_object_get(rec, "baseline");
	buf_puts(&bl, "baseline: cycles");
	json_array_foreach(json_object_get(b, "cycles"), i, x)
		buf_printf(&bl, "%s %s", i ? "," : "",
		    quote_str(json_string_value(x)));
	buf_puts(&bl, "; runs");
	json_array_foreach(json_object_get(b, "runs"), i, x)
		buf_printf(&bl, "%s %s", i ? "," : "",
		    quote_str(json_string_value(x)));
	output_line(10, "%s", buf_cstr(&bl));
	buf_free(&bl);
	output_line(10, "found:    cycle %s round %lld, run %s; last seen in %s",
	    quote_str(jsonget_str(a, "cycle")), (long long)jsonget_int(a,
	    "round"), quote_str(jsonget_str(a, "run_id")),
	    quote_str(jsonget_str(a, "last_cycle")));
	json_array_foreach(json_object_get(rec, "seen"), i, x)
		output_line(10, "seen:     cycle %s round %lld: %.1f (%+.1f %% "
		    "worse)%s", quote_str(jsonget_str(x, "cycle")),
		    (long long)jsonget_int(x, "round"),
		    json_number_value(json_object_get(x, "after")),
		    json_number_value(json_object_get(x, "worse_pct")),
		    json_is_true(json_object_get(x, "fixed")) ?
		    ": back within the threshold" : "");
	printf("transitions:\n");
	json_array_foreach(json_object_get(a, "transitions"), i, x)
		output_line(4, "  %s %s \u2192 %s by %s: %s", quote_str(
		    jsonget_str(x, "time")), json_is_string(json_object_get(x,
		    "from")) ? quote_str(jsonget_str(x, "from")) : "(new)",
		    quote_str(jsonget_str(x, "to")), quote_str(jsonget_str(x,
		    "who")), quote_msg(jsonget_str(x, "reason")));
	free(name);
	free(change);
}

static struct werr *
show_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	json_t *a = NULL;
	int64_t id;

	if ((err = cmd_no_options(ctx, &cmd_regressions_entry, argc, argv)) !=
	    NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_regressions_entry,
		    "regressions show needs one alert number");
	if ((err = cmd_parse_id(&cmd_regressions_entry, argv[optind],
	    "an alert number", &id)) != NULL ||
	    (err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = regress_show(&a, store, id)) != NULL)
		return err;
	if (ctx->json)
		output_json(a);
	else
		print_show(a);
	json_decref(a);
	return NULL;
}

/* Is who "Name <email>" (a name, then one <email> closing the text)? */
static int
person_ok(const char *who)
{
	const char *lt = strchr(who, '<'), *gt = strrchr(who, '>');

	return lt != NULL && lt > who && lt[-1] == ' ' && lt - 1 > who &&
	    gt != NULL && gt[1] == '\0' && gt > lt + 1 &&
	    strchr(lt + 1, '<') == NULL && strchr(who, '>') == gt;
}

/* --by, checked as "Name <email>", else git's user.name and user.email
 * of the repository. Caller frees. */
static struct werr *
who_is(char **out, struct cmd_ctx *ctx, const char *by)
{
	git_repository *repo = NULL;
	git_signature *sig = NULL;
	const char *root;
	struct werr *err;

	*out = NULL;
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if (by != NULL) {
		if (!person_ok(by))
			return cmd_usage_error(&cmd_regressions_entry, "'--by' "
			    "takes \"Name <email>\", not '%s'", by);
		*out = xstrdup(by);
		return NULL;
	}
	if (git_repository_open(&repo, root) < 0)
		return werr_git("cannot open '%s'", root);
	if (git_signature_default(&sig, repo) == 0)
		*out = xasprintf("%s <%s>", sig->name, sig->email);
	else
		err = werr_new(WEXIT_INPUT, "who sets it? give --by \"Name "
		    "<email>\", or set git's user.name and user.email");
	git_signature_free(sig);
	git_repository_free(repo);
	return err;
}

static struct werr *
set_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reason", required_argument, NULL, 'r' },
		{ "by", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	const char *reason = NULL, *by = NULL, *state;
	struct store *store;
	struct werr *err = NULL;
	char *who = NULL;
	int64_t id;
	int ch;

	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_regressions_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'r')
			reason = optarg;
		else if (ch == 'b')
			by = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc - 2)
		return cmd_usage_error(&cmd_regressions_entry,
		    "regressions set needs an alert number and a state");
	if (reason == NULL || *reason == '\0')
		return cmd_usage_error(&cmd_regressions_entry, "regressions set "
		    "needs --reason TEXT: why the alert is %s", argv[optind + 1]);
	state = argv[optind + 1];
	if (!regress_state_valid(state))
		return cmd_usage_error(&cmd_regressions_entry, "'%s' is not an "
		    "alert state (" STATES ")", state);
	if ((err = cmd_parse_id(&cmd_regressions_entry, argv[optind],
	    "an alert number", &id)) != NULL ||
	    (err = who_is(&who, ctx, by)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = regress_set(store, id, state, reason, who)) != NULL) {
		free(who);
		return err;
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:I, s:s, s:s, s:s}", "alert",
		    (json_int_t)id, "state", state, "who", who, "reason",
		    reason);

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0)
		printf("regression alert %lld: %s\n", (long long)id, state);
	free(who);
	return NULL;
}

static struct werr *
regressions_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-')
		return list_cmd(ctx, argc, argv);
	if (strcmp(argv[1], "list") == 0)
		return list_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return show_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "set") == 0)
		return set_cmd(ctx, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_regressions_entry,
	    "unknown regressions subcommand '%s'", argv[1]);
}

const struct cmd_entry cmd_regressions_entry = {
	"regressions",
	"[list] [--state S] [--engine E] [--json]\n"
	"show ID [--json]\n"
	"set ID STATE --reason TEXT [--by \"Name <email>\"]",
	"performance regression alerts, and a maintainer's transition",
	"Each cycle compares every series (engine x model x split x\n"
	"concurrency x metric: output_throughput, median_ttft_ms, p99_ttft_ms,\n"
	"median_tpot_ms, peak_engine_memory_bytes) of its campaign with the\n"
	"last published cycles measured on the same machine: the Mann-Whitney\n"
	"U test on the per-request samples (one-sided, p < policy\n"
	"regressions.alpha) and the figure worse by at least\n"
	"regressions.threshold_pct raise an alert.\n"
	"list          every alert, oldest first: number, state, the cycle that\n"
	"              found it, the series; under it before -> after, change,\n"
	"              p-value\n"
	"--state S     only alerts in state S: untriaged, acknowledged,\n"
	"              invalid, fixed\n"
	"--engine E    only alerts of engine E\n"
	"show ID       alert ID: the series, the figures, the test, the\n"
	"              baseline (cycles and runs), every sighting and transition\n"
	"set ID STATE  move alert ID to STATE, journaled with why (--reason,\n"
	"              required) and who (--by, else git's user.name and\n"
	"              user.email)\n"
	"--json        the rows or the record as JSON\n"
	"Exit 0 done; 2 an unknown alert, state or option, a missing --reason\n"
	"or --by that is not \"Name <email>\"; 3 the store cannot be read or\n"
	"written.\n"
	"Examples:\n"
	"  warden regressions --state untriaged\n"
	"  warden regressions show 3\n"
	"  warden regressions set 3 invalid --reason throttled --by \"Ann "
	"<ann@lab>\"\n",
	regressions_exec,
};
