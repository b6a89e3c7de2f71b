/*
 * alloc.h - allocation that aborts on failure (there is no useful
 * recovery), and fatal(). The bottom of runner/base/: it includes no
 * other header of warden, so buf.c and error.c allocate through it
 * without including util.h (which includes them). util.h includes it.
 */
#ifndef WARDEN_ALLOC_H
#define WARDEN_ALLOC_H

#include <stddef.h>

void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
