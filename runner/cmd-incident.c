/*
 * cmd-incident.c - `warden incident list|show|set`: the incidents triage
 * opened, one with its evidence (every smoke run: what was pinned, the
 * outcome, the log tail) and transitions, and a maintainer's transition
 * (journaled with who and why). The work is in runner/triage/; this
 * file parses options and prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "jsonget.h"
#include "output.h"
#include "quote.h"
#include "triage/environment.h"
#include "triage/triage.h"
#include "util.h"

static struct werr *
incident_list_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL;
	struct store *store;
	json_t *rows = NULL, *row;
	struct werr *err = NULL;
	size_t i;

	optind = 0;
	while (cmd_getopt(ctx, &cmd_incident_entry, argc, argv, opts, &err) !=
	    -1)
		state = optarg;
	if (err != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_incident_entry,
		    "incident list takes no arguments");
	if (state != NULL && !triage_state_valid(state))
		return cmd_usage_error(&cmd_incident_entry, "'--state' takes "
		    "untriaged, investigating, confirmed, fixed, wontfix or "
		    "upstream, not '%s'", state);
	if ((err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = triage_incident_list(&rows, store, state)) != NULL)
		return err;
	if (ctx->json)
		output_json(rows);
	else
		json_array_foreach(rows, i, row)
			printf("%-4lld %-13s %-12s %-12s %s\n",
			    (long long)json_integer_value(json_object_get(row,
			    "id")), quote_str(jsonget_str(row, "state")),
			    quote_str(jsonget_str(row, "kind")),
			    quote_str(jsonget_str(row, "last_cycle")),
			    quote_msg(jsonget_str(row, "summary")));
	json_decref(rows);
	return NULL;
}

static void
print_pins(const json_t *o)
{
	const char *k;
	json_t *v;
	int first = 1;

	printf("{");
	json_object_foreach((json_t *)o, k, v) {
		printf("%s%s %s", first ? "" : ", ", k, json_is_string(v) ?
		    quote_str(json_string_value(v)) : "unpinned");
		first = 0;
	}
	printf("}");
}

static void
print_engine(const char *engine, const json_t *e)
{
	json_t *c;
	size_t i;

	printf("  %s: healthy in %s (manifest %lld), broken in %s (manifest "
	    "%lld); %lld change%s; %s in %lld smoke run%s (one culprit: at "
	    "most %lld)\n", engine, quote_str(jsonget_str(e, "good_cycle")),
	    (long long)json_integer_value(json_object_get(e, "good_manifest")),
	    quote_str(jsonget_str(e, "cycle")),
	    (long long)json_integer_value(json_object_get(e, "bad_manifest")),
	    (long long)json_integer_value(json_object_get(e, "changes")),
	    json_integer_value(json_object_get(e, "changes")) == 1 ? "" : "s",
	    quote_str(jsonget_str(e, "search")),
	    (long long)json_integer_value(json_object_get(e, "runs")),
	    json_integer_value(json_object_get(e, "runs")) == 1 ? "" : "s",
	    (long long)json_integer_value(json_object_get(e, "bound")));
	/* The status beside the outcome, as the campaign table has it; a
	 * record triage kept before cells had one shows none. */
	json_array_foreach(json_object_get(e, "failing_cells"), i, c) {
		/* a regressed series says which metric, and by how much */
		if (json_is_string(json_object_get(c, "metric"))) {
			printf("    %s %s c=%lld: %s\n", quote_str(jsonget_str(c,
			    "model")), quote_str(jsonget_str(c, "split")),
			    (long long)json_integer_value(json_object_get(c,
			    "concurrency")), quote_msg(jsonget_str(c,
			    "detail")));
			continue;
		}
		printf("    %s %s c=%lld: %s %lld/%lld%s%s\n",
		    quote_str(jsonget_str(c, "model")), quote_str(jsonget_str(c,
		    "split")), (long long)json_integer_value(json_object_get(c,
		    "concurrency")), quote_str(jsonget_str(c, "outcome")),
		    (long long)json_integer_value(json_object_get(c,
		    "completed")),
		    (long long)json_integer_value(json_object_get(c, "total")),
		    json_is_string(json_object_get(c, "status")) ? " " : "",
		    quote_str(jsonget_str(c, "status")));
	}
	if (json_array_size(json_object_get(e, "environment")) > 0) {
		struct buf env = BUF_INIT;

		environment_text(&env, json_object_get(e, "environment"));
		printf("    also changed, which no smoke run can test: %s\n",
		    quote_msg(buf_cstr(&env)));
		buf_free(&env);
	}
}

