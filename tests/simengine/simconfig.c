/*
 * simconfig.c - flags and JSON profiles of warden-simengine. See
 * simconfig.h.
 *
 * One table drives the flag parser, the profile loader and --help. Must
 * never print except in simconfig_usage(), and never start anything.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "simconfig.h"
#include "util.h"

enum opt_type {
	OPT_SECTION,
	OPT_STR,
	OPT_INT,
	OPT_DBL,
	OPT_BOOL,
};

struct opt {
	const char *name;
	enum opt_type type;
	size_t off;
	const char *arg;
	const char *help;
};

#define OPT(n, t, f, a, h) { n, t, offsetof(struct sim_config, f), a, h }
#define SECTION(title) { NULL, OPT_SECTION, 0, NULL, title }

static const struct opt opts[] = {
	SECTION("Server"),
	OPT("host", OPT_STR, host, "ADDR", "address to listen on (127.0.0.1)"),
	OPT("port", OPT_INT, port, "PORT", "TCP port; 0 picks a free one (8000)"),
	OPT("port-file", OPT_STR, port_file, "FILE",
	    "write the port to FILE once listening"),
	OPT("model", OPT_STR, model, "NAME", "served model name (sim-model)"),
	OPT("startup-delay", OPT_DBL, startup_delay, "S",
	    "answer /health with 503 for S seconds after start (0)"),
	OPT("trace", OPT_STR, trace, "FILE",
	    "append one JSON line of ground truth per finished request"),
	OPT("seed", OPT_INT, seed, "N", "seed of all replies and faults (42)"),
	OPT("strict-model", OPT_BOOL, strict_model, NULL,
	    "answer 404 when the request names another model"),
	SECTION("Serving model"),
	OPT("schedule", OPT_STR, schedule, "MODE",
	    "serial, padded or continuous (continuous)"),
	OPT("mode", OPT_STR, schedule, "MODE", "the same as --schedule"),
	OPT("prefill-rate", OPT_DBL, prefill_rate, "TOK/S",
	    "prompt tokens prefilled per second; 0 = instant (2000)"),
	OPT("itl", OPT_DBL, itl_ms, "MS",
	    "inter-token latency of one decoding request, ms (10)"),
	OPT("itl-growth", OPT_DBL, itl_growth, "F",
	    "ITL grows by F x (n - 1) with n requests decoding (0.05)"),
	OPT("max-batch", OPT_INT, max_batch, "N",
	    "requests served together; more wait (16)"),
	OPT("batch-window", OPT_DBL, batch_window_ms, "MS",
	    "padded: wait MS after the first arrival to fill a batch (0)"),
	OPT("output-tokens", OPT_INT, output_tokens, "N",
	    "length of a free-text reply before max_tokens (64)"),
	OPT("reasoning-tokens", OPT_INT, reasoning_tokens, "N",
	    "reasoning_content tokens before the content (0)"),
	SECTION("Memory"),
	OPT("weights-mb", OPT_DBL, weights_mb, "MB",
	    "allocate and touch MB at start, like model weights (0)"),
	OPT("kv-bytes-per-token", OPT_INT, kv_bytes_per_token, "B",
	    "KV cache bytes per token of each active request (0)"),
	OPT("mem-policy", OPT_STR, mem_policy, "P",
	    "unbounded, bounded (queue at --mem-cap-mb) or retain (unbounded)"),
	OPT("mem-cap-mb", OPT_DBL, mem_cap_mb, "MB",
	    "KV cap of the bounded policy"),
	SECTION("Faults (rates are fractions of requests, chosen by seed)"),
	OPT("abort-at-concurrency", OPT_INT, abort_at_concurrency, "K",
	    "abort the process when K requests are in flight (0 = off)"),
	OPT("abort-at-connections", OPT_INT, abort_at_connections, "K",
	    "abort the process when a completion request arrives while K\n"
	    "                                   client connections are open (a client at c=K that\n"
	    "                                   opened its connections first; 0 = off)"),
	OPT("abort-after", OPT_INT, abort_after, "N",
	    "abort the process when request N + 1 arrives (0 = off)"),
	OPT("fail-rate", OPT_DBL, fail_rate, "F", "answer HTTP 500 (0)"),
	OPT("zero-rate", OPT_DBL, zero_rate, "F",
	    "answer 200 with zero tokens (0)"),
	OPT("stall", OPT_DBL, stall, "S",
	    "go silent for S seconds after --fault-after tokens (0)"),
	OPT("stall-rate", OPT_DBL, stall_rate, "F",
	    "fraction of requests that stall when --stall is set (1)"),
	OPT("malformed-rate", OPT_DBL, malformed_rate, "F",
	    "send one malformed SSE line mid-stream (0)"),
	OPT("error-event-rate", OPT_DBL, error_event_rate, "F",
	    "send 'event: error' with an error object mid-stream, then end (0)"),
	OPT("reset-rate", OPT_DBL, reset_rate, "F",
	    "reset the connection (RST) mid-stream (0)"),
	OPT("close-rate", OPT_DBL, close_rate, "F",
	    "close the connection when a completion request's headers\n"
	    "                                   arrive, before reading its body or sending a byte (0)"),
	OPT("fault-after", OPT_INT, fault_after, "N",
	    "tokens sent before a mid-stream fault (2)"),
	OPT("template-bug-rate", OPT_DBL, template_bug_rate, "F",
	    "wrap classification answers in chat-template debris (0)"),
	SECTION("Fidelity task"),
	OPT("labels", OPT_STR, labels, "FILE",
	    "gold labels, JSONL {\"id\":..,\"label\":..}"),
	OPT("accuracy", OPT_DBL, accuracy, "A",
	    "probability of answering the gold label (1)"),
	SECTION("Broken versions"),
	OPT("version-file", OPT_STR, version_file, "PATH",
	    "read the dependency version from PATH"),
	OPT("version-from-pip", OPT_STR, version_from_pip, "ENVDIR:PKG",
	    "read PKG's version from ENVDIR's site-packages"),
	OPT("broken-versions", OPT_STR, broken_versions, "V1,V2",
	    "versions of the dependency that break the engine"),
	OPT("broken-mode", OPT_STR, broken_mode, "MODE",
	    "refuse (exit 3 at start), zero (zero tokens),\n"
	    "                                   crash (abort on the first request),\n"
	    "                                   error_event (a stream error mid-response) or\n"
	    "                                   slow (every token ten times later: --itl x 10)"),
	SECTION("Wire format"),
	OPT("events-per-write", OPT_INT, events_per_write, "N",
	    "SSE events per write when tokens are ready (1)"),
	OPT("realtime", OPT_BOOL, realtime, NULL,
	    "real-time scheduling for the threads that write replies, where\n"
	    "permitted, so --trace times stay next to the send on a busy machine"),
	OPT("random-splits", OPT_BOOL, random_splits, NULL,
	    "split writes at random byte offsets, also inside UTF-8"),
	OPT("crlf", OPT_BOOL, crlf, NULL, "end SSE lines with \\r\\n"),
	OPT("no-space", OPT_BOOL, no_space, NULL,
	    "write 'data:' without the space"),
	OPT("keepalive-every", OPT_INT, keepalive_every, "N",
	    "a ': keep-alive' comment before every Nth event (0 = never)"),
	OPT("huge-event-mb", OPT_DBL, huge_event_mb, "MB",
	    "make the first content token one event of MB megabytes (0)"),
	OPT("usage", OPT_STR, usage, "MODE",
	    "request (as asked), omit (never) or every (on every chunk)"),
	OPT("error-form", OPT_STR, error_form, "FORM",
	    "how an error event is written: event ('event: error'),\n"
	    "                                   data ('data: {\"error\"..}', end), data-done (the same,\n"
	    "                                   then [DONE]) or field ('error: {..}', then [DONE]) (event)"),
	SECTION("Connections"),
	OPT("keepalive-close", OPT_BOOL, keepalive_close, NULL,
	    "announce 'Keep-Alive: timeout=5, max=100', then close the\n"
	    "                                   connection after each streamed reply (llama-server)"),
	OPT("close-delay", OPT_DBL, close_delay_ms, "MS",
	    "with --keepalive-close, close MS milliseconds after the reply (0)"),
	OPT("connection-close", OPT_BOOL, connection_close, NULL,
	    "answer 'Connection: close' and close after every reply (mlx_lm)"),
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void
simconfig_defaults(struct sim_config *c)
{
	memset(c, 0, sizeof(*c));
	c->host = xstrdup("127.0.0.1");
	c->port = 8000;
	c->model = xstrdup("sim-model");
	c->seed = 42;
	c->schedule = xstrdup("continuous");
	c->prefill_rate = 2000;
	c->itl_ms = 10;
	c->itl_growth = 0.05;
	c->max_batch = 16;
	c->output_tokens = 64;
	c->mem_policy = xstrdup("unbounded");
	c->stall_rate = 1.0;
	c->fault_after = 2;
	c->accuracy = 1.0;
	c->broken_mode = xstrdup("refuse");
	c->events_per_write = 1;
	c->usage = xstrdup("request");
	c->error_form = xstrdup("event");
}

void
simconfig_free(struct sim_config *c)
{
	char **field;
	size_t i;

	/* Aliases share a field: free each once, then forget it. */
	for (i = 0; i < NOPTS; i++) {
		if (opts[i].type != OPT_STR)
			continue;
		field = (char **)((char *)c + opts[i].off);
		free(*field);
		*field = NULL;
	}
	memset(c, 0, sizeof(*c));
}

