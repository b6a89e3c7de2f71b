/*
 * sse.c - the event-stream parser, and what the two chunk classifiers
 * share (struct sse_chunk, [DONE]). See sse.h. The byte scanner is in
 * sse-scan.c, its skeleton cache in sse-cache.c, the jansson path in
 * sse-json.c.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"
#include "util.h"

void
sse_parser_init(struct sse_parser *p)
{
	memset(p, 0, sizeof(*p));
	buf_init(&p->line);
	buf_init(&p->data);
	buf_init(&p->type);
	p->max_event = SSE_MAX_EVENT_DEFAULT;
}

void
sse_parser_free(struct sse_parser *p)
{
	buf_free(&p->line);
	buf_free(&p->data);
	buf_free(&p->type);
}

static void
parser_reset_event(struct sse_parser *p)
{
	buf_reset(&p->data);
	buf_reset(&p->type);
	p->have_data = 0;
}

/* Would a line grow past the bound with extra more bytes? */
static int
line_over(const struct sse_parser *p, size_t extra)
{
	return p->max_event != 0 &&
	    (extra > p->max_event || p->line.len > p->max_event - extra);
}

/* Would the event's data and type pass the bound with extra more? */
static int
event_over(const struct sse_parser *p, size_t extra)
{
	size_t held = p->data.len + p->type.len;

	return p->max_event != 0 &&
	    (extra > p->max_event || held > p->max_event - extra);
}

/* Give the stream up: free everything it holds, now. */
static int
parser_oversize(struct sse_parser *p)
{
	buf_free(&p->line);
	buf_free(&p->data);
	buf_free(&p->type);
	p->have_data = 0;
	p->oversized = 1;
	return SSE_OVERSIZED;
}

static int
parser_dispatch(struct sse_parser *p, sse_event_fn fn, void *arg)
{
	struct sse_event ev;
	int rc;

	if (!p->have_data) {
		buf_reset(&p->type);
		return 0;
	}
	if (p->type.len > 0) {
		ev.type = p->type.data;
		ev.type_len = p->type.len;
	} else {
		ev.type = "message";
		ev.type_len = 7;
	}
	ev.data = buf_cstr(&p->data);
	ev.data_len = p->data.len;
	p->events++;
	rc = fn != NULL ? fn(arg, &ev) : 0;
	parser_reset_event(p);
	return rc;
}

static int
parser_line(struct sse_parser *p, const char *line, size_t len,
    sse_event_fn fn, void *arg)
{
	const char *colon, *value;
	size_t namelen, vlen;

	if (len == 0)
		return parser_dispatch(p, fn, arg);
	if (line[0] == ':') {
		p->comments++;
		return 0;
	}
	colon = memchr(line, ':', len);
	if (colon != NULL) {
		namelen = (size_t)(colon - line);
		value = colon + 1;
		vlen = len - namelen - 1;
		if (vlen > 0 && *value == ' ') {
			value++;
			vlen--;
		}
	} else {
		namelen = len;
		value = "";
		vlen = 0;
	}
	if (namelen == 4 && memcmp(line, "data", 4) == 0) {
		if (event_over(p, vlen + 1))
			return parser_oversize(p);
		if (p->have_data)
			buf_addch(&p->data, '\n');
		buf_add(&p->data, value, vlen);
		p->have_data = 1;
	} else if (namelen == 5 && memcmp(line, "event", 5) == 0) {
		buf_reset(&p->type);
		if (event_over(p, vlen))
			return parser_oversize(p);
		buf_add(&p->type, value, vlen);
	} else if (namelen == 5 && memcmp(line, "error", 5) == 0) {
		/* Not an SSE field: older llama-server wrote a failure in a
		 * 200 stream as "error: {json}" (its server_sent_event() with
		 * event "error"), then [DONE]. Taken as an error event, so
		 * the request is not counted as done. */
		if (event_over(p, vlen + 6))
			return parser_oversize(p);
		buf_reset(&p->type);
		buf_puts(&p->type, "error");
		if (p->have_data)
			buf_addch(&p->data, '\n');
		buf_add(&p->data, value, vlen);
		p->have_data = 1;
	}
	/* id, retry and other fields mean nothing to warden. */
	return 0;
}

int
sse_parser_feed(struct sse_parser *p, const char *bytes, size_t len,
    sse_event_fn fn, void *arg)
{
	const char *s = bytes, *end = bytes + len, *nl, *cr, *eol, *next;
	size_t n;
	int rc;

	if (p->oversized)
		return SSE_OVERSIZED;
	if (len > 0 && p->skip_lf) {
		if (*s == '\n')
			s++;
		p->skip_lf = 0;
	}
	while (s < end) {
		n = (size_t)(end - s);
		nl = memchr(s, '\n', n);
		cr = memchr(s, '\r', nl != NULL ? (size_t)(nl - s) : n);
		eol = cr != NULL ? cr : nl;
		if (eol == NULL) {
			if (line_over(p, n))
				return parser_oversize(p);
			buf_add(&p->line, s, n);
			break;
		}
		next = eol + 1;
		if (eol == cr) {
			if (next < end) {
				if (*next == '\n')
					next++;
			} else
				p->skip_lf = 1;
		}
		if (p->line.len > 0) {
			if (line_over(p, (size_t)(eol - s)))
				return parser_oversize(p);
			buf_add(&p->line, s, (size_t)(eol - s));
			rc = parser_line(p, p->line.data, p->line.len, fn, arg);
			buf_reset(&p->line);
		} else if (line_over(p, (size_t)(eol - s)))
			return parser_oversize(p);
		else
			rc = parser_line(p, s, (size_t)(eol - s), fn, arg);
		if (rc != 0)
			return rc;
		s = next;
	}
	return 0;
}

int
sse_parser_finish(struct sse_parser *p)
{
	int pending = p->line.len > 0 || p->have_data;

	buf_reset(&p->line);
	parser_reset_event(p);
	p->skip_lf = 0;
	p->oversized = 0;
	return pending;
}

void
sse_chunk_init(struct sse_chunk *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = SSE_CHUNK_UNDECIDED;
	c->tool_call_max_index = -1;
	c->prompt_tokens = -1;
	c->completion_tokens = -1;
}

void
sse_chunk_clear(struct sse_chunk *c)
{
	free(c->finish_reason);
	free(c->error);
	sse_chunk_init(c);
}

const char *
sse_chunk_kind_name(enum sse_chunk_kind kind)
{
	switch (kind) {
	case SSE_CHUNK_UNDECIDED: return "undecided";
	case SSE_CHUNK_TOKEN: return "token";
	case SSE_CHUNK_EMPTY: return "empty";
	case SSE_CHUNK_USAGE: return "usage";
	case SSE_CHUNK_ERROR: return "error";
	case SSE_CHUNK_DONE: return "done";
	case SSE_CHUNK_MALFORMED: return "malformed";
	}
	return "unknown";
}

int
sse_chunk_is_done(const char *data, size_t len)
{
	return len == 6 && memcmp(data, "[DONE]", 6) == 0;
}
