/*
 * engine.c - start, watch and stop one engine server. See engine.h; the
 * command line and environment of a start are built in engine-launch.c.
 *
 * The health and model checks are plain libcurl easy requests to
 * 127.0.0.1 with short timeouts, each answer read within ENGINE_ANSWER_MAX
 * bytes (an engine that sends more is not ready, never warden's memory);
 * between them the process is polled, so a server that dies while
 * starting is seen at once. Never prints; never leaves a process behind
 * (engine_free stops what engine_start started).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "engine.h"
#include "engine-private.h"
#include "memsample.h"
#include "sandbox/scratch.h"
#include "util.h"

#define ENGINE_HOST "127.0.0.1"
#define LOG_TAIL_BYTES 2048
/* The most warden reads of a health or models answer. 8 of the shipped
 * adapters ask /v1/models for health, and an ollama with many models
 * pulled lists them all: 64 KiB is room for hundreds, and a few KiB is
 * what an engine really sends. */
#define ENGINE_ANSWER_MAX (64 * 1024)
/* http_get()'s status when the answer passed ENGINE_ANSWER_MAX */
#define ANSWER_TOO_LONG (-2)

static const char *const state_names[] = {
	"starting", "ready", "server_crash", "not_ready", "wrong_model",
	"port_conflict", "setup_failed", "stopped", "start_failed",
};

