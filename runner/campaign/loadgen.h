/*
 * loadgen.h - the load generator: one sweep of streamed chat completions
 * against one server at one concurrency level.
 *
 * Worker threads, each with its own connections (plain HTTP/1.1, kept
 * alive: loadgen-conn.c, http1.c) and share of the concurrency (see
 * loadgen_workers_for()), and a closed loop: exactly `concurrency` requests are in
 * flight until the list runs out (fewer only at the tail). Requests are
 * claimed in the order given, from one list all workers share; on_record
 * and on_tick are called only from the thread that called loadgen_run().
 * Warmup requests run first, at min(concurrency, nwarmups) in flight, and
 * all of them end before the first timed request is submitted; they are
 * reported to on_record (warmup = 1) but never counted in the summary. The
 * caller draws them from prompts outside the timed set.
 *
 * Timing follows DESIGN.md "Measurements": CLOCK_MONOTONIC nanoseconds,
 * one per read from the socket before any parsing - the kernel's receive
 * stamp of the read's last packet where the platform gives one
 * (SO_TIMESTAMPNS; WARDEN_LOADGEN_KERNEL_STAMPS=0: never), else the clock
 * read as recvmsg(2) returns; every SSE event completed in that read
 * carries that time. TTFT runs from the moment a request is handed to its
 * connection to the first
 * token event (non-empty content, reasoning_content/reasoning, or a
 * tool_calls delta); end-to-end latency ends at the last token event.
 *
 * This module never prints, never touches the store, and never starts or
 * stops a server: the caller does that from on_record and on_tick.
 */
#ifndef WARDEN_LOADGEN_H
#define WARDEN_LOADGEN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

/* Outcome class of one request (DESIGN.md). Names are stable: they are
 * stored in sqlite and printed; see loadgen_outcome_name(). */
enum loadgen_outcome {
	LOADGEN_OK = 0,		/* "ok": 200, stream ended well, output seen */
	LOADGEN_HTTP_STATUS,	/* "http_status": status other than 200 */
	LOADGEN_TIMEOUT,	/* "timeout": request timeout, hang, deadline */
	LOADGEN_CONNECT,	/* "connect": could not connect / send */
	LOADGEN_STREAM_ERROR,	/* "stream_error": error event or object,
				   transport failure mid-stream, or a stream
				   that ended with neither [DONE] nor a
				   finish_reason */
	LOADGEN_MALFORMED,	/* "malformed": a data: chunk that is not a
				   chat.completion.chunk JSON object */
	LOADGEN_EMPTY,		/* "empty": well-formed, but no token event */
	LOADGEN_SERVER_CRASH,	/* "server_crash": in flight when on_tick
				   reported the server gone */
	LOADGEN_OVERSIZED,	/* "oversized": an SSE event (or a line)
				   passed max_event_bytes; the transfer was
				   cut and its buffers freed at once */
	LOADGEN_OVERLONG,	/* "overlong": more token events than the
				   request's max_tokens allows, or more
				   bytes (loadgen_token_bound(),
				   loadgen_answer_bound()); the transfer
				   was cut */
	LOADGEN_OUTCOME_COUNT
};

/* How a sweep ended. */
enum loadgen_end {
	LOADGEN_END_COMPLETE = 0,	/* "complete": every request ran */
	LOADGEN_END_HANG,		/* "hang": no byte for hang_s seconds,
					   or on_tick returned LOADGEN_TICK_HANG */
	LOADGEN_END_DEADLINE,		/* "deadline": deadline_ns passed */
	LOADGEN_END_SERVER_CRASH,	/* "server_crash": on_tick said so */
	LOADGEN_END_STOPPED,		/* "stopped": on_tick asked to stop
					   (warden was interrupted) */
	LOADGEN_END_COUNT
};

/* Where the output token count of a request came from. */
enum loadgen_usage_source {
	LOADGEN_USAGE_NONE = 0,		/* "none": request produced nothing */
	LOADGEN_USAGE_SERVER,		/* "server": the usage object */
	LOADGEN_USAGE_STREAMED,		/* "streamed": count of token events */
};

/* One request body: the JSON text POSTed as is (the caller sets "stream":
 * true and "stream_options": {"include_usage": true}). Not copied: it must
 * outlive loadgen_run(). max_tokens is the body's own (0: it names none),
 * from which the request's bounds follow. */
struct loadgen_body {
	const char *data;
	size_t len;
	long max_tokens;
};

