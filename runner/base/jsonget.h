/*
 * jsonget.h - read one field of a JSON object that warden itself wrote (a
 * store row, a journal record, a result set), where an absent or mistyped
 * field simply reads as empty. Never for input a user wrote: that goes
 * through schema.h, whose errors name file, line and field.
 */
#ifndef WARDEN_JSONGET_H
#define WARDEN_JSONGET_H

#include <jansson.h>

/* The string field key of o, or "" when o is not an object or the field
 * is absent or not a string. Valid while o holds the field. */
static inline const char *
jsonget_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* The integer field key of o, or 0 when absent or not an integer. */
static inline json_int_t
jsonget_int(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

#endif
