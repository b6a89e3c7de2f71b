/*
 * quote.c - quoting untrusted text for a terminal. See quote.h.
 *
 * Must never pass a control through, whatever the input: every byte is
 * either part of a valid UTF-8 character that is printable or shown
 * escaped in ASCII.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "quote.h"
#include "util.h"

#define QUOTE_RING 16

static struct buf ring[QUOTE_RING];
static unsigned ring_next;

/* The code point of the valid n-byte UTF-8 sequence at s. */
static unsigned
utf8_decode(const unsigned char *s, size_t n)
{
	switch (n) {
	case 1:
		return s[0];
	case 2:
		return ((s[0] & 0x1fu) << 6) | (s[1] & 0x3fu);
	case 3:
		return ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) |
		    (s[2] & 0x3fu);
	default:
		return ((s[0] & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) |
		    ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);
	}
}

/* Is cp a character a terminal acts on or that hides or reorders text? */
static int
is_control(unsigned cp)
{
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
		return 1;	/* C0, DEL, C1 */
	if (cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) ||
	    cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb))
		return 1;	/* bidi marks, overrides and isolates, zero
				 * widths, separators, BOM, annotations */
	return 0;
}

static void
escape_byte(struct buf *out, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '\n':
		buf_puts(out, "\\n");
		return;
	case '\r':
		buf_puts(out, "\\r");
		return;
	case '\t':
		buf_puts(out, "\\t");
		return;
	}
	buf_addch(out, '\\');
	buf_addch(out, 'x');
	buf_addch(out, hex[c >> 4]);
	buf_addch(out, hex[c & 0xf]);
}

void
quote_term(struct buf *out, const char *s, size_t len, unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n, k;

	buf_grow(out, len);
	while (i < len) {
		if ((n = utf8_seq_len(u + i, len - i)) == 0) {
			escape_byte(out, u[i]);		/* not UTF-8 */
			i++;
			continue;
		}
		if (n == 1 && u[i] == '\\' && !(flags & QUOTE_KEEP_BACKSLASH))
			buf_puts(out, "\\\\");
		else if (n == 1 && (u[i] == '\n' || u[i] == '\t') &&
		    (flags & QUOTE_KEEP_LINES))
			buf_addch(out, (char)u[i]);
		else if (is_control(utf8_decode(u + i, n)))
			for (k = 0; k < n; k++)
				escape_byte(out, u[i + k]);
		else
			buf_add(out, u + i, n);
		i += n;
	}
}

void
quote_print_lines(FILE *fp, const char *indent, const char *s)
{
	struct buf b = BUF_INIT;
	const char *nl;
	size_t n;

	if (s == NULL || s[0] == '\0')
		return;
	for (; *s != '\0'; s += n + (nl != NULL)) {
		nl = strchr(s, '\n');
		n = nl != NULL ? (size_t)(nl - s) : strlen(s);
		buf_puts(&b, indent);
		quote_term(&b, s, n, QUOTE_KEEP_LINES | QUOTE_KEEP_BACKSLASH);
		buf_addch(&b, '\n');
	}
	fputs(buf_cstr(&b), fp);
	buf_free(&b);
}

void
quote_md(struct buf *out, const char *s)
{
	struct buf q = BUF_INIT;
	const char *p;

	if (s == NULL)
		return;
	quote_term(&q, s, strlen(s), QUOTE_KEEP_BACKSLASH);
	for (p = buf_cstr(&q); *p != '\0'; p++)
		if (*p == '|')
			buf_puts(out, "\\|");
		else
			buf_addch(out, *p);
	buf_free(&q);
}

void
quote_md_doc(struct buf *md)
{
	struct buf q = BUF_INIT;

	quote_term(&q, md->data != NULL ? md->data : "", md->len,
	    QUOTE_KEEP_LINES | QUOTE_KEEP_BACKSLASH);
	buf_reset(md);
	buf_add(md, q.data, q.len);
	buf_free(&q);
}

static const char *
quote_ring(const char *s, unsigned flags)
{
	struct buf *b = &ring[ring_next++ % QUOTE_RING];

	buf_reset(b);
	if (s == NULL)
		s = "";
	quote_term(b, s, strlen(s), flags);
	return buf_cstr(b);
}

const char *
quote_str(const char *s)
{
	return quote_ring(s, 0);
}

const char *
quote_msg(const char *s)
{
	return quote_ring(s, QUOTE_KEEP_BACKSLASH);
}

void
quote_release(void)
{
	size_t i;

	for (i = 0; i < QUOTE_RING; i++)
		buf_free(&ring[i]);
}

size_t
quote_pending_tail(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t back, need;

	for (back = 1; back <= 3 && back <= len; back++) {
		unsigned char c = u[len - back];

		if ((c & 0xc0) == 0x80)
			continue;	/* a continuation byte: look further */
		if (c >= 0xc2 && c <= 0xdf)
			need = 2;
		else if (c >= 0xe0 && c <= 0xef)
			need = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 4;
		else
			return 0;
		return need > back ? back : 0;
	}
	return 0;
}
