/*
 * cmd-review.c - `warden review list|show|smoke|approve|reject`: the
 * human side of the review queue. Smoke measures the change and attaches
 * the table as evidence; approval re-runs the gate against the current
 * official tip and moves the official branch; rejection only records.
 * Everything is journaled by the review module.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "cmd.h"
#include "jsonget.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "review.h"
#include "review-smoke.h"
#include "util.h"

extern const struct cmd_entry cmd_review_entry;

static struct werr *
review_list_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "status", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *status = NULL;
	struct store *store;
	json_t *rows = NULL, *row;
	struct werr *err = NULL;
	size_t i;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while (cmd_getopt(ctx, &cmd_review_entry, argc, argv, opts, &err) != -1)
		status = optarg;
	if (err != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_review_entry,
		    "review list takes no arguments");
	if (status != NULL && strcmp(status, "pending") != 0 &&
	    strcmp(status, "approved") != 0 && strcmp(status, "rejected") != 0)
		return cmd_usage_error(&cmd_review_entry,
		    "'--status' takes pending, approved or rejected, not '%s'",
		    status);
	if ((err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = review_list(&rows, store, status)) != NULL)
		return err;
	if (ctx->json)
		output_json(rows);
	else if (json_array_size(rows) == 0)
		cmd_list_empty(ctx, "%s%sreviews", status != NULL ? status : "",
		    status != NULL ? " " : "");
	else
		json_array_foreach(rows, i, row) {
			/* author and note, past the line, go under the row,
			 * wrapped (a triage note names engines) */
			char *label = xasprintf("%-5lld %-9s %-10s %-24s ",
			    (long long)json_integer_value(json_object_get(row,
			    "id")), quote_str(jsonget_str(row, "status")),
			    quote_str(jsonget_str(row, "source")),
			    quote_str(jsonget_str(row, "created")));
			struct output_list l;

			output_list_init(&l, label, NULL, 0);
			l.indent = 6;
			output_list_add(&l, "%s %s", quote_str(jsonget_str(row,
			    "author")), quote_str(jsonget_str(row, "note")));
			output_list_print(&l, NULL, NULL);
			free(label);
		}
	json_decref(rows);
	return NULL;
}

/* One piece of evidence, readable: a smoke campaign before and after the
 * change, triage's confirming smoke runs, an agent run; anything else
 * as its JSON on one line. */
static void
print_evidence(const json_t *x)
{
	const char *kind = jsonget_str(x, "kind");
	const json_t *b = json_object_get(x, "body"), *r, *p;
	const char *k;
	size_t i;
	char *text;

	printf("evidence %s %s", quote_str(jsonget_str(x, "time")),
	    quote_str(kind));
	if (strcmp(kind, "smoke") == 0 && json_is_object(b)) {
		printf(": %s", cmd_smoke_verdict(b));
		if (json_is_string(json_object_get(b, "base")))
			printf(" (against %.12s)", quote_str(jsonget_str(b,
			    "base")));
		printf("\n");
		cmd_print_smoke_table(b, "  ");
		json_array_foreach(json_object_get(b, "quarantined"), i, r)
			printf("  quarantined: %s\n", quote_msg(
			    json_string_value(r)));
		return;
	}
	if (strcmp(kind, "triage-smoke") == 0 && json_is_object(b)) {
		printf(": incident %lld;", (long long)jsonget_int(b,
		    "incident"));
		json_array_foreach(json_object_get(b, "culprits"), i, r)
			if (json_is_string(json_object_get(r, "commit")))
				printf(" culprit commit %.7s",
				    quote_str(jsonget_str(r, "commit")));
			else
				printf(" culprit %s %s", quote_str(jsonget_str(r,
				    "package")), quote_str(jsonget_str(r,
				    "from")));
		printf("\n");
		json_array_foreach(json_object_get(b, "smoke"), i, r) {
			printf("  smoke %lld %s %s", (long long)jsonget_int(r,
			    "id"), quote_str(jsonget_str(r, "engine")),
			    quote_str(jsonget_str(r, "purpose")));
			if (json_object_size(json_object_get(r, "pins")) > 0)
				printf(" pinned");
			json_object_foreach(json_object_get(r, "pins"), k, p)
				printf(" %s=%s", quote_str(k), json_is_string(p) ?
				    quote_str(json_string_value(p)) :
				    "unpinned");
			printf(": %s\n", quote_str(jsonget_str(r, "outcome")));
		}
		cmd_print_smoke_speed(b, "  ");
		return;
	}
	if (strcmp(kind, "expects") == 0 && json_is_object(b)) {
		printf(": its %s attaches %s evidence before it can be "
		    "approved\n", quote_str(jsonget_str(b, "by")),
		    quote_str(jsonget_str(b, "kind")));
		return;
	}
	if (strcmp(kind, "agent-run") == 0 && json_is_object(b)) {
		printf(": agent run %lld, log %s ('warden agent show %lld')\n",
		    (long long)jsonget_int(b, "agent_run"),
		    quote_str(jsonget_str(b, "log")),
		    (long long)jsonget_int(b, "agent_run"));
		cmd_print_agent_transcript(json_object_get(b, "transcript"),
		    "  ");
		return;
	}
	text = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
	printf(": %s\n", quote_msg(text ? text : "null"));
	free(text);
}

