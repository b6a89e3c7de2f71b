/*
 * cmd.c - the command table, option parsing, usage errors, and the
 * resources commands share (repository, policy, store), opened lazily.
 * The dispatcher in main.c, `warden help` (cmd-text.c) and every usage
 * error are driven from this table.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "cmd.h"
#include "official.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
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
	&cmd_fidelity_entry,
	&cmd_gate_entry,
	&cmd_snapshot_entry,
	&cmd_verify_entry,
	&cmd_merge_entry,
	&cmd_export_entry,
	&cmd_publish_entry,
	&cmd_update_entry,
	&cmd_versions_entry,
	&cmd_stale_entry,
	&cmd_cycle_entry,
	&cmd_status_entry,
	&cmd_triage_entry,
	&cmd_incident_entry,
	&cmd_regressions_entry,
	NULL,
};

enum { OPT_REPO = 0x100, OPT_JSON, OPT_NO_PAGER, OPT_QUIET = 'q',
    OPT_VERBOSE = 'v' };
/* The most options one command may have (the globals come on top). */
#define CMD_MAX_OPTIONS 40

const struct option cmd_global_options[] = {
	{ "repo", required_argument, NULL, OPT_REPO },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "no-pager", no_argument, NULL, OPT_NO_PAGER },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ NULL, 0, NULL, 0 },
};

int
cmd_global_option(struct cmd_ctx *ctx, int ch, const char *arg)
{
	switch (ch) {
	case OPT_REPO:
		ctx->repo_arg = arg;
		return 1;
	case OPT_JSON:
		ctx->json = 1;
		return 1;
	case OPT_NO_PAGER:
		ctx->no_pager = 1;
		return 1;
	case OPT_QUIET:
		ctx->verbosity = -1;
		return 1;
	case OPT_VERBOSE:
		ctx->verbosity = 1;
		return 1;
	default:
		return 0;
	}
}

/* The options whose names start with name (len bytes); the exact match,
 * if there is one, is the only one counted. */
static size_t
long_matches(const struct option *opts, const char *name, size_t len,
    const struct option **one, struct buf *names)
{
	size_t i, n = 0;

	*one = NULL;
	for (i = 0; opts[i].name != NULL; i++)
		if (strlen(opts[i].name) == len &&
		    strncmp(opts[i].name, name, len) == 0) {
			*one = &opts[i];
			return 1;
		}
	for (i = 0; opts[i].name != NULL; i++)
		if (strncmp(opts[i].name, name, len) == 0) {
			buf_printf(names, "%s--%s", n ? ", " : "", opts[i].name);
			*one = &opts[i];
			n++;
		}
	return n;
}

char *
cmd_getopt_failure(int ch, char **argv, const struct option *opts)
{
	/* GNU and BSD getopt_long step past a failing long option. */
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const struct option *o = NULL;
	struct buf names = BUF_INIT;
	const char *eq;
	size_t len, n;
	char *msg;

	if (strncmp(arg, "--", 2) == 0 && arg[2] != '\0') {
		arg += 2;
		eq = strchr(arg, '=');
		len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
		n = long_matches(opts, arg, len, &o, &names);
		if (ch == ':' && o != NULL)
			msg = xasprintf("option '--%s' needs a value", o->name);
		else if (n > 1)
			msg = xasprintf("option '--%.*s' is ambiguous (%s)", (int)len,
			    arg, buf_cstr(&names));
		else if (n == 1 && eq != NULL && o->has_arg == no_argument)
			msg = xasprintf("option '--%s' takes no value", o->name);
		else if (n == 0 || optopt == 0)
			msg = xasprintf("unknown option '--%.*s'", (int)len, arg);
		else
			msg = NULL;
		buf_free(&names);
		if (msg != NULL)
			return msg;
	}
	if (ch == ':')
		return xasprintf("option '-%c' needs a value", optopt);
	if (optopt > 0 && optopt < 0x80 && optopt >= ' ')
		return xasprintf("unknown option '-%c'", optopt);
	return xasprintf("unknown option '%s'",
	    quote_str(optind > 0 ? argv[optind - 1] : ""));
}

