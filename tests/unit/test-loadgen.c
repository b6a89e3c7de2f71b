/*
 * test-loadgen.c - the load generator against a small libmicrohttpd server
 * started inside the test.
 *
 * The server reads a JSON body {"id", "mode", "tokens", "delay_ms",
 * "stall_ms", "fixture", "usage"} and answers accordingly: a token stream,
 * a stall, an HTTP 500, a connection cut mid-stream, or the bytes of a
 * recorded stream from tests/fixtures/sse (cut into small writes). It
 * counts requests in flight (from the request until its last byte is
 * produced) and the order requests arrive in, so the tests can check the
 * closed loop from the server's side.
 */
#include "config.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <microhttpd.h>

#include "buf.h"
#include "loadgen.h"
#include "sse.h"
#include "util.h"

/* ---- the server ---- */

#define MAX_ARRIVALS 256

struct server {
	struct MHD_Daemon *daemon;
	unsigned short port;
	pthread_mutex_t lock;
	int active, max_active, stopping;
	int generation;		/* bumped per sweep: stragglers of an
				   earlier test never count in a later one */
	int connections;	/* TCP connections accepted */
	int bad_headers;	/* requests with Expect: or no JSON type */
	int arrivals[MAX_ARRIVALS];
	size_t narrivals;
};

static struct server srv;

struct reply {
	struct buf body;	/* the request body while it arrives */
	char mode[16];
	int tokens, delay_ms, stall_ms, usage, step, counted, generation;
	struct buf fixture;
	size_t fixture_pos, piece;
};

static void
nap_ms(int ms)
{
	struct timespec ts;

	/* in small steps, so stopping the server is never held up long */
	while (ms > 0 && !srv.stopping) {
		ts.tv_sec = 0;
		ts.tv_nsec = (ms > 20 ? 20 : ms) * 1000000L;
		nanosleep(&ts, NULL);
		ms -= 20;
	}
}

static void
server_left(struct reply *r)
{
	if (!r->counted)
		return;
	r->counted = 0;
	pthread_mutex_lock(&srv.lock);
	if (r->generation == srv.generation)
		srv.active--;
	pthread_mutex_unlock(&srv.lock);
}

static ssize_t
put(char *out, size_t max, const char *s)
{
	size_t n = strlen(s);

	if (n > max)
		n = max;	/* our chunks are far below MHD's buffer */
	memcpy(out, s, n);
	return (ssize_t)n;
}

