/*
 * sse-scan.c - the byte scanner of chat chunks and the classifier built
 * on it. See sse.h (and sse-private.h for what sse-cache.c uses).
 *
 * The scanner walks a payload the way a JSON validator would (strings
 * with their escapes and UTF-8, numbers, literals, nesting) but keeps no
 * values but a finish reason and the usage counts: it sums the decoded
 * length of content strings and notices the keys that need a real parse. Whenever it meets something it does not
 * fully understand it answers SSE_NEED_UNDECIDED; it must never decide a
 * chunk differently from jansson (sse-json.c), so when in doubt it gives
 * up. It decides a finish reason (a plain string) and a usage object
 * (plain integer counts) itself, so a stream's last chunks need no
 * jansson either. Never prints; allocates only the finish reason kept.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"
#include "sse-private.h"
#include "util.h"

/* ---- the byte scanner ---- */

struct scan {
	const char *s;
	const char *end;
	int depth;
};

#define SCAN_MAX_DEPTH 64

static void
scan_ws(struct scan *sc)
{
	while (sc->s < sc->end && (*sc->s == ' ' || *sc->s == '\t' ||
	    *sc->s == '\n' || *sc->s == '\r'))
		sc->s++;
}

static int
scan_peek(struct scan *sc)
{
	scan_ws(sc);
	return sc->s < sc->end ? (unsigned char)*sc->s : -1;
}

