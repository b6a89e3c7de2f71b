/*
 * report.c - the gate's verdict: a list of violations, each with a stable
 * code, the path and a reason, plus the list of changed files.
 *
 * The code names are an output format read by CI and by people; they must
 * never change. Nothing here decides anything.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

static const char *const code_names[AL_CODE_COUNT] = {
	[AL_OUTSIDE_ALLOWLIST] = "outside-allowlist",
	[AL_BAD_PATH] = "bad-path",
	[AL_DOTGIT] = "dotgit",
	[AL_GITFILE] = "gitfile",
	[AL_CASE_COLLISION] = "case-collision",
	[AL_UNICODE_COLLISION] = "unicode-collision",
	[AL_SYMLINK] = "symlink",
	[AL_GITLINK] = "gitlink",
	[AL_MODE] = "mode",
	[AL_BINARY] = "binary",
	[AL_TOO_LARGE] = "too-large",
	[AL_TOO_MANY_FILES] = "too-many-files",
	[AL_COPY_FROM_OUTSIDE] = "copy-from-outside",
	[AL_PREFIX_NOT_DIR] = "prefix-not-dir",
	[AL_MALFORMED] = "malformed",
	[AL_EMPTY_FILE_UNSUPPORTED] = "empty-file-unsupported",
	[AL_RESULT_MISMATCH] = "result-mismatch",
	[AL_SPECIAL_FILE] = "special-file",
	[AL_HARD_LINK] = "hard-link",
	[AL_UNREADABLE] = "unreadable",
};

void
allowlist_file_stats(struct allowlist_file *f, git_patch *patch)
{
	const git_diff_hunk *h;
	const git_diff_line *l;
	size_t nlines, i, adds = 0, dels = 0;
	int pos;

	f->added = f->deleted = 0;
	f->first_line = 1;
	if (patch == NULL)
		return;
	git_patch_line_stats(NULL, &adds, &dels, patch);
	f->added = adds;
	f->deleted = dels;
	if (git_patch_num_hunks(patch) == 0 ||
	    git_patch_get_hunk(&h, &nlines, patch, 0) < 0)
		return;
	/* The first added line, or where the first deletion was. */
	pos = h->new_start;
	for (i = 0; i < nlines; i++) {
		if (git_patch_get_line_in_hunk(&l, patch, 0, i) < 0)
			break;
		if (l->origin == GIT_DIFF_LINE_ADDITION) {
			pos = l->new_lineno;
			break;
		}
		if (l->origin == GIT_DIFF_LINE_DELETION)
			break;
		if (l->new_lineno > 0)
			pos = l->new_lineno + 1;
	}
	f->first_line = pos > 0 ? (size_t)pos : 1;
}

char
allowlist_status_char(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:
		return 'A';
	case GIT_DELTA_DELETED:
		return 'D';
	case GIT_DELTA_MODIFIED:
		return 'M';
	case GIT_DELTA_RENAMED:
		return 'R';
	case GIT_DELTA_COPIED:
		return 'C';
	case GIT_DELTA_TYPECHANGE:
		return 'T';
	default:
		return '?';
	}
}

const char *
allowlist_code_name(enum allowlist_code code)
{
	if ((unsigned)code >= AL_CODE_COUNT)
		return "unknown";
	return code_names[code];
}

void
allowlist_report_init(struct allowlist_report *r)
{
	memset(r, 0, sizeof(*r));
}

void
allowlist_report_free(struct allowlist_report *r)
{
	size_t i;

	for (i = 0; i < r->nv; i++) {
		free(r->v[i].path);
		free(r->v[i].reason);
		free(r->v[i].commit);
	}
	for (i = 0; i < r->nfiles; i++) {
		free(r->files[i].old_path);
		free(r->files[i].new_path);
	}
	free(r->v);
	free(r->files);
	memset(r, 0, sizeof(*r));
}

static void report_add_v(struct allowlist_report *, enum allowlist_code,
    const char *, const char *, va_list) __attribute__((format(printf, 4, 0)));

static void
report_add_v(struct allowlist_report *r, enum allowlist_code code,
    const char *path, const char *fmt, va_list ap)
{
	const char *commit = r->commit;
	struct allowlist_violation *v;
	struct buf reason = BUF_INIT;
	size_t i;

	if (path == NULL)
		path = "";
	/* One entry per code and path: the first commit that shows it is
	 * named, so a range lists each problem once, where it began. */
	for (i = 0; i < r->nv; i++)
		if (r->v[i].code == code && strcmp(r->v[i].path, path) == 0) {
			if (r->v[i].commit == NULL && commit != NULL)
				r->v[i].commit = xstrdup(commit);
			return;
		}
	if (r->nv == r->capv) {
		r->capv = r->capv ? r->capv * 2 : 8;
		r->v = xrealloc(r->v, r->capv * sizeof(*r->v));
	}
	buf_vprintf(&reason, fmt, ap);
	v = &r->v[r->nv++];
	v->code = code;
	v->path = xstrdup(path);
	v->reason = buf_detach(&reason);
	v->commit = commit ? xstrdup(commit) : NULL;
}

void
allowlist_report_add(struct allowlist_report *r, enum allowlist_code code,
    const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_add_v(r, code, path, fmt, ap);
	va_end(ap);
}

int
allowlist_report_has(const struct allowlist_report *r, enum allowlist_code code)
{
	size_t i;

	for (i = 0; i < r->nv; i++)
		if (r->v[i].code == code)
			return 1;
	return 0;
}

int
allowlist_report_exit(const struct allowlist_report *r)
{
	if (r->nv == 0)
		return 0;
	if (allowlist_report_has(r, AL_MALFORMED) ||
	    allowlist_report_has(r, AL_EMPTY_FILE_UNSUPPORTED))
		return 2;
	return 1;
}
