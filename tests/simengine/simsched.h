/*
 * simsched.h - the serving model of warden-simengine: when each request gets
 * its tokens, and how much KV memory the engine holds.
 *
 * A pure state machine over a caller-supplied clock (nanoseconds): it never
 * reads the time, sleeps, allocates memory for KV or knows about HTTP, so
 * unit tests drive it with virtual time and get exact answers. The engine
 * runs exactly one step at a time (a prefill, a decode, or both mixed);
 * a step's effects (tokens, completions) land at its end.
 *
 *   serial      one request at a time: prefill it, decode it to the end
 *   padded      a static batch of up to max_batch waiting requests; the
 *               batch's prefill costs batch size x the longest prompt and
 *               every KV is sized to the padded length; newcomers wait
 *               until the whole batch has finished. An idle engine waits
 *               batch_window_ns after the first arrival to fill a batch
 *   continuous  every step admits waiting requests into free slots: their
 *               packed prefill (sum of prompts) runs in the same step as
 *               one decode token for everyone already decoding
 *
 * Decode steps last itl * (1 + itl_growth * (n - 1)) for n requests
 * decoding together. A prefill step produces a request's first token.
 */
#ifndef SIM_SIMSCHED_H
#define SIM_SIMSCHED_H

#include <stddef.h>
#include <stdint.h>

#define SIMSCHED_IDLE UINT64_MAX

enum simsched_mode {
	SIMSCHED_SERIAL,
	SIMSCHED_PADDED,
	SIMSCHED_CONTINUOUS,
};

enum simsched_mem_policy {
	SIMSCHED_MEM_UNBOUNDED,	/* allocate as needed, give back at the end */
	SIMSCHED_MEM_BOUNDED,	/* cap: requests queue while the cap is full */
	SIMSCHED_MEM_RETAIN,	/* never give memory back (allocator cache) */
};

enum simsched_state {
	SIMSCHED_REQ_NEW,
	SIMSCHED_REQ_WAITING,
	SIMSCHED_REQ_ACTIVE,
	SIMSCHED_REQ_DONE,
};

struct simsched_params {
	enum simsched_mode mode;
	double prefill_rate;		/* prompt tokens per second; 0 = free */
	uint64_t itl_ns;		/* decode step time for one request */
	double itl_growth;		/* extra fraction per extra decoder */
	int max_batch;			/* slots (>= 1) */
	uint64_t batch_window_ns;	/* padded: wait this long after the
					 * first arrival to fill a batch */
	uint64_t kv_bytes_per_token;
	enum simsched_mem_policy mem_policy;
	uint64_t kv_cap_bytes;		/* for SIMSCHED_MEM_BOUNDED */
};

/* One request, owned and embedded by the caller. */
struct simsched_req {
	int prompt_tokens;
	int target_tokens;		/* tokens to generate (may be 0) */
	/* Output, read by the caller: */
	enum simsched_state state;
	int tokens_ready;
	uint64_t submit_ns;
	uint64_t admit_ns;
	uint64_t first_token_ns;	/* 0 until the first token */
	uint64_t done_ns;
	/* Private: */
	int prefilled;
	int kv_base;			/* prompt or padded prompt length */
	struct simsched_req *next;		/* waiting queue */
};

struct simsched {
	struct simsched_params p;
	struct simsched_req *head, *tail;	/* waiting, FIFO */
	struct simsched_req **active;	/* max_batch slots */
	int nactive;
	int in_step;
	int step_changed;		/* a step ended in the last advance */
	uint64_t clock;			/* end of the last step */
	uint64_t step_end;
	uint64_t kv_used;		/* bytes held by active requests */
	uint64_t kv_reserved;		/* bytes they may grow to */
	uint64_t kv_peak;
	uint64_t steps;
};

void simsched_init(struct simsched *s, const struct simsched_params *p);
void simsched_free(struct simsched *s);
/* Queue r at time now (now must not go backwards between calls). */
void simsched_submit(struct simsched *s, struct simsched_req *r, uint64_t now);
/* Drop r wherever it is (the client went away); frees its KV. */
void simsched_cancel(struct simsched *s, struct simsched_req *r);
/*
 * Run every step that ends at or before now and start the next one.
 * Returns the time of the next step end, or SIMSCHED_IDLE when there is
 * nothing to do until another submit.
 */
uint64_t simsched_advance(struct simsched *s, uint64_t now);
/* Decode step duration with n requests decoding together. */
uint64_t simsched_itl_ns(const struct simsched_params *p, int n);
/* Prefill duration for that many prompt tokens. */
uint64_t simsched_prefill_ns(const struct simsched_params *p, uint64_t tokens);
/* KV bytes the process holds now (the retain policy keeps the peak). */
uint64_t simsched_kv_resident(const struct simsched *s);
/* Requests waiting for a slot. */
int simsched_waiting(const struct simsched *s);

#endif
