/*
 * simeng.c - the simulated engine at run time. See simeng.h.
 *
 * One scheduler thread runs simsched.c against CLOCK_MONOTONIC and sleeps
 * until the next step ends; connection threads wait on `progress` for
 * their tokens. Every fault decision is a hash of (seed, fault, request
 * number), so a run is reproducible. Must never print to stdout/stderr
 * (main.c does), and never hold `lock` while sleeping on anything but a
 * condition variable.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "simeng.h"
#include "simversion.h"
#include "util.h"

/* Wait on cond until woken or until the CLOCK_MONOTONIC time ns. Darwin
 * has no pthread_condattr_setclock: its relative wait is used there
 * (pthread_cond_timedwait_relative_np, <pthread.h>), as memsample.c does. */
static void
cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t ns)
{
	struct timespec ts;

#ifdef __APPLE__
	uint64_t now = mono_ns();

	ns = ns > now ? ns - now : 0;
#endif
	ts.tv_sec = (time_t)(ns / 1000000000ULL);
	ts.tv_nsec = (long)(ns % 1000000000ULL);
#ifdef __APPLE__
	pthread_cond_timedwait_relative_np(cond, lock, &ts);
#else
	pthread_cond_timedwait(cond, lock, &ts);
#endif
}

static void *
sched_thread(void *arg)
{
	struct simeng *e = arg;
	uint64_t next, kv, held = 0;

	pthread_mutex_lock(&e->lock);
	while (!e->stopping) {
		next = simsched_advance(&e->sched, mono_ns());
		if (e->sched.step_changed)
			pthread_cond_broadcast(&e->progress);
		kv = simsched_kv_resident(&e->sched);
		if (kv != held) {
			/* touching memory is slow: let writers run meanwhile */
			pthread_mutex_unlock(&e->lock);
			simmem_set_kv(&e->mem, kv);
			held = kv;
			pthread_mutex_lock(&e->lock);
			continue;
		}
		if (next == SIMSCHED_IDLE)
			pthread_cond_wait(&e->wake, &e->lock);
		else
			cond_wait_until(&e->wake, &e->lock, next);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

static void
sched_params_from(struct simsched_params *p, const struct sim_config *c)
{
	memset(p, 0, sizeof(*p));
	if (strcmp(c->schedule, "serial") == 0)
		p->mode = SIMSCHED_SERIAL;
	else if (strcmp(c->schedule, "padded") == 0)
		p->mode = SIMSCHED_PADDED;
	else
		p->mode = SIMSCHED_CONTINUOUS;
	p->prefill_rate = c->prefill_rate;
	p->itl_ns = (uint64_t)(c->itl_ms * 1e6);
	p->itl_growth = c->itl_growth;
	p->max_batch = c->max_batch;
	p->batch_window_ns = (uint64_t)(c->batch_window_ms * 1e6);
	p->kv_bytes_per_token = (uint64_t)c->kv_bytes_per_token;
	if (strcmp(c->mem_policy, "bounded") == 0)
		p->mem_policy = SIMSCHED_MEM_BOUNDED;
	else if (strcmp(c->mem_policy, "retain") == 0)
		p->mem_policy = SIMSCHED_MEM_RETAIN;
	else
		p->mem_policy = SIMSCHED_MEM_UNBOUNDED;
	p->kv_cap_bytes = (uint64_t)(c->mem_cap_mb * 1024 * 1024);
}

static struct werr *
check_version(struct simeng *e, const struct sim_config *c)
{
	struct werr *err;

	if (c->version_file != NULL)
		err = simversion_from_file(&e->dep_version, c->version_file);
	else if (c->version_from_pip != NULL)
		err = simversion_from_pip(&e->dep_version, c->version_from_pip);
	else
		return NULL;
	if (err != NULL)
		return err;
	e->broken = c->broken_versions != NULL &&
	    simversion_is_broken(e->dep_version, c->broken_versions);
	if (e->broken && strcmp(c->broken_mode, "refuse") == 0)
		return werr_new(WEXIT_ENV, "dependency version %s is broken: "
		    "refusing to start", e->dep_version);
	return NULL;
}

static void
init_sync(struct simeng *e)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->trace_lock, NULL);
	pthread_condattr_init(&ca);
#ifndef __APPLE__
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
#endif
	pthread_cond_init(&e->wake, &ca);
	pthread_cond_init(&e->progress, &ca);
	pthread_condattr_destroy(&ca);
}

