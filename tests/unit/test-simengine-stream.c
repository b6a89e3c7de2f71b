/*
 * test-simengine-stream.c - the SSE bytes of the simulated engine are a
 * valid OpenAI chat-completions stream in every wire-format variation,
 * and each mid-stream fault appears exactly where it was asked for.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "buf.h"
#include "simstream.h"
#include "textgen.h"
#include "util.h"

struct run {
	struct textgen_reply reply;
	struct simstream_opts o;
	struct buf out;
	int pieces;
	int max_piece;
	int completed;
	int utf8_split;		/* a piece began inside a UTF-8 character */
	enum simstream_action last;
};

static void
setup_run(struct run *r, int tokens, int reasoning)
{
	struct textgen_opts to;

	memset(r, 0, sizeof(*r));
	memset(&to, 0, sizeof(to));
	to.seed = 42;
	to.natural_tokens = tokens;
	to.max_tokens = -1;
	to.reasoning_tokens = reasoning;
	textgen_plan(&r->reply, "a prompt of six words here", &to);
	r->o.id = "9";
	r->o.model = "sim-model";
	r->o.created = 1700000000;
	r->o.prompt_tokens = 6;
	r->o.events_per_write = 1;
	r->o.fault_after = 2;
}

/* Pull the whole stream with every token ready; stop at the first action
 * other than DATA. */
static void
pull(struct run *r, size_t max)
{
	struct simstream s;
	const char *data;
	size_t len;
	int done;

	buf_init(&r->out);
	r->pieces = r->max_piece = r->completed = r->utf8_split = 0;
	simstream_init(&s, &r->o, &r->reply);
	for (;;) {
		r->last = simstream_next(&s, r->reply.n, 1, &data, &len, max,
		    &done);
		if (r->last != SIMSTREAM_DATA)
			break;
		if (((unsigned char)data[0] & 0xc0) == 0x80)
			r->utf8_split = 1;
		buf_add(&r->out, data, len);
		r->pieces++;
		if ((int)len > r->max_piece)
			r->max_piece = (int)len;
		r->completed += done;
	}
	simstream_free(&s);
}

