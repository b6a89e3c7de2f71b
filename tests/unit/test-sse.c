/*
 * test-sse.c - the SSE parser and the chunk classifier against the
 * recorded streams in tests/fixtures/sse.
 *
 * One driver for every fixture NAME.sse, with NAME.expect saying which
 * events must come out (type, data, kind, byte counts), whether the stream
 * ends inside an event, and how many comment lines it holds. Each stream is
 * fed whole, byte by byte, cut at every point (1-way split) and cut at
 * every pair of points (2-way split); the same events must come out every
 * time. Every event's payload is classified by the byte scanner and by
 * jansson, and both must agree with the expectation. Adding a case is
 * adding two files.
 */
#include "config.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "sse.h"
#include "util.h"

struct want_event {
	const char *type;
	const char *data;
	size_t data_len;
	const char *kind;	/* NULL for non-message events */
	size_t content_bytes, reasoning_bytes, tool_call_deltas;
};

struct fixture {
	char *name;
	struct buf stream;
	json_t *expect;
	struct want_event *events;
	size_t nevents;
	int unterminated;
	size_t comments;
};

struct fixtures {
	struct fixture *v;
	size_t n;
};

/* What one feeding produced, compared as it comes out. */
struct check {
	const struct fixture *fx;
	size_t seen;
	int mismatch;		/* first bad event + 1, or 0 */
};

static const char *
fixture_dir(void)
{
	static char *dir;
	const char *top = getenv("TOP_SRCDIR");

	if (dir == NULL)
		dir = path_join(top != NULL ? top : ".", "tests/fixtures/sse");
	return dir;
}

static size_t
json_size(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (size_t)json_integer_value(v) : 0;
}

static void
fixture_load(struct fixture *fx, const char *dir, const char *name)
{
	struct buf path = BUF_INIT;
	json_error_t jerr;
	json_t *evs, *ev;
	size_t i;

	fx->name = xstrndup(name, strlen(name) - 4);
	buf_printf(&path, "%s/%s", dir, name);
	buf_init(&fx->stream);
	assert_null(file_read(&fx->stream, buf_cstr(&path)));
	buf_reset(&path);
	buf_printf(&path, "%s/%s.expect", dir, fx->name);
	fx->expect = json_load_file(buf_cstr(&path), 0, &jerr);
	if (fx->expect == NULL)
		fail_msg("%s: %s", buf_cstr(&path), jerr.text);
	buf_free(&path);
	evs = json_object_get(fx->expect, "events");
	assert_true(json_is_array(evs));
	fx->nevents = json_array_size(evs);
	fx->events = xcalloc(fx->nevents, sizeof(*fx->events));
	json_array_foreach(evs, i, ev) {
		fx->events[i].type = json_string_value(json_object_get(ev,
		    "type"));
		fx->events[i].data = json_string_value(json_object_get(ev,
		    "data"));
		fx->events[i].data_len = json_string_length(json_object_get(ev,
		    "data"));
		fx->events[i].kind = json_string_value(json_object_get(ev,
		    "kind"));
		fx->events[i].content_bytes = json_size(ev, "content_bytes");
		fx->events[i].reasoning_bytes = json_size(ev, "reasoning_bytes");
		fx->events[i].tool_call_deltas = json_size(ev,
		    "tool_call_deltas");
		assert_non_null(fx->events[i].type);
		assert_non_null(fx->events[i].data);
	}
	fx->unterminated = json_is_true(json_object_get(fx->expect,
	    "unterminated"));
	fx->comments = json_size(fx->expect, "comments");
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fixture *)a)->name,
	    ((const struct fixture *)b)->name);
}

static int
setup_fixtures(void **state)
{
	struct fixtures *fs = xcalloc(1, sizeof(*fs));
	struct dirent *de;
	DIR *d;

	d = opendir(fixture_dir());
	if (d == NULL)
		fail_msg("cannot open %s", fixture_dir());
	while ((de = readdir(d)) != NULL) {
		if (!str_endswith(de->d_name, ".sse"))
			continue;
		fs->v = xrealloc(fs->v, (fs->n + 1) * sizeof(*fs->v));
		memset(&fs->v[fs->n], 0, sizeof(fs->v[0]));
		fixture_load(&fs->v[fs->n++], fixture_dir(), de->d_name);
	}
	closedir(d);
	qsort(fs->v, fs->n, sizeof(*fs->v), name_cmp);
	*state = fs;
	return 0;
}

