/*
 * loadgen-req.c - one request of the load generator: its body bytes (timed
 * by the connection right after the read) fed to the SSE parser, the
 * token bookkeeping, and the outcome and record once the connection has
 * ended it. The loop that runs the requests is loadgen.c, the
 * connections loadgen-conn.c. Never prints; never blocks.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

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

size_t
loadgen_token_bound(long max_tokens)
{
	size_t n;

	if (max_tokens <= 0 || (unsigned long)max_tokens >=
	    LOADGEN_TOKEN_EVENTS_MAX / 2)
		return LOADGEN_TOKEN_EVENTS_MAX;
	n = 2 * (size_t)max_tokens;
	if (n < (size_t)max_tokens + 64)
		n = (size_t)max_tokens + 64;
	return n;
}

uint64_t
loadgen_answer_bound(long max_tokens, size_t max_event_bytes)
{
	if (max_event_bytes == 0)
		max_event_bytes = SSE_MAX_EVENT_DEFAULT;
	return (uint64_t)max_event_bytes + (uint64_t)LOADGEN_BYTES_PER_EVENT *
	    loadgen_token_bound(max_tokens);
}

/* The reason the stream ends, whatever came before: warden cut it. */
static void
req_cut(struct lg_req *r, enum loadgen_outcome outcome)
{
	r->outcome = outcome;
	buf_reset(&r->error);
}

/* One more token event than the request allows. */
static int
req_overlong_events(struct lg_req *r)
{
	req_cut(r, LOADGEN_OVERLONG);
	buf_printf(&r->error, "the answer passed %zu token events", r->max_events);
	if (r->body->max_tokens > 0)
		buf_printf(&r->error, ", more than max_tokens %ld allows",
		    r->body->max_tokens);
	buf_puts(&r->error, "; the stream was cut");
	return 1;
}

int
req_answer_bytes(struct lg_req *r, size_t n)
{
	r->answer_bytes += n;
	if (r->answer_bytes <= r->max_bytes)
		return 1;
	req_cut(r, LOADGEN_OVERLONG);
	buf_printf(&r->error, "the answer passed %llu bytes; the stream was cut",
	    (unsigned long long)r->max_bytes);
	return 0;
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
	if (c.kind == SSE_CHUNK_TOKEN && r->token_events >= r->max_events) {
		sse_chunk_clear(&c);
		return req_overlong_events(r);
	}
	req_chunk(r, &c, ev->data, ev->data_len);
	sse_chunk_clear(&c);
	return 0;
}

int
req_body(struct lg_req *r, uint64_t now, const char *data, size_t len)
{
	int rc;

	if (!r->warmup)
		r->lg->tally.sum->bytes += len;
	if (r->status != 200) {
		if (r->errbody.len < LG_ERRBODY_MAX)
			buf_add(&r->errbody, data, len < LG_ERRBODY_MAX -
			    r->errbody.len ? len : LG_ERRBODY_MAX -
			    r->errbody.len);
		return 1;
	}
	if (r->pass != r->lg->pass) {
		req_close_pass(r);
		r->pass = r->lg->pass;
	}
	r->now_ns = now;
	rc = sse_parser_feed(&r->parser, data, len, req_event, r);
	if (rc == SSE_OVERSIZED) {
		req_cut(r, LOADGEN_OVERSIZED);
		buf_printf(&r->error, "an SSE event passed %zu bytes "
		    "(caps.max_event_bytes); the stream was cut",
		    r->parser.max_event);
		return 0;
	}
	return rc == 0;	/* else req_event cut it: overlong */
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
	r->max_events = 0;
	r->max_bytes = r->answer_bytes = 0;
	r->connect_ns = 0;
	r->new_connection = 0;
	r->attempts = 0;
	r->conn = NULL;
	r->body = NULL;
	r->deadline_ns = 0;
}

void
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
	req_reset(r);
}

void
req_teardown(struct lg_req *r)
{
	sse_parser_free(&r->parser);
	sse_chunk_cache_free(&r->chunk_cache);
	free(r->finish_reason);
	buf_free(&r->error);
	buf_free(&r->errbody);
	buf_free(&r->content);
	free(r->tok);
}

/* Decide the outcome of a transfer that ended. Returns 1 for a
 * transport failure (the server may be gone). */
int
req_classify(struct lg_req *r, enum lg_xfer how, const char *why)
{
	if (sse_parser_finish(&r->parser) && !r->done_seen &&
	    how == LG_XFER_OK && r->status == 200)
		req_fail(r, LOADGEN_STREAM_ERROR,
		    "stream ended inside an event", NULL, 0);
	req_close_pass(r);
	if (r->outcome == LOADGEN_OVERSIZED || r->outcome == LOADGEN_OVERLONG)
		return 0;	/* warden cut it: not a transport failure */
	if (how == LG_XFER_TIMEOUT) {
		r->outcome = LOADGEN_OK;
		req_fail(r, LOADGEN_TIMEOUT, "request timed out", NULL, 0);
		return 0;
	}
	if (how != LG_XFER_OK) {
		if (why == NULL)
			why = "the connection failed";
		r->outcome = LOADGEN_OK;
		req_fail(r, (how == LG_XFER_CONNECT || how == LG_XFER_SEND) &&
		    r->status == 0 ? LOADGEN_CONNECT : LOADGEN_STREAM_ERROR,
		    r->status == 0 ? "no response" : "transfer failed",
		    why, strlen(why));
		return 1;
	}
	if (r->status != 200) {
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
