/*
 * output-wrap.c - lists within OUTPUT_WIDTH columns. See output.h.
 *
 * The layout is greedy, as fmt(1) and git's strbuf_add_wrapped_text:
 * an item goes on the current line if it fits, else it starts the next
 * one; an item wider than a whole line is laid out word by word, and a
 * word wider than that is cut. A separator's comma or semicolon stays at
 * the end of the line it closes. Columns are counted as characters (UTF-8
 * lead bytes): the text is already quoted, so no control reaches here.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "output.h"
#include "alloc.h"

/* Columns of s[0..len): its characters. */
static size_t
columns(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* The bytes of s holding at most cols characters (never a cut sequence). */
static size_t
bytes_within(const char *s, size_t len, size_t cols)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == cols)
			break;
	}
	return i;
}

void
output_list_init(struct output_list *l, const char *label, const char *sep,
    size_t max_lines)
{
	memset(l, 0, sizeof(*l));
	l->label = label;
	l->sep = sep != NULL ? sep : ", ";
	l->max_lines = max_lines;
	l->indent = columns(label, strlen(label));
	l->fp = stdout;
}

void
output_list_add(struct output_list *l, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->item = xrealloc(l->item, l->cap * sizeof(*l->item));
	}
	l->item[l->n++] = buf_detach(&b);
}

/* The lines being laid out, and per line how many items ended on it. */
struct layout {
	struct buf *line;
	size_t *ended;
	size_t n, cap;
	size_t indent;		/* columns of the label */
	size_t col;		/* columns of the current line */
	int fresh;		/* nothing on the current line but its indent */
};

static void
layout_newline(struct layout *o)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 8;
		o->line = xrealloc(o->line, o->cap * sizeof(*o->line));
		o->ended = xrealloc(o->ended, o->cap * sizeof(*o->ended));
	}
	buf_init(&o->line[o->n]);
	o->ended[o->n] = o->n > 0 ? o->ended[o->n - 1] : 0;
	if (o->n > 0)
		buf_printf(&o->line[o->n], "%*s", (int)o->indent, "");
	o->col = o->indent;
	o->fresh = 1;
	o->n++;
}

/* Close the current line with sep's punctuation (its trailing blanks
 * dropped) and start the next. */
static void
layout_break(struct layout *o, const char *sep)
{
	size_t k = strlen(sep);

	while (k > 0 && sep[k - 1] == ' ')
		k--;
	buf_add(&o->line[o->n - 1], sep, k);
	layout_newline(o);
}

/* Columns of sep's punctuation: what a line that breaks after an item
 * ends with (layout_break). */
static size_t
punctuation(const char *sep)
{
	size_t k = strlen(sep);

	while (k > 0 && sep[k - 1] == ' ')
		k--;
	return columns(sep, k);
}

/* Put text (glued to what precedes by glue, "" at a line's start) on the
 * lines, breaking before it when it, and the tail columns that may
 * follow it on its line (a separator's comma), do not fit. */
static void
layout_put(struct layout *o, const char *glue, const char *text, size_t len,
    size_t tail)
{
	size_t w = columns(text, len) + tail, g = o->fresh ? 0 :
	    columns(glue, strlen(glue));
	/* a fresh continuation line is as far left as text goes; the first
	 * line, after its label, may be further right than the indent */
	int can_move = !o->fresh || (o->n == 1 && o->col > o->indent);

	if (can_move && o->col + g + w > OUTPUT_WIDTH)
		layout_break(o, o->fresh ? "" : glue);
	if (!o->fresh) {
		buf_puts(&o->line[o->n - 1], glue);
		o->col += g;
	}
	buf_add(&o->line[o->n - 1], text, len);
	o->col += w - tail;
	o->fresh = 0;
}

/* An item wider than a line: word by word (the blanks between two words
 * kept, dropped where the line breaks), a word too wide cut. */