static int
teardown_fixtures(void **state)
{
	struct fixtures *fs = *state;
	size_t i;

	for (i = 0; i < fs->n; i++) {
		free(fs->v[i].name);
		buf_free(&fs->v[i].stream);
		json_decref(fs->v[i].expect);
		free(fs->v[i].events);
	}
	free(fs->v);
	free(fs);
	return 0;
}

static int
on_event(void *arg, const struct sse_event *ev)
{
	struct check *c = arg;
	const struct want_event *w;

	if (c->mismatch != 0)
		return 0;
	if (c->seen >= c->fx->nevents) {
		c->mismatch = (int)c->seen + 1;
		return 0;
	}
	w = &c->fx->events[c->seen++];
	if (ev->type_len != strlen(w->type) ||
	    memcmp(ev->type, w->type, ev->type_len) != 0 ||
	    ev->data_len != w->data_len ||
	    memcmp(ev->data, w->data, ev->data_len) != 0 ||
	    ev->data[ev->data_len] != '\0')
		c->mismatch = (int)c->seen;
	return 0;
}

/* Feed the stream cut at the given points (ascending); check the result. */
static void
feed_cut(const struct fixture *fx, const size_t *cuts, size_t ncuts)
{
	/* one parser for all cuts (finish resets it), so the cubic number
	 * of feedings costs no allocation */
	static struct sse_parser p;
	static int ready;
	struct check c = { fx, 0, 0 };
	size_t from = 0, i, to;
	int pending;

	if (!ready) {
		sse_parser_init(&p);
		ready = 1;
	}
	p.comments = 0;
	for (i = 0; i <= ncuts; i++) {
		to = i < ncuts ? cuts[i] : fx->stream.len;
		sse_parser_feed(&p, fx->stream.data + from, to - from,
		    on_event, &c);
		from = to;
	}
	pending = sse_parser_finish(&p);
	if (c.mismatch != 0 || c.seen != fx->nevents ||
	    pending != fx->unterminated || p.comments != fx->comments)
		fail_msg("%s: cut at %zu%s%zu: event %d of %zu wrong, %zu seen,"
		    " pending %d, comments %zu", fx->name,
		    ncuts > 0 ? cuts[0] : 0, ncuts > 1 ? " and " : " ",
		    ncuts > 1 ? cuts[1] : 0, c.mismatch, fx->nevents, c.seen,
		    pending, p.comments);
}

static void
test_fixtures_found(void **state)
{
	struct fixtures *fs = *state;

	/* the driver must not pass by finding nothing */
	assert_true(fs->n >= 15);
}

static void
test_whole_and_bytewise(void **state)
{
	struct fixtures *fs = *state;
	struct sse_parser p;
	struct check c;
	size_t i, k;

	for (i = 0; i < fs->n; i++) {
		feed_cut(&fs->v[i], NULL, 0);
		memset(&c, 0, sizeof(c));
		c.fx = &fs->v[i];
		sse_parser_init(&p);
		for (k = 0; k < fs->v[i].stream.len; k++)
			sse_parser_feed(&p, fs->v[i].stream.data + k, 1,
			    on_event, &c);
		assert_int_equal(sse_parser_finish(&p), fs->v[i].unterminated);
		assert_int_equal(c.mismatch, 0);
		assert_int_equal(c.seen, fs->v[i].nevents);
		sse_parser_free(&p);
	}
}

static void
test_every_split(void **state)
{
	struct fixtures *fs = *state;
	size_t i, a, cut[1];

	for (i = 0; i < fs->n; i++)
		for (a = 0; a <= fs->v[i].stream.len; a++) {
			cut[0] = a;
			feed_cut(&fs->v[i], cut, 1);
		}
}

