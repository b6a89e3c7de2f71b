/*
 * loadgen.c - the closed-loop load generator. See loadgen.h.
 *
 * The loop is libcurl's socket interface driven by sockwait.h (epoll on
 * Linux, poll(2) elsewhere): libcurl tells us which sockets to watch and
 * when its timer fires; we wait, hand it the ready sockets, collect the
 * transfers that ended, and submit the next requests so exactly
 * `concurrency` stay in flight. Each request owns one
 * easy handle (reused) and one SSE parser; its write callback reads the
 * clock first, then parses. Each ended request is folded into the tally
 * as it is delivered; the summary maths and its JSON, after the loop, are
 * in loadgen-summary.c.
 *
 * Must never print, never block anywhere but in sockwait_wait(), and never
 * let a request's failure end the sweep: only hang, deadline and on_tick
 * do.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "loadgen-private.h"
#include "rtsched.h"
#include "sockwait.h"
#include "sse.h"
#include "stats.h"
#include "util.h"

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
	uint64_t *tok;
	size_t ntok, captok;
	struct curl_slist *id_header;	/* X-Request-Id, then lg->headers */
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
};

/* ---- per-request stream handling ---- */

static void
req_fail(struct lg_req *r, enum loadgen_outcome outcome, const char *fmt,
    const char *detail, size_t detail_len)
{
	if (r->outcome != LOADGEN_OK)
		return;		/* the first failure is the one reported */
	r->outcome = outcome;
	buf_reset(&r->error);
	buf_puts(&r->error, fmt);
	if (detail != NULL) {
		buf_puts(&r->error, ": ");
		buf_add(&r->error, detail, detail_len > 200 ? 200 : detail_len);
	}
}

/* Close the counting of the pass the last read belonged to. */
static void
req_close_pass(struct lg_req *r)
{
	if (r->pass_events > 1)
		r->coalesced += r->pass_events;
	if (r->pass_events > r->max_per_read)
		r->max_per_read = r->pass_events;
	r->pass_events = 0;
}

static void
req_token(struct lg_req *r)
{
	if (r->first_ns == 0)
		r->first_ns = r->now_ns;
	r->last_ns = r->now_ns;
	r->token_events++;
	r->pass_events++;
	if (r->ntok == r->captok) {
		r->captok = r->captok != 0 ? r->captok * 2 : 256;
		r->tok = xrealloc(r->tok, r->captok * sizeof(*r->tok));
	}
	r->tok[r->ntok++] = r->now_ns;
}

static void
req_chunk(struct lg_req *r, const struct sse_chunk *c, const char *data,
    size_t len)
{
	if (c->kind == SSE_CHUNK_DONE) {
		r->done_seen = 1;
		return;
	}
	r->chunks++;
	if (c->kind == SSE_CHUNK_TOKEN)
		req_token(r);
	r->content_bytes += c->content_bytes;
	r->reasoning_bytes += c->reasoning_bytes;
	r->tool_deltas += c->tool_call_deltas;
	r->tool_ids += c->tool_call_ids;
	if (c->tool_call_max_index > r->tool_max_index)
		r->tool_max_index = c->tool_call_max_index;
	if (c->has_usage) {
		r->has_usage = 1;
		if (c->prompt_tokens >= 0)
			r->prompt_tokens = c->prompt_tokens;
		if (c->completion_tokens >= 0)
			r->completion_tokens = c->completion_tokens;
	}
	if (c->finish_reason != NULL && r->finish_reason == NULL)
		r->finish_reason = xstrdup(c->finish_reason);
	if (c->kind == SSE_CHUNK_ERROR)
		req_fail(r, LOADGEN_STREAM_ERROR, "error in stream",
		    c->error, strlen(c->error));
	else if (c->kind == SSE_CHUNK_MALFORMED)
		req_fail(r, LOADGEN_MALFORMED, "malformed chunk", data, len);
}

