/*
 * cmd-status.c - `warden status`: where the current or last cycle
 * stands (its step, the cell under way, an ETA), read through a
 * read-only connection to the store, so it works while a cycle runs and
 * never waits for its writer lock. The reading is in runner/cycle/.
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
#include "store.h"
#include "util.h"

/* "0.4 s", "3 min 5 s", "2 h 7 min"; "-" for null. */
static const char *
span(const json_t *v, char *out, size_t n)
{
	double d = json_number_value(v);
	long long t = (long long)(d + 0.5);

	if (!json_is_number(v))
		snprintf(out, n, "-");
	else if (d < 60)
		snprintf(out, n, "%.1f s", d);
	else if (t < 3600)
		snprintf(out, n, "%lld min %lld s", t / 60, t % 60);
	else
		snprintf(out, n, "%lld h %lld min", t / 3600, t % 3600 / 60);
	return out;
}

/* The summary, three lines: cells by status, the snapshot published,
 * what waits (reviews pending, incidents open). */
static void
print_summary(const json_t *sum)
{
	const json_t *cells = json_object_get(sum, "cells"), *v;
	const json_t *open = json_object_get(sum, "incidents_open");
	json_int_t n = 0, waiting = jsonget_int(sum, "reviews_waiting");
	const char *key, **keys;
	size_t i, nkeys;

	struct output_list l;
	char label[64];

	json_object_foreach((json_t *)cells, key, v)
		n += json_integer_value(v);
	snprintf(label, sizeof(label), "cells:    %lld: ", (long long)n);
	output_list_init(&l, n == 0 ? "cells:    " : label, NULL, 0);
	keys = cycle_statuses_ordered(cells, &nkeys);
	for (i = 0; i < nkeys && n > 0; i++)
		output_list_add(&l, "%lld %s", (long long)jsonget_int(cells,
		    keys[i]), quote_str(keys[i]));
	free(keys);
	output_list_print(&l, "none judged yet", NULL);
	printf("snapshot: %s\n", json_is_string(json_object_get(sum,
	    "published")) ? quote_str(jsonget_str(sum, "published")) :
	    "none published");
	snprintf(label, sizeof(label), "waiting:  %lld review%s; %zu "
	    "incident%s open", (long long)waiting, waiting == 1 ? "" : "s",
	    json_array_size(open), json_array_size(open) == 1 ? "" : "s");
	if (json_array_size(open) > 0)
		strcat(label, ": ");
	output_list_init(&l, label, NULL, 3);
	json_array_foreach((json_t *)open, i, v)
		output_list_add(&l, "#%lld", (long long)json_integer_value(v));
	output_list_print(&l, NULL, "warden incident list");
}

/* One line of status: label and text, wrapped under the text. */
static void
print_line(const char *label, const char *text)
{
	struct output_list l;

	output_list_init(&l, label, NULL, 0);
	output_list_add(&l, "%s", text);
	output_list_print(&l, NULL, NULL);
}

