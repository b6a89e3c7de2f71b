/*
 * path.c - path rules of the allowlist gate: glob matching, the collision
 * key (case and Unicode folding as macOS volumes do it, or coarser), and
 * the path-only checks (bad-path, dotgit, gitfile).
 *
 * Everything here is pure string work on repository-relative paths as git
 * stores them ('/'-separated, no prefix); Unicode properties, case folding
 * and normalisation come from utf8proc. It must never accept a path it
 * cannot fully classify: a code point that is not a letter, mark or digit
 * (outside ASCII), or that utf8proc does not know as assigned, is a bad
 * path.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

/* Decode one UTF-8 code point at s (NUL-terminated); return its length, 0
 * if invalid (overlong forms, surrogates and values past U+10FFFF are). */
static size_t
utf8_decode(const unsigned char *s, uint32_t *cp)
{
	utf8proc_int32_t c;
	utf8proc_ssize_t n;

	if (*s != '\0' && *s < 0x80) {
		*cp = *s;
		return 1;
	}
	n = utf8proc_iterate(s, -1, &c);
	if (n <= 0 || c < 0)
		return 0;
	*cp = (uint32_t)c;
	return (size_t)n;
}

/* Code points HFS+ and APFS ignore when comparing names (git's list). */
static int
hfs_ignorable(uint32_t c)
{
	return (c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	    (c >= 0x206a && c <= 0x206f) || c == 0xfeff;
}

/* Invisible in a name: HFS+'s list and Unicode's default ignorables. */
static int
invisible(uint32_t c)
{
	return hfs_ignorable(c) ||
	    (c >= 0x80 && utf8proc_get_property((utf8proc_int32_t)c)->ignorable);
}

static int
combining_mark(uint32_t c)
{
	utf8proc_category_t cat;

	if (c < 0x80)
		return 0;
	cat = utf8proc_category((utf8proc_int32_t)c);
	return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC ||
	    cat == UTF8PROC_CATEGORY_ME;
}

/*
 * Is a code point past ASCII one a name may hold? Letters, marks and
 * digits of any script, assigned in the Unicode version utf8proc knows.
 * Everything else (spaces, punctuation, symbols, controls, format
 * characters, private use, unassigned) is refused: deny by default.
 */
static int
accepted_cp(uint32_t c)
{
	switch (utf8proc_category((utf8proc_int32_t)c)) {
	case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL:
	case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
	case UTF8PROC_CATEGORY_LO:
	case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC:
	case UTF8PROC_CATEGORY_ME:
	case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL:
	case UTF8PROC_CATEGORY_NO:
		return 1;
	default:
		return 0;
	}
}

/*
 * The key: NFKD, Unicode case folding, default ignorables and every mark
 * removed, recomposed (utf8proc). That is coarser than HFS+ and APFS
 * (canonical equivalence, case, their ignorables), so two names one of
 * those volumes takes for one always share a key; names it tells apart
 * may share one too (café and cafe), which only refuses more.
 * An ASCII name's key is its ASCII lower case: no ASCII character has a
 * compatibility form, a mark, an ignorable or a fold past ASCII (the unit
 * test compares the two ways for every ASCII character).
 */
static int
ascii_only(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

static char *
ascii_lower(const char *s)
{
	char *out = xstrdup(s), *p;

	for (p = out; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p + 32);
	return out;
}

#define FOLD_OPTIONS (UTF8PROC_NULLTERM | UTF8PROC_STABLE | UTF8PROC_COMPAT | \
	UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE | \
	UTF8PROC_STRIPMARK | UTF8PROC_REJECTNA)

char *
allowlist_fold(const char *path)
{
	const unsigned char *s = (const unsigned char *)path;
	utf8proc_uint8_t *key = NULL;
	uint32_t c;
	size_t n;

	if (ascii_only(path))
		return ascii_lower(path);
	for (; *s != '\0'; s += n)
		if ((n = utf8_decode(s, &c)) == 0 ||
		    (c >= 0x80 && !hfs_ignorable(c) && !accepted_cp(c)))
			return NULL;
	if (utf8proc_map((const utf8proc_uint8_t *)path, 0, &key,
	    FOLD_OPTIONS) < 0)
		return NULL;
	return (char *)key;
}

int
allowlist_case_equal(const char *a, const char *b)
{
	utf8proc_uint8_t *fa = NULL, *fb = NULL;
	int eq;

	eq = utf8proc_map((const utf8proc_uint8_t *)a, 0, &fa,
	    UTF8PROC_NULLTERM | UTF8PROC_CASEFOLD) >= 0 &&
	    utf8proc_map((const utf8proc_uint8_t *)b, 0, &fb,
	    UTF8PROC_NULLTERM | UTF8PROC_CASEFOLD) >= 0 &&
	    strcmp((char *)fa, (char *)fb) == 0;
	free(fa);
	free(fb);
	return eq;
}

/*
 * A segment as a case-insensitive, HFS+/NTFS-tolerant file system sees
 * it: ignorables dropped, ASCII lower-cased, trailing dots and spaces
 * dropped. Used only to recognise ".git" and its relatives.
 */
static char *
segment_fs_name(const char *seg, size_t len)
{
	struct buf b = BUF_INIT;
	size_t i, n;
	uint32_t c;

	buf_puts(&b, "");
	for (i = 0; i < len; i += n) {
		if ((n = utf8_decode((const unsigned char *)seg + i, &c)) == 0)
			n = 1, c = 0xfffd;
		if (hfs_ignorable(c))
			continue;
		if (c < 0x80)
			buf_addch(&b, (c >= 'A' && c <= 'Z') ? (char)(c + 32) :
			    (char)c);
		else
			buf_add(&b, seg + i, n);
	}
	while (b.len > 0 && (b.data[b.len - 1] == '.' ||
	    b.data[b.len - 1] == ' '))
		b.data[--b.len] = '\0';
	return buf_detach(&b);
}

/* Drop trailing dots and spaces, as Windows volumes do. */
static void
trim_trailing(char *name)
{
	size_t n = strlen(name);

	while (n > 0 && (name[n - 1] == '.' || name[n - 1] == ' '))
		name[--n] = '\0';
}

static int
is_dotgit(const char *name)
{
	return strcmp(name, ".git") == 0 || strcmp(name, "git~1") == 0;
}

static int
is_gitfile(const char *name)
{
	return strncmp(name, ".git", 4) == 0 || strcmp(name, ".mailmap") == 0 ||
	    strcmp(name, ".lfsconfig") == 0;
}

/*
 * A segment is .git (or a file git reads) if it is so as a file system
 * sees it (segment_fs_name) or under the collision key (a fullwidth
 * ".ｇｉｔ", ".gît"): the coarser reading refuses more, never less.
 */
static int
check_segment(struct allowlist_report *r, const char *path, const char *seg,
    size_t len)
{
	char *name, *copy, *key;
	int added = 0;

	if (len == 0) {
		allowlist_report_add(r, AL_BAD_PATH, path,
		    "empty path segment");
		return 1;
	}
	if ((len == 1 && seg[0] == '.') ||
	    (len == 2 && seg[0] == '.' && seg[1] == '.')) {
		allowlist_report_add(r, AL_BAD_PATH, path,
		    "'%.*s' segment", (int)len, seg);
		return 1;
	}
	name = segment_fs_name(seg, len);
	copy = xstrndup(seg, len);
	/* An ASCII segment's key, trimmed, is its file system name. */
	key = ascii_only(copy) ? NULL : allowlist_fold(copy);
	if (key != NULL)
		trim_trailing(key);
	if (is_dotgit(name) || (key != NULL && is_dotgit(key))) {
		allowlist_report_add(r, AL_DOTGIT, path,
		    "segment '%.*s' names the repository's .git", (int)len,
		    seg);
		added++;
	} else if (is_gitfile(name) || (key != NULL && is_gitfile(key))) {
		allowlist_report_add(r, AL_GITFILE, path,
		    "'%.*s' is read by git itself", (int)len, seg);
		added++;
	}
	free(key);
	free(copy);
	free(name);
	return added;
}

int
allowlist_check_path(struct allowlist_report *r, const char *path)
{
	const unsigned char *s;
	const char *seg;
	uint32_t c;
	size_t n;
	int added = 0;

	if (path == NULL || *path == '\0') {
		allowlist_report_add(r, AL_BAD_PATH, "", "empty path");
		return 1;
	}
	if (path[0] == '/') {
		allowlist_report_add(r, AL_BAD_PATH, path, "absolute path");
		return 1;
	}
	for (s = (const unsigned char *)path; *s != '\0'; s += n) {
		if ((n = utf8_decode(s, &c)) == 0) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "invalid UTF-8");
			return 1;
		}
		if (c == '\\' || c < 0x20 || c == 0x7f) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "backslash or control character");
			return 1;
		}
		if (invisible(c)) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "invisible code point U+%04X", (unsigned)c);
			added++;
			break;
		}
		if (c >= 0x80 && !accepted_cp(c)) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "code point U+%04X is not accepted in paths",
			    (unsigned)c);
			return 1;
		}
		if (combining_mark(c) && (s == (const unsigned char *)path ||
		    s[-1] == '/')) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "a segment starts with the combining mark U+%04X",
			    (unsigned)c);
			return 1;
		}
	}
	for (seg = path;; ) {
		const char *slash = strchr(seg, '/');
		size_t len = slash ? (size_t)(slash - seg) : strlen(seg);

		added += check_segment(r, path, seg, len);
		if (slash == NULL)
			break;
		seg = slash + 1;
	}
	return added;
}

