/*
 * loadgen.c - the closed-loop load generator. See loadgen.h.
 *
 * One worker's loop; loadgen-workers.c starts the workers, one thread
 * each, and coordinates them. The loop is libcurl's socket interface
 * driven by sockwait.h (epoll on Linux, poll(2) elsewhere): libcurl tells
 * us which sockets to watch and when its timer fires; we wait, hand it
 * the ready sockets, collect the transfers that ended, and submit the
 * next requests so exactly the worker's share of `concurrency` stays in
 * flight. Each slot owns one easy handle, reset before each request, and
 * one SSE parser; its write callback reads the clock first, then parses
 * (loadgen-req.c). Each ended request is folded into the worker's tally
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

#include <curl/curl.h>

#include "loadgen-private.h"
#include "rtsched.h"
#include "sockwait.h"
#include "sse.h"
#include "stats.h"
#include "util.h"

/* ---- submitting and ending requests ---- */

static void lg_deliver(struct lg *, struct lg_req *);
static void lg_pass(struct lg *);

/* Take every preconnect GET still in flight off the multi handle. */
static void
lg_preconnect_free(struct lg *lg)
{
	size_t i;

	for (i = 0; i < lg->npre; i++) {
		if (lg->pre[i] == NULL)
			continue;
		curl_multi_remove_handle(lg->multi, lg->pre[i]);
		curl_easy_cleanup(lg->pre[i]);
	}
	free(lg->pre);
	lg->pre = NULL;
	lg->npre = lg->pre_left = 0;
}

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
		req_set_id(lg, r);
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)b->len);
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, b->data);
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
		if (curl_multi_add_handle(lg->multi, r->easy) != CURLM_OK) {
			r->end_ns = mono_ns();
			lg->in_flight--;
			req_fail(r, LOADGEN_CONNECT, "libcurl refused the request",
			    NULL, 0);
			lg_deliver(lg, r);
		}
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

/* Take a finished transfer off the multi handle and deliver or hold it. */
static void
lg_finish(struct lg *lg, struct lg_req *r, CURLcode rc)
{
	int transport;

	r->end_ns = mono_ns();
	req_connect_info(r);
	curl_multi_remove_handle(lg->multi, r->easy);
	lg->in_flight--;
	if (r->attempts > 1 && !lg->no_reuse) {
		/* The server closes kept-alive connections under us: stop
		 * putting requests on connections it may be closing. */
		lg->no_reuse = 1;
		lg->tally.sum->connection_reuse_stopped = 1;
	}
	transport = req_classify(r, rc);
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
			req_connect_info(r);
			curl_multi_remove_handle(lg->multi, r->easy);
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

static int
lg_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp,
    void *socketp)
{
	struct lg *lg = userp;

	if (what == CURL_POLL_REMOVE)
		sockwait_del(lg->wait, s);
	else
		sockwait_set(lg->wait, s,
		    ((what & CURL_POLL_IN) ? SOCKWAIT_IN : 0) |
		    ((what & CURL_POLL_OUT) ? SOCKWAIT_OUT : 0));
	return 0;
}

static int
lg_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct lg *lg = userp;

	if (timeout_ms < 0)
		lg->timer_at = 0;
	else
		lg->timer_at = mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	return 0;
}

/* A preconnect GET ended: take it off the multi handle (its connection
 * stays in the pool) and count it if it got an answer. 0 if easy is not
 * one of them. */
static int
lg_preconnect_done(struct lg *lg, CURL *easy, CURLcode rc)
{
	size_t i;

	for (i = 0; i < lg->npre; i++) {
		if (lg->pre[i] != easy)
			continue;
		curl_multi_remove_handle(lg->multi, easy);
		curl_easy_cleanup(easy);
		lg->pre[i] = NULL;
		lg->pre_left--;
		if (rc == CURLE_OK)
			lg->tally.sum->preconnected++;
		return 1;
	}
	return 0;
}