static void
print_status(const json_t *s)
{
	char d[40];
	const json_t *eta = json_object_get(s, "eta_s"), *r;
	size_t i, wstep = 0, wstate = 0;

	printf("cycle %s (roster %s): %s, round %lld", quote_str(jsonget_str(s,
	    "cycle")), quote_str(jsonget_str(s, "roster")),
	    quote_str(jsonget_str(s, "state")),
	    (long long)json_integer_value(json_object_get(s, "round")));
	if (json_is_integer(json_object_get(s, "pid")))
		printf(", pid %lld", (long long)json_integer_value(
		    json_object_get(s, "pid")));
	printf("\nstarted:  %s\n", quote_str(jsonget_str(s, "started")));
	if (json_is_string(json_object_get(s, "finished")))
		printf("finished: %s, exit %lld, took %s\n",
		    quote_str(jsonget_str(s, "finished")),
		    (long long)json_integer_value(json_object_get(s, "exit")),
		    span(json_object_get(json_object_get(s, "summary"),
		    "duration_s"), d, sizeof(d)));
	print_summary(json_object_get(s, "summary"));
	if (json_is_string(json_object_get(s, "step"))) {
		char *t = xasprintf("%s%s%s", quote_str(jsonget_str(s, "step")),
		    json_is_string(json_object_get(s, "what")) ? ": " : "",
		    quote_str(jsonget_str(s, "what")));

		print_line("step:     ", t);
		free(t);
	}
	if (json_is_number(eta)) {
		char span[48];

		isotime_estimate(span, sizeof(span), json_number_value(eta));
		printf("eta:      %s\n", span);
	} else if (strcmp(jsonget_str(s, "state"), "running") == 0)
		printf("eta:      unknown (no earlier cycle to go by yet)\n");
	if (json_is_string(json_object_get(s, "unrecorded")))
		print_line("official: ", quote_str(jsonget_str(s,
		    "unrecorded")));
	if (json_is_string(json_object_get(s, "blocked")))
		print_line("blocked:  ", quote_str(jsonget_str(s, "blocked")));
	else if (strcmp(jsonget_str(s, "state"), "interrupted") == 0)
		printf("          continue it with 'warden cycle --resume'\n");
	if (strcmp(jsonget_str(s, "state"), "waiting") == 0)
		printf("          waiting for review: 'warden review list', then "
		    "'warden cycle'\n");
	/* The steps as a table: each column as wide as its widest value. */
	json_array_foreach(json_object_get(s, "steps"), i, r) {
		if (strlen(quote_str(jsonget_str(r, "step"))) > wstep)
			wstep = strlen(quote_str(jsonget_str(r, "step")));
		if (strlen(quote_str(jsonget_str(r, "state"))) > wstate)
			wstate = strlen(quote_str(jsonget_str(r, "state")));
	}
	json_array_foreach(json_object_get(s, "steps"), i, r)
		printf("  round %lld  %-*s  %-*s  %12s  from %.8s\n",
		    (long long)jsonget_int(r, "round"), (int)wstep,
		    quote_str(jsonget_str(r, "step")), (int)wstate,
		    quote_str(jsonget_str(r, "state")),
		    span(json_object_get(r, "duration_s"), d, sizeof(d)),
		    quote_str(jsonget_str(r, "started")) + 11);
}

static struct werr *
status_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store = NULL;
	const char *root;
	json_t *s = NULL;
	struct werr *err;
	char *db;

	if ((err = cmd_no_options(ctx, &cmd_status_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_status_entry, "'status' takes no "
		    "arguments");
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	db = path_join(root, ".warden/warden.db");
	if (path_exists(db) &&
	    (err = store_open_path(&store, db, ctx->cmdline)) == NULL)
		err = cycle_status(&s, store, root);
	free(db);
	store_close(store);
	if (err != NULL)
		return err;
	if (ctx->json)
		output_json(s != NULL ? s : json_null());
	else if (s == NULL)
		printf("no cycle has run in this repository ('warden cycle' "
		    "starts one)\n");
	else
		print_status(s);
	json_decref(s);
	return NULL;
}

const struct cmd_entry cmd_status_entry = {
	"status",
	"[--json]",
	"where the current or last cycle stands",
	"Prints the current or last cycle: running (with its pid),\n"
	"interrupted, waiting for review, or done; the step under way and,\n"
	"in the campaign and fidelity steps, the cell and its progress; an\n"
	"ETA from the cell times so far and the previous cycle's step times;\n"
	"a summary (cells by status, the snapshot published, reviews\n"
	"waiting, incidents open, how long the cycle took); and every step\n"
	"with its state, duration and start time. It reads the store through\n"
	"a read-only connection and never takes the writer lock, so it\n"
	"answers while a cycle runs.\n"
	"  --json   print it as JSON (null when no cycle has run)\n"
	"Examples:\n"
	"  warden status\n"
	"  warden --json status\n",
	status_exec,
};
