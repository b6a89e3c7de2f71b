/*
 * launch.c - start the agent: its argv from the trusted policy's
 * template, a scrubbed environment, cwd in its worktree, output to the
 * run's log, inside the sandbox when there is one; stop it at the time
 * limit and reap every process it left. See agent-private.h.
 *
 * Nothing the agent controls reaches warden's own environment or argv:
 * placeholders expand to paths warden made and to the task's names.
 * Never prints.
 */
#include "config.h"

#include <sys/wait.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent-private.h"
#include "engine.h"
#include "sandbox/sandbox.h"
#include "spawn.h"
#include "util.h"

#define AGENT_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define AGENT_STOP_GRACE_MS 2000

struct expand_arg {
	const struct agent_paths *p;
	const struct agent_task *t;
};

/* The value of placeholder name (policy_agent_expand checked it). */
static const char *
placeholder(void *arg, const char *name, size_t n)
{
	const struct expand_arg *a = arg;
	const struct agent_paths *p = a->p;
	const struct agent_task *t = a->t;

#define IS(s) (n == strlen(s) && strncmp(name, s, n) == 0)
	if (IS("prompt_file"))
		return p->prompt;
	if (IS("problem_file"))
		return p->problem;
	if (IS("worktree"))
		return p->worktree;
	if (IS("run_dir"))
		return p->run_dir;
	if (IS("home"))
		return p->home;
	if (IS("tmp"))
		return p->tmp;
	if (IS("task"))
		return t->kind;
	if (IS("engine"))
		return strcmp(t->kind, "engine") == 0 ? t->ref : "";
	if (IS("incident"))
		return strcmp(t->kind, "incident") == 0 ? t->ref : "";
#undef IS
	return NULL;
}

struct werr *
agent_argv(char ***argv_out, const struct policy *pol,
    const struct agent_paths *p, const struct agent_task *t)
{
	const struct strlist *cmd = &pol->agent.command;
	char **argv = xcalloc(cmd->n + 1, sizeof(*argv));
	struct buf b = BUF_INIT;
	struct expand_arg ea = { p, t };
	struct werr *err;
	size_t i;

	*argv_out = NULL;
	for (i = 0; i < cmd->n; i++) {
		buf_reset(&b);
		if ((err = policy_agent_expand(&b, cmd->v[i], placeholder,
		    &ea)) != NULL) {
			buf_free(&b);
			agent_argv_free(argv);
			return werr_wrap(err, "policy/warden.json: "
			    "'agent.command'");
		}
		buf_puts(&b, "");
		argv[i] = buf_detach(&b);
	}
	buf_free(&b);
	*argv_out = argv;
	return NULL;
}

