/*
 * simstream.h - the bytes warden-simengine sends for one completion: the
 * SSE stream (with every wire-format variation and mid-stream fault) and
 * the non-streaming JSON body.
 *
 * A stream is a pull state machine: the server asks for the next piece,
 * telling it how many tokens the scheduler has made so far; the stream
 * answers with bytes, "wait", "stall", "reset" or "end". It never reads
 * the clock, sleeps or touches a socket, so unit tests replay it exactly.
 */
#ifndef SIM_SIMSTREAM_H
#define SIM_SIMSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "textgen.h"

enum simstream_usage {
	SIMSTREAM_USAGE_REQUEST,	/* final usage chunk if asked for */
	SIMSTREAM_USAGE_OMIT,		/* never */
	SIMSTREAM_USAGE_EVERY,		/* on every chunk, and at the end */
};

enum simstream_fault {
	SIMSTREAM_FAULT_NONE,
	SIMSTREAM_FAULT_STALL,
	SIMSTREAM_FAULT_MALFORMED,
	SIMSTREAM_FAULT_ERROR_EVENT,
	SIMSTREAM_FAULT_RESET,
};

/* How an error inside a 200 stream is written (real engines differ). */
enum simstream_error_form {
	SIMSTREAM_ERROR_EVENT,		/* event: error + data: {"error"}, end */
	SIMSTREAM_ERROR_DATA,		/* data: {"error":..}, end (llama-server) */
	SIMSTREAM_ERROR_DATA_DONE,	/* data: {"error":..}, [DONE] (vLLM) */
	SIMSTREAM_ERROR_FIELD,		/* error: {..}, [DONE] (older llama-server) */
};

struct simstream_opts {
	const char *id;			/* request id, e.g. "7" */
	const char *model;
	long long created;
	int prompt_tokens;
	int include_usage;		/* stream_options.include_usage */
	enum simstream_usage usage;
	int events_per_write;
	int keepalive_every;
	int crlf;
	int no_space;
	int random_splits;
	uint64_t split_seed;
	enum simstream_fault fault;
	int fault_after;		/* tokens sent before the fault */
	enum simstream_error_form error_form;
};

enum simstream_action {
	SIMSTREAM_DATA,			/* send *data, *len */
	SIMSTREAM_WAIT,			/* wait for more tokens */
	SIMSTREAM_STALL,		/* go silent now, then ask again */
	SIMSTREAM_RESET,		/* reset the connection */
	SIMSTREAM_END,			/* the stream is complete */
};

struct simstream {
	struct simstream_opts o;
	const struct textgen_reply *reply;
	int phase;
	int sent;			/* token events formatted */
	long events;
	int fault_done;
	struct buf pending;
	size_t off;
	size_t *marks;			/* offsets just past token events */
	int nmarks, capmarks, markpos;
	uint64_t rng;
	struct buf scratch;
};

void simstream_init(struct simstream *s, const struct simstream_opts *o,
    const struct textgen_reply *reply);
void simstream_free(struct simstream *s);
/*
 * The next piece, at most max bytes (max > 0). ready is the number of
 * tokens generated so far, gen_done whether generation has finished.
 * On SIMSTREAM_DATA, *completed is the number of token events whose last
 * byte is in this piece (stamp them with the send time).
 */
enum simstream_action simstream_next(struct simstream *s, int ready,
    int gen_done, const char **data, size_t *len, size_t max, int *completed);

/* The non-streaming chat.completion body for the reply. */
void simstream_full_body(struct buf *out, const struct simstream_opts *o,
    const struct textgen_reply *reply);
/* An OpenAI error object body. */
void simstream_error_body(struct buf *out, const char *message,
    const char *type, int code);
/* Append s as a JSON string body (no quotes) with escapes. */
void simstream_json_escape(struct buf *out, const char *s);

#endif
