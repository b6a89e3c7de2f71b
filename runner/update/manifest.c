/*
 * manifest.c - diff and digest of version manifests. See manifest.h.
 * Only JSON in, JSON out: never touches a file, a process or the store.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "manifest.h"
#include "sha256.h"
#include "util.h"

static json_t *
str_or_null(const json_t *v)
{
	return json_is_string(v) ? json_string(json_string_value(v)) : json_null();
}

json_t *
manifest_diff_packages(const json_t *old_p, const json_t *new_p)
{
	json_t *out = json_object(), *ov, *nv;
	const char **names = NULL;
	const char *key;
	size_t n = 0, i;
	json_t *v;

	json_object_foreach((json_t *)old_p, key, v) {
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = key;
	}
	json_object_foreach((json_t *)new_p, key, v) {
		if (json_object_get(old_p, key) != NULL)
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = key;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), strcmp_ptr);
	for (i = 0; i < n; i++) {
		ov = json_object_get(old_p, names[i]);
		nv = json_object_get(new_p, names[i]);
		if (json_is_string(ov) && json_is_string(nv) &&
		    strcmp(json_string_value(ov), json_string_value(nv)) == 0)
			continue;
		json_object_set_new(out, names[i], json_pack("{s:o, s:o}",
		    "old", str_or_null(ov), "new", str_or_null(nv)));
	}
	free(names);
	return out;
}

json_t *
manifest_diff(const json_t *old_m, const json_t *new_m)
{
	return manifest_diff_packages(json_object_get(old_m, "packages"),
	    json_object_get(new_m, "packages"));
}

/* A string of the manifest's source ("commit", "tag"), or "". */
static const char *
source_str(const json_t *m, const char *key)
{
	const json_t *v = json_object_get(json_object_get(m, "source"), key);

	return json_is_string(v) ? json_string_value(v) : "";
}

int
manifest_same_version(const json_t *old_m, const json_t *new_m)
{
	json_t *changes;
	int same;

	if (old_m == NULL || new_m == NULL)
		return 0;
	changes = manifest_diff(old_m, new_m);
	same = json_object_size(changes) == 0 &&
	    strcmp(source_str(old_m, "commit"), source_str(new_m, "commit")) == 0 &&
	    strcmp(source_str(old_m, "tag"), source_str(new_m, "tag")) == 0;
	json_decref(changes);
	return same;
}

void
manifest_digest(const json_t *manifest, char *hex_out)
{
	json_t *what_ran = json_deep_copy(manifest);
	char *s;

	/* The identity of what ran, not of when it was written down. */
	json_object_del(what_ran, "created");
	s = json_dumps(what_ran, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(what_ran);
	if (s == NULL)
		fatal("manifest: cannot serialise");
	sha256_hex(s, strlen(s), hex_out);
	free(s);
}

char *
manifest_package_name(const char *name)
{
	struct buf b = BUF_INIT;

	buf_puts(&b, "");
	for (; *name != '\0'; name++) {
		if (*name == '-' || *name == '_' || *name == '.') {
			if (b.len == 0 || b.data[b.len - 1] != '-')
				buf_addch(&b, '-');
		} else
			buf_addch(&b, (char)tolower((unsigned char)*name));
	}
	return buf_detach(&b);
}

const char *
manifest_package_version(const json_t *manifest, const char *name)
{
	return json_string_value(json_object_get(json_object_get(manifest,
	    "packages"), name));
}
