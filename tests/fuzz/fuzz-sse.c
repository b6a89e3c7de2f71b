/*
 * fuzz-sse.c - libFuzzer harness for the chat-chunk classifier: the byte
 * scanner checked against jansson, and the skeleton cache against the
 * plain classifier, on whatever bytes the fuzzer makes.
 *
 * An input is a warm chunk, a 0x00 byte and a test chunk; without a 0x00
 * the whole input is the test chunk. Whenever the scanner decides the test
 * chunk, jansson must decide it the same way. Through a fresh cache, the
 * warm chunk and then the test chunk (twice) must be classified exactly as
 * sse_chunk_classify classifies them. The whole input is also an event
 * stream: fed whole, byte by byte and cut in three, the parser must give
 * the same events, and each event is classified through one cache and
 * without it. Any disagreement aborts, naming the check and the field.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. Must never
 * write a file, keep state from one input to the next, or leak (ASan's
 * leak check is on).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sse.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
chunk_print(const char *name, const struct sse_chunk *c)
{
	fprintf(stderr, "fuzz-sse:   %s: %s, content %zu, reasoning %zu, "
	    "tool calls %zu, usage %d, finish %s\n", name,
	    sse_chunk_kind_name(c->kind), c->content_bytes, c->reasoning_bytes,
	    c->tool_call_deltas, c->has_usage,
	    c->finish_reason != NULL ? c->finish_reason : "none");
}

/* Print what differs and in which chunk, then abort: libFuzzer keeps the
 * input. */