static void
test_every_two_way_split(void **state)
{
	struct fixtures *fs = *state;
	size_t i, a, b, cut[2], len;

	for (i = 0; i < fs->n; i++) {
		len = fs->v[i].stream.len;
		/* cost is cubic in the length: keep recorded streams small */
		assert_true(len <= 4096);
		for (a = 1; a < len; a++)
			for (b = a + 1; b < len; b++) {
				cut[0] = a;
				cut[1] = b;
				feed_cut(&fs->v[i], cut, 2);
			}
	}
}

/* The scanner (when it decides), jansson, and the expectation agree. */
/* Where the scanner decided (needs_json 0), it must agree with jansson
 * on everything a record takes from a chunk. 1 when it agrees. */
static int
scan_agrees(const struct sse_chunk *scan, const struct sse_chunk *json)
{
	if (scan->needs_json != 0)
		return 1;
	if (scan->kind != json->kind ||
	    scan->content_bytes != json->content_bytes ||
	    scan->reasoning_bytes != json->reasoning_bytes ||
	    scan->has_usage != json->has_usage ||
	    scan->prompt_tokens != json->prompt_tokens ||
	    scan->completion_tokens != json->completion_tokens)
		return 0;
	if ((scan->finish_reason == NULL) != (json->finish_reason == NULL))
		return 0;
	return scan->finish_reason == NULL ||
	    strcmp(scan->finish_reason, json->finish_reason) == 0;
}

static void
check_classify(const char *fxname, size_t k, const struct want_event *w)
{
	struct sse_chunk scan, json, both;

	sse_chunk_scan(w->data, w->data_len, &scan);
	sse_chunk_parse_json(w->data, w->data_len, &json);
	sse_chunk_classify(w->data, w->data_len, &both);
	if (strcmp(sse_chunk_kind_name(json.kind), w->kind) != 0 ||
	    json.content_bytes != w->content_bytes ||
	    json.reasoning_bytes != w->reasoning_bytes ||
	    json.tool_call_deltas != w->tool_call_deltas)
		fail_msg("%s event %zu: jansson says %s %zu/%zu/%zu, want %s",
		    fxname, k, sse_chunk_kind_name(json.kind),
		    json.content_bytes, json.reasoning_bytes,
		    json.tool_call_deltas, w->kind);
	if (!scan_agrees(&scan, &json))
		fail_msg("%s event %zu: scanner says %s %zu/%zu, jansson %s",
		    fxname, k, sse_chunk_kind_name(scan.kind),
		    scan.content_bytes, scan.reasoning_bytes,
		    sse_chunk_kind_name(json.kind));
	assert_int_equal(both.kind, json.kind);
	assert_int_equal(both.content_bytes, json.content_bytes);
	sse_chunk_clear(&scan);
	sse_chunk_clear(&json);
	sse_chunk_clear(&both);
}

static void
test_scanner_and_jansson_agree(void **state)
{
	struct fixtures *fs = *state;
	size_t i, k, decided = 0, tokens = 0;
	struct sse_chunk c;

	for (i = 0; i < fs->n; i++)
		for (k = 0; k < fs->v[i].nevents; k++) {
			if (fs->v[i].events[k].kind == NULL)
				continue;
			check_classify(fs->v[i].name, k, &fs->v[i].events[k]);
			sse_chunk_scan(fs->v[i].events[k].data,
			    fs->v[i].events[k].data_len, &c);
			decided += c.needs_json == 0;
			tokens += c.needs_json == 0 && c.kind == SSE_CHUNK_TOKEN;
			sse_chunk_clear(&c);
		}
	/* the hot path really decides the plain chunks by itself */
	assert_true(tokens >= 40);
	assert_true(decided >= 60);
}

