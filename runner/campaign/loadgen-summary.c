/*
 * loadgen-summary.c - the load generator's summary: the stable names, the
 * samples and counters folded in as requests end, the maths that turns
 * them into a struct loadgen_summary after the loop (each worker's tally
 * merged into one once the workers have ended), and its JSON. See
 * loadgen.h for what each figure means, loadgen-private.h for the split.
 *
 * Only timed requests count; warmups are tallied as ok or failed and
 * nothing else. Must never print, never touch a socket, and never read a
 * clock except this thread's CPU times (the loop hands it the others).
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

#include "loadgen-private.h"
#include "util.h"

const char *
loadgen_outcome_name(enum loadgen_outcome outcome)
{
	static const char *names[] = { "ok", "http_status", "timeout",
	    "connect", "stream_error", "malformed", "empty", "server_crash",
	    "oversized", "overlong" };

	if ((unsigned)outcome >= LOADGEN_OUTCOME_COUNT)
		return "unknown";
	return names[outcome];
}

const char *
loadgen_end_name(enum loadgen_end end)
{
	static const char *names[] = { "complete", "hang", "deadline",
	    "server_crash", "stopped" };

	if ((unsigned)end >= LOADGEN_END_COUNT)
		return "unknown";
	return names[end];
}

const char *
loadgen_usage_source_name(enum loadgen_usage_source source)
{
	switch (source) {
	case LOADGEN_USAGE_SERVER: return "server";
	case LOADGEN_USAGE_STREAMED: return "streamed";
	default: return "none";
	}
}

/* ---- folding records in ---- */

void
lg_tally_record(struct lg_tally *t, const struct loadgen_record *rec)
{
	struct loadgen_summary *s = t->sum;
	double tokens;
	size_t i;

	s->connection_retries += rec->retries;	/* warmups included */
	if (rec->warmup) {
		if (rec->outcome == LOADGEN_OK)
			s->warmups_ok++;
		else
			s->warmups_failed++;
		return;
	}
	t->done++;
	if (rec->new_connection)
		s->new_connections++;
	if (rec->new_connection && rec->connect_ns > 0)
		stats_samples_add(&t->connect,
		    (double)rec->connect_ns / LG_NS_PER_MS);
	if (rec->end_ns > t->last_end_ns)
		t->last_end_ns = rec->end_ns;
	s->token_events += rec->token_events;
	s->coalesced_events += rec->coalesced_events;
	s->chunks += rec->chunks;
	if (rec->outcome != LOADGEN_OK) {
		s->failed++;
		s->failed_by_outcome[rec->outcome]++;
		return;
	}
	t->ok++;
	s->completed++;
	if (rec->prompt_tokens > 0)
		s->total_input_tokens += (uint64_t)rec->prompt_tokens;
	s->total_output_tokens += (uint64_t)rec->completion_tokens;
	if (rec->usage_source == LOADGEN_USAGE_SERVER)
		s->usage_server++;
	else
		s->usage_streamed++;
	stats_samples_add(&t->ttft,
	    (double)(rec->first_token_ns - rec->submit_ns) / LG_NS_PER_MS);
	stats_samples_add(&t->e2el,
	    (double)(rec->last_token_ns - rec->submit_ns) / LG_NS_PER_MS);
	tokens = (double)rec->completion_tokens;
	if (tokens >= 2)
		stats_samples_add(&t->tpot, (double)(rec->last_token_ns -
		    rec->first_token_ns) / LG_NS_PER_MS / (tokens - 1));
	for (i = 1; i < rec->ntoken_ns; i++)
		stats_samples_add(&t->itl, (double)(rec->token_ns[i] -
		    rec->token_ns[i - 1]) / LG_NS_PER_MS);
}

/* ---- the summary ---- */

/* This thread's CPU times (the process's where there is no per-thread
 * figure). */
static void
thread_rusage(struct rusage *ru)
{
	getrusage(
#ifdef RUSAGE_THREAD
	    RUSAGE_THREAD,
#else
	    RUSAGE_SELF,
#endif
	    ru);
}

void
lg_tally_cpu_start(struct lg_tally *t)
{
	thread_rusage(&t->ru0);
}

static double
tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

void
lg_tally_cpu_stop(struct lg_tally *t)
{
	struct rusage ru1;

	if (t->start_ns == 0)
		return;
	thread_rusage(&ru1);
	t->cpu_s = tv_s(&ru1.ru_utime) - tv_s(&t->ru0.ru_utime) +
	    tv_s(&ru1.ru_stime) - tv_s(&t->ru0.ru_stime);
}

static void
samples_append(struct stats_samples *dst, const struct stats_samples *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		stats_samples_add(dst, src->v[i]);
}

