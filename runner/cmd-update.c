/*
 * cmd-update.c - `warden update [ENGINE...] [--dry-run] [--retry-failed]`: bring engines to
 * the newest versions their adapters and the policy allow (runner/update),
 * show progress, and print old -> new for everything that moved in each
 * engine's closure. Exit 1 when an engine's update failed.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "spawn.h"
#include "update.h"
#include "util.h"

static void
show_progress(void *arg, size_t k, size_t n, const char *engine,
    const char *phase)
{
	int final = strcmp(phase, "done") == 0;

	(void)arg;
	if (final)
		output_progress(1, "update %zu/%zu %s: %s", k, n, engine, phase);
	else
		output_progress_live("update %zu/%zu %s: %s", k, n, engine,
		    phase);
}

/* A version string (from a package index: untrusted), quoted. */
static const char *
or_none(const json_t *v)
{
	return json_is_string(v) ? quote_str(json_string_value(v)) : "(none)";
}

/* "  name old → new" for each change. */
static void
print_changes(const json_t *changes, const char *indent)
{
	const char *key;
	json_t *c;

	json_object_foreach((json_t *)changes, key, c)
		printf("%s%s %s \u2192 %s\n", indent, quote_str(key),
		    or_none(json_object_get(c, "old")),
		    or_none(json_object_get(c, "new")));
}

static json_t *
report_json(const struct update_report *r, int dry_run)
{
	json_t *arr = json_array(), *joined = json_array(), *o;
	size_t i;

	for (i = 0; i < r->n; i++) {
		o = json_pack("{s:s, s:s, s:s?, s:O, s:O, s:s?}",
		    "engine", r->v[i].engine, "outcome", r->v[i].outcome,
		    "detail", r->v[i].detail, "changes", r->v[i].changes,
		    "held", r->v[i].held, "log", r->v[i].log_path);
		json_object_set_new(o, "manifest_id", r->v[i].manifest_id ?
		    json_integer(r->v[i].manifest_id) : json_null());
		json_array_append_new(arr, o);
	}
	for (i = 0; i < r->n_joined; i++)
		json_array_append_new(joined, json_pack("{s:s, s:s, s:s, s:s}",
		    "engine", r->joined[i].engine, "group", r->joined[i].group,
		    "package", r->joined[i].package, "held_by",
		    r->joined[i].held_by));
	return json_pack("{s:b, s:i, s:o, s:o}", "dry_run", dry_run, "failed",
	    r->failed, "joined", joined, "engines", arr);
}

/* A failure's reason on one line, and the log tail that may follow it
 * as a block of indented lines, each quoted (a build's output). */
static void
print_detail(const char *detail)
{
	const char *nl = strchr(detail, '\n');
	char *first = xstrndup(detail, nl ? (size_t)(nl - detail) :
	    strlen(detail));

	printf("  %s\n", quote_msg(first));
	free(first);
	if (nl != NULL && nl[1] != '\0')
		quote_print_lines(stdout, "    ", nl + 1);
}

static void
print_report(const struct update_report *r)
{
	const char *key;
	json_t *v;
	size_t i;

	for (i = 0; i < r->n_joined; i++)
		printf("%s joins: policy group '%s' (%s, held by %s)\n",
		    r->joined[i].engine, r->joined[i].group,
		    r->joined[i].package, r->joined[i].held_by);
	for (i = 0; i < r->n; i++) {
		const struct update_engine_result *e = &r->v[i];

		printf("%s: %s", e->engine, e->outcome);
		if (e->manifest_id != 0)
			printf(" (manifest %lld)", (long long)e->manifest_id);
		printf("\n");
		print_changes(e->changes, "  ");
		json_object_foreach(e->held, key, v)
			printf("  held: %s: %s\n", quote_str(key),
			    quote_str(json_string_value(v)));
		if (e->detail != NULL) {
			print_detail(e->detail);
			printf("  log: %s\n",
			    e->log_path ? quote_str(e->log_path) : "-");
		}
	}
}

static struct werr *
update_exec_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "retry-failed", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct update_report rep;
	struct update_ctx uc;
	struct store *store;
	struct werr *err = NULL;
	struct policy *pol;
	json_t *doc;
	int ch;

	memset(&uc, 0, sizeof(uc));
	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_update_entry, argc, argv, opts,
	    &err)) != -1)
		if (ch == 'n')
			uc.dry_run = 1;
		else if (ch == 'r')
			uc.retry_failed = 1;
	if (err != NULL)
		return err;
	if ((err = cmd_ctx_repo(ctx, &uc.repo_root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, &pol)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	uc.policy = pol;
	uc.on_progress = ctx->verbosity >= 0 ? show_progress : NULL;
	if (ctx->verbosity >= 0) {
		/* a build or install of many minutes says it is alive */
		output_progress_interval(pol->campaign.progress_interval_s);
		spawn_set_wait_hook(output_progress_tick);
	}
	err = update_run(&rep, &uc, store, argc > optind ?
	    (const char *const *)argv + optind : NULL);
	spawn_set_wait_hook(NULL);
	output_progress_end();
	if (err != NULL) {
		update_report_free(&rep);
		return err;
	}
	if (ctx->json) {
		doc = report_json(&rep, uc.dry_run);
		output_json(doc);
		json_decref(doc);
	} else
		print_report(&rep);
	if (rep.failed > 0)
		err = werr_new(WEXIT_PROBLEM, "%d engine%s failed to update",
		    rep.failed, rep.failed == 1 ? "" : "s");
	update_report_free(&rep);
	return err;
}

const struct cmd_entry cmd_update_entry = {
	"update",
	"[ENGINE...] [--dry-run] [--retry-failed] [--json]",
	"bring engines to their newest allowed versions and record manifests",
	"Updates each ENGINE (default: every engine of the default roster):\n"
	"git sources through libgit2 (newest matching tag in version order or\n"
	"the branch head, built incrementally in the work tree not in use; a\n"
	"commit that failed to build is not built again until a newer one),\n"
	"pip and brew sources through their shims, with the policy's pins,\n"
	"holds, groups and minimum release age. An engine of any roster whose\n"
	"manifest holds a package of a policy group that an engine of the run\n"
	"holds joins the run and is named (\"gb joins: policy group 'core'\n"
	"(shared, held by ga)\"), so a group moves in all its engines or in\n"
	"none. Makes each model present (fetch_model, unless its weights are\n"
	"on disk with the profile's sha256) and checks its sha256; records a\n"
	"version manifest of the whole closure per engine.\n"
	"Prints old -> new for every package that moved.\n"
	"  --dry-run   say what would change (pip --dry-run --report, fetched\n"
	"              tags); change no environment and record nothing\n"
	"  --retry-failed  build again a git commit that failed to build\n"
	"  --json      print the outcomes as JSON\n"
	"Exit 1 when an engine's update failed; it keeps its environment and\n"
	"manifest, and the failure is recorded. The engines whose venv moved a\n"
	"package of a policy group with the failed engine get theirs back\n"
	"(group_rolled_back).\n"
	"Examples:\n"
	"  warden update --dry-run\n"
	"  warden update sim-mlx-lm\n"
	"  warden update --retry-failed llama.cpp\n",
	update_exec_cmd,
};
