/*
 * schema.c - validate JSON against a static schema, collecting every
 * problem with its file, line, column and field path. See schema.h.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "jsonloc.h"
#include "schema.h"
#include "util.h"

#define SCHEMA_MAX_DEPTH 32

struct walk {
	const char *text;
	size_t len;
	const char *file;
	struct problems *probs;
	size_t added;
	struct jsonloc_seg path[SCHEMA_MAX_DEPTH];
	size_t depth;
};

void
problems_add(struct problems *p, const char *file, int line, int col,
    const char *field, const char *fmt, ...)
{
	struct problem *pr;
	struct buf b = BUF_INIT;
	va_list ap;

	if (p->n == p->cap) {
		p->cap = p->cap != 0 ? p->cap * 2 : 8;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	pr = &p->v[p->n++];
	pr->file = xstrdup(file != NULL ? file : "<input>");
	pr->line = line;
	pr->col = col;
	pr->field = field != NULL ? xstrdup(field) : NULL;
	pr->unusable = 0;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	pr->msg = buf_detach(&b);
}

void
problems_add_werr(struct problems *p, const char *file,
    const struct werr *err)
{
	const struct werr_loc *at = err->loc;

	if (at != NULL)
		problems_add(p, at->file, at->line, at->col, at->field, "%s",
		    at->text);
	else
		problems_add(p, file, 0, 0, NULL, "%s", err->msg);
	p->v[p->n - 1].unusable = err->exit == WEXIT_INPUT;
}

void
problem_format(const struct problem *p, struct buf *out)
{
	buf_puts(out, p->file);
	if (p->line > 0) {
		buf_printf(out, ":%d", p->line);
		if (p->col > 0)
			buf_printf(out, ":%d", p->col);
	}
	buf_puts(out, ": ");
	if (p->field != NULL && p->field[0] != '\0')
		buf_printf(out, "'%s' ", p->field);
	buf_puts(out, p->msg);
}

void
problems_free(struct problems *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].file);
		free(p->v[i].field);
		free(p->v[i].msg);
	}
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}

struct werr *
problems_to_werr(const struct problems *p)
{
	struct buf b = BUF_INIT;
	struct werr *err;

	if (p->n == 0)
		return NULL;
	problem_format(&p->v[0], &b);
	if (p->n > 1)
		buf_printf(&b, " (and %zu more problem%s; see 'warden lint')",
		    p->n - 1, p->n - 1 == 1 ? "" : "s");
	err = werr_new(WEXIT_INPUT, "%s", buf_cstr(&b));
	buf_free(&b);
	return err;
}

static void
path_string(const struct walk *w, struct buf *out)
{
	size_t i;

	for (i = 0; i < w->depth; i++) {
		if (w->path[i].key != NULL) {
			if (i > 0)
				buf_addch(out, '.');
			buf_puts(out, w->path[i].key);
		} else
			buf_printf(out, "[%zu]", w->path[i].index);
	}
}

/* Report at the current path; at_key points at the member's key. */
static void
report(struct walk *w, int at_key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
report(struct walk *w, int at_key, const char *fmt, ...)
{
	struct buf field = BUF_INIT, msg = BUF_INIT;
	int line = 0, col = 0;
	size_t d = w->depth;
	va_list ap;

	/* Fall back to the nearest ancestor that can be located. */
	while (jsonloc_find(w->text, w->len, w->path, d, at_key, &line, &col) == -1) {
		if (d == 0) {
			line = col = 0;
			break;
		}
		d--;
		at_key = 0;
	}
	path_string(w, &field);
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	problems_add(w->probs, w->file, line, col, buf_cstr(&field), "%s",
	    buf_cstr(&msg));
	w->added++;
	buf_free(&field);
	buf_free(&msg);
}

static const char *
type_phrase(enum schema_type t)
{
	switch (t) {
	case SCHEMA_STRING: return "a string";
	case SCHEMA_INTEGER: return "an integer";
	case SCHEMA_NUMBER: return "a number";
	case SCHEMA_BOOLEAN: return "true or false";
	case SCHEMA_OBJECT: return "an object";
	case SCHEMA_ARRAY: return "an array";
	case SCHEMA_MAP: return "an object";
	case SCHEMA_ANY: return "a value";
	}
	return "a value";
}

static int
type_ok(enum schema_type t, const json_t *v)
{
	switch (t) {
	case SCHEMA_STRING: return json_is_string(v);
	case SCHEMA_INTEGER: return json_is_integer(v);
	case SCHEMA_NUMBER: return json_is_number(v);
	case SCHEMA_BOOLEAN: return json_is_boolean(v);
	case SCHEMA_OBJECT:
	case SCHEMA_MAP: return json_is_object(v);
	case SCHEMA_ARRAY: return json_is_array(v);
	case SCHEMA_ANY: return 1;
	}
	return 0;
}

static void walk_value(struct walk *w, const struct schema *s, const json_t *v);

static void
push(struct walk *w, const char *key, size_t index)
{
	if (w->depth == SCHEMA_MAX_DEPTH)
		fatal("schema nesting deeper than %d", SCHEMA_MAX_DEPTH);
	w->path[w->depth].key = key;
	w->path[w->depth].index = index;
	w->depth++;
}

static void
walk_object(struct walk *w, const struct schema *s, const json_t *v)
{
	const struct schema_field *f;
	const char *key;
	json_t *member;

	/* Unknown keys first, in document order (jansson keeps insertion order). */
	json_object_foreach((json_t *)v, key, member) {
		for (f = s->fields; f != NULL && f->name != NULL; f++)
			if (strcmp(f->name, key) == 0)
				break;
		if (f == NULL || f->name == NULL) {
			push(w, key, 0);
			report(w, 1, "is not a known field");
			w->depth--;
			continue;
		}
		push(w, key, 0);
		walk_value(w, f->schema, member);
		w->depth--;
	}
	for (f = s->fields; f != NULL && f->name != NULL; f++) {
		if (!f->required || json_object_get(v, f->name) != NULL)
			continue;
		push(w, f->name, 0);
		report(w, 0, "is required");
		w->depth--;
	}
}

static void
walk_value(struct walk *w, const struct schema *s, const json_t *v)
{
	struct buf why = BUF_INIT;
	const char *key;
	json_t *item;
	size_t i;

	if (json_is_null(v) && s->nullable)
		return;
	if (!type_ok(s->type, v)) {
		report(w, 0, "must be %s", type_phrase(s->type));
		return;
	}
	if (json_is_number(v)) {
		double d = json_number_value(v);

		if (s->has_min && d < s->min)
			report(w, 0, "must be at least %g", s->min);
		else if (s->has_max && d > s->max)
			report(w, 0, "must be at most %g", s->max);
	}
	if (json_is_string(v)) {
		if (s->has_min && json_string_length(v) < (size_t)s->min)
			report(w, 0, "must not be empty");
		if (s->one_of != NULL) {
			const char *const *o;
			struct buf list = BUF_INIT;

			for (o = s->one_of; *o != NULL; o++) {
				if (strcmp(*o, json_string_value(v)) == 0)
					break;
				buf_printf(&list, "%s'%s'", list.len ? ", " : "", *o);
			}
			if (*o == NULL)
				report(w, 0, "must be one of %s, not '%s'",
				    buf_cstr(&list), json_string_value(v));
			buf_free(&list);
		}
	}
	if (s->type == SCHEMA_ARRAY) {
		if (s->has_min && json_array_size(v) < (size_t)s->min)
			report(w, 0, "must have at least %g item%s", s->min,
			    s->min == 1 ? "" : "s");
		json_array_foreach((json_t *)v, i, item) {
			push(w, NULL, i);
			walk_value(w, s->items, item);
			w->depth--;
		}
	} else if (s->type == SCHEMA_MAP) {
		json_object_foreach((json_t *)v, key, item) {
			push(w, key, 0);
			walk_value(w, s->items, item);
			w->depth--;
		}
	} else if (s->type == SCHEMA_OBJECT)
		walk_object(w, s, v);
	if (s->check != NULL && s->check(v, &why) == -1)
		report(w, 0, "%s", buf_cstr(&why));
	buf_free(&why);
}

size_t
schema_validate(const struct schema *schema, const json_t *doc,
    const char *text, size_t len, const char *file, struct problems *probs)
{
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.text = text;
	w.len = len;
	w.file = file;
	w.probs = probs;
	walk_value(&w, schema, doc);
	return w.added;
}

size_t
schema_load(json_t **out, const struct schema *schema, const char *text,
    size_t len, const char *file, struct problems *probs)
{
	json_error_t jerr;
	json_t *doc;
	size_t n;

	*out = NULL;
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL) {
		problems_add(probs, file, jerr.line, jerr.column, NULL,
		    "invalid JSON: %s", jerr.text);
		probs->v[probs->n - 1].unusable = 1;
		return 1;
	}
	n = schema_validate(schema, doc, text, len, file, probs);
	if (n != 0) {
		json_decref(doc);
		return n;
	}
	*out = doc;
	return 0;
}

