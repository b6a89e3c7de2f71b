/*
 * util.h - small helpers every module uses: allocation that aborts on
 * failure (alloc.h, included here), whole-file reads and atomic writes,
 * directories, and the one clock (CLOCK_MONOTONIC for durations, UTC wall
 * time for records).
 */
#ifndef WARDEN_UTIL_H
#define WARDEN_UTIL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"

char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Files warden reads are regular files of bounded size: a FIFO, a device
 * (a symlink to /dev/zero), a socket or a directory is refused at once,
 * without blocking or reading, as an input error (WEXIT_INPUT) naming the
 * file; so is a file larger than the limit. Open or read failures are
 * WEXIT_ENV (the loaders of input files make them WEXIT_INPUT).
 */
#define FILE_MAX_CONFIG	((size_t)4 << 20)	/* policy, adapters, profiles */
#define FILE_MAX_DATA	((size_t)64 << 20)	/* workloads, patches */
#define FILE_MAX_ANY	((size_t)1 << 30)	/* anything else */

/* Open a regular file for reading (following symlinks), or refuse it;
 * *size_out (may be NULL) gets its size. */
struct werr *file_open_regular(int *fd_out, const char *path,
    off_t *size_out);
/* Read a whole regular file of at most max bytes into out
 * (NUL-terminated). */
struct werr *file_read_max(struct buf *out, const char *path, size_t max);
/* file_read_max(out, path, FILE_MAX_ANY). */
struct werr *file_read(struct buf *out, const char *path);
/* Read what fd gives until its end, at most max bytes (more is an input
 * error naming name, and out is freed); for standard input. */
struct werr *file_read_fd_max(struct buf *out, int fd, const char *name,
    size_t max);
/* The last max bytes of a regular file (all of it if smaller). */
struct werr *file_read_tail(struct buf *out, const char *path, size_t max);
/* The last max bytes (at most) of the regular file open as fd, read
 * with pread (fd's offset is left alone); name is for errors. For a log
 * warden holds open: never reopened by name. */
struct werr *file_read_tail_fd(struct buf *out, int fd, const char *name,
    size_t max);
/* Write all of data to fd; name is for errors. */
struct werr *file_write_fd(int fd, const void *data, size_t len,
    const char *name);
/* Write data to path atomically (temp file + fsync + rename). */
struct werr *file_write_atomic(const char *path, const void *data, size_t len);
/* Append data to path, creating it; a symbolic link there is an error,
 * never followed. */
struct werr *file_append(const char *path, const void *data, size_t len);
/* mkdir -p, mode 0755. */
struct werr *mkdir_p(const char *path);
/* mkdir_p, then path a directory of its own: a symbolic link or
 * anything but a directory there is removed first (never followed).
 * For a folder of one that content no maintainer approved could write
 * (a triage scratch environment), before warden uses or shows it. */
struct werr *mkdir_real(const char *path);
/* rm -rf, never following a symbolic link (a link is removed, not what
 * it points at). A path that does not exist is not an error. */
struct werr *path_remove_tree(const char *path);
int path_exists(const char *path);
int path_is_dir(const char *path);
/* "a" + "/" + "b", caller frees. */
char *path_join(const char *a, const char *b);

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t mono_ns(void);
/* UTC wall time as "2026-12-02T15:20:18.123Z" into out (>= 32 bytes). */
void utc_now_iso(char *out, size_t outlen);
void utc_iso_from_time(char *out, size_t outlen, time_t t);

/* Does the string end with suffix / start with prefix? */
int str_endswith(const char *s, const char *suffix);
int str_startswith(const char *s, const char *prefix);

/* Is s valid UTF-8, as every JSON string must be? (jansson decides.) */
int text_is_utf8(const char *s);
/* NULL when s is valid UTF-8, else an input error (exit 2) naming what:
 * "'--as' is not valid UTF-8". s may be NULL (valid). */
struct werr *text_check(const char *what, const char *s);

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 if none:
 * RFC 3629, no overlongs, no surrogates, nothing above U+10FFFF. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* Make b valid UTF-8 from byte offset from on, replacing each byte that
 * does not start a valid sequence with U+FFFD: for text warden did not
 * write (an engine's log) that goes into JSON. */
void text_make_utf8(struct buf *b, size_t from);

/* s as a JSON string, each byte that is not UTF-8 replaced by U+FFFD (see
 * text_make_utf8); NULL for NULL. For text from files, repositories or
 * engines that output must not silently drop. */
struct json_t;
struct json_t *json_text(const char *s);
/* A deep copy of v whose strings write root (a path: followed by '/' or
 * the end) as ".": what is published names no local path (an engine
 * manifest's env_dir, a journal entry's log). root NULL or "/": a copy. */
struct json_t *json_paths_relative(const struct json_t *v, const char *root);

/* strcmp on (const char **) for qsort. */
int strcmp_ptr(const void *a, const void *b);

#endif