static void
print_show(json_t *o)
{
	json_t *gate = json_object_get(o, "gate"), *x;
	size_t i;

	printf("review %lld: %s\n", (long long)json_integer_value(
	    json_object_get(o, "id")), quote_str(jsonget_str(o, "status")));
	printf("source:  %s\n", quote_str(jsonget_str(o, "source")));
	printf("author:  %s\n", quote_str(jsonget_str(o, "author")));
	printf("created: %s\n", quote_str(jsonget_str(o, "created")));
	printf("note:    %s\n", quote_str(jsonget_str(o, "note")));
	printf("base:    %s\n", quote_str(jsonget_str(o, "base_commit")));
	printf("commit:  %s\n", quote_str(jsonget_str(o, "commit_id")));
	if (json_is_string(json_object_get(o, "decided")))
		printf("decided: %s by %s: %s\n",
		    quote_str(jsonget_str(o, "decided")),
		    quote_str(jsonget_str(o, "decided_by")),
		    quote_str(jsonget_str(o, "comment")));
	if (json_is_string(json_object_get(o, "merged_commit")))
		printf("merged:  %s\n",
		    quote_str(jsonget_str(o, "merged_commit")));
	printf("\ngate: %s\n", json_is_true(json_object_get(gate, "ok")) ?
	    "clean" : "refused");
	json_array_foreach(json_object_get(gate, "files"), i, x)
		printf(" %s %s +%lld -%lld\n",
		    quote_str(jsonget_str(x, "status")),
		    quote_str(json_is_string(json_object_get(x, "new_path")) ?
		    jsonget_str(x, "new_path") : jsonget_str(x, "old_path")),
		    (long long)json_integer_value(json_object_get(x, "added")),
		    (long long)json_integer_value(json_object_get(x,
		    "deleted")));
	json_array_foreach(json_object_get(gate, "violations"), i, x)
		printf(" %s %s: %s\n", quote_str(jsonget_str(x, "code")),
		    quote_str(jsonget_str(x, "path")),
		    quote_msg(jsonget_str(x, "reason")));
	json_array_foreach(json_object_get(o, "evidence"), i, x)
		print_evidence(x);
	putchar('\n');
	quote_print_lines(stdout, "    ", jsonget_str(o, "patch"));
}