static int
req_event(void *arg, const struct sse_event *ev)
{
	struct lg_req *r = arg;
	struct sse_chunk c;

	if (r->done_seen)
		return 0;	/* nothing after [DONE] counts */
	if (ev->type_len == 5 && memcmp(ev->type, "error", 5) == 0) {
		sse_chunk_parse_json(ev->data, ev->data_len, &c);
		if (c.kind == SSE_CHUNK_ERROR)
			req_fail(r, LOADGEN_STREAM_ERROR, "error event",
			    c.error, strlen(c.error));
		else
			req_fail(r, LOADGEN_STREAM_ERROR, "error event",
			    ev->data, ev->data_len);
		sse_chunk_clear(&c);
		return 0;
	}
	if (ev->type_len != 7 || memcmp(ev->type, "message", 7) != 0)
		return 0;	/* other event types carry no tokens */
	sse_chunk_classify_cached(&r->chunk_cache, ev->data, ev->data_len, &c);
	req_chunk(r, &c, ev->data, ev->data_len);
	sse_chunk_clear(&c);
	return 0;
}

static size_t
req_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	uint64_t now = mono_ns();	/* first, before any parsing */
	struct lg_req *r = userdata;
	size_t len = size * nmemb;

	r->lg->last_byte_ns = now;
	if (!r->warmup) {
		r->lg->tally.sum->reads++;
		r->lg->tally.sum->bytes += len;
	}
	if (r->status == 0)
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status != 200) {
		if (r->errbody.len < LG_ERRBODY_MAX)
			buf_add(&r->errbody, ptr, len < LG_ERRBODY_MAX ?
			    len : LG_ERRBODY_MAX);
		return len;
	}
	if (r->pass != r->lg->pass) {
		req_close_pass(r);
		r->pass = r->lg->pass;
	}
	r->now_ns = now;
	sse_parser_feed(&r->parser, ptr, len, req_event, r);
	return len;
}

/* ---- submitting and ending requests ---- */

static void
req_reset(struct lg_req *r)
{
	sse_parser_finish(&r->parser);
	free(r->finish_reason);
	r->finish_reason = NULL;
	buf_reset(&r->error);
	buf_reset(&r->errbody);
	r->submit_ns = r->first_ns = r->last_ns = r->end_ns = r->now_ns = 0;
	r->pass = 0;
	r->pass_events = r->chunks = r->token_events = r->coalesced = 0;
	r->max_per_read = 0;
	r->prompt_tokens = r->completion_tokens = -1;
	r->has_usage = r->done_seen = 0;
	r->content_bytes = r->reasoning_bytes = r->tool_ids = 0;
	r->tool_deltas = 0;
	r->tool_max_index = -1;
	r->status = 0;
	r->outcome = LOADGEN_OK;
	r->ntok = 0;
	r->curlerr[0] = '\0';
}

static struct werr *
req_setup(struct lg *lg, struct lg_req *r)
{
	CURL *e;

	r->lg = lg;
	sse_parser_init(&r->parser);
	sse_chunk_cache_init(&r->chunk_cache);
	buf_init(&r->error);
	buf_init(&r->errbody);
	if ((r->easy = e = curl_easy_init()) == NULL)
		return werr_new(WEXIT_ENV, "curl_easy_init failed");
	if (curl_easy_setopt(e, CURLOPT_URL, lg->cfg->url) != CURLE_OK)
		return werr_new(WEXIT_INPUT, "bad url '%s'", lg->cfg->url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, lg->headers);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 16384L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
	    (long)(lg->timeout_ns / 1000000));
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, req_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->curlerr);
	req_reset(r);
	return NULL;
}

/* Point the request at a header list of its own X-Request-Id followed
 * by the shared headers (the node is ours; the rest is lg's). */