struct werr *
simeng_start(struct simeng *e, const struct sim_config *c)
{
	struct simsched_params p;
	struct werr *err;
	int rc;

	memset(e, 0, sizeof(*e));
	e->cfg = c;
	init_sync(e);
	simmem_init(&e->mem);
	sched_params_from(&p, c);
	simsched_init(&e->sched, &p);
	if ((err = check_version(e, c)) != NULL)
		return err;
	/* a release that makes the engine slower without an error */
	if (e->broken && strcmp(c->broken_mode, "slow") == 0)
		e->sched.p.itl_ns *= 10;
	if (c->labels != NULL) {
		if ((err = textgen_labels_load(&e->labels, c->labels)) != NULL)
			return err;
		e->have_labels = 1;
	}
	if (c->trace != NULL && (e->trace = fopen(c->trace, "a")) == NULL)
		return werr_errno("open", c->trace);
	err = simmem_weights(&e->mem, (size_t)(c->weights_mb * 1024 * 1024));
	if (err != NULL)
		return err;
	e->ready_ns = mono_ns() + (uint64_t)(c->startup_delay * 1e9);
	if ((rc = pthread_create(&e->thread, NULL, sched_thread, e)) != 0) {
		errno = rc;
		return werr_errno("pthread_create", NULL);
	}
	e->thread_started = 1;
	return NULL;
}

void
simeng_begin_stop(struct simeng *e)
{
	pthread_mutex_lock(&e->lock);
	e->stopping = 1;
	pthread_cond_broadcast(&e->wake);
	pthread_cond_broadcast(&e->progress);
	pthread_mutex_unlock(&e->lock);
}

void
simeng_stop(struct simeng *e)
{
	simeng_begin_stop(e);
	if (e->thread_started)
		pthread_join(e->thread, NULL);
	e->thread_started = 0;
	if (e->trace != NULL)
		fclose(e->trace);
	e->trace = NULL;
	if (e->have_labels)
		textgen_labels_free(&e->labels);
	simsched_free(&e->sched);
	simmem_free(&e->mem);
	free(e->dep_version);
	e->dep_version = NULL;
}

int
simeng_ready(struct simeng *e)
{
	return mono_ns() >= e->ready_ns;
}

void
simeng_crash(void)
{
	struct rlimit rl = { 0, 0 };

	setrlimit(RLIMIT_CORE, &rl);
	signal(SIGABRT, SIG_DFL);
	abort();
}

/* Does this request get the fault with that name and rate? */
static int
fault_hits(const struct simeng *e, const char *name, double rate,
    uint64_t seq)
{
	if (rate <= 0.0)
		return 0;
	return textgen_unit((uint64_t)e->cfg->seed,
	    textgen_hash(0, name, strlen(name)), seq) < rate;
}

/* Text of one message's content: a string or an array of text parts. */
static void
content_text(struct buf *out, const json_t *content)
{
	const json_t *part, *text;
	size_t i;

	if (json_is_string(content)) {
		buf_puts(out, json_string_value(content));
		return;
	}
	json_array_foreach(content, i, part) {
		text = json_object_get(part, "text");
		if (json_is_string(text)) {
			buf_puts(out, json_string_value(text));
			buf_addch(out, '\n');
		}
	}
}

struct parsed {
	struct buf prompt;
	struct buf last_user;
	int stream;
	int include_usage;
	int max_tokens;
	const char *tool;
	const char *model;
};

static const char *
parse_body(struct parsed *p, const json_t *body)
{
	const json_t *msgs, *m, *v, *tools;
	size_t i;

	if (!json_is_object(body))
		return "the request body must be a JSON object";
	msgs = json_object_get(body, "messages");
	if (!json_is_array(msgs) || json_array_size(msgs) == 0)
		return "'messages' must be a non-empty array";
	json_array_foreach(msgs, i, m) {
		if (!json_is_object(m) || !json_is_string(json_object_get(m, "role")))
			return "each message needs a 'role'";
		content_text(&p->prompt, json_object_get(m, "content"));
		buf_addch(&p->prompt, '\n');
		if (strcmp(json_string_value(json_object_get(m, "role")),
		    "user") == 0) {
			buf_reset(&p->last_user);
			content_text(&p->last_user, json_object_get(m, "content"));
		}
	}
	p->stream = json_is_true(json_object_get(body, "stream"));
	p->include_usage = json_is_true(json_object_get(json_object_get(body,
	    "stream_options"), "include_usage"));
	p->max_tokens = -1;
	v = json_object_get(body, "max_completion_tokens");
	if (v == NULL || json_is_null(v))
		v = json_object_get(body, "max_tokens");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return "'max_tokens' must be a non-negative integer";
		p->max_tokens = json_integer_value(v) > 100000000 ? 100000000 :
		    (int)json_integer_value(v);
	}
	tools = json_object_get(body, "tools");
	if (json_is_array(tools) && json_array_size(tools) > 0 &&
	    strstr(buf_cstr(&p->last_user), "TOOL_CALL") != NULL) {
		v = json_object_get(json_object_get(json_array_get(tools, 0),
		    "function"), "name");
		p->tool = json_is_string(v) ? json_string_value(v) : "tool";
	}
	v = json_object_get(body, "model");
	p->model = json_is_string(v) ? json_string_value(v) : NULL;
	return NULL;
}

