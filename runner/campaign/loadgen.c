/*
 * loadgen.c - the closed-loop load generator. See loadgen.h.
 *
 * One worker's loop; loadgen-workers.c starts the workers, one thread
 * each, and coordinates them. The loop waits on the worker's sockets
 * through sockwait.h (epoll on Linux, poll(2) elsewhere), hands each
 * ready one to its connection (loadgen-conn.c: HTTP/1.1, kept alive),
 * ends the requests whose deadline passed, and submits the next requests
 * so exactly the worker's share of `concurrency` stays in flight. Each
 * slot owns one SSE parser; the connection reads the clock the moment a
 * read returns, then the request parses (loadgen-req.c). Each ended request is folded into the worker's tally
 * and handed to the coordinator; the summary maths and its JSON, after
 * the loop, are in loadgen-summary.c.
 *
 * Must never print, never block anywhere but in sockwait_wait() (and the
 * barrier between phases), never touch another worker's state, and never
 * let a request's failure end the sweep: only hang, deadline and on_tick
 * do.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "loadgen-private.h"
#include "rtsched.h"
#include "sockwait.h"
#include "sse.h"
#include "stats.h"
#include "util.h"

/* ---- submitting and ending requests ---- */

static void lg_deliver(struct lg *, struct lg_req *);
static void lg_pass(struct lg *);

/* Claim the next request of the list being run: the workers share the
 * lists, so requests go out in the given order across all of them. */
static int
lg_claim(struct lg *lg, size_t *index)
{
	_Atomic size_t *next = lg->warming_up ? &lg->shared->next_warmup :
	    &lg->shared->next_body;

	if (lg->exhausted)
		return 0;
	if ((*index = atomic_fetch_add_explicit(next, 1,
	    memory_order_relaxed)) < lg->nlist)
		return 1;
	lg->exhausted = 1;
	return 0;
}

static struct lg_req *
lg_free_slot(struct lg *lg)
{
	size_t i;

	for (i = 0; i < lg->nreqs; i++)
		if (lg->reqs[i].state == REQ_FREE)
			return &lg->reqs[i];
	return NULL;
}

static void
lg_submit(struct lg *lg)
{
	struct lg_req *r;
	const struct loadgen_body *b;
	size_t index;

	while (!lg->stopping && lg->held == 0 && !lg->exhausted &&
	    lg->in_flight < lg->limit && (r = lg_free_slot(lg)) != NULL &&
	    lg_claim(lg, &index)) {
		b = &lg->list[index];
		req_reset(r);
		r->index = index;
		r->warmup = lg->warming_up;
		r->body = b;
		r->max_events = loadgen_token_bound(b->max_tokens);
		r->max_bytes = loadgen_answer_bound(b->max_tokens,
		    lg->cfg->max_event_bytes);
		r->state = REQ_ACTIVE;
		lg->in_flight++;
		if (lg->in_flight > lg->tally.sum->max_in_flight && !r->warmup)
			lg->tally.sum->max_in_flight = lg->in_flight;
		r->submit_ns = mono_ns();
		if (!r->warmup && lg->tally.start_ns == 0)
			lg->tally.start_ns = r->submit_ns;
		if (r->submit_ns > lg->last_byte_ns)
			lg->last_byte_ns = r->submit_ns;
		if (!r->warmup)
			lg->tally.sum->submitted++;
		lg_conn_start(lg, r);
	}
}

static void
lg_deliver(struct lg *lg, struct lg_req *r)
{
	struct loadgen_record rec;

	req_record(r, &rec);
	lg_tally_record(&lg->tally, &rec);
	lg_handoff_record(lg, &rec);
	if (r->state == REQ_HELD)
		lg->held--;
	r->state = REQ_FREE;
}

/* A transfer ended: deliver the request's record, or hold it. */
void
lg_finish(struct lg *lg, struct lg_req *r, enum lg_xfer how, const char *why)
{
	int transport;

	r->end_ns = mono_ns();
	lg->in_flight--;
	transport = req_classify(r, how, why);
	if (transport && lg->cfg->on_tick != NULL) {
		if (lg->held == 0)
			lg->held_ns = r->end_ns;
		r->state = REQ_HELD;
		lg->held++;
		return;
	}
	lg_deliver(lg, r);
}

