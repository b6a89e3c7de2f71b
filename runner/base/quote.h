/*
 * quote.h - text no maintainer has approved, made safe for a terminal.
 *
 * Untrusted text (an agent's file names and diff, a pending review, a
 * pull request, an engine's responses and logs, a snapshot handed in,
 * argv echoed in an error) is printed only through quote_term(). It never
 * lets a byte through that a terminal would act on: C0 controls (ESC, BEL,
 * CR, ...), DEL, C1 controls (U+0080..U+009F), the invisible Unicode
 * controls that reorder or hide text (bidi overrides and isolates, zero
 * width characters, line and paragraph separators, BOM) and bytes that are
 * not UTF-8 are shown as "\xNN" per byte ("\n", "\r", "\t" by name).
 * Valid printable UTF-8 passes unchanged. JSON output never comes here:
 * jansson escapes it and --json stays exact.
 */
#ifndef WARDEN_QUOTE_H
#define WARDEN_QUOTE_H

#include <stddef.h>
#include <stdio.h>

#include "buf.h"

enum quote_flags {
	/* '\n' and '\t' stay real: a block of lines (a diff, a log tail)
	 * still reads as lines. Without it the text stays on one line, so a
	 * name holding a newline cannot start a line of its own. */
	QUOTE_KEEP_LINES = 1 << 0,
	/* '\' is not doubled. Without it the quoting is unambiguous, as git's
	 * quote_path: "\x1b" is ESC, "\\x1b" the four characters. With it
	 * quoting is idempotent, for sinks that see already quoted text. */
	QUOTE_KEEP_BACKSLASH = 1 << 1,
};

/* Append s[0..len) to out, quoted as above. */
void quote_term(struct buf *out, const char *s, size_t len, unsigned flags);

/* Print the block of lines s (NULL: nothing) on fp, each line indented
 * by indent and its content quoted (QUOTE_KEEP_LINES |
 * QUOTE_KEEP_BACKSLASH): a diff, a log tail. With an indent no line of s
 * can pass for one of warden's own, which start in the first column. The
 * block ends with a newline. */
void quote_print_lines(FILE *fp, const char *indent, const char *s);

/*
 * Markdown a maintainer reads with cat as often as on GitHub (REPORT.md,
 * journals/CYCLE.md, pr-check's comment). quote_md() appends the field s
 * (NULL: nothing) for a table cell or a list item: quoted to stay one line
 * (QUOTE_KEEP_BACKSLASH; a newline shows as "\n", so a field cannot start
 * a line of its own) and '|' as "\|", so it cannot end a cell.
 * quote_md_doc() passes a whole document through quote_term() keeping
 * its lines: the rule under the fields, no byte a terminal acts on
 * reaches the file whatever a writer forgot.
 */
void quote_md(struct buf *out, const char *s);
void quote_md_doc(struct buf *md);

/* s quoted for one line (flags 0), valid until sixteen more calls; NULL is
 * shown as "". For printf arguments: printf("%s\n", quote_str(path)). */
const char *quote_str(const char *s);
/* s quoted to stay one line without doubling '\' (QUOTE_KEEP_BACKSLASH),
 * same lifetime: for a whole message warden composed around untrusted
 * parts (an error, a verify problem), safe even if a part was quoted. */
const char *quote_msg(const char *s);
/* Free what quote_str() and quote_msg() hold (at exit). */
void quote_release(void);

/* How many bytes at the end of s[0..len) may be the start of a UTF-8
 * sequence whose rest has not arrived yet (0..3): a stream cut into
 * writes keeps them for the next write. */
size_t quote_pending_tail(const char *s, size_t len);

#endif
