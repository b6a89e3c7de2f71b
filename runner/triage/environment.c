/*
 * environment.c - the OS, python, toolchain and model weights an engine
 * ran with, and what of them changed between two cycles. See
 * environment.h. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "environment.h"
#include "util.h"

static json_t *
string_or_null(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0 ?
	    json_incref((json_t *)v) : json_null();
}

json_t *
environment_of(const json_t *manifest, const json_t *os)
{
	json_t *o = json_object(), *tc = json_object(), *models = json_object();
	const json_t *v, *m;
	const char *k;

	if (json_is_string(json_object_get(os, "name")) &&
	    json_is_string(json_object_get(os, "release"))) {
		char *s = xasprintf("%s %s", json_string_value(json_object_get(os,
		    "name")), json_string_value(json_object_get(os,
		    "release")));

		json_object_set_new(o, "os", json_string(s));
		free(s);
	} else
		json_object_set_new(o, "os", json_null());
	json_object_set_new(o, "python", string_or_null(json_object_get(
	    manifest, "python")));
	json_object_foreach((json_t *)json_object_get(manifest, "toolchain"), k,
	    v)
		if (json_is_string(v))
			json_object_set(tc, k, (json_t *)v);
	json_object_foreach((json_t *)json_object_get(manifest, "models"), k, m)
		if (json_is_string(json_object_get(m, "sha256")))
			json_object_set(models, k, json_object_get(m, "sha256"));
	json_object_set_new(o, "toolchain", tc);
	json_object_set_new(o, "models", models);
	return o;
}

static void
add(json_t *out, const char *what, const char *name, const json_t *from,
    const json_t *to)
{
	json_array_append_new(out, json_pack("{s:s, s:s?, s:O, s:O}", "what",
	    what, "name", name, "from", from != NULL ? from : json_null(),
	    "to", to != NULL ? to : json_null()));
}

/* The items of two {name: string} maps that differ, names sorted. */
static void
diff_map(json_t *out, const char *what, const json_t *a, const json_t *b)
{
	const char **names = xcalloc(json_object_size(a) + json_object_size(b)
	    + 1, sizeof(*names));
	const char *k;
	json_t *v;
	size_t n = 0, i;

	json_object_foreach((json_t *)a, k, v)
		names[n++] = k;
	json_object_foreach((json_t *)b, k, v)
		if (json_object_get(a, k) == NULL)
			names[n++] = k;
	qsort(names, n, sizeof(*names), strcmp_ptr);
	for (i = 0; i < n; i++)
		if (!json_equal(json_object_get(a, names[i]),
		    json_object_get(b, names[i])))
			add(out, what, names[i], json_object_get(a, names[i]),
			    json_object_get(b, names[i]));
	free(names);
}

json_t *
environment_diff(const json_t *good, const json_t *now)
{
	json_t *out = json_array();
	const json_t *a, *b;

	if (!json_is_object(good) || !json_is_object(now))
		return out;
	a = json_object_get(good, "os");
	b = json_object_get(now, "os");
	if (json_is_string(a) && json_is_string(b) && !json_equal(a, b))
		add(out, "os", NULL, a, b);
	a = json_object_get(good, "python");
	b = json_object_get(now, "python");
	if (json_is_string(a) && json_is_string(b) && !json_equal(a, b))
		add(out, "python", NULL, a, b);
	diff_map(out, "toolchain", json_object_get(good, "toolchain"),
	    json_object_get(now, "toolchain"));
	diff_map(out, "model", json_object_get(good, "models"),
	    json_object_get(now, "models"));
	return out;
}

static void
value_text(struct buf *out, const char *what, const json_t *v)
{
	if (!json_is_string(v))
		buf_puts(out, what[0] == 'm' ? "(no digest)" : "(none)");
	else if (strcmp(what, "model") == 0)
		buf_printf(out, "sha256 %.8s", json_string_value(v));
	else
		buf_puts(out, json_string_value(v));
}

void
environment_text(struct buf *out, const json_t *changes)
{
	const json_t *x;
	const char *what;
	size_t i;

	json_array_foreach((json_t *)changes, i, x) {
		what = json_string_value(json_object_get(x, "what"));
		buf_printf(out, "%s%s", i ? "; " : "", what);
		if (json_is_string(json_object_get(x, "name")))
			buf_printf(out, " %s:", json_string_value(
			    json_object_get(x, "name")));
		buf_addch(out, ' ');
		value_text(out, what, json_object_get(x, "from"));
		buf_puts(out, " → ");
		value_text(out, what, json_object_get(x, "to"));
	}
}