/* A commit that broke an engine: what it changed, the review it came
 * in by. */
static void
print_commit(const json_t *x)
{
	json_t *p;
	size_t i;

	printf("culprit:  commit %s \"%s\"\n", quote_str(jsonget_str(x,
	    "commit")), quote_msg(jsonget_str(x, "summary")));
	if (json_integer_value(json_object_get(x, "review")) > 0)
		printf("          came in by review %lld (warden review show "
		    "%lld)\n", (long long)json_integer_value(json_object_get(x,
		    "review")), (long long)json_integer_value(json_object_get(x,
		    "review")));
	else
		printf("          came in without a review\n");
	printf("          changed:");
	json_array_foreach(json_object_get(x, "paths"), i, p)
		printf("%s %s", i ? "," : "", quote_str(json_string_value(p)));
	printf("\n");
}

static void
print_show(const json_t *o)
{
	const json_t *rec = json_object_get(o, "record"), *x, *e;
	const char *engine;
	size_t i;

	printf("incident %lld: %s\n", (long long)json_integer_value(
	    json_object_get(o, "id")), quote_str(jsonget_str(o, "state")));
	printf("kind:     %s\nsummary:  %s\n", quote_str(jsonget_str(o,
	    "kind")), quote_msg(jsonget_str(o, "summary")));
	printf("opened:   %s in cycle %s; last seen in %s\n",
	    quote_str(jsonget_str(o, "opened")), quote_str(jsonget_str(o,
	    "cycle")), quote_str(jsonget_str(o, "last_cycle")));
	json_array_foreach(json_object_get(rec, "culprits"), i, x)
		if (json_is_string(json_object_get(x, "commit")))
			print_commit(x);
		else
			printf("culprit:  %s %s \u2192 %s\n",
			    quote_str(jsonget_str(x, "package")),
			    json_is_string(json_object_get(x, "from")) ?
			    quote_str(jsonget_str(x, "from")) : "(none)",
			    json_is_string(json_object_get(x, "to")) ?
			    quote_str(jsonget_str(x, "to")) : "(removed)");
	printf("engines: ");
	json_array_foreach(json_object_get(rec, "engines"), i, x)
		printf(" %s", quote_str(json_string_value(x)));
	printf("\nhealthy with the same release:");
	json_array_foreach(json_object_get(rec, "healthy_with"), i, x)
		printf(" %s", quote_str(json_string_value(x)));
	if (json_array_size(json_object_get(rec, "healthy_with")) == 0)
		printf(" none");
	printf("\n");
	json_object_foreach(json_object_get(rec, "per_engine"), engine, e)
		print_engine(engine, e);
	json_array_foreach(json_object_get(rec, "proposals"), i, x) {
		printf("proposal: %s: ", quote_msg(jsonget_str(x, "note")));
		if (json_is_integer(json_object_get(x, "review")))
			printf("review %lld\n", (long long)json_integer_value(
			    json_object_get(x, "review")));
		else
			printf("not queued\n");
	}
	if ((x = json_object_get(rec, "lift")) != NULL &&
	    json_is_string(json_object_get(x, "state")))
		printf("lift:     %s %s (%s)\n", quote_str(jsonget_str(x,
		    "version")), quote_str(jsonget_str(x, "state")),
		    json_is_integer(json_object_get(x, "review")) ?
		    "review queued" : "no review");
	printf("smoke runs:\n");
	json_array_foreach(json_object_get(o, "smoke"), i, x) {
		printf("  %lld %s %s pinned ", (long long)json_integer_value(
		    json_object_get(x, "id")), quote_str(jsonget_str(x,
		    "engine")), quote_str(jsonget_str(x, "purpose")));
		print_pins(json_object_get(x, "pins"));
		printf(": %s%s%s\n", quote_str(jsonget_str(x, "outcome")),
		    json_is_string(json_object_get(x, "detail")) ? ": " : "",
		    quote_msg(jsonget_str(x, "detail")));
	}
	printf("transitions:\n");
	json_array_foreach(json_object_get(o, "transitions"), i, x)
		printf("  %s %s \u2192 %s by %s: %s\n", quote_str(jsonget_str(x,
		    "time")), json_is_string(json_object_get(x, "from")) ?
		    quote_str(jsonget_str(x, "from")) : "(new)",
		    quote_str(jsonget_str(x, "to")), quote_str(jsonget_str(x,
		    "who")), quote_msg(jsonget_str(x, "reason")));
}