static struct werr *
review_show_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	json_t *o;
	int64_t id;

	if ((err = cmd_no_options(ctx, &cmd_review_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_review_entry,
		    "review show needs one review number");
	if ((err = cmd_parse_id(&cmd_review_entry, argv[optind],
	    "a review number", &id)) != NULL ||
	    (err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = review_show(&o, store, id)) != NULL)
		return err;
	if (ctx->json)
		output_json(o);
	else
		print_show(o);
	json_decref(o);
	return NULL;
}

static struct werr *
open_repo(struct cmd_ctx *ctx, git_repository **repo, const char **branch)
{
	struct policy *policy;
	const char *root;
	struct werr *err;

	/* The trusted policy names the official branch, never the working
	 * tree's. */
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL ||
	    (err = cmd_ctx_trusted_policy(ctx, &policy)) != NULL)
		return err;
	*branch = policy->official_branch;
	if (git_repository_open(repo, root) < 0)
		return werr_git("cannot open '%s'", root);
	return NULL;
}

static struct werr *
review_approve_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "as", required_argument, NULL, 'a' },
		{ "comment", required_argument, NULL, 'c' },
		{ "without-evidence", no_argument, NULL, 'w' },
		{ "accept-regression", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	const char *as = NULL, *comment = NULL, *branch;
	unsigned flags = 0;
	struct allowlist_report r;
	git_repository *repo = NULL;
	struct store *store;
	char commit[GIT_OID_HEXSZ + 1];
	struct werr *err = NULL;
	int64_t id;
	int ch;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_review_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'a')
			as = optarg;
		else if (ch == 'c')
			comment = optarg;
		else if (ch == 'w')
			flags |= REVIEW_WITHOUT_EVIDENCE;
		else if (ch == 'R')
			flags |= REVIEW_ACCEPT_REGRESSION;
	}
	if (err != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_review_entry,
		    "review approve needs one review number");
	if (as == NULL)
		return cmd_usage_error(&cmd_review_entry,
		    "review approve needs --as \"Name <email>\"");
	if ((err = cmd_parse_id(&cmd_review_entry, argv[optind],
	    "a review number", &id)) != NULL)
		return err;
	allowlist_report_init(&r);
	if ((err = open_repo(ctx, &repo, &branch)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL)
		goto out;
	err = review_approve(commit, &r, store, repo, branch, id, as, comment,
	    flags);
	if (err != NULL && r.nv > 0) {
		struct buf v = BUF_INIT;

		review_format_violations(&v, &r);
		fputs(buf_cstr(&v), stdout);
		buf_free(&v);
	}
	if (err != NULL)
		goto out;
	if (ctx->json) {
		json_t *o = json_pack("{s:I, s:s, s:s, s:s}", "review",
		    (json_int_t)id, "status", "approved", "branch", branch,
		    "commit", commit);

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0)
		printf("approved review %lld: %s is now %.12s\n",
		    (long long)id, branch, commit);
out:
	allowlist_report_free(&r);
	git_repository_free(repo);
	return err;
}

void
cmd_smoke_progress(void *arg, const char *what)
{
	const struct cmd_ctx *ctx = arg;

	if (ctx->verbosity >= 0)
		output_progress(1, "%s", what);
}