/* Split s on '/' into a NULL-terminated vector; free with free(v[0]), free(v). */
static char **
split_segments(const char *s, size_t *count)
{
	char *copy = xstrdup(s), *p, **v;
	size_t n = 1, i = 0;

	for (p = copy; *p != '\0'; p++)
		if (*p == '/')
			n++;
	v = xcalloc(n + 1, sizeof(*v));
	v[i++] = copy;
	for (p = copy; *p != '\0'; p++)
		if (*p == '/') {
			*p = '\0';
			v[i++] = p + 1;
		}
	*count = n;
	return v;
}

static int
match_segments(char **g, size_t ng, size_t gi, char **p, size_t np, size_t pi)
{
	size_t k;

	for (; gi < ng; gi++, pi++) {
		if (strcmp(g[gi], "**") == 0) {
			if (gi == ng - 1)
				return np > pi;
			for (k = pi; k <= np; k++)
				if (match_segments(g, ng, gi + 1, p, np, k))
					return 1;
			return 0;
		}
		if (pi == np || fnmatch(g[gi], p[pi], 0) != 0)
			return 0;
	}
	return pi == np;
}

int
allowlist_glob_match(const char *glob, const char *path)
{
	char **g, **p;
	size_t ng, np;
	int m;

	if (glob == NULL || path == NULL || *glob == '\0' || *path == '\0')
		return 0;
	g = split_segments(glob, &ng);
	p = split_segments(path, &np);
	m = match_segments(g, ng, 0, p, np, 0);
	free(g[0]);
	free(g);
	free(p[0]);
	free(p);
	return m;
}

int
allowlist_match_any(const char *const *globs, size_t n, const char *path)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (allowlist_glob_match(globs[i], path))
			return 1;
	return 0;
}
