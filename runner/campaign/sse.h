/*
 * sse.h - server-sent events: an incremental parser, and a classifier of
 * OpenAI chat-completions chunks.
 *
 * The parser follows the WHATWG event-stream rules (lines end in \r\n, \n
 * or \r; ':' starts a comment; "data:" with or without one space; several
 * data lines join with '\n'; a blank line dispatches) and is correct
 * whatever the chunk boundaries: bytes are fed as they arrive and an event
 * comes out once its blank line is seen. Bytes are never interpreted as
 * text, so a UTF-8 character split across reads is simply carried over.
 *
 * The classifier scans a data payload's bytes without building a JSON tree
 * (the hot path: most chunks are plain token deltas; a plain finish
 * reason and usage object are read too) and hands to jansson only what
 * needs it: errors, tool calls, escaped or odd finish reasons and usage
 * counts, and anything the scanner cannot decide. Both paths must agree; the unit test
 * checks them against each other on every fixture event.
 *
 * An event is bounded: a line longer than max_event bytes, or an event
 * whose data and type together pass max_event, is never held (the parser
 * holds at most about twice max_event). Past the bound it frees what it
 * holds and gives the stream up
 * (SSE_OVERSIZED), so an engine that sends an endless line cannot make
 * warden's memory grow with it.
 *
 * Never prints; never allocates per event on the scanner path.
 */
#ifndef WARDEN_SSE_H
#define WARDEN_SSE_H

#include <stddef.h>

#include "buf.h"
#include "error.h"

/* One dispatched event. Pointers are valid only during the callback. */
struct sse_event {
	const char *type;	/* the "event:" field, or "message" */
	size_t type_len;
	const char *data;	/* data lines joined by '\n', NUL-terminated */
	size_t data_len;
};

/* Return a positive value to stop feeding; sse_parser_feed returns it. */
typedef int (*sse_event_fn)(void *arg, const struct sse_event *event);

/* What sse_parser_feed returns once an event passed max_event. */
#define SSE_OVERSIZED		(-1)
/* The bound of sse_parser_init: far above any real chat chunk. */
#define SSE_MAX_EVENT_DEFAULT	((size_t)8 << 20)

struct sse_parser {
	struct buf line;	/* a line not yet ended */
	struct buf data;	/* data of the event being built */
	struct buf type;	/* its event type */
	int have_data;		/* a data: field was seen */
	int skip_lf;		/* last byte was '\r': drop a leading '\n' */
	size_t comments;	/* comment lines seen */
	size_t events;		/* events dispatched */
	size_t max_event;	/* bytes one event may hold; 0: no bound */
	int oversized;		/* the bound was passed: stream given up */
};

void sse_parser_init(struct sse_parser *p);
void sse_parser_free(struct sse_parser *p);
/* Feed bytes; fn is called for each event completed by them. Returns 0,
 * what fn returned to stop, or SSE_OVERSIZED (then and for every later
 * feed until sse_parser_finish) when an event would pass max_event: the
 * buffers are freed at once. */
int sse_parser_feed(struct sse_parser *p, const char *bytes, size_t len,
    sse_event_fn fn, void *arg);
/* End of stream: an event without its blank line is dropped, as the spec
 * says. Returns 1 if such an unfinished event (or line) was pending. The
 * parser is ready for a new stream (oversized cleared). */
int sse_parser_finish(struct sse_parser *p);

/* What a data payload of a chat-completions stream is. */
enum sse_chunk_kind {
	SSE_CHUNK_UNDECIDED = 0,	/* scanner only: ask jansson */
	SSE_CHUNK_TOKEN,		/* non-empty content, reasoning, or a
					   tool_calls delta: a token event */
	SSE_CHUNK_EMPTY,		/* role-only, empty or null content,
					   choices: [] without usage */
	SSE_CHUNK_USAGE,		/* choices: [] with a usage object */
	SSE_CHUNK_ERROR,		/* an error object */
	SSE_CHUNK_DONE,			/* the [DONE] sentinel */
	SSE_CHUNK_MALFORMED,		/* not a JSON object, or bad shape */
};

/* Why the scanner wants jansson (bits of sse_chunk.needs_json). */
#define SSE_NEED_USAGE		0x01
#define SSE_NEED_ERROR		0x02
#define SSE_NEED_TOOL_CALLS	0x04
#define SSE_NEED_FINISH		0x08
#define SSE_NEED_UNDECIDED	0x10

struct sse_chunk {
	enum sse_chunk_kind kind;
	unsigned needs_json;		/* scanner: SSE_NEED_* */
	size_t content_bytes;		/* decoded UTF-8 bytes */
	size_t reasoning_bytes;
	size_t tool_call_deltas;	/* entries in delta.tool_calls */
	long tool_call_max_index;	/* largest tool_calls[].index, -1 */
	size_t tool_call_ids;		/* entries carrying an "id" */
	int has_usage;
	long prompt_tokens;		/* -1 if absent */
	long completion_tokens;		/* -1 if absent */
	char *finish_reason;		/* jansson path; NULL if none */
	char *error;			/* error message; NULL if none */
};

void sse_chunk_init(struct sse_chunk *c);
/* Is this payload the [DONE] sentinel? */
int sse_chunk_is_done(const char *data, size_t len);
/* Free the strings and reset to init state. */
void sse_chunk_clear(struct sse_chunk *c);

/* The byte scanner. Decides TOKEN, EMPTY or DONE for plain chunks with
 * needs_json 0; anything else sets needs_json (and maybe kind UNDECIDED). */
void sse_chunk_scan(const char *data, size_t len, struct sse_chunk *out);
/* The full jansson parse; fills every field. */
void sse_chunk_parse_json(const char *data, size_t len, struct sse_chunk *out);
/* Scan, then parse with jansson only if the scanner asks for it. */
void sse_chunk_classify(const char *data, size_t len, struct sse_chunk *out);

/*
 * The same decisions as sse_chunk_classify, faster on a stream whose
 * token chunks differ only in their content string: the cache keeps the
 * bytes around that string from the last plain token chunk (see
 * sse-cache.c). One cache per stream (or per connection; a mismatch only
 * costs a full scan). Allocates when it keeps new bytes, not per event.
 */
struct sse_chunk_cache {
	struct buf prefix;	/* up to the content string's opening quote */
	struct buf suffix;	/* from its closing quote */
	int valid;
	size_t hits;		/* chunks decided by the cache */
};

void sse_chunk_cache_init(struct sse_chunk_cache *k);
void sse_chunk_cache_free(struct sse_chunk_cache *k);
void sse_chunk_classify_cached(struct sse_chunk_cache *k, const char *data,
    size_t len, struct sse_chunk *out);

const char *sse_chunk_kind_name(enum sse_chunk_kind kind);

/*
 * Append the decoded `delta.content` strings of a chunk's choices to out,
 * up to max bytes in out (the rest is dropped). jansson path; for callers
 * that need the answer's text (the fidelity task), never the hot path.
 */
void sse_chunk_content_text(const char *data, size_t len, struct buf *out,
    size_t max);

#endif
