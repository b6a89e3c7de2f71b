/*
 * alloc.c - allocation that aborts on failure. See alloc.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void
fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("warden: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n != 0 ? n : 1);

	if (p == NULL)
		fatal("out of memory");
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n != 0 ? n : 1, size != 0 ? size : 1);

	if (p == NULL)
		fatal("out of memory");
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n != 0 ? n : 1);

	if (q == NULL)
		fatal("out of memory");
	return q;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		fatal("out of memory");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (p == NULL)
		fatal("out of memory");
	return p;
}
