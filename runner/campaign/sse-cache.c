/*
 * sse-cache.c - the skeleton cache of the chunk classifier. See sse.h.
 *
 * A stream's token chunks differ, as a rule, only in the content string:
 * {"id":"x","object":"chat.completion.chunk",...,"delta":{"content":"ONE"}
 * ...}. After the scanner has decided a plain token chunk whose only text
 * is one content string, the bytes before that string (its opening quote
 * included) and after it (its closing quote included) are kept. A later
 * chunk with the very same bytes there, and exactly one valid JSON string
 * in between, is the same JSON text with one string token replaced by
 * another: the same structure, so the same decision, with that string's
 * decoded length as content_bytes. Two memcmp and one string scan instead
 * of a walk over every key and value. Anything else is scanned in full.
 *
 * Must never decide a chunk differently from sse_chunk_classify(): when
 * a chunk does not fit the kept bytes exactly, it is scanned in full.
 */
#include "config.h"

#include <string.h>

#include "buf.h"
#include "sse.h"
#include "sse-private.h"

void
sse_chunk_cache_init(struct sse_chunk_cache *k)
{
	buf_init(&k->prefix);
	buf_init(&k->suffix);
	k->valid = 0;
	k->hits = 0;
}

void
sse_chunk_cache_free(struct sse_chunk_cache *k)
{
	buf_free(&k->prefix);
	buf_free(&k->suffix);
	k->valid = 0;
}

/* The decoded length of the one string between the kept bytes, or 0 when
 * the chunk does not fit them. */
static size_t
cache_fit(const struct sse_chunk_cache *k, const char *data, size_t len)
{
	size_t np = k->prefix.len, ns = k->suffix.len, dec;

	if (!k->valid || len < np + ns ||
	    memcmp(data, k->prefix.data, np) != 0 ||
	    memcmp(data + len - ns, k->suffix.data, ns) != 0)
		return 0;
	/* from the prefix's last byte (the opening quote) to the suffix's
	 * first (the closing one): that, and nothing else, one string */
	if (!sse_scan_one_string(&dec, data + np - 1, data + len - ns + 1))
		return 0;
	return dec;
}

void
sse_chunk_classify_cached(struct sse_chunk_cache *k, const char *data,
    size_t len, struct sse_chunk *out)
{
	struct sse_scan_state st;
	size_t dec;

	if ((dec = cache_fit(k, data, len)) > 0) {
		sse_chunk_init(out);
		out->kind = SSE_CHUNK_TOKEN;
		out->content_bytes = dec;
		k->hits++;
		return;
	}
	sse_scan_chunk(data, len, out, &st);
	if (out->needs_json != 0) {
		sse_chunk_clear(out);
		sse_chunk_parse_json(data, len, out);
		return;
	}
	/* only a plain token chunk: one with a finish reason or usage
	 * would hand them on to the chunks that fit it */
	if (out->kind != SSE_CHUNK_TOKEN || out->finish_reason != NULL ||
	    out->has_usage || st.content_strings != 1 ||
	    out->reasoning_bytes != 0 || out->content_bytes == 0 ||
	    st.content_end - st.content_at < 2)
		return;
	buf_reset(&k->prefix);
	buf_add(&k->prefix, data, (size_t)(st.content_at - data) + 1);
	buf_reset(&k->suffix);
	buf_add(&k->suffix, st.content_end - 1,
	    (size_t)(data + len - st.content_end) + 1);
	k->valid = 1;
}
