/*
 * error.c - constructors for struct werr. See error.h.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"

struct werr *
werr_vnew(enum werr_exit exit, const char *fmt, va_list ap)
{
	struct werr *err = xcalloc(1, sizeof(*err));
	struct buf b = BUF_INIT;

	buf_vprintf(&b, fmt, ap);
	err->exit = exit;
	err->msg = buf_detach(&b);
	return err;
}

struct werr *
werr_new(enum werr_exit exit, const char *fmt, ...)
{
	struct werr *err;
	va_list ap;

	va_start(ap, fmt);
	err = werr_vnew(exit, fmt, ap);
	va_end(ap);
	return err;
}

struct werr *
werr_errno(const char *op, const char *path)
{
	int saved = errno;

	if (path != NULL)
		return werr_new(WEXIT_ENV, "%s '%s': %s", op, path,
		    strerror(saved));
	return werr_new(WEXIT_ENV, "%s: %s", op, strerror(saved));
}

struct werr *
werr_git(const char *what, ...)
{
	const git_error *ge = git_error_last();
	struct buf b = BUF_INIT;
	struct werr *err;
	va_list ap;

	va_start(ap, what);
	buf_vprintf(&b, what, ap);
	va_end(ap);
	err = werr_new(WEXIT_ENV, "%s: %s", buf_cstr(&b),
	    ge != NULL && ge->message != NULL ? ge->message : "unknown libgit2 error");
	buf_free(&b);
	return err;
}

struct werr *
werr_at(const char *file, int line, int col, const char *field,
    const char *fmt, ...)
{
	struct werr *err = xcalloc(1, sizeof(*err));
	struct werr_loc *loc = xcalloc(1, sizeof(*loc));
	struct buf b = BUF_INIT, t = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&t, fmt, ap);
	va_end(ap);
	loc->file = xstrdup(file != NULL ? file : "<input>");
	loc->line = line > 0 ? line : 0;
	loc->col = loc->line > 0 && col > 0 ? col : 0;
	loc->field = field != NULL && field[0] != '\0' ? xstrdup(field) : NULL;
	loc->text = buf_detach(&t);
	buf_puts(&b, loc->file);
	if (loc->line > 0)
		buf_printf(&b, ":%d", loc->line);
	if (loc->col > 0)
		buf_printf(&b, ":%d", loc->col);
	buf_puts(&b, ": ");
	if (loc->field != NULL)
		buf_printf(&b, "'%s' ", loc->field);
	buf_puts(&b, loc->text);
	err->exit = WEXIT_INPUT;
	err->msg = buf_detach(&b);
	err->loc = loc;
	return err;
}

struct werr *
werr_usage(const char *fmt, ...)
{
	struct werr *err;
	va_list ap;

	va_start(ap, fmt);
	err = werr_vnew(WEXIT_INPUT, fmt, ap);
	va_end(ap);
	return err;
}

struct werr *
werr_wrap(struct werr *err, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	if (err == NULL)
		return NULL;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	buf_printf(&b, ": %s", err->msg);
	free(err->msg);
	err->msg = buf_detach(&b);
	return err;
}

void
werr_free(struct werr *err)
{
	if (err == NULL)
		return;
	free(err->msg);
	free(err->usage);
	if (err->loc != NULL) {
		free(err->loc->file);
		free(err->loc->field);
		free(err->loc->text);
		free(err->loc);
	}
	free(err);
}