static ssize_t
stream_reader(void *cls, uint64_t pos, char *out, size_t max)
{
	struct reply *r = cls;
	struct buf b = BUF_INIT;
	ssize_t n;
	int i;

	if (strcmp(r->mode, "fixture") == 0) {
		if (r->fixture_pos >= r->fixture.len) {
			server_left(r);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		n = (ssize_t)(r->fixture.len - r->fixture_pos);
		if ((size_t)n > r->piece)
			n = (ssize_t)r->piece;
		memcpy(out, r->fixture.data + r->fixture_pos, (size_t)n);
		r->fixture_pos += (size_t)n;
		return n;
	}
	if (r->step == 0 && r->stall_ms > 0)
		nap_ms(r->stall_ms);
	if (r->step == 0) {
		r->step++;
		return put(out, max, "data: {\"choices\":[{\"index\":0,\"delta\":"
		    "{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n");
	}
	if (strcmp(r->mode, "burst") == 0 && r->step == 1) {
		for (i = 0; i < r->tokens; i++)
			buf_puts(&b, "data: {\"choices\":[{\"index\":0,\"delta\":"
			    "{\"content\":\"ab\"}}]}\n\n");
		r->step = r->tokens + 1;
		n = put(out, max, buf_cstr(&b));
		buf_free(&b);
		return n;
	}
	if (r->step <= r->tokens) {
		nap_ms(r->delay_ms);
		if (strcmp(r->mode, "cut") == 0 && r->step == 2) {
			server_left(r);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		r->step++;
		return put(out, max, "data: {\"choices\":[{\"index\":0,\"delta\":"
		    "{\"content\":\"ab\"}}]}\n\n");
	}
	if (r->step == r->tokens + 1) {
		r->step++;
		buf_puts(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{},"
		    "\"finish_reason\":\"stop\"}]}\n\n");
		if (r->usage)
			buf_printf(&b, "data: {\"choices\":[],\"usage\":"
			    "{\"prompt_tokens\":3,\"completion_tokens\":%d}}\n\n",
			    r->tokens);
		buf_puts(&b, "data: [DONE]\n\n");
		n = put(out, max, buf_cstr(&b));
		buf_free(&b);
		return n;
	}
	server_left(r);
	return MHD_CONTENT_READER_END_OF_STREAM;
}

static void
reply_free(void *cls)
{
	struct reply *r = cls;

	server_left(r);
	buf_free(&r->body);
	buf_free(&r->fixture);
	free(r);
}

static enum MHD_Result
queue_reply(struct MHD_Connection *conn, struct reply *r)
{
	struct MHD_Response *resp;
	json_t *o;
	const char *mode, *fx;
	struct buf path = BUF_INIT;
	const char *top = getenv("TOP_SRCDIR");
	enum MHD_Result ret;
	int id;

	o = json_loadb(r->body.data != NULL ? r->body.data : "", r->body.len,
	    0, NULL);
	mode = json_string_value(json_object_get(o, "mode"));
	snprintf(r->mode, sizeof(r->mode), "%s", mode != NULL ? mode : "ok");
	id = (int)json_integer_value(json_object_get(o, "id"));
	r->tokens = (int)json_integer_value(json_object_get(o, "tokens"));
	r->delay_ms = (int)json_integer_value(json_object_get(o, "delay_ms"));
	r->stall_ms = (int)json_integer_value(json_object_get(o, "stall_ms"));
	r->usage = !json_is_false(json_object_get(o, "usage"));
	r->piece = (size_t)json_integer_value(json_object_get(o, "piece"));
	if (r->piece == 0)
		r->piece = 5;
	if ((fx = json_string_value(json_object_get(o, "fixture"))) != NULL) {
		snprintf(r->mode, sizeof(r->mode), "fixture");
		buf_printf(&path, "%s/tests/fixtures/sse/%s.sse",
		    top != NULL ? top : ".", fx);
		if (file_read(&r->fixture, buf_cstr(&path)) != NULL)
			abort();
		buf_free(&path);
	}
	json_decref(o);
	pthread_mutex_lock(&srv.lock);
	if (srv.narrivals < MAX_ARRIVALS)
		srv.arrivals[srv.narrivals++] = id;
	r->generation = srv.generation;
	srv.active++;
	if (srv.active > srv.max_active)
		srv.max_active = srv.active;
	pthread_mutex_unlock(&srv.lock);
	r->counted = 1;
	if (strcmp(r->mode, "status") == 0) {
		server_left(r);
		resp = MHD_create_response_from_buffer(4, (void *)"boom",
		    MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(conn, 500, resp);
		MHD_destroy_response(resp);
		reply_free(r);
		return ret;
	}
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
	    stream_reader, r, reply_free);
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	ret = MHD_queue_response(conn, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct reply *r = *con_cls;

	const char *ct;

	if (r == NULL) {
		ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		    "Content-Type");
		if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		    "Expect") != NULL || ct == NULL ||
		    strcmp(ct, "application/json") != 0) {
			pthread_mutex_lock(&srv.lock);
			srv.bad_headers++;
			pthread_mutex_unlock(&srv.lock);
		}
		r = xcalloc(1, sizeof(*r));
		buf_init(&r->body);
		buf_init(&r->fixture);
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		buf_add(&r->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	*con_cls = NULL;	/* the response owns it now */
	return queue_reply(conn, r);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct reply *r = *con_cls;

	if (r != NULL)
		reply_free(r);
	*con_cls = NULL;
}

static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	pthread_mutex_lock(&srv.lock);
	srv.connections++;
	pthread_mutex_unlock(&srv.lock);
}

/* Listen on 127.0.0.1 at a port the kernel picks (our own socket, so
 * no newer MHD_DAEMON_INFO_BIND_PORT is needed). */
static int
server_start(void **state)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd;

	memset(&srv, 0, sizeof(srv));
	pthread_mutex_init(&srv.lock, NULL);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	srv.port = ntohs(a.sin_port);
	srv.daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL,
	    on_request, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_END);
	return srv.daemon != NULL ? 0 : -1;
}

static int
server_stop(void **state)
{
	srv.stopping = 1;
	MHD_stop_daemon(srv.daemon);
	pthread_mutex_destroy(&srv.lock);
	return 0;
}

static void
server_reset(void)
{
	pthread_mutex_lock(&srv.lock);
	srv.generation++;
	srv.active = 0;
	srv.max_active = 0;
	srv.narrivals = 0;
	srv.connections = 0;
	srv.bad_headers = 0;
	pthread_mutex_unlock(&srv.lock);
}

/* ---- the client side ---- */

struct bodies {
	struct loadgen_body *v;
	char **text;
	size_t n;
};

static void
bodies_add(struct bodies *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
bodies_add(struct bodies *b, const char *fmt, ...)
{
	struct buf t = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&t, fmt, ap);
	va_end(ap);
	b->v = xrealloc(b->v, (b->n + 1) * sizeof(*b->v));
	b->text = xrealloc(b->text, (b->n + 1) * sizeof(*b->text));
	b->v[b->n].len = t.len;
	b->text[b->n] = buf_detach(&t);
	b->v[b->n].data = b->text[b->n];
	b->n++;
}

static void
bodies_free(struct bodies *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->text[i]);
	free(b->text);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

/* A copy of what on_record saw. */
struct seen {
	size_t index;
	int warmup;
	uint64_t submit_ns, first_ns, last_ns, end_ns;
	size_t token_events, coalesced, max_per_read, content_bytes;
	size_t reasoning_bytes, tool_calls, ntoken_ns;
	long completion_tokens, prompt_tokens, status;
	enum loadgen_usage_source usage_source;
	enum loadgen_outcome outcome;
	char *finish_reason, *error;
	char *content;		/* the kept answer text, or NULL */
};

struct run {
	struct seen v[256];
	size_t n;
	int ticks;
	int crash_after_ticks;		/* 0: never */
	enum loadgen_tick_action alive_answer;
};

