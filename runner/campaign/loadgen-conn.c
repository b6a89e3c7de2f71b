/*
 * loadgen-conn.c - the load generator's connections: plain HTTP/1.1 over
 * non-blocking TCP sockets, one request at a time on each, kept alive
 * between requests when the server allows it. Each worker (loadgen.c)
 * owns its connections; sockets are watched through the worker's
 * sockwait; what is done when one is ready (connect, send on, read) is
 * loadgen-read.c.
 *
 * Why not libcurl, which the rest of warden uses: at one SSE event per
 * read libcurl 7.88 spent more user time per event than warden's own
 * parsing and made a poll(2) after every read (its socket filter asks
 * whether more data waits); here a read is one recv(2), and the clock is
 * read the moment it returns (or the kernel's receive stamp taken:
 * loadgen-stamp.c). Where requests go is loadgen-target.c.
 *
 * What libcurl did that this keeps: a request whose kept-alive connection
 * the server closed before any byte of an answer is sent again on a new
 * connection (a connection-level retry, at most LG_MAX_ATTEMPTS sends),
 * and an idle connection the server closes is noticed and dropped before
 * it is reused (it stays watched for reading while idle).
 *
 * Never prints; never blocks (the address is resolved once, in
 * lg_target_new, before any worker runs).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "http1.h"
#include "loadgen-private.h"
#include "sockwait.h"
#include "util.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0		/* macOS: SO_NOSIGPIPE is set instead */
#endif

/* ---- connections ---- */

/* Watch c for events; in the coalescing wait's set too while c is early
 * (loadgen.c). */
static int
conn_watch(struct lg *lg, struct lg_conn *c, unsigned events)
{
	if (c->events == events)
		return 0;	/* as it is: no system call */
	c->events = events;
	if (c->early && lg->early != NULL)
		(void)sockwait_set(lg->early, c->fd, events);
	return sockwait_set(lg->wait, c->fd, events);
}

/* c is urgent (early), or no longer. */
void
lg_conn_set_early(struct lg *lg, struct lg_conn *c, int early)
{
	if (c->early == early)
		return;
	c->early = early;
	if (lg->early == NULL)
		return;
	if (early)
		(void)sockwait_set(lg->early, c->fd, c->events);
	else
		sockwait_del(lg->early, c->fd);
}

static void
conn_map(struct lg *lg, int fd, struct lg_conn *c)
{
	size_t n;

	if ((size_t)fd >= lg->nbyfd) {
		n = lg->nbyfd != 0 ? lg->nbyfd : 64;
		while (n <= (size_t)fd)
			n *= 2;
		lg->byfd = xrealloc(lg->byfd, n * sizeof(*lg->byfd));
		memset(lg->byfd + lg->nbyfd, 0,
		    (n - lg->nbyfd) * sizeof(*lg->byfd));
		lg->nbyfd = n;
	}
	lg->byfd[fd] = c;
}

