/*
 * engine-launch.c - the command line and environment of one engine server
 * start: placeholders of the adapter's templates (serve.argv, the split's
 * argv_extra, serve.env, serve.cwd, the pre_start and stop steps) expanded
 * from the adapter, the profile, the split and the concurrency; HOME and
 * caches under the engine's own directory; weights found under
 * {models_dir}. See engine.h and engine-private.h.
 *
 * Builds strings only: never starts, waits for or prints anything.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "engine-private.h"
#include "util.h"

#define ENGINE_HOST "127.0.0.1"

static const char *
var_value(const struct engine_vars *v, const char *name, size_t len, int *known)
{
	static const struct {
		const char *name;
		size_t off;
	} table[] = {
#define V(n) { #n, offsetof(struct engine_vars, n) }
		V(port), V(host), V(model), V(model_path), V(model_dir),
		V(model_repo), V(hf_id), V(models_dir), V(ctx), V(home), V(env_dir),
		V(scratch), V(log_dir), V(adapter_dir), V(repo),
		V(concurrency), V(split),
#undef V
	};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].name) == len &&
		    memcmp(table[i].name, name, len) == 0) {
			*known = 1;
			return *(const char *const *)((const char *)v +
			    table[i].off);
		}
	}
	*known = 0;
	return NULL;
}

struct werr *
engine_expand(struct buf *out, const char *tmpl, const struct engine_vars *vars)
{
	const char *p = tmpl, *open, *close, *val;
	int known;

	while ((open = strchr(p, '{')) != NULL) {
		buf_add(out, p, (size_t)(open - p));
		if ((close = strchr(open, '}')) == NULL)
			return werr_new(WEXIT_INPUT,
			    "unterminated '{' in '%s'", tmpl);
		val = var_value(vars, open + 1, (size_t)(close - open - 1),
		    &known);
		if (!known)
			return werr_new(WEXIT_INPUT,
			    "unknown placeholder '%.*s' in '%s'",
			    (int)(close - open + 1), open, tmpl);
		if (val != NULL)
			buf_puts(out, val);
		p = close + 1;
	}
	buf_puts(out, p);
	return NULL;
}

char *
engine_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}


static void
argv_free(char **argv)
{
	size_t i;

	for (i = 0; argv != NULL && argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/* A NULL-terminated argv of templates expanded with vars (caller frees). */
static struct werr *
argv_expand(char ***out, const struct strlist *tmpl,
    const struct engine_vars *vars)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	char **argv = xcalloc(tmpl->n + 1, sizeof(*argv));
	size_t i;

	for (i = 0; i < tmpl->n; i++) {
		buf_reset(&b);
		if ((err = engine_expand(&b, tmpl->v[i], vars)) != NULL) {
			buf_free(&b);
			argv_free(argv);
			return err;
		}
		argv[i] = xstrdup(buf_cstr(&b));
	}
	buf_free(&b);
	*out = argv;
	return NULL;
}

void
engine_launch_free(struct launch *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < sizeof(l->vals) / sizeof(l->vals[0]); i++)
		buf_free(&l->vals[i]);
	free(l->adapter_dir);
	free(l->models_dir);
	free(l->model_path);
	free(l->model_dir);
	free(l->scratch);
	free(l->cwd);
	argv_free(l->argv);
	for (i = 0; i < l->nenv; i++)
		free(l->env[i]);
	free(l->env);
	for (i = 0; i < l->n_pre_start; i++)
		argv_free(l->pre_start[i].argv);
	free(l->pre_start);
	for (i = 0; i < l->n_stop; i++)
		argv_free(l->stop[i].argv);
	free(l->stop);
	memset(l, 0, sizeof(*l));
}

static void
add_env(struct launch *l, const char *name, const char *value)
{
	l->env = xrealloc(l->env, (l->nenv + 2) * sizeof(*l->env));
	l->env[l->nenv++] = xasprintf("%s=%s", name, value);
	l->env[l->nenv] = NULL;
}