static void
on_record(void *arg, const struct loadgen_record *rec)
{
	struct run *run = arg;
	struct seen *s;

	assert_true(run->n < 256);
	s = &run->v[run->n++];
	s->index = rec->index;
	s->warmup = rec->warmup;
	s->submit_ns = rec->submit_ns;
	s->first_ns = rec->first_token_ns;
	s->last_ns = rec->last_token_ns;
	s->end_ns = rec->end_ns;
	s->token_events = rec->token_events;
	s->coalesced = rec->coalesced_events;
	s->max_per_read = rec->max_events_per_read;
	s->content_bytes = rec->content_bytes;
	s->reasoning_bytes = rec->reasoning_bytes;
	s->tool_calls = rec->tool_calls;
	s->ntoken_ns = rec->ntoken_ns;
	s->completion_tokens = rec->completion_tokens;
	s->prompt_tokens = rec->prompt_tokens;
	s->status = rec->http_status;
	s->usage_source = rec->usage_source;
	s->outcome = rec->outcome;
	s->finish_reason = rec->finish_reason != NULL ?
	    xstrdup(rec->finish_reason) : NULL;
	s->error = rec->error != NULL ? xstrdup(rec->error) : NULL;
	s->content = rec->content != NULL ?
	    xstrndup(rec->content, rec->content_len) : NULL;
	assert_int_equal(rec->ntoken_ns, rec->token_events);
	assert_true(rec->anchor_mono_ns > 0);
}

static enum loadgen_tick_action
on_tick(void *arg, const struct loadgen_progress *p)
{
	struct run *run = arg;

	run->ticks++;
	if (run->crash_after_ticks > 0 && run->ticks >= run->crash_after_ticks)
		return LOADGEN_TICK_SERVER_CRASH;
	return run->alive_answer;
}

static void
run_free(struct run *run)
{
	size_t i;

	for (i = 0; i < run->n; i++) {
		free(run->v[i].finish_reason);
		free(run->v[i].error);
		free(run->v[i].content);
	}
	free(run);
}

static char *
url_for(unsigned short port)
{
	return xasprintf("http://127.0.0.1:%u/v1/chat/completions", port);
}

/* Run a sweep against our server; returns the records in *runp. */
static void
sweep(struct loadgen_config *cfg, struct loadgen_summary *sum,
    struct run **runp, int with_tick)
{
	struct run *run = *runp;
	char *url = NULL;
	struct werr *err;

	if (run == NULL)
		run = *runp = xcalloc(1, sizeof(*run));
	if (cfg->url == NULL)
		cfg->url = url = url_for(srv.port);
	cfg->on_record = on_record;
	cfg->on_tick = with_tick ? on_tick : NULL;
	cfg->arg = run;
	server_reset();
	err = loadgen_run(cfg, sum);
	if (err != NULL)
		fail_msg("loadgen_run: %s", err->msg);
	free(url);
	cfg->url = NULL;
}

static int
int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int
seen_by_index(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static int
seen_warmups_first(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	if (x->warmup != y->warmup)
		return x->warmup ? -1 : 1;
	return seen_by_index(a, b);
}

static void
closed_loop(int portable)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	size_t i;

	/* 250 ms a request: the 4 of a round overlap at the server
	 * however late a busy machine runs its threads */
	for (i = 0; i < 24; i++)
		bodies_add(&b, "{\"id\":%zu,\"tokens\":5,\"delay_ms\":50}", i);
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 4;
	cfg.portable_wait = portable;
	sweep(&cfg, &sum, &run, 1);
#ifdef __linux__
	assert_string_equal(sum.event_wait, portable ? "poll" : "epoll");
#else
	assert_string_equal(sum.event_wait, "poll");
#endif
	assert_int_equal(srv.max_active, 4);
	assert_int_equal(sum.max_in_flight, 4);
	/* keep-alive: 24 requests over the 4 connections */
	assert_int_equal(srv.connections, 4);
	assert_int_equal(srv.bad_headers, 0);
	assert_int_equal(sum.completed, 24);
	assert_int_equal(sum.failed, 0);
	assert_int_equal(sum.end, LOADGEN_END_COMPLETE);
	assert_int_equal(run->n, 24);
	/* sent in the given order, each once */
	assert_int_equal(srv.narrivals, 24);
	qsort(srv.arrivals, srv.narrivals, sizeof(int), int_cmp);
	for (i = 0; i < 24; i++)
		assert_int_equal(srv.arrivals[i], (int)i);
	qsort(run->v, run->n, sizeof(run->v[0]), seen_by_index);
	for (i = 0; i < run->n; i++) {
		assert_int_equal(run->v[i].index, i);
		if (i > 0)
			assert_true(run->v[i].submit_ns >=
			    run->v[i - 1].submit_ns);
		assert_int_equal(run->v[i].outcome, LOADGEN_OK);
		assert_null(run->v[i].error);
		assert_int_equal(run->v[i].token_events, 5);
		assert_int_equal(run->v[i].completion_tokens, 5);
		assert_int_equal(run->v[i].prompt_tokens, 3);
		assert_int_equal(run->v[i].usage_source, LOADGEN_USAGE_SERVER);
		assert_int_equal(run->v[i].content_bytes, 10);
		assert_string_equal(run->v[i].finish_reason, "stop");
		assert_int_equal(run->v[i].status, 200);
		assert_true(run->v[i].submit_ns < run->v[i].first_ns);
		assert_true(run->v[i].first_ns < run->v[i].last_ns);
		assert_true(run->v[i].last_ns <= run->v[i].end_ns);
		/* the server sleeps 10 ms before each token: streamed, not
		 * buffered to the end (loose: a late first token on a loaded
		 * machine shortens the span) */
		assert_true(run->v[i].last_ns - run->v[i].first_ns >= 10000000);
	}
	assert_int_equal(sum.total_output_tokens, 120);
	assert_int_equal(sum.total_input_tokens, 72);
	assert_int_equal(sum.ttft.n, 24);
	assert_int_equal(sum.tpot.n, 24);
	assert_int_equal(sum.itl.n, 24 * 4);
	assert_true(sum.tpot.median >= 5);
	assert_true(sum.ttft.p99 <= sum.e2el.p99);
	/* reads timed by the kernel's receive stamp where there is one
	 * (Linux stamps TCP on loopback, once it turned stamping on: the
	 * first packets after the first socket asked may go unstamped) */
	assert_true(sum.reads >= 24 * 2);
	assert_true(sum.kernel_stamped_reads <= sum.reads);
#ifdef __linux__
	assert_true(sum.kernel_stamped_reads > 0);
#endif
	run_free(run);
	bodies_free(&b);
}

