/*
 * gitbuild.c - building a git source incrementally. An engine has two
 * persistent work trees, env_dir/builds/work-a and work-b: env_dir/src
 * links to the one in use, and a new commit is checked out over the
 * other (libgit2, from the commit last checked out there, so files that
 * did not change keep their times and the build tool redoes only what
 * changed) and built there; only a build whose every step succeeded
 * becomes the one in use. env_dir/builds/work-X.json says which source
 * and commit a work tree holds; a tree of another source, or of none
 * known, starts afresh. A work tree has its own git identity, the
 * commit checked out (slot_git_identity), so a build that asks git for
 * its version gets the engine's. Build steps get the job count of policy
 * (CMAKE_BUILD_PARALLEL_LEVEL, MAKEFLAGS) and ccache's directory under
 * .warden/ (a triage scratch build: its own, in its environment). A
 * commit that failed to build in an engine's live environment is
 * recorded in env_dir/build-failed.json (gitenv.c) and not built again
 * until another commit is the target or the caller asks
 * (ctx->retry_failed); triage's scratch builds record nothing, and run
 * their steps in the sandbox (scratchbox.c). Never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "update-private.h"
#include "beneath.h"
#include "util.h"

#define SLOT_A "work-a"
#define SLOT_B "work-b"

/* The work tree env_dir/src links to, or NULL. Caller frees. */
static char *
slot_in_use(const char *env_dir)
{
	char *link = path_join(env_dir, "src"), target[PATH_MAX];
	ssize_t n = readlink(link, target, sizeof(target) - 1);

	free(link);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	return str_startswith(target, "builds/") ? xstrdup(target + 7) : NULL;
}

/* A small JSON file of an environment's (warden writes it; in a scratch
 * environment a sandboxed build step may have replaced it): a regular
 * file within FILE_MAX_CONFIG reached from env_dir through no link, else
 * NULL, as if there were none. */
static json_t *
state_load(const char *env_dir, const char *path)
{
	struct buf b = BUF_INIT;
	struct werr *err = file_read_under(&b, env_dir, path, FILE_MAX_CONFIG);
	json_t *doc = err == NULL ? json_loads(buf_cstr(&b), 0, NULL) : NULL;

	werr_free(err);
	buf_free(&b);
	return doc;
}

/* Bring dir to commit oid (a fresh checkout when its state is unknown,
 * or the tree is one a sandboxed build wrote: fresh). */
static struct werr *
slot_checkout(git_repository *repo, const git_oid *oid, const char *env_dir,
    const char *dir, const char *state_path, const char *url,
    const char *log_path, int fresh)
{
	json_t *st = fresh ? NULL : state_load(env_dir, state_path);
	const char *had = json_string_value(json_object_get(st, "commit"));
	const char *had_url = json_string_value(json_object_get(st, "url"));
	git_commit *commit = NULL, *base = NULL;
	git_tree *base_tree = NULL;
	git_checkout_options co;
	struct werr *err = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid base_oid;

	if (had != NULL && had_url != NULL && strcmp(had_url, url) == 0 &&
	    git_oid_fromstr(&base_oid, had) == 0 &&
	    git_commit_lookup(&base, repo, &base_oid) == 0 &&
	    git_commit_tree(&base_tree, base) == 0)
		update_log_note(log_path, "checkout over %s (held %.12s)", dir,
		    had);
	else {
		update_log_note(log_path, "fresh checkout into %s", dir);
		if ((err = path_remove_tree(dir)) != NULL)
			goto out;
	}
	(void)unlink(state_path);	/* unknown until the checkout is done */
	if ((err = mkdir_p(dir)) != NULL)
		goto out;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX;
	co.target_directory = dir;
	co.baseline = base_tree;
	if (git_commit_lookup(&commit, repo, oid) != 0 ||
	    git_checkout_tree(repo, (git_object *)commit, &co) != 0) {
		err = werr_git("checkout into '%s'", dir);
		err->exit = WEXIT_PROBLEM;
		goto out;
	}
	git_oid_tostr(hex, sizeof(hex), oid);
	json_decref(st);
	st = json_pack("{s:s, s:s}", "url", url, "commit", hex);
	if (json_dump_file(st, state_path, JSON_INDENT(2)) != 0)
		err = werr_new(WEXIT_PROBLEM, "cannot write '%s'", state_path);
out:
	json_decref(st);
	git_tree_free(base_tree);
	git_commit_free(base);
	git_commit_free(commit);
	return err;
}