/* A profile's weight location: absolute as given, else under models_dir. */
static char *
weights_path(const char *models_dir, const char *rel)
{
	if (rel == NULL)
		return NULL;
	if (rel[0] == '/')
		return xstrdup(rel);
	return path_join(models_dir, rel);
}

static struct werr *
steps_expand(struct launch_step **out, size_t *n,
    const struct adapter_step *steps, size_t nsteps,
    const struct engine_vars *vars)
{
	struct werr *err;
	size_t i;

	*out = xcalloc(nsteps + 1, sizeof(**out));
	*n = nsteps;
	for (i = 0; i < nsteps; i++) {
		(*out)[i].may_fail = steps[i].may_fail;
		(*out)[i].timeout_s = steps[i].timeout_s > 0 ?
		    steps[i].timeout_s : ADAPTER_STEP_TIMEOUT_S;
		if ((err = argv_expand(&(*out)[i].argv, &steps[i].argv,
		    vars)) != NULL)
			return err;
	}
	return NULL;
}

static void
vars_set(struct launch *l, const struct engine_params *p,
    const struct engine *e)
{
	const struct adapter *a = p->adapter;
	const struct adapter_split *sp = adapter_split(a, p->split);
	const struct profile_engine *pe = profile_engine(p->profile, a->name);
	long ctx = sp != NULL && sp->ctx > 0 ? sp->ctx : a->serve.ctx;

	buf_printf(&l->vals[0], "%d", e->port);
	if (ctx > 0)
		buf_printf(&l->vals[1], "%ld", ctx);
	buf_printf(&l->vals[2], "%u", p->concurrency);
	l->adapter_dir = engine_dir_of(a->path ? a->path : ".");
	if (p->own_dir != NULL) {
		/* an unreviewed run: its own folder, never the live ones */
		l->untrusted = 1;
		buf_printf(&l->vals[3], "%s/home", p->own_dir);
		buf_printf(&l->vals[4], "%s/logs", p->own_dir);
		l->scratch = path_join(p->own_dir, "scratch");
	} else {
		char *ld = engine_dir_of(p->log_path);

		buf_printf(&l->vals[3], "%s/home", p->env_dir);
		buf_puts(&l->vals[4], ld);
		free(ld);
		l->scratch = path_join(p->env_dir, "scratch");
	}
	l->models_dir = path_join(p->repo_root, ENGINE_MODELS_DIR);
	l->model_path = weights_path(l->models_dir, pe ? pe->file : NULL);
	l->model_dir = weights_path(l->models_dir, pe ? pe->dir : NULL);
	l->vars.port = buf_cstr(&l->vals[0]);
	l->vars.host = ENGINE_HOST;
	l->vars.model = e->model;
	l->vars.model_path = l->model_path;
	l->vars.model_dir = l->model_dir;
	l->vars.model_repo = pe != NULL ? pe->repo : NULL;
	l->vars.hf_id = p->profile != NULL ? p->profile->hf_id : NULL;
	l->vars.models_dir = l->models_dir;
	l->vars.ctx = buf_cstr(&l->vals[1]);
	l->vars.home = buf_cstr(&l->vals[3]);
	l->vars.env_dir = p->env_dir;
	l->vars.scratch = l->scratch;
	l->vars.log_dir = buf_cstr(&l->vals[4]);
	l->vars.adapter_dir = l->adapter_dir;
	l->vars.repo = p->repo_root;
	l->vars.concurrency = buf_cstr(&l->vals[2]);
	l->vars.split = p->split;
}

