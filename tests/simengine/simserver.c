/*
 * simserver.c - the HTTP face of warden-simengine (libmicrohttpd): routes,
 * request bodies, SSE responses pulled from simstream.c.
 *
 * One thread per connection, so a response callback may block waiting
 * for tokens. Never decides what to answer (engine.c and simstream.c do)
 * and never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <jansson.h>
#include <microhttpd.h>

#include "rtsched.h"
#include "simserver.h"
#include "util.h"

#define SSE_BLOCK (64 * 1024)

struct conn_state {
	struct simserver *srv;
	struct MHD_Connection *conn;
	struct buf upload;
	struct sim_req *req;
};

/*
 * The connection headers of the engine being played: "Connection: close"
 * (mlx_lm's HTTP/1.0 handler closes after every reply; libmicrohttpd
 * closes when it sees the header), or the "Keep-Alive" cpp-httplib adds
 * to every reply below 400 that it does not close (llama-server), though
 * it closes after a stream anyway (see completed()).
 */
static void
connection_headers(const struct sim_config *c, struct MHD_Response *resp,
    unsigned int status)
{
	if (c->connection_close)
		MHD_add_response_header(resp, "Connection", "close");
	else if (c->keepalive_close && status < 400)
		MHD_add_response_header(resp, "Keep-Alive",
		    "timeout=5, max=100");
}

static enum MHD_Result
reply(const struct sim_config *c, struct MHD_Connection *conn,
    unsigned int status, const char *body, size_t len, const char *ctype)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, (void *)body,
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", ctype);
	connection_headers(c, resp, status);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
reply_json(const struct sim_config *c, struct MHD_Connection *conn,
    unsigned int status, const char *s)
{
	return reply(c, conn, status, s, strlen(s), "application/json");
}

static enum MHD_Result
reply_error(const struct sim_config *c, struct MHD_Connection *conn,
    unsigned int status, const char *msg, const char *type)
{
	struct buf b = BUF_INIT;
	enum MHD_Result ret;

	simstream_error_body(&b, msg, type, (int)status);
	ret = reply_json(c, conn, status, buf_cstr(&b));
	buf_free(&b);
	return ret;
}

static enum MHD_Result
serve_models(struct simserver *s, struct MHD_Connection *conn)
{
	json_t *o = json_pack("{s:s, s:[{s:s, s:s, s:i, s:s}]}", "object",
	    "list", "data", "id", s->cfg->model, "object", "model", "created", 0,
	    "owned_by", "warden-simengine");
	char *text = json_dumps(o, JSON_COMPACT);
	enum MHD_Result ret = reply_json(s->cfg, conn, 200, text);

	free(text);
	json_decref(o);
	return ret;
}

/*
 * Reset the connection: RST, no FIN. The socket is swapped for a fresh
 * unconnected one with dup2(), which closes the original with linger 0
 * while MHD keeps a valid descriptor to close later. A short pause first
 * lets the client read what was already sent, as when an engine dies.
 */
static void
reset_connection(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	struct linger lg = { 1, 0 };
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int fd, spare;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci == NULL)
		return;
	fd = ci->connect_fd;
	nanosleep(&ts, NULL);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
#ifdef SOCK_CLOEXEC
	spare = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
#else
	/* Darwin has no SOCK_CLOEXEC; the simulated engine starts no
	 * program that could inherit the socket. */
	spare = socket(AF_INET, SOCK_STREAM, 0);
#endif
	if (spare == -1)
		return;
	dup2(spare, fd);
	close(spare);
}

/* With --realtime, each connection thread (libmicrohttpd starts one per
 * connection) raises itself once, the first time it writes a stream: the
 * trace stamps a write just before libmicrohttpd sends it, and a thread
 * preempted in between would make the truth late. */
static _Thread_local int thread_raised;