/*
 * The bounds on one answer, so that what an engine sends never grows
 * warden's memory or time past them (README, "Bounds on what an engine
 * sends"). Token events: max(2 * max_tokens, max_tokens + 64), at most
 * LOADGEN_TOKEN_EVENTS_MAX (also the bound when max_tokens is 0): an
 * engine sends one event per token, fewer when it joins tokens, and the
 * slack covers tool-call deltas and engines that split a token's text.
 * Bytes read for the answer (head, framing and body): max_event_bytes
 * plus LOADGEN_BYTES_PER_EVENT for each token event allowed. Past either
 * the transfer is cut and the request is `overlong`. The per-token times
 * kept (record->token_ns, and the gaps the store keeps as itl_ns) are
 * bounded by the token events.
 */
#define LOADGEN_TOKEN_EVENTS_MAX	((size_t)1 << 18)
#define LOADGEN_BYTES_PER_EVENT		((size_t)4096)
size_t loadgen_token_bound(long max_tokens);
uint64_t loadgen_answer_bound(long max_tokens, size_t max_event_bytes);

/*
 * The record of one request, handed to on_record the moment the request
 * ends (so the caller can write it to sqlite right then). Everything in it,
 * strings and token_ns included, is valid only during that call.
 * Times are CLOCK_MONOTONIC ns (mono_ns()); 0 means "did not happen".
 * Convert to wall time with anchor_*: wall = anchor_realtime_ns +
 * (t - anchor_mono_ns).
 */
struct loadgen_record {
	size_t index;			/* position in bodies[] (or warmups[]) */
	int warmup;			/* 1: a warmup request, not measured */
	uint64_t submit_ns;		/* handed to its connection */
	uint64_t first_token_ns;	/* first token event */
	uint64_t last_token_ns;		/* last token event */
	uint64_t end_ns;		/* transfer ended (after [DONE]/usage) */
	uint64_t anchor_mono_ns;	/* the run's clock anchor */
	int64_t anchor_realtime_ns;	/* CLOCK_REALTIME at anchor_mono_ns */
	size_t chunks;			/* data: events, [DONE] not counted */
	size_t token_events;		/* chunks that were token events */
	size_t coalesced_events;	/* token events that arrived in one
					   read together with another: same
					   event-loop pass, same request */
	size_t max_events_per_read;	/* most token events in one pass */
	long prompt_tokens;		/* usage.prompt_tokens, -1 if absent */
	long completion_tokens;		/* usage, or token_events if absent */
	enum loadgen_usage_source usage_source;
	size_t content_bytes;		/* decoded UTF-8 bytes of content */
	size_t reasoning_bytes;		/* of reasoning_content / reasoning */
	size_t tool_calls;		/* distinct tool calls in the answer */
	const char *finish_reason;	/* NULL if none was sent */
	long http_status;		/* 0 if no response */
	enum loadgen_outcome outcome;
	const char *error;		/* NULL when outcome is LOADGEN_OK */
	const uint64_t *token_ns;	/* time of each token event */
	size_t ntoken_ns;		/* == token_events */
	/* From submission until the TCP connection was made (0 on a
	 * connection already open), so a TTFT splits into connect and wait;
	 * 0 when it never connected. */
	uint64_t connect_ns;
	int new_connection;		/* 1: this request opened its connection;
					   0: reused */
	/* Connection-level retries: times the request was sent again
	 * on a fresh connection because the kept-alive connection it had
	 * reused was closed by the server before any byte of an answer
	 * (see loadgen_run()). Not an outcome: the outcome is that of the
	 * last attempt. */
	unsigned retries;
	/* The answer's content text (delta.content joined), when the
	 * config asked for it with keep_content; else NULL. At most
	 * keep_content bytes; may end inside a UTF-8 character. */
	const char *content;
	size_t content_len;
};

/* What on_tick sees, about every tick_ms. */
struct loadgen_progress {
	uint64_t now_ns;
	uint64_t start_ns;		/* first timed submission, 0 in warmup */
	uint64_t last_byte_ns;		/* last byte from any request (or last
					   submission, whichever is later) */
	int warming_up;
	size_t in_flight;
	size_t done;			/* timed requests ended */
	size_t ok;			/* of which succeeded */
	size_t total;			/* nbodies */
	uint64_t output_tokens;		/* of successful timed requests */
};

/* What on_tick returns. */
enum loadgen_tick_action {
	LOADGEN_TICK_CONTINUE = 0,
	LOADGEN_TICK_SERVER_CRASH,	/* in-flight requests become
					   server_crash; sweep ends */
	LOADGEN_TICK_HANG,		/* in-flight requests become timeout
					   ("hang"); sweep ends */
	LOADGEN_TICK_STOP,		/* in-flight requests become timeout
					   ("stopped"); sweep ends as
					   LOADGEN_END_STOPPED */
};

