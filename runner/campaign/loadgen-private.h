/*
 * loadgen-private.h - what loadgen.c (the event loop), loadgen-req.c
 * (one request) and loadgen-summary.c (the summary maths and its JSON)
 * share. Not for any other module: the public interface is loadgen.h.
 *
 * The loop owns the sockets and the requests; the tally owns everything
 * that turns finished request records into a struct loadgen_summary. The
 * loop writes only the transport counters of the summary directly
 * (submitted, max_in_flight, reads, bytes) and the tally's start_ns.
 */
#ifndef WARDEN_LOADGEN_PRIVATE_H
#define WARDEN_LOADGEN_PRIVATE_H

#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "buf.h"
#include "http1.h"
#include "loadgen.h"
#include "sockwait.h"
#include "sse.h"
#include "stats.h"

#define LG_NS_PER_MS	1e6

/* The samples and counters of one sweep (or of one worker's part of
 * it), folded in as requests end. */
struct lg_tally {
	struct loadgen_summary *sum;
	uint64_t start_ns;		/* first timed submission, 0: none */
	uint64_t last_end_ns;		/* latest end of a timed request */
	size_t done, ok;		/* timed requests ended, succeeded */
	struct rusage ru0;		/* at the start of the timed list */
	double cpu_s;			/* this thread's, over the timed list */
	double cpu_max_s;		/* merged: the busiest worker's */
	struct stats_samples ttft, tpot, itl, e2el, lag, connect;
};

/* Take this thread's CPU times as the start of the timed part. */
void lg_tally_cpu_start(struct lg_tally *t);
/* ... and as its end (cpu_s); the worker calls it as it finishes. */
void lg_tally_cpu_stop(struct lg_tally *t);
/* Fold an ended request (warmup or timed) into the tally. */
void lg_tally_record(struct lg_tally *t, const struct loadgen_record *rec);
/* Add a worker's tally (and its summary's counters) into dst's. */
void lg_tally_merge(struct lg_tally *dst, const struct lg_tally *src);
/* Fill the rest of the summary once the sweep is over: nbodies were
 * asked for; end_mono and end_real are the clocks read at the end. */
void lg_tally_finish(struct lg_tally *t, size_t nbodies, uint64_t end_mono,
    int64_t end_real);
void lg_tally_free(struct lg_tally *t);

/* ---- the requests and the loop (loadgen-req.c, loadgen.c) ---- */

#define LG_DEFAULT_TIMEOUT_NS	(300ull * 1000000000ull)
#define LG_DEFAULT_TICK_MS	100
#define LG_ERRBODY_MAX		512
#define LG_READ_BYTES		16384	/* one recv(2) at most */
#define LG_COALESCE_MS		1	/* the coalescing wait (loadgen.c) */
#define LG_IDLE_WAIT_MS		1000	/* the longest wait with no deadline */

enum req_state { REQ_FREE = 0, REQ_ACTIVE, REQ_HELD };

struct lg;
struct lg_shared;
struct lg_target;

struct lg_conn;

struct lg_req {
	struct lg *lg;
	enum req_state state;
	size_t index;
	int warmup;
	const struct loadgen_body *body;
	struct lg_conn *conn;		/* carrying it; NULL once it ended */
	uint64_t deadline_ns;		/* submit + the request timeout */
	struct sse_parser parser;
	struct sse_chunk_cache chunk_cache;	/* kept across requests */
	uint64_t submit_ns, first_ns, last_ns, end_ns, now_ns;
	uint64_t pass;			/* event-loop pass of the last read */
	size_t pass_events;		/* token events in that pass */
	size_t chunks, token_events, coalesced, max_per_read;
	long prompt_tokens, completion_tokens;
	int has_usage, done_seen;
	size_t content_bytes, reasoning_bytes, tool_ids, tool_deltas;
	long tool_max_index;
	char *finish_reason;
	long status;
	enum loadgen_outcome outcome;	/* stream-level failure, or final */
	struct buf error;
	struct buf errbody;
	struct buf content;		/* cfg->keep_content > 0 only */
	uint64_t *tok;
	size_t ntok, captok;
	/* the bounds of its answer (loadgen.h), and what was read of it */
	size_t max_events;
	uint64_t max_bytes, answer_bytes;
	uint64_t connect_ns;		/* submission to connected, ns */
	int new_connection;		/* it opened a connection */
	unsigned attempts;		/* times it was sent: a second is a
					   connection-level retry */
};

/*
 * One worker: its own connections, sockets, requests and tally, run by
 * one thread (loadgen.c). Nothing in it is touched by another thread
 * except the pub_* fields, which the worker stores once per loop pass
 * and the coordinator reads (loadgen-workers.c).
 */