void
agent_argv_free(char **argv)
{
	size_t i;

	for (i = 0; argv != NULL && argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/* The ports of the engines a sandboxed agent may start itself: its smoke
 * campaign runs one at a time. */
#define AGENT_ENGINE_PORTS 16

/* Names warden sets itself; policy cannot pass them through. */
static int
reserved(const char *name)
{
	return strcmp(name, "HOME") == 0 || strcmp(name, "TMPDIR") == 0 ||
	    str_startswith(name, "GIT_") || str_startswith(name, "WARDEN_");
}

/* Does set hold NAME=...? */
static int
env_set_names(const struct strlist *set, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < set->n; i++)
		if (strncmp(set->v[i], name, n) == 0 && set->v[i][n] == '=')
			return 1;
	return 0;
}

char **
agent_env(const struct policy *pol, const struct agent_paths *p)
{
	const struct strlist *names = &pol->agent.env;
	const struct strlist *set = &pol->agent.env_set;
	char **env = xcalloc(names->n + set->n + 16, sizeof(*env));
	size_t n = 0, i;
	int have_path = 0, lo, hi;

	for (i = 0; i < names->n; i++) {
		const char *v = getenv(names->v[i]);

		if (reserved(names->v[i]) || v == NULL ||
		    env_set_names(set, names->v[i]))
			continue;
		if (strcmp(names->v[i], "PATH") == 0)
			have_path = 1;
		env[n++] = xasprintf("%s=%s", names->v[i], v);
	}
	/* What the preset sets wins over what warden's caller has. */
	for (i = 0; i < set->n; i++)
		env[n++] = xstrdup(set->v[i]);
	if (!have_path)
		env[n++] = xstrdup("PATH=" AGENT_DEFAULT_PATH);
	env[n++] = xasprintf("HOME=%s", p->home);
	env[n++] = xasprintf("TMPDIR=%s", p->tmp);
	env[n++] = xasprintf("WARDEN_AGENT_RUN=%lld", (long long)p->id);
	/* A smoke campaign the agent runs with warden takes its lock there:
	 * the machine's (in /tmp) is hidden from it. */
	env[n++] = xasprintf("WARDEN_LOCK_DIR=%s", p->tmp);
	/* Under "https" its engines serve on ports of their own, which the
	 * rule lets it reach (sandbox.h: SANDBOX_PORTS_ENV). */
	if (pol->agent.network != NULL &&
	    strcmp(pol->agent.network, "https") == 0 &&
	    engine_port_range(&lo, &hi, AGENT_ENGINE_PORTS) == NULL)
		env[n++] = xasprintf("%s=%d-%d", SANDBOX_PORTS_ENV, lo, hi);
	env[n++] = xstrdup("GIT_CONFIG_NOSYSTEM=1");
	env[n++] = xstrdup("GIT_CONFIG_GLOBAL=/dev/null");
	/* Hooks off, whatever a config the agent could reach says. */
	env[n++] = xstrdup("GIT_CONFIG_COUNT=1");
	env[n++] = xstrdup("GIT_CONFIG_KEY_0=core.hooksPath");
	env[n++] = xstrdup("GIT_CONFIG_VALUE_0=/dev/null");
	env[n] = NULL;
	return env;
}

/* The PATH the agent runs with. */
static const char *
agent_path(char *const *env)
{
	size_t i;

	for (i = 0; env[i] != NULL; i++)
		if (str_startswith(env[i], "PATH="))
			return env[i] + 5;
	return AGENT_DEFAULT_PATH;
}

char *
agent_program_path(const char *prog, char *const *env)
{
	const char *s, *colon;
	char real[PATH_MAX];

	if (strchr(prog, '/') != NULL)
		return access(prog, X_OK) == 0 && realpath(prog, real) != NULL ?
		    xstrdup(real) : NULL;
	for (s = agent_path(env);; s = colon + 1) {
		char *dir, *full;
		int ok;

		colon = strchr(s, ':');
		dir = colon ? xstrndup(s, (size_t)(colon - s)) : xstrdup(s);
		full = path_join(dir[0] ? dir : ".", prog);
		ok = access(full, X_OK) == 0 && realpath(full, real) != NULL;
		free(dir);
		free(full);
		if (ok)
			return xstrdup(real);
		if (colon == NULL)
			return NULL;
	}
}

struct werr *
agent_program_check(char *const *argv, char *const *env)
{
	char *found = agent_program_path(argv[0], env);

	if (found != NULL) {
		free(found);
		return NULL;
	}
	if (strchr(argv[0], '/') != NULL)
		return werr_errno("cannot run the agent program", argv[0]);
	return werr_new(WEXIT_ENV, "the agent program '%s' is not on the "
	    "agent's PATH (%s)", argv[0], agent_path(env));
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct werr *
agent_launch(struct agent_exec *ex, char *const *argv, char *const *env,
    const struct sandbox *sb, const struct policy *pol,
    const struct agent_paths *p)
{
	struct spawn_opts so = { 0 };
	struct spawn_proc proc;
	struct werr *err, *stop;
	char **full = NULL;
	size_t n = 0, i;
	uint64_t deadline;

	memset(ex, 0, sizeof(*ex));
	while (argv[n] != NULL)
		n++;
	full = xcalloc((sb ? sb->nprefix : 0) + n + 1, sizeof(*full));
	for (i = 0; sb != NULL && i < sb->nprefix; i++)
		full[i] = sb->prefix[i];
	memcpy(full + i, argv, n * sizeof(*argv));
	so.argv = full;
	so.env = env;
	so.cwd = p->worktree;
	so.log_path = p->log;
	ex->started_ns = mono_ns();
	deadline = ex->started_ns + (uint64_t)(pol->agent.time_limit_s * 1e9);
	if ((err = spawn_start(&proc, &so)) != NULL) {
		free(full);
		return err;
	}
	while (!spawn_poll(&proc)) {
		if (mono_ns() >= deadline) {
			ex->timed_out = 1;
			break;
		}
		sleep_ms(20);
	}
	/* Whatever is left of its group goes now; then what left it. */
	stop = spawn_stop(&proc, AGENT_STOP_GRACE_MS);
	err = spawn_reap_descendants(&ex->reaped);
	ex->duration_s = (double)(mono_ns() - ex->started_ns) / 1e9;
	ex->status = proc.status;
	if (ex->timed_out) {
		char *line = xasprintf("\nwarden: the agent ran past its time "
		    "limit of %.0f s and was killed\n", pol->agent.time_limit_s);

		werr_free(file_append(p->log, line, strlen(line)));
		free(line);
	}
	free(full);
	if (stop != NULL) {
		werr_free(err);
		return stop;
	}
	return err;
}

json_t *
agent_exec_json(const struct agent_exec *ex)
{
	struct buf d = BUF_INIT;
	json_t *o;

	spawn_status_describe(&d, ex->status);
	o = json_pack("{s:s, s:b, s:f, s:i}", "status", buf_cstr(&d),
	    "timed_out", ex->timed_out, "duration_s", ex->duration_s,
	    "reaped", (int)ex->reaped);
	if (WIFEXITED(ex->status))
		json_object_set_new(o, "exit_code",
		    json_integer(WEXITSTATUS(ex->status)));
	else if (WIFSIGNALED(ex->status))
		json_object_set_new(o, "signal",
		    json_integer(WTERMSIG(ex->status)));
	buf_free(&d);
	return o;
}