/* Payloads chosen to trip a scanner; the two paths must still agree. */
static void
test_tricky_payloads(void **state)
{
	static const char *payloads[] = {
		"{\"choices\":[{\"delta\":{\"content\":\"a\xff\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\xc3\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\xed\xa0\x80\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\\u20ac\\u0041\\u07ff\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\\ud800\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\\udc00x\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\\u0000\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\\x\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"tab\there\"}}]}",
		"{\"created\":123456789012345678901234,\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
		"{\"created\":1e999,\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
		"{\"created\":01,\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
		"{\"created\":-,\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"}}]} x",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}  \n",
		"{\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":5}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"}}],}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"}},]}",
		"{\"choices\":[{\"delta\":{\"cont\\u0065nt\":\"a\"}}]}",
		"{\"choices\":[1]}",
		"{\"choices\":{}}",
		"{\"choices\":null}",
		"{}",
		"[]",
		"\"x\"",
		"",
		"[DONE] ",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":7}]}",
		"{\"choices\":[{\"delta\":null}]}",
		"{\"choices\":[{\"delta\":{\"tool_calls\":null,\"content\":\"z\"}}]}",
		"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c\"}]}}]}",
		"{\"choices\":[{\"message\":{\"content\":\"a\"}}]}",
		"{\"choices\":[{\"delta\":{\"function_call\":{\"name\":\"f\"}}}]}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}",
		"{\"choices\":[],\"usage\":null}",
		"{\"error\":null,\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}",
		"{\"error\":\"plain\"}",
		"{\"object\":\"error\",\"message\":\"m\"}",
		" \t{ \"choices\" : [ { \"delta\" : { \"content\" : \"sp\" } } ] } ",
		"{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],\"choices\":[]}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"}}",
		"{\"choices\":[{\"delta\":{\"content\":\"a}}]}",
		"{\"x\":tru,\"choices\":[]}",
		"{\"x\":.5,\"choices\":[]}",
		"{\"x\":1.,\"choices\":[]}",
		"{\"x\":1e,\"choices\":[]}",
		/* found by fuzz-sse: jansson keeps the last duplicate key,
		 * and compares the decoded object value */
		"{\"choices\":[{\"delta\":{\"content\":\"!\"},\"delta\":null}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"},\"delta\":{\"content\":\"b\"}}]}",
		"{\"object\":\"\\u0065rror\",\"choices\":[]}",
		/* finish reasons and usage, which the scanner decides */
		"{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}",
		"{\"choices\":[{\"delta\":{},\"finish_reason\":\"\"}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"length\"}]}",
		"{\"choices\":[{\"finish_reason\":\"st\\u006fp\"}]}",
		"{\"choices\":[{\"finish_reason\":null,\"finish_reason\":\"stop\"}]}",
		"{\"choices\":[{\"finish_reason\":\"stop\",\"finish_reason\":null}]}",
		"{\"choices\":[{\"finish_reason\":\"a\"},{\"finish_reason\":\"b\"}]}",
		"{\"choices\":[{\"finish_reason\":null},{\"finish_reason\":\"b\"}]}",
		"{\"choices\":[{\"finish_reason\":[]}]}",
		"{\"choices\":[],\"usage\":{}}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":-3,\"completion_tokens\":0}}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":3.0,\"completion_tokens\":4}}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":3e1,\"completion_tokens\":4}}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":null,\"completion_tokens\":\"4\"}}",
		"{\"choices\":[],\"usage\":{\"completion_tokens\":4,\"completion_tokens\":5}}",
		"{\"choices\":[],\"usage\":{\"completion_tokens\":123456789012345678}}",
		"{\"choices\":[],\"usage\":{\"completion_tokens\":1234567890123456789}}",
		"{\"choices\":[],\"usage\":{\"x\":{\"y\":[1,2]},\"completion_tokens\":2}}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":1},\"usage\":null}",
		"{\"choices\":[],\"usage\":null,\"usage\":{\"prompt_tokens\":1}}",
		"{\"choices\":[],\"usage\":[1]}",
		"{\"choices\":[],\"usage\":7}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":1}}",
		"{\"choices\":[{\"delta\":{}}],\"usage\":{\"prompt_tokens\":2}}",
	};
	struct sse_chunk scan, json;
	size_t i, len;

	for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		len = strlen(payloads[i]);
		sse_chunk_scan(payloads[i], len, &scan);
		sse_chunk_parse_json(payloads[i], len, &json);
		if (!scan_agrees(&scan, &json))
			fail_msg("payload %zu: scanner %s %zu, jansson %s %zu",
			    i, sse_chunk_kind_name(scan.kind),
			    scan.content_bytes, sse_chunk_kind_name(json.kind),
			    json.content_bytes);
		sse_chunk_clear(&scan);
		sse_chunk_clear(&json);
	}
}