static void
test_closed_loop_keeps_c_in_flight(void **state)
{
	closed_loop(0);
}

/* The same with poll(2), the wait of the platforms without epoll. */
static void
test_closed_loop_with_poll(void **state)
{
	closed_loop(1);
}

static void
test_concurrency_one_is_serial(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	size_t i;

	for (i = 0; i < 5; i++)
		bodies_add(&b, "{\"id\":%zu,\"tokens\":3,\"delay_ms\":5}", i);
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 1;
	sweep(&cfg, &sum, &run, 0);
	assert_int_equal(srv.max_active, 1);
	assert_int_equal(sum.completed, 5);
	for (i = 1; i < run->n; i++)
		assert_true(run->v[i].submit_ns >= run->v[i - 1].end_ns);
	run_free(run);
	bodies_free(&b);
}

static void
test_warmups_run_first_and_are_excluded(void **state)
{
	struct bodies b = { 0 }, w = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	uint64_t warm_end = 0, timed_start = UINT64_MAX;
	size_t i, nwarm = 0;

	for (i = 0; i < 3; i++)
		bodies_add(&w, "{\"id\":%zu,\"tokens\":2,\"delay_ms\":5}",
		    100 + i);
	for (i = 0; i < 6; i++)
		bodies_add(&b, "{\"id\":%zu,\"tokens\":4,\"delay_ms\":1}", i);
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.warmups = w.v;
	cfg.nwarmups = w.n;
	cfg.concurrency = 2;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, 9);
	for (i = 0; i < run->n; i++) {
		if (run->v[i].warmup) {
			nwarm++;
			if (run->v[i].end_ns > warm_end)
				warm_end = run->v[i].end_ns;
		} else if (run->v[i].submit_ns < timed_start)
			timed_start = run->v[i].submit_ns;
	}
	assert_int_equal(nwarm, 3);
	assert_true(timed_start >= warm_end);
	for (i = 0; i < 3; i++)
		assert_true(srv.arrivals[i] >= 100);
	for (i = 3; i < 9; i++)
		assert_true(srv.arrivals[i] < 100);
	assert_int_equal(sum.completed, 6);
	assert_int_equal(sum.submitted, 6);
	assert_int_equal(sum.warmups_ok, 3);
	assert_int_equal(sum.total_output_tokens, 24);	/* 6 x 4, not 30 */
	assert_int_equal(sum.ttft.n, 6);
	run_free(run);
	bodies_free(&b);
	bodies_free(&w);
}

static void
test_request_timeout(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;

	/* the quick one has 1.5 s to end before the timeout, the stalled
	 * one stalls far past it */
	bodies_add(&b, "{\"id\":0,\"tokens\":1,\"stall_ms\":10000}");
	bodies_add(&b, "{\"id\":1,\"tokens\":1}");
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 2;
	cfg.request_timeout_ns = 1500000000;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, 2);
	assert_int_equal(run->v[0].index, 1);	/* the quick one ends first */
	assert_int_equal(run->v[0].outcome, LOADGEN_OK);
	assert_int_equal(run->v[1].outcome, LOADGEN_TIMEOUT);
	assert_non_null(strstr(run->v[1].error, "timed out"));
	assert_int_equal(sum.failed_by_outcome[LOADGEN_TIMEOUT], 1);
	assert_int_equal(sum.completed, 1);
	assert_int_equal(sum.end, LOADGEN_END_COMPLETE);
	run_free(run);
	bodies_free(&b);
}