void
problems_add_field(struct problems *p, const char *file, const char *text,
    size_t len, const char *field, const char *fmt, ...)
{
	struct jsonloc_seg segs[SCHEMA_MAX_DEPTH];
	char *copy = xstrdup(field), *s, *save = NULL;
	struct buf msg = BUF_INIT;
	size_t depth = 0;
	int line = 0, col = 0;
	va_list ap;

	for (s = strtok_r(copy, ".", &save); s != NULL && depth < SCHEMA_MAX_DEPTH;
	    s = strtok_r(NULL, ".", &save)) {
		segs[depth].key = s;
		segs[depth].index = 0;
		depth++;
	}
	while (jsonloc_find(text, len, segs, depth, 0, &line, &col) == -1 &&
	    depth > 0)
		depth--;
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	problems_add(p, file, line, col, field, "%s", buf_cstr(&msg));
	buf_free(&msg);
	free(copy);
}

struct werr *
problems_since_werr(struct problems *probs, struct problems *local,
    size_t before)
{
	struct problems tail;
	struct werr *err;

	if (probs == local) {
		err = problems_to_werr(local);
		problems_free(local);
		return err;
	}
	tail.v = probs->v + before;
	tail.n = probs->n - before;
	tail.cap = 0;
	return problems_to_werr(&tail);
}

struct werr *
schema_read_input(struct buf *text, const char *path, size_t max)
{
	struct werr *err = file_read_max(text, path, max);

	if (err != NULL)
		err->exit = WEXIT_INPUT;
	return err;
}
