/*
 * shim.c - calling the pip and brew shims and checking what they say.
 *
 * The shim protocol (doc/update.md "Shims", warden-update(1)):
 *   SHIM upgrade  --env DIR [INDEX] [--constraint FILE] [--dry-run] PKG [SPEC]
 *   SHIM pin      --env DIR [INDEX] [--constraint FILE] PKG==VER...
 *   SHIM versions --env DIR [PKG...]
 * where INDEX is --index-url URL, --find-links DIR (repeated), --no-index,
 * all from policy (never from an adapter). Every verb prints one JSON
 * object {"tool", "tool_version", "python", "packages": {name: version}}
 * on stdout: the whole installed closure after the verb (with --dry-run,
 * what it would be). Exit 0 ok, 1 the tool refused (stderr says why),
 * 2 usage, 3 environment. The shim's stderr goes to the update log.
 * Never prints.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "update-private.h"
#include "util.h"

#ifndef WARDEN_SHIMDIR
#define WARDEN_SHIMDIR "/usr/local/libexec/warden/shims"
#endif
/* The build tree this warden was built in, and its sources' shims. */
#ifndef WARDEN_BUILDDIR
#define WARDEN_BUILDDIR ""
#endif
#ifndef WARDEN_SRC_SHIMDIR
#define WARDEN_SRC_SHIMDIR ""
#endif

struct argvb {
	char **v;
	size_t n;
};

static void
argvb_add(struct argvb *a, const char *s)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

/* Are all values of the object strings? */
static int
all_strings(const json_t *o)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)o, key, v)
		if (!json_is_string(v))
			return 0;
	return 1;
}

static struct werr *
check_output(const char *what, const char *text, json_t **out)
{
	json_error_t jerr;
	json_t *doc, *p;

	doc = json_loads(text, 0, &jerr);
	if (doc == NULL)
		return werr_new(WEXIT_PROBLEM, "%s printed invalid JSON: line "
		    "%d column %d: %s", what, jerr.line, jerr.column, jerr.text);
	p = json_object_get(doc, "packages");
	if (!json_is_object(doc) ||
	    !json_is_string(json_object_get(doc, "tool")) ||
	    !json_is_string(json_object_get(doc, "tool_version")) ||
	    !(json_is_string(json_object_get(doc, "python")) ||
	    json_is_null(json_object_get(doc, "python"))) ||
	    !json_is_object(p) || !all_strings(p)) {
		json_decref(doc);
		return werr_new(WEXIT_PROBLEM, "%s printed JSON that is not "
		    "{\"tool\": string, \"tool_version\": string, \"python\": "
		    "string or null, \"packages\": {name: version}}", what);
	}
	*out = doc;
	return NULL;
}

/* The directory of the running executable (symbolic links resolved), or
 * NULL. Caller frees. */
static char *
exe_dir(void)
{
	char buf[PATH_MAX], real[PATH_MAX], *slash;
#ifdef __APPLE__
	uint32_t size = sizeof(buf);

	if (_NSGetExecutablePath(buf, &size) != 0)
		return NULL;
#else
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
#endif
	if (realpath(buf, real) == NULL || (slash = strrchr(real, '/')) == NULL)
		return NULL;
	*slash = '\0';
	return xstrdup(real[0] != '\0' ? real : "/");
}

/* Is path the same directory as dir (both resolved)? */
static int
same_dir(const char *path, const char *dir)
{
	char a[PATH_MAX], b[PATH_MAX];

	return dir[0] != '\0' && realpath(path, a) != NULL &&
	    realpath(dir, b) != NULL && strcmp(a, b) == 0;
}

/*
 * Where the shim named name is, as git finds its helpers (RUNTIME_PREFIX):
 * WARDEN_SHIM_DIR; else next to the executable: EXE_DIR/runner/shims (a
 * warden built in its source tree), the source tree's runner/shims when
 * EXE_DIR is the build tree it was configured in (a VPATH build),
 * EXE_DIR/../libexec/warden/shims (an installed tree, wherever it was
 * moved); else the configured $(pkglibexecdir)/shims. Caller frees.
 */