/*
 * dir's own git identity, so that git run by a build step in dir answers
 * for the engine's commit (llama.cpp's cmake asks `git rev-parse HEAD`
 * and `git rev-list --count HEAD` for the version the server reports),
 * never for a repository above the work tree (the bench's): dir/.git
 * names DIR.git, a linked work tree's git directory whose HEAD is the
 * commit checked out and whose common directory is the engine's mirror
 * (env_dir/git, fetched with its history and tags), and whose index is
 * the commit's tree: written afresh for every build, so a build that
 * regenerates its version when the index changes (llama.cpp's cmake
 * depends on DIR.git/index, and warns without one) does so for each
 * commit built over the tree. Paths are relative, so the environment
 * may move.
 */
static struct werr *
slot_git_identity(git_repository *repo, const char *dir, const git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1];
	char *gitdir = xasprintf("%s.git", dir), *path = NULL, *text = NULL;
	const char *base = strrchr(dir, '/') != NULL ? strrchr(dir, '/') + 1 :
	    dir;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_index *index = NULL;
	struct werr *err;

	git_oid_tostr(hex, sizeof(hex), oid);
	if ((err = path_remove_tree(gitdir)) != NULL ||
	    (err = mkdir_real(gitdir)) != NULL)
		goto out;
	text = xasprintf("%s\n", hex);
	path = path_join(gitdir, "HEAD");
	if ((err = file_write_atomic(path, text, strlen(text))) != NULL)
		goto out;
	free(path);
	path = path_join(gitdir, "commondir");
	if ((err = file_write_atomic(path, "../../git\n", 10)) != NULL)
		goto out;
	free(path);
	path = path_join(gitdir, "index");
	if (git_commit_lookup(&commit, repo, oid) != 0 ||
	    git_commit_tree(&tree, commit) != 0 ||
	    git_index_open(&index, path) != 0 ||
	    git_index_read_tree(index, tree) != 0 ||
	    git_index_write(index) != 0) {
		err = werr_git("the index of '%s'", gitdir);
		goto out;
	}
	free(path);
	free(text);
	path = path_join(dir, ".git");
	text = xasprintf("gitdir: ../%s.git\n", base);
	err = file_write_atomic(path, text, strlen(text));
out:
	if (err != NULL)
		err->exit = WEXIT_PROBLEM;
	git_index_free(index);
	git_tree_free(tree);
	git_commit_free(commit);
	free(gitdir);
	free(path);
	free(text);
	return err;
}