static unsigned short
closed_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void
test_connect_failures(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	char *url = url_for(closed_port());
	size_t i;

	for (i = 0; i < 4; i++)
		bodies_add(&b, "{\"id\":%zu}", i);
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 2;
	/* no tick: every request fails to connect */
	cfg.url = url;
	sweep(&cfg, &sum, &run, 0);
	assert_int_equal(run->n, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(run->v[i].outcome, LOADGEN_CONNECT);
		assert_int_equal(run->v[i].status, 0);
	}
	assert_int_equal(sum.failed_by_outcome[LOADGEN_CONNECT], 4);
	run_free(run);
	run = NULL;
	/* a tick that says the server is alive: still connect failures */
	cfg.url = url;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(sum.failed_by_outcome[LOADGEN_CONNECT], 4);
	assert_true(run->ticks >= 1);
	run_free(run);
	/* a tick that says the server died: held failures become crashes,
	 * and the rest is never sent */
	run = xcalloc(1, sizeof(*run));
	run->crash_after_ticks = 1;
	cfg.url = url;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(sum.end, LOADGEN_END_SERVER_CRASH);
	assert_int_equal(sum.failed_by_outcome[LOADGEN_SERVER_CRASH], 2);
	assert_int_equal(sum.failed_by_outcome[LOADGEN_CONNECT], 0);
	assert_int_equal(sum.not_started, 2);
	assert_int_equal(run->n, 2);
	run_free(run);
	free(url);
	bodies_free(&b);
}

static void
test_http_status_and_cut_stream(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	size_t i;

	bodies_add(&b, "{\"id\":0,\"mode\":\"status\"}");
	bodies_add(&b, "{\"id\":1,\"mode\":\"cut\",\"tokens\":5}");
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 1;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, 2);
	for (i = 0; i < run->n; i++) {
		if (run->v[i].index == 0) {
			assert_int_equal(run->v[i].outcome,
			    LOADGEN_HTTP_STATUS);
			assert_int_equal(run->v[i].status, 500);
			assert_non_null(strstr(run->v[i].error, "500"));
			assert_non_null(strstr(run->v[i].error, "boom"));
		} else {
			assert_int_equal(run->v[i].outcome,
			    LOADGEN_STREAM_ERROR);
			assert_int_equal(run->v[i].token_events, 1);
		}
	}
	assert_int_equal(sum.completed, 0);
	assert_int_equal(sum.failed, 2);
	run_free(run);
	bodies_free(&b);
}

/* A stream cut by a dying server is held until the tick, which says the
 * server crashed: the request is a server_crash, nothing more is sent. */
static void
test_cut_then_crash_is_server_crash(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = xcalloc(1, sizeof(*run));

	bodies_add(&b, "{\"id\":0,\"mode\":\"cut\",\"tokens\":5,\"delay_ms\":1}");
	bodies_add(&b, "{\"id\":1,\"tokens\":2}");
	bodies_add(&b, "{\"id\":2,\"tokens\":2}");
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 1;
	/* the cut comes long before the first tick, even on a busy machine */
	cfg.tick_ms = 2000;
	run->crash_after_ticks = 1;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, 1);
	assert_int_equal(run->v[0].outcome, LOADGEN_SERVER_CRASH);
	assert_int_equal(run->v[0].token_events, 1);
	assert_int_equal(srv.narrivals, 1);
	assert_int_equal(sum.end, LOADGEN_END_SERVER_CRASH);
	assert_int_equal(sum.not_started, 2);
	run_free(run);
	bodies_free(&b);
}

static void
crash_hang_and_deadline(unsigned workers)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run;
	size_t i;

	for (i = 0; i < 6; i++)
		bodies_add(&b, "{\"id\":%zu,\"tokens\":1,\"stall_ms\":5000}", i);
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 2;
	cfg.workers = workers;
	run = xcalloc(1, sizeof(*run));
	run->crash_after_ticks = 3;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(sum.client_workers, workers);
	assert_int_equal(sum.end, LOADGEN_END_SERVER_CRASH);
	assert_int_equal(sum.failed_by_outcome[LOADGEN_SERVER_CRASH], 2);
	assert_int_equal(sum.not_started, 4);
	assert_int_equal(run->n, 2);
	run_free(run);
	run = NULL;
	cfg.hang_ns = 300000000;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(sum.end, LOADGEN_END_HANG);
	assert_int_equal(sum.failed_by_outcome[LOADGEN_TIMEOUT], 2);
	assert_non_null(strstr(run->v[0].error, "hang"));
	run_free(run);
	run = NULL;
	cfg.hang_ns = 0;
	/* 2 s: the first two requests start well before it on a busy
	 * machine, and still stall (5 s) when it passes */
	cfg.deadline_ns = mono_ns() + 2000000000;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(sum.end, LOADGEN_END_DEADLINE);
	assert_int_equal(sum.failed_by_outcome[LOADGEN_TIMEOUT], 2);
	assert_int_equal(sum.not_started, 4);
	run_free(run);
	bodies_free(&b);
}

static void
test_crash_hang_and_deadline_end_the_sweep(void **state)
{
	crash_hang_and_deadline(1);
}

/* The same with two worker threads, one stream each: the coordinator's
 * verdicts reach both. */
static void
test_crash_hang_and_deadline_with_two_workers(void **state)
{
	crash_hang_and_deadline(2);
}

