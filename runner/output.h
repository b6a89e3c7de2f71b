/*
 * output.h - how commands print: JSON documents for --json, and progress
 * lines (a live line on a terminal, one plain line per step otherwise).
 * Diagnostics always go to stderr; stdout carries only the result.
 */
#ifndef WARDEN_OUTPUT_H
#define WARDEN_OUTPUT_H

#include <jansson.h>

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
/* End a live line still drawn (before an error is printed under it). */
void output_progress_end(void);

#endif
