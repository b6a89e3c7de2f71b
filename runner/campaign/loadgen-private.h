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

#include <curl/curl.h>

#include "buf.h"
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

enum req_state { REQ_FREE = 0, REQ_ACTIVE, REQ_HELD };

struct lg;
struct lg_shared;

struct lg_req {
	struct lg *lg;
	CURL *easy;
	enum req_state state;
	size_t index;
	int warmup;
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
	struct curl_slist *id_header;	/* X-Request-Id, then lg->headers */
	uint64_t connect_ns;		/* CURLINFO_CONNECT_TIME_T, ns */
	int new_connection;		/* CURLINFO_NUM_CONNECTS > 0 */
	unsigned attempts;		/* times libcurl was about to send it
					   (CURLOPT_PREREQFUNCTION) */
	char curlerr[CURL_ERROR_SIZE];
};

/*
 * One worker: its own multi handle, sockets, requests and tally, run by
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
	CURLM *multi;
	struct curl_slist *headers;
	struct sockwait *wait;
	uint64_t timer_at;		/* libcurl's timer, 0: none */
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
	/* Set once libcurl had to send a request again because the server
	 * closed a kept-alive connection before answering: from then on
	 * each request opens a connection of its own and closes it after
	 * (FRESH_CONNECT, FORBID_REUSE). */
	int no_reuse;
	CURL **pre;			/* the preconnect GETs in flight */
	size_t npre, pre_left;
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
/* Wait until every worker has called it (as often). */
void lg_barrier(struct lg_shared *sh);

/* loadgen-req.c: one request. */
struct werr *req_setup(struct lg *lg, struct lg_req *r);
void req_teardown(struct lg_req *r);
/* Ready the slot for its next request: the easy handle is reset (so
 * nothing, libcurl's count of connection retries included, carries over
 * from the last request) and set up again; buffers are kept. */
void req_reset(struct lg_req *r);
/* Name the request in an X-Request-Id header (lg->cfg's prefix). */
void req_set_id(struct lg *lg, struct lg_req *r);
/* Record the first failure of the request (later ones are dropped). */
void req_fail(struct lg_req *r, enum loadgen_outcome outcome,
    const char *fmt, const char *detail, size_t detail_len);
/* Close the counting of the loop pass the last read belonged to. */
void req_close_pass(struct lg_req *r);
/* Read libcurl's connect time and connection count of the transfer. */
void req_connect_info(struct lg_req *r);
/* Decide the outcome of a transfer libcurl finished; 1 for a transport
 * failure (the server may be gone). */
int req_classify(struct lg_req *r, CURLcode rc);
/* The record handed to on_record; points into r until it is reset. */
void req_record(struct lg_req *r, struct loadgen_record *rec);

#endif
