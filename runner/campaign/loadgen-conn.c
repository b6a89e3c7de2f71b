/*
 * loadgen-conn.c - the load generator's connections: plain HTTP/1.1 over
 * non-blocking TCP sockets, one request at a time on each, kept alive
 * between requests when the server allows it. Each worker (loadgen.c)
 * owns its connections; sockets are watched through the worker's
 * sockwait, and every read lands in the worker's buffer and goes to the
 * response reader (http1.c) and on to the request (loadgen-req.c).
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

#define LG_MAX_ATTEMPTS	6	/* libcurl's: the first send and 5 retries */
#define LG_WHY_MAX	160
/* Full reads before the loop goes on to the deadlines (the socket stays
 * ready): a server that never pauses cannot hold the loop. */
#define LG_READS_PER_READY	16
#define LG_PRECONNECT_MAX	(64 * 1024)	/* as engine.c's health check */

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0		/* macOS: SO_NOSIGPIPE is set instead */
#endif

enum conn_state {
	CONN_CONNECTING,	/* connect(2) in progress */
	CONN_SENDING,		/* request bytes left to send */
	CONN_RECEIVING,		/* the answer is being read */
	CONN_IDLE		/* kept alive, carrying nothing */
};

struct lg_conn {
	int fd;
	enum conn_state state;
	struct lg_req *req;	/* the request it carries, or NULL */
	int preconnect;		/* it carries a preconnect GET */
	int reused;		/* it carried an answered request before */
	int answered;		/* a byte of the current answer came */
	uint64_t start_ns;	/* connect(2) was called */
	uint64_t deadline_ns;	/* of the preconnect GET; requests have
				   their own */
	size_t pre_bytes;	/* read of the preconnect GET's answer */
	uint64_t born_pass;	/* the loop pass it was opened in */
	struct buf out;		/* the request's bytes */
	size_t out_off;		/* how many were sent */
	struct http1 http;
	struct lg_conn *next;	/* in lg->idle */
};

/* ---- connections ---- */

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

static void
conn_close(struct lg *lg, struct lg_conn *c)
{
	if (c->state == CONN_IDLE)
		idle_unlink(lg, c);
	if (c->req != NULL)
		c->req->conn = NULL;
	if (c->preconnect && lg->pre_left > 0)
		lg->pre_left--;
	sockwait_del(lg->wait, c->fd);
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
	if (sockwait_set(lg->wait, fd, SOCKWAIT_OUT) != 0) {
		snprintf(why, LG_WHY_MAX, "cannot watch the socket: %s",
		    strerror(errno));
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

static void conn_end(struct lg *lg, struct lg_conn *c, enum lg_xfer how,
    const char *why);
static void conn_retry(struct lg *lg, struct lg_conn *old,
    struct lg_req *r);

/* Send what is left of the request; watch for the answer once sent. */
static void
conn_send(struct lg *lg, struct lg_conn *c)
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
			(void)sockwait_set(lg->wait, c->fd,
			    SOCKWAIT_IN | SOCKWAIT_OUT);
			return;
		}
		if (c->req != NULL && c->reused && !c->answered &&
		    c->req->attempts < LG_MAX_ATTEMPTS) {
			conn_retry(lg, c, c->req);	/* closed under us */
			return;
		}
		snprintf(why, LG_WHY_MAX, "Send failure: %s",
		    n < 0 ? strerror(errno) : "nothing sent");
		conn_end(lg, c, LG_XFER_SEND, why);
		return;
	}
	c->state = CONN_RECEIVING;
	(void)sockwait_set(lg->wait, c->fd, SOCKWAIT_IN);
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
	conn_put_request(lg, c, r);
	if (c->state == CONN_IDLE) {
		c->state = CONN_SENDING;
		conn_send(lg, c);
	} else if (c->state == CONN_SENDING)
		conn_send(lg, c);
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
		conn_close(lg, lg->idle);	/* none is reused any more */
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
static void
conn_retry(struct lg *lg, struct lg_conn *old, struct lg_req *r)
{
	lg->no_reuse = 1;
	lg->tally.sum->connection_reuse_stopped = 1;
	old->req = NULL;
	r->conn = NULL;
	conn_close(lg, old);
	conn_fresh(lg, r);
}

/* The transfer on c is over: end the request, keep or close c. */
static void
conn_end(struct lg *lg, struct lg_conn *c, enum lg_xfer how, const char *why)
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
		(void)sockwait_set(lg->wait, c->fd, SOCKWAIT_IN);
	} else
		conn_close(lg, c);
	if (r != NULL) {
		r->conn = NULL;
		lg_finish(lg, r, how, why);
	}
}

/* ---- reading ---- */

struct body_arg {
	struct lg_conn *c;
	uint64_t now;
};

static int
on_head(void *arg, const struct http1 *p)
{
	struct body_arg *a = arg;

	if (a->c->req != NULL)
		a->c->req->status = p->status;
	return 1;
}

static int
on_body(void *arg, const char *data, size_t len)
{
	struct body_arg *a = arg;

	if (a->c->req == NULL)
		return 1;	/* a preconnect's answer: not kept */
	return req_body(a->c->req, a->now, data, len);
}