static void __attribute__((noreturn))
differ(const char *aname, const char *bname, const char *field,
    const struct sse_chunk *a, const struct sse_chunk *b, const char *data,
    size_t len)
{
	size_t i;

	fprintf(stderr, "fuzz-sse: %s and %s differ in '%s'\n", aname, bname,
	    field);
	chunk_print(aname, a);
	chunk_print(bname, b);
	fprintf(stderr, "fuzz-sse:   chunk (%zu bytes): ", len);
	for (i = 0; i < len && i < 512; i++) {
		unsigned char c = (unsigned char)data[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fputs(i < len ? "...\n" : "\n", stderr);
	abort();
}

/* A copy in a block of its own, so that ASan sees any read past the end
 * (the warm chunk is followed by more input). */
static char *
chunk_copy(const uint8_t *data, size_t len)
{
	char *p = xmalloc(len);

	if (len > 0)
		memcpy(p, data, len);
	return p;
}

/* The contract of sse.h: when the scanner decides, jansson agrees. */
static void
check_scanner(const char *data, size_t len)
{
	static const char us[] = "the scanner", ref[] = "jansson";
	struct sse_chunk scan, json;

	sse_chunk_scan(data, len, &scan);
	sse_chunk_parse_json(data, len, &json);
	if (scan.needs_json == 0) {
		if (scan.kind == SSE_CHUNK_UNDECIDED || scan.kind != json.kind)
			differ(us, ref, "kind", &scan, &json, data, len);
		if (scan.content_bytes != json.content_bytes)
			differ(us, ref, "content_bytes", &scan, &json, data,
			    len);
		if (scan.reasoning_bytes != json.reasoning_bytes)
			differ(us, ref, "reasoning_bytes", &scan, &json,
			    data, len);
	}
	sse_chunk_clear(&scan);
	sse_chunk_clear(&json);
}

static int
same_string(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* The cache must give exactly what sse_chunk_classify gives. */
static void
check_cached(struct sse_chunk_cache *k, const char *data, size_t len)
{
	static const char us[] = "the cache", ref[] = "sse_chunk_classify";
	struct sse_chunk a, b;

	sse_chunk_classify_cached(k, data, len, &a);
	sse_chunk_classify(data, len, &b);
	if (a.kind != b.kind)
		differ(us, ref, "kind", &a, &b, data, len);
	if (a.content_bytes != b.content_bytes)
		differ(us, ref, "content_bytes", &a, &b, data, len);
	if (a.reasoning_bytes != b.reasoning_bytes)
		differ(us, ref, "reasoning_bytes", &a, &b, data, len);
	if (a.tool_call_deltas != b.tool_call_deltas)
		differ(us, ref, "tool_call_deltas", &a, &b, data, len);
	if (a.tool_call_max_index != b.tool_call_max_index)
		differ(us, ref, "tool_call_max_index", &a, &b, data, len);
	if (a.tool_call_ids != b.tool_call_ids)
		differ(us, ref, "tool_call_ids", &a, &b, data, len);
	if (a.has_usage != b.has_usage)
		differ(us, ref, "has_usage", &a, &b, data, len);
	if (a.prompt_tokens != b.prompt_tokens)
		differ(us, ref, "prompt_tokens", &a, &b, data, len);
	if (a.completion_tokens != b.completion_tokens)
		differ(us, ref, "completion_tokens", &a, &b, data, len);
	if (!same_string(a.finish_reason, b.finish_reason))
		differ(us, ref, "finish_reason", &a, &b, data, len);
	if ((a.error == NULL) != (b.error == NULL))
		differ(us, ref, "error", &a, &b, data, len);
	sse_chunk_clear(&a);
	sse_chunk_clear(&b);
}

/* One feeding of the stream: its events, written out so that feedings can
 * be compared, each also classified (when a cache is given). */
struct feeding {
	struct buf events;
	struct sse_chunk_cache *cache;
};

static int
on_event(void *arg, const struct sse_event *ev)
{
	struct feeding *f = arg;

	if (ev->data[ev->data_len] != '\0') {
		fputs("fuzz-sse: parser: event data is not NUL-terminated\n",
		    stderr);
		abort();
	}
	buf_printf(&f->events, "%zu:", ev->type_len);
	buf_add(&f->events, ev->type, ev->type_len);
	buf_printf(&f->events, "%zu:", ev->data_len);
	buf_add(&f->events, ev->data, ev->data_len);
	if (f->cache != NULL) {
		check_scanner(ev->data, ev->data_len);
		check_cached(f->cache, ev->data, ev->data_len);
	}
	return 0;
}

/* Feed the stream in three pieces cut at cut1 and cut2, or byte by byte,
 * and write its events, the comment count and whether an event was left
 * unfinished to f->events. */
static void
feed(struct feeding *f, const char *data, size_t size, size_t cut1,
    size_t cut2, int bytewise)
{
	struct sse_parser p;
	size_t i;

	sse_parser_init(&p);
	if (bytewise) {
		for (i = 0; i < size; i++)
			sse_parser_feed(&p, data + i, 1, on_event, f);
	} else {
		sse_parser_feed(&p, data, cut1, on_event, f);
		sse_parser_feed(&p, data + cut1, cut2 - cut1, on_event, f);
		sse_parser_feed(&p, data + cut2, size - cut2, on_event, f);
	}
	buf_printf(&f->events, "|%zu comments, %zu events, pending %d",
	    p.comments, p.events, sse_parser_finish(&p));
	sse_parser_free(&p);
}

static void
same_events(const struct buf *want, const struct buf *got, const char *how)
{
	if (got->len == want->len &&
	    memcmp(got->data, want->data, want->len) == 0)
		return;
	fprintf(stderr, "fuzz-sse: parser: fed %s, the events differ\n", how);
	abort();
}

static void
check_stream(const char *data, size_t size)
{
	struct sse_chunk_cache cache;
	struct feeding whole, other;
	size_t cut1, cut2;

	sse_chunk_cache_init(&cache);
	buf_init(&whole.events);
	whole.cache = &cache;
	feed(&whole, data, size, size, size, 0);
	sse_chunk_cache_free(&cache);

	buf_init(&other.events);
	other.cache = NULL;
	/* cuts that move with the input, so they fall everywhere */
	cut1 = size > 0 ? (unsigned char)data[0] % (size + 1) : 0;
	cut2 = cut1 + (size - cut1) / 2;
	feed(&other, data, size, cut1, cut2, 0);
	same_events(&whole.events, &other.events, "in three pieces");
	buf_reset(&other.events);
	feed(&other, data, size, 0, 0, 1);
	same_events(&whole.events, &other.events, "byte by byte");
	buf_free(&other.events);
	buf_free(&whole.events);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sse_chunk_cache cache;
	const uint8_t *nul = memchr(data, 0, size);
	char *warm = NULL, *test, *all;
	size_t warm_len = 0, test_len = size;

	if (nul != NULL) {
		warm_len = (size_t)(nul - data);
		warm = chunk_copy(data, warm_len);
		test_len = size - warm_len - 1;
		test = chunk_copy(nul + 1, test_len);
	} else
		test = chunk_copy(data, size);

	check_scanner(test, test_len);
	sse_chunk_cache_init(&cache);
	if (warm != NULL) {
		check_scanner(warm, warm_len);
		check_cached(&cache, warm, warm_len);
	}
	check_cached(&cache, test, test_len);
	check_cached(&cache, test, test_len);
	sse_chunk_cache_free(&cache);

	all = chunk_copy(data, size);
	check_stream(all, size);

	free(all);
	free(test);
	free(warm);
	return 0;
}
