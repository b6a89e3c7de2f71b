/*
 * jsonloc.h - find where a field of a JSON document stands in its source
 * text, for error messages only. jansson parses; this only walks the text of
 * a document jansson already accepted, to turn a path into line:column.
 */
#ifndef WARDEN_JSONLOC_H
#define WARDEN_JSONLOC_H

#include <stddef.h>

struct jsonloc_seg {
	const char *key;	/* object member, or NULL for an index */
	size_t index;
};

/* Position of the value at path (or of its key, when want_key). Returns 0
 * and sets line/col (1-based), or -1 when the path is not found. */
int jsonloc_find(const char *text, size_t len, const struct jsonloc_seg *path,
    size_t depth, int want_key, int *line, int *col);

#endif