/* The stream fault of request seq (at most one), and its name. */
static enum simstream_fault
pick_stream_fault(const struct simeng *e, uint64_t seq, const char **name)
{
	const struct sim_config *c = e->cfg;

	if (c->stall > 0 && fault_hits(e, "stall", c->stall_rate, seq)) {
		*name = "stall";
		return SIMSTREAM_FAULT_STALL;
	}
	if (fault_hits(e, "malformed", c->malformed_rate, seq)) {
		*name = "malformed";
		return SIMSTREAM_FAULT_MALFORMED;
	}
	if ((e->broken && strcmp(c->broken_mode, "error_event") == 0) ||
	    fault_hits(e, "error_event", c->error_event_rate, seq)) {
		*name = "error_event";
		return SIMSTREAM_FAULT_ERROR_EVENT;
	}
	if (fault_hits(e, "reset", c->reset_rate, seq)) {
		*name = "reset";
		return SIMSTREAM_FAULT_RESET;
	}
	return SIMSTREAM_FAULT_NONE;
}

/* Plan what the request will be answered. */
static void
plan_reply(struct simeng *e, struct sim_req *r, const struct parsed *p)
{
	const struct sim_config *c = e->cfg;
	struct textgen_opts o;
	char *cid = NULL;

	memset(&o, 0, sizeof(o));
	o.seed = (uint64_t)c->seed;
	o.natural_tokens = c->output_tokens;
	o.max_tokens = p->max_tokens;
	o.reasoning_tokens = c->reasoning_tokens;
	o.tool_name = p->tool;
	o.huge_bytes = (size_t)(c->huge_event_mb * 1024 * 1024);
	if (p->tool == NULL && e->have_labels &&
	    (cid = textgen_classify_id(buf_cstr(&p->last_user))) != NULL) {
		o.answer = textgen_labels_answer(&e->labels, cid, o.seed,
		    c->accuracy);
		if (o.answer != NULL && r->fault == NULL && fault_hits(e,
		    "template_bug", c->template_bug_rate, r->seq)) {
			o.answer = textgen_template_bug_text();
			r->fault = "template_bug";
		}
	}
	if (r->fault != NULL && strcmp(r->fault, "zero_tokens") == 0)
		o.max_tokens = 0;
	textgen_plan(&r->reply, buf_cstr(&p->prompt), &o);
	if (r->reply.n == 0)
		r->reply.finish = TEXTGEN_STOP;
	free(cid);
}

static struct sim_req *
req_new(struct simeng *e, const struct parsed *p, uint64_t seq)
{
	const struct sim_config *c = e->cfg;
	struct sim_req *r = xcalloc(1, sizeof(*r));
	struct simstream_opts *so = &r->so;

	r->seq = seq;
	snprintf(r->id, sizeof(r->id), "%llu", (unsigned long long)seq);
	r->received_ns = mono_ns();
	r->stream = p->stream;
	r->status = 200;
	r->prompt_tokens = textgen_count_words(buf_cstr(&p->prompt));
	if ((e->broken && strcmp(c->broken_mode, "zero") == 0) ||
	    fault_hits(e, "zero", c->zero_rate, seq))
		r->fault = "zero_tokens";
	so->fault = SIMSTREAM_FAULT_NONE;
	if (r->fault == NULL && p->stream)
		so->fault = pick_stream_fault(e, seq, &r->fault);
	plan_reply(e, r, p);
	so->id = r->id;
	so->model = c->model;
	so->created = (long long)time(NULL);
	so->prompt_tokens = r->prompt_tokens;
	so->include_usage = p->include_usage;
	so->usage = strcmp(c->usage, "omit") == 0 ? SIMSTREAM_USAGE_OMIT :
	    strcmp(c->usage, "every") == 0 ? SIMSTREAM_USAGE_EVERY :
	    SIMSTREAM_USAGE_REQUEST;
	so->events_per_write = c->events_per_write;
	so->keepalive_every = c->keepalive_every;
	so->crlf = c->crlf;
	so->no_space = c->no_space;
	so->random_splits = c->random_splits;
	so->split_seed = textgen_mix((uint64_t)c->seed ^ seq);
	so->fault_after = c->fault_after;
	so->error_form = strcmp(c->error_form, "data") == 0 ?
	    SIMSTREAM_ERROR_DATA : strcmp(c->error_form, "data-done") == 0 ?
	    SIMSTREAM_ERROR_DATA_DONE : strcmp(c->error_form, "field") == 0 ?
	    SIMSTREAM_ERROR_FIELD : SIMSTREAM_ERROR_EVENT;
	simstream_init(&r->st, so, &r->reply);
	r->sr.prompt_tokens = r->prompt_tokens;
	r->sr.target_tokens = r->reply.n;
	if (e->trace != NULL && r->reply.n > 0)
		r->token_ns = xcalloc((size_t)r->reply.n, sizeof(uint64_t));
	return r;
}

