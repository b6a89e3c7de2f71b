/*
 * loadgen-workers.c - the load generator's threads: how many workers a
 * sweep gets, starting them (one thread and its own connections each,
 * pinned to a core of their own where there are enough), the
 * coordinator that the calling thread becomes while they run, and the
 * merge of their tallies once they have ended. See loadgen.h.
 *
 * The workers share nothing on the hot path: each owns its sockets,
 * requests, parser state and samples. What crosses threads is per request
 * or per pass, never per event: the claim on the next request of a list
 * (an atomic add), an ended request's record (copied, under one lock,
 * for the coordinator to hand to on_record), the fields a worker
 * publishes once per pass (last byte, in flight, start) and the
 * coordinator's verdict. on_record and on_tick run only in the calling
 * thread, so the caller's own state (sqlite, progress) needs no lock.
 *
 * Must never print, and never read another worker's tally before it has
 * ended.
 */
#include "config.h"

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1	/* sched_getaffinity, pthread_setaffinity_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loadgen-private.h"
#include "util.h"

/* ---- how many workers ---- */

/* The CPUs this process may run on (its affinity, as taskset sets it). */
unsigned
loadgen_cpus(void)
{
	long n;
#ifdef __linux__
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 &&
	    CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
#endif
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

unsigned
loadgen_workers_for(unsigned concurrency, unsigned cpus)
{
	unsigned w;

	if (concurrency == 0)
		return 1;
	w = (concurrency + LOADGEN_STREAMS_PER_WORKER - 1) /
	    LOADGEN_STREAMS_PER_WORKER;
	if (w > cpus)
		w = cpus;
	if (w > concurrency)
		w = concurrency;
	return w > 0 ? w : 1;
}

/* config's workers, else WARDEN_LOADGEN_WORKERS, else the rule; never
 * more than the concurrency. */
static unsigned
workers_wanted(const struct loadgen_config *cfg)
{
	const char *env = getenv("WARDEN_LOADGEN_WORKERS");
	unsigned long v;
	char *end;
	unsigned w;

	w = cfg->workers;
	if (w == 0 && env != NULL && *env != '\0') {
		errno = 0;
		v = strtoul(env, &end, 10);
		if (errno == 0 && *end == '\0' && v > 0 && v <= 4096)
			w = (unsigned)v;
	}
	if (w == 0)
		w = loadgen_workers_for(cfg->concurrency, loadgen_cpus());
	return w > cfg->concurrency ? cfg->concurrency : w;
}

/* Pin worker i to the i-th CPU of the process's affinity, when there is
 * one CPU for each worker; else leave it to the scheduler. */
static void
pin_worker(pthread_t thread, unsigned i, unsigned nworkers)
{
#ifdef __linux__
	cpu_set_t all, one;
	unsigned cpu, seen = 0;

	if (nworkers < 2 || sched_getaffinity(0, sizeof(all), &all) != 0 ||
	    (unsigned)CPU_COUNT(&all) < nworkers)
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all) || seen++ != i)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		(void)pthread_setaffinity_np(thread, sizeof(one), &one);
		return;
	}
#else
	(void)thread;
	(void)i;
	(void)nworkers;
#endif
}

/* ---- records handed to the coordinator ---- */

/* An ended request's record, with copies of what it points to. */
struct lg_handoff {
	struct lg_handoff *next;
	struct loadgen_record rec;
	char *finish_reason, *error, *content;
	uint64_t *token_ns;
};