static const struct opt *
find_opt(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opts[i].name != NULL && strlen(opts[i].name) == len &&
		    strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

static int
parse_int(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < -2147483647L ||
	    v > 2147483647L)
		return -1;
	*out = (int)v;
	return 0;
}

static int
parse_dbl(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(*out))
		return -1;
	return 0;
}

static struct werr *
set_from_string(struct sim_config *c, const struct opt *o, const char *v)
{
	void *field = (char *)c + o->off;
	char **sp = field;

	switch (o->type) {
	case OPT_STR:
		free(*sp);
		*sp = xstrdup(v);
		return NULL;
	case OPT_INT:
		if (parse_int(v, field) == -1)
			return werr_usage("--%s: '%s' is not an integer",
			    o->name, v);
		return NULL;
	case OPT_DBL:
		if (parse_dbl(v, field) == -1)
			return werr_usage("--%s: '%s' is not a number",
			    o->name, v);
		return NULL;
	case OPT_BOOL:
		if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
			*(int *)field = 1;
		else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
			*(int *)field = 0;
		else
			return werr_usage("--%s: '%s' is not true or false",
			    o->name, v);
		return NULL;
	case OPT_SECTION:
		break;
	}
	return NULL;
}

struct werr *
simconfig_parse_args(struct sim_config *c, int argc, char **argv, int *help)
{
	const struct opt *o;
	const char *a, *eq, *val;
	struct werr *err;
	size_t len;
	int i;

	*help = 0;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			*help = 1;
			return NULL;
		}
		if (strncmp(a, "--", 2) != 0)
			return werr_usage("unexpected argument '%s'", a);
		a += 2;
		eq = strchr(a, '=');
		len = eq != NULL ? (size_t)(eq - a) : strlen(a);
		val = eq != NULL ? eq + 1 : NULL;
		if (len == 6 && strncmp(a, "config", 6) == 0) {
			if (val == NULL && (val = argv[++i]) == NULL)
				return werr_usage("--config needs a FILE");
			if ((err = simconfig_load_file(c, val)) != NULL)
				return err;
			continue;
		}
		if ((o = find_opt(a, len)) == NULL)
			return werr_usage("unknown option '%s'", argv[i]);
		if (o->type == OPT_BOOL && val == NULL)
			val = "true";
		if (val == NULL && (val = argv[++i]) == NULL)
			return werr_usage("--%s needs a value", o->name);
		if ((err = set_from_string(c, o, val)) != NULL)
			return err;
	}
	return NULL;
}