static void
fail(struct buf *errbody, int *status, int code, const char *msg,
    const char *type)
{
	*status = code;
	simstream_error_body(errbody, msg, type, code);
}

static void write_trace(struct simeng *, struct sim_req *);

/* A request id the trace can hold as it is: printable ASCII. */
static int
printable(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < 0x20 || *s > 0x7e)
			return 0;
	return 1;
}

/* The trace line of a request answered with an error status. */
static void
trace_failure(struct simeng *e, uint64_t seq, const char *request_id,
    uint64_t received, int status)
{
	struct sim_req r;

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "%llu", (unsigned long long)seq);
	r.request_id = printable(request_id) ? (char *)request_id : NULL;
	r.received_ns = received;
	r.done_ns = mono_ns();
	r.status = status;
	r.fault = status == 500 ? "http_500" : NULL;
	write_trace(e, &r);
}

void
simeng_request_new(struct simeng *e, const json_t *body,
    const char *request_id, struct sim_req **out, int *status,
    struct buf *errbody)
{
	const struct sim_config *c = e->cfg;
	struct parsed p;
	const char *msg;
	uint64_t seq, received;
	int inflight;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	received = mono_ns();
	pthread_mutex_lock(&e->lock);
	seq = ++e->nreq;
	inflight = ++e->inflight;
	pthread_mutex_unlock(&e->lock);
	if ((e->broken && strcmp(c->broken_mode, "crash") == 0) ||
	    (c->abort_after > 0 && seq > (uint64_t)c->abort_after) ||
	    (c->abort_at_concurrency > 0 && inflight >= c->abort_at_concurrency))
		simeng_crash();
	if ((msg = parse_body(&p, body)) != NULL)
		fail(errbody, status, 400, msg, "invalid_request_error");
	else if (c->strict_model && p.model != NULL &&
	    strcmp(p.model, c->model) != 0)
		fail(errbody, status, 404, "the model does not exist",
		    "not_found_error");
	else if (fault_hits(e, "fail", c->fail_rate, seq))
		fail(errbody, status, 500, "simulated internal server error",
		    "server_error");
	else {
		*out = req_new(e, &p, seq);
		(*out)->received_ns = received;
		if (printable(request_id))
			(*out)->request_id = xstrndup(request_id, 200);
	}
	if (*out == NULL) {
		pthread_mutex_lock(&e->lock);
		e->inflight--;
		pthread_mutex_unlock(&e->lock);
		if (e->trace != NULL)
			trace_failure(e, seq, request_id, received, *status);
	}
	buf_free(&p.prompt);
	buf_free(&p.last_user);
}

int
simeng_close_fault(struct simeng *e, const char *request_id)
{
	struct sim_req r;
	uint64_t seq;

	if (e->cfg->close_rate <= 0.0)
		return 0;
	pthread_mutex_lock(&e->lock);
	seq = ++e->nclose;
	pthread_mutex_unlock(&e->lock);
	if (!fault_hits(e, "close", e->cfg->close_rate, seq))
		return 0;
	if (e->trace == NULL)
		return 1;
	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "closed-%llu", (unsigned long long)seq);
	r.request_id = printable(request_id) ? (char *)request_id : NULL;
	r.received_ns = r.done_ns = mono_ns();
	r.fault = "closed";
	write_trace(e, &r);
	return 1;
}

