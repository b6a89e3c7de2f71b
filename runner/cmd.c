/*
 * cmd.c - the command table, help and usage, and the resources commands
 * share (repository, policy, store), opened lazily. The dispatcher in
 * main.c, `warden help` and every usage error are driven from this table.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "official.h"
#include "policy.h"
#include "repo.h"
#include "store.h"
#include "util.h"

const struct cmd_entry *const cmd_table[] = {
	&cmd_help_entry,
	&cmd_version_entry,
	&cmd_init_entry,
	&cmd_lint_entry,
	&cmd_journal_entry,
	&cmd_campaign_entry,
	&cmd_patch_entry,
	&cmd_review_entry,
	&cmd_prcheck_entry,
	&cmd_agent_entry,
	NULL,
};

const struct cmd_entry *
cmd_find(const char *name)
{
	size_t i;

	for (i = 0; cmd_table[i] != NULL; i++)
		if (strcmp(cmd_table[i]->name, name) == 0)
			return cmd_table[i];
	return NULL;
}

void
cmd_print_usage(FILE *fp, const struct cmd_entry *entry)
{
	const char *u = entry->usage;
	const char *nl;
	int first = 1;

	/* usage may hold several synopsis lines separated by '\n'. */
	do {
		nl = strchr(u, '\n');
		fprintf(fp, "%s warden %s %.*s\n", first ? "usage:" : "      ",
		    entry->name, nl != NULL ? (int)(nl - u) : (int)strlen(u), u);
		first = 0;
		u = nl != NULL ? nl + 1 : NULL;
	} while (u != NULL);
}

void
cmd_print_help(FILE *fp, const struct cmd_entry *entry)
{
	cmd_print_usage(fp, entry);
	fprintf(fp, "\n%s\n", entry->summary);
	if (entry->help != NULL && entry->help[0] != '\0')
		fprintf(fp, "\n%s", entry->help);
	fprintf(fp, "\nGlobal options (before the command): --repo DIR, --json, -q, -v.\n"
	    "See warden(1) for exit codes and the files each command writes.\n");
}

void
cmd_print_overview(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: warden [--repo DIR] [--json] [-q | -v] COMMAND [ARGS]\n"
	    "       warden --version | --help\n\n"
	    "warden keeps an LLM-serving benchmark honest while the engines it\n"
	    "measures change. Commands:\n\n");
	for (i = 0; cmd_table[i] != NULL; i++)
		fprintf(fp, "  %-10s %s\n", cmd_table[i]->name, cmd_table[i]->summary);
	fprintf(fp, "\n'warden help COMMAND' or 'warden COMMAND --help' for one command.\n"
	    "Exit status: 0 ok, 1 a problem found, 2 usage or input error,\n"
	    "3 environment error.\n");
}

struct werr *
cmd_usage_error(const struct cmd_entry *entry, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	const char *u = entry->usage;
	const char *nl;
	int first = 1;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	do {
		nl = strchr(u, '\n');
		buf_printf(&b, "\n%s warden %s %.*s", first ? "usage:" : "      ",
		    entry->name, nl != NULL ? (int)(nl - u) : (int)strlen(u), u);
		first = 0;
		u = nl != NULL ? nl + 1 : NULL;
	} while (u != NULL);
	err = werr_new(WEXIT_INPUT, "%s", buf_cstr(&b));
	buf_free(&b);
	return err;
}

int
cmd_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}

struct werr *
cmd_ctx_repo(struct cmd_ctx *ctx, const char **root)
{
	const char *start = ctx->repo_arg;
	struct werr *err;
	char *cwd = NULL;

	if (ctx->repo_root != NULL) {
		*root = ctx->repo_root;
		return NULL;
	}
	if (start == NULL)
		start = getenv("WARDEN_REPO");
	if (start != NULL && start[0] != '\0' && !path_is_dir(start))
		return werr_new(WEXIT_ENV, "repository '%s' is not a directory", start);
	if (start == NULL || start[0] == '\0') {
		cwd = getcwd(NULL, 0);
		if (cwd == NULL)
			return werr_errno("getcwd", NULL);
		start = cwd;
	}
	err = repo_find_root(&ctx->repo_root, start);
	free(cwd);
	if (err != NULL)
		return err;
	*root = ctx->repo_root;
	return NULL;
}

struct werr *
cmd_ctx_policy(struct cmd_ctx *ctx, struct policy **policy)
{
	const char *root;
	struct werr *err;
	char *path;

	if (ctx->policy != NULL) {
		*policy = ctx->policy;
		return NULL;
	}
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	path = path_join(root, "policy/warden.json");
	if (!path_exists(path)) {
		free(path);
		return werr_new(WEXIT_INPUT, "policy/warden.json: no such file in "
		    "'%s' (is this a benchmark repository? see 'warden init')", root);
	}
	err = policy_load_file(&ctx->policy, path, "policy/warden.json", NULL);
	free(path);
	if (err != NULL)
		return err;
	*policy = ctx->policy;
	return NULL;
}

struct werr *
cmd_ctx_store(struct cmd_ctx *ctx, struct store **store)
{
	const char *root;
	struct werr *err;

	if (ctx->store != NULL) {
		*store = ctx->store;
		return NULL;
	}
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if ((err = store_open(&ctx->store, root, NULL, ctx->cmdline)) != NULL)
		return err;
	/* The policy's busy timeout applies unless the environment overrides
	 * it; a broken policy must not stop journal commands, so its error is
	 * left to the commands that need the policy. */
	if (getenv("WARDEN_BUSY_TIMEOUT_MS") == NULL) {
		struct policy *policy;

		if ((err = cmd_ctx_policy(ctx, &policy)) == NULL)
			store_set_busy_timeout(ctx->store, policy->busy_timeout_ms);
		werr_free(err);
	}
	/* Settle a move of the official branch that a crash interrupted,
	 * before the command reads or writes anything. */
	if ((err = official_recover_at(ctx->store, root, NULL)) != NULL)
		return err;
	*store = ctx->store;
	return NULL;
}

void
cmd_ctx_release(struct cmd_ctx *ctx)
{
	store_close(ctx->store);
	ctx->store = NULL;
	policy_free(ctx->policy);
	ctx->policy = NULL;
	free(ctx->repo_root);
	ctx->repo_root = NULL;
}
