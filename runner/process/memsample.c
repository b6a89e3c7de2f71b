/*
 * memsample.c - the portable sampler over the platform interface of
 * memsample.h: a schedule, a trace, peaks, and an optional thread.
 * The trace belongs to the sampler's thread while it runs; read it only
 * after memsampler_stop(). Never prints.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memsample.h"
#include "util.h"

void
memsampler_init(struct memsampler *s, pid_t root, unsigned interval_ms)
{
	memset(s, 0, sizeof(*s));
	s->root = root;
	s->interval_ns = (uint64_t)(interval_ms ? interval_ms : 1000) *
	    1000000ULL;
}

void
memsampler_sample(struct memsampler *s, uint64_t now_ns)
{
	struct mem_sample m = { 0 };
	struct werr *err;
	uint64_t total = 0;

	m.t_ns = now_ns;
	err = memsample_system(&m.system_used, &total);
	if (err == NULL)
		err = memsample_tree(s->root, &m.engine_rss, &m.engine_procs);
	if (err != NULL) {
		werr_free(err);
		s->errors++;
		return;
	}
	if (total != 0)
		s->system_total = total;
	if (m.system_used > s->peak_system)
		s->peak_system = m.system_used;
	if (m.engine_rss > s->peak_engine)
		s->peak_engine = m.engine_rss;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->samples = xrealloc(s->samples, s->cap * sizeof(*s->samples));
	}
	s->samples[s->n++] = m;
}

int
memsampler_tick(struct memsampler *s, uint64_t now_ns)
{
	if (now_ns < s->next_ns)
		return 0;
	memsampler_sample(s, now_ns);
	s->next_ns = now_ns + s->interval_ns;
	return 1;
}

static void *
sampler_main(void *arg)
{
	struct memsampler *s = arg;
	struct timespec ts;
	uint64_t now, wake;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		pthread_mutex_unlock(&s->lock);
		now = mono_ns();
		memsampler_tick(s, now);
		wake = s->next_ns;
		pthread_mutex_lock(&s->lock);
		if (s->stopping)
			break;
#ifdef __APPLE__
		/* Darwin's condition variables only know relative waits
		 * against a monotonic clock. */
		wake = wake > now ? wake - now : 0;
		ts.tv_sec = (time_t)(wake / 1000000000ULL);
		ts.tv_nsec = (long)(wake % 1000000000ULL);
		pthread_cond_timedwait_relative_np(&s->cond, &s->lock, &ts);
#else
		ts.tv_sec = (time_t)(wake / 1000000000ULL);
		ts.tv_nsec = (long)(wake % 1000000000ULL);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
#endif
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct werr *
memsampler_start(struct memsampler *s)
{
	pthread_condattr_t attr;
	int rc;

	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&attr);
#ifndef __APPLE__
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
#endif
	pthread_cond_init(&s->cond, &attr);
	pthread_condattr_destroy(&attr);
	s->stopping = 0;
	rc = pthread_create(&s->thread, NULL, sampler_main, s);
	if (rc != 0) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		errno = rc;
		return werr_errno("pthread_create", NULL);
	}
	s->running = 1;
	return NULL;
}

void
memsampler_stop(struct memsampler *s)
{
	if (s->running) {
		pthread_mutex_lock(&s->lock);
		s->stopping = 1;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		s->running = 0;
	}
	memsampler_sample(s, mono_ns());
}

void
memsampler_free(struct memsampler *s)
{
	free(s->samples);
	s->samples = NULL;
	s->n = s->cap = 0;
}
