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
#include <stdint.h>
#include <sys/resource.h>

#include <curl/curl.h>

#include "buf.h"
#include "loadgen.h"
#include "sockwait.h"
#include "sse.h"
#include "stats.h"

#define LG_NS_PER_MS	1e6

/* The samples and counters of one sweep, folded in as requests end. */
struct lg_tally {
	struct loadgen_summary *sum;
	uint64_t start_ns;		/* first timed submission, 0: none */
	uint64_t last_end_ns;		/* latest end of a timed request */
	size_t done, ok;		/* timed requests ended, succeeded */
	struct rusage ru0;		/* at the start of the timed list */
	struct stats_samples ttft, tpot, itl, e2el, lag, connect;
};

/* Take this thread's CPU times as the start of the timed part. */
void lg_tally_cpu_start(struct lg_tally *t);
/* Fold an ended request (warmup or timed) into the tally. */
void lg_tally_record(struct lg_tally *t, const struct loadgen_record *rec);
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

struct lg {
	const struct loadgen_config *cfg;
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
	size_t nlist, next, limit;
	size_t in_flight, held;
	int stopping;
	enum loadgen_end end;
	uint64_t last_byte_ns, next_tick_ns, tick_ns, timeout_ns;
	struct lg_tally tally;		/* the summary being built */
	/* Set once libcurl had to send a request again because the server
	 * closed a kept-alive connection before answering: from then on
	 * each request opens a connection of its own and closes it after
	 * (FRESH_CONNECT, FORBID_REUSE). */
	int no_reuse;
	CURL **pre;			/* the preconnect GETs in flight */
	size_t npre, pre_left;
};

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