static void
req_set_id(struct lg *lg, struct lg_req *r)
{
	char *line;

	if (r->id_header != NULL) {
		r->id_header->next = NULL;
		curl_slist_free_all(r->id_header);
		r->id_header = NULL;
	}
	if (lg->cfg->request_id_prefix == NULL)
		return;
	line = xasprintf("X-Request-Id: %s%s%zu", lg->cfg->request_id_prefix,
	    r->warmup ? "w" : "", r->index);
	r->id_header = curl_slist_append(NULL, line);
	free(line);
	if (r->id_header == NULL)
		return;		/* out of memory: the request goes without */
	r->id_header->next = lg->headers;
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->id_header);
}

static void
req_teardown(struct lg_req *r)
{
	if (r->easy != NULL)
		curl_easy_cleanup(r->easy);
	if (r->id_header != NULL) {
		r->id_header->next = NULL;
		curl_slist_free_all(r->id_header);
	}
	sse_parser_free(&r->parser);
	sse_chunk_cache_free(&r->chunk_cache);
	free(r->finish_reason);
	buf_free(&r->error);
	buf_free(&r->errbody);
	free(r->tok);
}

static void lg_deliver(struct lg *, struct lg_req *);

static struct lg_req *
lg_free_slot(struct lg *lg)
{
	size_t i;

	for (i = 0; i < lg->nreqs; i++)
		if (lg->reqs[i].state == REQ_FREE)
			return &lg->reqs[i];
	return NULL;
}

static void
lg_submit(struct lg *lg)
{
	struct lg_req *r;
	const struct loadgen_body *b;

	while (!lg->stopping && lg->held == 0 && lg->next < lg->nlist &&
	    lg->in_flight < lg->limit && (r = lg_free_slot(lg)) != NULL) {
		b = &lg->list[lg->next];
		req_reset(r);
		r->index = lg->next++;
		r->warmup = lg->warming_up;
		req_set_id(lg, r);
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)b->len);
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, b->data);
		r->state = REQ_ACTIVE;
		lg->in_flight++;
		if (lg->in_flight > lg->tally.sum->max_in_flight && !r->warmup)
			lg->tally.sum->max_in_flight = lg->in_flight;
		r->submit_ns = mono_ns();
		if (!r->warmup && lg->tally.start_ns == 0)
			lg->tally.start_ns = r->submit_ns;
		if (r->submit_ns > lg->last_byte_ns)
			lg->last_byte_ns = r->submit_ns;
		if (!r->warmup)
			lg->tally.sum->submitted++;
		if (curl_multi_add_handle(lg->multi, r->easy) != CURLM_OK) {
			r->end_ns = mono_ns();
			lg->in_flight--;
			req_fail(r, LOADGEN_CONNECT, "libcurl refused the request",
			    NULL, 0);
			lg_deliver(lg, r);
		}
	}
}

static int
is_connect_error(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SEND_ERROR;
}

/* Decide the outcome of a transfer that libcurl finished. Returns 1 for a
 * transport failure (the server may be gone). */
static int
req_classify(struct lg_req *r, CURLcode rc)
{
	const char *why;

	if (sse_parser_finish(&r->parser) && !r->done_seen &&
	    rc == CURLE_OK && r->status == 200)
		req_fail(r, LOADGEN_STREAM_ERROR,
		    "stream ended inside an event", NULL, 0);
	req_close_pass(r);
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		r->outcome = LOADGEN_OK;
		req_fail(r, LOADGEN_TIMEOUT, "request timed out", NULL, 0);
		return 0;
	}
	if (rc != CURLE_OK) {
		why = r->curlerr[0] != '\0' ? r->curlerr : curl_easy_strerror(rc);
		r->outcome = LOADGEN_OK;
		req_fail(r, is_connect_error(rc) && r->status == 0 ?
		    LOADGEN_CONNECT : LOADGEN_STREAM_ERROR,
		    r->status == 0 ? "no response" : "transfer failed",
		    why, strlen(why));
		return 1;
	}
	if (r->status != 200) {
		r->outcome = LOADGEN_OK;
		buf_reset(&r->error);
		buf_printf(&r->error, "http status %ld", r->status);
		r->outcome = LOADGEN_HTTP_STATUS;
		if (r->errbody.len > 0) {
			buf_puts(&r->error, ": ");
			buf_add(&r->error, r->errbody.data, r->errbody.len > 200 ?
			    200 : r->errbody.len);
		}
		return 0;
	}
	if (r->outcome != LOADGEN_OK)
		return 0;
	if (!r->done_seen && r->finish_reason == NULL)
		req_fail(r, LOADGEN_STREAM_ERROR,
		    "stream ended without [DONE] or a finish_reason", NULL, 0);
	else if (r->token_events == 0)
		req_fail(r, LOADGEN_EMPTY, "no token event in the stream",
		    NULL, 0);
	return 0;
}