void
lg_tally_merge(struct lg_tally *dst, const struct lg_tally *src)
{
	struct loadgen_summary *d = dst->sum;
	const struct loadgen_summary *s = src->sum;
	int i;

	if (src->start_ns != 0 && (dst->start_ns == 0 ||
	    src->start_ns < dst->start_ns))
		dst->start_ns = src->start_ns;
	if (src->last_end_ns > dst->last_end_ns)
		dst->last_end_ns = src->last_end_ns;
	dst->done += src->done;
	dst->ok += src->ok;
	dst->cpu_s += src->cpu_s;
	if (src->cpu_s > dst->cpu_max_s)
		dst->cpu_max_s = src->cpu_s;
	/* the most in flight at once, summed: each worker's is at most its
	 * share of c, so the sum is at most c */
	d->max_in_flight += s->max_in_flight;
	d->submitted += s->submitted;
	d->completed += s->completed;
	d->failed += s->failed;
	for (i = 0; i < LOADGEN_OUTCOME_COUNT; i++)
		d->failed_by_outcome[i] += s->failed_by_outcome[i];
	d->warmups_ok += s->warmups_ok;
	d->warmups_failed += s->warmups_failed;
	d->preconnected += s->preconnected;
	d->new_connections += s->new_connections;
	d->connection_retries += s->connection_retries;
	d->connection_reuse_stopped |= s->connection_reuse_stopped;
	d->total_input_tokens += s->total_input_tokens;
	d->total_output_tokens += s->total_output_tokens;
	d->usage_server += s->usage_server;
	d->usage_streamed += s->usage_streamed;
	d->token_events += s->token_events;
	d->coalesced_events += s->coalesced_events;
	d->chunks += s->chunks;
	d->reads += s->reads;
	d->kernel_stamped_reads += s->kernel_stamped_reads;
	d->bytes += s->bytes;
	samples_append(&dst->ttft, &src->ttft);
	samples_append(&dst->tpot, &src->tpot);
	samples_append(&dst->itl, &src->itl);
	samples_append(&dst->e2el, &src->e2el);
	samples_append(&dst->lag, &src->lag);
	samples_append(&dst->connect, &src->connect);
}

static void
fill_stat(struct loadgen_stat *out, const struct stats_samples *s)
{
	struct stats_summary sum;

	stats_summarize(s->v, s->n, &sum);
	out->n = sum.n;
	out->mean = sum.mean;
	out->median = sum.median;
	out->std = sum.std;
	out->p90 = sum.p90;
	out->p99 = sum.p99;
}

void
lg_tally_finish(struct lg_tally *t, size_t nbodies, uint64_t end_mono,
    int64_t end_real)
{
	struct loadgen_summary *s = t->sum;
	struct stats_summary lag;
	double dmono, dreal;

	s->not_started = nbodies - s->submitted;
	if (t->start_ns != 0 && t->last_end_ns > t->start_ns)
		s->duration = (double)(t->last_end_ns - t->start_ns) / 1e9;
	if (s->duration > 0) {
		s->request_throughput = (double)s->completed / s->duration;
		s->output_throughput = (double)s->total_output_tokens /
		    s->duration;
		s->total_token_throughput = (double)(s->total_output_tokens +
		    s->total_input_tokens) / s->duration;
	}
	if (t->start_ns != 0) {
		s->client_cpu_s = t->cpu_s;
		if (s->duration > 0)
			s->client_cpu_fraction = t->cpu_max_s / s->duration;
	}
	stats_summarize(t->lag.v, t->lag.n, &lag);
	s->loop_lag_p99_ms = lag.p99;
	s->client_limited = s->loop_lag_p99_ms > 1.0 ||
	    s->client_cpu_fraction > 0.85;
	fill_stat(&s->ttft, &t->ttft);
	fill_stat(&s->tpot, &t->tpot);
	fill_stat(&s->itl, &t->itl);
	fill_stat(&s->e2el, &t->e2el);
	fill_stat(&s->connect, &t->connect);
	dmono = (double)(end_mono - s->anchor_mono_ns);
	dreal = (double)(end_real - s->anchor_realtime_ns);
	if (dmono > 0) {
		s->clock_drift = dreal / dmono - 1;
		if (s->clock_drift < 0)
			s->clock_drift = -s->clock_drift;
		s->clock_drift_warning = dmono >= 1e9 && s->clock_drift > 0.001;
	}
}

void
lg_tally_free(struct lg_tally *t)
{
	stats_samples_free(&t->ttft);
	stats_samples_free(&t->tpot);
	stats_samples_free(&t->itl);
	stats_samples_free(&t->e2el);
	stats_samples_free(&t->lag);
	stats_samples_free(&t->connect);
}

/* ---- JSON ---- */

static void
set_real(json_t *o, const char *key, double v)
{
	json_object_set_new(o, key, json_real(v));
}

