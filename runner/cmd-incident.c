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
	else if (json_array_size(rows) == 0)
		cmd_list_empty(ctx, "incidents%s%s", state != NULL ? " in state " :
		    "", state != NULL ? state : "");
	else
		json_array_foreach(rows, i, row) {
			/* the summary names engines: past the line, it
			 * goes under the row, wrapped */
			char *label = xasprintf("%-4lld %-13s %-12s %-12s ",
			    (long long)json_integer_value(json_object_get(row,
			    "id")), quote_str(jsonget_str(row, "state")),
			    quote_str(jsonget_str(row, "kind")),
			    quote_str(jsonget_str(row, "last_cycle")));
			struct output_list l;

			output_list_init(&l, label, NULL, 0);
			l.indent = 5;
			output_list_add(&l, "%s", quote_msg(jsonget_str(row,
			    "summary")));
			output_list_print(&l, NULL, NULL);
			free(label);
		}
	json_decref(rows);
	return NULL;
}

/* "{common 1.0, shared unpinned}" */
static void
add_pins(struct buf *b, const json_t *o)
{
	const char *k;
	json_t *v;
	int first = 1;

	buf_puts(b, "{");
	json_object_foreach((json_t *)o, k, v) {
		buf_printf(b, "%s%s %s", first ? "" : ", ", quote_str(k),
		    json_is_string(v) ? quote_str(json_string_value(v)) :
		    "unpinned");
		first = 0;
	}
	buf_puts(b, "}");
}

/*
 * The lines of `show` wrap within OUTPUT_WIDTH: at 162 cells an engine
 * has 18 failing cells, grouped by what they show ("not_ready 0/2
 * crashed: qwen3-0.6b chat c=1,8,16, ...") and cut after CELL_LINES lines
 * with a pointer to the record; a smoke run's log tail is counted, not
 * printed (it is in the record).
 */
#define CELL_LINES 4
#define MORE "warden --json incident show"

/* A failing cell's outcome as the campaign table has it: "not_ready 0/2
 * crashed" (a record triage kept before cells had a status shows none). */
static char *
cell_outcome(const json_t *c)
{
	return xasprintf("%s %lld/%lld%s%s", quote_str(jsonget_str(c,
	    "outcome")), (long long)json_integer_value(json_object_get(c,
	    "completed")), (long long)json_integer_value(json_object_get(c,
	    "total")), json_is_string(json_object_get(c, "status")) ? " " : "",
	    quote_str(jsonget_str(c, "status")));
}

static void
print_cells(const json_t *cells, long long id)
{
	const json_t *c, *d;
	char *what, *label, *more = xasprintf(MORE " %lld", id);
	struct buf item = BUF_INIT;
	struct output_list l;
	size_t i, j;
	int *done = xcalloc(json_array_size(cells) + 1, sizeof(*done));

	json_array_foreach((json_t *)cells, i, c) {
		/* a regressed series says which metric, and by how much */
		if (json_is_string(json_object_get(c, "metric"))) {
			output_line(4, "    %s %s c=%lld: %s", quote_str(
			    jsonget_str(c, "model")), quote_str(jsonget_str(c,
			    "split")), (long long)json_integer_value(
			    json_object_get(c, "concurrency")), quote_msg(
			    jsonget_str(c, "detail")));
			continue;
		}
		if (done[i])
			continue;
		what = cell_outcome(c);
		label = xasprintf("    %s: ", what);
		output_list_init(&l, label, NULL, CELL_LINES);
		l.indent = 8;
		buf_reset(&item);
		json_array_foreach((json_t *)cells, j, d) {
			char *w;

			if (j < i || done[j] || json_is_string(json_object_get(d,
			    "metric")))
				continue;
			w = cell_outcome(d);
			if (strcmp(w, what) == 0) {
				/* "qwen3-0.6b chat c=1,8,16": a model and
				 * split's levels together */
				char *ms = xasprintf("%s %s c=", quote_str(
				    jsonget_str(d, "model")), quote_str(
				    jsonget_str(d, "split")));

				done[j] = 1;
				if (item.len > 0 && (item.len < strlen(ms) ||
				    strncmp(buf_cstr(&item), ms,
				    strlen(ms)) != 0)) {
					output_list_add(&l, "%s",
					    buf_cstr(&item));
					buf_reset(&item);
				}
				buf_printf(&item, "%s%lld", item.len > 0 ? "," :
				    ms, (long long)json_integer_value(
				    json_object_get(d, "concurrency")));
				free(ms);
			}
			free(w);
		}
		if (item.len > 0)
			output_list_add(&l, "%s", buf_cstr(&item));
		output_list_print(&l, NULL, more);
		free(label);
		free(what);
	}
	buf_free(&item);
	free(done);
	free(more);
}

static void
print_engine(const char *engine, const json_t *e, long long id)
{
	output_line(4, "  %s: healthy in %s (manifest %lld), broken in %s "
	    "(manifest %lld); %lld change%s; %s in %lld smoke run%s (one "
	    "culprit: at most %lld)", quote_str(engine),
	    quote_str(jsonget_str(e, "good_cycle")),
	    (long long)json_integer_value(json_object_get(e, "good_manifest")),
	    quote_str(jsonget_str(e, "cycle")),
	    (long long)json_integer_value(json_object_get(e, "bad_manifest")),
	    (long long)json_integer_value(json_object_get(e, "changes")),
	    json_integer_value(json_object_get(e, "changes")) == 1 ? "" : "s",
	    quote_str(jsonget_str(e, "search")),
	    (long long)json_integer_value(json_object_get(e, "runs")),
	    json_integer_value(json_object_get(e, "runs")) == 1 ? "" : "s",
	    (long long)json_integer_value(json_object_get(e, "bound")));
	print_cells(json_object_get(e, "failing_cells"), id);
	if (json_array_size(json_object_get(e, "environment")) > 0) {
		struct buf env = BUF_INIT;

		environment_text(&env, json_object_get(e, "environment"));
		output_line(4, "    also changed, which no smoke run can test: %s",
		    quote_msg(buf_cstr(&env)));
		buf_free(&env);
	}
}

