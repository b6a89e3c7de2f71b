/*
 * jsonloc.c - map a field path of a JSON document to line:column in its
 * source text. Only ever run on text jansson has already parsed, and only
 * for error messages; it skips values without building them. See jsonloc.h.
 */
#include "config.h"

#include <string.h>

#include "jsonloc.h"

struct cursor {
	const char *s;
	size_t len;
	size_t pos;
};

static void
skip_ws(struct cursor *c)
{
	while (c->pos < c->len && strchr(" \t\r\n", c->s[c->pos]) != NULL &&
	    c->s[c->pos] != '\0')
		c->pos++;
}

/* At a quote: advance past the string; start and end bound its contents. */
static int
skip_string(struct cursor *c, size_t *start, size_t *end)
{
	if (c->pos >= c->len || c->s[c->pos] != '"')
		return -1;
	c->pos++;
	*start = c->pos;
	while (c->pos < c->len && c->s[c->pos] != '"') {
		if (c->s[c->pos] == '\\')
			c->pos++;
		c->pos++;
	}
	if (c->pos >= c->len)
		return -1;
	*end = c->pos;
	c->pos++;
	return 0;
}

static int skip_value(struct cursor *c);

static int
skip_container(struct cursor *c, char close)
{
	size_t a, b;

	c->pos++;
	skip_ws(c);
	if (c->pos < c->len && c->s[c->pos] == close) {
		c->pos++;
		return 0;
	}
	for (;;) {
		skip_ws(c);
		if (close == '}') {
			if (skip_string(c, &a, &b) == -1)
				return -1;
			skip_ws(c);
			if (c->pos >= c->len || c->s[c->pos] != ':')
				return -1;
			c->pos++;
		}
		if (skip_value(c) == -1)
			return -1;
		skip_ws(c);
		if (c->pos >= c->len)
			return -1;
		if (c->s[c->pos] == ',') {
			c->pos++;
			continue;
		}
		if (c->s[c->pos] == close) {
			c->pos++;
			return 0;
		}
		return -1;
	}
}

static int
skip_value(struct cursor *c)
{
	size_t a, b;

	skip_ws(c);
	if (c->pos >= c->len)
		return -1;
	switch (c->s[c->pos]) {
	case '"':
		return skip_string(c, &a, &b);
	case '{':
		return skip_container(c, '}');
	case '[':
		return skip_container(c, ']');
	default:
		while (c->pos < c->len && strchr(",]} \t\r\n", c->s[c->pos]) == NULL)
			c->pos++;
		return 0;
	}
}

/* Compare a raw JSON string body with a plain key (no escapes in keys we
 * look for; an escaped key simply does not match). */
static int
key_equals(const struct cursor *c, size_t a, size_t b, const char *key)
{
	size_t n = strlen(key);

	return b - a == n && memcmp(c->s + a, key, n) == 0;
}

/* Leave the cursor at the value (or key) for path[0..depth). */
static int
descend(struct cursor *c, const struct jsonloc_seg *path, size_t depth,
    int want_key, size_t *key_pos)
{
	size_t i, a, b, idx;

	for (i = 0; i < depth; i++) {
		skip_ws(c);
		if (c->pos >= c->len)
			return -1;
		if (path[i].key != NULL) {
			if (c->s[c->pos] != '{')
				return -1;
			c->pos++;
			for (;;) {
				skip_ws(c);
				*key_pos = c->pos;
				if (skip_string(c, &a, &b) == -1)
					return -1;
				skip_ws(c);
				if (c->pos >= c->len || c->s[c->pos] != ':')
					return -1;
				c->pos++;
				skip_ws(c);
				if (key_equals(c, a, b, path[i].key))
					break;
				if (skip_value(c) == -1)
					return -1;
				skip_ws(c);
				if (c->pos >= c->len || c->s[c->pos] != ',')
					return -1;
				c->pos++;
			}
		} else {
			if (c->s[c->pos] != '[')
				return -1;
			c->pos++;
			for (idx = 0; idx < path[i].index; idx++) {
				if (skip_value(c) == -1)
					return -1;
				skip_ws(c);
				if (c->pos >= c->len || c->s[c->pos] != ',')
					return -1;
				c->pos++;
			}
			skip_ws(c);
		}
	}
	(void)want_key;
	return 0;
}

int
jsonloc_find(const char *text, size_t len, const struct jsonloc_seg *path,
    size_t depth, int want_key, int *line, int *col)
{
	struct cursor c = { text, len, 0 };
	size_t key_pos = 0, target, i;
	int l = 1, k = 1;

	if (text == NULL)
		return -1;
	if (descend(&c, path, depth, want_key, &key_pos) == -1)
		return -1;
	skip_ws(&c);
	target = want_key && depth > 0 && path[depth - 1].key != NULL ?
	    key_pos : c.pos;
	for (i = 0; i < target && i < len; i++) {
		if (text[i] == '\n') {
			l++;
			k = 1;
		} else
			k++;
	}
	*line = l;
	*col = k;
	return 0;
}