static struct werr *
set_from_json(struct sim_config *c, const struct opt *o, json_t *v,
    const char *path)
{
	void *field = (char *)c + o->off;
	double d;

	switch (o->type) {
	case OPT_STR:
		if (!json_is_string(v))
			break;
		free(*(char **)field);
		*(char **)field = xstrdup(json_string_value(v));
		return NULL;
	case OPT_INT:
		d = json_number_value(v);
		if (!json_is_number(v) || d != floor(d) || fabs(d) > 2e9)
			return werr_at(path, 0, 0, o->name,
			    "'%s' must be an integer", o->name);
		*(int *)field = (int)d;
		return NULL;
	case OPT_DBL:
		if (!json_is_number(v))
			return werr_at(path, 0, 0, o->name,
			    "'%s' must be a number", o->name);
		*(double *)field = json_number_value(v);
		return NULL;
	case OPT_BOOL:
		if (!json_is_boolean(v))
			return werr_at(path, 0, 0, o->name,
			    "'%s' must be true or false", o->name);
		*(int *)field = json_is_true(v);
		return NULL;
	case OPT_SECTION:
		break;
	}
	return werr_at(path, 0, 0, o->name, "'%s' must be a string", o->name);
}

struct werr *
simconfig_load_file(struct sim_config *c, const char *path)
{
	const struct opt *o;
	struct werr *err = NULL;
	json_error_t jerr;
	const char *key;
	json_t *root, *v;

	root = json_load_file(path, 0, &jerr);
	if (root == NULL)
		return werr_at(path, jerr.line, jerr.column, NULL, "%s",
		    jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return werr_at(path, 0, 0, NULL, "a profile must be an object");
	}
	json_object_foreach(root, key, v) {
		if ((o = find_opt(key, strlen(key))) == NULL)
			err = werr_at(path, 0, 0, key, "unknown option '%s'",
			    key);
		else
			err = set_from_json(c, o, v, path);
		if (err != NULL)
			break;
	}
	json_decref(root);
	return err;
}

/* The ways a broken dependency version shows (--broken-mode). */
static const char *const broken_modes[] = { "refuse", "zero", "crash",
    "error_event", "slow", NULL };