static void
test_coalesced_events_are_counted(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;

	bodies_add(&b, "{\"id\":0,\"mode\":\"burst\",\"tokens\":6}");
	bodies_add(&b, "{\"id\":1,\"tokens\":3,\"delay_ms\":30,\"usage\":false}");
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 1;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, 2);
	assert_int_equal(run->v[0].token_events, 6);
	assert_int_equal(run->v[0].coalesced, 6);
	assert_int_equal(run->v[0].max_per_read, 6);
	/* one timestamp for every event of one read */
	assert_true(run->v[0].first_ns == run->v[0].last_ns);
	/* sent 30 ms apart, the events of the second are read one by one on
	 * a quiet machine; a client kept off the CPU for longer reads two or
	 * three at once, and counts them as coalesced: what must hold is
	 * that the counts agree with each other */
	assert_true(run->v[1].max_per_read >= 1 && run->v[1].max_per_read <= 3);
	assert_true((run->v[1].coalesced == 0) == (run->v[1].max_per_read == 1));
	assert_true(run->v[1].coalesced <= 3);
	/* no usage: the streamed count stands in */
	assert_int_equal(run->v[1].usage_source, LOADGEN_USAGE_STREAMED);
	assert_int_equal(run->v[1].completion_tokens, 3);
	assert_int_equal(run->v[1].prompt_tokens, -1);
	assert_int_equal(sum.coalesced_events, 6 + run->v[1].coalesced);
	assert_int_equal(sum.usage_streamed, 1);
	assert_int_equal(sum.usage_server, 1);
	run_free(run);
	bodies_free(&b);
}

/* WARDEN_LOADGEN_KERNEL_STAMPS=0 times reads by the clock read as
 * recv(2) returns; either way the times of a request keep their order:
 * submitted, first token, last token, end. */
static void
test_reads_timed_without_kernel_stamps(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	json_t *o = NULL;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < 4; i++)
		bodies_add(&b, "{\"id\":%zu,\"tokens\":4,\"delay_ms\":5}", i);
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 2;
	for (k = 0; k < 2; k++) {
		if (k == 0)
			setenv("WARDEN_LOADGEN_KERNEL_STAMPS", "0", 1);
		else
			unsetenv("WARDEN_LOADGEN_KERNEL_STAMPS");
		sweep(&cfg, &sum, &run, 0);
		assert_int_equal(sum.completed, 4);
		assert_true(sum.reads >= 4);
		assert_null(loadgen_summary_to_json(&sum, &o));
		if (k == 0) {
			assert_int_equal(sum.kernel_stamped_reads, 0);
			assert_string_equal(json_string_value(json_object_get(o,
			    "receive_stamp")), "read");
		}
#ifdef __linux__
		if (k == 1) {
			assert_true(sum.kernel_stamped_reads > 0);
			assert_string_not_equal(json_string_value(
			    json_object_get(o, "receive_stamp")), "read");
		}
#endif
		json_decref(o);
		for (i = 0; i < run->n; i++) {
			assert_int_equal(run->v[i].outcome, LOADGEN_OK);
			assert_true(run->v[i].submit_ns < run->v[i].first_ns);
			assert_true(run->v[i].first_ns <= run->v[i].last_ns);
			assert_true(run->v[i].last_ns <= run->v[i].end_ns);
		}
		run_free(run);
		run = NULL;
	}
	bodies_free(&b);
}

static const char *fixture_names[] = {
	"basic", "comments-and-fields", "cr-only", "crlf", "empty-answer",
	"error-object", "error-vllm", "event-error", "extra-fields",
	"malformed", "multiline-data", "no-done", "no-space", "reasoning",
	"tool-call", "truncated", "usage-every-chunk", "usage-omitted",
	"utf8-and-escapes",
};
#define NFIXTURES (sizeof(fixture_names) / sizeof(fixture_names[0]))

static void
check_fixture_record(const struct seen *s, const char *name)
{
	struct buf path = BUF_INIT;
	const char *top = getenv("TOP_SRCDIR");
	json_t *x;
	const char *fr;

	buf_printf(&path, "%s/tests/fixtures/sse/%s.expect",
	    top != NULL ? top : ".", name);
	x = json_load_file(buf_cstr(&path), 0, NULL);
	assert_non_null(x);
	if (strcmp(loadgen_outcome_name(s->outcome),
	    json_string_value(json_object_get(x, "outcome"))) != 0)
		fail_msg("%s: outcome %s (%s)", name,
		    loadgen_outcome_name(s->outcome), s->error);
	assert_int_equal(s->token_events,
	    json_integer_value(json_object_get(x, "token_events")));
	assert_int_equal(s->content_bytes,
	    json_integer_value(json_object_get(x, "content_bytes")));
	assert_int_equal(s->reasoning_bytes,
	    json_integer_value(json_object_get(x, "reasoning_bytes")));
	assert_int_equal(s->tool_calls,
	    json_integer_value(json_object_get(x, "tool_calls")));
	if (s->outcome == LOADGEN_OK || s->outcome == LOADGEN_EMPTY) {
		if (s->completion_tokens != json_integer_value(
		    json_object_get(x, "completion_tokens")))
			fail_msg("%s: completion tokens %ld", name,
			    s->completion_tokens);
		assert_string_equal(loadgen_usage_source_name(s->usage_source),
		    json_string_value(json_object_get(x, "usage_source")));
	}
	fr = json_string_value(json_object_get(x, "finish_reason"));
	if (fr == NULL)
		assert_null(s->finish_reason);
	else
		assert_string_equal(s->finish_reason, fr);
	json_decref(x);
	buf_free(&path);
}

