/*
 * loadgen-req.c - one request of the load generator: its easy handle and
 * headers, the write callback that reads the clock first and then feeds
 * the SSE parser, the token bookkeeping, and the outcome and record once
 * libcurl has finished it. The loop that runs the requests is loadgen.c.
 * Never prints; never blocks.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "loadgen-private.h"
#include "sse.h"
#include "util.h"

void
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
void
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
	if (c->content_bytes > 0 && r->lg->cfg->keep_content > 0)
		sse_chunk_content_text(data, len, &r->content,
		    r->lg->cfg->keep_content);
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
	if (sse_parser_feed(&r->parser, ptr, len, req_event, r) ==
	    SSE_OVERSIZED) {
		/* The reason the stream ends, whatever came before. */
		r->outcome = LOADGEN_OVERSIZED;
		buf_reset(&r->error);
		buf_printf(&r->error, "an SSE event passed %zu bytes "
		    "(caps.max_event_bytes); the stream was cut",
		    r->parser.max_event);
		return 0;	/* anything but len: libcurl stops the transfer */
	}
	return len;
}

#if LIBCURL_VERSION_NUM >= 0x075000
/* libcurl is about to send the request on a connection it opened or
 * reused: once per attempt, so a second call is a connection retry. */
static int
req_prereq(void *arg, char *primary_ip, char *local_ip, int primary_port,
    int local_port)
{
	struct lg_req *r = arg;

	(void)primary_ip;
	(void)local_ip;
	(void)primary_port;
	(void)local_port;
	r->attempts++;
	return CURL_PREREQFUNC_OK;
}
#endif

/* Set the easy handle up for one request (after curl_easy_reset). */
static void
req_options(struct lg *lg, struct lg_req *r)
{
	CURL *e = r->easy;

	curl_easy_setopt(e, CURLOPT_URL, lg->cfg->url);
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
#if LIBCURL_VERSION_NUM >= 0x075000
	curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, req_prereq);
	curl_easy_setopt(e, CURLOPT_PREREQDATA, r);
#endif
	if (lg->no_reuse) {
		/* a connection of its own, closed after it: none from the
		 * pool, where one the server is closing may still wait */
		curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	}
}

void
req_reset(struct lg_req *r)
{
	sse_parser_finish(&r->parser);
	free(r->finish_reason);
	r->finish_reason = NULL;
	buf_reset(&r->error);
	buf_reset(&r->errbody);
	buf_reset(&r->content);
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
	r->connect_ns = 0;
	r->new_connection = 0;
	r->attempts = 0;
	r->curlerr[0] = '\0';
	/* A handle kept across requests keeps libcurl's count of connection
	 * retries (libcurl 7.88 does not reset it): after five, every later
	 * retry of the slot failed at once. Start each request afresh. */
	curl_easy_reset(r->easy);
	req_options(r->lg, r);
}

struct werr *
req_setup(struct lg *lg, struct lg_req *r)
{
	r->lg = lg;
	sse_parser_init(&r->parser);
	if (lg->cfg->max_event_bytes != 0)
		r->parser.max_event = lg->cfg->max_event_bytes;
	sse_chunk_cache_init(&r->chunk_cache);
	buf_init(&r->error);
	buf_init(&r->errbody);
	buf_init(&r->content);
	if ((r->easy = curl_easy_init()) == NULL)
		return werr_new(WEXIT_ENV, "curl_easy_init failed");
	if (curl_easy_setopt(r->easy, CURLOPT_URL, lg->cfg->url) != CURLE_OK)
		return werr_new(WEXIT_INPUT, "bad url '%s'", lg->cfg->url);
	req_reset(r);
	return NULL;
}

/* Free the request's own X-Request-Id node, not the shared list after
 * it. */
static void
id_header_free(struct lg_req *r)
{
	if (r->id_header == NULL)
		return;
	r->id_header->next = NULL;
	curl_slist_free_all(r->id_header);
	r->id_header = NULL;
}

/* Point the request at a header list of its own X-Request-Id followed
 * by the shared headers (the node is ours; the rest is lg's). */
void
req_set_id(struct lg *lg, struct lg_req *r)
{
	char *line;

	id_header_free(r);
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

void
req_teardown(struct lg_req *r)
{
	if (r->easy != NULL)
		curl_easy_cleanup(r->easy);
	id_header_free(r);
	sse_parser_free(&r->parser);
	sse_chunk_cache_free(&r->chunk_cache);
	free(r->finish_reason);
	buf_free(&r->error);
	buf_free(&r->errbody);
	buf_free(&r->content);
	free(r->tok);
}

void
req_connect_info(struct lg_req *r)
{
	curl_off_t us = 0;
	long n = 0;

	if (curl_easy_getinfo(r->easy, CURLINFO_CONNECT_TIME_T, &us) ==
	    CURLE_OK && us > 0)
		r->connect_ns = (uint64_t)us * 1000u;
	if (curl_easy_getinfo(r->easy, CURLINFO_NUM_CONNECTS, &n) == CURLE_OK)
		r->new_connection = n > 0;
}

static int
is_connect_error(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SEND_ERROR;
}

/* Decide the outcome of a transfer that libcurl finished. Returns 1 for a
 * transport failure (the server may be gone). */
int
req_classify(struct lg_req *r, CURLcode rc)
{
	const char *why;

	if (sse_parser_finish(&r->parser) && !r->done_seen &&
	    rc == CURLE_OK && r->status == 200)
		req_fail(r, LOADGEN_STREAM_ERROR,
		    "stream ended inside an event", NULL, 0);
	req_close_pass(r);
	if (r->outcome == LOADGEN_OVERSIZED)
		return 0;	/* warden cut it: not a transport failure */
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

void
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
	rec->connect_ns = r->connect_ns;
	rec->new_connection = r->new_connection;
	rec->retries = r->attempts > 1 ? r->attempts - 1 : 0;
	if (r->lg->cfg->keep_content > 0) {
		rec->content = buf_cstr(&r->content);
		rec->content_len = r->content.len;
	}
}