static void
req_record(struct lg_req *r, struct loadgen_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->index = r->index;
	rec->warmup = r->warmup;
	rec->submit_ns = r->submit_ns;
	rec->first_token_ns = r->first_ns;
	rec->last_token_ns = r->last_ns;
	rec->end_ns = r->end_ns;
	rec->anchor_mono_ns = r->lg->tally.sum->anchor_mono_ns;
	rec->anchor_realtime_ns = r->lg->tally.sum->anchor_realtime_ns;
	rec->chunks = r->chunks;
	rec->token_events = r->token_events;
	rec->coalesced_events = r->coalesced;
	rec->max_events_per_read = r->max_per_read;
	rec->prompt_tokens = r->prompt_tokens;
	if (r->has_usage && r->completion_tokens >= 0) {
		rec->completion_tokens = r->completion_tokens;
		rec->usage_source = LOADGEN_USAGE_SERVER;
	} else if (r->token_events > 0) {
		rec->completion_tokens = (long)r->token_events;
		rec->usage_source = LOADGEN_USAGE_STREAMED;
	} else
		rec->usage_source = LOADGEN_USAGE_NONE;
	rec->content_bytes = r->content_bytes;
	rec->reasoning_bytes = r->reasoning_bytes;
	if (r->tool_max_index >= 0)
		rec->tool_calls = (size_t)r->tool_max_index + 1;
	else if (r->tool_ids > 0)
		rec->tool_calls = r->tool_ids;
	else
		rec->tool_calls = r->tool_deltas > 0 ? 1 : 0;
	rec->finish_reason = r->finish_reason;
	rec->http_status = r->status;
	rec->outcome = r->outcome;
	rec->error = r->outcome == LOADGEN_OK ? NULL : buf_cstr(&r->error);
	rec->token_ns = r->tok;
	rec->ntoken_ns = r->ntok;
}

static void
lg_deliver(struct lg *lg, struct lg_req *r)
{
	struct loadgen_record rec;

	req_record(r, &rec);
	lg_tally_record(&lg->tally, &rec);
	if (lg->cfg->on_record != NULL)
		lg->cfg->on_record(lg->cfg->arg, &rec);
	if (r->state == REQ_HELD)
		lg->held--;
	r->state = REQ_FREE;
}

/* Take a finished transfer off the multi handle and deliver or hold it. */
static void
lg_finish(struct lg *lg, struct lg_req *r, CURLcode rc)
{
	int transport;

	r->end_ns = mono_ns();
	curl_multi_remove_handle(lg->multi, r->easy);
	lg->in_flight--;
	transport = req_classify(r, rc);
	if (transport && lg->cfg->on_tick != NULL) {
		r->state = REQ_HELD;
		lg->held++;
		return;
	}
	lg_deliver(lg, r);
}