static void
test_recorded_streams_through_the_loop(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	size_t i, ok = 0;

	for (i = 0; i < NFIXTURES; i++)
		bodies_add(&b, "{\"id\":%zu,\"fixture\":\"%s\",\"piece\":%zu}",
		    i, fixture_names[i], 3 + i % 5);
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 4;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, NFIXTURES);
	for (i = 0; i < run->n; i++) {
		check_fixture_record(&run->v[i],
		    fixture_names[run->v[i].index]);
		ok += run->v[i].outcome == LOADGEN_OK;
	}
	assert_int_equal(sum.completed, ok);
	assert_true(ok >= 10);
	run_free(run);
	bodies_free(&b);
}

/*
 * Two worker threads (fixed by WARDEN_LOADGEN_WORKERS, as a user would)
 * against one on the same requests, token streams and the recorded
 * streams with their different outcomes: every request is sent and
 * recorded once, with the same outcome, tokens and finish reason, and the
 * summaries' counts and token totals are equal.
 */
static void
test_two_workers_match_one(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary one, two;
	struct run *r1 = NULL, *r2 = NULL;
	size_t i, n = 48;
	int k;

	for (i = 0; i < n; i++) {
		if (i % 3 == 0)
			bodies_add(&b, "{\"id\":%zu,\"fixture\":\"%s\","
			    "\"piece\":%zu}", i,
			    fixture_names[(i / 3) % NFIXTURES], 3 + i % 5);
		else
			bodies_add(&b, "{\"id\":%zu,\"tokens\":%zu,"
			    "\"delay_ms\":1}", i, 2 + i % 7);
	}
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.warmups = b.v + 1;
	cfg.nwarmups = 4;
	cfg.concurrency = 6;
	cfg.workers = 1;
	sweep(&cfg, &one, &r1, 1);
	cfg.workers = 0;
	setenv("WARDEN_LOADGEN_WORKERS", "2", 1);
	sweep(&cfg, &two, &r2, 1);
	unsetenv("WARDEN_LOADGEN_WORKERS");
	assert_int_equal(one.client_workers, 1);
	assert_int_equal(two.client_workers, 2);
	/* each sent once: the warmups, then the timed requests */
	assert_int_equal(srv.narrivals, n + 4);
	assert_int_equal(r1->n, n + 4);
	assert_int_equal(r2->n, n + 4);
	qsort(r1->v, r1->n, sizeof(r1->v[0]), seen_warmups_first);
	qsort(r2->v, r2->n, sizeof(r2->v[0]), seen_warmups_first);
	for (i = 0; i < r2->n; i++) {
		assert_int_equal(r2->v[i].warmup, i < 4);
		assert_int_equal(r2->v[i].index, r1->v[i].index);
		assert_int_equal(r2->v[i].warmup, r1->v[i].warmup);
		assert_int_equal(r2->v[i].outcome, r1->v[i].outcome);
		assert_int_equal(r2->v[i].token_events, r1->v[i].token_events);
		assert_int_equal(r2->v[i].ntoken_ns, r1->v[i].ntoken_ns);
		assert_int_equal(r2->v[i].completion_tokens,
		    r1->v[i].completion_tokens);
		assert_int_equal(r2->v[i].content_bytes,
		    r1->v[i].content_bytes);
		assert_int_equal(r2->v[i].usage_source, r1->v[i].usage_source);
		if (r1->v[i].finish_reason == NULL)
			assert_null(r2->v[i].finish_reason);
		else
			assert_string_equal(r2->v[i].finish_reason,
			    r1->v[i].finish_reason);
	}
	for (i = 0; i < r2->n; i++)	/* the warmups, then each index once */
		assert_int_equal(r2->v[i].index, i < 4 ? i : i - 4);
	assert_int_equal(two.end, LOADGEN_END_COMPLETE);
	assert_int_equal(two.submitted, one.submitted);
	assert_int_equal(two.completed, one.completed);
	assert_int_equal(two.failed, one.failed);
	for (k = 0; k < LOADGEN_OUTCOME_COUNT; k++)
		assert_int_equal(two.failed_by_outcome[k],
		    one.failed_by_outcome[k]);
	assert_int_equal(two.warmups_ok, one.warmups_ok);
	assert_int_equal(two.total_output_tokens, one.total_output_tokens);
	assert_int_equal(two.total_input_tokens, one.total_input_tokens);
	assert_int_equal(two.token_events, one.token_events);
	assert_int_equal(two.chunks, one.chunks);
	assert_int_equal(two.bytes, one.bytes);
	assert_int_equal(two.ttft.n, one.ttft.n);
	assert_int_equal(two.itl.n, one.itl.n);
	assert_int_equal(two.usage_server, one.usage_server);
	assert_true(two.max_in_flight <= 6);
	assert_true(two.completed >= n / 2);
	run_free(r1);
	run_free(r2);
	bodies_free(&b);
}

/* keep_content hands on_record the answer's text, cut at the limit;
 * without it the record carries none. */
static void
test_content_is_kept_when_asked(void **state)
{
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	size_t i;

	bodies_add(&b, "{\"id\":0,\"fixture\":\"basic\",\"piece\":7}");
	bodies_add(&b, "{\"id\":1,\"tokens\":6}");
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 1;
	cfg.keep_content = 9;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, 2);
	for (i = 0; i < run->n; i++) {
		assert_non_null(run->v[i].content);
		if (run->v[i].index == 0)
			assert_string_equal(run->v[i].content, "Hello, wo");
		else
			assert_string_equal(run->v[i].content, "abababab" "a");
	}
	run_free(run);
	run = NULL;
	cfg.keep_content = 0;
	sweep(&cfg, &sum, &run, 1);
	assert_int_equal(run->n, 2);
	assert_null(run->v[0].content);
	run_free(run);
	bodies_free(&b);
}