/* The scanner reads plain ASCII eight bytes at a time: put each kind of
 * byte it must stop for at every position of strings of every length
 * around that step, and check it still agrees with jansson. */
static void
test_strings_at_every_offset(void **state)
{
	static const char *specials[] = {
		"\\\"", "\\n", "\\u00e9", "\xc3\xa9", "\xe2\x82\xac",
		"\x01", "\x1f", "\x7f", "\xff", "\\", " ", "~",
	};
	struct sse_chunk scan, json;
	struct buf b = BUF_INIT;
	size_t len, at, k, i;

	for (k = 0; k < sizeof(specials) / sizeof(specials[0]); k++)
		for (len = 0; len <= 40; len++)
			for (at = 0; at <= len; at++) {
				buf_reset(&b);
				buf_puts(&b, "{\"id\":\"");
				for (i = 0; i < len; i++)
					buf_puts(&b, i == at ? specials[k] : "x");
				buf_puts(&b, "\",\"choices\":[{\"delta\":"
				    "{\"content\":\"");
				for (i = 0; i < len; i++)
					buf_puts(&b, i == at ? specials[k] : "y");
				buf_puts(&b, "\"}}]}");
				sse_chunk_scan(b.data, b.len, &scan);
				sse_chunk_parse_json(b.data, b.len, &json);
				if (scan.needs_json == 0 &&
				    (scan.kind != json.kind ||
				    scan.content_bytes != json.content_bytes))
					fail_msg("special %zu, length %zu, at "
					    "%zu: scanner %s %zu, jansson %s %zu",
					    k, len, at,
					    sse_chunk_kind_name(scan.kind),
					    scan.content_bytes,
					    sse_chunk_kind_name(json.kind),
					    json.content_bytes);
				/* and decides every valid one itself */
				if (json.kind == SSE_CHUNK_TOKEN &&
				    scan.needs_json != 0)
					fail_msg("special %zu, length %zu, at "
					    "%zu: the scanner gave up", k, len,
					    at);
				sse_chunk_clear(&scan);
				sse_chunk_clear(&json);
			}
	buf_free(&b);
}

static void
assert_same_chunk(const char *what, size_t k, const struct sse_chunk *a,
    const struct sse_chunk *b)
{
	if (a->kind != b->kind || a->content_bytes != b->content_bytes ||
	    a->reasoning_bytes != b->reasoning_bytes ||
	    a->tool_call_deltas != b->tool_call_deltas ||
	    a->has_usage != b->has_usage ||
	    (a->finish_reason == NULL) != (b->finish_reason == NULL))
		fail_msg("%s %zu: cached %s %zu, plain %s %zu", what, k,
		    sse_chunk_kind_name(a->kind), a->content_bytes,
		    sse_chunk_kind_name(b->kind), b->content_bytes);
}

/* Every fixture stream, in order, through one cache: the same decisions
 * as without it, and most plain token chunks decided by the cache. */
static void
test_cache_agrees_on_fixtures(void **state)
{
	struct fixtures *fs = *state;
	struct sse_chunk_cache cache;
	struct sse_chunk a, b;
	const struct want_event *w;
	size_t i, k, hits = 0;

	for (i = 0; i < fs->n; i++) {
		sse_chunk_cache_init(&cache);
		for (k = 0; k < fs->v[i].nevents; k++) {
			w = &fs->v[i].events[k];
			if (w->kind == NULL)
				continue;
			sse_chunk_classify_cached(&cache, w->data, w->data_len,
			    &a);
			sse_chunk_classify(w->data, w->data_len, &b);
			assert_same_chunk(fs->v[i].name, k, &a, &b);
			sse_chunk_clear(&a);
			sse_chunk_clear(&b);
		}
		hits += cache.hits;
		sse_chunk_cache_free(&cache);
	}
	assert_true(hits >= 20);
}

