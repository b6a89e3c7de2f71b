/*
 * run.c - running the programs of the update step (shims, builds,
 * fetch_model, --version probes) through spawn.h, each to its end under
 * a deadline with its output in the engine's update log (in the sandbox
 * of an untrusted build: scratchbox.c), plus the small helpers the
 * other files share. Never prints.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "sandbox/scratch.h"
#include "spawn.h"
#include "update-private.h"
#include "util.h"

#define UPDATE_LOG_TAIL_BYTES 2000
#define UPDATE_STOP_GRACE_MS 2000

void
update_log_note(const char *log_path, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	char now[40];
	va_list ap;

	if (log_path == NULL)
		return;
	utc_now_iso(now, sizeof(now));
	buf_printf(&b, "== %s ", now);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	buf_addch(&b, '\n');
	if ((err = file_append(log_path, b.data, b.len)) != NULL)
		werr_free(err);	/* the log is a courtesy; the run goes on */
	buf_free(&b);
}

static void
argv_text(struct buf *out, char *const *argv)
{
	size_t i;

	for (i = 0; argv[i] != NULL; i++)
		buf_printf(out, "%s%s", i ? " " : "", argv[i]);
}

/* Does the line read as a compiler's or a build tool's error? */
static int
error_line(const char *line, size_t len)
{
	static const char *const marks[] = { ": error", ": fatal error",
	    "CMake Error", "error:", "Error:", "ERROR:", NULL };
	const char *const *m;
	size_t k;

	for (m = marks; *m != NULL; m++) {
		k = strlen(*m);
		if ((*m)[0] == ':' || strncmp(*m, "CMake", 5) == 0) {
			if (len >= k && memmem(line, len, *m, k) != NULL)
				return 1;
		} else if (len >= k && strncmp(line, *m, k) == 0)
			return 1;
	}
	return 0;
}

/*
 * What the failure's message quotes of the output since offset before:
 * the first error line and what follows (UPDATE_LOG_TAIL_BYTES at most),
 * then the last lines when they were not in it; else the last lines.
 */
static void
failure_excerpt(struct buf *out, const char *log_path, off_t before)
{
	struct buf all = BUF_INIT;
	const char *p, *end, *nl, *first = NULL;
	struct stat sb;
	size_t n;

	if (file_read_tail(&all, log_path, 64u << 20) != NULL) {
		engine_log_tail(out, log_path, UPDATE_LOG_TAIL_BYTES);
		return;
	}
	p = all.data;
	end = all.data + all.len;
	if (stat(log_path, &sb) == 0 && sb.st_size - before < (off_t)all.len)
		p = end - (sb.st_size - before);	/* this program's part */
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (first == NULL && error_line(p, (size_t)(nl - p)))
			first = p;
		if (nl == end)
			break;
	}
	if (first == NULL) {
		engine_log_tail(out, log_path, UPDATE_LOG_TAIL_BYTES);
		buf_free(&all);
		return;
	}
	n = (size_t)(end - first);
	if (n <= UPDATE_LOG_TAIL_BYTES)
		buf_add(out, first, n);
	else {
		n = UPDATE_LOG_TAIL_BYTES * 3 / 4;
		while (n > 0 && first[n - 1] != '\n')
			n--;
		if (n == 0)
			n = UPDATE_LOG_TAIL_BYTES * 3 / 4;
		buf_add(out, first, n);
		buf_puts(out, "[...]\n");
		p = end - UPDATE_LOG_TAIL_BYTES / 4;
		while (p < end && p[-1] != '\n')
			p++;
		buf_add(out, p, (size_t)(end - p));
	}
	buf_free(&all);
}

struct werr *
update_exec(const struct update_ctx *ctx, const char *what,
    char *const *argv, const char *cwd, const char *log_path,
    const char *stdout_path, double timeout_s)
{
	return update_exec_env(ctx, what, argv, cwd, log_path, stdout_path,
	    timeout_s, NULL);
}

struct werr *
update_exec_env(const struct update_ctx *ctx, const char *what,
    char *const *argv, const char *cwd, const char *log_path,
    const char *stdout_path, double timeout_s, char *const *env_add)
{
	const struct update_box *box = ctx != NULL ? ctx->box : NULL;
	struct spawn_opts o;
	struct buf cmd = BUF_INIT, why = BUF_INIT, tail = BUF_INIT;
	struct werr *err;
	char **argv_full = NULL, **env_full = NULL;
	int status = 0, timed_out = 0;
	off_t before = 0;
	struct stat sb;

	argv_text(&cmd, argv);
	update_log_note(log_path, "%s: %s%s", what, buf_cstr(&cmd),
	    box != NULL ? box->note : "");
	if (log_path != NULL && stat(log_path, &sb) == 0)
		before = sb.st_size;
	memset(&o, 0, sizeof(o));
	update_box_spawn(&o, &argv_full, &env_full, box, argv, env_add, cwd);
	o.log_path = log_path;
	if (ctx != NULL && ctx->untrusted)
		o.file_size_max = SCRATCH_FILE_MAX;	/* a scratch build's */
	o.stdout_path = stdout_path;
	err = spawn_run(&o, (unsigned)(timeout_s * 1000.0), UPDATE_STOP_GRACE_MS,
	    &status, &timed_out);
	free(argv_full);
	free(env_full);
	if (err != NULL) {
		err = werr_wrap(err, "%s", what);
		err->exit = WEXIT_PROBLEM;
		goto out;
	}
	if (timed_out)
		buf_printf(&why, "did not finish within %g s and was stopped",
		    timeout_s);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		buf_puts(&why, "failed: ");
		spawn_status_describe(&why, status);
	} else
		goto out;
	if (log_path != NULL && stat(log_path, &sb) == 0 && sb.st_size > before)
		failure_excerpt(&tail, log_path, before);
	err = werr_new(WEXIT_PROBLEM, "%s (%s) %s%s%s", what, buf_cstr(&cmd),
	    buf_cstr(&why), tail.len ? "; log tail:\n" : "", buf_cstr(&tail));
