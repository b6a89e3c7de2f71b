/*
 * worktree.c - the patch text of everything a worktree changed against a
 * base tree (edits, deletions, mode changes, new files with their
 * content), for the maintainer agent's worktree. See allowlist.h.
 *
 * The worktree is untrusted, and libgit2's workdir diff reads whole files
 * (and follows what it finds), so warden reads it itself: one bounded
 * walk, lstat before anything, directories opened with O_NOFOLLOW from
 * their parent's descriptor, a file read only within the caps through a
 * descriptor that must be the file lstat saw. What it read becomes blobs
 * in memory and a tree; the patch is that tree's diff against the base.
 * Nothing here decides whether the change may land: the text is gated
 * like any other untrusted patch. Never writes the worktree.
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
#include "buf.h"
#include "scan.h"
#include "util.h"

#define CHANGED "changed while warden read it"

struct change {
	char *path;
	uint32_t mode;
	git_oid id;
};

struct wt {
	struct allowlist_report *r;
	git_repository *arepo;		/* writes go to memory */
	git_odb *odb;
	git_repository *irepo;		/* ignore rules; NULL: none */
	git_index *base;		/* the base tree's files */
	unsigned char *seen;		/* per base entry: found */
	char **dirs;			/* the base tree's directories */
	size_t ndirs, capdirs;
	char **kept;			/* refused paths: base entries stay */
	size_t nkept, capkept;
	struct change *ch;
	size_t nch, capch;
	size_t file_cap, total_cap, total;
	size_t entries, entries_cap, base_entries;
	int cut;			/* the walk stopped at its cap */
};

static void
push(char ***v, size_t *n, size_t *cap, char *s)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof(char *));
	}
	(*v)[(*n)++] = s;
}

static int
cmp_strp(const void *a, const void *b)
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
	push(&w->kept, &w->nkept, &w->capkept, xstrdup(path));
}

static int
is_kept(const struct wt *w, const char *path)
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
	    sizeof(char *), cmp_strp) != NULL;
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

static struct werr *walk_dir(struct wt *w, int fd, const char *rel,
    int depth);

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
		return walk_dir(w, fd, path, depth + 1);
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

/* Walk the directory open as fd (taken over), at rel ("" at the top). */
static struct werr *
walk_dir(struct wt *w, int fd, const char *rel, int depth)
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

struct base_walk {
	struct wt *w;
	const char *scratch;
	struct werr *err;
	size_t entries;
};

/* Every directory of the base tree; its .gitignore files under scratch. */
static int
base_entry(const char *root, const git_tree_entry *e, void *payload)
{
	struct base_walk *bw = payload;
	git_blob *blob = NULL;
	char *dir, *file;

	bw->entries++;
	if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
		push(&bw->w->dirs, &bw->w->ndirs, &bw->w->capdirs,
		    xasprintf("%s%s", root, git_tree_entry_name(e)));
		return 0;
	}
	if (bw->scratch == NULL ||
	    strcmp(git_tree_entry_name(e), ".gitignore") != 0 ||
	    git_tree_entry_filemode(e) == GIT_FILEMODE_LINK)
		return 0;
	dir = xasprintf("%s/%s", bw->scratch, root);
	file = path_join(dir, ".gitignore");
	if (git_blob_lookup(&blob, bw->w->arepo, git_tree_entry_id(e)) < 0)
		bw->err = werr_git("cannot read '%s.gitignore'", root);
	else if ((bw->err = mkdir_p(dir)) == NULL)
		bw->err = file_write_atomic(file, git_blob_rawcontent(blob),
		    (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	free(dir);
	free(file);
	return bw->err != NULL ? -1 : 0;
}

/* The base tree's files, directories and ignore rules. */
static struct werr *
load_base(struct wt *w, git_repository *repo, git_tree *tree,
    const char *scratch, const struct allowlist_policy *p)
{
	struct base_walk bw = { w, scratch, NULL, 0 };
	size_t files = p->max_files ? p->max_files : ALLOWLIST_WT_FILES_DEFAULT;
	struct werr *err;

	if (git_index_new(&w->base) < 0 ||
	    git_index_read_tree(w->base, tree) < 0)
		return werr_git("cannot read the base tree");
	w->seen = xcalloc(git_index_entrycount(w->base) + 1, 1);
	if (scratch != NULL && (err = mkdir_p(scratch)) != NULL)
		return err;
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, base_entry, &bw) < 0)
		return bw.err != NULL ? bw.err :
		    werr_git("cannot read the base tree");
	if (w->ndirs > 0)
		qsort(w->dirs, w->ndirs, sizeof(char *), cmp_strp);
	w->base_entries = bw.entries;
	w->entries_cap = bw.entries + ALLOWLIST_WT_ENTRY_FACTOR * files;
	if (scratch == NULL)
		return NULL;
	/* Rules of the base (and info/exclude), never the worktree's. */
	if (git_repository_open(&w->irepo, git_repository_path(repo)) < 0 ||
	    git_repository_set_workdir(w->irepo, scratch, 0) < 0)
		return werr_git("cannot read the base tree's ignore rules");
	return NULL;
}

