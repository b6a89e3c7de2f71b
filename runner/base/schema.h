/*
 * schema.h - validate a JSON document against a written schema and report
 * every problem (not just the first) with file, line, column and field.
 *
 * jansson does not keep source positions for loaded values, so positions
 * come from jsonloc.c, which maps a field path back to the source text.
 * A schema is static data: see the tables in policy.c and adapter.c.
 */
#ifndef WARDEN_SCHEMA_H
#define WARDEN_SCHEMA_H

#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "error.h"

enum schema_type {
	SCHEMA_STRING,
	SCHEMA_INTEGER,
	SCHEMA_NUMBER,		/* integer or real */
	SCHEMA_BOOLEAN,
	SCHEMA_OBJECT,		/* known fields only */
	SCHEMA_ARRAY,		/* every item has schema `items` */
	SCHEMA_MAP,		/* any keys, every value has schema `items` */
	SCHEMA_ANY,
};

struct schema_field;

struct schema {
	enum schema_type type;
	const struct schema_field *fields;	/* OBJECT: {NULL} terminated */
	const struct schema *items;		/* ARRAY and MAP */
	int nullable;
	int has_min, has_max;
	double min, max;			/* numbers; array/string lengths */
	const char *const *one_of;		/* STRING: NULL-terminated */
	/* Extra check; returns 0 ok, or -1 with the reason in why. */
	int (*check)(const json_t *value, struct buf *why);
};

struct schema_field {
	const char *name;
	const struct schema *schema;
	int required;
};

struct problem {
	char *file;
	int line, col;
	char *field;
	char *msg;
	int unusable;	/* the file could not be read or parsed (exit 2),
			 * rather than breaking a schema rule (exit 1) */
};

struct problems {
	struct problem *v;
	size_t n, cap;
};

void problems_add(struct problems *p, const char *file, int line, int col,
    const char *field, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Add a problem about a dotted field ("gates.completion_min"), located in
 * text when it can be. */
void problems_add_field(struct problems *p, const char *file, const char *text,
    size_t len, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* "FILE:LINE:COL: 'FIELD' MSG" into out. */
void problem_format(const struct problem *p, struct buf *out);
void problems_free(struct problems *p);
/* A loader's error as a problem: where werr_at() placed it (err->loc),
 * else all of its message about file; unusable when the loader's class is
 * WEXIT_INPUT. */
void problems_add_werr(struct problems *p, const char *file,
    const struct werr *err);
/* A werr of class WEXIT_INPUT for the first problem, noting how many more. */
struct werr *problems_to_werr(const struct problems *p);

/* For loaders that add to probs (or, when probs is NULL, to local): the
 * problems added since `before` as one werr; frees local. */
struct werr *problems_since_werr(struct problems *probs, struct problems *local,
    size_t before);
/* Read an input file of at most max bytes (util.h: regular files only);
 * failing to read it is an input error (exit 2). */
struct werr *schema_read_input(struct buf *text, const char *path,
    size_t max);

/* Parse text as JSON (jansson; syntax errors carry line and column) and
 * validate it. On success *out is the document (new reference). Problems
 * are appended; returns the number added. */
size_t schema_load(json_t **out, const struct schema *schema, const char *text,
    size_t len, const char *file, struct problems *probs);

/* Validate an already parsed document; text may be NULL (no positions). */
size_t schema_validate(const struct schema *schema, const json_t *doc,
    const char *text, size_t len, const char *file, struct problems *probs);

#endif