struct loadgen_config {
	const char *url;		/* e.g. http://127.0.0.1:PORT/v1/chat/completions */
	const char *const *headers;	/* extra "Name: value" lines, NULL-
					   terminated; may be NULL */
	/* When set, every request carries "X-Request-Id: <prefix><index>"
	 * (warmups "<prefix>w<index>"), so an engine's own log and trace
	 * can be joined with the records. */
	const char *request_id_prefix;
	const struct loadgen_body *bodies;	/* the timed requests, in order */
	size_t nbodies;
	const struct loadgen_body *warmups;	/* may be NULL */
	size_t nwarmups;
	/*
	 * When set, after the warmups and before the first timed request,
	 * `concurrency` GETs of this URL (the server's health path) run at
	 * once, so `concurrency` connections are open in the pool when the
	 * timed loop starts and no timed request pays for a TCP connect.
	 * A GET that fails is not an error: a timed request that finds no
	 * open connection opens one, and its record says so.
	 */
	const char *preconnect_url;
	unsigned concurrency;		/* >= 1 */
	/* Worker threads; 0: the environment's WARDEN_LOADGEN_WORKERS if
	 * set, else loadgen_workers_for(concurrency, loadgen_cpus()).
	 * Never more than concurrency. */
	unsigned workers;
	uint64_t request_timeout_ns;	/* 0: 300 s */
	uint64_t deadline_ns;		/* absolute mono_ns() end of the sweep
					   (the engine wall cap); 0: none.
					   In-flight requests become timeout */
	uint64_t hang_ns;		/* no byte from any request for this
					   long: sweep ends as hang; 0: none */
	size_t max_event_bytes;		/* bytes one SSE event may hold; 0:
					   SSE_MAX_EVENT_DEFAULT (8 MiB) */
	unsigned tick_ms;		/* 0: 100 */
	/* Run the loop with real-time scheduling where permitted (see
	 * rtsched.h), so its timestamps do not wait for a busy core. */
	int raise_priority;
	/* Wait with poll(2) even where epoll exists (the tests use it to
	 * keep the portable path exercised). */
	int portable_wait;
	/* Keep up to this many bytes of each answer's content text for
	 * on_record (the fidelity task reads the label); 0: keep none. */
	size_t keep_content;
	/*
	 * Called about every tick_ms. After a connect or transport failure
	 * (refused, reset, nothing received) no new request is submitted and
	 * the failed records are held back until the next tick confirms the
	 * server is alive (returns CONTINUE), so a crash turns them into
	 * server_crash rather than a burst of connect failures. May be NULL
	 * (then the server is always taken as alive).
	 */
	enum loadgen_tick_action (*on_tick)(void *arg,
	    const struct loadgen_progress *progress);
	/* Called once per request as it ends, warmups included. May be NULL. */
	void (*on_record)(void *arg, const struct loadgen_record *record);
	void *arg;
};

/* Mean, median, std (population), p90, p99 of n samples, in ms; all 0
 * when n is 0. Percentiles: see stats.h (linear, Hyndman-Fan type 7). */
struct loadgen_stat {
	size_t n;
	double mean, median, std, p90, p99;
};

/*
 * One sweep. Field names follow `vllm bench serve`'s result JSON where the
 * meaning is the same; loadgen_summary_to_json() spells them out. Only
 * timed (non-warmup) requests count.
 */
