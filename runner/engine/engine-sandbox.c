/*
 * engine-sandbox.c - the sandbox around an engine whose adapter no
 * maintainer has approved (a smoke run of an agent's change, of a pull
 * request, triage's scratch runs): what it sees and the environment it
 * gets. See engine.h (sandbox_repo) and sandbox/sandbox.h for the rule.
 *
 * Everything shown is decided here, by warden, from paths warden made:
 * never from the adapter or the profile, which are the untrusted part.
 * Builds argv and strings only; never prints, and starts nothing but
 * the sandbox's probe (engine_sandbox_decide(), which triage's scratch
 * builds share).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "beneath.h"
#include "engine-private.h"
#include "sandbox/scratch.h"
#include "util.h"

#define PYVENV_CFG_MAX 4096

/* Where the Python of env_dir's venv lives (its pyvenv.cfg "home", one
 * folder up: the installation), or NULL. The file is the venv's, which
 * a scratch build wrote: read through no link, and only a real Python
 * installation that shows nothing hidden is taken
 * (sandbox_python_installation()). */
static char *
venv_python(const char *env_dir)
{
	struct buf b = BUF_INIT;
	struct werr *err = file_read_beneath(&b, env_dir, "venv/pyvenv.cfg",
	    PYVENV_CFG_MAX);
	char *home = NULL, *line, *save = NULL, *slash;

	if (err != NULL || b.len == 0) {
		werr_free(err);	/* no venv: nothing more to show */
		goto out;
	}
	for (line = strtok_r(b.data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		char *k = line, *v;

		if (eq == NULL)
			continue;
		*eq = '\0';
		v = eq + 1;
		while (*k == ' ')
			k++;
		while (eq > k && eq[-1] == ' ')
			*--eq = '\0';
		while (*v == ' ')
			v++;
		if (strcmp(k, "home") == 0 && v[0] == '/') {
			home = xstrdup(v);
			if ((slash = strrchr(home, '/')) != NULL && slash != home)
				*slash = '\0';
			break;
		}
	}
out:
	if (home != NULL && !sandbox_python_installation(home)) {
		free(home);
		home = NULL;
	}
	buf_free(&b);
	return home;
}

static void
env_push(char ***env, size_t *n, char *s)
{
	*env = xrealloc(*env, (*n + 2) * sizeof(**env));
	(*env)[(*n)++] = s;
	(*env)[*n] = NULL;
}

static int
env_has(char *const *env, size_t n, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < n; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return 1;
	return 0;
}

static void
build_env(struct launch *l, const struct sandbox_spec *spec)
{
	static const char *const pass[] = { "LANG", "LC_ALL", "LC_CTYPE",
	    "TZ" };
	size_t n = 0, i;

	env_push(&l->env_all, &n, sandbox_env_path(spec));
	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		if (getenv(pass[i]) != NULL)
			env_push(&l->env_all, &n, xasprintf("%s=%s", pass[i],
			    getenv(pass[i])));
	for (i = 0; i < l->nenv; i++)
		env_push(&l->env_all, &n, xstrdup(l->env[i]));
	if (!env_has(l->env_all, n, "HOME"))
		env_push(&l->env_all, &n, xasprintf("HOME=%s", l->vars.home));
	if (!env_has(l->env_all, n, "TMPDIR"))
		env_push(&l->env_all, &n, xasprintf("TMPDIR=%s", l->scratch));
}

struct werr *
engine_sandbox_decide(const char **kind, const char *mode, const char *what)
{
	struct sandbox_caps caps;
	struct werr *err;

	*kind = NULL;
	if (strcmp(mode, "off") == 0)
		return NULL;
	if ((err = sandbox_probe(&caps)) == NULL) {
		*kind = caps.kind;
		return NULL;
	}
	if (strcmp(mode, "required") == 0)
		return werr_wrap(err, "policy requires a sandbox for %s "
		    "('agent.sandbox' is \"required\")", what);
	werr_free(err);
	return NULL;
}

struct werr *
engine_sandbox_build(struct launch *l, const struct engine_params *p)
{
	struct sandbox_spec spec;
	struct werr *err;
	char *python = venv_python(p->env_dir);
	char *git = path_join(p->repo_root, ".git");
	char *own = path_join(p->repo_root, ".warden");

	memset(&spec, 0, sizeof(spec));
	if (p->own_dir == NULL)
		return werr_new(WEXIT_ENV, "an unreviewed engine needs a "
		    "folder of its own to write");
	/* What is shown writable is a real folder, never a link a run
	 * left there to somewhere else */
	if ((err = mkdir_real(p->own_dir)) != NULL ||
	    (err = mkdir_real(l->vars.home)) != NULL ||
	    (err = mkdir_real(l->vars.log_dir)) != NULL)
		goto out;
	sandbox_spec_hide(&spec, p->sandbox_repo);
	sandbox_spec_bind(&spec, p->repo_root, NULL, SANDBOX_READ);
	sandbox_spec_bind(&spec, git, NULL, SANDBOX_HIDE);
	sandbox_spec_bind(&spec, own, NULL, SANDBOX_HIDE);
	if (python != NULL)
		sandbox_spec_bind(&spec, python, NULL, SANDBOX_READ);
	sandbox_spec_bind(&spec, l->models_dir, NULL, SANDBOX_READ);
	/* The live environment read-only, its HOME included: what the run
	 * writes goes to its own folder, never where an approved run
	 * looks. The log is not shown: the server writes it through the
	 * descriptor it inherits. */
	sandbox_spec_bind(&spec, p->env_dir, NULL, SANDBOX_READ);
	sandbox_spec_bind(&spec, p->own_dir, NULL, SANDBOX_WRITE);
	spec.cwd = xstrdup(l->cwd);
	spec.net = SANDBOX_NET_HOST;
	spec.run_dir = xstrdup(p->env_dir);
	if ((err = sandbox_prepare(&l->sb, &spec)) != NULL)
		goto out;
	build_env(l, &spec);
out:
	sandbox_spec_free(&spec);
	free(python);
	free(git);
	free(own);
	return err;
}

void
engine_sandbox_free(struct launch *l)
{
	size_t i;

	sandbox_free(&l->sb);
	for (i = 0; l->env_all != NULL && l->env_all[i] != NULL; i++)
		free(l->env_all[i]);
	free(l->env_all);
	l->env_all = NULL;
}

void
engine_spawn_opts(struct spawn_opts *so, char ***full,
    const struct launch *l, char **argv)
{
	size_t n = 0, i;

	*full = NULL;
	so->argv = argv;
	so->env_add = l->env;
	so->cwd = l->cwd;
	if (l->untrusted)
		so->file_size_max = SCRATCH_FILE_MAX;
	if (l->sb.prefix == NULL)
		return;
	while (argv[n] != NULL)
		n++;
	*full = xcalloc(l->sb.nprefix + n + 1, sizeof(**full));
	for (i = 0; i < l->sb.nprefix; i++)
		(*full)[i] = l->sb.prefix[i];
	for (i = 0; i < n; i++)
		(*full)[l->sb.nprefix + i] = argv[i];
	so->argv = *full;
	so->env = l->env_all;
	so->env_add = NULL;
}