static void
idle_unlink(struct lg *lg, struct lg_conn *c)
{
	struct lg_conn **pp;

	for (pp = &lg->idle; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->next = NULL;
}

void
lg_conn_close(struct lg *lg, struct lg_conn *c)
{
	if (c->state == CONN_IDLE)
		idle_unlink(lg, c);
	if (c->req != NULL)
		c->req->conn = NULL;
	if (c->preconnect && lg->pre_left > 0)
		lg->pre_left--;
	sockwait_del(lg->wait, c->fd);
	if (c->early && lg->early != NULL)
		sockwait_del(lg->early, c->fd);
	lg->byfd[c->fd] = NULL;
	close(c->fd);
	buf_free(&c->out);
	free(c);
}

/* Open a connection (connect in progress, or done); NULL and *why set
 * when it cannot even begin. */
static struct lg_conn *
conn_open(struct lg *lg, uint64_t now, char *why)
{
	const struct lg_target *t = lg->target;
	struct lg_conn *c;
	int fd, one = 1;

	fd = socket(t->addr.ss_family, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(why, LG_WHY_MAX, "Failed to connect to %s: socket: "
		    "%s", t->host, strerror(errno));
		return NULL;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (lg->kernel_stamps)
		lg_stamp_ask(fd);
#ifdef SO_NOSIGPIPE
	(void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
	c = xcalloc(1, sizeof(*c));
	c->fd = fd;
	c->start_ns = now;
	c->born_pass = lg->pass;
	buf_init(&c->out);
	http1_init(&c->http);
	if (connect(fd, (const struct sockaddr *)&t->addr, t->addrlen) == 0)
		c->state = CONN_SENDING;
	else if (errno == EINPROGRESS || errno == EINTR)
		c->state = CONN_CONNECTING;
	else {
		snprintf(why, LG_WHY_MAX, "Failed to connect to %s: %s",
		    t->host, strerror(errno));
		close(fd);
		free(c);
		return NULL;
	}
	conn_map(lg, fd, c);
	c->early = 1;
	if (conn_watch(lg, c, SOCKWAIT_OUT) != 0) {
		snprintf(why, LG_WHY_MAX, "cannot watch the socket: %s",
		    strerror(errno));
		if (lg->early != NULL)
			sockwait_del(lg->early, fd);
		lg->byfd[fd] = NULL;
		close(fd);
		free(c);
		return NULL;
	}
	return c;
}

/* The request's bytes into c->out. */
static void
conn_put_request(struct lg *lg, struct lg_conn *c, struct lg_req *r)
{
	const struct loadgen_config *cfg = lg->cfg;

	buf_reset(&c->out);
	buf_puts(&c->out, lg->target->head);
	if (cfg->request_id_prefix != NULL)
		buf_printf(&c->out, "X-Request-Id: %s%s%zu\r\n",
		    cfg->request_id_prefix, r->warmup ? "w" : "", r->index);
	buf_printf(&c->out, "Content-Length: %zu\r\n\r\n", r->body->len);
	buf_add(&c->out, r->body->data, r->body->len);
	c->out_off = 0;
}

/* Send what is left of the request; watch for the answer once sent. */
void
lg_conn_send(struct lg *lg, struct lg_conn *c)
{
	char why[LG_WHY_MAX];
	ssize_t n;

	while (c->out_off < c->out.len) {
		n = send(c->fd, c->out.data + c->out_off,
		    c->out.len - c->out_off, MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			(void)conn_watch(lg, c, SOCKWAIT_IN | SOCKWAIT_OUT);
			return;
		}
		if (c->req != NULL && c->reused && !c->answered &&
		    c->req->attempts < LG_MAX_ATTEMPTS) {
			lg_conn_retry(lg, c, c->req);	/* closed under us */
			return;
		}
		snprintf(why, LG_WHY_MAX, "Send failure: %s",
		    n < 0 ? strerror(errno) : "nothing sent");
		lg_conn_end(lg, c, LG_XFER_SEND, why);
		return;
	}
	c->state = CONN_RECEIVING;
	(void)conn_watch(lg, c, SOCKWAIT_IN);
}

/* Put r on c and send it (c connected or connecting). */
static void
conn_carry(struct lg *lg, struct lg_conn *c, struct lg_req *r)
{
	c->req = r;
	c->answered = 0;
	http1_init(&c->http);
	r->conn = c;
	r->attempts++;
	lg_conn_set_early(lg, c, 1);
	conn_put_request(lg, c, r);
	if (c->state == CONN_IDLE) {
		c->state = CONN_SENDING;
		lg_conn_send(lg, c);
	} else if (c->state == CONN_SENDING)
		lg_conn_send(lg, c);
}

/* Send r on a connection of its own, opened now; on a failure to connect
 * r ends. Its connect time counts from the submission, on a retry too. */
static void
conn_fresh(struct lg *lg, struct lg_req *r)
{
	char why[LG_WHY_MAX];
	struct lg_conn *c;
	uint64_t now = mono_ns();

	if ((c = conn_open(lg, now, why)) == NULL) {
		if (r->attempts == 0)
			r->attempts = 1;	/* it was about to be sent */
		lg_finish(lg, r, LG_XFER_CONNECT, why);
		return;
	}
	r->new_connection = 1;
	c->start_ns = r->submit_ns;
	if (c->state == CONN_SENDING)	/* connected at once */
		r->connect_ns = now > r->submit_ns ? now - r->submit_ns : 1;
	conn_carry(lg, c, r);
}

void
lg_conn_start(struct lg *lg, struct lg_req *r)
{
	struct lg_conn *c;

	r->deadline_ns = r->submit_ns + lg->timeout_ns;
	if (lg->timer_at == 0 || r->deadline_ns < lg->timer_at)
		lg->timer_at = r->deadline_ns;
	while (lg->no_reuse && lg->idle != NULL)
		lg_conn_close(lg, lg->idle);	/* none is reused any more */
	if (lg->idle == NULL) {
		conn_fresh(lg, r);
		return;
	}
	c = lg->idle;
	lg->idle = c->next;
	c->next = NULL;
	c->reused = 1;
	conn_carry(lg, c, r);
}

/* Send r again on a new connection: the kept-alive one it went out on was
 * closed before any byte of an answer. The server closes kept-alive
 * connections under us: from now on no request is put on one it may be
 * closing (lg_conn_start, conn_end). */
void
lg_conn_retry(struct lg *lg, struct lg_conn *old, struct lg_req *r)
{
	lg->no_reuse = 1;
	lg->tally.sum->connection_reuse_stopped = 1;
	old->req = NULL;
	r->conn = NULL;
	lg_conn_close(lg, old);
	conn_fresh(lg, r);
}

/* The transfer on c is over: end the request, keep or close c. */
void
lg_conn_end(struct lg *lg, struct lg_conn *c, enum lg_xfer how,
    const char *why)
{
	struct lg_req *r = c->req;
	int keep;

	keep = how == LG_XFER_OK && c->http.keep_alive && !lg->no_reuse &&
	    c->http.state == HTTP1_DONE && !lg->stopping;
	c->req = NULL;
	if (c->preconnect) {
		c->preconnect = 0;
		if (lg->pre_left > 0)
			lg->pre_left--;
		if (how == LG_XFER_OK)
			lg->tally.sum->preconnected++;
	}
	if (keep) {
		c->state = CONN_IDLE;
		c->reused = 1;
		c->next = lg->idle;
		lg->idle = c;
		lg_conn_set_early(lg, c, 0);
		(void)conn_watch(lg, c, SOCKWAIT_IN);
	} else
		lg_conn_close(lg, c);
	if (r != NULL) {
		r->conn = NULL;
		lg_finish(lg, r, how, why);
	}
}

/* ---- deadlines, aborts, the preconnect ---- */

void
lg_conn_timeouts(struct lg *lg, uint64_t now)
{
	struct lg_conn *c;
	uint64_t next = 0, d;
	size_t fd;

	if (lg->timer_at == 0 || now < lg->timer_at)
		return;
	for (fd = 0; fd < lg->nbyfd; fd++) {
		if ((c = lg->byfd[fd]) == NULL)
			continue;
		if (c->req != NULL)
			d = c->req->deadline_ns;
		else if (c->preconnect)
			d = c->deadline_ns;
		else
			continue;
		if (d != 0 && now >= d) {
			lg_conn_end(lg, c, LG_XFER_TIMEOUT, NULL);
			continue;
		}
		if (d != 0 && (next == 0 || d < next))
			next = d;
	}
	lg->timer_at = next;
}

void
lg_conn_cancel(struct lg *lg, struct lg_req *r)
{
	struct lg_conn *c = r->conn;

	if (c == NULL)
		return;
	c->req = NULL;
	r->conn = NULL;
	lg_conn_close(lg, c);
}

void
lg_conn_preconnect(struct lg *lg, uint64_t timeout_ns)
{
	char why[LG_WHY_MAX];
	struct lg_conn *c;
	uint64_t now = mono_ns();
	size_t i;

	if (lg->target->pre_request == NULL)
		return;
	for (i = 0; i < lg->concurrency; i++) {
		if ((c = conn_open(lg, now, why)) == NULL)
			break;
		c->preconnect = 1;
		c->deadline_ns = now + timeout_ns;
		if (lg->timer_at == 0 || c->deadline_ns < lg->timer_at)
			lg->timer_at = c->deadline_ns;
		buf_puts(&c->out, lg->target->pre_request);
		c->out_off = 0;
		lg->pre_left++;
		if (c->state == CONN_SENDING)
			lg_conn_send(lg, c);
	}
}

void
lg_conn_close_all(struct lg *lg)
{
	size_t fd;

	for (fd = 0; fd < lg->nbyfd; fd++)
		if (lg->byfd[fd] != NULL)
			lg_conn_close(lg, lg->byfd[fd]);
	free(lg->byfd);
	lg->byfd = NULL;
	lg->nbyfd = 0;
	lg->idle = NULL;
	lg->nagain = 0;
}
