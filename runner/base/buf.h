/*
 * buf.h - a growable byte buffer, the one way warden builds strings.
 *
 * Always NUL-terminated once anything was added; buf_cstr() never returns
 * NULL. Allocation failure aborts (there is no useful recovery).
 */
#ifndef WARDEN_BUF_H
#define WARDEN_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

#define BUF_INIT { NULL, 0, 0 }

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
void buf_grow(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_addch(struct buf *b, char c);
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Drop the first n bytes. */
void buf_consume(struct buf *b, size_t n);
const char *buf_cstr(const struct buf *b);
/* Hand the string to the caller (free() it); b is left empty. */
char *buf_detach(struct buf *b);

#endif
