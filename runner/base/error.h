/*
 * error.h - the one error type of warden.
 *
 * Every fallible function returns a `struct werr *`: NULL is success,
 * anything else is an error the caller owns and frees with werr_free()
 * (or passes up). An error carries a message and the exit-code class the
 * program ends with. Constructors exist for each library warden uses, so a
 * message always says what failed and on which file.
 * Messages are lowercase with no trailing period, in git's voice.
 */
#ifndef WARDEN_ERROR_H
#define WARDEN_ERROR_H

#include <stdarg.h>

/* Exit codes, documented in README.md, warden(1) and each command's page. Stable. */
enum werr_exit {
	WEXIT_OK = 0,
	WEXIT_PROBLEM = 1,	/* the command ran and found a problem */
	WEXIT_INPUT = 2,	/* usage or input error */
	WEXIT_ENV = 3,		/* environment: no repo, locked store, ... */
	WEXIT_WAITING = 4,	/* cycle: done, its fixes wait for review */
};

/* Where werr_at() placed an error, kept apart for a caller that lists
 * problems by file, line and field (lint); msg says all of it in one line. */
struct werr_loc {
	char *file;
	int line, col;		/* 0: none */
	char *field;		/* or NULL */
	char *text;		/* the message after the location and field */
};

struct werr {
	enum werr_exit exit;
	char *msg;
	char *usage;	/* a usage error's synopsis (warden's own text, printed
			 * under msg as is), or NULL */
	struct werr_loc *loc;	/* werr_at()'s, else NULL */
};

struct werr *werr_new(enum werr_exit exit, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct werr *werr_vnew(enum werr_exit exit, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* "OP 'PATH': strerror(errno)", class WEXIT_ENV. path may be NULL. */
struct werr *werr_errno(const char *op, const char *path);
/* "WHAT: <git_error_last()>", class WEXIT_ENV. */
struct werr *werr_git(const char *what, ...)
    __attribute__((format(printf, 1, 2)));
/* Bad input at FILE:LINE:COL, naming FIELD; class WEXIT_INPUT.
 * line/col of 0 are left out. field may be NULL. The parts are kept in
 * err->loc too. */
struct werr *werr_at(const char *file, int line, int col, const char *field,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
struct werr *werr_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* Prefix an existing error's message with "PREFIX: ". Returns err. */
struct werr *werr_wrap(struct werr *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void werr_free(struct werr *err);

#endif
