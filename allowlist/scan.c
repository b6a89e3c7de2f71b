/*
 * scan.c - the gate's own reading of a patch text, independent of
 * libgit2's parser: file headers, header-line paths, repeated headers,
 * unbalanced quotes, hunk extents, and empty-file sections.
 *
 * libgit2 1.5 normalises some paths ("a//x" becomes "x") and leaks or
 * misbehaves on some malformed headers, so the text is checked first and
 * refused outright when it cannot be a patch git would write. It never
 * relies on the text being NUL-terminated.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "buf.h"
#include "scan.h"
#include "util.h"

/*
 * A path as written in a header line of the text. libgit2 normalises
 * some forms away ("a//x" becomes "x"), so the text is checked too: the
 * text and the parse must both be clean.
 */
static int
check_raw_path(struct allowlist_report *r, const char *s, size_t len,
    int strip_prefix)
{
	char *path, *seg;

	if (len >= 2 && s[0] == '"' && s[len - 1] == '"') {
		s++;
		len -= 2;
	} else if (len > 0 && (s[0] == '"' || s[len - 1] == '"')) {
		/* libgit2 1.5 leaks on an unterminated quote. */
		allowlist_report_add(r, AL_MALFORMED, "",
		    "unbalanced quotes around the path '%.*s'", (int)len, s);
		return -1;
	}
	if (len == 9 && memcmp(s, "/dev/null", 9) == 0)
		return 0;
	if (strip_prefix && len >= 2 && (s[0] == 'a' || s[0] == 'b') &&
	    s[1] == '/') {
		s += 2;
		len -= 2;
	}
	path = xstrndup(s, len);
	if (path[0] == '/' || strstr(path, "//") != NULL) {
		allowlist_report_add(r, AL_BAD_PATH, path,
		    "absolute path or empty segment in the patch text");
		goto out;
	}
	for (seg = path; seg != NULL; seg = strchr(seg, '/')) {
		if (*seg == '/')
			seg++;
		if ((seg[0] == '.' && (seg[1] == '/' || seg[1] == '\0')) ||
		    (seg[0] == '.' && seg[1] == '.' &&
		    (seg[2] == '/' || seg[2] == '\0'))) {
			allowlist_report_add(r, AL_BAD_PATH, path,
			    "'.' or '..' segment in the patch text");
			goto out;
		}
	}
out:
	free(path);
	return 0;
}

/* Does the (not NUL-terminated) line start with prefix? */
static int
line_starts(const char *line, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(line, prefix, n) == 0;
}


void
scan_free(struct scan *sc)
{
	size_t i;

	for (i = 0; i < sc->nempty; i++)
		free(sc->empty[i]);
	free(sc->empty);
	free(sc->path);
}

/* The path of "diff --git a/X b/X", for messages only. */
static char *
header_path(const char *line, size_t len)
{
	const char *b = line + 11, *end = line + len, *sp = NULL, *q;

	for (q = b; q + 2 < end; q++)
		if (q[0] == ' ' && q[1] == 'b' && q[2] == '/')
			sp = q;
	return sp ? xstrndup(sp + 3, (size_t)(end - sp - 3)) :
	    xstrndup(b, (size_t)(end - b));
}

static void
end_section(struct scan *sc)
{
	if (sc->in_section && sc->creates && !sc->has_body) {
		sc->empty = xrealloc(sc->empty,
		    (sc->nempty + 1) * sizeof(char *));
		sc->empty[sc->nempty++] = sc->path;
	} else
		free(sc->path);
	sc->path = NULL;
}

