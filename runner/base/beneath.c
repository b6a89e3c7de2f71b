/*
 * beneath.c - open a file below a trusted folder without following a
 * link. See beneath.h.
 *
 * The component walk (openat with O_NOFOLLOW, O_DIRECTORY for folders)
 * is the portable way, and enough: every component is checked as it is
 * opened, from the descriptor of the one above, so a link planted
 * anywhere below root is never followed. Linux's openat2 does the same
 * in one call and is tried first.
 */
#include "config.h"

#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "util.h"

#if defined(__linux__) && defined(SYS_openat2)
struct beneath_how {		/* struct open_how, linux/openat2.h */
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};
#define BENEATH_RESOLVE_NO_MAGICLINKS	0x02
#define BENEATH_RESOLVE_NO_SYMLINKS	0x04
#define BENEATH_RESOLVE_BENEATH		0x08
#endif

static struct werr *
refused(const char *root, const char *rel, const char *why)
{
	return werr_new(WEXIT_INPUT, "'%s/%s' %s; warden opens nothing there "
	    "through a link or but a regular file", root, rel, why);
}

/* rel is a plain relative path: no "", ".", ".." component, not
 * absolute. */
static int
rel_ok(const char *rel)
{
	const char *p = rel, *slash;

	if (*rel == '\0' || *rel == '/')
		return 0;
	for (;;) {
		size_t n;

		slash = strchr(p, '/');
		n = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (slash == NULL)
			return 1;
		p = slash + 1;
	}
}

/* The walk: each folder from its parent's descriptor, then the last
 * component with flags. */
static int
open_walk(int dirfd, const char *rel, int flags)
{
	char *copy = xstrdup(rel), *p = copy, *slash;
	int fd = dup(dirfd), next, saved;

	while (fd != -1 && (slash = strchr(p, '/')) != NULL) {
		*slash = '\0';
		next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		saved = errno;
		close(fd);
		errno = saved;
		fd = next;
		p = slash + 1;
	}
	if (fd != -1) {
		next = openat(fd, p, flags);
		saved = errno;
		close(fd);
		errno = saved;
		fd = next;
	}
	free(copy);
	return fd;
}

/* root/rel opened with flags (O_NOFOLLOW among them), no component a
 * link: *fd_out, or an error naming the path. */
static struct werr *
open_beneath(int *fd_out, const char *root, const char *rel, int flags)
{
	int dirfd, fd;

	*fd_out = -1;
	if (!rel_ok(rel))
		return refused(root, rel, "is not a plain path below its "
		    "folder");
	if ((dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return werr_errno("open", root);
#if defined(__linux__) && defined(SYS_openat2)
	{
		struct beneath_how how = { (uint64_t)flags, 0,
		    BENEATH_RESOLVE_BENEATH | BENEATH_RESOLVE_NO_SYMLINKS |
		    BENEATH_RESOLVE_NO_MAGICLINKS };

		fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
		if (fd == -1 && (errno == ENOSYS || errno == EPERM ||
		    errno == E2BIG))
			fd = open_walk(dirfd, rel, flags);  /* an older kernel */
	}
#else
	fd = open_walk(dirfd, rel, flags);
#endif
	close(dirfd);
	if (fd == -1) {
		if (errno == ELOOP || errno == ENOTDIR || errno == EXDEV)
			return refused(root, rel, "goes through a symbolic "
			    "link");
		return werr_errno("open", rel);
	}
	*fd_out = fd;
	return NULL;
}

struct werr *
dir_open_beneath(int *fd_out, const char *root, const char *rel)
{
	return open_beneath(fd_out, root, rel, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
}

struct werr *
file_open_beneath(int *fd_out, off_t *size_out, const char *root,
    const char *rel)
{
	struct stat st;
	struct werr *err;
	int fd, flags;

	if ((err = open_beneath(&fd, root, rel, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) != NULL)
		return err;
	if (fstat(fd, &st) == -1) {
		err = werr_errno("stat", rel);
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return refused(root, rel, "is not a regular file");
	}
	if ((flags = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	*fd_out = fd;
	if (size_out != NULL)
		*size_out = st.st_size;
	return NULL;
}

struct werr *
file_read_beneath(struct buf *out, const char *root, const char *rel,
    size_t max)
{
	struct werr *err;
	off_t size;
	int fd;

	if ((err = file_open_beneath(&fd, &size, root, rel)) != NULL)
		return err;
	if (size > 0 && (uint64_t)size > max) {
		close(fd);
		return werr_new(WEXIT_INPUT, "'%s/%s' is larger than %zu "
		    "bytes, the most warden reads from such a file", root, rel,
		    max);
	}
	buf_reset(out);
	err = file_read_fd_max(out, fd, rel, max);
	close(fd);
	return err;
}

struct werr *
file_read_under(struct buf *out, const char *root, const char *path,
    size_t max)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n) != 0 || path[n] != '/')
		return werr_new(WEXIT_INPUT, "'%s' is not below '%s'", path,
		    root);
	return file_read_beneath(out, root, path + n + 1, max);
}