/* A kept skeleton with every kind of middle that could fool it. */
static void
test_cache_is_not_fooled(void **state)
{
	static const char *pre = "{\"id\":\"c1\",\"choices\":[{\"index\":0,"
	    "\"delta\":{\"content\":";
	static const char *post = "},\"finish_reason\":null}]}";
	static const char *middles[] = {
		"\"plain\"", "\"caf\xc3\xa9\"", "\"\"", "\"a\",\"content\":\"b\"",
		"\"a\",\"x\":\"b\"", "\"a\\\"", "\"a\\\"b\"", "\"\\u0000\"",
		"\"\xff\"", "\"\x01\"", "\"a\" \"b\"", "\"a\"}},{\"delta\":{\"content\":\"b\"",
		"\"a\"},\"usage\":{\"prompt_tokens\":1},\"x\":{\"y\":\"b\"",
		"\"\\ud800\"", "\"\\n\\t\\u20ac\"", "\"x\"", "null", "\"",
		"\"a\\\\\"", "\"long long long long long long long\"",
	};
	struct sse_chunk_cache cache;
	struct sse_chunk a, b;
	struct buf chunk = BUF_INIT;
	size_t i;

	sse_chunk_cache_init(&cache);
	for (i = 0; i < sizeof(middles) / sizeof(middles[0]); i++) {
		/* keep the skeleton from a plain chunk, then try this one */
		buf_reset(&chunk);
		buf_printf(&chunk, "%s\"warm\"%s", pre, post);
		sse_chunk_classify_cached(&cache, chunk.data, chunk.len, &a);
		sse_chunk_clear(&a);
		assert_true(cache.valid);
		buf_reset(&chunk);
		buf_printf(&chunk, "%s%s%s", pre, middles[i], post);
		sse_chunk_classify_cached(&cache, chunk.data, chunk.len, &a);
		sse_chunk_classify(chunk.data, chunk.len, &b);
		assert_same_chunk("middle", i, &a, &b);
		sse_chunk_clear(&a);
		sse_chunk_clear(&b);
	}
	assert_true(cache.hits >= 5);
	sse_chunk_cache_free(&cache);
	buf_free(&chunk);
}

static void
test_jansson_fields(void **state)
{
	const char *usage = "{\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":4,\"total_tokens\":7}}";
	const char *tools = "{\"choices\":[{\"delta\":{\"content\":null,"
	    "\"tool_calls\":[{\"index\":0,\"id\":\"a\"},{\"index\":2,"
	    "\"id\":\"b\"}]},\"finish_reason\":\"tool_calls\"}]}";
	const char *err = "{\"error\":{\"message\":\"out of memory\"}}";
	struct sse_chunk c;

	sse_chunk_classify(usage, strlen(usage), &c);
	assert_int_equal(c.kind, SSE_CHUNK_USAGE);
	assert_int_equal(c.prompt_tokens, 3);
	assert_int_equal(c.completion_tokens, 4);
	sse_chunk_clear(&c);
	sse_chunk_classify(tools, strlen(tools), &c);
	assert_int_equal(c.kind, SSE_CHUNK_TOKEN);
	assert_int_equal(c.tool_call_deltas, 2);
	assert_int_equal(c.tool_call_max_index, 2);
	assert_int_equal(c.tool_call_ids, 2);
	assert_string_equal(c.finish_reason, "tool_calls");
	sse_chunk_clear(&c);
	sse_chunk_classify(err, strlen(err), &c);
	assert_int_equal(c.kind, SSE_CHUNK_ERROR);
	assert_string_equal(c.error, "out of memory");
	sse_chunk_clear(&c);
	/* the scanner decides a plain usage chunk and finish reason */
	sse_chunk_scan(usage, strlen(usage), &c);
	assert_int_equal(c.needs_json, 0);
	assert_int_equal(c.kind, SSE_CHUNK_USAGE);
	assert_int_equal(c.completion_tokens, 4);
	sse_chunk_clear(&c);
	sse_chunk_scan(tools, strlen(tools), &c);
	assert_true(c.needs_json & SSE_NEED_TOOL_CALLS);
	assert_string_equal(c.finish_reason, "tool_calls");
	sse_chunk_clear(&c);
}

