/*
 * output.c - JSON and progress output for commands. See output.h.
 *
 * A live progress line is drawn with "\r", ESC[K (erase to the end of
 * the line) and the text clipped to one column less than the terminal is
 * wide, so it never wraps: a wrapped line cannot be redrawn in place and
 * leaves its first rows behind.
 */
#include "config.h"

#include <sys/ioctl.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "buf.h"
#include "output.h"

static int line_open;	/* a live line is drawn and not yet ended */

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

int
output_columns(void)
{
	struct winsize ws;
	const char *env;
	long n;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if ((env = getenv("COLUMNS")) != NULL && (n = strtol(env, NULL, 10)) > 0 &&
	    n < 10000)
		return (int)n;
	return 80;
}

/* Cut b to at most max columns (bytes: the lines are ASCII), never inside
 * a UTF-8 sequence. */
static void
clip(struct buf *b, size_t max)
{
	size_t n = b->len;

	if (n <= max)
		return;
	n = max;
	while (n > 0 && ((unsigned char)b->data[n] & 0xc0) == 0x80)
		n--;
	b->len = n;
	b->data[n] = '\0';
}

void
output_progress(int final, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	int cols;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (output_is_tty()) {
		cols = output_columns();
		clip(&b, cols > 1 ? (size_t)cols - 1 : 1);
		fprintf(stderr, "\r\033[K%s%s", buf_cstr(&b), final ? "\n" : "");
		line_open = !final;
	} else {
		fprintf(stderr, "%s\n", buf_cstr(&b));
	}
	fflush(stderr);
	buf_free(&b);
}

void
output_progress_end(void)
{
	if (!line_open)
		return;
	fputc('\n', stderr);
	fflush(stderr);
	line_open = 0;
}
