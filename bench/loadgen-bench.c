/*
 * loadgen-bench.c - the driver of bench/loadgen-sse.sh.
 *
 *   loadgen-bench sweep URL CONCURRENCY REQUESTS MAX_TOKENS
 *	runs one load-generator sweep (after CONCURRENCY warmups) with the
 *	same chat request REQUESTS times and prints the summary JSON plus
 *	events_per_cpu_s and bytes_per_cpu_s, measured over the sweep only.
 *   loadgen-bench body MAX_TOKENS
 *	prints that request body, so curl can send the very same bytes.
 *   loadgen-bench latency URL CONCURRENCY REQUESTS MAX_TOKENS TRACE
 *	runs a sweep, then matches every request with its line in
 *	warden-simengine's --trace file (by X-Request-Id) and prints
 *	the p50/p99/max of (warden's receive time - the server's send
 *	time) over all tokens, and of (the server's receive time of the
 *	request - warden's submission) over all requests and over the
 *	first wave (the first CONCURRENCY requests), with the sweep's
 *	events per client CPU-second, workers and client_limited.
 *	Both clocks are CLOCK_MONOTONIC on the same machine.
 *   loadgen-bench side URL CONCURRENCY REQUESTS MAX_TOKENS RECORDS
 *	runs a sweep as `latency` does (as the campaign runs it), writes
 *	each timed request's token times to RECORDS (one JSON line each:
 *	id, submit_ns, tok) and prints one JSON line: the process's CPU
 *	seconds and voluntary context switches over the sweep (getrusage,
 *	every thread), requests, failures, token events, workers. The
 *	driver of bench/loadgen-peer.sh, which matches RECORDS with the
 *	engine's trace; if LOADGEN_BENCH_PERF_CTL and LOADGEN_BENCH_PERF_ACK
 *	name perf stat's --control fifos, counting is enabled for the
 *	sweep only.
 *   loadgen-bench cpu CMD [ARG...]
 *	runs CMD and prints its user+system CPU and wall seconds on stderr
 *	as one JSON line (the curl baseline is measured this way).
 *
 * A benchmark tool: it prints, and is never installed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "loadgen.h"
#include "stats.h"
#include "util.h"

static double
tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static char *
make_body(long max_tokens)
{
	return xasprintf("{\"model\":\"sim-model\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"Write a long story about a lighthouse "
	    "keeper.\"}],\"stream\":true,\"stream_options\":"
	    "{\"include_usage\":true},\"max_tokens\":%ld,\"temperature\":0}",
	    max_tokens);
}

/* Show the first few failures on stderr, so a failed bench says why. */
static void
on_record(void *arg, const struct loadgen_record *rec)
{
	int *shown = arg;

	if (rec->outcome == LOADGEN_OK || *shown >= 5)
		return;
	(*shown)++;
	fprintf(stderr, "loadgen-bench: request %zu%s: %s: %s\n", rec->index,
	    rec->warmup ? " (warmup)" : "", loadgen_outcome_name(rec->outcome),
	    rec->error);
}

