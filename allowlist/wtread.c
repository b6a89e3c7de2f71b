/*
 * wtread.c - the bounded walk of an untrusted worktree for
 * allowlist_worktree_patch (worktree.c): lstat before anything,
 * directories opened with O_NOFOLLOW from their parent's descriptor, a
 * file read only within the caps, through a descriptor that must be the
 * file lstat saw, and refused if it changed meanwhile. Every refusal is
 * a violation naming the path. Never follows a symlink, never writes the
 * worktree, never blocks on a FIFO (it is never opened).
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allowlist.h"
#include "util.h"
#include "wtread.h"

#define CHANGED "changed while warden read it"

void
wt_push(char ***v, size_t *n, size_t *cap, char *s)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof(char *));
	}
	(*v)[(*n)++] = s;
}

int
wt_cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *
kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	return "a file of an unknown kind";
}

/* A refusal at path: the base entries at and under it stay as they are. */
static void
keep(struct wt *w, const char *path)
{
	wt_push(&w->kept, &w->nkept, &w->capkept, xstrdup(path));
}

int
wt_is_kept(const struct wt *w, const char *path)
{
	size_t i, n;

	for (i = 0; i < w->nkept; i++) {
		n = strlen(w->kept[i]);
		if (strncmp(path, w->kept[i], n) == 0 &&
		    (path[n] == '\0' || path[n] == '/'))
			return 1;
	}
	return 0;
}

static int
base_dir(const struct wt *w, const char *path)
{
	return w->ndirs > 0 && bsearch(&path, w->dirs, w->ndirs,
	    sizeof(char *), wt_cmp_strp) != NULL;
}

static int
ignored(const struct wt *w, const char *path, int dir)
{
	char *q;
	int ign = 0;

	if (w->irepo == NULL)
		return 0;
	q = dir ? xasprintf("%s/", path) : xstrdup(path);
	if (git_ignore_path_is_ignored(&ign, w->irepo, q) < 0)
		ign = 0;
	free(q);
	return ign;
}

/* A new name that no tree may hold: refused here, never read. */
static int
name_refused(struct wt *w, const char *path, int depth)
{
	struct allowlist_report t;
	size_t i;
	int n = 0;

	if (depth >= ALLOWLIST_WT_DEPTH_MAX) {
		allowlist_report_add(w->r, AL_BAD_PATH, path, "is nested "
		    "deeper than %d directories", ALLOWLIST_WT_DEPTH_MAX);
		return 1;
	}
	allowlist_report_init(&t);
	allowlist_check_path(&t, path);
	for (i = 0; i < t.nv; i++)
		if (t.v[i].code == AL_BAD_PATH || t.v[i].code == AL_DOTGIT) {
			allowlist_report_add(w->r, t.v[i].code, path, "%s",
			    t.v[i].reason);
			n++;
		}
	allowlist_report_free(&t);
	return n;
}

static int
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT);
}

static int
same_content_stat(const struct stat *a, const struct stat *b)
{
#ifdef __APPLE__
	return same_file(a, b) && a->st_size == b->st_size &&
	    a->st_mtimespec.tv_sec == b->st_mtimespec.tv_sec &&
	    a->st_mtimespec.tv_nsec == b->st_mtimespec.tv_nsec &&
	    a->st_ctimespec.tv_sec == b->st_ctimespec.tv_sec &&
	    a->st_ctimespec.tv_nsec == b->st_ctimespec.tv_nsec;
#else
	return same_file(a, b) && a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	    a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	    a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
#endif
}

/*
 * Read exactly st->st_size bytes of name (in dfd) into a new buffer,
 * through a descriptor that is the file st describes; NULL and a
 * refusal when it cannot be read or changed meanwhile.
 */
