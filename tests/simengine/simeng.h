/*
 * simeng.h - the running simulated engine: the scheduler thread that
 * plays simsched.c in real time, the memory it holds, the faults each
 * request gets, and the ground-truth trace.
 *
 * Knows nothing about HTTP: server.c turns requests into sim_req and
 * asks the engine for tokens. Never prints except the trace file.
 */
#ifndef SIM_SIMENG_H
#define SIM_SIMENG_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "buf.h"
#include "error.h"
#include "simconfig.h"
#include "simmem.h"
#include "simsched.h"
#include "simstream.h"
#include "textgen.h"

struct simeng {
	const struct sim_config *cfg;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* the scheduler thread */
	pthread_cond_t progress;	/* writers waiting for tokens */
	pthread_t thread;
	int thread_started;
	int stopping;
	struct simsched sched;
	struct simmem mem;
	struct textgen_labels labels;
	int have_labels;
	char *dep_version;
	int broken;			/* the dependency version is broken */
	uint64_t ready_ns;		/* /health answers 200 from then */
	uint64_t nreq;			/* completion requests received */
	uint64_t nclose;		/* ... whose headers were seen, for
					   the close fault */
	int inflight;
	pthread_mutex_t trace_lock;
	FILE *trace;
};

struct sim_req {
	uint64_t seq;
	char id[24];
	char *request_id;		/* the client's X-Request-Id, or NULL */
	int stream;
	int status;			/* HTTP status answered */
	const char *fault;		/* injected fault, or NULL */
	int prompt_tokens;
	struct simsched_req sr;
	struct textgen_reply reply;
	struct simstream_opts so;
	struct simstream st;
	uint64_t received_ns;
	uint64_t first_token_ns;
	uint64_t done_ns;
	uint64_t *token_ns;		/* when tracing */
	int ntoken_ns;
	int submitted;
	int ended;			/* the reply was sent in full */
};

/* Set up memory, labels and versions and start the scheduler thread.
 * A broken version with --broken-mode refuse fails here (exit class 3). */
struct werr *simeng_start(struct simeng *e, const struct sim_config *cfg);
/* Wake every waiter so connections end; then join and free. */
void simeng_begin_stop(struct simeng *e);
void simeng_stop(struct simeng *e);
int simeng_ready(struct simeng *e);

/*
 * Turn a chat-completions request body into *out. On a client error or
 * an injected HTTP failure, *out is NULL, *status is set and body holds
 * an OpenAI error object. May abort the process (the abort faults).
 */
void simeng_request_new(struct simeng *e, const json_t *body,
    const char *request_id, struct sim_req **out, int *status,
    struct buf *errbody);
/*
 * The close fault (--close-rate), decided when a completion request's
 * headers arrive: 1 when its connection is to be closed before its body
 * is read or a byte is sent. Writes the request's trace line (fault
 * "closed", status 0) then.
 */
int simeng_close_fault(struct simeng *e, const char *request_id);
void simeng_submit(struct simeng *e, struct sim_req *r);
/* Block until more than `have` tokens exist, generation is done, or the
 * engine stops (returns -1). Sets *ready and *done. */
int simeng_wait(struct simeng *e, struct sim_req *r, int have, int *ready,
    int *done);
/* Stay silent for the stall fault; returns -1 if the engine stops. */
int simeng_stall(struct simeng *e);
/* Record that the tokens just handed out were sent now. */
void simeng_stamp(struct sim_req *r, int completed, uint64_t now);
/* The request is over (sent, failed, or the client left): cancel it in
 * the scheduler, write its trace line, free it. */
void simeng_request_end(struct simeng *e, struct sim_req *r);
/* Kill the process the way a crashing engine dies (SIGABRT, no core). */
void simeng_crash(void) __attribute__((noreturn));

#endif
