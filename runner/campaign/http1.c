/*
 * http1.c - the incremental HTTP/1.x response reader. See http1.h.
 *
 * Lines (the status line, headers, chunk sizes, the CRLF after a chunk,
 * trailers) are gathered into p->line, so one may arrive split over any
 * number of reads; body bytes go to the caller straight from the buffer
 * that was fed. A bare LF ends a line as CRLF does (RFC 9112 2.2). The
 * head of a response is bounded (HTTP1_HEAD_MAX), each line too
 * (HTTP1_LINE_MAX); the body is the caller's to bound.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "http1.h"

_Static_assert(HTTP1_HEAD_MAX == 65536, "http1_feed's message names it");

void
http1_init(struct http1 *p)
{
	memset(p, 0, sizeof(*p));
	p->state = HTTP1_STATUS;
	p->length = -1;
}

static long
fail(struct http1 *p, const char *why)
{
	p->state = HTTP1_ERROR;
	p->error = why;
	return -1;
}

/* Is the comma-separated list s (len bytes) holding token tok? */
static int
has_token(const char *s, size_t len, const char *tok)
{
	size_t tl = strlen(tok), i = 0, b, e;

	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		b = i;
		while (i < len && s[i] != ',')
			i++;
		e = i;
		while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
			e--;
		if (e - b == tl && strncasecmp(s + b, tok, tl) == 0)
			return 1;
	}
	return 0;
}

/* Is the last token of the list s "chunked"? */
static int
last_is_chunked(const char *s, size_t len)
{
	size_t e = len, b;

	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	b = e;
	while (b > 0 && s[b - 1] != ',' && s[b - 1] != ' ' && s[b - 1] != '\t')
		b--;
	return e - b == 7 && strncasecmp(s + b, "chunked", 7) == 0;
}

static int
status_line(struct http1 *p, const char *l, size_t len)
{
	int code = 0, i;

	if (len < 12 || memcmp(l, "HTTP/1.", 7) != 0 || l[7] < '0' ||
	    l[7] > '9' || l[8] != ' ')
		return 0;
	for (i = 9; i < 12; i++) {
		if (l[i] < '0' || l[i] > '9')
			return 0;
		code = code * 10 + (l[i] - '0');
	}
	if (len > 12 && l[12] != ' ')
		return 0;
	p->minor = l[7] - '0';
	p->status = code;
	p->conn_close = p->conn_keep = p->te_other = 0;
	p->chunked = 0;
	p->length = -1;
	return 1;
}

/* One header line; 0 if it is malformed. */
static int
header_line(struct http1 *p, const char *l, size_t len)
{
	const char *colon = memchr(l, ':', len);
	const char *v;
	size_t nlen, vlen;
	int64_t n;

	if (colon == NULL || colon == l)
		return 0;
	nlen = (size_t)(colon - l);
	v = colon + 1;
	vlen = len - nlen - 1;
	while (vlen > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		vlen--;
	}
	while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (nlen == 14 && strncasecmp(l, "Content-Length", 14) == 0) {
		n = 0;
		if (vlen == 0 || vlen > 18)
			return 0;
		for (size_t i = 0; i < vlen; i++) {
			if (v[i] < '0' || v[i] > '9')
				return 0;
			n = n * 10 + (v[i] - '0');
		}
		if (p->length >= 0 && p->length != n)
			return 0;	/* two different lengths */
		p->length = n;
	} else if (nlen == 17 && strncasecmp(l, "Transfer-Encoding", 17) == 0) {
		if (last_is_chunked(v, vlen))
			p->chunked = 1;
		else
			p->te_other = 1;
	} else if (nlen == 10 && strncasecmp(l, "Connection", 10) == 0) {
		if (has_token(v, vlen, "close"))
			p->conn_close = 1;
		if (has_token(v, vlen, "keep-alive"))
			p->conn_keep = 1;
	}
	return 1;
}

/* The empty line after the headers: decide how the body is framed. */
static long
head_end(struct http1 *p, http1_head_fn on_head, void *arg)
{
	if (p->status < 200) {
		if (p->status == 101)
			return fail(p, "the server switched protocols");
		p->state = HTTP1_STATUS;	/* 1xx: the real answer follows */
		return 0;
	}
	p->head_done = 1;
	p->keep_alive = p->minor >= 1 ? !p->conn_close : p->conn_keep &&
	    !p->conn_close;
	if (p->status == 204 || p->status == 304)
		p->state = HTTP1_DONE;
	else if (p->chunked && !p->te_other)
		p->state = HTTP1_CHUNK_SIZE;
	else if (p->te_other) {
		p->state = HTTP1_BODY_CLOSE;	/* RFC 9112 6.3 item 4 */
		p->keep_alive = 0;
	} else if (p->length >= 0) {
		p->left = (uint64_t)p->length;
		p->state = p->left > 0 ? HTTP1_BODY_LENGTH : HTTP1_DONE;
	} else {
		p->state = HTTP1_BODY_CLOSE;
		p->keep_alive = 0;
	}
	if (on_head != NULL && !on_head(arg, p))
		return HTTP1_STOPPED;
	return 0;
}

