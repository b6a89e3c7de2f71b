/*
 * output.c - JSON and progress output for commands. See output.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "buf.h"
#include "output.h"

void
output_json(const json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(10));
	fputc('\n', stdout);
}

int
output_is_tty(void)
{
	return isatty(STDERR_FILENO);
}

void
output_progress(int final, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (output_is_tty())
		fprintf(stderr, "\r\033[K%s%s", buf_cstr(&b), final ? "\n" : "");
	else
		fprintf(stderr, "%s\n", buf_cstr(&b));
	fflush(stderr);
	buf_free(&b);
}