static int
scan_char(struct scan *sc, char c)
{
	if (scan_peek(sc) != (unsigned char)c)
		return 0;
	sc->s++;
	return 1;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long
scan_hex4(const char *s, const char *end)
{
	long v = 0;
	int i, h;

	if (end - s < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((h = hexval((unsigned char)s[i])) < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t
utf8_seq(const unsigned char *s, const unsigned char *end)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if ((size_t)(end - s) < n)
		return 0;
	cp = s[0] & (0xff >> (n + 1));
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Eight bytes at a time: nonzero when some byte of w is a control
 * character, '"', '\\' or not ASCII, i.e. anything the byte loop of
 * scan_string must look at. (Per byte: x - 1 borrows into the high bit
 * only from 0; x - 0x20 only from below 0x20; w itself has it when >= 0x80.
 * A borrow only runs upwards, so the lowest flagged byte is a real one;
 * flags above it may be false, which only sends the byte loop to look.)
 */
#define SWAR_ONES	0x0101010101010101ull
#define SWAR_HIGHS	0x8080808080808080ull

static uint64_t
swar_zero(uint64_t x)
{
	return (x - SWAR_ONES) & ~x & SWAR_HIGHS;
}

static uint64_t
swar_special(uint64_t w)
{
	return (((w - SWAR_ONES * 0x20) & ~w) | swar_zero(w ^ (SWAR_ONES * '"')) |
	    swar_zero(w ^ (SWAR_ONES * '\\')) | w) & SWAR_HIGHS;
}

/*
 * A string at sc->s. On success *raw and *rawlen hold the bytes between the
 * quotes and *decoded the UTF-8 length jansson would give it.
 */
static int
scan_string(struct scan *sc, const char **raw, size_t *rawlen,
    size_t *decoded)
{
	const unsigned char *s, *end = (const unsigned char *)sc->end;
	size_t dec = 0, n;
	long cp, lo;

	if (!scan_char(sc, '"'))
		return 0;
	s = (const unsigned char *)sc->s;
	*raw = sc->s;
	while (s < end && *s != '"') {
		/* the common case, plain ASCII, eight bytes a step */
		while (end - s >= 8) {
			uint64_t w, m;

			memcpy(&w, s, 8);
			if ((m = swar_special(w)) != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				/* the lowest flag is exact: go straight
				 * to that byte */
				n = (size_t)__builtin_ctzll(m) / 8;
				s += n;
				dec += n;
#endif
				break;
			}
			s += 8;
			dec += 8;
		}
		if (s >= end || *s == '"')
			break;
		if (*s < 0x20)
			return 0;
		if (*s < 0x80 && *s != '\\') {
			s++;
			dec++;
			continue;
		}
		if (*s >= 0x80) {
			if ((n = utf8_seq(s, end)) == 0)
				return 0;
			s += n;
			dec += n;
			continue;
		}
		if (++s >= end)
			return 0;
		if (strchr("\"\\/bfnrt", *s) != NULL && *s != '\0') {
			s++;
			dec++;
			continue;
		}
		if (*s != 'u' || (cp = scan_hex4((const char *)s + 1,
		    sc->end)) < 0)
			return 0;
		s += 5;
		if (cp == 0)
			return 0;	/* jansson refuses \u0000 by default */
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return 0;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (end - s < 6 || s[0] != '\\' || s[1] != 'u')
				return 0;
			lo = scan_hex4((const char *)s + 2, sc->end);
			if (lo < 0xdc00 || lo > 0xdfff)
				return 0;
			s += 6;
			dec += 4;
		} else
			dec += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
	}
	if (s >= end)
		return 0;
	*rawlen = (size_t)((const char *)s - *raw);
	*decoded = dec;
	sc->s = (const char *)s + 1;
	return 1;
}

/* A JSON number. Numbers jansson might refuse as too big are undecided. */
static int
scan_number(struct scan *sc)
{
	const char *s = sc->s, *end = sc->end, *digits;

	if (s < end && *s == '-')
		s++;
	digits = s;
	if (s < end && *s == '0')
		s++;
	else if (s < end && *s >= '1' && *s <= '9')
		while (s < end && *s >= '0' && *s <= '9')
			s++;
	else
		return 0;
	if (s - digits > 18)
		return 0;
	if (s < end && *s == '.') {
		if (++s >= end || *s < '0' || *s > '9')
			return 0;
		while (s < end && *s >= '0' && *s <= '9')
			s++;
	}
	if (s < end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < end && (*s == '+' || *s == '-'))
			s++;
		digits = s;
		while (s < end && *s >= '0' && *s <= '9')
			s++;
		if (s == digits || s - digits > 2)
			return 0;
	}
	sc->s = s;
	return 1;
}

static int
scan_literal(struct scan *sc, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(sc->end - sc->s) < n || memcmp(sc->s, word, n) != 0)
		return 0;
	sc->s += n;
	return 1;
}

static int scan_skip(struct scan *sc);

/* Walk an object's members; member() sees each key and must consume the
 * value. */
typedef int (*scan_member_fn)(struct scan *sc, const char *key, size_t klen,
    void *arg);

static int
scan_object(struct scan *sc, scan_member_fn member, void *arg)
{
	const char *key;
	size_t klen, kdec;

	if (!scan_char(sc, '{') || ++sc->depth > SCAN_MAX_DEPTH)
		return 0;
	if (scan_char(sc, '}')) {
		sc->depth--;
		return 1;
	}
	for (;;) {
		if (!scan_string(sc, &key, &klen, &kdec) || kdec != klen ||
		    memchr(key, '\\', klen) != NULL)
			return 0;
		if (!scan_char(sc, ':') || !member(sc, key, klen, arg))
			return 0;
		if (scan_char(sc, ','))
			continue;
		if (!scan_char(sc, '}'))
			return 0;
		sc->depth--;
		return 1;
	}
}

static int
skip_member(struct scan *sc, const char *key, size_t klen, void *arg)
{
	return scan_skip(sc);
}

/* Walk an array; element() consumes each value. Sets *count. */
static int
scan_array(struct scan *sc, int (*element)(struct scan *, void *), void *arg,
    size_t *count)
{
	size_t n = 0;

	if (!scan_char(sc, '[') || ++sc->depth > SCAN_MAX_DEPTH)
		return 0;
	if (!scan_char(sc, ']')) {
		for (;;) {
			if (!element(sc, arg))
				return 0;
			n++;
			if (scan_char(sc, ','))
				continue;
			if (!scan_char(sc, ']'))
				return 0;
			break;
		}
	}
	sc->depth--;
	if (count != NULL)
		*count = n;
	return 1;
}

static int
skip_element(struct scan *sc, void *arg)
{
	return scan_skip(sc);
}

static int
scan_skip(struct scan *sc)
{
	const char *raw;
	size_t rawlen, dec;

	switch (scan_peek(sc)) {
	case '"':
		return scan_string(sc, &raw, &rawlen, &dec);
	case '{':
		return scan_object(sc, skip_member, NULL);
	case '[':
		return scan_array(sc, skip_element, NULL, NULL);
	case 't':
		return scan_literal(sc, "true");
	case 'f':
		return scan_literal(sc, "false");
	case 'n':
		return scan_literal(sc, "null");
	default:
		return scan_number(sc);
	}
}

static int
key_is(const char *key, size_t klen, const char *want)
{
	return strlen(want) == klen && memcmp(key, want, klen) == 0;
}

/* A string or null; adds the decoded length of a string to *bytes. */
static int
scan_text(struct scan *sc, size_t *bytes)
{
	const char *raw;
	size_t rawlen, dec;

	if (scan_peek(sc) == 'n')
		return scan_literal(sc, "null");
	if (!scan_string(sc, &raw, &rawlen, &dec))
		return 0;
	*bytes += dec;
	return 1;
}

static int
delta_member(struct scan *sc, const char *key, size_t klen, void *arg)
{
	struct sse_scan_state *st = arg;
	size_t n;
	unsigned bit;

	if (key_is(key, klen, "content"))
		bit = 1;
	else if (key_is(key, klen, "reasoning_content"))
		bit = 2;
	else if (key_is(key, klen, "reasoning"))
		bit = 4;
	else if (key_is(key, klen, "tool_calls")) {
		if (scan_peek(sc) == 'n')
			return scan_literal(sc, "null");
		if (!scan_array(sc, skip_element, NULL, &n))
			return 0;
		if (n > 0)
			st->out->needs_json |= SSE_NEED_TOOL_CALLS;
		return 1;
	} else if (key_is(key, klen, "function_call")) {
		if (scan_peek(sc) != 'n')
			return 0;
		return scan_literal(sc, "null");
	} else
		return scan_skip(sc);
	if (st->delta_seen & bit)
		return 0;	/* a duplicate key: let jansson decide */
	st->delta_seen |= bit;
	if (bit == 1 && scan_peek(sc) == '"') {
		st->content_at = sc->s;
		if (!scan_text(sc, &st->out->content_bytes))
			return 0;
		st->content_end = sc->s;
		st->content_strings++;
		return 1;
	}
	return scan_text(sc, bit == 1 ? &st->out->content_bytes :
	    &st->out->reasoning_bytes);
}

/* A choice's finish_reason: null, or a string without escapes, kept as
 * jansson would keep it (the first choice's); anything else, and a key
 * met twice (jansson keeps the last), goes to jansson. */
static int
scan_finish(struct scan *sc, struct sse_scan_state *st)
{
	const char *raw;
	size_t rawlen, dec;

	if (st->choice_finish++ || (scan_peek(sc) != 'n' &&
	    scan_peek(sc) != '"')) {
		st->out->needs_json |= SSE_NEED_FINISH;
		return scan_skip(sc);
	}
	if (scan_peek(sc) == 'n')
		return scan_literal(sc, "null");
	if (!scan_string(sc, &raw, &rawlen, &dec))
		return 0;
	if (memchr(raw, '\\', rawlen) != NULL)
		st->out->needs_json |= SSE_NEED_FINISH;
	else if (st->out->finish_reason == NULL)
		st->out->finish_reason = xstrndup(raw, rawlen);
	return 1;
}

/* A member of the usage object: the two counts as plain integers; a
 * count met twice, a fraction, an exponent or a long number goes to
 * jansson (which tells integers from reals and may refuse the number). */
static int
usage_member(struct scan *sc, const char *key, size_t klen, void *arg)
{
	struct sse_scan_state *st = arg;
	const char *from, *p;
	long *into, v = 0;
	unsigned bit;

	if (key_is(key, klen, "prompt_tokens")) {
		into = &st->out->prompt_tokens;
		bit = 1;
	} else if (key_is(key, klen, "completion_tokens")) {
		into = &st->out->completion_tokens;
		bit = 2;
	} else
		return scan_skip(sc);
	if ((st->usage_keys & bit) || scan_peek(sc) == 'n' ||
	    scan_peek(sc) == '"' || scan_peek(sc) == '{' ||
	    scan_peek(sc) == '[' || scan_peek(sc) == 't' ||
	    scan_peek(sc) == 'f') {
		st->out->needs_json |= SSE_NEED_USAGE;
		return scan_skip(sc);
	}
	st->usage_keys |= bit;
	from = sc->s;
	if (!scan_number(sc))
		return 0;
	for (p = from; p < sc->s; p++)
		if (*p == '.' || *p == 'e' || *p == 'E') {
			st->out->needs_json |= SSE_NEED_USAGE;
			return 1;
		}
	for (p = *from == '-' ? from + 1 : from; p < sc->s; p++)
		v = v * 10 + (*p - '0');
	*into = *from == '-' ? -v : v;
	return 1;
}

static int
choice_member(struct scan *sc, const char *key, size_t klen, void *arg)
{
	struct sse_scan_state *st = arg;

	if (key_is(key, klen, "delta")) {
		/* jansson keeps the last of duplicate keys; let it decide */
		if (st->choice_delta++)
			return 0;
		if (scan_peek(sc) == 'n')
			return scan_literal(sc, "null");
		st->delta_seen = 0;
		return scan_object(sc, delta_member, st);
	}
	if (key_is(key, klen, "finish_reason"))
		return scan_finish(sc, st);
	if (key_is(key, klen, "message"))
		return 0;	/* not a streaming chunk */
	return scan_skip(sc);
}

static int
choice_element(struct scan *sc, void *arg)
{
	struct sse_scan_state *st = arg;

	st->choice_delta = 0;
	st->choice_finish = 0;
	if (scan_peek(sc) != '{')
		return 0;
	return scan_object(sc, choice_member, arg);
}

static int
top_member(struct scan *sc, const char *key, size_t klen, void *arg)
{
	struct sse_scan_state *st = arg;
	const char *raw;
	size_t rawlen, dec, n;

	if (key_is(key, klen, "choices")) {
		if (st->seen_choices || scan_peek(sc) != '[')
			return 0;
		st->seen_choices = 1;
		if (!scan_array(sc, choice_element, st, &n))
			return 0;
		st->choices_empty = n == 0;
		return 1;
	}
	if (key_is(key, klen, "usage")) {
		if (st->usage_seen++ || (scan_peek(sc) != 'n' &&
		    scan_peek(sc) != '{')) {
			st->out->needs_json |= SSE_NEED_USAGE;
			return scan_skip(sc);
		}
		if (scan_peek(sc) == 'n')
			return scan_literal(sc, "null");
		st->out->has_usage = 1;
		return scan_object(sc, usage_member, st);
	}
	if (key_is(key, klen, "error")) {
		if (scan_peek(sc) == 'n')
			return scan_literal(sc, "null");
		st->out->needs_json |= key[0] == 'u' ? SSE_NEED_USAGE :
		    SSE_NEED_ERROR;
		return scan_skip(sc);
	}
	if (key_is(key, klen, "object") && scan_peek(sc) == '"') {
		if (!scan_string(sc, &raw, &rawlen, &dec))
			return 0;
		/* jansson compares the decoded value: "\u0065rror" too */
		if (key_is(raw, rawlen, "error") ||
		    memchr(raw, '\\', rawlen) != NULL)
			st->out->needs_json |= SSE_NEED_ERROR;
		return 1;
	}
	return scan_skip(sc);
}

void
sse_scan_chunk(const char *data, size_t len, struct sse_chunk *out,
    struct sse_scan_state *st)
{
	struct scan sc = { data, data + len, 0 };

	sse_chunk_init(out);
	memset(st, 0, sizeof(*st));
	if (sse_chunk_is_done(data, len)) {
		out->kind = SSE_CHUNK_DONE;
		return;
	}
	st->out = out;
	if (scan_peek(&sc) != '{' || !scan_object(&sc, top_member, st) ||
	    scan_peek(&sc) != -1 || !st->seen_choices) {
		out->needs_json |= SSE_NEED_UNDECIDED;
		out->content_bytes = out->reasoning_bytes = 0;
		return;
	}
	if (out->needs_json != 0)
		return;
	if (out->content_bytes > 0 || out->reasoning_bytes > 0)
		out->kind = SSE_CHUNK_TOKEN;
	else if (st->choices_empty && out->has_usage)
		out->kind = SSE_CHUNK_USAGE;
	else
		out->kind = SSE_CHUNK_EMPTY;
}

void
sse_chunk_scan(const char *data, size_t len, struct sse_chunk *out)
{
	struct sse_scan_state st;

	sse_scan_chunk(data, len, out, &st);
}

void
sse_chunk_classify(const char *data, size_t len, struct sse_chunk *out)
{
	sse_chunk_scan(data, len, out);
	if (out->needs_json != 0) {
		sse_chunk_clear(out);
		sse_chunk_parse_json(data, len, out);
	}
}

int
sse_scan_one_string(size_t *decoded, const char *from, const char *to)
{
	struct scan sc = { from, to, 0 };
	const char *raw;
	size_t rawlen;

	return scan_string(&sc, &raw, &rawlen, decoded) && sc.s == sc.end;
}