char *
update_shim_path(const char *name)
{
	const char *env = getenv("WARDEN_SHIM_DIR");
	char *dir, *cand[3], *found = NULL;
	size_t i;

	if (env != NULL && env[0] != '\0')
		return xasprintf("%s/%s", env, name);
	if ((dir = exe_dir()) != NULL) {
		cand[0] = xasprintf("%s/runner/shims/%s", dir, name);
		cand[1] = same_dir(dir, WARDEN_BUILDDIR) &&
		    WARDEN_SRC_SHIMDIR[0] != '\0' ?
		    xasprintf("%s/%s", WARDEN_SRC_SHIMDIR, name) : NULL;
		cand[2] = xasprintf("%s/../libexec/warden/shims/%s", dir, name);
		for (i = 0; i < 3; i++) {
			if (found == NULL && cand[i] != NULL &&
			    access(cand[i], X_OK) == 0)
				found = cand[i];
			else
				free(cand[i]);
		}
		free(dir);
	}
	return found != NULL ? found : xasprintf("%s/%s", WARDEN_SHIMDIR, name);
}

static void
shim_prefix(struct argvb *a, const struct update_ctx *ctx,
    enum adapter_source_kind kind)
{
	const struct strlist *over = kind == SOURCE_PIP ?
	    &ctx->policy->update.shim_pip : &ctx->policy->update.shim_brew;
	char *path;
	size_t i;

	if (over->n > 0) {
		for (i = 0; i < over->n; i++)
			argvb_add(a, over->v[i]);
		return;
	}
	path = update_shim_path(kind == SOURCE_PIP ? "pip" : "brew");
	argvb_add(a, path);
	free(path);
}

/* --find-links DIR: a relative directory is the repository's. */
static void
index_options(struct argvb *a, const struct update_ctx *ctx)
{
	const struct policy *p = ctx->policy;
	size_t i;
	char *dir;

	if (p->update.index_url != NULL) {
		argvb_add(a, "--index-url");
		argvb_add(a, p->update.index_url);
	}
	for (i = 0; i < p->update.find_links.n; i++) {
		const char *fl = p->update.find_links.v[i];

		argvb_add(a, "--find-links");
		if (fl[0] == '/' || strstr(fl, "://") != NULL)
			argvb_add(a, fl);
		else {
			dir = path_join(ctx->repo_root, fl);
			argvb_add(a, dir);
			free(dir);
		}
	}
	if (p->update.no_index)
		argvb_add(a, "--no-index");
}

struct werr *
update_shim_call(json_t **out, const struct update_ctx *ctx,
    enum adapter_source_kind kind, const char *verb, const char *env_dir,
    char *const *args, const char *log_path)
{
	struct argvb a = { NULL, 0 };
	struct buf text = BUF_INIT;
	char *out_path, *what;
	struct werr *err;
	size_t i;

	*out = NULL;
	shim_prefix(&a, ctx, kind);
	what = xasprintf("%s shim '%s' %s", kind == SOURCE_PIP ? "pip" : "brew",
	    a.v[0], verb);
	argvb_add(&a, verb);
	argvb_add(&a, "--env");
	argvb_add(&a, env_dir);
	if (kind == SOURCE_PIP && strcmp(verb, "versions") != 0)
		index_options(&a, ctx);
	for (i = 0; args != NULL && args[i] != NULL; i++)
		argvb_add(&a, args[i]);
	out_path = xasprintf("%s.shim-out", log_path);
	err = update_exec(ctx, what, a.v, NULL, log_path, out_path,
	    ctx->policy->update.shim_timeout_s);
	if (err == NULL && (err = file_read_max(&text, out_path,
	    FILE_MAX_DATA)) == NULL)
		err = check_output(what, buf_cstr(&text), out);
	if (err == NULL)
		update_log_note(log_path, "%s: printed %s", what, buf_cstr(&text));
	(void)unlink(out_path);
	free(out_path);
	free(what);
	buf_free(&text);
	update_argv_free(a.v);
	return err;
}
