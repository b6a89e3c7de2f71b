/*
 * Unit tests of runner/campaign/http1.c, the load generator's HTTP/1.x
 * response reader: every framing the engines use (chunked from uvicorn,
 * cpp-httplib and Go; a body until the close from Python's http.server
 * as mlx_lm.server runs it; Content-Length on error answers), each fed
 * whole, a byte at a time and split at every offset, with the same body
 * and head each time; keep-alive by version and Connection; 1xx skipped;
 * malformed answers refused with a reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"
#include "http1.h"

struct got {
	struct buf body;
	int heads, status, stop_after;
	size_t spans;
};

static int
got_head(void *arg, const struct http1 *p)
{
	struct got *g = arg;

	g->heads++;
	g->status = p->status;
	return 1;
}

static int
got_body(void *arg, const char *data, size_t len)
{
	struct got *g = arg;

	buf_add(&g->body, data, len);
	g->spans++;
	return g->stop_after == 0 || g->spans < (size_t)g->stop_after;
}

/* Feed msg in pieces of at most step bytes (0: whole); returns the bytes
 * taken in all, or the first negative answer. */
static long
feed(struct http1 *p, struct got *g, const char *msg, size_t len,
    size_t step)
{
	size_t off = 0, n;
	long rc, total = 0;

	while (off < len) {
		n = step == 0 || len - off < step ? len - off : step;
		rc = http1_feed(p, msg + off, n, got_head, got_body, g);
		if (rc < 0)
			return rc;
		total += rc;
		if ((size_t)rc < n)
			return total;
		off += n;
	}
	return total;
}

#define CHUNKED \
	"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" \
	"transfer-encoding: chunked\r\n\r\n" \
	"d\r\ndata: hello\n\n\r\n" \
	"E;ext=1\r\ndata: [DONE]\n\n\r\n" \
	"0\r\nX-Trailer: 1\r\n\r\n"
#define CHUNKED_BODY "data: hello\n\ndata: [DONE]\n\n"

static void
check_whole(const char *msg, size_t step, int status, const char *body,
    int keep_alive)
{
	struct http1 p;
	struct got g = { BUF_INIT, 0, 0, 0, 0 };

	http1_init(&p);
	assert_int_equal(feed(&p, &g, msg, strlen(msg), step),
	    (long)strlen(msg));
	assert_int_equal(p.state, HTTP1_DONE);
	assert_int_equal(g.heads, 1);
	assert_int_equal(g.status, status);
	assert_string_equal(buf_cstr(&g.body), body);
	assert_int_equal(p.keep_alive, keep_alive);
	buf_free(&g.body);
}

static void
test_chunked_at_every_split(void **state)
{
	const char *msg = CHUNKED;
	size_t len = strlen(msg), cut;
	struct http1 p;
	struct got g;
	long a, b;

	(void)state;
	check_whole(msg, 0, 200, CHUNKED_BODY, 1);
	check_whole(msg, 1, 200, CHUNKED_BODY, 1);
	for (cut = 1; cut < len; cut++) {
		memset(&g, 0, sizeof(g));
		http1_init(&p);
		a = http1_feed(&p, msg, cut, got_head, got_body, &g);
		b = http1_feed(&p, msg + cut, len - cut, got_head, got_body, &g);
		assert_int_equal(a, (long)cut);
		assert_int_equal(b, (long)(len - cut));
		assert_int_equal(p.state, HTTP1_DONE);
		assert_string_equal(buf_cstr(&g.body), CHUNKED_BODY);
		buf_free(&g.body);
	}
}

static void
test_content_length_and_what_follows(void **state)
{
	const char *msg = "HTTP/1.1 500 Internal Server Error\r\n"
	    "Content-Length: 5\r\n\r\noops!HTTP/1.1 200";
	struct http1 p;
	struct got g = { BUF_INIT, 0, 0, 0, 0 };

	(void)state;
	http1_init(&p);
	/* the bytes after the answer are no part of it */
	assert_int_equal(http1_feed(&p, msg, strlen(msg), got_head, got_body,
	    &g), (long)strlen(msg) - 12);
	assert_int_equal(p.state, HTTP1_DONE);
	assert_int_equal(g.status, 500);
	assert_string_equal(buf_cstr(&g.body), "oops!");
	buf_free(&g.body);
	check_whole("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 1, 200, "",
	    1);
	check_whole("HTTP/1.1 204 No Content\r\n\r\n", 0, 204, "", 1);
}

static void
test_body_until_close(void **state)
{
	/* Python's http.server as mlx_lm.server runs it: HTTP/1.0, no
	 * length, the body ends when the server closes */
	const char *msg = "HTTP/1.0 200 OK\r\nServer: BaseHTTP/0.6\r\n"
	    "Content-Type: text/event-stream\r\n\r\ndata: a\n\ndata: b\n\n";
	struct http1 p;
	struct got g = { BUF_INIT, 0, 0, 0, 0 };

	(void)state;
	http1_init(&p);
	assert_int_equal(feed(&p, &g, msg, strlen(msg), 3), (long)strlen(msg));
	assert_int_equal(p.state, HTTP1_BODY_CLOSE);
	assert_int_equal(p.keep_alive, 0);
	assert_int_equal(http1_eof(&p), 1);
	assert_string_equal(buf_cstr(&g.body), "data: a\n\ndata: b\n\n");
	buf_free(&g.body);
}