void
simeng_submit(struct simeng *e, struct sim_req *r)
{
	pthread_mutex_lock(&e->lock);
	simsched_submit(&e->sched, &r->sr, mono_ns());
	r->submitted = 1;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->lock);
}

int
simeng_wait(struct simeng *e, struct sim_req *r, int have, int *ready,
    int *done)
{
	int rc = 0;

	pthread_mutex_lock(&e->lock);
	while (!e->stopping && r->sr.state != SIMSCHED_REQ_DONE &&
	    r->sr.tokens_ready <= have)
		pthread_cond_wait(&e->progress, &e->lock);
	if (e->stopping)
		rc = -1;
	*ready = r->sr.tokens_ready;
	*done = r->sr.state == SIMSCHED_REQ_DONE;
	pthread_mutex_unlock(&e->lock);
	return rc;
}

int
simeng_stall(struct simeng *e)
{
	uint64_t until = mono_ns() + (uint64_t)(e->cfg->stall * 1e9);
	int rc;

	pthread_mutex_lock(&e->lock);
	while (!e->stopping && mono_ns() < until)
		cond_wait_until(&e->progress, &e->lock, until);
	rc = e->stopping ? -1 : 0;
	pthread_mutex_unlock(&e->lock);
	return rc;
}

void
simeng_stamp(struct sim_req *r, int completed, uint64_t now)
{
	int i;

	if (completed > 0 && r->first_token_ns == 0)
		r->first_token_ns = now;
	for (i = 0; i < completed; i++) {
		if (r->token_ns != NULL && r->ntoken_ns < r->reply.n)
			r->token_ns[r->ntoken_ns] = now;
		r->ntoken_ns++;
	}
}

/* The scheduler's times on the model's clock: exact (admit + prefill +
 * k * itl) however late the threads run; null where they never came. */
#define MODEL_NS(v) ((v) != 0 ? json_integer((json_int_t)(v)) : json_null())
static json_t *
model_times(const struct sim_req *r)
{
	if (!r->submitted)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o}", "submit_ns",
	    MODEL_NS(r->sr.submit_ns), "admit_ns", MODEL_NS(r->sr.admit_ns),
	    "first_token_ns", MODEL_NS(r->sr.first_token_ns),
	    "done_ns", MODEL_NS(r->sr.done_ns));
}

static void
write_trace(struct simeng *e, struct sim_req *r)
{
	json_t *o, *tok = json_array();
	char *line;
	int i, n = r->ntoken_ns < r->reply.n ? r->ntoken_ns : r->reply.n;

	for (i = 0; i < n && r->token_ns != NULL; i++)
		json_array_append_new(tok, json_integer((json_int_t)r->token_ns[i]));
	o = json_pack("{s:s, s:s?, s:I, s:o, s:o, s:I, s:i, s:i, s:i, s:o, s:b, s:o}",
	    "id", r->id, "request_id", r->request_id,
	    "received_ns", (json_int_t)r->received_ns,
	    "first_token_ns", r->first_token_ns != 0 ?
	    json_integer((json_int_t)r->first_token_ns) : json_null(),
	    "token_ns", tok, "done_ns", (json_int_t)r->done_ns,
	    "prompt_tokens", r->prompt_tokens, "completion_tokens",
	    r->stream ? r->ntoken_ns : (r->ended ? r->reply.n : 0),
	    "status", r->status,
	    "fault", r->fault != NULL ? json_string(r->fault) : json_null(),
	    "complete", r->ended, "model", model_times(r));
	line = json_dumps(o, JSON_COMPACT);
	pthread_mutex_lock(&e->trace_lock);
	fprintf(e->trace, "%s\n", line);
	fflush(e->trace);
	pthread_mutex_unlock(&e->trace_lock);
	free(line);
	json_decref(o);
}

void
simeng_request_end(struct simeng *e, struct sim_req *r)
{
	if (r->done_ns == 0)
		r->done_ns = mono_ns();
	pthread_mutex_lock(&e->lock);
	if (r->submitted && r->sr.state != SIMSCHED_REQ_DONE) {
		simsched_cancel(&e->sched, &r->sr);
		pthread_cond_signal(&e->wake);
	}
	e->inflight--;
	pthread_mutex_unlock(&e->lock);
	if (e->trace != NULL)
		write_trace(e, r);
	simstream_free(&r->st);
	textgen_reply_free(&r->reply);
	free(r->token_ns);
	free(r->request_id);
	free(r);
}