/* The base with the walk's changes: the tree the worktree holds. */
static struct werr *
build_tree(struct wt *w, git_oid *out)
{
	size_t i, n = git_index_entrycount(w->base);
	char **gone = NULL;
	size_t ngone = 0, capgone = 0;
	struct werr *err = NULL;

	for (i = 0; i < n; i++) {
		const git_index_entry *e = git_index_get_byindex(w->base, i);

		if (!w->seen[i] && !is_kept(w, e->path))
			push(&gone, &ngone, &capgone, xstrdup(e->path));
	}
	for (i = 0; i < ngone; i++)
		if (git_index_remove(w->base, gone[i], 0) < 0 && err == NULL)
			err = werr_git("cannot remove '%s'", gone[i]);
	for (i = 0; err == NULL && i < w->nch; i++) {
		git_index_entry e;

		memset(&e, 0, sizeof(e));
		e.path = w->ch[i].path;
		e.mode = w->ch[i].mode;
		git_oid_cpy(&e.id, &w->ch[i].id);
		if (git_index_add(w->base, &e) < 0) {
			const git_error *ge = git_error_last();

			allowlist_report_add(w->r, AL_BAD_PATH, e.path,
			    "cannot be put in a tree: %s", ge && ge->message ?
			    ge->message : "unknown error");
		}
	}
	if (err == NULL && git_index_write_tree_to(out, w->base, w->arepo) < 0)
		err = werr_git("cannot write the worktree's tree");
	for (i = 0; i < ngone; i++)
		free(gone[i]);
	free(gone);
	return err;
}

static void
wt_free(struct wt *w)
{
	size_t i;

	for (i = 0; i < w->ndirs; i++)
		free(w->dirs[i]);
	for (i = 0; i < w->nkept; i++)
		free(w->kept[i]);
	for (i = 0; i < w->nch; i++)
		free(w->ch[i].path);
	free(w->dirs);
	free(w->kept);
	free(w->ch);
	free(w->seen);
	git_index_free(w->base);
	git_repository_free(w->irepo);
	git_odb_free(w->odb);
	git_repository_free(w->arepo);
}

struct werr *
allowlist_worktree_patch(struct allowlist_report *r, struct buf *out,
    git_repository *repo, const git_oid *base_tree, const char *dir,
    const char *scratch, const struct allowlist_policy *p)
{
	git_diff_options opts;
	git_odb_backend *mempack = NULL;
	git_tree *btree = NULL, *ntree = NULL;
	git_diff *diff = NULL;
	git_buf text = { NULL, 0, 0 };
	struct werr *err = NULL;
	struct wt w;
	git_oid nid;
	int fd;

	memset(&w, 0, sizeof(w));
	w.r = r;
	w.file_cap = p->max_bytes ? p->max_bytes : ALLOWLIST_WT_FILE_DEFAULT;
	w.total_cap = ALLOWLIST_WT_TOTAL_FACTOR * w.file_cap;
	if ((err = allowlist_dry_repo(&w.arepo, &mempack, repo)) != NULL)
		goto out;
	if (git_repository_odb(&w.odb, w.arepo) < 0 ||
	    git_tree_lookup(&btree, w.arepo, base_tree) < 0) {
		err = werr_git("cannot read the base tree");
		goto out;
	}
	if ((err = load_base(&w, repo, btree, scratch, p)) != NULL)
		goto out;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == ELOOP) {
		allowlist_report_add(r, AL_SYMLINK, "", "the worktree itself "
		    "is a symbolic link");
		goto out;
	}
	if (fd == -1) {
		err = werr_errno("open", dir);
		goto out;
	}
	if ((err = walk_dir(&w, fd, "", 0)) != NULL || w.cut)
		goto out;
	if ((err = build_tree(&w, &nid)) != NULL ||
	    git_oid_equal(&nid, base_tree))
		goto out;
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_SHOW_BINARY;
	if (git_tree_lookup(&ntree, w.arepo, &nid) < 0 ||
	    git_diff_tree_to_tree(&diff, w.arepo, btree, ntree, &opts) < 0 ||
	    git_diff_to_buf(&text, diff, GIT_DIFF_FORMAT_PATCH) < 0) {
		err = werr_git("cannot diff the worktree's tree");
		goto out;
	}
	buf_add(out, text.ptr != NULL ? text.ptr : "", text.size);
	buf_puts(out, "");
out:
	git_buf_dispose(&text);
	git_diff_free(diff);
	git_tree_free(ntree);
	git_tree_free(btree);
	wt_free(&w);
	if (scratch != NULL)
		werr_free(path_remove_tree(scratch));
	return err;
}