/* A commit that broke an engine: what it changed, the review it came
 * in by. */
static void
print_commit(const json_t *x)
{
	struct output_list l;
	json_t *p;
	size_t i;

	output_line(10, "culprit:  commit %s \"%s\"", quote_str(jsonget_str(x,
	    "commit")), quote_msg(jsonget_str(x, "summary")));
	if (json_integer_value(json_object_get(x, "review")) > 0)
		printf("          came in by review %lld (warden review show "
		    "%lld)\n", (long long)json_integer_value(json_object_get(x,
		    "review")), (long long)json_integer_value(json_object_get(x,
		    "review")));
	else
		printf("          came in without a review\n");
	output_list_init(&l, "          changed: ", NULL, 0);
	json_array_foreach(json_object_get(x, "paths"), i, p)
		output_list_add(&l, "%s", quote_str(json_string_value(p)));
	output_list_print(&l, NULL, NULL);
}

/* A smoke run: what was pinned and its outcome, the detail's first line
 * (the log tail after it counted, whole in the record). */
static void
print_smoke(const json_t *x, long long id)
{
	const char *detail = jsonget_str(x, "detail"), *nl;
	struct buf pins = BUF_INIT;
	size_t rest = 0;
	char *first;

	add_pins(&pins, json_object_get(x, "pins"));
	nl = strchr(detail, '\n');
	first = xstrndup(detail, nl != NULL ? (size_t)(nl - detail) :
	    strlen(detail));
	for (; nl != NULL && nl[1] != '\0'; nl = strchr(nl + 1, '\n'))
		rest++;
	output_line(4, "  %lld %s %s pinned %s: %s%s%s", (long long)
	    json_integer_value(json_object_get(x, "id")), quote_str(
	    jsonget_str(x, "engine")), quote_str(jsonget_str(x, "purpose")),
	    buf_cstr(&pins), quote_str(jsonget_str(x, "outcome")),
	    first[0] != '\0' ? ": " : "", quote_msg(first));
	if (rest > 0)
		printf("    and %zu more line%s: " MORE " %lld\n", rest,
		    rest == 1 ? "" : "s", id);
	free(first);
	buf_free(&pins);
}

static void
print_show(const json_t *o)
{
	const json_t *rec = json_object_get(o, "record"), *x, *e;
	long long id = json_integer_value(json_object_get(o, "id"));
	struct output_list l;
	const char *engine;
	size_t i;

	printf("incident %lld: %s\n", id, quote_str(jsonget_str(o, "state")));
	printf("kind:     %s\n", quote_str(jsonget_str(o, "kind")));
	output_line(10, "summary:  %s", quote_msg(jsonget_str(o, "summary")));
	output_line(10, "opened:   %s in cycle %s; last seen in %s",
	    quote_str(jsonget_str(o, "opened")), quote_str(jsonget_str(o,
	    "cycle")), quote_str(jsonget_str(o, "last_cycle")));
	json_array_foreach(json_object_get(rec, "culprits"), i, x)
		if (json_is_string(json_object_get(x, "commit")))
			print_commit(x);
		else
			output_line(10, "culprit:  %s %s \u2192 %s",
			    quote_str(jsonget_str(x, "package")),
			    json_is_string(json_object_get(x, "from")) ?
			    quote_str(jsonget_str(x, "from")) : "(none)",
			    json_is_string(json_object_get(x, "to")) ?
			    quote_str(jsonget_str(x, "to")) : "(removed)");
	output_list_init(&l, "engines:  ", " ", 0);
	json_array_foreach(json_object_get(rec, "engines"), i, x)
		output_list_add(&l, "%s", quote_str(json_string_value(x)));
	output_list_print(&l, NULL, NULL);
	output_list_init(&l, "healthy with the same release: ", " ", 0);
	l.indent = 10;
	json_array_foreach(json_object_get(rec, "healthy_with"), i, x)
		output_list_add(&l, "%s", quote_str(json_string_value(x)));
	output_list_print(&l, "none", NULL);
	json_object_foreach(json_object_get(rec, "per_engine"), engine, e)
		print_engine(engine, e, id);
	json_array_foreach(json_object_get(rec, "proposals"), i, x) {
		char *r = json_is_integer(json_object_get(x, "review")) ?
		    xasprintf("review %lld", (long long)json_integer_value(
		    json_object_get(x, "review"))) : xstrdup("not queued");

		output_line(10, "proposal: %s: %s", quote_msg(jsonget_str(x,
		    "note")), r);
		free(r);
	}
	if ((x = json_object_get(rec, "lift")) != NULL &&
	    json_is_string(json_object_get(x, "state")))
		output_line(10, "lift:     %s %s (%s)", quote_str(jsonget_str(x,
		    "version")), quote_str(jsonget_str(x, "state")),
		    json_is_integer(json_object_get(x, "review")) ?
		    "review queued" : "no review");
	printf("smoke runs:\n");
	json_array_foreach(json_object_get(o, "smoke"), i, x)
		print_smoke(x, id);
	printf("transitions:\n");
	json_array_foreach(json_object_get(o, "transitions"), i, x)
		output_line(4, "  %s %s \u2192 %s by %s: %s", quote_str(
		    jsonget_str(x, "time")), json_is_string(json_object_get(x,
		    "from")) ? quote_str(jsonget_str(x, "from")) : "(new)",
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
