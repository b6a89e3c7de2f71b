/*
 * output.c - JSON and progress output for commands. See output.h.
 *
 * A live progress line is drawn with "\r", ESC[K (erase to the end of
 * the line) and the text clipped to one column less than the terminal is
 * wide, so it never wraps: a wrapped line cannot be redrawn in place and
 * leaves its first rows behind.
 *
 * The terminal guard: stdout and stderr are replaced by streams (a
 * fopencookie or funopen cookie) whose every write is passed through
 * quote_term(QUOTE_KEEP_LINES | QUOTE_KEEP_BACKSLASH) on its way to the
 * real stream. That mode changes nothing in text already quoted, so a
 * printer that quoted a field is not quoted twice. The progress line's own
 * "\r" and ESC[K and JSON documents go to the real streams.
 */
#include "config.h"

#include <sys/ioctl.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "isotime.h"
#include "output.h"
#include "quote.h"
#include "util.h"

static int line_open;	/* a live line is drawn and not yet ended */

/* The live line of long work (output_progress_live) and its pace. */
static struct {
	char *text;		/* NULL: none */
	uint64_t since_ns;	/* when the text was set */
	uint64_t printed_ns;	/* when a line was last printed, 0 never */
	double interval_s;	/* off a terminal; 0: no repeats */
} live = { NULL, 0, 0, 30 };

/* The real streams while the guard stands in for them. */
static FILE *real_stdout, *real_stderr;

#if defined(HAVE_FOPENCOOKIE) || defined(HAVE_FUNOPEN)
#define HAVE_GUARD 1

struct guard {
	FILE *to;		/* the real stream */
	struct buf pending;	/* the start of a UTF-8 sequence cut by a write */
};

static int
guard_pass(struct guard *g, const char *data, size_t len, int last)
{
	struct buf out = BUF_INIT;
	size_t keep;
	int ok;

	buf_add(&g->pending, data, len);
	keep = last ? 0 : quote_pending_tail(g->pending.data, g->pending.len);
	quote_term(&out, g->pending.data, g->pending.len - keep,
	    QUOTE_KEEP_LINES | QUOTE_KEEP_BACKSLASH);
	buf_consume(&g->pending, g->pending.len - keep);
	ok = fwrite(out.data != NULL ? out.data : "", 1, out.len, g->to) ==
	    out.len && fflush(g->to) == 0;
	buf_free(&out);
	return ok ? 0 : -1;
}

static int
guard_close(void *cookie)
{
	struct guard *g = cookie;
	int r = 0;

	if (g->pending.len > 0)
		r = guard_pass(g, "", 0, 1);
	buf_free(&g->pending);
	free(g);
	return r;
}

#ifdef HAVE_FOPENCOOKIE
static ssize_t
guard_write(void *cookie, const char *data, size_t len)
{
	return guard_pass(cookie, data, len, 0) == 0 ? (ssize_t)len : -1;
}
#else
static int
guard_write(void *cookie, const char *data, int len)
{
	return guard_pass(cookie, data, (size_t)len, 0) == 0 ? len : -1;
}
#endif

static FILE *
guard_open(FILE *to, int mode)
{
	struct guard *g = calloc(1, sizeof(*g));
	FILE *f;

	if (g == NULL)
		return NULL;
	g->to = to;
#ifdef HAVE_FOPENCOOKIE
	{
		cookie_io_functions_t io = { NULL, guard_write, NULL, guard_close };

		f = fopencookie(g, "w", io);
	}
#else
	f = funopen(g, NULL, guard_write, NULL, guard_close);
#endif
	if (f == NULL) {
		free(g);
		return NULL;
	}
	setvbuf(f, NULL, mode, BUFSIZ);
	return f;
}
#endif