/* End every request still in flight (or held) as outcome. */
static void
lg_abort(struct lg *lg, enum loadgen_end end, enum loadgen_outcome outcome,
    const char *why)
{
	struct lg_req *r;
	size_t i;

	lg->stopping = 1;
	lg->end = end;
	for (i = 0; i < lg->nreqs; i++) {
		r = &lg->reqs[i];
		if (r->state == REQ_FREE)
			continue;
		if (r->state == REQ_ACTIVE) {
			r->end_ns = mono_ns();
			curl_multi_remove_handle(lg->multi, r->easy);
			lg->in_flight--;
			sse_parser_finish(&r->parser);
			req_close_pass(r);
			r->outcome = LOADGEN_OK;
			req_fail(r, outcome, why, NULL, 0);
		} else if (outcome == LOADGEN_SERVER_CRASH) {
			r->outcome = LOADGEN_OK;
			req_fail(r, outcome, why, NULL, 0);
		}
		lg_deliver(lg, r);
	}
}

/* ---- the event loop ---- */

static int
lg_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp,
    void *socketp)
{
	struct lg *lg = userp;

	if (what == CURL_POLL_REMOVE)
		sockwait_del(lg->wait, s);
	else
		sockwait_set(lg->wait, s,
		    ((what & CURL_POLL_IN) ? SOCKWAIT_IN : 0) |
		    ((what & CURL_POLL_OUT) ? SOCKWAIT_OUT : 0));
	return 0;
}

static int
lg_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct lg *lg = userp;

	if (timeout_ms < 0)
		lg->timer_at = 0;
	else
		lg->timer_at = mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	return 0;
}

