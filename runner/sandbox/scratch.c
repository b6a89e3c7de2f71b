/*
 * scratch.c - the folder of an unreviewed run: the copy of a trusted
 * tree it gets, and what it left, measured and removed. See scratch.h.
 *
 * nftw(3) with FTW_PHYS walks the trees: it never follows a symbolic
 * link, so a link the run left behind is measured and removed as a link.
 * The copy is written here rather than with libarchive's disk writer
 * because the point is the clone (clonefile(2), FICLONE): an engine's
 * HOME may hold gigabytes of virtual environment, and a clone of it
 * costs no bytes on APFS, btrfs or XFS. Never prints.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/ioctl.h>
#include <linux/fs.h>
#endif
#ifdef __APPLE__
#include <sys/clonefile.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "util.h"

/* nftw's callbacks take no argument: the walk's state, one walk at a
 * time (warden's campaign is one thread when it copies or discards). */
static struct {
	const char *src;
	size_t src_len;
	const char *dst;
	struct werr *err;
	struct scratch_usage *usage;
} walk_state;

/* Copy the bytes of in to out: a clone where the file system can. */
static int
copy_bytes(int in, int out, off_t size)
{
	char chunk[65536];
	ssize_t n;

#ifdef FICLONE
	if (ioctl(out, FICLONE, in) == 0)
		return 0;
#endif
#ifdef __linux__
	{
		off_t left = size;

		while (left > 0) {
			n = copy_file_range(in, NULL, out, NULL, (size_t)left,
			    0);
			if (n <= 0)
				break;
			left -= n;
		}
		if (left == 0)
			return 0;
		if (lseek(in, size - left, SEEK_SET) == (off_t)-1 ||
		    lseek(out, size - left, SEEK_SET) == (off_t)-1)
			return -1;
	}
#else
	(void)size;
#endif
	for (;;) {
		n = read(in, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		if (file_write_fd(out, chunk, (size_t)n, "copy") != NULL)
			return -1;	/* errno says why */
	}
}

static int
copy_file(const char *from, const char *to, const struct stat *st)
{
	int in, out, rc, saved;

	if ((in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    st->st_mode & 07777);
	if (out == -1) {
		saved = errno;
		close(in);
		errno = saved;
		return -1;
	}
	rc = copy_bytes(in, out, st->st_size);
	saved = errno;
	close(in);
	if (close(out) == -1 && rc == 0)
		return -1;
	errno = saved;
	return rc;
}

static int
copy_entry(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	char *to = xasprintf("%s%s", walk_state.dst,
	    path + walk_state.src_len);
	const char *what = "copy";
	int rc = 0;

	(void)ftw;
	if (flag == FTW_D) {
		what = "mkdir";
		rc = mkdir(to, (st->st_mode & 07777) | 0700);
	} else if (flag == FTW_SL) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		what = "symlink";
		if (n >= 0) {
			target[n] = '\0';
			rc = symlink(target, to);
		} else
			rc = -1;
	} else if (flag == FTW_F && S_ISREG(st->st_mode)) {
		rc = copy_file(path, to, st);
	}
	/* A FIFO, socket or device is left out; an unreadable folder too. */
	if (rc == -1)
		walk_state.err = werr_errno(what, to);
	free(to);
	return rc == -1 ? 1 : 0;
}

struct werr *
scratch_copy_tree(const char *src, const char *dst)
{
	struct stat st;
	struct werr *err;

	if (lstat(src, &st) == -1 || !S_ISDIR(st.st_mode))
		return mkdir_p(dst);
	if ((err = mkdir_p(dst)) != NULL)
		return err;
	if (rmdir(dst) == -1)
		return werr_errno("rmdir", dst);
#ifdef __APPLE__
	/* One call clones the whole hierarchy on APFS, links as links. */
	if (clonefile(src, dst, CLONE_NOFOLLOW) == 0)
		return NULL;
	(void)scratch_discard(dst);
#endif
	walk_state.src = src;
	walk_state.src_len = strlen(src);
	walk_state.dst = dst;
	walk_state.err = NULL;
	if (nftw(src, copy_entry, 16, FTW_PHYS) != 0 && walk_state.err == NULL)
		walk_state.err = werr_errno("copy", src);
	err = walk_state.err;
	walk_state.err = NULL;
	if (err != NULL)
		werr_free(scratch_discard(dst));
	return err;
}

static int
measure_entry(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	struct scratch_usage *u = walk_state.usage;

	(void)path;
	(void)ftw;
	if (u->files + u->dirs >= SCRATCH_MEASURE_MAX) {
		u->cut = 1;
		return 1;
	}
	if (flag == FTW_D || flag == FTW_DNR || flag == FTW_DP) {
		u->dirs++;
		return 0;
	}
	u->files++;
	if (flag == FTW_F && S_ISREG(st->st_mode)) {
		u->bytes += (uint64_t)st->st_size;
		u->disk_bytes += (uint64_t)st->st_blocks * 512;
	}
	return 0;
}

void
scratch_measure(const char *dir, struct scratch_usage *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode))
		return;
	walk_state.usage = out;
	(void)nftw(dir, measure_entry, 16, FTW_PHYS);
	walk_state.usage = NULL;
}

static int opened_unreadable;

/* Make each folder readable, writable and searchable by warden, whatever
 * mode the run left it with. A folder nftw could not read (FTW_DNR) is
 * opened up and walked on the next pass. */
static int
open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if ((flag == FTW_D || flag == FTW_DNR) &&
	    (st->st_mode & 0700) != 0700) {
		(void)chmod(path, (st->st_mode & 07777) | 0700);
		if (flag == FTW_DNR)
			opened_unreadable = 1;
	}
	return 0;
}

struct werr *
scratch_discard(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) == -1)
		return errno == ENOENT ? NULL : werr_errno("lstat", dir);
	if (S_ISDIR(st.st_mode)) {
		int pass;

		(void)chmod(dir, (st.st_mode & 07777) | 0700);
		for (pass = 0; pass < 64; pass++) {
			opened_unreadable = 0;
			(void)nftw(dir, open_up, 16, FTW_PHYS);
			if (!opened_unreadable)
				break;
		}
	}
	return path_remove_tree(dir);
}