struct werr *
engine_launch_build(struct launch *l, const struct engine_params *p,
    const struct engine *e)
{
	const struct adapter *a = p->adapter;
	const struct adapter_split *sp = adapter_split(a, p->split);
	const char *home_dirs[] = { "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
	    "XDG_DATA_HOME", "HF_HOME" };
	const char *home_subs[] = { "", "/.cache", "/.config", "/.local/share",
	    "/.cache/huggingface" };
	struct strlist all = { NULL, 0 };
	struct werr *err;
	struct buf b = BUF_INIT;
	size_t i;

	memset(l, 0, sizeof(*l));
	vars_set(l, p, e);
	/* The server's argv: serve.argv, then the split's argv_extra. */
	all.v = xcalloc(a->serve.argv.n + (sp ? sp->argv_extra.n : 0) + 1,
	    sizeof(*all.v));
	for (i = 0; i < a->serve.argv.n; i++)
		all.v[all.n++] = a->serve.argv.v[i];
	for (i = 0; sp != NULL && i < sp->argv_extra.n; i++)
		all.v[all.n++] = sp->argv_extra.v[i];
	err = argv_expand(&l->argv, &all, &l->vars);
	free(all.v);
	if (err != NULL)
		return err;
	if (l->argv[0] == NULL)
		return werr_new(WEXIT_INPUT, "%s: 'serve.argv' is empty",
		    a->name);
	if ((err = steps_expand(&l->pre_start, &l->n_pre_start,
	    a->serve.pre_start, a->serve.n_pre_start, &l->vars)) != NULL ||
	    (err = steps_expand(&l->stop, &l->n_stop, a->serve.stop,
	    a->serve.n_stop, &l->vars)) != NULL)
		return err;
	if (a->serve.cwd != NULL) {
		if ((err = engine_expand(&b, a->serve.cwd, &l->vars)) != NULL) {
			buf_free(&b);
			return err;
		}
		l->cwd = buf_detach(&b);
	} else {
		l->cwd = xstrdup(p->repo_root);
	}
	if (a->serve.own_home) {
		/* real folders: a scratch build may have left links there */
		for (i = 0; i < sizeof(home_dirs) / sizeof(home_dirs[0]); i++) {
			buf_reset(&b);
			buf_printf(&b, "%s%s", l->vars.home, home_subs[i]);
			if ((err = mkdir_real(buf_cstr(&b))) != NULL) {
				buf_free(&b);
				return err;
			}
			add_env(l, home_dirs[i], buf_cstr(&b));
		}
	}
	for (i = 0; i < a->serve.n_env; i++) {
		buf_reset(&b);
		if ((err = engine_expand(&b, a->serve.env[i].value,
		    &l->vars)) != NULL) {
			buf_free(&b);
			return err;
		}
		add_env(l, a->serve.env[i].key, buf_cstr(&b));
	}
	buf_free(&b);
	return NULL;
}

char *
engine_argv_provenance(char **argv, const char *root, int port)
{
	struct buf b = BUF_INIT;
	size_t i, rl = root != NULL ? strlen(root) : 0, pl;
	char ps[16];
	const char *a;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	snprintf(ps, sizeof(ps), "%d", port);
	pl = strlen(ps);
	for (i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			buf_addch(&b, ' ');
		a = argv[i];
		if (port > 0 && strcmp(a, ps) == 0) {
			buf_puts(&b, "{port}");
			continue;
		}
		while (*a != '\0') {
			if (rl > 0 && strncmp(a, root, rl) == 0 &&
			    (a[rl] == '/' || a[rl] == '\0')) {
				buf_addch(&b, '.');
				a += rl;
			} else if (port > 0 && a[0] == ':' &&
			    strncmp(a + 1, ps, pl) == 0 &&
			    (a[pl + 1] < '0' || a[pl + 1] > '9')) {
				buf_puts(&b, ":{port}");
				a += pl + 1;
			} else
				buf_addch(&b, *a++);
		}
	}
	return buf_detach(&b);
}

char *
engine_join_argv(char **argv)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			buf_addch(&b, ' ');
		buf_puts(&b, argv[i]);
	}
	return buf_detach(&b);
}