static int
cmd_sweep(char **argv)
{
	struct loadgen_config cfg;
	struct loadgen_summary sum;
	struct loadgen_body *bodies;
	struct werr *err;
	json_t *o;
	char *body;
	int shown = 0;
	long c = atol(argv[1]), n = atol(argv[2]), i;

	if (c < 1 || n < 1)
		return 2;
	body = make_body(atol(argv[3]));
	bodies = xcalloc((size_t)n, sizeof(*bodies));
	for (i = 0; i < n; i++) {
		bodies[i].data = body;
		bodies[i].len = strlen(body);
		bodies[i].max_tokens = atol(argv[3]);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.url = argv[0];
	cfg.bodies = bodies;
	cfg.nbodies = (size_t)n;
	cfg.warmups = bodies;
	cfg.nwarmups = (size_t)c < (size_t)n ? (size_t)c : (size_t)n;
	cfg.concurrency = (unsigned)c;
	cfg.request_timeout_ns = 60ull * 1000000000ull;
	cfg.hang_ns = 20ull * 1000000000ull;
	/* as the campaign runs it, unless LOADGEN_BENCH_NORMAL is set */
	cfg.raise_priority = getenv("LOADGEN_BENCH_NORMAL") == NULL;
	cfg.on_record = on_record;
	cfg.arg = &shown;
	if ((err = loadgen_run(&cfg, &sum)) != NULL ||
	    (err = loadgen_summary_to_json(&sum, &o)) != NULL) {
		fprintf(stderr, "loadgen-bench: %s\n", err->msg);
		werr_free(err);
		return 1;
	}
	json_object_set_new(o, "events_per_cpu_s", json_real(
	    sum.client_cpu_s > 0 ? (double)sum.token_events / sum.client_cpu_s : 0));
	json_object_set_new(o, "bytes_per_cpu_s", json_real(
	    sum.client_cpu_s > 0 ? (double)sum.bytes / sum.client_cpu_s : 0));
	json_dumpf(o, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(o);
	free(bodies);
	free(body);
	return 0;
}

/* What the latency check keeps of each timed request. */
struct kept {
	size_t index;
	uint64_t submit_ns;
	uint64_t *tok;
	size_t ntok;
};

struct keep {
	struct kept *v;
	size_t n;
};

static void
keep_record(void *arg, const struct loadgen_record *rec)
{
	struct keep *k = arg;
	struct kept *e;

	if (rec->warmup || rec->outcome != LOADGEN_OK)
		return;
	e = &k->v[k->n++];
	e->index = rec->index;
	e->submit_ns = rec->submit_ns;
	e->ntok = rec->ntoken_ns;
	e->tok = xcalloc(e->ntok, sizeof(*e->tok));
	memcpy(e->tok, rec->token_ns, e->ntok * sizeof(*e->tok));
}

/* The trace line that is this request: the one carrying its X-Request-Id
 * ("b-INDEX"), if it has as many tokens. */
static json_t *
match_trace(json_t *by_id, const struct kept *e)
{
	char id[32];
	json_t *line;

	snprintf(id, sizeof(id), "b-%zu", e->index);
	line = json_object_get(by_id, id);
	if (line == NULL || json_array_size(json_object_get(line,
	    "token_ns")) != e->ntok)
		return NULL;
	return line;
}

/* The trace lines that carry a request id, by that id. */
static json_t *
trace_by_id(const struct buf *text)
{
	json_t *by_id = json_object(), *line;
	const char *p, *nl, *id;

	for (p = text->data; p != NULL && *p != '\0';
	    p = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if ((line = json_loadb(p, nl != NULL ? (size_t)(nl - p) :
		    strlen(p), 0, NULL)) == NULL)
			continue;
		if ((id = json_string_value(json_object_get(line,
		    "request_id"))) != NULL)
			json_object_set(by_id, id, line);
		json_decref(line);
	}
	return by_id;
}

static int
cmd_latency(char **argv)
{
	struct loadgen_config cfg;
	struct loadgen_summary sum;
	struct loadgen_body *bodies;
	struct stats_samples lat = { NULL, 0, 0 }, sub = { NULL, 0, 0 };
	struct stats_samples wave = { NULL, 0, 0 };
	struct stats_summary st, ss, ws;
	struct keep k = { NULL, 0 };
	struct buf text = BUF_INIT;
	struct werr *err;
	struct timespec pause = { 0, 100000000 };
	json_t *by_id, *line, *tok;
	char *body, *health = NULL;
	const char *v1;
	long c = atol(argv[1]), n = atol(argv[2]), i;
	size_t t, matched = 0;
	int tries;

	if (c < 1 || n < 1)
		return 2;
	body = make_body(atol(argv[3]));
	bodies = xcalloc((size_t)n, sizeof(*bodies));
	for (i = 0; i < n; i++) {
		bodies[i].data = body;
		bodies[i].len = strlen(body);
		bodies[i].max_tokens = atol(argv[3]);
	}
	k.v = xcalloc((size_t)n, sizeof(*k.v));
	memset(&cfg, 0, sizeof(cfg));
	cfg.url = argv[0];
	cfg.bodies = bodies;
	cfg.nbodies = (size_t)n;
	cfg.concurrency = (unsigned)c;
	cfg.request_id_prefix = "b-";
	cfg.raise_priority = 1;		/* as the campaign runs it */
	/* ... with its connections opened first (the health path) */
	if ((v1 = strstr(argv[0], "/v1/")) != NULL) {
		health = xasprintf("%.*s/health", (int)(v1 - argv[0]), argv[0]);
		cfg.preconnect_url = health;
	}
	cfg.on_record = keep_record;
	cfg.arg = &k;
	if ((err = loadgen_run(&cfg, &sum)) != NULL) {
		fprintf(stderr, "loadgen-bench: %s\n", err->msg);
		werr_free(err);
		return 1;
	}
	/* The server writes a request's trace line when it has finished
	 * with the connection, which may be just after the client saw the
	 * end: read the trace again until every request is there (2 s). */
	for (tries = 0; ; tries++) {
		buf_reset(&text);
		if ((err = file_read(&text, argv[4])) != NULL) {
			fprintf(stderr, "loadgen-bench: %s\n", err->msg);
			werr_free(err);
			return 1;
		}
		by_id = trace_by_id(&text);
		for (t = 0, matched = 0; t < k.n; t++)
			matched += match_trace(by_id, &k.v[t]) != NULL;
		if (matched == k.n || tries == 20)
			break;
		json_decref(by_id);
		nanosleep(&pause, NULL);
	}
	for (t = 0; t < k.n; t++) {
		if ((line = match_trace(by_id, &k.v[t])) == NULL)
			continue;
		tok = json_object_get(line, "token_ns");
		stats_samples_add(k.v[t].index < (size_t)c ? &wave : &sub,
		    (double)((int64_t)json_integer_value(json_object_get(line,
		    "received_ns")) - (int64_t)k.v[t].submit_ns) / 1000.0);
		for (i = 0; i < (long)k.v[t].ntok; i++)
			stats_samples_add(&lat, (double)((int64_t)k.v[t].tok[i] -
			    (int64_t)json_integer_value(json_array_get(tok,
			    (size_t)i))) / 1000.0);
	}
	stats_summarize(lat.v, lat.n, &st);
	stats_summarize(wave.v, wave.n, &ws);
	for (t = 0; t < wave.n; t++)	/* all requests: the wave too */
		stats_samples_add(&sub, wave.v[t]);
	stats_summarize(sub.v, sub.n, &ss);
	printf("{\"requests\":%zu,\"matched\":%zu,\"failed\":%zu,"
	    "\"tokens\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,"
	    "\"submit_engine_p50_us\":%.1f,\"submit_engine_p99_us\":%.1f,"
	    "\"submit_engine_max_us\":%.1f,\"first_wave_p50_us\":%.1f,"
	    "\"first_wave_max_us\":%.1f,\"events_per_cpu_s\":%.0f,"
	    "\"workers\":%u,\"loop_lag_p99_ms\":%.3f,"
	    "\"client_limited\":%s,\"kernel_stamped_reads\":%llu,"
	    "\"reads\":%llu}\n", k.n, matched, sum.failed, st.n,
	    st.median, st.p99, st.max, ss.median, ss.p99, ss.max, ws.median,
	    ws.max, sum.client_cpu_s > 0 ? (double)sum.token_events /
	    sum.client_cpu_s : 0, sum.client_workers, sum.loop_lag_p99_ms,
	    sum.client_limited ? "true" : "false",
	    (unsigned long long)sum.kernel_stamped_reads,
	    (unsigned long long)sum.reads);
	for (t = 0; t < k.n; t++)
		free(k.v[t].tok);
	free(k.v);
	json_decref(by_id);
	buf_free(&text);
	stats_samples_free(&lat);
	stats_samples_free(&sub);
	stats_samples_free(&wave);
	free(health);
	free(bodies);
	free(body);
	return sum.failed == 0 ? 0 : 1;
}


static int
cmd_cpu(char **argv)
{
	struct rusage ru;
	uint64_t t0 = mono_ns();
	pid_t pid;
	int status;

	if ((pid = fork()) < 0)
		return 3;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 3;
	fprintf(stderr, "{\"cpu_s\":%.6f,\"wall_s\":%.6f,\"status\":%d}\n",
	    tv_s(&ru.ru_utime) + tv_s(&ru.ru_stime),
	    (double)(mono_ns() - t0) / 1e9,
	    WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* The campaign's on_tick looks at the engine's process and log every
 * 100 ms; this one finds it well, so the coordinator wakes as often. */
static enum loadgen_tick_action
side_tick(void *arg, const struct loadgen_progress *p)
{
	(void)arg;
	(void)p;
	return LOADGEN_TICK_CONTINUE;
}

/* perf stat's control fifos, if the bench gave them: say "enable" or
 * "disable" and wait for perf's ack. */
static void
perf_say(const char *word)
{
	static FILE *ctl, *ack;
	const char *c = getenv("LOADGEN_BENCH_PERF_CTL");
	const char *a = getenv("LOADGEN_BENCH_PERF_ACK");
	char line[64];

	if (c == NULL || a == NULL)
		return;
	if (ctl == NULL && ((ctl = fopen(c, "w")) == NULL ||
	    (ack = fopen(a, "r")) == NULL))
		return;
	fprintf(ctl, "%s\n", word);
	fflush(ctl);
	(void)fgets(line, sizeof(line), ack);
}

static int
cmd_side(char **argv)
{
	struct loadgen_config cfg;
	struct loadgen_summary sum;
	struct loadgen_body *bodies;
	struct keep k = { NULL, 0 };
	struct rusage ru0, ru1;
	struct werr *err;
	FILE *f;
	char *body, *health = NULL;
	const char *v1;
	long c = atol(argv[1]), n = atol(argv[2]), i;
	size_t t, j;
	uint64_t t0, t1;

	if (c < 1 || n < 1)
		return 2;
	body = make_body(atol(argv[3]));
	bodies = xcalloc((size_t)n, sizeof(*bodies));
	for (i = 0; i < n; i++) {
		bodies[i].data = body;
		bodies[i].len = strlen(body);
		bodies[i].max_tokens = atol(argv[3]);
	}
	k.v = xcalloc((size_t)n, sizeof(*k.v));
	memset(&cfg, 0, sizeof(cfg));
	cfg.url = argv[0];
	cfg.bodies = bodies;
	cfg.nbodies = (size_t)n;
	cfg.concurrency = (unsigned)c;
	cfg.request_id_prefix = "b-";
	cfg.raise_priority = 1;		/* as the campaign runs it */
	if ((v1 = strstr(argv[0], "/v1/")) != NULL) {
		health = xasprintf("%.*s/health", (int)(v1 - argv[0]), argv[0]);
		cfg.preconnect_url = health;
	}
	cfg.on_record = keep_record;
	cfg.on_tick = side_tick;
	cfg.tick_ms = 100;
	cfg.arg = &k;
	perf_say("enable");
	getrusage(RUSAGE_SELF, &ru0);
	t0 = mono_ns();
	err = loadgen_run(&cfg, &sum);
	t1 = mono_ns();
	getrusage(RUSAGE_SELF, &ru1);
	perf_say("disable");
	if (err != NULL) {
		fprintf(stderr, "loadgen-bench: %s\n", err->msg);
		werr_free(err);
		return 1;
	}
	if ((f = fopen(argv[4], "w")) == NULL) {
		perror(argv[4]);
		return 1;
	}
	for (t = 0; t < k.n; t++) {
		fprintf(f, "{\"id\":\"b-%zu\",\"submit_ns\":%llu,\"tok\":[",
		    k.v[t].index, (unsigned long long)k.v[t].submit_ns);
		for (j = 0; j < k.v[t].ntok; j++)
			fprintf(f, "%s%llu", j > 0 ? "," : "",
			    (unsigned long long)k.v[t].tok[j]);
		fputs("]}\n", f);
		free(k.v[t].tok);
	}
	fclose(f);
	printf("{\"requests\":%ld,\"failed\":%zu,\"events\":%llu,"
	    "\"cpu_s\":%.6f,\"wall_s\":%.6f,\"nvcsw\":%ld,\"nivcsw\":%ld,"
	    "\"workers\":%u,\"client_limited\":%s}\n", n, sum.failed,
	    (unsigned long long)sum.token_events,
	    tv_s(&ru1.ru_utime) - tv_s(&ru0.ru_utime) +
	    tv_s(&ru1.ru_stime) - tv_s(&ru0.ru_stime), (double)(t1 - t0) / 1e9,
	    ru1.ru_nvcsw - ru0.ru_nvcsw, ru1.ru_nivcsw - ru0.ru_nivcsw,
	    sum.client_workers, sum.client_limited ? "true" : "false");
	free(k.v);
	free(health);
	free(bodies);
	free(body);
	return sum.failed == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	char *body;

	if (argc == 6 && strcmp(argv[1], "sweep") == 0)
		return cmd_sweep(argv + 2);
	if (argc == 7 && strcmp(argv[1], "latency") == 0)
		return cmd_latency(argv + 2);
	if (argc == 3 && strcmp(argv[1], "body") == 0) {
		body = make_body(atol(argv[2]));
		fputs(body, stdout);
		free(body);
		return 0;
	}
	if (argc == 7 && strcmp(argv[1], "side") == 0)
		return cmd_side(argv + 2);
	if (argc >= 3 && strcmp(argv[1], "cpu") == 0)
		return cmd_cpu(argv + 2);
	fprintf(stderr, "usage: loadgen-bench sweep URL C REQUESTS MAX_TOKENS\n"
	    "       loadgen-bench latency URL C REQUESTS MAX_TOKENS TRACE\n"
	    "       loadgen-bench side URL C REQUESTS MAX_TOKENS RECORDS\n"
	    "       loadgen-bench body MAX_TOKENS\n"
	    "       loadgen-bench cpu CMD [ARG...]\n");
	return 2;
}
