/*
 * simstream.c - SSE and JSON bytes of one completion. See simstream.h.
 *
 * Chunks are formatted by hand (not with jansson) because the engine must
 * push hundreds of thousands of events per second; the formats follow the
 * OpenAI chat-completions API as vLLM and llama.cpp emit it. Must never
 * sleep, read the clock or do I/O.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "simstream.h"
#include "util.h"

enum phase {
	PH_ROLE,
	PH_TOKENS,
	PH_FINISH,
	PH_USAGE,
	PH_DONE,
	PH_END,
};

static const char *const finish_names[] = { "stop", "length", "tool_calls" };

void
simstream_json_escape(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_add(out, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\') {
			buf_addch(out, '\\');
			buf_addch(out, (char)c);
		} else if (c == '\n')
			buf_puts(out, "\\n");
		else {
			buf_puts(out, "\\u00");
			buf_addch(out, hex[c >> 4]);
			buf_addch(out, hex[c & 15]);
		}
	}
	buf_add(out, run, (size_t)(s - run));
}

void
simstream_init(struct simstream *s, const struct simstream_opts *o,
    const struct textgen_reply *reply)
{
	memset(s, 0, sizeof(*s));
	s->o = *o;
	if (s->o.events_per_write < 1)
		s->o.events_per_write = 1;
	s->reply = reply;
	s->phase = PH_ROLE;
	s->rng = o->split_seed | 1;
	buf_init(&s->pending);
	buf_init(&s->scratch);
}

void
simstream_free(struct simstream *s)
{
	buf_free(&s->pending);
	buf_free(&s->scratch);
	free(s->marks);
	s->marks = NULL;
}

static const char *
eol(const struct simstream *s)
{
	return s->o.crlf ? "\r\n" : "\n";
}

static void
add_usage(struct buf *b, const struct simstream *s, int completion)
{
	buf_printf(b, ",\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,"
	    "\"total_tokens\":%d}", s->o.prompt_tokens, completion,
	    s->o.prompt_tokens + completion);
}

static void
chunk_head(struct buf *b, const struct simstream *s)
{
	buf_puts(b, s->o.no_space ? "data:" : "data: ");
	buf_printf(b, "{\"id\":\"chatcmpl-%s\",\"object\":\"chat.completion.chunk\","
	    "\"created\":%lld,\"model\":\"", s->o.id, s->o.created);
	simstream_json_escape(b, s->o.model);
	buf_puts(b, "\",\"choices\":");
}

/* One data event with a choice carrying delta (JSON) and finish. */
static void
add_chunk(struct simstream *s, const char *delta, const char *finish)
{
	struct buf *b = &s->pending;

	if (s->o.keepalive_every > 0 &&
	    (s->events + 1) % s->o.keepalive_every == 0)
		buf_printf(b, ": keep-alive%s%s", eol(s), eol(s));
	chunk_head(b, s);
	buf_printf(b, "[{\"index\":0,\"delta\":%s,\"logprobs\":null,"
	    "\"finish_reason\":", delta);
	if (finish != NULL)
		buf_printf(b, "\"%s\"}]", finish);
	else
		buf_puts(b, "null}]");
	if (s->o.usage == SIMSTREAM_USAGE_EVERY)
		add_usage(b, s, s->sent);
	buf_printf(b, "}%s%s", eol(s), eol(s));
	s->events++;
}

static void
add_token(struct simstream *s)
{
	enum textgen_kind kind;
	const char *text = textgen_token(s->reply, s->sent, &kind);
	struct buf *d = &s->scratch;

	buf_reset(d);
	if (kind == TEXTGEN_REASONING)
		buf_puts(d, "{\"reasoning_content\":\"");
	else if (kind == TEXTGEN_CONTENT)
		buf_puts(d, "{\"content\":\"");
	else if (s->sent == s->reply->n_reasoning) {
		buf_printf(d, "{\"tool_calls\":[{\"index\":0,\"id\":\"call_%s\","
		    "\"type\":\"function\",\"function\":{\"name\":\"", s->o.id);
		simstream_json_escape(d, s->reply->tool_name);
		buf_puts(d, "\",\"arguments\":\"");
	} else
		buf_puts(d, "{\"tool_calls\":[{\"index\":0,\"function\":"
		    "{\"arguments\":\"");
	simstream_json_escape(d, text);
	buf_puts(d, kind == TEXTGEN_TOOL_ARGS ? "\"}}]}" : "\"}");
	s->sent++;
	add_chunk(s, buf_cstr(d), NULL);
	if (s->nmarks == s->capmarks) {
		s->capmarks = s->capmarks != 0 ? s->capmarks * 2 : 16;
		s->marks = xrealloc(s->marks, (size_t)s->capmarks * sizeof(size_t));
	}
	s->marks[s->nmarks++] = s->pending.len;
}