struct loadgen_summary {
	enum loadgen_end end;
	unsigned max_concurrency;	/* the configured c */
	size_t max_in_flight;		/* most requests seen in flight */
	size_t num_prompts;		/* nbodies */
	size_t submitted;
	size_t completed;		/* outcome ok */
	size_t failed;			/* submitted, not ok */
	size_t not_started;		/* never submitted (sweep ended early) */
	size_t failed_by_outcome[LOADGEN_OUTCOME_COUNT];
	size_t warmups_ok, warmups_failed;
	size_t preconnected;		/* connections opened before the timed
					   loop (preconnect GETs that ended
					   well) */
	size_t new_connections;		/* timed requests that opened one */
	size_t connection_retries;	/* sum of the records' retries,
					   warmups included */
	int connection_reuse_stopped;	/* 1: a retry made the sweep stop
					   reusing connections */
	/* connect_ms of the timed requests that opened a connection: the
	 * part of their TTFT spent connecting, reported beside TTFT */
	struct loadgen_stat connect;
	uint64_t total_input_tokens;	/* usage prompt tokens, ok requests */
	uint64_t total_output_tokens;	/* completion tokens, ok requests */
	size_t usage_server;		/* ok requests with usage_source server */
	size_t usage_streamed;		/* ... and streamed */
	double duration;		/* s: first submission to last end */
	double request_throughput;	/* completed / duration */
	double output_throughput;	/* total_output_tokens / duration */
	double total_token_throughput;	/* (input + output) / duration */
	struct loadgen_stat ttft;	/* ms, ok requests */
	/* TPOT, as vllm names it: per request (last - first token) /
	 * (output tokens - 1), ok requests with >= 2 tokens. */
	struct loadgen_stat tpot;
	/* ITL, as vllm names it: every gap between successive token events
	 * of ok requests (0 between events that arrived in one read). */
	struct loadgen_stat itl;
	struct loadgen_stat e2el;	/* ms, submit to last token, ok */
	uint64_t token_events;		/* all timed requests */
	uint64_t coalesced_events;	/* of which shared a read */
	uint64_t chunks;
	uint64_t reads;			/* recv(2) calls that brought bytes */
	uint64_t bytes;			/* response body bytes received */
	/* reads timed by the kernel's receive stamp of their last packet
	 * (SO_TIMESTAMPNS) rather than by the clock read after recv(2)
	 * returned; == reads when the platform gives stamps */
	uint64_t kernel_stamped_reads;
	/* Self-check: client_limited when loop_lag p99 > 1 ms or the
	 * busiest worker's CPU > 85 % of one core over the sweep. */
	unsigned client_workers;	/* worker threads that ran */
	double client_cpu_s;		/* user + system, all workers */
	double client_cpu_fraction;	/* the busiest worker's CPU / duration */
	double loop_lag_p99_ms;		/* time a loop spent on work between
					   two waits, p99 over the iterations
					   of all workers */
	int client_limited;
	const char *client_scheduling;	/* rtsched_raise()'s answer, static */
	const char *event_wait;		/* "epoll" or "poll", static */
	/* Clocks: one anchor per run; drift = |Δrealtime/Δmono - 1| over
	 * the run, flagged above 0.1 % (only for runs of 1 s or more). */
	uint64_t anchor_mono_ns;
	int64_t anchor_realtime_ns;
	double clock_drift;
	int clock_drift_warning;
};

/*
 * Streams one worker thread is meant to carry: a worker spends a few
 * microseconds on each event, so at one event per stream per engine step
 * 128 streams keep its work on a step under a millisecond.
 */
#define LOADGEN_STREAMS_PER_WORKER	128

/* The workers a sweep at this concurrency gets on this many CPUs:
 * ceil(concurrency / LOADGEN_STREAMS_PER_WORKER), at most cpus, at
 * least 1. */
unsigned loadgen_workers_for(unsigned concurrency, unsigned cpus);
/* The CPUs the process may run on (its affinity mask where there is one,
 * as taskset sets it; else the online CPUs). */
unsigned loadgen_cpus(void);

/*
 * Run one sweep. Returns an error only when the sweep could not run at all
 * (bad config: a url that is not plain http://, or whose host does not
 * resolve); every request failure is a record with an outcome class.
 * summary is always filled when NULL is returned.
 *
 * Connections: a request is sent again (a connection-level retry, counted
 * in record->retries) only as libcurl would: the connection it reused from
 * the pool was
 * closed by the server before any byte of an answer arrived, as servers
 * do with a kept-alive connection they will never read from again
 * (llama-server closes every connection after a stream while announcing
 * Keep-Alive; others at the end of their keep-alive timeout). It gives up
 * after 5 such retries of one request, as libcurl does. An idle
 * connection the server closes is noticed while it waits in the pool and
 * never reused. After the first retry
 * each later request opens a connection of its own and closes it after,
 * so none is put on a connection the server is closing, and none is
 * retried; its connect time is in connect_ns. A connection opened for
 * the request and closed before any byte is the engine's failure, never
 * retried.
 */
struct werr *loadgen_run(const struct loadgen_config *config,
    struct loadgen_summary *summary);

/* The summary as a JSON object (vllm names plus warden's own); the caller
 * owns *out (json_decref). */
struct werr *loadgen_summary_to_json(const struct loadgen_summary *summary,
    json_t **out);

/* Stable names: "ok", "http_status", ..., "overlong"; "complete", "hang", ...;
 * "none", "server", "streamed". */
const char *loadgen_outcome_name(enum loadgen_outcome outcome);
const char *loadgen_end_name(enum loadgen_end end);
const char *loadgen_usage_source_name(enum loadgen_usage_source source);

#endif
