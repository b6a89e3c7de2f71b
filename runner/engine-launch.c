/*
 * engine-launch.c - the command line and environment of one engine server
 * start: placeholders of the adapter's templates expanded from the
 * adapter, the profile, the split and the concurrency; HOME and caches
 * under the engine's own directory. See engine.h and engine-private.h.
 *
 * Builds strings only: never starts, waits for or prints anything.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
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
		V(port), V(host), V(model), V(model_path), V(ctx), V(home),
		V(env_dir), V(log_dir), V(adapter_dir), V(repo),
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


void
engine_launch_free(struct launch *l)
{
	size_t i;

	for (i = 0; i < 5; i++)
		buf_free(&l->vals[i]);
	free(l->adapter_dir);
	for (i = 0; i < l->nargv; i++)
		free(l->argv[i]);
	for (i = 0; i < l->nenv; i++)
		free(l->env[i]);
	free(l->argv);
	free(l->env);
}

static void
add_env(struct launch *l, const char *name, const char *value)
{
	l->env = xrealloc(l->env, (l->nenv + 2) * sizeof(*l->env));
	l->env[l->nenv++] = xasprintf("%s=%s", name, value);
	l->env[l->nenv] = NULL;
}

static struct werr *
add_arg(struct launch *l, const char *tmpl)
{
	struct buf b = BUF_INIT;
	struct werr *err;

	if ((err = engine_expand(&b, tmpl, &l->vars)) != NULL) {
		buf_free(&b);
		return err;
	}
	l->argv = xrealloc(l->argv, (l->nargv + 2) * sizeof(*l->argv));
	l->argv[l->nargv++] = buf_detach(&b);
	l->argv[l->nargv] = NULL;
	return NULL;
}

struct werr *
engine_launch_build(struct launch *l, const struct engine_params *p,
    const struct engine *e)
{
	const struct adapter *a = p->adapter;
	const struct adapter_split *sp = adapter_split(a, p->split);
	const struct profile_engine *pe = profile_engine(p->profile, a->name);
	const char *home_dirs[] = { "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
	    "XDG_DATA_HOME", "HF_HOME" };
	const char *home_subs[] = { "", "/.cache", "/.config", "/.local/share",
	    "/.cache/huggingface" };
	struct werr *err;
	struct buf b = BUF_INIT;
	size_t i;
	long ctx;

	memset(l, 0, sizeof(*l));
	ctx = sp != NULL && sp->ctx > 0 ? sp->ctx : a->serve.ctx;
	buf_printf(&l->vals[0], "%d", e->port);
	if (ctx > 0)
		buf_printf(&l->vals[1], "%ld", ctx);
	buf_printf(&l->vals[2], "%u", p->concurrency);
	buf_printf(&l->vals[3], "%s/home", p->env_dir);
	l->adapter_dir = engine_dir_of(a->path ? a->path : ".");
	{
		char *ld = engine_dir_of(p->log_path);

		buf_puts(&l->vals[4], ld);
		free(ld);
	}
	l->vars.port = buf_cstr(&l->vals[0]);
	l->vars.host = ENGINE_HOST;
	l->vars.model = e->model;
	l->vars.model_path = pe != NULL ? pe->file : NULL;
	l->vars.ctx = buf_cstr(&l->vals[1]);
	l->vars.home = buf_cstr(&l->vals[3]);
	l->vars.env_dir = p->env_dir;
	l->vars.log_dir = buf_cstr(&l->vals[4]);
	l->vars.adapter_dir = l->adapter_dir;
	l->vars.repo = p->repo_root;
	l->vars.concurrency = buf_cstr(&l->vals[2]);
	l->vars.split = p->split;
	for (i = 0; i < a->serve.argv.n; i++)
		if ((err = add_arg(l, a->serve.argv.v[i])) != NULL)
			return err;
	for (i = 0; sp != NULL && i < sp->argv_extra.n; i++)
		if ((err = add_arg(l, sp->argv_extra.v[i])) != NULL)
			return err;
	if (l->nargv == 0)
		return werr_new(WEXIT_INPUT, "%s: 'serve.argv' is empty",
		    a->name);
	if (a->serve.own_home) {
		for (i = 0; i < sizeof(home_dirs) / sizeof(home_dirs[0]); i++) {
			buf_reset(&b);
			buf_printf(&b, "%s%s", l->vars.home, home_subs[i]);
			if ((err = mkdir_p(buf_cstr(&b))) != NULL) {
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