static ssize_t
stream_reader(void *cls, uint64_t pos, char *out, size_t max)
{
	struct conn_state *cs = cls;
	struct sim_req *r = cs->req;
	struct simeng *e = cs->srv->engine;
	struct rtsched_saved saved;
	enum simstream_action a;
	const char *data = NULL;
	size_t len = 0;
	int ready, done, completed;

	if (cs->srv->cfg->realtime && !thread_raised) {
		rtsched_raise(&saved);
		thread_raised = 1;
	}

	if (simeng_wait(e, r, -1, &ready, &done) == -1)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	for (;;) {
		a = simstream_next(&r->st, ready, done, &data, &len, max,
		    &completed);
		switch (a) {
		case SIMSTREAM_DATA:
			memcpy(out, data, len);
			simeng_stamp(r, completed, mono_ns());
			return (ssize_t)len;
		case SIMSTREAM_WAIT:
			if (simeng_wait(e, r, ready, &ready, &done) == -1)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			break;
		case SIMSTREAM_STALL:
			if (simeng_stall(e) == -1)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			simeng_wait(e, r, -1, &ready, &done);
			break;
		case SIMSTREAM_RESET:
			reset_connection(cs->conn);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		case SIMSTREAM_END:
			r->ended = 1;
			r->done_ns = mono_ns();
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
	}
}

static enum MHD_Result
serve_stream(struct conn_state *cs)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK,
	    stream_reader, cs, NULL);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	connection_headers(cs->srv->cfg, resp, 200);
	ret = MHD_queue_response(cs->conn, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
serve_whole(struct conn_state *cs)
{
	struct simeng *e = cs->srv->engine;
	struct sim_req *r = cs->req;
	struct buf b = BUF_INIT;
	enum MHD_Result ret;
	int ready = -1, done = 0;

	while (!done)
		if (simeng_wait(e, r, ready, &ready, &done) == -1)
			return MHD_NO;
	simstream_full_body(&b, &r->so, &r->reply);
	r->done_ns = mono_ns();
	if (r->reply.n > 0)
		r->first_token_ns = r->done_ns;
	r->ended = 1;
	ret = reply_json(cs->srv->cfg, cs->conn, 200, buf_cstr(&b));
	buf_free(&b);
	return ret;
}

static enum MHD_Result
serve_completion(struct conn_state *cs)
{
	struct simserver *s = cs->srv;
	struct buf err = BUF_INIT;
	enum MHD_Result ret;
	json_error_t jerr;
	json_t *body;
	int status = 0;

	if (!simeng_ready(s->engine))
		return reply_error(s->cfg, cs->conn, 503, "the model is loading",
		    "server_error");
	body = json_loadb(cs->upload.data != NULL ? cs->upload.data : "",
	    cs->upload.len, 0, &jerr);
	if (body == NULL)
		return reply_error(s->cfg, cs->conn, 400, "the request body is not JSON",
		    "invalid_request_error");
	if (s->cfg->abort_at_connections > 0 &&
	    __atomic_load_n(&s->nconns, __ATOMIC_SEQ_CST) >=
	    s->cfg->abort_at_connections)
		simeng_crash();
	simeng_request_new(s->engine, body,
	    MHD_lookup_connection_value(cs->conn, MHD_HEADER_KIND,
	    "X-Request-Id"), &cs->req, &status, &err);
	json_decref(body);
	if (cs->req == NULL) {
		ret = reply_json(s->cfg, cs->conn, (unsigned int)status,
		    buf_cstr(&err));
		buf_free(&err);
		return ret;
	}
	simeng_submit(s->engine, cs->req);
	if (cs->req->stream)
		return serve_stream(cs);
	return serve_whole(cs);
}

static enum MHD_Result
route(struct conn_state *cs, const char *url, const char *method)
{
	struct simserver *s = cs->srv;
	int get = strcmp(method, "GET") == 0;

	if (strcmp(url, "/health") == 0 && get)
		return simeng_ready(s->engine) ?
		    reply_json(s->cfg, cs->conn, 200, "{\"status\":\"ok\"}") :
		    reply_json(s->cfg, cs->conn, 503, "{\"status\":\"loading\"}");
	if (strcmp(url, "/v1/models") == 0 && get)
		return serve_models(s, cs->conn);
	if (strcmp(url, "/v1/chat/completions") == 0) {
		if (strcmp(method, "POST") != 0)
			return reply_error(s->cfg, cs->conn, 405, "use POST",
			    "invalid_request_error");
		return serve_completion(cs);
	}
	return reply_error(s->cfg, cs->conn, 404, "no such endpoint",
	    "not_found_error");
}

static enum MHD_Result
handler(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls)
{
	struct conn_state *cs = *con_cls;

	if (cs == NULL) {
		/* The close fault: only the headers are in; the body is
		 * never read and nothing is sent (MHD_NO closes). */
		if (strcmp(url, "/v1/chat/completions") == 0 &&
		    strcmp(method, "POST") == 0 &&
		    simeng_close_fault(((struct simserver *)cls)->engine,
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		    "X-Request-Id")))
			return MHD_NO;
		cs = xcalloc(1, sizeof(*cs));
		cs->srv = cls;
		cs->conn = conn;
		buf_init(&cs->upload);
		*con_cls = cs;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (cs->upload.len + *upload_data_size > 64u * 1024 * 1024)
			return MHD_NO;
		buf_add(&cs->upload, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	return route(cs, url, method);
}

/*
 * --keepalive-close: end the connection once a stream was sent in full,
 * as llama-server does (its content provider returns false after the
 * last chunk, which cpp-httplib takes as the end of the connection)
 * though the reply announced Keep-Alive. Runs in the connection's thread
 * before it reads anything more, so a request the client sent meanwhile
 * is never read: shutdown() sends FIN, the close that follows with that
 * request unread sends RST.
 */
static void
close_after_stream(struct simserver *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	struct timespec ts;
	double ms = s->cfg->close_delay_ms;

	if (ms > 0) {
		ts.tv_sec = (time_t)(ms / 1000);
		ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
		nanosleep(&ts, NULL);
	}
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci != NULL)
		shutdown(ci->connect_fd, SHUT_RDWR);
}

static void
completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = *con_cls;
	struct simserver *s = cls;

	if (cs == NULL)
		return;
	if (s->cfg->keepalive_close && cs->req != NULL && cs->req->stream &&
	    cs->req->ended && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		close_after_stream(s, conn);
	if (cs->req != NULL)
		simeng_request_end(s->engine, cs->req);
	buf_free(&cs->upload);
	free(cs);
	*con_cls = NULL;
}

/*
 * Count the client connections open: --abort-at-connections is a crash at
 * a concurrency that does not depend on how fast the client sends, since a
 * client at c=K opens K connections before it times a request
 * (loadgen.c's preconnect), and keeps them.
 */
static void
notify_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
    enum MHD_ConnectionNotificationCode toe)
{
	struct simserver *s = cls;