static void
set_int(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* v, or null when nothing was measured (has == 0): no success is not a
 * figure of zero. */
static void
set_measured(json_t *o, const char *key, double v, uint64_t has)
{
	json_object_set_new(o, key, has > 0 ? json_real(v) : json_null());
}

static void
set_stat(json_t *o, const char *metric, const struct loadgen_stat *st)
{
	struct buf k = BUF_INIT;

	buf_printf(&k, "mean_%s_ms", metric);
	set_measured(o, buf_cstr(&k), st->mean, st->n);
	buf_reset(&k);
	buf_printf(&k, "median_%s_ms", metric);
	set_measured(o, buf_cstr(&k), st->median, st->n);
	buf_reset(&k);
	buf_printf(&k, "std_%s_ms", metric);
	set_measured(o, buf_cstr(&k), st->std, st->n);
	buf_reset(&k);
	buf_printf(&k, "p90_%s_ms", metric);
	set_measured(o, buf_cstr(&k), st->p90, st->n);
	buf_reset(&k);
	buf_printf(&k, "p99_%s_ms", metric);
	set_measured(o, buf_cstr(&k), st->p99, st->n);
	buf_reset(&k);
	buf_printf(&k, "%s_samples", metric);
	set_int(o, buf_cstr(&k), st->n);
	buf_free(&k);
}

struct werr *
loadgen_summary_to_json(const struct loadgen_summary *s, json_t **out)
{
	json_t *o, *failed;
	char iso[40];
	time_t secs;
	int i;

	*out = NULL;
	if ((o = json_object()) == NULL || (failed = json_object()) == NULL) {
		json_decref(o);
		return werr_new(WEXIT_ENV, "out of memory building json");
	}
	json_object_set_new(o, "end", json_string(loadgen_end_name(s->end)));
	set_int(o, "max_concurrency", s->max_concurrency);
	set_int(o, "max_in_flight", s->max_in_flight);
	set_int(o, "num_prompts", s->num_prompts);
	set_int(o, "submitted", s->submitted);
	set_int(o, "completed", s->completed);
	set_int(o, "failed", s->failed);
	set_int(o, "not_started", s->not_started);
	for (i = 1; i < LOADGEN_OUTCOME_COUNT; i++)
		set_int(failed, loadgen_outcome_name(i),
		    s->failed_by_outcome[i]);
	json_object_set_new(o, "failed_by_class", failed);
	set_int(o, "warmups_ok", s->warmups_ok);
	set_int(o, "warmups_failed", s->warmups_failed);
	set_int(o, "preconnected", s->preconnected);
	set_int(o, "new_connections", s->new_connections);
	set_int(o, "connection_retries", s->connection_retries);
	json_object_set_new(o, "connection_reuse_stopped",
	    json_boolean(s->connection_reuse_stopped));
	set_int(o, "total_input_tokens", s->total_input_tokens);
	set_int(o, "total_output_tokens", s->total_output_tokens);
	set_int(o, "usage_server", s->usage_server);
	set_int(o, "usage_streamed", s->usage_streamed);
	set_real(o, "duration", s->duration);
	set_measured(o, "request_throughput", s->request_throughput,
	    s->completed);
	set_measured(o, "output_throughput", s->output_throughput,
	    s->completed);
	set_measured(o, "total_token_throughput", s->total_token_throughput,
	    s->completed);
	set_stat(o, "ttft", &s->ttft);
	set_stat(o, "tpot", &s->tpot);
	set_stat(o, "itl", &s->itl);
	set_stat(o, "e2el", &s->e2el);
	set_stat(o, "connect", &s->connect);
	set_int(o, "token_events", s->token_events);
	set_int(o, "coalesced_events", s->coalesced_events);
	set_int(o, "chunks", s->chunks);
	set_int(o, "reads", s->reads);
	set_int(o, "kernel_stamped_reads", s->kernel_stamped_reads);
	json_object_set_new(o, "receive_stamp", json_string(
	    s->reads == 0 ? "none" : s->kernel_stamped_reads == s->reads ?
	    "kernel" : s->kernel_stamped_reads == 0 ? "read" : "mixed"));
	set_int(o, "bytes", s->bytes);
	set_int(o, "client_workers", s->client_workers);
	set_real(o, "client_cpu_s", s->client_cpu_s);
	set_real(o, "client_cpu_fraction", s->client_cpu_fraction);
	set_real(o, "loop_lag_p99_ms", s->loop_lag_p99_ms);
	json_object_set_new(o, "client_limited",
	    json_boolean(s->client_limited));
	json_object_set_new(o, "client_scheduling", json_string(
	    s->client_scheduling != NULL ? s->client_scheduling : "normal"));
	json_object_set_new(o, "event_wait", json_string(
	    s->event_wait != NULL ? s->event_wait : "poll"));
	set_int(o, "clock_anchor_mono_ns", s->anchor_mono_ns);
	secs = (time_t)(s->anchor_realtime_ns / 1000000000ll);
	utc_iso_from_time(iso, sizeof(iso), secs);
	json_object_set_new(o, "clock_anchor_utc", json_string(iso));
	set_real(o, "clock_drift", s->clock_drift);
	json_object_set_new(o, "clock_drift_warning",
	    json_boolean(s->clock_drift_warning));
	*out = o;
	return NULL;
}