static char *
read_bounded(struct wt *w, int dfd, const char *name, const char *path,
    const struct stat *st)
{
	struct stat a, b;
	size_t size = (size_t)st->st_size, got = 0;
	char *data = NULL, extra;
	ssize_t n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	if (fd == -1) {
		if (errno == ELOOP || errno == ENXIO)
			allowlist_report_add(w->r, AL_UNREADABLE, path, CHANGED);
		else
			allowlist_report_add(w->r, AL_UNREADABLE, path,
			    "cannot be opened: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &a) == -1 || !S_ISREG(a.st_mode) || !same_file(&a, st) ||
	    a.st_size != st->st_size)
		goto changed;
	data = xmalloc(size + 1);
	while (got < size) {
		n = read(fd, data + got, size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			allowlist_report_add(w->r, AL_UNREADABLE, path,
			    "cannot be read: %s", strerror(errno));
			goto fail;
		}
		if (n == 0)
			goto changed;
		got += (size_t)n;
	}
	/* One byte more, or a different stat, says it changed. */
	while ((n = read(fd, &extra, 1)) == -1 && errno == EINTR)
		;
	if (n != 0 || fstat(fd, &b) == -1 || !same_content_stat(&a, &b))
		goto changed;
	close(fd);
	return data;
changed:
	allowlist_report_add(w->r, AL_UNREADABLE, path, CHANGED);
fail:
	free(data);
	close(fd);
	return NULL;
}

static void
add_change(struct wt *w, const char *path, uint32_t mode, const git_oid *id)
{
	struct change *c;

	if (w->nch == w->capch) {
		w->capch = w->capch ? w->capch * 2 : 16;
		w->ch = xrealloc(w->ch, w->capch * sizeof(*w->ch));
	}
	c = &w->ch[w->nch++];
	c->path = xstrdup(path);
	c->mode = mode;
	git_oid_cpy(&c->id, id);
}

/* A regular file: within the caps, read once, compared with the base. */
static struct werr *
regular(struct wt *w, int dfd, const char *name, const char *path,
    const struct stat *st, const git_index_entry *be, size_t pos)
{
	size_t size = (size_t)st->st_size, base_size = 0, limit = w->file_cap;
	git_object_t type;
	uint32_t mode;
	git_oid id;
	char *data;

	if (st->st_nlink > 1) {
		allowlist_report_add(w->r, AL_HARD_LINK, path, "has %ju links; "
		    "it may be a file outside the worktree",
		    (uintmax_t)st->st_nlink);
		goto refused;
	}
	/* A tracked file may keep its base size, however large. */
	if (be != NULL && git_odb_read_header(&base_size, &type, w->odb,
	    &be->id) == 0 && st->st_size >= 0 && size == base_size)
		limit = base_size;
	if (st->st_size < 0 || (uintmax_t)st->st_size > limit) {
		allowlist_report_add(w->r, AL_TOO_LARGE, path, "is %jd bytes, "
		    "policy allows %zu per file", (intmax_t)st->st_size,
		    w->file_cap);
		goto refused;
	}
	if ((data = read_bounded(w, dfd, name, path, st)) == NULL)
		goto refused;
	/* A symlink of the base was checked out as a file holding its
	 * target (core.symlinks=false): it stays a symlink. */
	if (be != NULL && be->mode == GIT_FILEMODE_LINK)
		mode = GIT_FILEMODE_LINK;
	else
		mode = (st->st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE :
		    GIT_FILEMODE_BLOB;
	if (be != NULL)
		w->seen[pos] = 1;
	if (git_odb_hash(&id, data, size, GIT_OBJECT_BLOB) < 0) {
		free(data);
		return werr_git("cannot hash '%s'", path);
	}
	if (be != NULL && be->mode == mode && git_oid_equal(&id, &be->id)) {
		free(data);
		return NULL;
	}
	if (size > w->total_cap - w->total) {
		free(data);
		allowlist_report_add(w->r, AL_TOO_LARGE, path, "brings the "
		    "changed files over %zu bytes together (%d times the "
		    "%zu policy allows per file)", w->total_cap,
		    ALLOWLIST_WT_TOTAL_FACTOR, w->file_cap);
		goto refused;
	}
	w->total += size;
	if (git_blob_create_from_buffer(&id, w->arepo, data, size) < 0) {
		free(data);
		return werr_git("cannot store '%s' in memory", path);
	}
	free(data);
	add_change(w, path, mode, &id);
	return NULL;
refused:
	keep(w, path);
	return NULL;
}

/* Is name (in dfd) a symlink to where the base's symlink be points? */
static int
same_link(int dfd, const char *name, const git_index_entry *be)
{
	char target[4096];
	ssize_t n = readlinkat(dfd, name, target, sizeof(target));
	git_oid id;

	return n >= 0 && (size_t)n < sizeof(target) &&
	    git_odb_hash(&id, target, (size_t)n, GIT_OBJECT_BLOB) == 0 &&
	    git_oid_equal(&id, &be->id);
}

/* One entry of a directory (dfd), at path. */
static struct werr *
entry(struct wt *w, int dfd, const char *name, const char *path, int depth)
{
	const git_index_entry *be = NULL;
	struct stat st, dst;
	size_t pos = 0;
	int fd, in_base;

	if (git_index_find(&pos, w->base, path) == 0)
		be = git_index_get_byindex(w->base, pos);
	in_base = be != NULL || base_dir(w, path);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		allowlist_report_add(w->r, AL_UNREADABLE, path,
		    "cannot be looked at: %s", strerror(errno));
		keep(w, path);
		return NULL;
	}
	if (!in_base && ignored(w, path, S_ISDIR(st.st_mode)))
		return NULL;
	if (!in_base && name_refused(w, path, depth))
		return NULL;
	/* A submodule of the base: its own repository, not walked. */
	if (be != NULL && be->mode == GIT_FILEMODE_COMMIT &&
	    S_ISDIR(st.st_mode)) {
		w->seen[pos] = 1;
		return NULL;
	}
	if (S_ISLNK(st.st_mode) && be != NULL &&
	    be->mode == GIT_FILEMODE_LINK && same_link(dfd, name, be)) {
		w->seen[pos] = 1;
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd == -1 || fstat(fd, &dst) == -1 || !same_file(&st, &dst)) {
			if (fd == -1 && errno != ELOOP && errno != ENOTDIR)
				allowlist_report_add(w->r, AL_UNREADABLE, path,
				    "cannot be opened: %s", strerror(errno));
			else
				allowlist_report_add(w->r, AL_UNREADABLE, path,
				    CHANGED);
			if (fd != -1)
				close(fd);
			keep(w, path);
			return NULL;
		}
		return wt_walk_dir(w, fd, path, depth + 1);
	}
	if (S_ISLNK(st.st_mode)) {
		allowlist_report_add(w->r, AL_SYMLINK, path, "is a symbolic "
		    "link; the worktree may hold only files and directories");
		keep(w, path);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		allowlist_report_add(w->r, AL_SPECIAL_FILE, path, "is %s; the "
		    "worktree may hold only files and directories",
		    kind(st.st_mode));
		keep(w, path);
		return NULL;
	}
	return regular(w, dfd, name, path, &st, be, pos);
}

