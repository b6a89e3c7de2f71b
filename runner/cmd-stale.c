/*
 * cmd-stale.c - `warden stale [ENGINE...]`: each engine's last upstream
 * activity against the policy's retirement_days. Reports only: exit 1
 * when an engine is stale, so a scheduled job can notice.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "update.h"
#include "util.h"

static void
show_progress(void *arg, size_t k, size_t n, const char *engine,
    const char *phase)
{
	(void)arg;
	(void)phase;
	if (output_is_tty())
		output_progress(0, "stale %zu/%zu %s", k, n, engine);
}

static struct werr *
stale_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct update_ctx uc;
	struct policy *pol;
	struct werr *err;
	json_t *rows = NULL, *r, *age;
	size_t i, stale = 0;

	memset(&uc, 0, sizeof(uc));
	if ((err = cmd_no_options(ctx, &cmd_stale_entry, argc, argv)) != NULL)
		return err;
	if ((err = cmd_ctx_repo(ctx, &uc.repo_root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, &pol)) != NULL)
		return err;
	uc.policy = pol;
	uc.on_progress = ctx->verbosity >= 0 ? show_progress : NULL;
	if ((err = update_stale(&rows, &uc, argc > optind ?
	    (const char *const *)argv + optind : NULL)) != NULL)
		return err;
	if (output_is_tty() && ctx->verbosity >= 0)
		output_progress(1, "stale: %zu engine%s checked",
		    json_array_size(rows), json_array_size(rows) == 1 ? "" : "s");
	json_array_foreach(rows, i, r)
		if (strcmp(json_string_value(json_object_get(r, "status")),
		    "stale") == 0)
			stale++;
	if (ctx->json)
		output_json(rows);
	else if (json_array_size(rows) > 0)
		printf("%-16s %-5s %-7s %s\n", "engine", "kind", "status",
		    "last upstream activity");
	if (!ctx->json)
		json_array_foreach(rows, i, r) {
			/* the last column wraps under itself within
			 * OUTPUT_WIDTH */
			struct output_list l;
			char *label = xasprintf("%-16s %-5s %-7s ",
			    quote_str(json_string_value(json_object_get(r,
			    "engine"))),
			    quote_str(json_string_value(json_object_get(r,
			    "kind"))),
			    quote_str(json_string_value(json_object_get(r,
			    "status"))));

			age = json_object_get(r, "age_days");
			output_list_init(&l, label, NULL, 0);
			if (json_is_number(age))
				output_list_add(&l, "%.0f days since %s (%s; "
				    "retire after %lld)", json_number_value(age),
				    quote_str(json_string_value(
				    json_object_get(r, "last_activity"))),
				    quote_str(json_string_value(
				    json_object_get(r, "what"))),
				    (long long)json_integer_value(json_object_get(r,
				    "retirement_days")));
			else
				output_list_add(&l, "%s",
				    quote_msg(json_string_value(
				    json_object_get(r, "detail"))));
			output_list_print(&l, NULL, NULL);
			free(label);
		}
	json_decref(rows);
	if (stale > 0)
		return werr_new(WEXIT_PROBLEM, "%zu engine%s without upstream "
		    "activity for more than %d days", stale, stale == 1 ? "" :
		    "s", pol->retirement_days);
	return NULL;
}

const struct cmd_entry cmd_stale_entry = {
	"stale",
	"[ENGINE...] [--json]",
	"report engines whose upstream has been quiet past retirement_days",
	"For each ENGINE (default: the default roster), the last upstream\n"
	"activity: the newest commit or tag date (git, after a fetch), the\n"
	"newest release date from the package index (pip, policy\n"
	"update.index.json_url); brew and none report 'unknown'. Compared with\n"
	"the policy's retirement_days. Reports only.\n"
	"  --json   print JSON\n"
	"Exit 1 when an engine is stale.\n"
	"Examples:\n"
	"  warden stale\n"
	"  warden --json stale llama.cpp\n",
	stale_exec,
};