static void
lg_collect(struct lg *lg)
{
	CURLMsg *msg;
	struct lg_req *r;
	int left;

	while ((msg = curl_multi_info_read(lg->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		if (lg->pre_left > 0 && lg_preconnect_done(lg, msg->easy_handle,
		    msg->data.result))
			continue;
		r = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
		    (char **)&r);
		if (r != NULL && r->state == REQ_ACTIVE)
			lg_finish(lg, r, msg->data.result);
	}
}

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

/* One pass: wait, hand ready sockets and timers to libcurl. */
static void
lg_pass(struct lg *lg)
{
	const struct sockwait_ready *ready;
	uint64_t now, t0;
	int i, n, running;

	now = mono_ns();
	n = sockwait_wait(lg->wait, lg_wait_ms(lg, now), &ready);
	t0 = mono_ns();
	lg->pass++;
	for (i = 0; i < n; i++)
		curl_multi_socket_action(lg->multi, ready[i].fd,
		    ((ready[i].flags & SOCKWAIT_IN) ? CURL_CSELECT_IN : 0) |
		    ((ready[i].flags & SOCKWAIT_OUT) ? CURL_CSELECT_OUT : 0) |
		    ((ready[i].flags & SOCKWAIT_ERR) ? CURL_CSELECT_ERR : 0),
		    &running);
	if (lg->timer_at != 0 && mono_ns() >= lg->timer_at) {
		lg->timer_at = 0;
		curl_multi_socket_action(lg->multi, CURL_SOCKET_TIMEOUT, 0,
		    &running);
	}
	lg_collect(lg);
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

static size_t
discard(char *ptr, size_t size, size_t nmemb, void *arg)
{
	(void)ptr;
	(void)arg;
	return size * nmemb;
}

/*
 * Open the c connections before the timed list: c GETs of preconnect_url
 * at once, each needing a connection of its own; they end in the multi
 * handle's pool, where the timed requests find them. The handles are set
 * up like a request's (loadgen-req.c) where that decides whether libcurl
 * may reuse a connection: HTTP/1.1, no proxy.
 */
static void
lg_preconnect(struct lg *lg)
{
	const struct loadgen_config *cfg = lg->cfg;
	uint64_t timeout_ms = lg->timeout_ns / 1000000;
	CURL *e;
	size_t i;

	if (timeout_ms > 10000)
		timeout_ms = 10000;
	lg->npre = lg->concurrency;
	lg->pre = xcalloc(lg->npre, sizeof(*lg->pre));
	lg->warming_up = 1;	/* not measured: no loop-lag samples */
	for (i = 0; i < lg->npre; i++) {
		if ((e = curl_easy_init()) == NULL)
			break;
		curl_easy_setopt(e, CURLOPT_URL, cfg->preconnect_url);
		curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
		    (long)CURL_HTTP_VERSION_1_1);
		curl_easy_setopt(e, CURLOPT_PROXY, "");
		curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
		if (curl_multi_add_handle(lg->multi, e) != CURLM_OK) {
			curl_easy_cleanup(e);
			break;
		}
		lg->pre[i] = e;
		lg->pre_left++;
	}
	while (!lg->stopping && lg->pre_left > 0)
		lg_pass(lg);
	lg_preconnect_free(lg);
}

/* ---- setup and teardown ---- */

struct werr *
lg_setup(struct lg *lg, const struct loadgen_config *cfg)
{
	const char *const *h;
	struct werr *err;
	size_t i;

	lg->cfg = cfg;
	lg->timeout_ns = cfg->request_timeout_ns != 0 ?
	    cfg->request_timeout_ns : LG_DEFAULT_TIMEOUT_NS;
	lg->tick_ns = (uint64_t)(cfg->tick_ms != 0 ? cfg->tick_ms :
	    LG_DEFAULT_TICK_MS) * 1000000ull;
	lg->headers = curl_slist_append(NULL, "Content-Type: application/json");
	lg->headers = curl_slist_append(lg->headers, "Accept: text/event-stream");
	lg->headers = curl_slist_append(lg->headers, "Expect:");
	for (h = cfg->headers; h != NULL && *h != NULL; h++)
		lg->headers = curl_slist_append(lg->headers, *h);
	if (lg->headers == NULL || (lg->multi = curl_multi_init()) == NULL)
		return werr_new(WEXIT_ENV, "cannot set up libcurl");
	if ((err = sockwait_new(&lg->wait, cfg->portable_wait)) != NULL)
		return err;
	lg->tally.sum->event_wait = sockwait_kind(lg->wait);
	curl_multi_setopt(lg->multi, CURLMOPT_SOCKETFUNCTION, lg_socket_cb);
	curl_multi_setopt(lg->multi, CURLMOPT_SOCKETDATA, lg);
	curl_multi_setopt(lg->multi, CURLMOPT_TIMERFUNCTION, lg_timer_cb);
	curl_multi_setopt(lg->multi, CURLMOPT_TIMERDATA, lg);
	curl_multi_setopt(lg->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
	curl_multi_setopt(lg->multi, CURLMOPT_MAXCONNECTS,
	    (long)lg->concurrency + 8);
	lg->nreqs = lg->concurrency;
	lg->reqs = xcalloc(lg->nreqs, sizeof(*lg->reqs));
	for (i = 0; i < lg->nreqs; i++)
		if ((err = req_setup(lg, &lg->reqs[i])) != NULL)
			return err;
	return NULL;
}

void
lg_teardown(struct lg *lg)
{
	size_t i;

	if (lg->multi != NULL)
		lg_preconnect_free(lg);
	for (i = 0; i < lg->nreqs; i++) {
		if (lg->reqs[i].state == REQ_ACTIVE && lg->multi != NULL)
			curl_multi_remove_handle(lg->multi, lg->reqs[i].easy);
		req_teardown(&lg->reqs[i]);
	}
	free(lg->reqs);
	if (lg->multi != NULL)
		curl_multi_cleanup(lg->multi);
	curl_slist_free_all(lg->headers);
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