int
update_build_jobs(const struct policy *p)
{
	long n;

	if (p->update.build_jobs > 0)
		return p->update.build_jobs;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* The variables build steps get (NULL-terminated; update_argv_free).
 * ccache's paths under builds/ are taken relative to the compiler's
 * directory (CCACHE_BASEDIR), and the directory is not hashed for debug
 * builds (CCACHE_NOHASHDIR): the first build of the other work tree then
 * finds what the first tree compiled. An untrusted build (a triage
 * scratch build) gets a cache of its own in its environment: it must not
 * write what the engines' live builds will read. */
static char **
build_env(const struct update_ctx *ctx, const char *env_dir,
    const char *builds)
{
	int jobs = update_build_jobs(ctx->policy);
	char *ccache = update_program_find("ccache");
	char **env = xcalloc(9, sizeof(*env));
	size_t n = 0;

	env[n++] = xasprintf("CMAKE_BUILD_PARALLEL_LEVEL=%d", jobs);
	env[n++] = xasprintf("MAKEFLAGS=-j%d", jobs);
	env[n++] = xasprintf("WARDEN_JOBS=%d", jobs);
	if (ctx->untrusted)
		env[n++] = xasprintf("CCACHE_DIR=%s/ccache", env_dir);
	else
		env[n++] = xasprintf("CCACHE_DIR=%s/.warden/ccache",
		    ctx->repo_root);
	env[n++] = xasprintf("CCACHE_BASEDIR=%s", builds);
	env[n++] = xstrdup("CCACHE_NOHASHDIR=1");
	if (ccache != NULL) {
		env[n++] = xstrdup("CMAKE_C_COMPILER_LAUNCHER=ccache");
		env[n++] = xstrdup("CMAKE_CXX_COMPILER_LAUNCHER=ccache");
	}
	free(ccache);
	return env;
}

/* The compilers a build would use: $CC or cc, $CXX or c++. */
static void
compiler_identity(const struct update_ctx *ctx, json_t *toolchain,
    const char *log_path)
{
	const char *vars[2] = { "CC", "CXX" }, *dflt[2] = { "cc", "c++" };
	const char *prog;
	char *ver;
	size_t i;

	for (i = 0; i < 2; i++) {
		prog = getenv(vars[i]);
		if (prog == NULL || prog[0] == '\0' || strchr(prog, ' ') != NULL)
			prog = dflt[i];
		if (json_object_get(toolchain, dflt[i]) != NULL)
			continue;
		ver = update_program_version(ctx, prog, log_path);
		if (ver != NULL) {
			json_object_set_new(toolchain, dflt[i], json_string(ver));
			free(ver);
		}
	}
}

struct werr *
update_git_slot_build(char **slot_out, const struct update_ctx *ctx,
    const struct update_build *b, git_repository *repo, const git_oid *oid,
    json_t *toolchain)
{
	char *in_use = slot_in_use(b->env_dir), **argv = NULL, **env = NULL;
	const char *slot = in_use != NULL && strcmp(in_use, SLOT_A) == 0 ?
	    SLOT_B : SLOT_A;
	char *builds = path_join(b->env_dir, "builds");
	char *dir = path_join(builds, slot);
	char *state = xasprintf("%s.json", dir), *what, *ver;
	struct werr *err;
	size_t i;

	*slot_out = NULL;
	/* An untrusted build's tree and state are what its steps left
	 * there: checked out afresh into a real folder, never over them. */
	if ((err = ctx->untrusted ? mkdir_real(builds) : mkdir_p(builds)) !=
	    NULL ||
	    (err = slot_checkout(repo, oid, b->env_dir, dir, state,
	    b->adapter->source.url, b->log_path, ctx->untrusted)) != NULL ||
	    (err = slot_git_identity(repo, dir, oid)) != NULL)
		goto out;
	env = build_env(ctx, b->env_dir, builds);
	for (i = 0; i < b->adapter->source.n_build && err == NULL; i++) {
		if (ctx->on_progress != NULL)
			ctx->on_progress(ctx->arg, b->k, b->n, b->adapter->name,
			    "build");
		if ((err = update_expand_argv(&argv, &b->adapter->source.build[i],
		    b->adapter, ctx->repo_root, b->env_dir, NULL, NULL)) != NULL)
			break;
		what = xasprintf("build step %zu of %zu", i + 1,
		    b->adapter->source.n_build);
		err = update_exec_env(ctx, what, argv, dir, b->log_path, NULL,
		    ctx->policy->update.build_timeout_s, env);
		if (json_object_get(toolchain, argv[0]) == NULL &&
		    (ver = update_program_version(ctx, argv[0],
		    b->log_path)) != NULL) {
			json_object_set_new(toolchain, argv[0], json_string(ver));
			free(ver);
		}
		free(what);
		update_argv_free(argv);
		argv = NULL;
	}
	compiler_identity(ctx, toolchain, b->log_path);
	if (err == NULL)
		*slot_out = xstrdup(slot);
out:
	update_argv_free(env);
	free(in_use);
	free(builds);
	free(dir);
	free(state);
	return err;
}

/* Remove every build of env_dir/builds but the two work trees. */
void
update_git_prune(const char *env_dir)
{
	char *dir = path_join(env_dir, "builds"), *p;
	struct dirent *de;
	struct stat st;
	DIR *d;

	/* builds itself, never where a link a build step left points */
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    (d = opendir(dir)) == NULL) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    str_startswith(de->d_name, SLOT_A) ||
		    str_startswith(de->d_name, SLOT_B))
			continue;
		p = path_join(dir, de->d_name);
		werr_free(path_remove_tree(p));
		free(p);
	}
	closedir(d);
	free(dir);
}

static char *
failed_path(const char *env_dir)
{
	return path_join(env_dir, "build-failed.json");
}

char *
update_git_failed_before(const char *env_dir, const char *commit,
    const char *version)
{
	char *path = failed_path(env_dir), *when = NULL;
	json_t *doc = state_load(env_dir, path);
	const char *c = json_string_value(json_object_get(doc, "commit"));
	const char *v = json_string_value(json_object_get(doc, "version"));
	const char *w = json_string_value(json_object_get(doc, "when"));

	if (c != NULL && v != NULL && strcmp(c, commit) == 0 &&
	    strcmp(v, version) == 0)
		when = xstrdup(w != NULL ? w : "before");
	json_decref(doc);
	free(path);
	return when;
}

void
update_git_failed_record(const char *env_dir, const char *commit,
    const char *version)
{
	char *path = failed_path(env_dir), now[40];
	json_t *doc;

	utc_now_iso(now, sizeof(now));
	doc = json_pack("{s:s, s:s, s:s}", "commit", commit, "version", version,
	    "when", now);
	(void)json_dump_file(doc, path, JSON_INDENT(2));
	json_decref(doc);
	free(path);
}

void
update_git_failed_clear(const char *env_dir)
{
	char *path = failed_path(env_dir);

	(void)unlink(path);
	free(path);
}
