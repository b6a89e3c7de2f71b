/*
 * path.c - path rules of the allowlist gate: glob matching, the collision
 * key (case and Unicode folding as macOS volumes do it, or coarser), and
 * the path-only checks (bad-path, dotgit, gitfile).
 *
 * Everything here is pure string work on repository-relative paths as git
 * stores them ('/'-separated, no prefix). It must never accept a path it
 * cannot fully classify: an unknown code point is a bad path.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

/* U+00C0..U+017F: the ASCII base letter (lower case) of each Latin letter
 * with a diacritic, '.' where there is none (the code point is refused). */
static const char latin_base[] =
	"aaaaaa.ceeeeiiii.nooooo..uuuuy..aaaaaa.ceeeeiiii.nooooo..uuuuy.y"
	"aaaaaaccccccccdd..eeeeeeeeeegggggggghh..iiiiiiiii...jjkk.llllll."
	"...nnnnnn...oooooo..rrrrrrsssssssstttt..uuuuuuuuuuuuwwyyyzzzzzz.";

/* Decode one UTF-8 code point at s; return its length, 0 if invalid. */
static size_t
utf8_decode(const unsigned char *s, uint32_t *cp)
{
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		c = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and out-of-range values are invalid. */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
	    (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Code points HFS+ and APFS ignore when comparing names (git's list). */
static int
hfs_ignorable(uint32_t c)
{
	return (c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	    (c >= 0x206a && c <= 0x206f) || c == 0xfeff;
}

static int
combining_mark(uint32_t c)
{
	return c >= 0x300 && c <= 0x36f;
}

/*
 * Fold one code point into key. Returns 0 if the code point is refused.
 */
static int
fold_cp(struct buf *key, uint32_t c)
{
	if (c < 0x80) {
		buf_addch(key, (c >= 'A' && c <= 'Z') ? (char)(c + 32) :
		    (char)c);
		return 1;
	}
	if (hfs_ignorable(c) || combining_mark(c))
		return 1;
	if (c >= 0xc0 && c <= 0x17f && latin_base[c - 0xc0] != '.') {
		buf_addch(key, latin_base[c - 0xc0]);
		return 1;
	}
	return 0;
}

char *
allowlist_fold(const char *path)
{
	const unsigned char *s = (const unsigned char *)path;
	struct buf key = BUF_INIT;
	uint32_t c;
	size_t n;

	buf_puts(&key, "");
	while (*s != '\0') {
		if ((n = utf8_decode(s, &c)) == 0 || !fold_cp(&key, c)) {
			buf_free(&key);
			return NULL;
		}
		s += n;
	}
	return buf_detach(&key);
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

static int
check_segment(struct allowlist_report *r, const char *path, const char *seg,
    size_t len)
{
	char *name;
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
	if (strcmp(name, ".git") == 0 || strcmp(name, "git~1") == 0) {
		allowlist_report_add(r, AL_DOTGIT, path,
		    "segment '%.*s' names the repository's .git", (int)len,
		    seg);
		added++;
	} else if (strncmp(name, ".git", 4) == 0 ||
	    strcmp(name, ".mailmap") == 0 || strcmp(name, ".lfsconfig") == 0) {
		allowlist_report_add(r, AL_GITFILE, path,
		    "'%.*s' is read by git itself", (int)len, seg);
		added++;
	}
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
		if (hfs_ignorable(c)) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "invisible code point U+%04X", (unsigned)c);
			added++;
			break;
		}
		if (c >= 0x80 && !combining_mark(c) &&
		    !(c >= 0xc0 && c <= 0x17f && latin_base[c - 0xc0] != '.')) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "code point U+%04X is not accepted in paths",
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