static struct werr *
incident_show_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	json_t *o = NULL;
	int64_t id;

	if ((err = cmd_no_options(ctx, &cmd_incident_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_incident_entry,
		    "incident show needs one incident number");
	if ((err = cmd_parse_id(&cmd_incident_entry, argv[optind],
	    "an incident number", &id)) != NULL ||
	    (err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = triage_incident_show(&o, store, id)) != NULL)
		return err;
	if (ctx->json)
		output_json(o);
	else
		print_show(o);
	json_decref(o);
	return NULL;
}

static struct werr *
incident_set_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reason", required_argument, NULL, 'r' },
		{ "as", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *reason = NULL, *as = NULL, *state;
	struct store *store;
	struct werr *err = NULL;
	int64_t id;
	int ch;

	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_incident_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'r')
			reason = optarg;
		else if (ch == 'a')
			as = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc - 2)
		return cmd_usage_error(&cmd_incident_entry,
		    "incident set needs an incident number and a state");
	if (reason == NULL || *reason == '\0' || as == NULL || *as == '\0')
		return cmd_usage_error(&cmd_incident_entry, "incident set needs "
		    "--reason TEXT and --as \"Name <email>\"");
	state = argv[optind + 1];
	if (!triage_state_valid(state))
		return cmd_usage_error(&cmd_incident_entry, "'%s' is not an "
		    "incident state (untriaged, investigating, confirmed, "
		    "fixed, wontfix, upstream)", state);
	if ((err = cmd_parse_id(&cmd_incident_entry, argv[optind],
	    "an incident number", &id)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = triage_incident_set(store, id, state, reason, as)) != NULL)
		return err;
	if (ctx->json) {
		json_t *o = json_pack("{s:I, s:s, s:s, s:s}", "incident",
		    (json_int_t)id, "state", state, "who", as, "reason", reason);

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0)
		printf("incident %lld: %s\n", (long long)id, state);
	return NULL;
}

static struct werr *
incident_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_incident_entry,
		    "incident needs a subcommand");
	if (strcmp(argv[1], "list") == 0)
		return incident_list_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return incident_show_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "set") == 0)
		return incident_set_cmd(ctx, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_incident_entry,
	    "unknown incident subcommand '%s'", argv[1]);
}

const struct cmd_entry cmd_incident_entry = {
	"incident",
	"list [--state S]\n"
	"show N\n"
	"set N STATE --reason TEXT --as \"Name <email>\"",
	"the incidents triage opened, and a maintainer's transition",
	"list          every incident, oldest first: number, state, kind, the\n"
	"              last cycle it was seen in, summary\n"
	"--state S     only incidents in state S: untriaged, investigating,\n"
	"              confirmed, fixed, wontfix, upstream\n"
	"show N        incident N: culprit, engines, the engines that took the\n"
	"              same release and stayed healthy, per engine its\n"
	"              manifests and failing cells, the pin proposals, every\n"
	"              smoke run (what was pinned, the outcome) and every\n"
	"              transition with who and why\n"
	"set N STATE   move incident N to STATE, journaled with --reason and\n"
	"              --as (both required)\n"
	"--json        the rows or the record as JSON\n"
	"Examples:\n"
	"  warden incident list --state confirmed\n"
	"  warden incident show 2\n"
	"  warden incident set 1 wontfix --reason \"retired\" --as \"Ann <ann@localhost>\"\n",
	incident_exec,
};