/* End every request still in flight (or held) as outcome. */
static void
lg_abort(struct lg *lg, enum loadgen_end end, enum loadgen_outcome outcome,
    const char *why)
{
	struct lg_req *r;
	size_t i;

	lg->stopping = 1;
	lg->end = end;
	for (i = 0; i < lg->nreqs; i++) {
		r = &lg->reqs[i];
		if (r->state == REQ_FREE)
			continue;
		if (r->state == REQ_ACTIVE) {
			r->end_ns = mono_ns();
			lg_conn_cancel(lg, r);
			lg->in_flight--;
			sse_parser_finish(&r->parser);
			req_close_pass(r);
			r->outcome = LOADGEN_OK;
			req_fail(r, outcome, why, NULL, 0);
		} else if (outcome == LOADGEN_SERVER_CRASH) {
			r->outcome = LOADGEN_OK;
			req_fail(r, outcome, why, NULL, 0);
		}
		lg_deliver(lg, r);
	}
}

/* ---- the event loop ---- */

/* The coordinator's verdict (loadgen-workers.c), looked at every pass:
 * end the sweep as on_tick or the silence said, or deliver the held
 * records once an on_tick begun after them found the server alive. */
static void
lg_tick(struct lg *lg)
{
	struct lg_shared *sh = lg->shared;
	size_t i;

	switch (atomic_load_explicit(&sh->verdict, memory_order_acquire)) {
	case LG_VERDICT_SERVER_CRASH:
		lg_abort(lg, LOADGEN_END_SERVER_CRASH, LOADGEN_SERVER_CRASH,
		    "the server exited");
		return;
	case LG_VERDICT_STOP:
		lg_abort(lg, LOADGEN_END_STOPPED, LOADGEN_TIMEOUT,
		    "stopped: warden was interrupted");
		return;
	case LG_VERDICT_HANG:
		lg_abort(lg, LOADGEN_END_HANG, LOADGEN_TIMEOUT,
		    "hang: the server went silent");
		return;
	case LG_VERDICT_SILENT:
		lg_abort(lg, LOADGEN_END_HANG, LOADGEN_TIMEOUT,
		    "hang: no byte from any request");
		return;
	default:
		break;
	}
	if (lg->held == 0 || atomic_load_explicit(&sh->tick_ok_ns,
	    memory_order_acquire) <= lg->held_ns)
		return;
	for (i = 0; i < lg->nreqs && lg->held > 0; i++)
		if (lg->reqs[i].state == REQ_HELD)
			lg_deliver(lg, &lg->reqs[i]);
}

/* The checks made once per loop iteration. */
static void
lg_checks(struct lg *lg, uint64_t now)
{
	const struct loadgen_config *cfg = lg->cfg;

	if (cfg->deadline_ns != 0 && now >= cfg->deadline_ns) {
		lg_abort(lg, LOADGEN_END_DEADLINE, LOADGEN_TIMEOUT,
		    "the sweep deadline (engine wall cap) passed");
		return;
	}
	if (now >= lg->next_tick_ns)
		lg->next_tick_ns = now + lg->tick_ns;
	lg_tick(lg);
}

static int
lg_wait_ms(struct lg *lg, uint64_t now)
{
	uint64_t until = lg->next_tick_ns;

	if (lg->timer_at != 0 && lg->timer_at < until)
		until = lg->timer_at;
	if (lg->cfg->deadline_ns != 0 && lg->cfg->deadline_ns < until)
		until = lg->cfg->deadline_ns;
	if (until <= now)
		return 0;
	return (int)((until - now + 999999) / 1000000);
}

/* What the coordinator reads of this worker. */
static void
lg_publish(struct lg *lg)
{
	atomic_store_explicit(&lg->pub_last_byte_ns, lg->last_byte_ns,
	    memory_order_relaxed);
	atomic_store_explicit(&lg->pub_start_ns, lg->tally.start_ns,
	    memory_order_relaxed);
	atomic_store_explicit(&lg->pub_in_flight, lg->in_flight,
	    memory_order_relaxed);
}

/* One pass: wait, hand the ready sockets to their connections, end the
 * requests past their deadline, submit. */
static void
lg_pass(struct lg *lg)
{
	const struct sockwait_ready *ready;
	uint64_t now, t0;
	int i, n;

	now = mono_ns();
	n = sockwait_wait(lg->wait, lg_wait_ms(lg, now), &ready);
	t0 = mono_ns();
	lg->pass++;
	if (lg->kernel_stamps && n > 0)
		lg->clock_offset = lg_clock_offset();
	for (i = 0; i < n; i++)
		lg_conn_ready(lg, ready[i].fd, ready[i].flags, t0);
	lg_conn_timeouts(lg, mono_ns());
	lg_submit(lg);
	now = mono_ns();
	if (!lg->warming_up && n > 0)
		stats_samples_add(&lg->tally.lag,
		    (double)(now - t0) / LG_NS_PER_MS);
	lg_checks(lg, now);
	lg_publish(lg);
}