struct werr *
wt_walk_dir(struct wt *w, int fd, const char *rel, int depth)
{
	struct werr *err = NULL;
	struct dirent *de;
	DIR *d;

	if ((d = fdopendir(fd)) == NULL) {
		allowlist_report_add(w->r, AL_UNREADABLE, rel,
		    "cannot be read: %s", strerror(errno));
		close(fd);
		keep(w, rel);
		return NULL;
	}
	while (err == NULL && !w->cut) {
		char *path;

		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0) {
				allowlist_report_add(w->r, AL_UNREADABLE, rel,
				    "cannot be read: %s", strerror(errno));
				keep(w, rel);
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    (*rel == '\0' && strcmp(de->d_name, ".git") == 0))
			continue;
		if (++w->entries > w->entries_cap) {
			allowlist_report_add(w->r, AL_TOO_MANY_FILES, "",
			    "the worktree holds more than %zu files and "
			    "directories (the base tree's %zu, and %d for each "
			    "changed file policy allows)", w->entries_cap,
			    w->base_entries, ALLOWLIST_WT_ENTRY_FACTOR);
			w->cut = 1;
			break;
		}
		path = *rel ? xasprintf("%s/%s", rel, de->d_name) :
		    xstrdup(de->d_name);
		err = entry(w, dirfd(d), de->d_name, path, depth);
		free(path);
	}
	closedir(d);
	return err;
}
