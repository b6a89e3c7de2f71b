/*
 * scratchbox.c - the sandbox around an untrusted build (update.h,
 * ctx->untrusted: a triage scratch environment). Every program
 * update_env_build() runs for it - the venv, the pip shim, a git
 * source's build steps, version_argv and --version probes - runs in the
 * OS sandbox (sandbox/sandbox.h) with what engine-sandbox.c gives an
 * engine of an unreviewed change: the system read-only; every home,
 * temporary and runtime directory and the repository hidden; shown back
 * read-only: warden's own folder, the repository's checkout without
 * .git and .warden, the folder of the build's log (its constraints
 * file) and what warden names for the build (the shims, the Python the
 * venv is made from, the policy's local package index); writable only
 * the environment's directory, which holds its HOME and TMPDIR (but a
 * git source's repository there, which warden fetches into, read-only);
 * the host's network (pip may need an index). Its environment is PATH
 * without hidden folders, the locale, HOME, TMPDIR, the compilers warden
 * records (CC, CXX) and what the update step sets for the program
 * (a build step's job count and ccache directory): nothing else of
 * warden's.
 *
 * Everything shown is decided here from paths warden and the trusted
 * policy name, never from the adapter or a package, which are the
 * untrusted part; what the programs leave in the environment is
 * untrusted too, so what warden itself uses there afterwards is a real
 * folder, never a link they left (gitbuild.c checks out afresh). Whether
 * a sandbox is required is the caller's decision (ctx->sandbox). Never
 * prints: it says in the build's log what the programs run in.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "update-private.h"
#include "util.h"

static void
strv_push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

/* strv_push() unless v holds s already (then s is freed). */
static void
strv_push_once(char ***v, size_t *n, char *s)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0) {
			free(s);
			return;
		}
	strv_push(v, n, s);
}

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	return slash == path ? xstrdup("/") :
	    xstrndup(path, (size_t)(slash - path));
}

/*
 * The folder of program's real path (found on PATH), or with python the
 * installation: the folder above it when it is a bin folder of a real
 * Python installation. NULL when program is nowhere, or its folder
 * would show a hidden place or a home back.
 */
/* Is path a script ("#!")? A Python found as one is a wrapper (pyenv's
 * shims) that needs its own tree, which may lie in a home. */
static int
is_script(const char *path)
{
	char head[2] = { 0, 0 };
	FILE *fp = fopen(path, "rb");

	if (fp == NULL)
		return 0;
	if (fread(head, 1, sizeof(head), fp) != sizeof(head))
		head[0] = 0;
	fclose(fp);
	return head[0] == '#' && head[1] == '!';
}

/* program on PATH; with python the first that is not a script: inside
 * the sandbox PATH loses the folders it hides, so the venv is made with
 * the first real interpreter the sandbox still shows. */
static char *
program_find(const char *program, int python)
{
	const char *path = getenv("PATH"), *p, *colon;
	char *cand;

	if (!python || strchr(program, '/') != NULL)
		return update_program_find(program);
	for (p = path; p != NULL && *p != '\0'; p = colon ? colon + 1 : NULL) {
		colon = strchr(p, ':');
		cand = xasprintf("%.*s/%s", colon ? (int)(colon - p) :
		    (int)strlen(p), p, program);
		if (access(cand, X_OK) == 0 && !path_is_dir(cand) &&
		    !is_script(cand))
			return cand;
		free(cand);
		if (colon == NULL)
			break;
	}
	return NULL;
}