static void
lg_run_list(struct lg *lg, const struct loadgen_body *list, size_t n,
    int warmup)
{
	lg->list = list;
	lg->nlist = n;
	lg->exhausted = 0;
	lg->warming_up = warmup;
	lg->limit = lg->concurrency;
	if (warmup && n < lg->limit)
		lg->limit = n;
	if (!warmup)
		lg_tally_cpu_start(&lg->tally);
	lg_submit(lg);
	while (!lg->stopping && (!lg->exhausted || lg->in_flight > 0 ||
	    lg->held > 0))
		lg_pass(lg);
	lg_publish(lg);
}

/*
 * Open the c connections before the timed list: c GETs of preconnect_url
 * at once, each on a connection of its own; the answered ones that the
 * server keeps alive wait in the worker's pool, where the timed requests
 * find them (a server that closes after each answer leaves none, and
 * each request then opens its own, as it would have).
 */
static void
lg_preconnect(struct lg *lg)
{
	uint64_t timeout_ns = lg->timeout_ns;

	if (timeout_ns > 10000000000ull)
		timeout_ns = 10000000000ull;
	lg->warming_up = 1;	/* not measured: no loop-lag samples */
	lg_conn_preconnect(lg, timeout_ns);
	while (!lg->stopping && lg->pre_left > 0)
		lg_pass(lg);
}

/* ---- setup and teardown ---- */

struct werr *
lg_setup(struct lg *lg, const struct loadgen_config *cfg)
{
	const char *stamps;
	struct werr *err;
	size_t i;

	lg->cfg = cfg;
	lg->timeout_ns = cfg->request_timeout_ns != 0 ?
	    cfg->request_timeout_ns : LG_DEFAULT_TIMEOUT_NS;
	lg->tick_ns = (uint64_t)(cfg->tick_ms != 0 ? cfg->tick_ms :
	    LG_DEFAULT_TICK_MS) * 1000000ull;
	if ((err = lg_target_new(cfg, &lg->target)) != NULL)
		return err;
	if ((err = sockwait_new(&lg->wait, cfg->portable_wait)) != NULL)
		return err;
	lg->tally.sum->event_wait = sockwait_kind(lg->wait);
	lg->rbuf = xmalloc(LG_READ_BYTES);
	stamps = getenv("WARDEN_LOADGEN_KERNEL_STAMPS");
	lg->kernel_stamps = stamps == NULL || strcmp(stamps, "0") != 0;
	lg->nreqs = lg->concurrency;
	lg->reqs = xcalloc(lg->nreqs, sizeof(*lg->reqs));
	for (i = 0; i < lg->nreqs; i++)
		req_setup(lg, &lg->reqs[i]);
	return NULL;
}

void
lg_teardown(struct lg *lg)
{
	size_t i;

	if (lg->wait != NULL)
		lg_conn_close_all(lg);
	for (i = 0; i < lg->nreqs; i++)
		req_teardown(&lg->reqs[i]);
	free(lg->reqs);
	free(lg->rbuf);
	lg_target_free(lg->target);
	sockwait_free(lg->wait);
	lg_tally_free(&lg->tally);
}

/*
 * The worker's part of the sweep, in its own thread: the warmups, the
 * barrier, its share of the preconnects, the barrier, the timed list.
 * Every worker passes both barriers, whether it ran its lists or not.
 */
void
lg_worker_run(struct lg *lg)
{
	const struct loadgen_config *cfg = lg->cfg;
	struct rtsched_saved sched;

	lg->next_tick_ns = mono_ns() + lg->tick_ns;
	lg->scheduling = cfg->raise_priority ? rtsched_raise(&sched) :
	    "normal";
	if (cfg->nwarmups > 0)
		lg_run_list(lg, cfg->warmups, cfg->nwarmups, 1);
	lg_barrier(lg->shared);
	lg_tick(lg);
	if (!lg->stopping && cfg->preconnect_url != NULL)
		lg_preconnect(lg);
	lg_barrier(lg->shared);
	atomic_store_explicit(&lg->shared->timed, 1, memory_order_relaxed);
	lg_tick(lg);
	if (!lg->stopping)
		lg_run_list(lg, cfg->bodies, cfg->nbodies, 0);
	lg_tally_cpu_stop(&lg->tally);
	if (cfg->raise_priority)
		rtsched_restore(&sched);
	lg->wsum.end = lg->end;
}