int
cmd_getopt(struct cmd_ctx *ctx, const struct cmd_entry *entry, int argc,
    char **argv, const struct option *opts, struct werr **err)
{
	struct option all[CMD_MAX_OPTIONS + 8];
	char shorts[4 + 2 * CMD_MAX_OPTIONS] = ":qv";
	size_t n = 0, i, ns = 3;
	char *msg;
	int ch;

	*err = NULL;
	for (i = 0; opts != NULL && opts[i].name != NULL; i++) {
		if (n == CMD_MAX_OPTIONS)
			abort();	/* a command with too many options */
		all[n++] = opts[i];
		/* an option named by one letter is a short one: -n 20 */
		if (opts[i].name[0] != '\0' && opts[i].name[1] == '\0') {
			shorts[ns++] = opts[i].name[0];
			if (opts[i].has_arg == required_argument)
				shorts[ns++] = ':';
			shorts[ns] = '\0';
		}
	}
	for (i = 0; cmd_global_options[i].name != NULL; i++)
		all[n++] = cmd_global_options[i];
	memset(&all[n], 0, sizeof(all[n]));
	opterr = 0;
	for (;;) {
		ch = getopt_long(argc, argv, shorts, all, NULL);
		if (ch == -1 || !cmd_global_option(ctx, ch, optarg))
			break;
	}
	if (ch != '?' && ch != ':')
		return ch;
	msg = cmd_getopt_failure(ch, argv, all);
	*err = cmd_usage_error(entry, "%s", msg);
	free(msg);
	return -1;
}

struct werr *
cmd_no_options(struct cmd_ctx *ctx, const struct cmd_entry *entry, int argc,
    char **argv)
{
	static const struct option none[] = { { NULL, 0, NULL, 0 } };
	struct werr *err = NULL;

	optind = 0;
	while (cmd_getopt(ctx, entry, argc, argv, none, &err) != -1)
		;
	return err;
}

void
cmd_names_add(struct cmd_names *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

const struct cmd_entry *
cmd_find(const char *name)
{
	size_t i;

	for (i = 0; cmd_table[i] != NULL; i++)
		if (strcmp(cmd_table[i]->name, name) == 0)
			return cmd_table[i];
	return NULL;
}

struct werr *
cmd_parse_id(const struct cmd_entry *entry, const char *s, const char *what,
    int64_t *id)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0)
		return cmd_usage_error(entry, "'%s' is not %s", quote_str(s),
		    what);
	*id = v;
	return NULL;
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
	err = werr_vnew(WEXIT_INPUT, fmt, ap);
	va_end(ap);
	/* The synopsis apart: the message may echo argv, which is quoted
	 * when printed; the synopsis is warden's own lines. */
	do {
		nl = strchr(u, '\n');
		buf_printf(&b, "%s%s warden %s %.*s", first ? "" : "\n",
		    first ? "usage:" : "      ", entry->name,
		    nl != NULL ? (int)(nl - u) : (int)strlen(u), u);
		first = 0;
		u = nl != NULL ? nl + 1 : NULL;
	} while (u != NULL);
	err->usage = buf_detach(&b);
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

/* A benchmark repository: a git repository whose working tree holds
 * policy/warden.json, or that has the official branch (whose tree the
 * policy is read from). Every command says the same elsewhere. */
static int
is_bench(const char *root)
{
	char *path = path_join(root, "policy/warden.json");
	int yes = path_exists(path);

	free(path);
	return yes || policy_official_exists(root);
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
	/* A repository the user named (--repo, $WARDEN_REPO) that cannot be
	 * used is an input error; none around the current directory is the
	 * environment's. */
	if (start != NULL && start[0] != '\0' && !path_is_dir(start))
		return werr_new(WEXIT_INPUT, "repository '%s' is not a directory",
		    start);
	if (start == NULL || start[0] == '\0') {
		cwd = getcwd(NULL, 0);
		if (cwd == NULL)
			return werr_errno("getcwd", NULL);
		start = cwd;
	}
	err = repo_find_root(&ctx->repo_root, start);
	if (err == NULL && !is_bench(ctx->repo_root)) {
		err = werr_new(WEXIT_ENV, "not in a benchmark repository: "
		    "'%s' has neither policy/warden.json nor an official "
		    "branch (use --repo DIR or 'warden init DIR')",
		    ctx->repo_root);
		free(ctx->repo_root);
		ctx->repo_root = NULL;
	}
	if (err != NULL && cwd == NULL)
		err->exit = WEXIT_INPUT;
	free(cwd);
	if (err != NULL)
		return err;
	*root = ctx->repo_root;
	return NULL;
}