const char *
engine_state_name(enum engine_state state)
{
	if ((size_t)state >= sizeof(state_names) / sizeof(state_names[0]))
		return "unknown";
	return state_names[state];
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

/* Keep of b the last max_bytes, from a line start where possible. */
static void
log_tail_trim(struct buf *out, const struct buf *b, size_t max_bytes)
{
	const char *start, *nl;
	size_t from;

	if (b->len == 0)
		return;
	start = b->data;
	if (b->len > max_bytes) {
		start = b->data + b->len - max_bytes;
		if ((nl = memchr(start, '\n', max_bytes)) != NULL &&
		    nl + 1 < b->data + b->len)
			start = nl + 1;
	}
	from = out->len;
	buf_add(out, start, (size_t)(b->data + b->len - start));
	text_make_utf8(out, from);	/* it goes into JSON */
}

void
engine_log_tail(struct buf *out, const char *path, size_t max_bytes)
{
	struct buf b = BUF_INIT;
	struct werr *err;

	/* Only the end of the file is read: an engine's log may be huge. */
	if ((err = file_read_tail(&b, path, max_bytes + 1)) != NULL)
		werr_free(err);
	else
		log_tail_trim(out, &b, max_bytes);
	buf_free(&b);
}

void
engine_log_tail_fd(struct buf *out, int fd, const char *name,
    size_t max_bytes)
{
	struct buf b = BUF_INIT;
	struct werr *err;

	if ((err = file_read_tail_fd(&b, fd, name, max_bytes + 1)) != NULL)
		werr_free(err);
	else
		log_tail_trim(out, &b, max_bytes);
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
	if (state == ENGINE_CRASHED || state == ENGINE_NOT_READY ||
	    state == ENGINE_SETUP_FAILED) {
		buf_puts(&b, "; log tail:\n");
		engine_log_tail_fd(&b, e->log_fd, e->log_path, LOG_TAIL_BYTES);
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

	if (fstat(e->log_fd, &st) == 0 && st.st_size != e->log_size) {
		e->log_size = st.st_size;
		e->log_changed_ns = now_ns;
	}
	return now_ns > e->log_changed_ns ? now_ns - e->log_changed_ns : 0;
}

/* An answer being read, within ENGINE_ANSWER_MAX bytes. */
struct answer {
	struct buf *body;
	int too_long;		/* the engine sent more: reading stopped */
};

static size_t
collect(char *data, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;

	if (a->body->len + size * n > ENGINE_ANSWER_MAX) {
		a->too_long = 1;
		return 0;	/* libcurl ends the transfer: a write error */
	}
	buf_add(a->body, data, size * n);
	return size * n;
}

/* GET base_url + path: 200 and the body, else the status or -1, or
 * ANSWER_TOO_LONG once the answer passed ENGINE_ANSWER_MAX bytes. */
static long
http_get(const struct engine *e, const char *path, struct buf *body)
{
	char *url = xasprintf("%s%s", e->base_url, path);
	struct answer a = { body, 0 };
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
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE, (long)ENGINE_ANSWER_MAX);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
	switch (curl_easy_perform(c)) {
	case CURLE_OK:
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		break;
	case CURLE_FILESIZE_EXCEEDED:	/* its Content-Length said so */
		a.too_long = 1;
		break;
	default:
		break;
	}
	curl_easy_cleanup(c);
	free(url);
	return a.too_long ? ANSWER_TOO_LONG : status;
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Has the engine exited before it answered? Then it is not_ready, with
 * its exit status and log tail. */
static int
exited_early(struct engine *e)
{
	struct buf why = BUF_INIT;

	if (!spawn_poll(&e->proc))
		return 0;
	spawn_status_describe(&why, e->proc.status);
	set_state(e, ENGINE_NOT_READY, "exited before it was ready: %s",
	    buf_cstr(&why));
	buf_free(&why);
	return 1;
}

static void
wait_healthy(struct engine *e, const struct engine_params *p,
    const char *health, double timeout_s)
{
	uint64_t deadline = e->started_ns + (uint64_t)(timeout_s * 1e9);
	struct buf body = BUF_INIT;
	long status = -1;

	for (;;) {
		if (exited_early(e))
			break;
		if (p->on_wait != NULL && p->on_wait(p->wait_arg,
		    (double)(mono_ns() - e->started_ns) / 1e9)) {
			e->state = ENGINE_STOPPED;
			free(e->detail);
			e->detail = xstrdup("the start was abandoned");
			break;
		}
		buf_reset(&body);
		status = http_get(e, health, &body);
		if (status == 200) {
			e->ready_ns = mono_ns();
			e->state = ENGINE_READY;
			break;
		}
		if (status == ANSWER_TOO_LONG) {
			set_state(e, ENGINE_NOT_READY, "'%s' answered more than "
			    "%d bytes; warden stopped reading", health,
			    ENGINE_ANSWER_MAX);
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
	if (status == ANSWER_TOO_LONG) {
		set_state(e, ENGINE_WRONG_MODEL, "'%s' answered more than %d "
		    "bytes; warden stopped reading", path, ENGINE_ANSWER_MAX);
		goto out;
	}
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

/* The log, made by warden in a folder the server cannot write, opened
 * once: steps and server get its descriptor, warden reads it back
 * through it. A link or anything but a regular file there is refused. */
static struct werr *
log_open(struct engine *e)
{
	char *dir = engine_dir_of(e->log_path);
	struct werr *err = mkdir_p(dir);
	struct stat st;
	int flags;

	free(dir);
	if (err != NULL)
		return err;
	e->log_fd = open(e->log_path, O_RDWR | O_CREAT | O_APPEND |
	    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (e->log_fd == -1)
		return werr_errno("open", e->log_path);
	if (fstat(e->log_fd, &st) == -1)
		return werr_errno("stat", e->log_path);
	if (!S_ISREG(st.st_mode))
		return werr_new(WEXIT_ENV, "'%s' is not a regular file; "
		    "warden writes an engine's log only into one of its own",
		    e->log_path);
	if ((flags = fcntl(e->log_fd, F_GETFL)) != -1)
		(void)fcntl(e->log_fd, F_SETFL, flags & ~O_NONBLOCK);
	return NULL;
}

/* An unreviewed run's own folder, with its copy of the engine's HOME
 * (made once per run: the later starts of the run share it). */
static struct werr *
own_dir_ready(const struct engine_params *p)
{
	char *home, *live, *tmp;
	struct werr *err;

	if (p->own_dir == NULL)
		return NULL;
	home = path_join(p->own_dir, "home");
	if (path_exists(home)) {
		free(home);
		return NULL;
	}
	live = path_join(p->env_dir, "home");
	tmp = path_join(p->own_dir, "home.copying");
	if ((err = scratch_discard(tmp)) == NULL &&
	    (err = scratch_copy_tree(live, tmp)) == NULL &&
	    rename(tmp, home) == -1)
		err = werr_errno("rename", tmp);
	free(tmp);
	free(live);
	free(home);
	return err;
}

static struct werr *
engine_launch(struct engine *e, const struct engine_params *p)
{
	struct spawn_opts so = { 0 };
	struct launch *l;
	struct buf why = BUF_INIT;
	struct werr *err;
	char **full = NULL;

	if ((err = mkdir_p(p->env_dir)) != NULL ||
	    (err = own_dir_ready(p)) != NULL)
		return err;
	l = e->launch = xcalloc(1, sizeof(*e->launch));
	if ((err = engine_launch_build(l, p, e)) != NULL ||
	    (err = engine_scratch_reset(l)) != NULL ||
	    (p->sandbox_repo != NULL &&
	    (err = engine_sandbox_build(l, p)) != NULL)) {
		e->stopped = 1;	/* no step ran: none to undo */
		return err;
	}
	e->argv_text = engine_join_argv(l->argv);
	e->argv_provenance = engine_argv_provenance(l->argv, p->repo_root,
	    e->port);
	e->started_ns = mono_ns();
	e->log_changed_ns = e->started_ns;
	if (engine_steps_pre_start(e, l, &why) != 0) {
		set_state(e, ENGINE_SETUP_FAILED, "%s", buf_cstr(&why));
		buf_free(&why);
		return NULL;
	}
	buf_free(&why);
	engine_spawn_opts(&so, &full, l, l->argv);
	so.log_fd = e->log_fd;
	e->started_ns = mono_ns();
	e->log_changed_ns = e->started_ns;
	err = spawn_start(&e->proc, &so);
	free(full);
	if (err != NULL) {
		/* The engine's program cannot be executed: that engine
		 * never started, the campaign goes on. */
		set_state(e, ENGINE_START_FAILED, "%s", err->msg);
		werr_free(err);
		err = NULL;
	}
	/* Whoever serves its port belongs to it, even an orphan (macOS). */
	e->proc.port = e->port;
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
	e->log_fd = -1;
	if ((err = log_open(e)) != NULL)
		goto fail;
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
		wait_healthy(e, p, a->serve.health ? a->serve.health :
		    "/health", timeout);
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
	struct werr *err = NULL;

	if (e == NULL)
		return NULL;
	if (e->proc.pid != 0) {
		err = spawn_stop(&e->proc, e->stop_grace_ms);
		if (e->state == ENGINE_READY || e->state == ENGINE_STARTING)
			e->state = ENGINE_STOPPED;
	}
	/* Once per start, whether the server ran or a step failed. */
	if (e->launch != NULL && !e->stopped) {
		e->stopped = 1;
		engine_steps_stop(e, e->launch);
		engine_scratch_remove(e->launch);
	}
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
	if (e->log_fd != -1)
		close(e->log_fd);
	free(e->model);
	free(e->served_model);
	free(e->detail);
	free(e->argv_text);
	free(e->argv_provenance);
	if (e->launch != NULL)
		engine_sandbox_free(e->launch);
	engine_launch_free(e->launch);
	free(e->launch);
	free(e);
}
