/*
 * fuzz-http1.c - libFuzzer harness for the load generator's HTTP/1.x
 * response reader (runner/campaign/http1.c), which reads whatever an
 * engine sends back.
 *
 * The input is one response. Fed whole, one byte at a time, and cut in
 * two at a place the input's first byte picks, the reader must agree on
 * everything: how many bytes it took, its end state, the status, whether
 * the connection stays alive, the error (or none), and the body bytes
 * handed out. The body never holds more bytes than the input. Any
 * disagreement aborts, naming the field.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. Must never
 * write a file or keep state from one input to the next.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "http1.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	struct buf body;
	long taken;
	int heads;
	struct http1 p;
};

static int
on_head(void *arg, const struct http1 *p)
{
	struct run *r = arg;

	(void)p;
	r->heads++;
	return 1;
}

static int
on_body(void *arg, const char *d, size_t n)
{
	struct run *r = arg;

	buf_add(&r->body, d, n);
	return 1;
}

/* Feed in pieces of the given sizes (0 ends the list). */
static void
feed(struct run *r, const char *d, size_t n, size_t step, size_t cut)
{
	size_t off = 0, len;
	long rc;

	http1_init(&r->p);
	buf_init(&r->body);
	r->taken = 0;
	r->heads = 0;
	while (off < n) {
		len = n - off;
		if (step != 0 && len > step)
			len = step;
		if (cut != 0 && off < cut && off + len > cut)
			len = cut - off;
		rc = http1_feed(&r->p, d + off, len, on_head, on_body, r);
		if (rc < 0) {
			r->taken = rc;
			return;
		}
		r->taken += rc;
		if ((size_t)rc < len)
			return;
		off += len;
	}
}

static void __attribute__((noreturn))
differ(const char *what)
{
	fprintf(stderr, "fuzz-http1: whole and split feeds differ in %s\n",
	    what);
	abort();
}

static void
same(const struct run *a, const struct run *b)
{
	if (a->taken != b->taken)
		differ("bytes taken");
	if (a->p.state != b->p.state)
		differ("state");
	if (a->p.status != b->p.status)
		differ("status");
	if (a->heads != b->heads)
		differ("heads");
	if (a->p.state == HTTP1_DONE && a->p.keep_alive != b->p.keep_alive)
		differ("keep_alive");
	if ((a->p.error == NULL) != (b->p.error == NULL) ||
	    (a->p.error != NULL && strcmp(a->p.error, b->p.error) != 0))
		differ("error");
	if (a->body.len != b->body.len || (a->body.len > 0 &&
	    memcmp(a->body.data, b->body.data, a->body.len) != 0))
		differ("body");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run whole, bytes, cut;
	const char *d = (const char *)data;

	feed(&whole, d, size, 0, 0);
	feed(&bytes, d, size, 1, 0);
	feed(&cut, d, size, 0, size > 0 ? (size_t)data[0] * size / 256 : 0);
	if (whole.body.len > size)
		differ("body length (more than the input)");
	same(&whole, &bytes);
	same(&whole, &cut);
	(void)http1_eof(&whole.p);
	buf_free(&whole.body);
	buf_free(&bytes.body);
	buf_free(&cut.body);
	return 0;
}