static struct werr *
review_smoke_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	git_repository *repo = NULL;
	struct store *store;
	const char *branch, *root;
	struct werr *err;
	json_t *o = NULL;
	int64_t id;

	if ((err = cmd_no_options(ctx, &cmd_review_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_review_entry,
		    "review smoke needs one review number");
	if ((err = cmd_parse_id(&cmd_review_entry, argv[optind],
	    "a review number", &id)) != NULL)
		return err;
	if ((err = open_repo(ctx, &repo, &branch)) != NULL ||
	    (err = cmd_ctx_repo(ctx, &root)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = review_smoke_review(&o, store, repo, root, branch, id,
	    cmd_smoke_progress, ctx)) != NULL)
		goto out;
	if (ctx->json)
		output_json(o);
	else {
		printf("review %lld: %s\n", (long long)id,
		    cmd_smoke_verdict(o));
		cmd_print_smoke_table(o, "  ");
		if (json_object_get(o, "quarantined") != NULL)
			printf("review %lld was rejected: its smoke campaign "
			    "changed the repository ('warden review show "
			    "%lld' says what)\n", (long long)id, (long long)id);
		else
			printf("attached to review %lld as evidence\n",
			    (long long)id);
	}
	if (!json_is_true(json_object_get(o, "passed")))
		err = werr_new(WEXIT_PROBLEM, "review %lld: %s", (long long)id,
		    cmd_smoke_verdict(o));
out:
	json_decref(o);
	git_repository_free(repo);
	return err;
}

static struct werr *
review_reject_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reason", required_argument, NULL, 'r' },
		{ "as", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *reason = NULL, *as = NULL;
	struct store *store;
	struct werr *err = NULL;
	int64_t id;
	int ch;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_review_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'r')
			reason = optarg;
		else if (ch == 'a')
			as = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc - 1 || reason == NULL || *reason == '\0')
		return cmd_usage_error(&cmd_review_entry,
		    "review reject needs one review number and --reason TEXT");
	if ((err = cmd_parse_id(&cmd_review_entry, argv[optind],
	    "a review number", &id)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = review_reject(store, id, reason, as)) != NULL)
		return err;
	if (ctx->json) {
		json_t *o = json_pack("{s:I, s:s}", "review", (json_int_t)id,
		    "status", "rejected");

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0)
		printf("rejected review %lld\n", (long long)id);
	return NULL;
}

static struct werr *
review_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_review_entry,
		    "review needs a subcommand");
	if (strcmp(argv[1], "list") == 0)
		return review_list_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return review_show_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "smoke") == 0)
		return review_smoke_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "approve") == 0)
		return review_approve_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "reject") == 0)
		return review_reject_cmd(ctx, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_review_entry,
	    "unknown review subcommand '%s'", argv[1]);
}

const struct cmd_entry cmd_review_entry = {
	"review",
	"list [--status pending|approved|rejected]\n"
	"show N\n"
	"smoke N\n"
	"approve N --as \"Name <email>\" [--comment TEXT] [--without-evidence] [--accept-regression]\n"
	"reject N --reason TEXT [--as \"Name <email>\"]",
	"list, inspect, smoke-test, approve or reject queued changes",
	"list     queued changes, oldest first\n"
	"show     one change: its gate result, diffstat, evidence (smoke\n"
	"         campaigns as a before/after table) and patch\n"
	"smoke    run the engines the change touches for a few prompts from\n"
	"         the official tip (before) and with the change (after),\n"
	"         interleaved, in the sandbox; compare their speed and memory\n"
	"         with the regressions policy's rule and attach the table as\n"
	"         evidence; exit 1 when the change does not pass after or\n"
	"         regresses\n"
	"approve  re-run the gate against the current official tip and, when\n"
	"         clean, commit the change there with a Reviewed-by trailer;\n"
	"         a change that no longer applies stays pending; a change to\n"
	"         an engine without smoke evidence of it (review smoke, the\n"
	"         agent's, triage's) stays pending unless --without-evidence\n"
	"         (the journal records what was missing); a change its smoke\n"
	"         measured as a regression stays pending unless\n"
	"         --accept-regression (the journal records what was accepted)\n"
	"reject   record the rejection and its reason\n"
	"-q: approve and reject print nothing on success.\n"
	"--json: list and show print the rows; smoke the evidence {engines,\n"
	"passed, regressed, before, after, speed, base}; approve {review, status, branch,\n"
	"commit}; reject {review, status}.\n"
	"Examples:\n"
	"  warden review smoke 2\n"
	"  warden review show 2\n"
	"  warden review approve 2 --as \"Demo Maintainer <maintainer@localhost>\"\n",
	review_exec,
};
