/*
 * cmd-patch.c - `warden patch check|submit`: gate a patch against the
 * official branch tip, and queue it for human review.
 *
 * Exit 0 clean, 1 violations, 2 malformed input. Neither subcommand
 * touches the working tree, the index or the official branch.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "cmd.h"
#include "output.h"
#include "policy.h"
#include "review.h"
#include "util.h"

extern const struct cmd_entry cmd_patch_entry;

static struct werr *
open_repo(struct cmd_ctx *ctx, git_repository **repo, const char **branch)
{
	struct policy *policy;
	const char *root;
	struct werr *err;

	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	/* The official branch and the gate's rules come from the trusted
	 * policy, never from the working tree. */
	if ((err = cmd_ctx_trusted_policy(ctx, &policy)) != NULL)
		return err;
	*branch = policy->official_branch;
	if (git_repository_open(repo, root) < 0)
		return werr_git("cannot open '%s'", root);
	return NULL;
}

/*
 * The patch to gate: INPUT (a file, or - for stdin), or with --worktree
 * the changes of that worktree against the base tree, read bounded
 * (allowlist_worktree_patch): what the reading refuses goes to r.
 */
static struct werr *
read_change(struct allowlist_report *r, struct buf *text, const char *input,
    const char *worktree, git_repository *repo, const struct review_base *b)
{
	const char *tmpdir = getenv("TMPDIR");
	char *scratch;
	struct werr *err;

	if (worktree == NULL)
		return review_read_input(text, input);
	/* The base tree's ignore rules are written there, then removed. */
	scratch = xasprintf("%s/warden-ignore.XXXXXX", tmpdir != NULL &&
	    *tmpdir == '/' ? tmpdir : "/tmp");
	if (mkdtemp(scratch) == NULL) {
		err = werr_errno("mkdtemp", scratch);
		free(scratch);
		return err;
	}
	err = allowlist_worktree_patch(r, text, repo, &b->tree, worktree,
	    scratch, &b->gate);
	free(scratch);
	return err;
}

/* Exit status of a gate result, with the summary as its message. */
static struct werr *
verdict(const struct allowlist_report *r, const char *what)
{
	int code = allowlist_report_exit(r);

	if (code == 0)
		return NULL;
	return werr_new(code, "%s: %zu violation%s%s", what, r->nv,
	    r->nv == 1 ? "" : "s", code == 2 ? " (malformed input)" : "");
}

static void
print_report(struct cmd_ctx *ctx, const struct allowlist_report *r,
    const struct review_base *b, json_t *extra)
{
	char tip[GIT_OID_HEXSZ + 1];
	struct buf out = BUF_INIT;

	git_oid_tostr(tip, sizeof(tip), &b->commit);
	if (ctx->json) {
		json_t *o = review_report_json(r);

		json_object_set_new(o, "base", json_string(b->rev));
		json_object_set_new(o, "base_commit", json_string(tip));
		if (extra != NULL)
			json_object_update(o, extra);
		output_json(o);
		json_decref(o);
		return;
	}
	review_format_violations(&out, r);
	fputs(buf_cstr(&out), stdout);
	if (ctx->verbosity > 0) {
		buf_reset(&out);
		review_format_files(&out, r);
		fputs(buf_cstr(&out), stderr);
	}
	buf_free(&out);
	if (ctx->verbosity >= 0)
		fprintf(stderr, "%zu file%s checked against %s (%.12s): %s\n",
		    r->nfiles, r->nfiles == 1 ? "" : "s", b->rev, tip,
		    r->nv == 0 ? "clean" : "refused");
}

static struct werr *
patch_check(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "base", required_argument, NULL, 'b' },
		{ "worktree", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct allowlist_report r;
	struct review_base b;
	struct buf text = BUF_INIT;
	git_repository *repo = NULL;
	const char *base = NULL, *worktree = NULL, *branch;
	char *ref = NULL;
	struct werr *err = NULL;
	int ch;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_patch_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'b')
			base = optarg;
		else if (ch == 'w')
			worktree = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc - (worktree ? 0 : 1))
		return cmd_usage_error(&cmd_patch_entry, "patch check needs "
		    "one INPUT (a file, or - for stdin) or --worktree DIR");
	allowlist_report_init(&r);
	memset(&b, 0, sizeof(b));
	if ((err = open_repo(ctx, &repo, &branch)) != NULL)
		goto out;
	ref = base ? xstrdup(base) : xasprintf("refs/heads/%s", branch);
	if ((err = review_base_open(&b, repo, ref)) != NULL ||
	    (err = read_change(&r, &text, argv[optind], worktree, repo,
	    &b)) != NULL)
		goto out;
	/* A worktree refused while read may hold no patch at all. */
	if ((r.nv == 0 || text.len > 0) &&
	    (err = review_check(&r, repo, &b, text.data, text.len)) != NULL)
		goto out;
	print_report(ctx, &r, &b, NULL);
	err = verdict(&r, "patch refused");