static void
test_summary_json(void **state)
{
	static const char *keys[] = { "completed", "total_input_tokens",
	    "total_output_tokens", "duration", "request_throughput",
	    "output_throughput", "mean_ttft_ms", "median_ttft_ms",
	    "p90_ttft_ms", "p99_ttft_ms", "std_ttft_ms", "mean_tpot_ms",
	    "median_tpot_ms", "mean_itl_ms", "median_itl_ms", "p99_itl_ms",
	    "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms", "ttft_samples",
	    "max_concurrency", "client_limited", "clock_drift",
	    "coalesced_events", "failed_by_class" };
	struct bodies b = { 0 };
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct run *run = NULL;
	uint64_t first = UINT64_MAX, last = 0;
	json_t *o;
	size_t i;

	for (i = 0; i < 8; i++)
		bodies_add(&b, "{\"id\":%zu,\"tokens\":4,\"delay_ms\":2}", i);
	bodies_add(&b, "{\"id\":9,\"mode\":\"status\"}");
	cfg.bodies = b.v;
	cfg.nbodies = b.n;
	cfg.concurrency = 3;
	sweep(&cfg, &sum, &run, 1);
	/* duration: first submission to last end, failures included */
	for (i = 0; i < run->n; i++) {
		if (run->v[i].submit_ns < first)
			first = run->v[i].submit_ns;
		if (run->v[i].end_ns > last)
			last = run->v[i].end_ns;
	}
	assert_float_equal(sum.duration, (double)(last - first) / 1e9, 1e-9);
	assert_float_equal(sum.output_throughput, 32 / sum.duration, 1e-6);
	assert_float_equal(sum.request_throughput, 8 / sum.duration, 1e-6);
	assert_null(loadgen_summary_to_json(&sum, &o));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_get(o, keys[i]) == NULL)
			fail_msg("summary json lacks '%s'", keys[i]);
	assert_int_equal(json_integer_value(json_object_get(o, "completed")), 8);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o,
	    "failed_by_class"), "http_status")), 1);
	assert_string_equal(json_string_value(json_object_get(o, "end")),
	    "complete");
	json_decref(o);
	run_free(run);
	bodies_free(&b);
}

/* max(2 * max_tokens, max_tokens + 64) token events, at most
 * LOADGEN_TOKEN_EVENTS_MAX (also for a body without max_tokens); bytes:
 * max_event_bytes and 4 KiB an event. */
static void
test_answer_bounds(void **state)
{
	(void)state;
	assert_int_equal(loadgen_token_bound(1), 65);
	assert_int_equal(loadgen_token_bound(64), 128);
	assert_int_equal(loadgen_token_bound(256), 512);
	assert_int_equal(loadgen_token_bound(0), LOADGEN_TOKEN_EVENTS_MAX);
	assert_int_equal(loadgen_token_bound(-5), LOADGEN_TOKEN_EVENTS_MAX);
	assert_int_equal(loadgen_token_bound(LONG_MAX),
	    LOADGEN_TOKEN_EVENTS_MAX);
	assert_true(loadgen_token_bound(LOADGEN_TOKEN_EVENTS_MAX / 2 - 1) <=
	    LOADGEN_TOKEN_EVENTS_MAX);
	assert_int_equal(loadgen_answer_bound(256, 1 << 20),
	    (1 << 20) + 512 * 4096);
	assert_int_equal(loadgen_answer_bound(256, 0),
	    SSE_MAX_EVENT_DEFAULT + 512 * 4096);
}

static void
test_bad_config(void **state)
{
	struct loadgen_config cfg = { 0 };
	struct loadgen_summary sum;
	struct werr *err;

	cfg.url = "http://127.0.0.1:1/";
	err = loadgen_run(&cfg, &sum);
	assert_non_null(err);
	assert_int_equal(err->exit, WEXIT_INPUT);
	werr_free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closed_loop_keeps_c_in_flight),
		cmocka_unit_test(test_closed_loop_with_poll),
		cmocka_unit_test(test_concurrency_one_is_serial),
		cmocka_unit_test(test_warmups_run_first_and_are_excluded),
		cmocka_unit_test(test_request_timeout),
		cmocka_unit_test(test_connect_failures),
		cmocka_unit_test(test_http_status_and_cut_stream),
		cmocka_unit_test(test_cut_then_crash_is_server_crash),
		cmocka_unit_test(test_crash_hang_and_deadline_end_the_sweep),
		cmocka_unit_test(test_crash_hang_and_deadline_with_two_workers),
		cmocka_unit_test(test_two_workers_match_one),
		cmocka_unit_test(test_coalesced_events_are_counted),
		cmocka_unit_test(test_recorded_streams_through_the_loop),
		cmocka_unit_test(test_content_is_kept_when_asked),
		cmocka_unit_test(test_reads_timed_without_kernel_stamps),
		cmocka_unit_test(test_summary_json),
		cmocka_unit_test(test_answer_bounds),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, server_start, server_stop);
}