static void
scan_line(struct allowlist_report *r, struct scan *sc, const char *line,
    size_t len)
{
	static const struct {
		const char *prefix;
		int strip;	/* 1: a path with a/ b/ prefix, 0: a path,
				 * -1: not a path */
	} heads[] = {
		{ "--- ", 1 }, { "+++ ", 1 }, { "rename from ", 0 },
		{ "rename to ", 0 }, { "copy from ", 0 }, { "copy to ", 0 },
		{ "old mode ", -1 }, { "new mode ", -1 },
		{ "new file mode ", -1 }, { "deleted file mode ", -1 },
		{ "similarity index ", -1 }, { "dissimilarity index ", -1 },
		{ "index ", -1 },
	};
	size_t i, n;

	if (sc->old_left > 0 || sc->new_left > 0) {
		if (len > 0 && line[0] == ' ') {
			sc->old_left--;
			sc->new_left--;
			return;
		} else if (len > 0 && line[0] == '-') {
			sc->old_left--;
			return;
		} else if (len > 0 && line[0] == '+') {
			sc->new_left--;
			return;
		} else if (len > 0 && line[0] == '\\')
			return;
		sc->old_left = sc->new_left = 0;
	}
	if (len >= 3 && memcmp(line, "@@ ", 3) == 0) {
		char *h = xstrndup(line, len), *p;

		sc->has_body = 1;
		sc->old_left = sc->new_left = 1;
		if ((p = strchr(h, '-')) != NULL) {
			p = strchr(p, ',');
			if (p != NULL && p < strchr(h, '+'))
				sc->old_left = strtol(p + 1, NULL, 10);
		}
		if ((p = strchr(h, '+')) != NULL && (p = strchr(p, ',')) &&
		    p < strstr(h + 2, "@@"))
			sc->new_left = strtol(p + 1, NULL, 10);
		free(h);
		return;
	}
	if (line_starts(line, len, "new file mode") ||
	    line_starts(line, len, "deleted file mode"))
		sc->creates = 1;
	else if (line_starts(line, len, "GIT binary patch") ||
	    line_starts(line, len, "Binary files") ||
	    line_starts(line, len, "similarity index"))
		sc->has_body = 1;
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		n = strlen(heads[i].prefix);
		if (len >= n && memcmp(line, heads[i].prefix, n) == 0) {
			/* "+++ b/x\tdate": the path ends at a tab. */
			size_t plen = len - n;
			const char *tab = memchr(line + n, '\t', plen);

			/* libgit2 1.5 leaks on some repeated header lines;
			 * a repeated header is malformed anyway. */
			if (sc->seen & (1u << i)) {
				allowlist_report_add(r, AL_MALFORMED,
				    sc->path ? sc->path : "",
				    "header '%.*s' repeated in one file's "
				    "section", (int)(n - 1), heads[i].prefix);
				sc->refused = 1;
			}
			sc->seen |= 1u << i;
			if (heads[i].strip < 0)
				return;
			if (tab != NULL)
				plen = (size_t)(tab - line - n);
			if (check_raw_path(r, line + n, plen,
			    heads[i].strip) < 0)
				sc->refused = 1;
			return;
		}
	}
}

/*
 * What the text says, independently of libgit2: the number of file
 * headers, the paths of header lines, repeated header lines, and the
 * sections that add or delete an empty file (libgit2 1.5 cannot parse
 * those). Fills sc; the caller frees it with scan_free().
 */
void
scan_patch_text(struct allowlist_report *r, struct scan *sc, const char *text,
    size_t len)
{
	size_t i, eol;

	memset(sc, 0, sizeof(*sc));
	for (i = 0; i < len; i = eol + 1) {
		const char *line = text + i;

		eol = i;
		while (eol < len && text[eol] != '\n')
			eol++;
		if (eol - i >= 11 && memcmp(line, "diff --git ", 11) == 0 &&
		    sc->old_left <= 0 && sc->new_left <= 0) {
			end_section(sc);
			sc->headers++;
			sc->in_section = 1;
			sc->creates = sc->has_body = 0;
			sc->seen = 0;
			sc->path = header_path(line, eol - i);
			continue;
		}
		if (sc->in_section)
			scan_line(r, sc, line, eol - i);
	}
	end_section(sc);
}