static void
free_run(struct run *r)
{
	buf_free(&r->out);
	textgen_reply_free(&r->reply);
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Parse the data events of a stream; checks each chunk's shape and
 * returns the concatenated content and reasoning. */
static void
check_events(const char *text, struct buf *content, struct buf *reasoning,
    int *usage_chunks, const char *eol)
{
	char *copy = xstrdup(text), *ev, *save = NULL, *sep;
	json_t *o, *choices, *delta, *v;
	json_error_t jerr;
	char term[8];
	int first = 1;

	snprintf(term, sizeof(term), "%s%s", eol, eol);
	*usage_chunks = 0;
	for (ev = copy; ev != NULL && *ev != '\0'; ev = save) {
		sep = strstr(ev, term);
		assert_non_null(sep);
		*sep = '\0';
		save = sep + strlen(term);
		if (ev[0] == ':')
			continue;
		assert_true(strncmp(ev, "data:", 5) == 0);
		ev += 5;
		if (*ev == ' ')
			ev++;
		if (strcmp(ev, "[DONE]") == 0) {
			assert_string_equal(save, "");
			break;
		}
		o = json_loads(ev, 0, &jerr);
		assert_non_null(o);
		assert_string_equal(json_string_value(json_object_get(o,
		    "object")), "chat.completion.chunk");
		assert_string_equal(json_string_value(json_object_get(o, "id")),
		    "chatcmpl-9");
		choices = json_object_get(o, "choices");
		assert_true(json_is_array(choices));
		if (json_object_get(o, "usage") != NULL && json_array_size(choices) == 0)
			(*usage_chunks)++;
		delta = json_object_get(json_array_get(choices, 0), "delta");
		if (first) {
			assert_string_equal(json_string_value(json_object_get(delta,
			    "role")), "assistant");
			assert_string_equal(json_string_value(json_object_get(delta,
			    "content")), "");
			first = 0;
		} else if ((v = json_object_get(delta, "content")) != NULL)
			buf_puts(content, json_string_value(v));
		if ((v = json_object_get(delta, "reasoning_content")) != NULL)
			buf_puts(reasoning, json_string_value(v));
		json_decref(o);
	}
	free(copy);
}

static void
test_stream_is_a_valid_chat_completion_stream(void **state)
{
	struct buf content = BUF_INIT, reasoning = BUF_INIT;
	struct run r;
	char *want;
	int usage;

	setup_run(&r, 20, 3);
	r.o.include_usage = 1;
	pull(&r, 65536);
	assert_int_equal(r.last, SIMSTREAM_END);
	/* role, 23 tokens, finish, usage, [DONE] - one event per write */
	assert_int_equal(r.pieces, 27);
	assert_int_equal(r.completed, 23);
	check_events(buf_cstr(&r.out), &content, &reasoning, &usage, "\n");
	want = textgen_join(&r.reply, TEXTGEN_CONTENT);
	assert_string_equal(buf_cstr(&content), want);
	free(want);
	want = textgen_join(&r.reply, TEXTGEN_REASONING);
	assert_string_equal(buf_cstr(&reasoning), want);
	free(want);
	assert_int_equal(usage, 1);
	assert_non_null(strstr(buf_cstr(&r.out), "\"completion_tokens\":23,"));
	assert_non_null(strstr(buf_cstr(&r.out), "\"finish_reason\":\"stop\""));
	buf_free(&content);
	buf_free(&reasoning);
	free_run(&r);
}

static void
test_events_per_write_groups_events(void **state)
{
	struct run r;

	setup_run(&r, 40, 0);
	r.o.events_per_write = 8;
	pull(&r, 65536);
	/* 1 role + 40 tokens + finish + [DONE] = 43 events in 6 writes */
	assert_int_equal(r.pieces, 6);
	assert_int_equal(count(buf_cstr(&r.out), "\n\n"), 43);
	free_run(&r);
}

static void
test_stream_waits_for_tokens(void **state)
{
	struct simstream s;
	struct run r;
	const char *data;
	size_t len;
	int done;

	setup_run(&r, 5, 0);
	simstream_init(&s, &r.o, &r.reply);
	assert_int_equal(simstream_next(&s, 0, 0, &data, &len, 4096, &done),
	    SIMSTREAM_DATA);
	assert_int_equal(done, 0);		/* the role chunk */
	assert_int_equal(simstream_next(&s, 0, 0, &data, &len, 4096, &done),
	    SIMSTREAM_WAIT);
	assert_int_equal(simstream_next(&s, 1, 0, &data, &len, 4096, &done),
	    SIMSTREAM_DATA);
	assert_int_equal(done, 1);
	assert_int_equal(simstream_next(&s, 1, 0, &data, &len, 4096, &done),
	    SIMSTREAM_WAIT);
	simstream_free(&s);
	free_run(&r);
}

static void
test_crlf_no_space_and_keepalives(void **state)
{
	struct buf content = BUF_INIT, reasoning = BUF_INIT;
	struct run r;
	int usage;

	setup_run(&r, 30, 0);
	r.o.crlf = 1;
	r.o.no_space = 1;
	r.o.keepalive_every = 5;
	r.o.usage = SIMSTREAM_USAGE_EVERY;
	pull(&r, 65536);
	assert_int_equal(count(buf_cstr(&r.out), "\n"),
	    count(buf_cstr(&r.out), "\r\n"));
	assert_int_equal(count(buf_cstr(&r.out), "data: "), 0);
	assert_int_equal(count(buf_cstr(&r.out), ": keep-alive\r\n\r\n"), 6);
	/* role + 30 tokens + finish carry usage, plus the usage chunk */
	assert_int_equal(count(buf_cstr(&r.out), "\"usage\""), 33);
	check_events(buf_cstr(&r.out), &content, &reasoning, &usage, "\r\n");
	assert_int_equal(usage, 1);
	buf_free(&content);
	buf_free(&reasoning);
	free_run(&r);
}

static void
test_usage_omitted_even_when_asked(void **state)
{
	struct run r;

	setup_run(&r, 5, 0);
	r.o.include_usage = 1;
	r.o.usage = SIMSTREAM_USAGE_OMIT;
	pull(&r, 65536);
	assert_null(strstr(buf_cstr(&r.out), "usage"));
	free_run(&r);
}

static void
test_random_splits_cut_inside_utf8_and_reassemble(void **state)
{
	struct run whole, split;

	setup_run(&whole, 300, 0);
	pull(&whole, 65536);
	setup_run(&split, 300, 0);
	split.o.random_splits = 1;
	split.o.split_seed = 99;
	pull(&split, 65536);
	assert_string_equal(buf_cstr(&whole.out), buf_cstr(&split.out));
	assert_true(split.pieces > 5 * whole.pieces);
	assert_true(split.max_piece <= 24);
	assert_int_equal(split.utf8_split, 1);
	assert_int_equal(split.completed, 300);
	free_run(&whole);
	free_run(&split);
}

static void
test_huge_event_comes_in_pieces_of_the_asked_size(void **state)
{
	struct textgen_opts to;
	struct run r;

	setup_run(&r, 3, 0);
	textgen_reply_free(&r.reply);
	memset(&to, 0, sizeof(to));
	to.natural_tokens = 3;
	to.max_tokens = -1;
	to.huge_bytes = 2 * 1024 * 1024;
	textgen_plan(&r.reply, "x", &to);
	pull(&r, 4096);
	assert_true(r.out.len > 2 * 1024 * 1024);
	assert_int_equal(r.max_piece, 4096);
	assert_int_equal(r.completed, 3);
	free_run(&r);
}

static void
test_faults_happen_after_the_asked_tokens(void **state)
{
	struct simstream s;
	struct run r;
	const char *data;
	size_t len;
	int done, tokens = 0;
	enum simstream_action a;

	setup_run(&r, 10, 0);
	r.o.fault = SIMSTREAM_FAULT_STALL;
	r.o.fault_after = 4;
	r.o.events_per_write = 3;
	simstream_init(&s, &r.o, &r.reply);
	while ((a = simstream_next(&s, 10, 1, &data, &len, 65536, &done)) ==
	    SIMSTREAM_DATA)
		tokens += done;
	assert_int_equal(a, SIMSTREAM_STALL);
	assert_int_equal(tokens, 4);
	/* after the stall the stream carries on to the end */
	while ((a = simstream_next(&s, 10, 1, &data, &len, 65536, &done)) ==
	    SIMSTREAM_DATA)
		tokens += done;
	assert_int_equal(a, SIMSTREAM_END);
	assert_int_equal(tokens, 10);
	simstream_free(&s);

	r.o.fault = SIMSTREAM_FAULT_RESET;
	pull(&r, 65536);
	assert_int_equal(r.last, SIMSTREAM_RESET);
	assert_int_equal(r.completed, 4);
	buf_free(&r.out);
	free_run(&r);
}

static void
test_malformed_line_and_error_event(void **state)
{
	json_error_t jerr;
	const char *p;
	struct run r;

	setup_run(&r, 10, 0);
	r.o.fault = SIMSTREAM_FAULT_MALFORMED;
	pull(&r, 65536);
	assert_int_equal(r.last, SIMSTREAM_END);
	p = strstr(buf_cstr(&r.out), "data: {\"id\":\"chatcmpl-9\",\"choices\"");
	assert_non_null(p);
	assert_null(json_loads(p + 6, JSON_DISABLE_EOF_CHECK, &jerr));
	assert_non_null(strstr(buf_cstr(&r.out), "data: [DONE]"));
	buf_free(&r.out);

	r.o.fault = SIMSTREAM_FAULT_ERROR_EVENT;
	pull(&r, 65536);
	assert_int_equal(r.last, SIMSTREAM_END);
	assert_int_equal(r.completed, 2);
	assert_non_null(strstr(buf_cstr(&r.out), "event: error\ndata: {\"error\":"));
	assert_null(strstr(buf_cstr(&r.out), "[DONE]"));
	free_run(&r);
}

/* The error forms of the real engines, each after two tokens. */
static void
test_error_forms(void **state)
{
	const char *out;
	struct run r;

	setup_run(&r, 10, 0);
	r.o.fault = SIMSTREAM_FAULT_ERROR_EVENT;
	r.o.error_form = SIMSTREAM_ERROR_DATA;
	pull(&r, 65536);
	out = buf_cstr(&r.out);
	assert_int_equal(r.completed, 2);
	assert_non_null(strstr(out, "\n\ndata: {\"error\":{\"message\":"));
	assert_null(strstr(out, "event:"));
	assert_null(strstr(out, "[DONE]"));
	buf_free(&r.out);

	r.o.error_form = SIMSTREAM_ERROR_DATA_DONE;
	pull(&r, 65536);
	out = buf_cstr(&r.out);
	assert_int_equal(r.last, SIMSTREAM_END);
	assert_non_null(strstr(out, "}}\n\ndata: [DONE]\n\n"));
	assert_int_equal(count(out, "finish_reason\":\"stop"), 0);
	buf_free(&r.out);

	r.o.error_form = SIMSTREAM_ERROR_FIELD;
	pull(&r, 65536);
	out = buf_cstr(&r.out);
	assert_non_null(strstr(out, "\n\nerror: {\"error\":"));
	assert_non_null(strstr(out, "}}\n\ndata: [DONE]\n\n"));
	assert_int_equal(count(out, "data: {\"error\""), 0);
	free_run(&r);
}

static void
test_full_body_with_tool_call(void **state)
{
	struct textgen_opts to;
	struct textgen_reply rep;
	struct simstream_opts o;
	struct buf b = BUF_INIT;
	json_error_t jerr;
	json_t *root, *msg, *call;

	memset(&to, 0, sizeof(to));
	to.natural_tokens = 6;
	to.max_tokens = -1;
	to.tool_name = "search";
	textgen_plan(&rep, "TOOL_CALL", &to);
	memset(&o, 0, sizeof(o));
	o.id = "4";
	o.model = "m";
	o.prompt_tokens = 1;
	simstream_full_body(&b, &o, &rep);
	root = json_loads(buf_cstr(&b), 0, &jerr);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "object")),
	    "chat.completion");
	msg = json_object_get(json_array_get(json_object_get(root, "choices"),
	    0), "message");
	assert_string_equal(json_string_value(json_object_get(msg, "content")), "");
	call = json_array_get(json_object_get(msg, "tool_calls"), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    call, "function"), "name")), "search");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(root, "choices"), 0), "finish_reason")), "tool_calls");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    root, "usage"), "completion_tokens")), 6);
	json_decref(root);
	buf_free(&b);
	textgen_reply_free(&rep);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_is_a_valid_chat_completion_stream),
		cmocka_unit_test(test_events_per_write_groups_events),
		cmocka_unit_test(test_stream_waits_for_tokens),
		cmocka_unit_test(test_crlf_no_space_and_keepalives),
		cmocka_unit_test(test_usage_omitted_even_when_asked),
		cmocka_unit_test(test_random_splits_cut_inside_utf8_and_reassemble),
		cmocka_unit_test(test_huge_event_comes_in_pieces_of_the_asked_size),
		cmocka_unit_test(test_faults_happen_after_the_asked_tokens),
		cmocka_unit_test(test_malformed_line_and_error_event),
		cmocka_unit_test(test_error_forms),
		cmocka_unit_test(test_full_body_with_tool_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