static void
lg_collect(struct lg *lg)
{
	CURLMsg *msg;
	struct lg_req *r;
	int left;

	while ((msg = curl_multi_info_read(lg->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		r = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
		    (char **)&r);
		if (r != NULL && r->state == REQ_ACTIVE)
			lg_finish(lg, r, msg->data.result);
	}
}

static void
lg_progress(struct lg *lg, struct loadgen_progress *p, uint64_t now)
{
	memset(p, 0, sizeof(*p));
	p->now_ns = now;
	p->start_ns = lg->tally.start_ns;
	p->last_byte_ns = lg->last_byte_ns;
	p->warming_up = lg->warming_up;
	p->in_flight = lg->in_flight;
	p->done = lg->tally.done;
	p->ok = lg->tally.ok;
	p->total = lg->cfg->nbodies;
	p->output_tokens = lg->tally.sum->total_output_tokens;
}

static void
lg_tick(struct lg *lg, uint64_t now)
{
	struct loadgen_progress p;
	enum loadgen_tick_action act;
	size_t i;

	lg->next_tick_ns = now + lg->tick_ns;
	if (lg->cfg->on_tick == NULL)
		return;
	lg_progress(lg, &p, now);
	act = lg->cfg->on_tick(lg->cfg->arg, &p);
	if (act == LOADGEN_TICK_SERVER_CRASH) {
		lg_abort(lg, LOADGEN_END_SERVER_CRASH, LOADGEN_SERVER_CRASH,
		    "the server exited");
		return;
	}
	if (act == LOADGEN_TICK_HANG) {
		lg_abort(lg, LOADGEN_END_HANG, LOADGEN_TIMEOUT,
		    "hang: the server went silent");
		return;
	}
	for (i = 0; i < lg->nreqs && lg->held > 0; i++)
		if (lg->reqs[i].state == REQ_HELD)
			lg_deliver(lg, &lg->reqs[i]);
}

/* The checks made once per loop iteration. */
static void
lg_checks(struct lg *lg, uint64_t now)
{
	const struct loadgen_config *cfg = lg->cfg;

	if (cfg->deadline_ns != 0 && now >= cfg->deadline_ns) {
		lg_abort(lg, LOADGEN_END_DEADLINE, LOADGEN_TIMEOUT,
		    "the sweep deadline (engine wall cap) passed");
		return;
	}
	if (cfg->hang_ns != 0 && lg->in_flight > 0 &&
	    now - lg->last_byte_ns >= cfg->hang_ns) {
		lg_abort(lg, LOADGEN_END_HANG, LOADGEN_TIMEOUT,
		    "hang: no byte from any request");
		return;
	}
	if (now >= lg->next_tick_ns)
		lg_tick(lg, now);
}

static int
lg_wait_ms(struct lg *lg, uint64_t now)
{
	uint64_t until = lg->next_tick_ns;

	if (lg->timer_at != 0 && lg->timer_at < until)
		until = lg->timer_at;
	if (lg->cfg->deadline_ns != 0 && lg->cfg->deadline_ns < until)
		until = lg->cfg->deadline_ns;
	if (until <= now)
		return 0;
	return (int)((until - now + 999999) / 1000000);
}

/* One pass: wait, hand ready sockets and timers to libcurl. */
static void
lg_pass(struct lg *lg)
{
	const struct sockwait_ready *ready;
	uint64_t now, t0;
	int i, n, running;

	now = mono_ns();
	n = sockwait_wait(lg->wait, lg_wait_ms(lg, now), &ready);
	t0 = mono_ns();
	lg->pass++;
	for (i = 0; i < n; i++)
		curl_multi_socket_action(lg->multi, ready[i].fd,
		    ((ready[i].flags & SOCKWAIT_IN) ? CURL_CSELECT_IN : 0) |
		    ((ready[i].flags & SOCKWAIT_OUT) ? CURL_CSELECT_OUT : 0) |
		    ((ready[i].flags & SOCKWAIT_ERR) ? CURL_CSELECT_ERR : 0),
		    &running);
	if (lg->timer_at != 0 && mono_ns() >= lg->timer_at) {
		lg->timer_at = 0;
		curl_multi_socket_action(lg->multi, CURL_SOCKET_TIMEOUT, 0,
		    &running);
	}
	lg_collect(lg);
	lg_submit(lg);
	now = mono_ns();
	if (!lg->warming_up && n > 0)
		stats_samples_add(&lg->tally.lag,
		    (double)(now - t0) / LG_NS_PER_MS);
	lg_checks(lg, now);
}

static void
lg_run_list(struct lg *lg, const struct loadgen_body *list, size_t n,
    int warmup)
{
	lg->list = list;
	lg->nlist = n;
	lg->next = 0;
	lg->warming_up = warmup;
	lg->limit = lg->cfg->concurrency;
	if (warmup && n < lg->limit)
		lg->limit = n;
	if (!warmup)
		lg_tally_cpu_start(&lg->tally);
	lg_submit(lg);
	while (!lg->stopping && (lg->next < n || lg->in_flight > 0 ||
	    lg->held > 0))
		lg_pass(lg);
}

static int64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + (int64_t)ts.tv_nsec;
}

/* ---- setup and teardown ---- */