static char *
program_folder(const char *program, int python)
{
	char *found = program_find(program, python), *dir, *up;
	char real[PATH_MAX];

	if (found == NULL || realpath(found, real) == NULL) {
		free(found);
		return NULL;
	}
	free(found);
	dir = dir_of(real);
	if (python && str_endswith(dir, "/bin")) {
		up = dir_of(dir);
		if (sandbox_python_installation(up)) {
			free(dir);
			return up;
		}
		free(up);
	}
	if (sandbox_shows_hidden(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* Add dir to v unless it would show a hidden place back (dir owned). */
static void
add_readable(char ***v, size_t *n, char *dir)
{
	if (dir == NULL || sandbox_shows_hidden(dir))
		free(dir);
	else
		strv_push_once(v, n, dir);
}

/* A local path of the package index: a directory, or a file:// url. */
static char *
index_path(const char *repo_root, const char *where)
{
	if (str_startswith(where, "file://"))
		return where[7] == '/' ? xstrdup(where + 7) : NULL;
	if (strstr(where, "://") != NULL)
		return NULL;
	return where[0] == '/' ? xstrdup(where) : path_join(repo_root, where);
}

char **
update_box_readable(const struct update_ctx *ctx)
{
	const struct policy *p = ctx->policy;
	const struct strlist *py = &p->update.python;
	const struct strlist *shims[2] = { &p->update.shim_pip,
	    &p->update.shim_brew };
	const char *names[2] = { "pip", "brew" };
	char **v = xcalloc(1, sizeof(*v)), *s;
	size_t n = 0, i, k;

	for (k = 0; k < 2; k++) {
		if (shims[k]->n == 0) {
			s = update_shim_path(names[k]);
			add_readable(&v, &n, dir_of(s));
			free(s);
			continue;
		}
		/* a substitute shim: its program, and the files it names
		 * (each itself: its folder may hold the repository) */
		add_readable(&v, &n, program_folder(shims[k]->v[0], 0));
		for (i = 1; i < shims[k]->n; i++)
			if (shims[k]->v[i][0] == '/')
				add_readable(&v, &n, xstrdup(shims[k]->v[i]));
	}
	if (py->n > 0)
		add_readable(&v, &n, program_folder(py->v[0], 1));
	/* the interpreter the pip shim runs on (#!/usr/bin/env python3) */
	add_readable(&v, &n, program_folder("python3", 1));
	if (p->update.index_url != NULL)
		add_readable(&v, &n, index_path(ctx->repo_root,
		    p->update.index_url));
	for (i = 0; i < p->update.find_links.n; i++)
		add_readable(&v, &n, index_path(ctx->repo_root,
		    p->update.find_links.v[i]));
	return v;
}

void
update_box_spec(struct sandbox_spec *spec, const char *repo_root,
    const char *env_dir, const char *log_dir, char *const *readable,
    char *const *kept)
{
	char *git = path_join(repo_root, ".git");
	char *own = path_join(repo_root, ".warden");
	size_t i;

	/* What warden names outside the repository first: a folder holding
	 * the repository shows it, and the binds after it hide .git and
	 * .warden again; what it names inside (a find_links folder such as
	 * .warden/wheels) is shown back after them, never inside .git. */
	for (i = 0; readable != NULL && readable[i] != NULL; i++)
		if (!sandbox_path_under(readable[i], repo_root))
			sandbox_spec_bind(spec, readable[i], NULL,
			    SANDBOX_READ);
	sandbox_spec_hide(spec, repo_root);
	sandbox_spec_bind(spec, repo_root, NULL, SANDBOX_READ);
	sandbox_spec_bind(spec, git, NULL, SANDBOX_HIDE);
	sandbox_spec_bind(spec, own, NULL, SANDBOX_HIDE);
	for (i = 0; readable != NULL && readable[i] != NULL; i++)
		if (sandbox_path_under(readable[i], repo_root) &&
		    !sandbox_path_under(readable[i], git) &&
		    strcmp(readable[i], repo_root) != 0 &&
		    strcmp(readable[i], own) != 0)
			sandbox_spec_bind(spec, readable[i], NULL,
			    SANDBOX_READ);
	sandbox_spec_bind(spec, log_dir, NULL, SANDBOX_READ);
	sandbox_spec_bind(spec, env_dir, NULL, SANDBOX_WRITE);
	for (i = 0; kept != NULL && kept[i] != NULL; i++)
		sandbox_spec_bind(spec, kept[i], NULL, SANDBOX_READ);
	spec->net = SANDBOX_NET_HOST;
	free(git);
	free(own);
}

/* Set entry ("NAME=VALUE") in env (n entries), replacing NAME's; env
 * owns entry. */
static void
env_set(char ***env, size_t *n, char *entry)
{
	size_t i, len = strcspn(entry, "=");

	for (i = 0; i < *n; i++)
		if (strncmp((*env)[i], entry, len) == 0 &&
		    (*env)[i][len] == '=') {
			free((*env)[i]);
			(*env)[i] = entry;
			return;
		}
	strv_push(env, n, entry);
}

static void
box_env(struct update_box *box, const struct sandbox_spec *spec,
    const char *home)
{
	static const char *const pass[] = { "LANG", "LC_ALL", "LC_CTYPE",
	    "TZ", "CC", "CXX" };
	size_t i;

	env_set(&box->env, &box->nenv, sandbox_env_path(spec));
	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		if (getenv(pass[i]) != NULL)
			env_set(&box->env, &box->nenv, xasprintf("%s=%s",
			    pass[i], getenv(pass[i])));
	env_set(&box->env, &box->nenv, xasprintf("HOME=%s", home));
	env_set(&box->env, &box->nenv, xasprintf("TMPDIR=%s", box->tmp));
}

/*
 * The box's sandbox: made in b->env_dir, its profile in run_dir. What
 * warden itself uses in the environment after a program ran there is a
 * real folder (a link an earlier build left is removed), and the git
 * source's repository, which warden fetches into, is read-only to the
 * programs.
 */
static struct werr *
box_prepare(struct update_box *box, const struct update_ctx *ctx,
    const struct update_build *b)
{
	struct sandbox_spec spec;
	char *home = path_join(b->env_dir, "home");
	char *git = path_join(b->env_dir, "git");
	char *log_dir = dir_of(b->log_path);
	char *kept[2] = { NULL, NULL };
	char **readable = NULL;
	struct werr *err;

	memset(&spec, 0, sizeof(spec));
	box->tmp = path_join(b->env_dir, "tmp");
	box->cwd = xstrdup(b->env_dir);
	box->run_dir = xasprintf("%s.sandbox", b->env_dir);
	if (b->adapter->source.kind == SOURCE_GIT)
		kept[0] = git;
	if ((err = mkdir_p(b->env_dir)) != NULL ||
	    (err = mkdir_real(home)) != NULL ||
	    (err = mkdir_real(box->tmp)) != NULL ||
	    (kept[0] != NULL && (err = mkdir_real(git)) != NULL) ||
	    (err = mkdir_real(box->run_dir)) != NULL)
		goto out;
	readable = update_box_readable(ctx);
	update_box_spec(&spec, ctx->repo_root, b->env_dir, log_dir, readable,
	    kept);
	spec.run_dir = xstrdup(box->run_dir);
	if ((err = sandbox_prepare(&box->sb, &spec)) != NULL)
		goto out;
	box_env(box, &spec, home);
out:
	sandbox_spec_free(&spec);
	sandbox_strv_free(readable);
	free(home);
	free(git);
	free(log_dir);
	return err;
}

struct werr *
update_box_open(struct update_box **out, const struct update_ctx *ctx,
    const struct update_build *b)
{
	struct update_box *box = xcalloc(1, sizeof(*box));
	const char *mode = ctx->policy->agent.sandbox;
	struct werr *err;

	*out = NULL;
	box->kind = ctx->sandbox;
	if (box->kind == NULL) {
		box->note = xasprintf(" (not sandboxed: 'agent.sandbox' is "
		    "\"%s\"%s)", mode, strcmp(mode, "off") != 0 ?
		    " and no sandbox works here" : "");
		update_log_note(b->log_path, "scratch build of %s in %s runs "
		    "without a sandbox, with warden's rights%s",
		    b->adapter->name, b->env_dir, box->note);
		*out = box;
		return NULL;
	}
	box->note = xasprintf(" (sandboxed: %s)", box->kind);
	if ((err = box_prepare(box, ctx, b)) != NULL) {
		update_box_close(box);
		return werr_wrap(err, "the sandbox of the scratch build of "
		    "'%s'", b->adapter->name);
	}
	update_log_note(b->log_path, "scratch build of %s in %s runs in the "
	    "sandbox (%s): it writes only there", b->adapter->name,
	    b->env_dir, box->kind);
	*out = box;
	return NULL;
}

void
update_box_close(struct update_box *box)
{
	size_t i;

	if (box == NULL)
		return;
	sandbox_free(&box->sb);
	for (i = 0; i < box->nenv; i++)
		free(box->env[i]);
	free(box->env);
	if (box->tmp != NULL)
		werr_free(path_remove_tree(box->tmp));
	if (box->run_dir != NULL)
		werr_free(path_remove_tree(box->run_dir));
	free(box->note);
	free(box->cwd);
	free(box->tmp);
	free(box->run_dir);
	free(box);
}

void
update_box_spawn(struct spawn_opts *so, char ***argv_full,
    char ***env_full, const struct update_box *box, char *const *argv,
    char *const *env_add, const char *cwd)
{
	size_t n = 0, na = 0, i, k, len;
	char **v, **e;

	*argv_full = *env_full = NULL;
	so->argv = argv;
	so->env_add = env_add;
	so->env = NULL;
	so->cwd = cwd;
	if (box == NULL || box->kind == NULL)
		return;
	while (argv[n] != NULL)
		n++;
	v = xcalloc(box->sb.nprefix + n + 1, sizeof(*v));
	for (i = 0; i < box->sb.nprefix; i++)
		v[i] = box->sb.prefix[i];
	for (i = 0; i < n; i++)
		v[box->sb.nprefix + i] = argv[i];
	while (env_add != NULL && env_add[na] != NULL)
		na++;
	e = xcalloc(box->nenv + na + 1, sizeof(*e));
	for (i = 0; i < box->nenv; i++)
		e[i] = box->env[i];
	for (k = 0; k < na; k++) {
		len = strcspn(env_add[k], "=");
		for (i = 0; e[i] != NULL; i++)
			if (strncmp(e[i], env_add[k], len) == 0 &&
			    e[i][len] == '=')
				break;
		e[i] = env_add[k];	/* over the box's, or at the end */
	}
	so->argv = v;
	so->env = e;
	so->env_add = NULL;
	so->cwd = cwd != NULL ? cwd : box->cwd;
	*argv_full = v;
	*env_full = e;
}