/* Parser rules the fixtures do not isolate. */
struct collected {
	struct buf all;		/* "type|data;" per event */
};

static int
collect(void *arg, const struct sse_event *ev)
{
	struct collected *c = arg;

	buf_add(&c->all, ev->type, ev->type_len);
	buf_addch(&c->all, '|');
	buf_add(&c->all, ev->data, ev->data_len);
	buf_addch(&c->all, ';');
	return 0;
}

static const char *
parse_pieces(struct collected *c, const char *first, const char *second)
{
	struct sse_parser p;

	buf_reset(&c->all);
	sse_parser_init(&p);
	sse_parser_feed(&p, first, strlen(first), collect, c);
	if (second != NULL)
		sse_parser_feed(&p, second, strlen(second), collect, c);
	sse_parser_finish(&p);
	sse_parser_free(&p);
	return buf_cstr(&c->all);
}

static void
test_parser_rules(void **state)
{
	struct collected c = { BUF_INIT };

	/* \r at the end of one read, \n at the start of the next: one EOL */
	assert_string_equal(parse_pieces(&c, "data: a\r", "\ndata: b\r\n\r\n"),
	    "message|a\nb;");
	/* only one leading space is dropped; "data" alone is an empty line */
	assert_string_equal(parse_pieces(&c, "data:  x\n\ndata\n\n", NULL),
	    "message| x;message|;");
	/* a blank line with no data dispatches nothing, resets the type */
	assert_string_equal(parse_pieces(&c,
	    "event: error\n\ndata: y\n\n", NULL), "message|y;");
	/* the event type applies to one event only */
	assert_string_equal(parse_pieces(&c,
	    "event: error\ndata: e\n\ndata: m\n\n", NULL),
	    "error|e;message|m;");
	/* id, retry and unknown fields are ignored, comments too */
	assert_string_equal(parse_pieces(&c,
	    "id: 1\nretry: 10\nfoo: bar\n: hi\ndata: z\n\n", NULL),
	    "message|z;");
	/* an event without its blank line at end of stream is dropped */
	assert_string_equal(parse_pieces(&c, "data: a\n\ndata: b\n", NULL),
	    "message|a;");
	buf_free(&c.all);
}

static int
stop_after_first(void *arg, const struct sse_event *ev)
{
	(*(int *)arg)++;
	return 7;
}

static void
test_callback_stops_feed(void **state)
{
	struct sse_parser p;
	const char *s = "data: 1\n\ndata: 2\n\n";
	int n = 0;

	sse_parser_init(&p);
	assert_int_equal(sse_parser_feed(&p, s, strlen(s), stop_after_first,
	    &n), 7);
	assert_int_equal(n, 1);
	sse_parser_free(&p);
}

static int
count_event(void *arg, const struct sse_event *ev)
{
	(void)ev;
	(*(int *)arg)++;
	return 0;
}