static void
layout_words(struct layout *o, const char *glue, const char *s, size_t tail)
{
	const char *end, *gap;
	size_t len, room, k;
	char *blanks;
	int first = 1;

	/* after a label wider than the indent (a table's row), a long
	 * item starts under it rather than in its last columns */
	if (o->fresh && o->n == 1 && o->col > o->indent)
		layout_break(o, "");
	while (*s != '\0') {
		gap = s;
		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		blanks = first ? xstrdup(glue) : xstrndup(gap, (size_t)(s - gap));
		end = strchr(s, ' ');
		len = end != NULL ? (size_t)(end - s) : strlen(s);
		room = OUTPUT_WIDTH > o->indent ? OUTPUT_WIDTH - o->indent : 1;
		if (columns(s, len) > room && (!o->fresh ||
		    (o->n == 1 && o->col > o->indent)))
			layout_break(o, o->fresh ? "" : blanks);
		while (columns(s, len) > room) {
			k = bytes_within(s, len, room);
			buf_add(&o->line[o->n - 1], s, k);
			layout_break(o, "");
			s += k;
			len -= k;
		}
		layout_put(o, blanks, s, len, strchr(s + len, ' ') == NULL ?
		    tail : 0);
		free(blanks);
		first = 0;
		s += len;
	}
}

size_t
output_list_print(struct output_list *l, const char *none, const char *more)
{
	struct layout o;
	size_t i, n, shown, keep;

	memset(&o, 0, sizeof(o));
	o.indent = l->indent;
	layout_newline(&o);
	o.col = columns(l->label, strlen(l->label));
	buf_puts(&o.line[0], l->label);
	if (l->n == 0 && none != NULL)
		buf_puts(&o.line[0], none);
	for (i = 0; i < l->n; i++) {
		const char *glue = i > 0 ? l->sep : "";
		size_t tail = i + 1 < l->n ? punctuation(l->sep) : 0;
		size_t w = columns(l->item[i], strlen(l->item[i])) + tail;

		if (o.indent + w > OUTPUT_WIDTH)
			layout_words(&o, glue, l->item[i], tail);
		else
			layout_put(&o, glue, l->item[i], strlen(l->item[i]),
			    tail);
		o.ended[o.n - 1] = i + 1;
	}
	keep = o.n;
	if (l->max_lines > 0 && o.n > l->max_lines)
		keep = l->max_lines > 1 ? l->max_lines - 1 : 1;
	for (i = 0; i < keep; i++) {
		/* the last line kept ends its list: no dangling comma */
		if (keep < o.n && i == keep - 1) {
			struct buf *b = &o.line[i];
			size_t k = strlen(l->sep);

			while (k > 0 && l->sep[k - 1] == ' ')
				k--;
			if (b->len >= k && k > 0 &&
			    memcmp(b->data + b->len - k, l->sep, k) == 0)
				b->len -= k;
		}
		while (o.line[i].len > 0 &&
		    o.line[i].data[o.line[i].len - 1] == ' ')
			o.line[i].len--;	/* a label alone on its line */
		fwrite(o.line[i].data, 1, o.line[i].len, l->fp);
		fputc('\n', l->fp);
	}
	if (keep < o.n) {
		shown = o.ended[keep - 1];
		fprintf(l->fp, "%*sand %zu more%s%s\n", (int)o.indent, "",
		    l->n - shown, more != NULL ? ": " : "",
		    more != NULL ? more : "");
	}
	n = keep < o.n ? keep + 1 : keep;
	for (i = 0; i < o.n; i++)
		buf_free(&o.line[i]);
	free(o.line);
	free(o.ended);
	for (i = 0; i < l->n; i++)
		free(l->item[i]);
	free(l->item);
	memset(l, 0, sizeof(*l));
	return n;
}

void
output_line(size_t hang, const char *fmt, ...)
{
	struct output_list l;
	struct buf b = BUF_INIT;
	va_list ap;
	char *lead;
	size_t k;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	k = strspn(buf_cstr(&b), " ");
	lead = xstrndup(buf_cstr(&b), k);
	output_list_init(&l, lead, NULL, 0);
	l.indent = k + hang;
	output_list_add(&l, "%s", buf_cstr(&b) + k);
	output_list_print(&l, NULL, NULL);
	free(lead);
	buf_free(&b);
}
