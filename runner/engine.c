/*
 * engine.c - start, watch and stop one engine server. See engine.h.
 *
 * The health and model checks are plain libcurl easy requests to
 * 127.0.0.1 with short timeouts; between them the process is polled, so a
 * server that dies while starting is seen at once. Never prints; never
 * leaves a process behind (engine_free stops what engine_start started).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "engine.h"
#include "memsample.h"
#include "util.h"

#define ENGINE_HOST "127.0.0.1"
#define LOG_TAIL_BYTES 2048

static const char *const state_names[] = {
	"starting", "ready", "server_crash", "not_ready", "wrong_model",
	"port_conflict", "stopped",
};

const char *
engine_state_name(enum engine_state state)
{
	if ((size_t)state >= sizeof(state_names) / sizeof(state_names[0]))
		return "unknown";
	return state_names[state];
}

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

struct werr *
engine_free_port(int *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return werr_errno("socket", NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) == -1) {
		close(fd);
		return werr_errno("bind", ENGINE_HOST);
	}
	close(fd);
	*port = ntohs(sa.sin_port);
	return NULL;
}

/* Does anything accept connections on 127.0.0.1:port right now? */
static int
port_answers(int port)
{
	struct sockaddr_in sa;
	int fd, r;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return r == 0;
}

void
engine_log_tail(struct buf *out, const char *path, size_t max_bytes)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	const char *start, *nl;
	size_t from;

	if ((err = file_read(&b, path)) != NULL) {
		werr_free(err);
		return;
	}
	/* By length: file_read of an empty file leaves no NUL. */
	if (b.len == 0)
		goto out;
	start = b.data;
	if (b.len > max_bytes) {
		start = b.data + b.len - max_bytes;
		if ((nl = memchr(start, '\n', max_bytes)) != NULL &&
		    nl + 1 < b.data + b.len)
			start = nl + 1;
	}
	from = out->len;
	buf_add(out, start, (size_t)(b.data + b.len - start));
	text_make_utf8(out, from);	/* it goes into JSON */
out:
	buf_free(&b);
}