out:
	review_base_free(&b);
	allowlist_report_free(&r);
	git_repository_free(repo);
	buf_free(&text);
	free(ref);
	return err;
}

static int
valid_source(const char *s)
{
	return s != NULL && (strcmp(s, "agent") == 0 ||
	    strcmp(s, "community") == 0 || strcmp(s, "triage") == 0);
}

static struct werr *
patch_submit(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "source", required_argument, NULL, 's' },
		{ "author", required_argument, NULL, 'a' },
		{ "note", required_argument, NULL, 'n' },
		{ "worktree", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct review_submission sub;
	struct allowlist_report r;
	struct review_base b;
	struct buf text = BUF_INIT;
	git_repository *repo = NULL;
	struct store *store;
	const char *branch, *worktree = NULL;
	char *ref = NULL;
	struct werr *err = NULL;
	int64_t id = 0;
	int ch;

	memset(&sub, 0, sizeof(sub));
	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_patch_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 's')
			sub.source = optarg;
		else if (ch == 'a')
			sub.author = optarg;
		else if (ch == 'n')
			sub.note = optarg;
		else if (ch == 'w')
			worktree = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc - (worktree ? 0 : 1))
		return cmd_usage_error(&cmd_patch_entry, "patch submit needs "
		    "one INPUT (a file, or - for stdin) or --worktree DIR");
	if (!valid_source(sub.source))
		return cmd_usage_error(&cmd_patch_entry,
		    "--source must be agent, community or triage");
	allowlist_report_init(&r);
	memset(&b, 0, sizeof(b));
	if ((err = open_repo(ctx, &repo, &branch)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL)
		goto out;
	ref = xasprintf("refs/heads/%s", branch);
	if ((err = review_base_open(&b, repo, ref)) != NULL ||
	    (err = read_change(&r, &text, argv[optind], worktree, repo,
	    &b)) != NULL)
		goto out;
	if (r.nv > 0) {
		/* Refused while read: gated for the record, not queued. */
		if (text.len > 0 && (err = review_check(&r, repo, &b,
		    text.data, text.len)) != NULL)
			goto out;
		print_report(ctx, &r, &b, NULL);
		err = verdict(&r, "patch refused, not queued");
		goto out;
	}
	sub.patch = text.data;
	sub.len = text.len;
	if ((err = review_submit(&id, &r, store, repo, &b, &sub)) != NULL)
		goto out;
	if (id == 0) {
		print_report(ctx, &r, &b, NULL);
		err = verdict(&r, "patch refused, not queued");
		goto out;
	}
	if (ctx->json) {
		json_t *extra = json_pack("{s:I, s:s}", "review", (json_int_t)id,
		    "status", "pending");

		print_report(ctx, &r, &b, extra);
		json_decref(extra);
	} else {
		/* The review number is the result: printed even with -q. */
		if (ctx->verbosity > 0) {
			struct buf files = BUF_INIT;

			review_format_files(&files, &r);
			fputs(buf_cstr(&files), stderr);
			buf_free(&files);
		}
		printf("queued as review %lld (refs/warden/review/%lld)\n",
		    (long long)id, (long long)id);
	}
out:
	review_base_free(&b);
	allowlist_report_free(&r);
	git_repository_free(repo);
	buf_free(&text);
	free(ref);
	return err;
}

static struct werr *
patch_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_patch_entry,
		    "patch needs a subcommand");
	if (strcmp(argv[1], "check") == 0)
		return patch_check(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "submit") == 0)
		return patch_submit(ctx, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_patch_entry,
	    "unknown patch subcommand '%s'", argv[1]);
}

const struct cmd_entry cmd_patch_entry = {
	"patch",
	"check [--base REV] INPUT | --worktree DIR\n"
	"submit INPUT | --worktree DIR --source agent|community|triage "
	"[--author \"Name <email>\"] [--note TEXT]",
	"gate a patch against the official branch, or queue it for review",
	"check    apply INPUT (a unified diff or git format-patch file, - for\n"
	"         stdin) in memory to the official branch tip and run the\n"
	"         write-allowlist gate; exit 0 clean, 1 violations, 2 malformed;\n"
	"         --base REV gates against REV instead (its own policy);\n"
	"         --worktree DIR gates what DIR changed against the base\n"
	"submit   check, then queue the change as a commit kept under\n"
	"         refs/warden/review/N; a refused patch is journaled, not queued\n"
	"-v lists each file (status, path, lines added and deleted); -q drops\n"
	"the summary; submit's review number is printed always.\n"
	"--json   the gate result as JSON: ok, violations [{code, path, reason}],\n"
	"         files [{status, old_path, new_path, old_mode, new_mode, added,\n"
	"         deleted}], result_tree, base, base_commit (submit: review, status)\n"
	"Examples:\n"
	"  git diff >fix.patch && warden patch check fix.patch\n"
	"  warden patch submit fix.patch --source community --note \"paged mode\"\n",
	patch_exec,
};