static void
test_a_cut_answer_is_not_complete(void **state)
{
	const char *msg = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n10\r\ndata: a";
	struct http1 p;
	struct got g = { BUF_INIT, 0, 0, 0, 0 };

	(void)state;
	http1_init(&p);
	assert_int_equal(feed(&p, &g, msg, strlen(msg), 0), (long)strlen(msg));
	assert_int_equal(http1_eof(&p), 0);
	http1_init(&p);
	assert_int_equal(http1_eof(&p), 0);	/* nothing at all */
	buf_free(&g.body);
}

static void
test_keep_alive_by_version_and_connection(void **state)
{
	(void)state;
	check_whole("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 0, 200,
	    "x", 1);
	check_whole("HTTP/1.1 200 OK\r\nConnection: Close\r\n"
	    "Content-Length: 1\r\n\r\nx", 0, 200, "x", 0);
	check_whole("HTTP/1.1 200 OK\r\nConnection: upgrade, close\r\n"
	    "Content-Length: 1\r\n\r\nx", 0, 200, "x", 0);
	check_whole("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 0, 200,
	    "x", 0);
	check_whole("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n"
	    "Content-Length: 1\r\n\r\nx", 0, 200, "x", 1);
	/* llama-server says Keep-Alive and means it until it closes */
	check_whole("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", 2, 200,
	    "x", 1);
}

static void
test_informational_answers_are_skipped(void **state)
{
	(void)state;
	check_whole("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
	    "Content-Length: 2\r\n\r\nok", 1, 200, "ok", 1);
}

static void
test_bare_lf_lines(void **state)
{
	(void)state;
	check_whole("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n"
	    "2\nab\n0\n\n", 0, 200, "ab", 1);
}

static void
test_malformed_answers_are_refused(void **state)
{
	static const char *const bad[] = {
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"ICY 200 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
		    "Content-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "1\r\nabc\r\n",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n",
	};
	struct http1 p;
	struct got g;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&g, 0, sizeof(g));
		http1_init(&p);
		assert_int_equal(feed(&p, &g, bad[i], strlen(bad[i]), 0), -1);
		assert_int_equal(p.state, HTTP1_ERROR);
		assert_non_null(p.error);
		buf_free(&g.body);
	}
}

static void
test_a_line_too_long_is_refused(void **state)
{
	struct buf m = BUF_INIT;
	struct http1 p;
	struct got g = { BUF_INIT, 0, 0, 0, 0 };
	size_t i;

	(void)state;
	buf_puts(&m, "HTTP/1.1 200 OK\r\nX-Big: ");
	for (i = 0; i < HTTP1_LINE_MAX; i++)
		buf_addch(&m, 'a');
	buf_puts(&m, "\r\n\r\n");
	http1_init(&p);
	assert_int_equal(feed(&p, &g, m.data, m.len, 100), -1);
	assert_non_null(strstr(p.error, "too long"));
	buf_free(&m);
	buf_free(&g.body);
}

/* Header lines without end, or 1xx answers without end, are refused
 * once the head passes HTTP1_HEAD_MAX, however they are split; a head
 * just under it is read. */
static void
test_a_head_without_end_is_refused(void **state)
{
	static const char *const each[] = { "X-Pad: 0123456789\r\n",
	    "HTTP/1.1 100 Continue\r\n\r\n" };
	struct buf m = BUF_INIT;
	struct http1 p;
	struct got g = { BUF_INIT, 0, 0, 0, 0 };
	size_t k;

	(void)state;
	for (k = 0; k < 2; k++) {
		buf_reset(&m);
		buf_puts(&m, k == 0 ? "HTTP/1.1 200 OK\r\n" : "");
		while (m.len <= HTTP1_HEAD_MAX)
			buf_puts(&m, each[k]);
		http1_init(&p);
		assert_int_equal(feed(&p, &g, m.data, m.len, 1000), -1);
		assert_non_null(strstr(p.error, "the head passed 65536 bytes"));
		assert_int_equal(g.heads, 0);
	}
	buf_reset(&m);
	buf_puts(&m, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n");
	while (m.len < HTTP1_HEAD_MAX - 64)
		buf_puts(&m, each[0]);
	buf_puts(&m, "\r\nok");
	http1_init(&p);
	assert_int_equal(feed(&p, &g, m.data, m.len, 0), (long)m.len);
	assert_int_equal(p.state, HTTP1_DONE);
	assert_string_equal(buf_cstr(&g.body), "ok");
	buf_free(&m);
	buf_free(&g.body);
}

static void
test_the_reader_stops_when_asked(void **state)
{
	struct http1 p;
	struct got g = { BUF_INIT, 0, 0, 1, 0 };

	(void)state;
	http1_init(&p);
	assert_int_equal(http1_feed(&p, CHUNKED, strlen(CHUNKED), got_head,
	    got_body, &g), HTTP1_STOPPED);
	assert_int_equal(g.spans, 1);
	assert_string_equal(buf_cstr(&g.body), "data: hello\n\n");
	buf_free(&g.body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunked_at_every_split),
		cmocka_unit_test(test_content_length_and_what_follows),
		cmocka_unit_test(test_body_until_close),
		cmocka_unit_test(test_a_cut_answer_is_not_complete),
		cmocka_unit_test(test_keep_alive_by_version_and_connection),
		cmocka_unit_test(test_informational_answers_are_skipped),
		cmocka_unit_test(test_bare_lf_lines),
		cmocka_unit_test(test_malformed_answers_are_refused),
		cmocka_unit_test(test_a_line_too_long_is_refused),
		cmocka_unit_test(test_a_head_without_end_is_refused),
		cmocka_unit_test(test_the_reader_stops_when_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