/* The server closed c (n == 0) or reading failed (err). */
static void
conn_eof(struct lg *lg, struct lg_conn *c, int err)
{
	char why[LG_WHY_MAX];
	struct lg_req *r = c->req;

	if (c->state == CONN_IDLE || (r == NULL && !c->preconnect)) {
		conn_close(lg, c);
		return;
	}
	if (err == 0 && http1_eof(&c->http)) {
		conn_end(lg, c, LG_XFER_OK, NULL);
		return;
	}
	if (r != NULL && !c->answered && c->reused &&
	    r->attempts < LG_MAX_ATTEMPTS) {
		conn_retry(lg, c, r);
		return;
	}
	if (err != 0)
		snprintf(why, LG_WHY_MAX, "Recv failure: %s", strerror(err));
	else
		snprintf(why, LG_WHY_MAX, "%s", !c->answered ?
		    "Empty reply from server" :
		    "transfer closed with the answer incomplete");
	conn_end(lg, c, LG_XFER_RECV, why);
}

static void
conn_read(struct lg *lg, struct lg_conn *c)
{
	char why[LG_WHY_MAX];
	union {
		char buf[256];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr mh;
	struct body_arg a;
	struct lg_req *r;
	uint64_t stamp;
	ssize_t n;
	long used;
	int reads;

	for (reads = 0; reads < LG_READS_PER_READY; reads++) {
		iov.iov_base = lg->rbuf;
		iov.iov_len = LG_READ_BYTES;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(c->fd, &mh, 0);
		a.now = mono_ns();	/* first, before any parsing */
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_eof(lg, c, n < 0 ? errno : 0);
			return;
		}
		if (c->state == CONN_IDLE || (c->req == NULL &&
		    !c->preconnect)) {
			conn_close(lg, c);	/* bytes nobody asked for */
			return;
		}
		c->answered = 1;
		a.c = c;
		if (a.now > lg->last_byte_ns)
			lg->last_byte_ns = a.now;	/* the head's too */
		if (c->preconnect)
			c->pre_bytes += (size_t)n;
		if ((c->preconnect && c->pre_bytes > LG_PRECONNECT_MAX) ||
		    (c->req != NULL && !req_answer_bytes(c->req, (size_t)n))) {
			conn_end(lg, c, LG_XFER_CUT, NULL);	/* too much */
			return;
		}
		if ((r = c->req) != NULL) {
			stamp = lg->kernel_stamps ? lg_stamp_mono(lg, &mh, a.now) :
			    0;
			if (stamp != 0 && stamp <= r->submit_ns)
				stamp = r->submit_ns + 1;	/* after it */
			if (stamp != 0)
				a.now = stamp;
			if (!r->warmup) {
				lg->tally.sum->reads++;
				if (stamp != 0)
					lg->tally.sum->kernel_stamped_reads++;
			}
		}
		used = http1_feed(&c->http, lg->rbuf, (size_t)n, on_head,
		    on_body, &a);
		if (used == HTTP1_STOPPED) {
			conn_end(lg, c, LG_XFER_CUT, NULL);
			return;
		}
		if (used < 0) {
			snprintf(why, LG_WHY_MAX, "bad HTTP answer: %s",
			    c->http.error);
			conn_end(lg, c, LG_XFER_RECV, why);
			return;
		}
		if (c->http.state == HTTP1_DONE) {
			if ((size_t)used < (size_t)n)
				c->http.keep_alive = 0;	/* bytes after it */
			conn_end(lg, c, LG_XFER_OK, NULL);
			return;
		}
		if ((size_t)n < LG_READ_BYTES)
			return;	/* drained: the next read would block */
	}
}

/* connect(2) finished on c: how did it go? */
static void
conn_connected(struct lg *lg, struct lg_conn *c, uint64_t now)
{
	char why[LG_WHY_MAX];
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0) {
		snprintf(why, LG_WHY_MAX, "Failed to connect to %s: %s",
		    lg->target->host, strerror(err));
		conn_end(lg, c, LG_XFER_CONNECT, why);
		return;
	}
	if (c->req != NULL)
		c->req->connect_ns = now > c->start_ns ? now - c->start_ns : 1;
	c->state = CONN_SENDING;
	conn_send(lg, c);
}

void
lg_conn_ready(struct lg *lg, int fd, unsigned flags, uint64_t now)
{
	struct lg_conn *c;

	if (fd < 0 || (size_t)fd >= lg->nbyfd || (c = lg->byfd[fd]) == NULL)
		return;
	if (c->born_pass == lg->pass)
		return;	/* opened in this pass: the readiness was another's,
			   closed earlier in the pass under the same number */
	if (c->state == CONN_CONNECTING) {
		if (flags & (SOCKWAIT_OUT | SOCKWAIT_ERR | SOCKWAIT_IN))
			conn_connected(lg, c, now);
		return;
	}
	if (c->state == CONN_SENDING && (flags & SOCKWAIT_OUT)) {
		conn_send(lg, c);
		if (lg->byfd[fd] != c || c->state == CONN_SENDING)
			return;
	}
	if (flags & (SOCKWAIT_IN | SOCKWAIT_ERR))
		conn_read(lg, c);
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
			conn_end(lg, c, LG_XFER_TIMEOUT, NULL);
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
	conn_close(lg, c);
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
			conn_send(lg, c);
	}
}

void
lg_conn_close_all(struct lg *lg)
{
	size_t fd;

	for (fd = 0; fd < lg->nbyfd; fd++)
		if (lg->byfd[fd] != NULL)
			conn_close(lg, lg->byfd[fd]);
	free(lg->byfd);
	lg->byfd = NULL;
	lg->nbyfd = 0;
	lg->idle = NULL;
}
