/*
 * http1.h - an incremental reader of one HTTP/1.x response, as the load
 * generator's connections receive it (loadgen-conn.c): the status line
 * and the headers, then the body framed as RFC 9112 section 6.3 says -
 * chunked, Content-Length, or until the server closes - handed out as
 * spans of the bytes fed, never copied. 1xx answers are skipped; 204 and
 * 304 have no body. Whether the connection may carry another request
 * (keep_alive) follows the version and the Connection header.
 *
 * Written here rather than taken from a library: libcurl's own reading
 * costs more per SSE event than all of warden's parsing (and 7.88 polls
 * the socket again after every read), the http-parser library is
 * archived upstream and gone from Homebrew, and llhttp is not packaged
 * as a library in Debian 12. Never prints; never allocates.
 */
#ifndef WARDEN_HTTP1_H
#define WARDEN_HTTP1_H

#include <stddef.h>
#include <stdint.h>

#define HTTP1_LINE_MAX	8192	/* longest status or header line */
/* The most bytes of status and header lines one response may send, its
 * 1xx answers and trailers included: a server that sends header lines
 * forever (or 1xx answers) is a malformed answer past it. */
#define HTTP1_HEAD_MAX	65536

enum http1_state {
	HTTP1_STATUS = 0,	/* reading the status line */
	HTTP1_HEADERS,
	HTTP1_BODY_LENGTH,	/* Content-Length bytes */
	HTTP1_BODY_CLOSE,	/* until the server closes */
	HTTP1_CHUNK_SIZE,	/* a chunk's size line */
	HTTP1_CHUNK_DATA,
	HTTP1_CHUNK_END,	/* the CRLF after a chunk's data */
	HTTP1_TRAILERS,
	HTTP1_DONE,		/* the response is complete */
	HTTP1_ERROR
};

struct http1 {
	enum http1_state state;
	int minor;		/* HTTP/1.minor */
	int status;		/* 0 until the status line is read */
	int head_done;		/* the final (non-1xx) head was read */
	int keep_alive;		/* the connection may carry another request */
	int chunked;
	int64_t length;		/* Content-Length, -1 if none was sent */
	uint64_t left;		/* bytes left in the body or the chunk */
	const char *error;	/* HTTP1_ERROR: what was wrong */
	/* the head being read */
	int conn_close, conn_keep, te_other;
	size_t head_bytes;	/* of every head and the trailers so far */
	size_t line_len;
	char line[HTTP1_LINE_MAX];
};

/* The body's next bytes; return 0 to stop reading (http1_feed returns
 * HTTP1_STOPPED), anything else to go on. */
typedef int (*http1_body_fn)(void *arg, const char *data, size_t len);
/* The final head was read (status, keep_alive, length set); same
 * return. */
typedef int (*http1_head_fn)(void *arg, const struct http1 *p);

#define HTTP1_STOPPED	(-2)

void http1_init(struct http1 *p);
/*
 * Read n bytes of the response. Returns how many were taken (less than n
 * only when the response is complete: the rest belongs to no request),
 * -1 on a malformed response (p->error says why), or HTTP1_STOPPED when
 * a callback asked to stop.
 */
long http1_feed(struct http1 *p, const char *data, size_t n,
    http1_head_fn on_head, http1_body_fn on_body, void *arg);
/* The server closed the connection: 1 if that completes the response
 * (a body that runs until the close), else 0 (it was cut short). */
int http1_eof(struct http1 *p);

#endif