/* Feed s in pieces of step bytes; the first nonzero return, or 0. */
static int
feed_steps(struct sse_parser *p, const char *s, size_t len, size_t step,
    int *events)
{
	size_t off;
	int rc;

	for (off = 0; off < len; off += step) {
		rc = sse_parser_feed(p, s + off, len - off < step ? len - off :
		    step, count_event, events);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static void
test_event_bound(void **state)
{
	struct sse_parser p;
	struct buf s = BUF_INIT;
	size_t i, steps[] = { 1, 7, 1000, 1 << 20 };
	int n;

	(void)state;
	/* A line of max_event bytes passes, whatever the reads; an event
	 * whose data lines pass max_event together is oversized. */
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		sse_parser_init(&p);
		p.max_event = 4096;
		buf_reset(&s);
		buf_puts(&s, "data: ");
		while (s.len < 4096)
			buf_addch(&s, 'x');
		buf_puts(&s, "\n\n");
		n = 0;
		assert_int_equal(feed_steps(&p, s.data, s.len, steps[i], &n), 0);
		assert_int_equal(n, 1);
		/* One byte more is oversized. */
		buf_reset(&s);
		buf_puts(&s, "data: ");
		while (s.len < 4097)
			buf_addch(&s, 'x');
		buf_puts(&s, "\n\n");
		n = 0;
		assert_int_equal(feed_steps(&p, s.data, s.len, steps[i], &n),
		    SSE_OVERSIZED);
		assert_int_equal(n, 0);
		sse_parser_finish(&p);
		/* Two data lines joined pass the bound together. */
		buf_reset(&s);
		buf_puts(&s, "data: ");
		while (s.len < 6 + 3000)
			buf_addch(&s, 'y');
		buf_puts(&s, "\ndata: ");
		while (s.len < 6 + 3000 + 7 + 3000)
			buf_addch(&s, 'z');
		buf_puts(&s, "\n\n");
		n = 0;
		assert_int_equal(feed_steps(&p, s.data, s.len, steps[i], &n),
		    SSE_OVERSIZED);
		assert_int_equal(n, 0);
		/* Freed at once, and it stays given up until finished. */
		assert_int_equal(p.line.cap + p.data.cap + p.type.cap, 0);
		assert_int_equal(sse_parser_feed(&p, "data: a\n\n", 10,
		    count_event, &n), SSE_OVERSIZED);
		sse_parser_finish(&p);
		assert_int_equal(sse_parser_feed(&p, "data: a\n\n", 10,
		    count_event, &n), 0);
		assert_int_equal(n, 1);
		sse_parser_free(&p);
	}
	/* A line that never ends, as a throttled engine sends it: held no
	 * longer than the bound, then freed. */
	sse_parser_init(&p);
	p.max_event = 1 << 16;
	buf_reset(&s);
	for (i = 0; i < 1000; i++)
		buf_addch(&s, 'w');
	n = 0;
	for (i = 0; i < 100000; i++) {
		int rc = sse_parser_feed(&p, s.data, s.len, count_event, &n);

		assert_true(p.line.len <= p.max_event);
		if (rc == SSE_OVERSIZED)
			break;
		assert_int_equal(rc, 0);
	}
	assert_true(i < 100);
	assert_int_equal(p.line.cap, 0);
	sse_parser_free(&p);
	/* A comment line and an event type are bounded too. */
	sse_parser_init(&p);
	p.max_event = 100;
	buf_reset(&s);
	buf_puts(&s, "event: ");
	for (i = 0; i < 200; i++)
		buf_addch(&s, 't');
	buf_puts(&s, "\n");
	assert_int_equal(sse_parser_feed(&p, s.data, s.len, count_event, &n),
	    SSE_OVERSIZED);
	sse_parser_finish(&p);
	buf_reset(&s);
	buf_puts(&s, ": ");
	for (i = 0; i < 200; i++)
		buf_addch(&s, 'c');
	assert_int_equal(feed_steps(&p, s.data, s.len, 10, &n), SSE_OVERSIZED);
	sse_parser_free(&p);
	/* The default bound is sse.h's. */
	sse_parser_init(&p);
	assert_int_equal(p.max_event, SSE_MAX_EVENT_DEFAULT);
	sse_parser_free(&p);
	buf_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_found),
		cmocka_unit_test(test_whole_and_bytewise),
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_every_two_way_split),
		cmocka_unit_test(test_scanner_and_jansson_agree),
		cmocka_unit_test(test_strings_at_every_offset),
		cmocka_unit_test(test_cache_agrees_on_fixtures),
		cmocka_unit_test(test_cache_is_not_fooled),
		cmocka_unit_test(test_tricky_payloads),
		cmocka_unit_test(test_jansson_fields),
		cmocka_unit_test(test_parser_rules),
		cmocka_unit_test(test_callback_stops_feed),
		cmocka_unit_test(test_event_bound),
	};

	return cmocka_run_group_tests(tests, setup_fixtures,
	    teardown_fixtures);
}
