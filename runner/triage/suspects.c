/*
 * suspects.c - score the changes of broken engines across engines. See
 * suspects.h. Pure.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "suspects.h"
#include "util.h"

/* Did engine e take package pkg to version to? */
static int
took(const json_t *e, const char *pkg, const char *to)
{
	json_t *c = json_object_get(json_object_get(e, "changes"), pkg);
	const char *v = json_string_value(json_object_get(c, "new"));

	return c != NULL && v != NULL && strcmp(v, to) == 0;
}

static json_t *
suspect(const json_t *engines, const char *self, const char *pkg,
    const json_t *change)
{
	const char *from = json_string_value(json_object_get(change, "old"));
	const char *to = json_string_value(json_object_get(change, "new"));
	const char *own = json_string_value(json_object_get(json_object_get(
	    engines, self), "own"));
	json_t *broken = json_array(), *healthy = json_array(), *e;
	const char *name, *status;

	json_object_foreach((json_t *)engines, name, e) {
		status = json_string_value(json_object_get(e, "status"));
		if (to == NULL || status == NULL || !took(e, pkg, to))
			continue;
		if (strcmp(status, "broken") == 0)
			json_array_append_new(broken, json_string(name));
		else if (strcmp(status, "healthy") == 0)
			json_array_append_new(healthy, json_string(name));
	}
	if (to == NULL)	/* removed: only this engine counts */
		json_array_append_new(broken, json_string(self));
	return json_pack("{s:s, s:s?, s:s?, s:I, s:o, s:o, s:b, s:b}",
	    "package", pkg, "from", from, "to", to,
	    "score", (json_int_t)json_array_size(broken) -
	    (json_int_t)json_array_size(healthy),
	    "broken_with", broken, "healthy_with", healthy,
	    "own", own != NULL && strcmp(own, pkg) == 0,
	    "bisectable", from != NULL && to != NULL);
}

static int
by_suspicion(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int ox = json_is_true(json_object_get(x, "own"));
	int oy = json_is_true(json_object_get(y, "own"));
	json_int_t bx, by;

	if (jsonget_int(x, "score") != jsonget_int(y, "score"))
		return jsonget_int(x, "score") > jsonget_int(y,
		    "score") ? -1 : 1;
	if (ox != oy)
		return ox ? -1 : 1;
	bx = (json_int_t)json_array_size(json_object_get(x, "broken_with"));
	by = (json_int_t)json_array_size(json_object_get(y, "broken_with"));
	if (bx != by)
		return bx > by ? -1 : 1;
	return strcmp(json_string_value(json_object_get(x, "package")),
	    json_string_value(json_object_get(y, "package")));
}

json_t *
suspects_rank(const json_t *engines)
{
	json_t *out = json_object(), *e, *changes, *c, *list, **v;
	const char *name, *pkg, *status;
	size_t n, i;

	json_object_foreach((json_t *)engines, name, e) {
		status = json_string_value(json_object_get(e, "status"));
		if (status == NULL || strcmp(status, "broken") != 0)
			continue;
		changes = json_object_get(e, "changes");
		if (!json_is_object(changes))
			continue;
		n = json_object_size(changes);
		v = xcalloc(n + 1, sizeof(*v));
		i = 0;
		json_object_foreach(changes, pkg, c)
			v[i++] = suspect(engines, name, pkg, c);
		qsort(v, n, sizeof(*v), by_suspicion);
		list = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(list, v[i]);
		free(v);
		json_object_set_new(out, name, list);
	}
	return out;
}

int
suspects_own_release_only(const json_t *suspects)
{
	return json_array_size(suspects) == 1 && json_is_true(json_object_get(
	    json_array_get(suspects, 0), "own"));
}