static int
chunk_size(struct http1 *p, const char *l, size_t len)
{
	uint64_t n = 0;
	size_t i = 0;
	int d;

	for (; i < len; i++) {
		if (l[i] >= '0' && l[i] <= '9')
			d = l[i] - '0';
		else if ((l[i] | 0x20) >= 'a' && (l[i] | 0x20) <= 'f')
			d = (l[i] | 0x20) - 'a' + 10;
		else
			break;
		if (n >> 56)
			return 0;	/* absurd: no engine sends that */
		n = n * 16 + (uint64_t)d;
	}
	if (i == 0 || (i < len && l[i] != ';' && l[i] != ' ' && l[i] != '\t'))
		return 0;
	p->left = n;
	p->state = n > 0 ? HTTP1_CHUNK_DATA : HTTP1_TRAILERS;
	return 1;
}

/* A whole line (without its line end) in the state it ends. */
static long
line(struct http1 *p, const char *l, size_t len, http1_head_fn on_head,
    void *arg)
{
	switch (p->state) {
	case HTTP1_STATUS:
		if (len == 0 && p->status != 0)
			return 0;	/* stray empty line after a 1xx */
		if (!status_line(p, l, len))
			return fail(p, "malformed status line");
		p->state = HTTP1_HEADERS;
		return 0;
	case HTTP1_HEADERS:
		if (len == 0)
			return head_end(p, on_head, arg);
		if (!header_line(p, l, len))
			return fail(p, "malformed header line");
		return 0;
	case HTTP1_CHUNK_SIZE:
		if (!chunk_size(p, l, len))
			return fail(p, "malformed chunk size");
		return 0;
	case HTTP1_CHUNK_END:
		if (len != 0)
			return fail(p, "a chunk longer than its size");
		p->state = HTTP1_CHUNK_SIZE;
		return 0;
	case HTTP1_TRAILERS:
		if (len == 0)
			p->state = HTTP1_DONE;
		return 0;
	default:
		return fail(p, "internal: a line in a body state");
	}
}

long
http1_feed(struct http1 *p, const char *data, size_t n,
    http1_head_fn on_head, http1_body_fn on_body, void *arg)
{
	size_t i = 0, take;
	const char *nl;
	long rc;

	while (i < n) {
		switch (p->state) {
		case HTTP1_DONE:
			return (long)i;
		case HTTP1_ERROR:
			return -1;
		case HTTP1_BODY_CLOSE:
		case HTTP1_BODY_LENGTH:
		case HTTP1_CHUNK_DATA:
			take = n - i;
			if (p->state != HTTP1_BODY_CLOSE && take > p->left)
				take = (size_t)p->left;
			if (p->state != HTTP1_BODY_CLOSE) {
				p->left -= take;
				if (p->left == 0)
					p->state = p->state == HTTP1_CHUNK_DATA ?
					    HTTP1_CHUNK_END : HTTP1_DONE;
			}
			i += take;
			if (on_body != NULL && !on_body(arg, data + i - take,
			    take))
				return HTTP1_STOPPED;
			break;
		default:
			nl = memchr(data + i, '\n', n - i);
			take = (nl != NULL ? (size_t)(nl - (data + i)) : n - i);
			if (p->state == HTTP1_STATUS ||
			    p->state == HTTP1_HEADERS ||
			    p->state == HTTP1_TRAILERS) {
				p->head_bytes += take + (nl != NULL);
				if (p->head_bytes > HTTP1_HEAD_MAX)
					return fail(p, "the head passed 65536 "
					    "bytes (1xx answers and trailers "
					    "included)");
			}
			if (p->line_len + take >= HTTP1_LINE_MAX)
				return fail(p, "a header or chunk-size line "
				    "too long");
			memcpy(p->line + p->line_len, data + i, take);
			p->line_len += take;
			i += take;
			if (nl == NULL)
				break;
			i++;	/* the LF */
			take = p->line_len;
			if (take > 0 && p->line[take - 1] == '\r')
				take--;
			p->line_len = 0;
			if ((rc = line(p, p->line, take, on_head, arg)) != 0)
				return rc;
			break;
		}
	}
	return (long)i;
}

int
http1_eof(struct http1 *p)
{
	if (p->state == HTTP1_BODY_CLOSE)
		p->state = HTTP1_DONE;
	return p->state == HTTP1_DONE;
}
