/*
 * buf.c - growable byte buffer. See buf.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void
buf_grow(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap;

	if (need < b->len)
		fatal("buffer size overflow");
	if (need <= b->cap)
		return;
	cap = b->cap != 0 ? b->cap : 64;
	while (cap < need)
		cap = cap * 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
	b->data[b->len] = '\0';	/* terminated even before anything is added */
}

void
buf_add(struct buf *b, const void *data, size_t len)
{
	buf_grow(b, len);
	if (len > 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void
buf_addch(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void
buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		fatal("vsnprintf failed");
	buf_grow(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void
buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

const char *
buf_cstr(const struct buf *b)
{
	return b->data != NULL ? b->data : "";
}

char *
buf_detach(struct buf *b)
{
	char *s = b->data != NULL ? b->data : xstrdup("");

	buf_init(b);
	return s;
}