struct lg {
	const struct loadgen_config *cfg;
	struct lg_shared *shared;	/* the run's coordination */
	unsigned worker;		/* 0 .. nworkers - 1 */
	unsigned concurrency;		/* this worker's share of c */
	struct loadgen_summary wsum;	/* this worker's counters */
	const char *scheduling;		/* rtsched_raise()'s answer */
	struct lg_target *target;	/* where the requests go */
	struct sockwait *wait;
	/* The sockets whose request has had no token yet (connecting,
	 * sending, or waiting for its first) or is near its end
	 * (loadgen-read.c): the coalescing wait watches only these
	 * (loadgen.c). NULL: no coalescing. */
	struct sockwait *early;
	int coalesce;			/* the next wait coalesces */
	int pass_unstamped;		/* a read of this pass had no stamp */
	int *again;			/* sockets to read on (loadgen-conn.c) */
	/* The coordinator writes a byte here when it has a verdict, so the
	 * wait needs no tick to see it (loadgen-workers.c); -1: none. */
	int wake_fd[2];
	/* records of this pass, handed over at its end */
	struct lg_handoff *out_head, **out_tail;
	size_t nagain, capagain;
	struct lg_conn **byfd;		/* the connection of each socket */
	size_t nbyfd;
	struct lg_conn *idle;		/* kept-alive connections, free */
	char *rbuf;			/* each read lands here */
	int kernel_stamps;		/* ask for the kernel's receive stamps
					   (WARDEN_LOADGEN_KERNEL_STAMPS=0:
					   no) */
	int64_t clock_offset;		/* lg_clock_offset(), this pass's */
	uint64_t timer_at;		/* earliest deadline, 0: none */
	uint64_t pass;
	struct lg_req *reqs;
	size_t nreqs;
	/* the list being run: warmups, then bodies */
	int warming_up;
	const struct loadgen_body *list;
	size_t nlist, limit;
	int exhausted;			/* no request of the list left to claim */
	size_t in_flight, held;
	int stopping;
	enum loadgen_end end;
	uint64_t last_byte_ns, next_tick_ns, tick_ns, timeout_ns;
	uint64_t held_ns;		/* when the oldest held record was held */
	struct lg_tally tally;		/* the summary being built */
	/* Set once a request had to be sent again because the server
	 * closed a kept-alive connection before answering: from then on
	 * each request opens a connection of its own and closes it after. */
	int no_reuse;
	size_t pre_left;		/* preconnect GETs in flight */
	/* what the coordinator reads: stored once per loop pass */
	_Atomic uint64_t pub_last_byte_ns, pub_start_ns;
	_Atomic size_t pub_in_flight;
};

/*
 * What the workers of one run share (loadgen-workers.c): the claim on
 * the next request of each list (one atomic add per request, never per
 * event), the coordinator's verdicts, the records handed over to it (one
 * lock per ended request) and a barrier between the phases.
 */
enum lg_verdict {
	LG_VERDICT_NONE = 0,
	LG_VERDICT_SERVER_CRASH,	/* on_tick: the server is gone */
	LG_VERDICT_HANG,		/* on_tick said hang */
	LG_VERDICT_STOP,		/* on_tick: warden was interrupted */
	LG_VERDICT_SILENT,		/* no byte from any worker for hang_ns */
};

struct lg_handoff;

struct lg_shared {
	const struct loadgen_config *cfg;
	unsigned nworkers;
	_Atomic size_t next_warmup, next_body;
	_Atomic int verdict;		/* enum lg_verdict */
	_Atomic int timed;		/* the timed list has begun */
	/* the start of the latest on_tick that answered CONTINUE: held
	 * records older than it are delivered */
	_Atomic uint64_t tick_ok_ns;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* the coordinator's: a record, or a
					   worker ended */
	pthread_cond_t phase;		/* the workers' barrier */
	struct lg_handoff *head, **tail;
	unsigned running;		/* workers not yet ended */
	unsigned arrived, generation;	/* the barrier */
};

/* loadgen.c: run one worker's part of the sweep, from its thread. */
void lg_worker_run(struct lg *lg);
struct werr *lg_setup(struct lg *lg, const struct loadgen_config *cfg);
void lg_teardown(struct lg *lg);
/* loadgen-workers.c: what the worker hands to the coordinator. */
void lg_handoff_record(struct lg *lg, const struct loadgen_record *rec);
void lg_handoff_flush(struct lg *lg);
/* Wait until every worker has called it (as often). */
void lg_barrier(struct lg_shared *sh);

/*
 * How a transfer ended, as the connection saw it (loadgen-conn.c);
 * req_classify() turns it into the request's outcome.
 */
enum lg_xfer {
	LG_XFER_OK = 0,		/* the response was read to its end */
	LG_XFER_CONNECT,	/* no connection: nothing was sent */
	LG_XFER_SEND,		/* the request could not be sent */
	LG_XFER_RECV,		/* the answer was cut, or never came */
	LG_XFER_TIMEOUT,	/* the request timeout passed */
	LG_XFER_CUT,		/* warden stopped reading (an oversized event,
				   an overlong answer) */
};

