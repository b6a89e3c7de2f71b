/*
 * simversion.c - read a dependency's version for the broken-versions
 * fault. See simversion.h.
 *
 * Must never execute anything (no python, no pip): it reads the files a
 * pip install leaves behind.
 */
#include "config.h"

#include <ctype.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "simversion.h"
#include "util.h"

static char *
trim_dup(const char *s, size_t len)
{
	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	return xstrndup(s, len);
}

struct werr *
simversion_from_file(char **out, const char *path)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	const char *nl;

	*out = NULL;
	if ((err = file_read(&b, path)) != NULL)
		return err;
	nl = strchr(buf_cstr(&b), '\n');
	*out = trim_dup(buf_cstr(&b), nl != NULL ? (size_t)(nl - b.data) : b.len);
	buf_free(&b);
	if (**out == '\0') {
		free(*out);
		*out = NULL;
		return werr_at(path, 1, 0, NULL, "no version in file");
	}
	return NULL;
}

/* PEP 503 normalisation: lowercase, runs of -_. become one '-'. */
static char *
normalize(const char *s, size_t len)
{
	struct buf b = BUF_INIT;
	size_t i;

	buf_add(&b, "", 0);
	for (i = 0; i < len; i++) {
		if (s[i] == '-' || s[i] == '_' || s[i] == '.') {
			if (b.len == 0 || b.data[b.len - 1] != '-')
				buf_addch(&b, '-');
		} else
			buf_addch(&b, (char)tolower((unsigned char)s[i]));
	}
	return buf_detach(&b);
}

/* Value of header "Name:" in the METADATA text, or NULL (caller frees). */
static char *
header(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text, *nl;

	while (*p != '\0' && *p != '\n') {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		if ((size_t)(nl - p) > n && strncasecmp(p, name, n) == 0 &&
		    p[n] == ':')
			return trim_dup(p + n + 1, (size_t)(nl - p) - n - 1);
		p = *nl == '\n' ? nl + 1 : nl;
	}
	return NULL;
}

/* If METADATA at path names pkg (normalised), set *out to its version. */
static void
match_metadata(char **out, const char *path, const char *pkg)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	char *name, *norm;

	if ((err = file_read(&b, path)) != NULL) {
		werr_free(err);
		return;
	}
	name = header(buf_cstr(&b), "Name");
	if (name != NULL) {
		norm = normalize(name, strlen(name));
		if (strcmp(norm, pkg) == 0)
			*out = header(buf_cstr(&b), "Version");
		free(norm);
		free(name);
	}
	buf_free(&b);
}

struct werr *
simversion_from_pip(char **out, const char *spec)
{
	const char *colon = strrchr(spec, ':');
	char *env, *pkg, *pattern;
	glob_t g;
	size_t i;

	*out = NULL;
	if (colon == NULL)
		return werr_usage("'%s' is not ENVDIR:PACKAGE", spec);
	env = xstrndup(spec, (size_t)(colon - spec));
	pkg = normalize(colon + 1, strlen(colon + 1));
	pattern = xasprintf("%s/lib*/python*/site-packages/*.dist-info/METADATA",
	    env);
	memset(&g, 0, sizeof(g));
	if (glob(pattern, 0, NULL, &g) == 0)
		for (i = 0; i < g.gl_pathc && *out == NULL; i++)
			match_metadata(out, g.gl_pathv[i], pkg);
	globfree(&g);
	free(pattern);
	if (*out == NULL) {
		struct werr *err = werr_new(WEXIT_ENV,
		    "package '%s' is not installed in '%s'", colon + 1, env);

		free(env);
		free(pkg);
		return err;
	}
	free(env);
	free(pkg);
	return NULL;
}

int
simversion_is_broken(const char *version, const char *list)
{
	const char *p = list, *comma;
	char *item;
	int hit = 0;

	while (!hit && p != NULL && *p != '\0') {
		comma = strchr(p, ',');
		item = trim_dup(p, comma != NULL ? (size_t)(comma - p) : strlen(p));
		hit = item[0] != '\0' && strcmp(item, version) == 0;
		free(item);
		p = comma != NULL ? comma + 1 : NULL;
	}
	return hit;
}