out:
	buf_free(&cmd);
	buf_free(&why);
	buf_free(&tail);
	return err;
}

char *
update_program_find(const char *program)
{
	const char *path = getenv("PATH"), *p, *colon;
	char *cand;

	if (strchr(program, '/') != NULL)
		return access(program, X_OK) == 0 ? xstrdup(program) : NULL;
	for (p = path; p != NULL && *p != '\0'; p = colon ? colon + 1 : NULL) {
		colon = strchr(p, ':');
		cand = xasprintf("%.*s/%s", colon ? (int)(colon - p) :
		    (int)strlen(p), p, program);
		if (access(cand, X_OK) == 0 && !path_is_dir(cand))
			return cand;
		free(cand);
		if (colon == NULL)
			break;
	}
	return NULL;
}

char *
update_program_version(const struct update_ctx *ctx, const char *program,
    const char *log_path)
{
	char *argv[] = { (char *)program, "--version", NULL };
	char *out_path = NULL, *line = NULL, *nl;
	struct buf b = BUF_INIT;
	struct werr *err;

	if (log_path == NULL)
		return NULL;
	out_path = xasprintf("%s.version", log_path);
	if ((err = update_exec(ctx, "version probe", argv, NULL, log_path,
	    out_path, 30)) == NULL && (err = file_read_max(&b, out_path,
	    FILE_MAX_CONFIG)) == NULL) {
		nl = strchr(buf_cstr(&b), '\n');
		line = xstrndup(buf_cstr(&b), nl ? (size_t)(nl - b.data) : b.len);
		if (line[0] == '\0') {
			free(line);
			line = NULL;
		}
	}
	werr_free(err);
	(void)unlink(out_path);
	free(out_path);
	buf_free(&b);
	return line;
}

char *
update_weights_path(const char *repo_root, const char *rel)
{
	char *dir, *path;

	if (rel == NULL)
		return NULL;
	if (rel[0] == '/')
		return xstrdup(rel);
	dir = path_join(repo_root, ENGINE_MODELS_DIR);
	path = path_join(dir, rel);
	free(dir);
	return path;
}

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}

struct werr *
update_expand_argv(char ***out, const struct strlist *tmpl,
    const struct adapter *a, const char *repo_root, const char *env_dir,
    const struct profile *prof, const struct profile_engine *pe)
{
	struct engine_vars vars;
	struct buf b = BUF_INIT;
	char *home = path_join(env_dir, "home");
	char *adir = dir_of(a->path != NULL ? a->path : ".");
	char *adapter_dir = adir[0] == '/' ? xstrdup(adir) :
	    path_join(repo_root, adir);
	char *models_dir = path_join(repo_root, ENGINE_MODELS_DIR);
	char *model_path = update_weights_path(repo_root, pe ? pe->file : NULL);
	char *model_dir = update_weights_path(repo_root, pe ? pe->dir : NULL);
	struct werr *err = NULL;
	char **argv;
	size_t i;

	memset(&vars, 0, sizeof(vars));
	vars.host = "127.0.0.1";
	vars.model = pe != NULL ? pe->model : NULL;
	vars.model_path = model_path;
	vars.model_dir = model_dir;
	vars.model_repo = pe != NULL ? pe->repo : NULL;
	vars.hf_id = prof != NULL ? prof->hf_id : NULL;
	vars.models_dir = models_dir;
	vars.home = home;
	vars.env_dir = env_dir;
	vars.adapter_dir = adapter_dir;
	vars.repo = repo_root;
	argv = xcalloc(tmpl->n + 1, sizeof(*argv));
	for (i = 0; i < tmpl->n && err == NULL; i++) {
		buf_reset(&b);
		if ((err = engine_expand(&b, tmpl->v[i], &vars)) == NULL)
			argv[i] = xstrdup(buf_cstr(&b));
	}
	buf_free(&b);
	free(models_dir);
	free(model_path);
	free(model_dir);
	free(home);
	free(adir);
	free(adapter_dir);
	if (err != NULL) {
		update_argv_free(argv);
		return err;
	}
	*out = argv;
	return NULL;
}

void
update_argv_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