static void
add_usage_chunk(struct simstream *s)
{
	struct buf *b = &s->pending;

	chunk_head(b, s);
	buf_puts(b, "[]");
	add_usage(b, s, s->sent);
	buf_printf(b, "}%s%s", eol(s), eol(s));
	s->events++;
}

static int
usage_wanted(const struct simstream *s)
{
	if (s->o.usage == SIMSTREAM_USAGE_OMIT)
		return 0;
	return s->o.include_usage || s->o.usage == SIMSTREAM_USAGE_EVERY;
}

/*
 * The fault due at this point of the stream, if any: FAULT_STALL/RESET
 * (act now), FAULT_FLUSH (send what is pending first), FAULT_ADDED (its
 * bytes were added) or FAULT_NONE.
 */
enum { FAULT_NONE, FAULT_ADDED, FAULT_FLUSH, FAULT_STALL, FAULT_RESET };

static int
fault_due(struct simstream *s, int nev)
{
	int at = s->o.fault_after < s->reply->n ? s->o.fault_after : s->reply->n;
	const char *data = s->o.no_space ? "data:" : "data: ";

	if (s->o.fault == SIMSTREAM_FAULT_NONE || s->fault_done || s->sent != at)
		return FAULT_NONE;
	switch (s->o.fault) {
	case SIMSTREAM_FAULT_STALL:
	case SIMSTREAM_FAULT_RESET:
		if (nev > 0)
			return FAULT_FLUSH;
		s->fault_done = 1;
		return s->o.fault == SIMSTREAM_FAULT_STALL ? FAULT_STALL :
		    FAULT_RESET;
	case SIMSTREAM_FAULT_MALFORMED:
		buf_printf(&s->pending, "%s{\"id\":\"chatcmpl-%s\",\"choices\":"
		    "[{\"delta\":{\"content\":\"%s%s", data, s->o.id, eol(s),
		    eol(s));
		break;
	case SIMSTREAM_FAULT_ERROR_EVENT:
		if (s->o.error_form == SIMSTREAM_ERROR_EVENT)
			buf_printf(&s->pending, "event: error%s", eol(s));
		buf_printf(&s->pending, "%s{\"error\":{\"message\":"
		    "\"simulated engine failure\",\"type\":\"server_error\","
		    "\"code\":500}}%s%s", s->o.error_form == SIMSTREAM_ERROR_FIELD ?
		    (s->o.no_space ? "error:" : "error: ") : data, eol(s), eol(s));
		s->phase = s->o.error_form == SIMSTREAM_ERROR_DATA_DONE ||
		    s->o.error_form == SIMSTREAM_ERROR_FIELD ? PH_DONE : PH_END;
		break;
	case SIMSTREAM_FAULT_NONE:
		break;
	}
	s->fault_done = 1;
	s->events++;
	return FAULT_ADDED;
}

/* Fill pending with up to events_per_write events. */
static enum simstream_action
fill(struct simstream *s, int ready, int gen_done)
{
	int nev = 0;

	while (nev < s->o.events_per_write && s->phase != PH_END) {
		switch (s->phase) {
		case PH_ROLE:
			add_chunk(s, "{\"role\":\"assistant\",\"content\":\"\"}",
			    NULL);
			s->phase = PH_TOKENS;
			break;
		case PH_TOKENS:
			switch (fault_due(s, nev)) {
			case FAULT_STALL:
				return SIMSTREAM_STALL;
			case FAULT_RESET:
				return SIMSTREAM_RESET;
			case FAULT_FLUSH:
				return SIMSTREAM_DATA;
			case FAULT_ADDED:
				nev++;
				continue;
			}
			if (s->sent < ready && s->sent < s->reply->n)
				add_token(s);
			else if (gen_done) {
				s->phase = PH_FINISH;
				continue;
			} else
				return s->pending.len > 0 ? SIMSTREAM_DATA :
				    SIMSTREAM_WAIT;
			break;
		case PH_FINISH:
			add_chunk(s, "{}", finish_names[s->reply->finish]);
			s->phase = usage_wanted(s) ? PH_USAGE : PH_DONE;
			break;
		case PH_USAGE:
			add_usage_chunk(s);
			s->phase = PH_DONE;
			break;
		case PH_DONE:
			buf_printf(&s->pending, "%s[DONE]%s%s",
			    s->o.no_space ? "data:" : "data: ", eol(s), eol(s));
			s->phase = PH_END;
			break;
		}
		nev++;
	}
	if (s->pending.len > 0)
		return SIMSTREAM_DATA;
	return s->phase == PH_END ? SIMSTREAM_END : SIMSTREAM_WAIT;
}