void
output_guard_start(void)
{
#ifdef HAVE_GUARD
	FILE *out, *err;

	if (real_stdout != NULL)
		return;
	fflush(stdout);
	fflush(stderr);
	out = guard_open(stdout, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
	err = guard_open(stderr, _IONBF);
	if (out == NULL || err == NULL) {
		if (out != NULL)
			fclose(out);
		if (err != NULL)
			fclose(err);
		return;		/* no memory: the printers' quoting stays */
	}
	real_stdout = stdout;
	real_stderr = stderr;
	/* stdout and stderr are assignable lvalues in glibc, musl and the
	 * BSDs (macOS: __stdoutp); every printer then goes through the
	 * guard without knowing it. */
	stdout = out;
	stderr = err;
#endif
}

void
output_guard_end(void)
{
	if (real_stdout == NULL)
		return;
	/* An error writing through the guard is left on the real stream,
	 * where main() looks for it. */
	fclose(stdout);
	fclose(stderr);
	stdout = real_stdout;
	stderr = real_stderr;
	real_stdout = real_stderr = NULL;
}

/* The real stdout (JSON) and stderr (the progress line's controls). */
static FILE *
raw_out(void)
{
	return real_stdout != NULL ? real_stdout : stdout;
}

static FILE *
raw_err(void)
{
	return real_stderr != NULL ? real_stderr : stderr;
}

void
output_json(const json_t *doc)
{
	FILE *out = raw_out();

	fflush(stdout);		/* anything printed before stays before */
	json_dumpf(doc, out, JSON_ENCODE_ANY | JSON_INDENT(2) |
	    JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', out);
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
	struct buf text = BUF_INIT, b = BUF_INIT;
	FILE *err = raw_err();
	va_list ap;
	int cols;

	va_start(ap, fmt);
	buf_vprintf(&text, fmt, ap);
	va_end(ap);
	/* One line, whatever a name or an engine's message held. */
	quote_term(&b, buf_cstr(&text), text.len, QUOTE_KEEP_BACKSLASH);
	fflush(stderr);
	if (output_is_tty()) {
		cols = output_columns();
		clip(&b, cols > 1 ? (size_t)cols - 1 : 1);
		fprintf(err, "\r\033[K%s%s", buf_cstr(&b), final ? "\n" : "");
		line_open = !final;
	} else {
		fprintf(err, "%s\n", buf_cstr(&b));
	}
	fflush(err);
	buf_free(&text);
	buf_free(&b);
	if (final) {
		free(live.text);
		live.text = NULL;
	}
}

void
output_progress_interval(double seconds)
{
	live.interval_s = seconds >= 0 ? seconds : 0;
}

/* How long the live line has stood, whole seconds. */
static void
elapsed(char *out, size_t n, uint64_t ns)
{
	isotime_span(out, n, (double)(ns / 1000000000ULL));
}

/* Print the live line: on a terminal in place, with how long it has
 * stood once that is a second or more; off a terminal as a line. */
static void
live_print(uint64_t now)
{
	char e[40];

	if (now - live.since_ns >= 1000000000ULL) {
		elapsed(e, sizeof(e), now - live.since_ns);
		output_progress(0, "%s (%s)", live.text, e);
	} else
		output_progress(0, "%s", live.text);
	live.printed_ns = now;
}

void
output_progress_live(const char *fmt, ...)
{
	uint64_t now = mono_ns();
	struct buf b = BUF_INIT;
	va_list ap;
	char *text;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	text = buf_detach(&b);
	if (live.text != NULL && strcmp(live.text, text) == 0) {
		free(text);	/* the same state: only a tick */
		output_progress_tick();
		return;
	}
	free(live.text);
	live.text = text;
	live.since_ns = now;
	/* On a terminal every change is drawn; off one, a line at most
	 * every interval (0: every change), so a log is not flooded. */
	if (output_is_tty() || live.printed_ns == 0 || live.interval_s <= 0 ||
	    (double)(now - live.printed_ns) / 1e9 >= live.interval_s)
		live_print(now);
}

void
output_progress_tick(void)
{
	uint64_t now;

	if (live.text == NULL)
		return;
	now = mono_ns();
	if (output_is_tty() ? now - live.printed_ns >= 1000000000ULL :
	    live.interval_s > 0 && (double)(now - live.printed_ns) / 1e9 >=
	    live.interval_s)
		live_print(now);
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

void
output_error(const char *msg, const char *trailer)
{
	struct buf b = BUF_INIT;

	buf_puts(&b, "warden: ");
	quote_term(&b, msg, strlen(msg), QUOTE_KEEP_BACKSLASH);
	buf_addch(&b, '\n');
	if (trailer != NULL && trailer[0] != '\0')
		buf_printf(&b, "%s\n", trailer);
	fputs(buf_cstr(&b), stderr);
	fflush(stderr);
	buf_free(&b);
}