struct werr *
cmd_ctx_policy(struct cmd_ctx *ctx, struct policy **policy)
{
	const char *root, *branch;
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
	if (err == NULL)	/* the name is the clone's, never the file's */
		err = cmd_ctx_official_branch(ctx, &branch);
	if (err != NULL)
		return err;
	free(ctx->policy->official_branch);
	ctx->policy->official_branch = xstrdup(branch);
	*policy = ctx->policy;
	return NULL;
}

struct werr *
cmd_ctx_trusted_policy(struct cmd_ctx *ctx, struct policy **policy)
{
	git_repository *repo = NULL;
	const char *root;
	struct werr *err;

	if (ctx->trusted != NULL) {
		*policy = ctx->trusted;
		return NULL;
	}
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if (git_repository_open(&repo, root) < 0)
		return werr_git("cannot open '%s'", root);
	err = policy_load_trusted(&ctx->trusted, NULL, repo);
	git_repository_free(repo);
	if (err != NULL)
		return err;
	*policy = ctx->trusted;
	return NULL;
}

struct werr *
cmd_ctx_official_branch(struct cmd_ctx *ctx, const char **branch)
{
	git_repository *repo = NULL;
	const char *root;
	struct werr *err;

	if (ctx->official == NULL) {
		if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
			return err;
		if (git_repository_open(&repo, root) < 0)
			return werr_git("cannot open '%s'", root);
		ctx->official = policy_official_branch(repo);
		git_repository_free(repo);
	}
	*branch = ctx->official;
	return NULL;
}

static struct werr *ctx_store_open(struct cmd_ctx *ctx, struct store **store,
    int readonly);

void
cmd_pager(struct cmd_ctx *ctx)
{
	if (!ctx->json && !ctx->no_pager)
		output_pager_start();
}

struct werr *
cmd_ctx_store(struct cmd_ctx *ctx, struct store **store)
{
	return ctx_store_open(ctx, store, 0);
}

struct werr *
cmd_ctx_store_readonly(struct cmd_ctx *ctx, struct store **store)
{
	return ctx_store_open(ctx, store, 1);
}

static struct werr *
ctx_store_open(struct cmd_ctx *ctx, struct store **store, int readonly)
{
	const char *root;
	struct werr *err;

	if (ctx->store != NULL) {
		*store = ctx->store;
		return NULL;
	}
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	err = readonly ? store_open_readonly(&ctx->store, root, ctx->cmdline) :
	    store_open(&ctx->store, root, NULL, ctx->cmdline);
	if (err != NULL)
		return err;
	if (store_empty(ctx->store) && ctx->verbosity >= 0)
		fprintf(stderr, "nothing recorded in '%s' yet (no "
		    ".warden/warden.db; none was created)\n", quote_str(root));
	/* The trusted policy's busy timeout applies unless the environment
	 * overrides it; a missing or broken policy must not stop journal
	 * commands, so its error is left to the commands that need it. */
	if (getenv("WARDEN_BUSY_TIMEOUT_MS") == NULL) {
		struct policy *policy;

		if ((err = cmd_ctx_trusted_policy(ctx, &policy)) == NULL)
			store_set_busy_timeout(ctx->store, policy->busy_timeout_ms);
		werr_free(err);
	}
	/* Settle a move of the official branch that a crash interrupted,
	 * before the command reads or writes anything (a reader that cannot
	 * write leaves it to the next writer). */
	if (!store_readonly(ctx->store) &&
	    (err = official_recover_at(ctx->store, root, NULL)) != NULL)
		return err;
	*store = ctx->store;
	return NULL;
}

void
cmd_list_empty(const struct cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->verbosity < 0)
		return;
	fflush(stdout);
	fputs("no ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
cmd_ctx_release(struct cmd_ctx *ctx)
{
	store_close(ctx->store);
	ctx->store = NULL;
	policy_free(ctx->policy);
	ctx->policy = NULL;
	policy_free(ctx->trusted);
	ctx->trusted = NULL;
	free(ctx->official);
	ctx->official = NULL;
	free(ctx->repo_root);
	ctx->repo_root = NULL;
}