static void
set_state(struct engine *e, enum engine_state state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_state(struct engine *e, enum engine_state state, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	e->state = state;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (state == ENGINE_CRASHED || state == ENGINE_NOT_READY) {
		buf_puts(&b, "; log tail:\n");
		engine_log_tail(&b, e->log_path, LOG_TAIL_BYTES);
	}
	free(e->detail);
	e->detail = buf_detach(&b);
}

int
engine_alive(struct engine *e)
{
	struct buf why = BUF_INIT;

	if (e->proc.pid == 0 || e->state == ENGINE_CRASHED)
		return 0;
	if (!spawn_poll(&e->proc))
		return 1;
	buf_puts(&why, "server exited: ");
	spawn_status_describe(&why, e->proc.status);
	set_state(e, ENGINE_CRASHED, "%s", buf_cstr(&why));
	buf_free(&why);
	return 0;
}

uint64_t
engine_log_quiet_ns(struct engine *e, uint64_t now_ns)
{
	struct stat st;

	if (stat(e->log_path, &st) == 0 && st.st_size != e->log_size) {
		e->log_size = st.st_size;
		e->log_changed_ns = now_ns;
	}
	return now_ns > e->log_changed_ns ? now_ns - e->log_changed_ns : 0;
}

static size_t
collect(char *data, size_t size, size_t n, void *arg)
{
	buf_add(arg, data, size * n);
	return size * n;
}

/* GET base_url + path; 200 and the body, or 0 with the status or -1. */
static long
http_get(const struct engine *e, const char *path, struct buf *body)
{
	char *url = xasprintf("%s%s", e->base_url, path);
	long status = -1;
	CURL *c;

	if ((c = curl_easy_init()) == NULL) {
		free(url);
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	free(url);
	return status;
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void
wait_healthy(struct engine *e, const char *health, double timeout_s)
{
	uint64_t deadline = e->started_ns + (uint64_t)(timeout_s * 1e9);
	struct buf body = BUF_INIT;
	long status = -1;

	for (;;) {
		if (!engine_alive(e))
			break;
		buf_reset(&body);
		status = http_get(e, health, &body);
		if (status == 200) {
			e->ready_ns = mono_ns();
			e->state = ENGINE_READY;
			break;
		}
		if (mono_ns() >= deadline) {
			set_state(e, ENGINE_NOT_READY,
			    "'%s' did not answer 200 within %.0f s (last: %ld)",
			    health, timeout_s, status);
			break;
		}
		sleep_ms(50);
	}
	buf_free(&body);
}

/* Ask /v1/models; record what it serves; a mismatch is wrong_model. */
static void
check_model(struct engine *e, const char *path)
{
	struct buf body = BUF_INIT;
	json_t *doc = NULL, *item;
	json_error_t jerr;
	const char *id, *first = NULL;
	size_t i;
	long status;

	status = http_get(e, path, &body);
	if (status != 200) {
		set_state(e, ENGINE_WRONG_MODEL, "'%s' answered %ld", path,
		    status);
		goto out;
	}
	doc = json_loadb(body.data ? body.data : "", body.len, 0, &jerr);
	json_array_foreach(json_object_get(doc, "data"), i, item) {
		if ((id = json_string_value(json_object_get(item, "id"))) == NULL)
			continue;
		if (first == NULL)
			first = id;
		if (strcmp(id, e->model) == 0) {
			e->served_model = xstrdup(id);
			goto out;
		}
	}
	e->served_model = xstrdup(first ? first : "");
	set_state(e, ENGINE_WRONG_MODEL, "serves '%s', the profile names '%s'",
	    first ? first : "(nothing)", e->model);
out:
	json_decref(doc);
	buf_free(&body);
}

static void
check_port_owner(struct engine *e)
{
	if (memsample_tree_listens(e->proc.pid, e->port) == 0)
		set_state(e, ENGINE_PORT_CONFLICT,
		    "port %d is not held by the server's process tree", e->port);
}

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}

struct launch {
	struct buf vals[5];	/* port, ctx, concurrency, home, log_dir */
	char *adapter_dir;
	struct engine_vars vars;
	char **argv;
	char **env;
	size_t nargv, nenv;
};

static void
launch_free(struct launch *l)
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

static struct werr *
launch_build(struct launch *l, const struct engine_params *p,
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
	l->adapter_dir = dir_of(a->path ? a->path : ".");
	{
		char *ld = dir_of(p->log_path);

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

static char *
join_argv(char **argv)
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

static struct werr *
engine_launch(struct engine *e, const struct engine_params *p)
{
	struct spawn_opts so = { 0 };
	struct launch l;
	struct buf cwd = BUF_INIT;
	struct werr *err;
	char *logdir = dir_of(p->log_path);

	err = mkdir_p(logdir);
	free(logdir);
	if (err == NULL)
		err = mkdir_p(p->env_dir);
	if (err != NULL)
		return err;
	if ((err = launch_build(&l, p, e)) != NULL)
		goto out;
	if (p->adapter->serve.cwd != NULL &&
	    (err = engine_expand(&cwd, p->adapter->serve.cwd, &l.vars)) != NULL)
		goto out;
	e->argv_text = join_argv(l.argv);
	so.argv = l.argv;
	so.env_add = l.env;
	so.cwd = p->adapter->serve.cwd != NULL ? buf_cstr(&cwd) : p->repo_root;
	so.log_path = e->log_path;
	e->started_ns = mono_ns();
	e->log_changed_ns = e->started_ns;
	if ((err = spawn_start(&e->proc, &so)) != NULL) {
		/* The engine's program is missing: that engine crashed,
		 * the campaign goes on. */
		set_state(e, ENGINE_CRASHED, "%s", err->msg);
		werr_free(err);
		err = NULL;
	}
out:
	buf_free(&cwd);
	launch_free(&l);
	return err;
}

struct werr *
engine_start(struct engine **out, const struct engine_params *p)
{
	const struct profile_engine *pe;
	const struct adapter *a = p->adapter;
	struct engine *e;
	struct werr *err;
	double timeout;

	*out = NULL;
	pe = profile_engine(p->profile, a->name);
	e = xcalloc(1, sizeof(*e));
	e->model = xstrdup(pe != NULL && pe->model != NULL ? pe->model :
	    p->profile->hf_id ? p->profile->hf_id : p->profile->name);
	e->log_path = xstrdup(p->log_path);
	e->stop_grace_ms = p->stop_grace_ms ? p->stop_grace_ms : 10000;
	e->port = p->port;
	if (e->port == 0 && (err = engine_free_port(&e->port)) != NULL)
		goto fail;
	e->base_url = xasprintf("http://%s:%d", ENGINE_HOST, e->port);
	if (port_answers(e->port)) {
		e->state = ENGINE_PORT_CONFLICT;
		e->detail = xasprintf("port %d is already in use", e->port);
		*out = e;
		return NULL;
	}
	if ((err = engine_launch(e, p)) != NULL)
		goto fail;
	if (e->state == ENGINE_STARTING) {
		timeout = p->ready_timeout_s > 0 ? p->ready_timeout_s :
		    a->serve.ready_timeout_s > 0 ? a->serve.ready_timeout_s : 600;
		wait_healthy(e, a->serve.health ? a->serve.health : "/health",
		    timeout);
	}
	if (e->state == ENGINE_READY)
		check_port_owner(e);
	if (e->state == ENGINE_READY)
		check_model(e, a->serve.models_path ? a->serve.models_path :
		    "/v1/models");
	*out = e;
	return NULL;
fail:
	engine_free(e);
	return err;
}

struct werr *
engine_stop(struct engine *e)
{
	struct werr *err;

	if (e == NULL || e->proc.pid == 0)
		return NULL;
	err = spawn_stop(&e->proc, e->stop_grace_ms);
	if (e->state == ENGINE_READY || e->state == ENGINE_STARTING)
		e->state = ENGINE_STOPPED;
	return err;
}

void
engine_free(struct engine *e)
{
	if (e == NULL)
		return;
	werr_free(engine_stop(e));
	free(e->base_url);
	free(e->log_path);
	free(e->model);
	free(e->served_model);
	free(e->detail);
	free(e->argv_text);
	free(e);
}
