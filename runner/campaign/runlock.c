/*
 * runlock.c - whole-run locks, machine-wide and per repository. See
 * runlock.h.
 *
 * The machine's lock lives in a directory every user can write (/tmp):
 * it is opened without following a symlink and must be a regular file,
 * so nobody can point warden's truncate-and-write at a file of theirs;
 * it is created mode 0666 and opened without O_CREAT when it exists (an
 * O_CREAT open of another user's file in a sticky directory fails where
 * fs.protected_regular is set). Never prints.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runlock.h"
#include "util.h"

struct runlock {
	int fd;
	int writable;
	char *path;
	char *note;
};

char *
runlock_machine_path(const char *name)
{
	const char *dir = getenv("WARDEN_LOCK_DIR");

	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	return xasprintf("%s/warden-%s.lock", dir, name);
}

/* Open (creating) the lock file: a regular file, never through a symlink.
 * *writable says whether the note can be written. */
static struct werr *
lock_open(int *fd_out, int *writable, const char *path)
{
	const int base = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;
	int fd = -1, tries;

	*writable = 1;
	for (tries = 0; tries < 5; tries++) {
		if ((fd = open(path, O_RDWR | base)) != -1)
			break;
		if (errno == EACCES) {
			/* Another user's lock: flock works read-only. */
			if ((fd = open(path, O_RDONLY | base)) != -1)
				*writable = 0;
			break;
		}
		if (errno != ENOENT)
			break;
		if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | base,
		    0666)) != -1) {
			(void)fchmod(fd, 0666);	/* whatever the umask */
			break;
		}
		if (errno != EEXIST)
			break;
	}
	if (fd == -1) {
		if (errno == ELOOP)
			return werr_new(WEXIT_ENV, "lock file '%s' is a symbolic "
			    "link; remove it", path);
		return werr_errno("open lock file", path);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return werr_new(WEXIT_ENV, "lock file '%s' is not a regular "
		    "file; remove it", path);
	}
	*fd_out = fd;
	return NULL;
}

static struct werr *
held_error(const char *path, const char *what)
{
	struct buf holder = BUF_INIT;
	struct werr *err;

	if (file_read_max(&holder, path, 4096) == NULL && holder.len > 0) {
		while (holder.len > 0 && (holder.data[holder.len - 1] == '\n' ||
		    holder.data[holder.len - 1] == '\0'))
			holder.data[--holder.len] = '\0';
	}
	if (holder.len > 0)
		err = werr_new(WEXIT_ENV, "%s is running: %s (lock '%s')",
		    what, holder.data, path);
	else
		err = werr_new(WEXIT_ENV, "%s is running (lock '%s', held by "
		    "a process that did not say who it is)", what, path);
	buf_free(&holder);
	return err;
}

static void
write_note(struct runlock *l, const char *detail)
{
	struct buf b = BUF_INIT;

	if (!l->writable)
		return;
	buf_puts(&b, l->note);
	if (detail != NULL)
		buf_printf(&b, ", %s", detail);
	buf_addch(&b, '\n');
	/* The note is a courtesy for messages; the lock holds without it. */
	if (ftruncate(l->fd, 0) == 0 &&
	    pwrite(l->fd, b.data, b.len, 0) != (ssize_t)b.len) {
		/* see above */
	}
	buf_free(&b);
}

struct werr *
runlock_take(struct runlock **out, const char *path, const char *what,
    const char *who, const char *repo)
{
	struct runlock *l;
	struct werr *err;
	char stamp[40];
	int fd = -1, writable = 0;

	*out = NULL;
	if ((err = lock_open(&fd, &writable, path)) != NULL)
		return err;
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EINTR)
			continue;
		err = errno == EWOULDBLOCK ? held_error(path, what) :
		    werr_errno("lock", path);
		close(fd);
		return err;
	}
	l = xcalloc(1, sizeof(*l));
	l->fd = fd;
	l->writable = writable;
	l->path = xstrdup(path);
	utc_now_iso(stamp, sizeof(stamp));
	l->note = xasprintf("pid %ld (%s) in %s since %s", (long)getpid(),
	    who != NULL ? who : "warden", repo != NULL ? repo : "?", stamp);
	write_note(l, NULL);
	*out = l;
	return NULL;
}

void
runlock_note(struct runlock *l, const char *detail)
{
	if (l != NULL)
		write_note(l, detail);
}

void
runlock_release(struct runlock *l)
{
	if (l == NULL)
		return;
	if (l->writable && ftruncate(l->fd, 0) == -1) {
		/* A stale note is harmless: it is read only while held. */
	}
	close(l->fd);	/* drops the flock */
	free(l->path);
	free(l->note);
	free(l);
}
