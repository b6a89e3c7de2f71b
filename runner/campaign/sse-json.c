/*
 * sse-json.c - the jansson path of the chunk classifier: the full parse
 * that the byte scanner (sse-scan.c) hands usage, errors, tool calls,
 * finish reasons and anything it cannot decide to. See sse.h. Never
 * prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sse.h"
#include "util.h"

static void
chunk_malformed(struct sse_chunk *out, const char *why)
{
	sse_chunk_clear(out);
	out->kind = SSE_CHUNK_MALFORMED;
	out->error = xstrdup(why);
}

static char *
error_message(json_t *err, json_t *root)
{
	json_t *msg;

	if (json_is_string(err))
		return xstrdup(json_string_value(err));
	if (json_is_object(err) &&
	    json_is_string(msg = json_object_get(err, "message")))
		return xstrdup(json_string_value(msg));
	if (json_is_string(msg = json_object_get(root, "message")))
		return xstrdup(json_string_value(msg));
	return xstrdup("error object in stream");
}

static int
text_field(json_t *delta, const char *key, size_t *bytes)
{
	json_t *v = json_object_get(delta, key);

	if (v == NULL || json_is_null(v))
		return 1;
	if (!json_is_string(v))
		return 0;
	*bytes += json_string_length(v);
	return 1;
}

static int
parse_tool_calls(json_t *calls, struct sse_chunk *out)
{
	json_t *tc, *v;
	size_t i;

	if (calls == NULL || json_is_null(calls))
		return 1;
	if (!json_is_array(calls))
		return 0;
	json_array_foreach(calls, i, tc) {
		if (!json_is_object(tc))
			return 0;
		out->tool_call_deltas++;
		v = json_object_get(tc, "index");
		if (json_is_integer(v) &&
		    json_integer_value(v) > out->tool_call_max_index)
			out->tool_call_max_index = (long)json_integer_value(v);
		v = json_object_get(tc, "id");
		if (json_is_string(v) && json_string_length(v) > 0)
			out->tool_call_ids++;
	}
	return 1;
}

static int
parse_choice(json_t *choice, struct sse_chunk *out)
{
	json_t *delta, *fr;

	if (!json_is_object(choice) || json_object_get(choice, "message"))
		return 0;
	fr = json_object_get(choice, "finish_reason");
	if (json_is_string(fr) && out->finish_reason == NULL)
		out->finish_reason = xstrdup(json_string_value(fr));
	else if (fr != NULL && !json_is_null(fr) && !json_is_string(fr))
		return 0;
	delta = json_object_get(choice, "delta");
	if (delta == NULL || json_is_null(delta))
		return 1;
	if (!json_is_object(delta))
		return 0;
	if (json_object_get(delta, "function_call") != NULL &&
	    !json_is_null(json_object_get(delta, "function_call")))
		return 0;
	return text_field(delta, "content", &out->content_bytes) &&
	    text_field(delta, "reasoning_content", &out->reasoning_bytes) &&
	    text_field(delta, "reasoning", &out->reasoning_bytes) &&
	    parse_tool_calls(json_object_get(delta, "tool_calls"), out);
}

static void
parse_usage(json_t *usage, struct sse_chunk *out)
{
	json_t *v;

	if (!json_is_object(usage))
		return;
	out->has_usage = 1;
	if (json_is_integer(v = json_object_get(usage, "prompt_tokens")))
		out->prompt_tokens = (long)json_integer_value(v);
	if (json_is_integer(v = json_object_get(usage, "completion_tokens")))
		out->completion_tokens = (long)json_integer_value(v);
}

void
sse_chunk_parse_json(const char *data, size_t len, struct sse_chunk *out)
{
	json_t *root, *err, *choices, *choice, *obj;
	json_error_t jerr;
	size_t i;

	sse_chunk_init(out);
	if (sse_chunk_is_done(data, len)) {
		out->kind = SSE_CHUNK_DONE;
		return;
	}
	root = json_loadb(data, len, 0, &jerr);
	if (root == NULL || !json_is_object(root)) {
		chunk_malformed(out, "data is not a json object");
		goto out;
	}
	err = json_object_get(root, "error");
	obj = json_object_get(root, "object");
	if ((err != NULL && !json_is_null(err)) ||
	    (json_is_string(obj) && strcmp(json_string_value(obj), "error") == 0)) {
		out->kind = SSE_CHUNK_ERROR;
		out->error = error_message(err, root);
		goto out;
	}
	parse_usage(json_object_get(root, "usage"), out);
	choices = json_object_get(root, "choices");
	if (!json_is_array(choices)) {
		chunk_malformed(out, "chunk has no 'choices' array");
		goto out;
	}
	json_array_foreach(choices, i, choice) {
		if (!parse_choice(choice, out)) {
			chunk_malformed(out, "chunk has a malformed choice");
			goto out;
		}
	}
	if (out->content_bytes > 0 || out->reasoning_bytes > 0 ||
	    out->tool_call_deltas > 0)
		out->kind = SSE_CHUNK_TOKEN;
	else if (json_array_size(choices) == 0 && out->has_usage)
		out->kind = SSE_CHUNK_USAGE;
	else
		out->kind = SSE_CHUNK_EMPTY;
out:
	json_decref(root);
}

void
sse_chunk_content_text(const char *data, size_t len, struct buf *out,
    size_t max)
{
	json_t *root, *choice, *v;
	size_t i, n;

	root = json_loadb(data, len, 0, NULL);
	json_array_foreach(json_object_get(root, "choices"), i, choice) {
		v = json_object_get(json_object_get(choice, "delta"), "content");
		if (!json_is_string(v) || out->len >= max)
			continue;
		n = json_string_length(v);
		if (n > max - out->len)
			n = max - out->len;
		buf_add(out, json_string_value(v), n);
	}
	json_decref(root);
}