	(void)conn;
	(void)socket_ctx;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		__atomic_add_fetch(&s->nconns, 1, __ATOMIC_SEQ_CST);
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
		__atomic_sub_fetch(&s->nconns, 1, __ATOMIC_SEQ_CST);
}

struct werr *
simserver_start(struct simserver *s, struct simeng *e, const struct sim_config *c)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_in sa;

	memset(s, 0, sizeof(*s));
	s->engine = e;
	s->cfg = c;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)c->port);
	if (inet_pton(AF_INET, c->host, &sa.sin_addr) != 1)
		return werr_usage("--host '%s' is not an IPv4 address", c->host);
	s->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, (uint16_t)c->port,
	    NULL, NULL, handler, s,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, s,
	    MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)0,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
	    /* The client benchmark runs c = 1024; the library's default
	     * limit (about FD_SETSIZE) refused the last few connections. */
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4096,
	    MHD_OPTION_END);
	if (s->daemon == NULL)
		return werr_new(WEXIT_ENV, "cannot listen on %s:%d", c->host,
		    c->port);
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info != NULL ? info->port : (uint16_t)c->port;
	return NULL;
}

void
simserver_stop(struct simserver *s)
{
	if (s->daemon != NULL)
		MHD_stop_daemon(s->daemon);
	s->daemon = NULL;
}
