/*
 * beneath.h - opening a file in a folder that a program no maintainer
 * approved could have written (a triage scratch environment, an agent's
 * HOME): relative to a descriptor of the trusted folder above it, one
 * component at a time, never following a symbolic link (O_NOFOLLOW on
 * every component; openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where
 * the kernel has it), a regular file only, read within a bound.
 *
 * The folder named as root is trusted (warden made it); everything
 * below it is not. A link, a FIFO, a device, a socket or a "..", at any
 * depth, is refused as an input error (WEXIT_INPUT) naming the path,
 * never opened. Never prints.
 */
#ifndef WARDEN_BENEATH_H
#define WARDEN_BENEATH_H

#include <sys/types.h>

#include <stddef.h>

#include "buf.h"
#include "error.h"

/* Open root/rel for reading; *size_out (may be NULL) gets its size. rel
 * is relative, without "." or ".." components. */
struct werr *file_open_beneath(int *fd_out, off_t *size_out,
    const char *root, const char *rel);

/* Open the folder root/rel (rel as above) for reading its entries. */
struct werr *dir_open_beneath(int *fd_out, const char *root,
    const char *rel);

/* Read the whole of root/rel, at most max bytes (more is an input error),
 * into out, NUL-terminated. */
struct werr *file_read_beneath(struct buf *out, const char *root,
    const char *rel, size_t max);

/* file_read_beneath with path, which must lie under root: the part of
 * path after "root/" is rel. */
struct werr *file_read_under(struct buf *out, const char *root,
    const char *path, size_t max);

#endif