/* loadgen.c: the connection ended r's transfer (why: its words, or
 * NULL). */
void lg_finish(struct lg *lg, struct lg_req *r, enum lg_xfer how,
    const char *why);

/* Where the requests go, resolved once (loadgen-target.c). */
struct lg_target {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char *host;		/* for the messages: "127.0.0.1 port 8080" */
	char *head;		/* "POST /path HTTP/1.1\r\nHost: ...\r\n" and
				   the fixed headers, without the blank line */
	char *pre_request;	/* the whole preconnect GET, or NULL */
};

/* loadgen-target.c: the url read, its host resolved. */
struct werr *lg_target_new(const struct loadgen_config *cfg,
    struct lg_target **out);
void lg_target_free(struct lg_target *t);

/* loadgen-stamp.c: ask for the kernel's receive stamps on fd. */
void lg_stamp_ask(int fd);
/* The kernel's stamp of the read in mh on the monotonic clock (now_mono
 * read after the read), or 0 if it gave none. */
uint64_t lg_stamp_mono(const struct lg *lg, struct msghdr *mh,
    uint64_t now_mono);

/* ---- the connections of one worker (loadgen-conn.c, loadgen-read.c) ---- */

#define LG_MAX_ATTEMPTS	6	/* libcurl's: the first send and 5 retries */
#define LG_WHY_MAX	160

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
	int early;		/* in lg->early: conn_urgent() */
	int again;		/* in lg->again: not read to its end */
	int hup;		/* the peer hung up: read to the end */
	unsigned events;	/* what it is watched for (SOCKWAIT_*) */
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

/* Between the two files of the connections. */
void lg_conn_close(struct lg *lg, struct lg_conn *c);
/* The transfer on c is over: end the request, keep or close c. */
void lg_conn_end(struct lg *lg, struct lg_conn *c, enum lg_xfer how,
    const char *why);
/* Send r again on a new connection (old was closed under it). */
void lg_conn_retry(struct lg *lg, struct lg_conn *old, struct lg_req *r);
/* Send what is left of the request; watch for the answer once sent. */
void lg_conn_send(struct lg *lg, struct lg_conn *c);
/* Put c in the coalescing wait's set (early), or take it out. */
void lg_conn_set_early(struct lg *lg, struct lg_conn *c, int early);

/* Send r (its body set) on a kept-alive connection or a new one; on a
 * failure to connect, lg_finish() is called before it returns. */
void lg_conn_start(struct lg *lg, struct lg_req *r);
/* A socket the loop was told about is ready (SOCKWAIT_* flags). Read to
 * the end of what waits, or listed in lg->again. */
void lg_conn_ready(struct lg *lg, int fd, unsigned flags, uint64_t now);
/* Read on the sockets a pass left with bytes waiting (lg->again). */
void lg_conn_again(struct lg *lg);
/* End every transfer whose deadline passed; set lg->timer_at again. */
void lg_conn_timeouts(struct lg *lg, uint64_t now);
/* Drop r's connection (an aborted request): closed, never reused. */
void lg_conn_cancel(struct lg *lg, struct lg_req *r);
/* Open this worker's share of the c connections with a GET each to the
 * preconnect path; lg->pre_left counts those not yet answered. */
void lg_conn_preconnect(struct lg *lg, uint64_t timeout_ns);
/* Close every connection (idle, preconnecting or carrying a request). */
void lg_conn_close_all(struct lg *lg);
/* loadgen-stamp.c: CLOCK_REALTIME - CLOCK_MONOTONIC now, ns (0:
 * unknown). */
int64_t lg_clock_offset(void);

/* loadgen-req.c: one request. */
void req_setup(struct lg *lg, struct lg_req *r);
void req_teardown(struct lg_req *r);
/* Ready the slot for its next request (buffers are kept). */
void req_reset(struct lg_req *r);
/* Record the first failure of the request (later ones are dropped). */
void req_fail(struct lg_req *r, enum loadgen_outcome outcome,
    const char *fmt, const char *detail, size_t detail_len);
/* Close the counting of the loop pass the last read belonged to. */
void req_close_pass(struct lg_req *r);
/* Bytes of the answer's body, read at now (the clock read right after
 * the read returned). 0: warden cut the stream (an oversized event, or
 * more token events than the request allows). */
int req_body(struct lg_req *r, uint64_t now, const char *data, size_t len);
/* n more bytes were read for the answer (head and framing included).
 * 0: they pass its bound, the request is overlong: cut the stream. */
int req_answer_bytes(struct lg_req *r, size_t n);
/* Decide the outcome of a transfer that ended; 1 for a transport failure
 * (the server may be gone). */
int req_classify(struct lg_req *r, enum lg_xfer how, const char *why);
/* The record handed to on_record; points into r until it is reset. */
void req_record(struct lg_req *r, struct loadgen_record *rec);

#endif