static struct werr *
lg_setup(struct lg *lg, const struct loadgen_config *cfg)
{
	const char *const *h;
	struct werr *err;
	size_t i;

	lg->cfg = cfg;
	lg->timeout_ns = cfg->request_timeout_ns != 0 ?
	    cfg->request_timeout_ns : LG_DEFAULT_TIMEOUT_NS;
	lg->tick_ns = (uint64_t)(cfg->tick_ms != 0 ? cfg->tick_ms :
	    LG_DEFAULT_TICK_MS) * 1000000ull;
	lg->headers = curl_slist_append(NULL, "Content-Type: application/json");
	lg->headers = curl_slist_append(lg->headers, "Accept: text/event-stream");
	lg->headers = curl_slist_append(lg->headers, "Expect:");
	for (h = cfg->headers; h != NULL && *h != NULL; h++)
		lg->headers = curl_slist_append(lg->headers, *h);
	if (lg->headers == NULL || (lg->multi = curl_multi_init()) == NULL)
		return werr_new(WEXIT_ENV, "cannot set up libcurl");
	if ((err = sockwait_new(&lg->wait, cfg->portable_wait)) != NULL)
		return err;
	lg->tally.sum->event_wait = sockwait_kind(lg->wait);
	curl_multi_setopt(lg->multi, CURLMOPT_SOCKETFUNCTION, lg_socket_cb);
	curl_multi_setopt(lg->multi, CURLMOPT_SOCKETDATA, lg);
	curl_multi_setopt(lg->multi, CURLMOPT_TIMERFUNCTION, lg_timer_cb);
	curl_multi_setopt(lg->multi, CURLMOPT_TIMERDATA, lg);
	curl_multi_setopt(lg->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
	curl_multi_setopt(lg->multi, CURLMOPT_MAXCONNECTS,
	    (long)cfg->concurrency + 8);
	lg->nreqs = cfg->concurrency;
	lg->reqs = xcalloc(lg->nreqs, sizeof(*lg->reqs));
	for (i = 0; i < lg->nreqs; i++)
		if ((err = req_setup(lg, &lg->reqs[i])) != NULL)
			return err;
	return NULL;
}

static void
lg_teardown(struct lg *lg)
{
	size_t i;

	for (i = 0; i < lg->nreqs; i++) {
		if (lg->reqs[i].state == REQ_ACTIVE && lg->multi != NULL)
			curl_multi_remove_handle(lg->multi, lg->reqs[i].easy);
		req_teardown(&lg->reqs[i]);
	}
	free(lg->reqs);
	if (lg->multi != NULL)
		curl_multi_cleanup(lg->multi);
	curl_slist_free_all(lg->headers);
	sockwait_free(lg->wait);
	lg_tally_free(&lg->tally);
}

static struct werr *
check_config(const struct loadgen_config *cfg)
{
	if (cfg->url == NULL || *cfg->url == '\0')
		return werr_usage("load generator: no url");
	if (cfg->concurrency == 0)
		return werr_usage("load generator: concurrency must be at least 1");
	if (cfg->nbodies > 0 && cfg->bodies == NULL)
		return werr_usage("load generator: no request bodies");
	if (cfg->nwarmups > 0 && cfg->warmups == NULL)
		return werr_usage("load generator: no warmup bodies");
	return NULL;
}

struct werr *
loadgen_run(const struct loadgen_config *cfg, struct loadgen_summary *summary)
{
	struct lg lg;
	struct rtsched_saved sched;
	struct werr *err;
	uint64_t m0, m1;

	memset(summary, 0, sizeof(*summary));
	if ((err = check_config(cfg)) != NULL)
		return err;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return werr_new(WEXIT_ENV, "cannot initialise libcurl");
	memset(&lg, 0, sizeof(lg));
	lg.tally.sum = summary;
	summary->max_concurrency = cfg->concurrency;
	summary->num_prompts = cfg->nbodies;
	m0 = mono_ns();
	summary->anchor_realtime_ns = realtime_ns();
	m1 = mono_ns();
	summary->anchor_mono_ns = m0 + (m1 - m0) / 2;
	if ((err = lg_setup(&lg, cfg)) != NULL)
		goto out;
	lg.next_tick_ns = mono_ns() + lg.tick_ns;
	summary->client_scheduling = cfg->raise_priority ?
	    rtsched_raise(&sched) : "normal";
	if (cfg->nwarmups > 0)
		lg_run_list(&lg, cfg->warmups, cfg->nwarmups, 1);
	if (!lg.stopping)
		lg_run_list(&lg, cfg->bodies, cfg->nbodies, 0);
	if (cfg->raise_priority)
		rtsched_restore(&sched);
	summary->end = lg.end;
	m0 = mono_ns();
	lg_tally_finish(&lg.tally, cfg->nbodies, m0, realtime_ns());
out:
	lg_teardown(&lg);
	curl_global_cleanup();
	return err;
}
