/*
 * loadgen-read.c - what the load generator's connections (loadgen-conn.c)
 * do when their socket is ready: finish a connect, send on, and read.
 * A read is one recvmsg(2) into the worker's buffer, timed by the
 * kernel's receive stamp (loadgen-stamp.c) or the clock read the moment
 * it returns, fed to the response reader (http1.c) and on to the request
 * (loadgen-req.c). A socket is read until a read comes back short (the
 * wait tells of new bytes only: epoll is edge-triggered) while the peer
 * has not hung up, or to its end once it has, or for at most
 * LG_READS_PER_READY full reads, and then read on in the next pass.
 *
 * Never prints; never blocks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "http1.h"
#include "loadgen-private.h"
#include "sockwait.h"
#include "util.h"

/* Full reads before the loop goes on to the deadlines (the next pass
 * reads on: lg_conn_again): a server that never pauses cannot hold the
 * loop. */
#define LG_READS_PER_READY	16
/* A request is urgent for its last LG_URGENT_TAIL token events: an engine
 * that is behind sends a stream's last events bunched, several to a read
 * (up to 8 at c = 1024 against the one-core simulated engine), and one
 * that was not yet urgent had its end held by the coalescing wait. */
#define LG_URGENT_TAIL	8
#define LG_PRECONNECT_MAX	(64 * 1024)	/* as engine.c's health check */

/* Whether c's reads may not wait for the coalescing (loadgen.c): its
 * request has had no token yet, or its end is near (its end lets the next
 * request go: not held either). */
static int
conn_urgent(const struct lg_conn *c)
{
	const struct lg_req *r = c->req;

	if (r == NULL)
		return c->preconnect;
	return r->first_ns == 0 || (r->body->max_tokens > 0 &&
	    r->token_events + LG_URGENT_TAIL >= (size_t)r->body->max_tokens);
}

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
		lg_conn_close(lg, c);
		return;
	}
	if (err == 0 && http1_eof(&c->http)) {
		lg_conn_end(lg, c, LG_XFER_OK, NULL);
		return;
	}
	if (r != NULL && !c->answered && c->reused &&
	    r->attempts < LG_MAX_ATTEMPTS) {
		lg_conn_retry(lg, c, r);
		return;
	}
	if (err != 0)
		snprintf(why, LG_WHY_MAX, "Recv failure: %s", strerror(err));
	else
		snprintf(why, LG_WHY_MAX, "%s", !c->answered ?
		    "Empty reply from server" :
		    "transfer closed with the answer incomplete");
	lg_conn_end(lg, c, LG_XFER_RECV, why);
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

	c->again = 0;
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
			lg_conn_close(lg, c);	/* bytes nobody asked for */
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
			lg_conn_end(lg, c, LG_XFER_CUT, NULL);	/* too much */
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
			if (stamp == 0)
				lg->pass_unstamped = 1;	/* read when read */
		}
		used = http1_feed(&c->http, lg->rbuf, (size_t)n, on_head,
		    on_body, &a);
		if (used == HTTP1_STOPPED) {
			lg_conn_end(lg, c, LG_XFER_CUT, NULL);
			return;
		}
		if (used < 0) {
			snprintf(why, LG_WHY_MAX, "bad HTTP answer: %s",
			    c->http.error);
			lg_conn_end(lg, c, LG_XFER_RECV, why);
			return;
		}
		if (c->http.state == HTTP1_DONE) {
			if ((size_t)used < (size_t)n)
				c->http.keep_alive = 0;	/* bytes after it */
			lg_conn_end(lg, c, LG_XFER_OK, NULL);
			return;
		}
		if (c->early != conn_urgent(c))
			lg_conn_set_early(lg, c, !c->early);
		if ((size_t)n < LG_READ_BYTES && !c->hup)
			return;	/* drained: the next read would block */
	}
	/* Not drained: the wait tells of new bytes only (epoll's edge), so
	 * the next pass reads on where this one stopped. */
	c->again = 1;
	if (lg->nagain == lg->capagain) {
		lg->capagain = lg->capagain != 0 ? lg->capagain * 2 : 16;
		lg->again = xrealloc(lg->again,
		    lg->capagain * sizeof(*lg->again));
	}
	lg->again[lg->nagain++] = c->fd;
}

void
lg_conn_again(struct lg *lg)
{
	struct lg_conn *c;
	size_t i, n = lg->nagain;
	int fd;

	for (i = 0; i < n; i++) {
		fd = lg->again[i];
		if ((c = lg->byfd[fd]) != NULL && c->again)
			conn_read(lg, c);
	}
	memmove(lg->again, lg->again + n, (lg->nagain - n) *
	    sizeof(*lg->again));
	lg->nagain -= n;
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
		lg_conn_end(lg, c, LG_XFER_CONNECT, why);
		return;
	}
	if (c->req != NULL)
		c->req->connect_ns = now > c->start_ns ? now - c->start_ns : 1;
	c->state = CONN_SENDING;
	lg_conn_send(lg, c);
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
		lg_conn_send(lg, c);
		if (lg->byfd[fd] != c || c->state == CONN_SENDING)
			return;
	}
	if (flags & SOCKWAIT_HUP)
		c->hup = 1;	/* read to the end from now on */
	if (flags & (SOCKWAIT_IN | SOCKWAIT_ERR))
		conn_read(lg, c);
}

