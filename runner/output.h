/*
 * output.h - how commands print: JSON documents for --json, and progress
 * lines (a live line on a terminal, one plain line per step otherwise).
 * Diagnostics always go to stderr; stdout carries only the result.
 *
 * While a command runs, stdout and stderr pass through the terminal guard:
 * every byte a terminal would act on (see quote.h) is shown escaped, only
 * '\n' and '\t' pass, whichever printer wrote it. The guard cannot tell a
 * line warden wrote from a newline inside a file name: a printer of one
 * untrusted field still quotes it (quote_str) so it stays on its line.
 * JSON documents bypass the guard (jansson escapes them: exact).
 */
#ifndef WARDEN_OUTPUT_H
#define WARDEN_OUTPUT_H

#include <stdio.h>

#include <jansson.h>

/* Put stdout and stderr behind the terminal guard (once, before a
 * command runs); output_guard_end() flushes and restores them. Where the C
 * library has neither fopencookie nor funopen there is no guard, and the
 * printers' own quoting is all there is. */
void output_guard_start(void);
void output_guard_end(void);
/* Print a JSON document (indented, keys in insertion order) on stdout. */
void output_json(const json_t *doc);
/* Is stderr a terminal (progress may redraw a line)? */
int output_is_tty(void);
/* The terminal's width on stderr (else $COLUMNS, else 80). */
int output_columns(void);
/* A progress line on stderr: on a terminal redrawn in place and clipped
 * to its width, printed as its own line otherwise (final != 0 always
 * ends the line). */
void output_progress(int final, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * The live line of long work ("update 1/2 llama.cpp: build"): on a
 * terminal drawn as output_progress(0, ...) is, off one printed as a line
 * when it changes, but at most once per interval. output_progress_tick()
 * (called while waiting, e.g. by spawn_run's wait hook) prints it again
 * with how long it has stood ("(5 min 30 s)"): every second on a
 * terminal, every interval off one, so a log shows long work is alive.
 * A final output_progress() ends it.
 */
void output_progress_live(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void output_progress_tick(void);
/* The interval off a terminal, in seconds (default 30; 0: a line at
 * every change, none repeated). */
void output_progress_interval(double seconds);
/* msg (an error or warning, one line) on stderr as "warden: MSG\n",
 * quoted so it stays one line: a newline or ESC from argv, a file name or
 * a library's message shows escaped. Text after msg's first line break
 * that warden wrote itself (a usage synopsis) goes in trailer, as is. */
void output_error(const char *msg, const char *trailer);
/* End a live line still drawn (before an error is printed under it). */
void output_progress_end(void);

/*
 * Text that grows with the benchmark (cells, engines, entries) fits this
 * many columns whatever the terminal, as git's and got's do: lists wrap,
 * long ones are cut with a pointer to where they are whole.
 */
#define OUTPUT_WIDTH 80

/*
 * A list after a label (output-wrap.c): items joined by sep (NULL: ", ")
 * and wrapped to OUTPUT_WIDTH, each line after the first indented as wide
 * as the label, or l.indent when set after init: a table's row as the
 * label and its last text under it (an item that does not fit after the
 * row starts on the next line); an item wider than a line breaks between
 * words. At most
 * max_lines lines (0: no bound): past them, the last line says
 * "and N more: MORE", MORE where the whole list is (a command). Items are
 * printed as given: quote what is untrusted before adding it. A line
 * ends with sep's punctuation where it breaks, counted in its width.
 * Printed on stdout, or l.fp when set after init (help on a usage error
 * goes to standard error).
 *
 *	struct output_list l;
 *	output_list_init(&l, "gate:      passed ", NULL, 4);
 *	output_list_add(&l, "%s", quote_str(name));	(for each)
 *	output_list_print(&l, "none", "warden gate");	(prints, frees)
 */
struct output_list {
	const char *label;
	const char *sep;
	size_t max_lines;
	size_t indent;		/* of the lines after the first */
	FILE *fp;		/* where it is printed */
	char **item;
	size_t n, cap;
};
void output_list_init(struct output_list *l, const char *label,
    const char *sep, size_t max_lines);
void output_list_add(struct output_list *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print the list on l->fp (none after the label when it is empty, NULL:
 * nothing) and free its items; returns the lines printed. */
size_t output_list_print(struct output_list *l, const char *none,
    const char *more);

/* One line of prose within OUTPUT_WIDTH (output-wrap.c): its leading
 * blanks kept, the rest wrapped between words, each further line
 * indented hang columns more than the first. Quote what is untrusted. */
void output_line(size_t hang, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Long output through a pager, git's way (output-pager.c): only when
 * stdout is a terminal; the program is $WARDEN_PAGER, else $PAGER, else
 * "less", with LESS=FRX when LESS is unset (quit if one screen, raw
 * colour, no clearing); an empty value or "cat" is none. Standard error
 * goes to it too when it is a terminal. A pager that cannot be started is
 * no pager. output_pager_end() (main, before exit) closes its input and
 * waits for it; a signal does the same before it ends warden.
 */
void output_pager_start(void);
void output_pager_end(void);

#endif