static int
one_of(const char *v, const char *a, const char *b, const char *c)
{
	return strcmp(v, a) == 0 || strcmp(v, b) == 0 || strcmp(v, c) == 0;
}

static struct werr *
check_rate(const char *name, double v)
{
	if (v < 0.0 || v > 1.0)
		return werr_usage("--%s must be between 0 and 1", name);
	return NULL;
}

struct werr *
simconfig_validate(const struct sim_config *c)
{
	const struct { const char *name; double v; } rates[] = {
		{ "fail-rate", c->fail_rate }, { "zero-rate", c->zero_rate },
		{ "stall-rate", c->stall_rate },
		{ "malformed-rate", c->malformed_rate },
		{ "error-event-rate", c->error_event_rate },
		{ "reset-rate", c->reset_rate },
		{ "close-rate", c->close_rate },
		{ "template-bug-rate", c->template_bug_rate },
		{ "accuracy", c->accuracy },
	};
	struct werr *err;
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if ((err = check_rate(rates[i].name, rates[i].v)) != NULL)
			return err;
	if (c->port < 0 || c->port > 65535)
		return werr_usage("--port must be between 0 and 65535");
	if (!one_of(c->schedule, "serial", "padded", "continuous"))
		return werr_usage("--schedule must be serial, padded or continuous");
	if (!one_of(c->mem_policy, "unbounded", "bounded", "retain"))
		return werr_usage("--mem-policy must be unbounded, bounded or retain");
	if (strcmp(c->mem_policy, "bounded") == 0 && c->mem_cap_mb <= 0)
		return werr_usage("--mem-policy bounded needs --mem-cap-mb");
	for (i = 0; broken_modes[i] != NULL &&
	    strcmp(broken_modes[i], c->broken_mode) != 0; i++)
		;
	if (broken_modes[i] == NULL)
		return werr_usage("--broken-mode must be refuse, zero, crash, "
		    "error_event or slow");
	if (!one_of(c->usage, "request", "omit", "every"))
		return werr_usage("--usage must be request, omit or every");
	if (!one_of(c->error_form, "event", "data", "data-done") &&
	    strcmp(c->error_form, "field") != 0)
		return werr_usage("--error-form must be event, data, data-done or "
		    "field");
	if (c->keepalive_close && c->connection_close)
		return werr_usage("--keepalive-close and --connection-close exclude "
		    "each other");
	if (c->max_batch < 1 || c->events_per_write < 1)
		return werr_usage("--max-batch and --events-per-write must be at least 1");
	if (c->prefill_rate < 0 || c->itl_ms < 0 || c->itl_growth < 0 ||
	    c->output_tokens < 0 || c->reasoning_tokens < 0 ||
	    c->weights_mb < 0 || c->batch_window_ms < 0 ||
	    c->kv_bytes_per_token < 0 || c->stall < 0 ||
	    c->startup_delay < 0 || c->huge_event_mb < 0 ||
	    c->fault_after < 0 || c->keepalive_every < 0 ||
	    c->abort_after < 0 || c->abort_at_concurrency < 0 ||
	    c->abort_at_connections < 0 ||
	    c->close_delay_ms < 0)
		return werr_usage("sizes, rates and durations must not be negative");
	if (c->version_file != NULL && c->version_from_pip != NULL)
		return werr_usage("--version-file and --version-from-pip exclude each other");
	if (c->version_from_pip != NULL && strchr(c->version_from_pip, ':') == NULL)
		return werr_usage("--version-from-pip wants ENVDIR:PACKAGE");
	if (c->broken_versions != NULL && c->version_file == NULL &&
	    c->version_from_pip == NULL)
		return werr_usage("--broken-versions needs --version-file or --version-from-pip");
	return NULL;
}

void
simconfig_usage(FILE *fp)
{
	struct buf b = BUF_INIT;
	size_t i;

	fprintf(fp, "usage: warden-simengine [--config FILE] [--OPTION VALUE ...]\n"
	    "\nAn OpenAI-compatible simulated LLM serving engine for testing warden.\n"
	    "Options may also come from a JSON profile (--config FILE) whose keys are\n"
	    "the option names below; later options override earlier ones.\n");
	for (i = 0; i < NOPTS; i++) {
		if (opts[i].type == OPT_SECTION) {
			fprintf(fp, "\n%s:\n", opts[i].help);
			continue;
		}
		buf_reset(&b);
		buf_printf(&b, "--%s", opts[i].name);
		if (opts[i].arg != NULL)
			buf_printf(&b, " %s", opts[i].arg);
		fprintf(fp, "  %-32s %s\n", buf_cstr(&b), opts[i].help);
	}
	fprintf(fp, "\n  %-32s %s\n  %-32s %s\n", "--config FILE",
	    "read options from a JSON profile", "--help", "show this help");
	buf_free(&b);
}