static size_t
piece_len(struct simstream *s, size_t avail, size_t max)
{
	size_t n = avail < max ? avail : max;

	if (s->o.random_splits) {
		s->rng = textgen_mix(s->rng);
		if (n > 1)
			n = 1 + (size_t)(s->rng % (n < 24 ? n : 24));
	}
	return n;
}

enum simstream_action
simstream_next(struct simstream *s, int ready, int gen_done,
    const char **data, size_t *len, size_t max, int *completed)
{
	enum simstream_action a;

	*completed = 0;
	if (s->off >= s->pending.len) {
		buf_reset(&s->pending);
		s->off = 0;
		s->nmarks = 0;
		s->markpos = 0;
		a = fill(s, ready, gen_done);
		if (a != SIMSTREAM_DATA)
			return a;
	}
	*data = s->pending.data + s->off;
	*len = piece_len(s, s->pending.len - s->off, max);
	s->off += *len;
	while (s->markpos < s->nmarks && s->marks[s->markpos] <= s->off) {
		s->markpos++;
		(*completed)++;
	}
	return SIMSTREAM_DATA;
}

static json_t *
usage_json(int prompt, int completion)
{
	return json_pack("{s:i, s:i, s:i}", "prompt_tokens", prompt,
	    "completion_tokens", completion, "total_tokens", prompt + completion);
}

void
simstream_full_body(struct buf *out, const struct simstream_opts *o,
    const struct textgen_reply *reply)
{
	char *content = textgen_join(reply, TEXTGEN_CONTENT);
	char *reasoning = textgen_join(reply, TEXTGEN_REASONING);
	char *args = textgen_join(reply, TEXTGEN_TOOL_ARGS);
	json_t *msg, *root, *choice;
	char *id = xasprintf("chatcmpl-%s", o->id), *text;

	msg = json_pack("{s:s, s:s}", "role", "assistant", "content", content);
	if (reply->n_reasoning > 0)
		json_object_set_new(msg, "reasoning_content",
		    json_string(reasoning));
	if (reply->body_kind == TEXTGEN_TOOL_ARGS) {
		char *cid = xasprintf("call_%s", o->id);

		json_object_set_new(msg, "tool_calls", json_pack(
		    "[{s:s, s:s, s:{s:s, s:s}}]", "id", cid, "type", "function",
		    "function", "name", reply->tool_name, "arguments", args));
		free(cid);
	}
	choice = json_pack("{s:i, s:o, s:n, s:s}", "index", 0, "message", msg,
	    "logprobs", "finish_reason", finish_names[reply->finish]);
	root = json_pack("{s:s, s:s, s:I, s:s, s:[o]}", "id", id, "object",
	    "chat.completion", "created", (json_int_t)o->created, "model",
	    o->model, "choices", choice);
	if (o->usage != SIMSTREAM_USAGE_OMIT)
		json_object_set_new(root, "usage",
		    usage_json(o->prompt_tokens, reply->n));
	text = json_dumps(root, JSON_COMPACT);
	buf_puts(out, text);
	free(text);
	json_decref(root);
	free(id);
	free(content);
	free(reasoning);
	free(args);
}

void
simstream_error_body(struct buf *out, const char *message, const char *type,
    int code)
{
	json_t *root = json_pack("{s:{s:s, s:s, s:i}}", "error", "message",
	    message, "type", type, "code", code);
	char *text = json_dumps(root, JSON_COMPACT);

	buf_puts(out, text);
	free(text);
	json_decref(root);
}
