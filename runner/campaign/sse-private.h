/*
 * sse-private.h - what the chunk classifier (sse-scan.c) tells its
 * skeleton cache (sse-cache.c) beyond sse.h. Nothing else includes it.
 */
#ifndef WARDEN_SSE_PRIVATE_H
#define WARDEN_SSE_PRIVATE_H

#include <stddef.h>

#include "sse.h"

/* What the scanner learnt about one chunk. */
struct sse_scan_state {
	struct sse_chunk *out;
	int seen_choices;
	int choices_empty;
	unsigned delta_seen;	/* content/reasoning keys met in this delta */
	const char *content_at;	/* the last content string's opening quote */
	const char *content_end;	/* ... and one past its closing quote */
	size_t content_strings;	/* content strings met */
	int choice_delta;	/* a delta key met in this choice */
	int choice_finish;	/* finish_reason keys met in this choice */
	int usage_seen;		/* usage keys met at the top */
	unsigned usage_keys;	/* counts met in usage: 1 prompt, 2 completion */
};

/* sse_chunk_scan(), keeping in *st what it learnt (where the content
 * strings stood). */
void sse_scan_chunk(const char *data, size_t len, struct sse_chunk *out,
    struct sse_scan_state *st);
/* Are the bytes [from, to) exactly one valid JSON string, quotes
 * included? Then *decoded is the UTF-8 length jansson would give it. */
int sse_scan_one_string(size_t *decoded, const char *from, const char *to);

#endif