static char *
dup_or_null(const char *s, size_t len)
{
	char *d;

	if (s == NULL)
		return NULL;
	d = xmalloc(len + 1);
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

void
lg_handoff_record(struct lg *lg, const struct loadgen_record *rec)
{
	struct lg_handoff *h = xcalloc(1, sizeof(*h));

	h->rec = *rec;
	h->finish_reason = dup_or_null(rec->finish_reason,
	    rec->finish_reason != NULL ? strlen(rec->finish_reason) : 0);
	h->error = dup_or_null(rec->error,
	    rec->error != NULL ? strlen(rec->error) : 0);
	h->content = dup_or_null(rec->content, rec->content_len);
	if (rec->ntoken_ns > 0) {
		h->token_ns = xcalloc(rec->ntoken_ns, sizeof(*h->token_ns));
		memcpy(h->token_ns, rec->token_ns,
		    rec->ntoken_ns * sizeof(*h->token_ns));
	}
	h->rec.finish_reason = h->finish_reason;
	h->rec.error = h->error;
	h->rec.content = h->content;
	h->rec.token_ns = h->token_ns;
	*lg->out_tail = h;
	lg->out_tail = &h->next;
}

/* The records of this pass to the coordinator: one lock and one wake-up
 * however many requests ended in it. */
void
lg_handoff_flush(struct lg *lg)
{
	struct lg_shared *sh = lg->shared;

	if (lg->out_head == NULL)
		return;
	pthread_mutex_lock(&sh->lock);
	*sh->tail = lg->out_head;
	sh->tail = lg->out_tail;
	pthread_cond_signal(&sh->wake);
	pthread_mutex_unlock(&sh->lock);
	lg->out_head = NULL;
	lg->out_tail = &lg->out_head;
}

/* Wake every worker from its wait: a verdict is there to be read. */
static void
wake_workers(struct lg **w, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (w[i]->wake_fd[1] != -1)
			(void)!write(w[i]->wake_fd[1], "v", 1);
}

static void
handoff_free(struct lg_handoff *h)
{
	free(h->finish_reason);
	free(h->error);
	free(h->content);
	free(h->token_ns);
	free(h);
}

void
lg_barrier(struct lg_shared *sh)
{
	unsigned gen;

	pthread_mutex_lock(&sh->lock);
	gen = sh->generation;
	if (++sh->arrived == sh->nworkers) {
		sh->arrived = 0;
		sh->generation++;
		pthread_cond_broadcast(&sh->phase);
	} else
		while (gen == sh->generation)
			pthread_cond_wait(&sh->phase, &sh->lock);
	pthread_mutex_unlock(&sh->lock);
}

static void *
worker_main(void *arg)
{
	struct lg *lg = arg;
	struct lg_shared *sh = lg->shared;

	lg_worker_run(lg);
	pthread_mutex_lock(&sh->lock);
	sh->running--;
	pthread_cond_signal(&sh->wake);
	pthread_mutex_unlock(&sh->lock);
	return NULL;
}

/* ---- the coordinator ---- */

struct coordinator {
	struct lg_shared *sh;
	struct lg **w;
	unsigned nworkers;		/* started */
	uint64_t tick_ns, next_tick_ns;
	uint64_t silence_step_ms;	/* how often silence is looked for */
	size_t done, ok;		/* timed records handed to on_record */
	uint64_t output_tokens;
};

static void
progress_now(struct coordinator *co, struct loadgen_progress *p,
    uint64_t now)
{
	uint64_t v;
	unsigned i;

	memset(p, 0, sizeof(*p));
	p->now_ns = now;
	p->warming_up = !atomic_load_explicit(&co->sh->timed,
	    memory_order_relaxed);
	for (i = 0; i < co->nworkers; i++) {
		v = atomic_load_explicit(&co->w[i]->pub_start_ns,
		    memory_order_relaxed);
		if (v != 0 && (p->start_ns == 0 || v < p->start_ns))
			p->start_ns = v;
		v = atomic_load_explicit(&co->w[i]->pub_last_byte_ns,
		    memory_order_relaxed);
		if (v > p->last_byte_ns)
			p->last_byte_ns = v;
		p->in_flight += atomic_load_explicit(&co->w[i]->pub_in_flight,
		    memory_order_relaxed);
	}
	p->done = co->done;
	p->ok = co->ok;
	p->total = co->sh->cfg->nbodies;
	p->output_tokens = co->output_tokens;
}

static void
deliver(struct coordinator *co, struct lg_handoff *list)
{
	const struct loadgen_config *cfg = co->sh->cfg;
	struct lg_handoff *next;

	for (; list != NULL; list = next) {
		next = list->next;
		if (!list->rec.warmup) {
			co->done++;
			if (list->rec.outcome == LOADGEN_OK) {
				co->ok++;
				co->output_tokens +=
				    (uint64_t)list->rec.completion_tokens;
			}
		}
		if (cfg->on_record != NULL)
			cfg->on_record(cfg->arg, &list->rec);
		handoff_free(list);
	}
}

static void
verdict(struct coordinator *co, enum lg_verdict v)
{
	int none = LG_VERDICT_NONE;

	if (atomic_compare_exchange_strong(&co->sh->verdict, &none, (int)v))
		wake_workers(co->w, co->nworkers);
}

/* on_tick, and the silence of all workers together. */
static void
coordinator_tick(struct coordinator *co, uint64_t now)
{
	const struct loadgen_config *cfg = co->sh->cfg;
	struct loadgen_progress p;
	enum loadgen_tick_action act;

	progress_now(co, &p, now);
	if (cfg->hang_ns != 0 && p.in_flight > 0 && p.last_byte_ns != 0 &&
	    now > p.last_byte_ns && now - p.last_byte_ns >= cfg->hang_ns)
		verdict(co, LG_VERDICT_SILENT);
	if (now < co->next_tick_ns)
		return;
	co->next_tick_ns = now + co->tick_ns;
	if (cfg->on_tick == NULL)
		return;
	act = cfg->on_tick(cfg->arg, &p);
	if (act == LOADGEN_TICK_SERVER_CRASH)
		verdict(co, LG_VERDICT_SERVER_CRASH);
	else if (act == LOADGEN_TICK_STOP)
		verdict(co, LG_VERDICT_STOP);
	else if (act == LOADGEN_TICK_HANG)
		verdict(co, LG_VERDICT_HANG);
	else
		atomic_store_explicit(&co->sh->tick_ok_ns, now,
		    memory_order_release);
}

static void
abs_time(struct timespec *ts, uint64_t ms_from_now)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(ms_from_now / 1000);
	ts->tv_nsec += (long)(ms_from_now % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Until every worker has ended: hand records to on_record as they come,
 * call on_tick every tick, watch for silence. */
static void
coordinate(struct coordinator *co)
{
	struct lg_shared *sh = co->sh;
	struct lg_handoff *list;
	struct timespec until;
	uint64_t now;
	unsigned running;
	uint64_t wait_ms;

	co->next_tick_ns = mono_ns() + co->tick_ns;
	/* Silence (hang_ns) is looked for a twentieth of hang_ns apart, at
	 * least 10 ms; with no hang_ns, each second. The coordinator sleeps
	 * until then, or the next on_tick, or a record: its wake-ups add to
	 * the measuring client's CPU, one stream's above all. */
	co->silence_step_ms = co->sh->cfg->hang_ns / 20 / 1000000;
	if (co->sh->cfg->hang_ns == 0)
		co->silence_step_ms = LG_IDLE_WAIT_MS;
	if (co->silence_step_ms < 10)
		co->silence_step_ms = 10;
	for (;;) {
		now = mono_ns();
		wait_ms = co->silence_step_ms;
		if (sh->cfg->on_tick != NULL && co->next_tick_ns <= now)
			wait_ms = 0;
		else if (sh->cfg->on_tick != NULL &&
		    (co->next_tick_ns - now + 999999) / 1000000 < wait_ms)
			wait_ms = (co->next_tick_ns - now + 999999) / 1000000;
		abs_time(&until, wait_ms);
		pthread_mutex_lock(&sh->lock);
		if (sh->head == NULL && sh->running > 0)
			pthread_cond_timedwait(&sh->wake, &sh->lock, &until);
		list = sh->head;
		sh->head = NULL;
		sh->tail = &sh->head;
		running = sh->running;
		pthread_mutex_unlock(&sh->lock);
		deliver(co, list);
		if (running == 0)
			break;
		coordinator_tick(co, mono_ns());
	}
}

/* ---- the run ---- */

static int64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + (int64_t)ts.tv_nsec;
}

static struct werr *
check_config(const struct loadgen_config *cfg)
{
	if (cfg->url == NULL || *cfg->url == '\0')
		return werr_usage("load generator: no url");
	if (cfg->concurrency == 0)
		return werr_usage("load generator: concurrency must be at least 1");
	if (cfg->nbodies > 0 && cfg->bodies == NULL)
		return werr_usage("load generator: no request bodies");
	if (cfg->nwarmups > 0 && cfg->warmups == NULL)
		return werr_usage("load generator: no warmup bodies");
	return NULL;
}

/* Set the workers up, each with its share of the concurrency. */
static struct werr *
workers_setup(struct lg **w, unsigned n, struct lg_shared *sh,
    const struct loadgen_summary *summary)
{
	const struct loadgen_config *cfg = sh->cfg;
	struct werr *err;
	unsigned i;

	for (i = 0; i < n; i++) {
		w[i] = xcalloc(1, sizeof(*w[i]));
		w[i]->shared = sh;
		w[i]->worker = i;
		w[i]->concurrency = cfg->concurrency / n +
		    (i < cfg->concurrency % n ? 1 : 0);
		w[i]->tally.sum = &w[i]->wsum;
		w[i]->wsum.anchor_mono_ns = summary->anchor_mono_ns;
		w[i]->wsum.anchor_realtime_ns = summary->anchor_realtime_ns;
		if ((err = lg_setup(w[i], cfg)) != NULL)
			return err;
	}
	return NULL;
}

/* Fold the ended workers into the summary's tally. */
static void
workers_merge(struct lg_tally *tally, struct lg **w, unsigned n)
{
	struct loadgen_summary *s = tally->sum;
	unsigned i;

	s->event_wait = w[0]->wsum.event_wait;
	s->client_scheduling = w[0]->scheduling;
	s->end = LOADGEN_END_COMPLETE;
	for (i = 0; i < n; i++) {
		lg_tally_merge(tally, &w[i]->tally);
		if (s->end == LOADGEN_END_COMPLETE)
			s->end = w[i]->wsum.end;
	}
}

/* Fewer threads started than were set up: the sweep goes on with those
 * (their shares of c), and the barrier counts only them. */
static void
workers_shrink(struct lg_shared *sh, unsigned started)
{
	pthread_mutex_lock(&sh->lock);
	sh->running = started;
	sh->nworkers = started;
	if (sh->arrived > 0 && sh->arrived >= started) {
		sh->arrived = 0;
		sh->generation++;
		pthread_cond_broadcast(&sh->phase);
	}
	pthread_mutex_unlock(&sh->lock);
}

struct werr *
loadgen_run(const struct loadgen_config *cfg, struct loadgen_summary *summary)
{
	struct lg_shared sh;
	struct coordinator co;
	struct lg_tally tally;
	struct lg **w = NULL;
	pthread_t *threads = NULL;
	struct werr *err;
	uint64_t m0, m1;
	unsigned i, n, started = 0;

	memset(summary, 0, sizeof(*summary));
	if ((err = check_config(cfg)) != NULL)
		return err;
	memset(&sh, 0, sizeof(sh));
	memset(&tally, 0, sizeof(tally));
	tally.sum = summary;
	sh.cfg = cfg;
	sh.nworkers = n = workers_wanted(cfg);
	sh.tail = &sh.head;
	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.wake, NULL);
	pthread_cond_init(&sh.phase, NULL);
	summary->max_concurrency = cfg->concurrency;
	summary->num_prompts = cfg->nbodies;
	summary->client_workers = n;
	m0 = mono_ns();
	summary->anchor_realtime_ns = realtime_ns();
	m1 = mono_ns();
	summary->anchor_mono_ns = m0 + (m1 - m0) / 2;
	w = xcalloc(n, sizeof(*w));
	threads = xcalloc(n, sizeof(*threads));
	if ((err = workers_setup(w, n, &sh, summary)) != NULL)
		goto out;
	sh.running = n;
	for (i = 0; i < n; i++) {
		if (pthread_create(&threads[i], NULL, worker_main, w[i]) != 0)
			break;
		pin_worker(threads[i], i, n);
		started++;
	}
	if (started < n)
		workers_shrink(&sh, started);
	if (started == 0) {
		err = werr_new(WEXIT_ENV, "cannot start the load generator's "
		    "threads");
		goto out;
	}
	summary->client_workers = started;
	memset(&co, 0, sizeof(co));
	co.sh = &sh;
	co.w = w;
	co.nworkers = started;
	co.tick_ns = w[0]->tick_ns;
	coordinate(&co);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	workers_merge(&tally, w, started);
	lg_tally_finish(&tally, cfg->nbodies, mono_ns(), realtime_ns());
out:
	for (i = 0; i < n; i++) {
		if (w[i] == NULL)
			continue;
		lg_teardown(w[i]);
		free(w[i]);
	}
	free(w);
	free(threads);
	lg_tally_free(&tally);
	pthread_mutex_destroy(&sh.lock);
	pthread_cond_destroy(&sh.wake);
	pthread_cond_destroy(&sh.phase);
	return err;
}
