/*
 * stash.c - a pip environment kept aside while its policy group moves,
 * so that the group can be put back as a whole (update.c).
 *
 * Before an engine's venv moves a group package, update_stash_keep()
 * writes env_dir/stash.json (the engine's current manifest id), then
 * copies env_dir/venv to env_dir/venv.prev as hard links (no second copy
 * of the bytes: pip and the venv module replace files, they never write
 * into an installed one; pip unlinks a file before it writes it). The
 * group's attempts are then recorded in one transaction (the commit
 * point), and update_stash_settle() compares the store's current
 * manifest with the one stash.json names: moved means committed (drop
 * venv.prev), still the same means not committed (put venv.prev back).
 * The same rule settles a swap a kill -9 left half done, at the start of
 * the next `warden update`. stash.json goes last, so every state between
 * the steps is one the rule settles. Never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"
#include "update-private.h"
#include "util.h"

#define STASH_COPY_CHUNK 65536

struct stash_paths {
	char *marker, *venv, *prev, *tmp, *dead;
};

static void
paths_init(struct stash_paths *p, const char *env_dir)
{
	p->marker = path_join(env_dir, "stash.json");
	p->venv = path_join(env_dir, "venv");
	p->prev = path_join(env_dir, "venv.prev");
	p->tmp = path_join(env_dir, "venv.prev.tmp");
	p->dead = path_join(env_dir, "venv.dead");
}

static void
paths_free(struct stash_paths *p)
{
	free(p->marker);
	free(p->venv);
	free(p->prev);
	free(p->tmp);
	free(p->dead);
}

/* Copy a regular file's bytes (when a hard link is not possible). */
static struct werr *
copy_file(const char *from, const char *to, mode_t mode)
{
	char chunk[STASH_COPY_CHUNK];
	struct werr *err = NULL;
	ssize_t r, w, off;
	int in, out;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) == -1)
		return werr_errno("open", from);
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    mode & 07777)) == -1) {
		err = werr_errno("open", to);
		close(in);
		return err;
	}
	while (err == NULL && (r = read(in, chunk, sizeof(chunk))) != 0) {
		if (r == -1) {
			if (errno != EINTR)
				err = werr_errno("read", from);
			continue;
		}
		for (off = 0; off < r && err == NULL; off += w)
			if ((w = write(out, chunk + off, (size_t)(r - off))) == -1) {
				err = werr_errno("write", to);
				w = 0;
			}
	}
	if (close(out) == -1 && err == NULL)
		err = werr_errno("close", to);
	close(in);
	return err;
}

/* Mirror the tree from into to (absent): directories made, regular
 * files hard-linked (copied across file systems), symlinks recreated. */
static struct werr *
link_tree(const char *from, const char *to)
{
	struct werr *err = NULL;
	struct dirent *de;
	struct stat sb;
	char *f, *t, target[PATH_MAX];
	ssize_t n;
	DIR *d;

	if (lstat(from, &sb) == -1)
		return werr_errno("lstat", from);
	if (mkdir(to, (sb.st_mode & 07777) | S_IRWXU) == -1)
		return werr_errno("mkdir", to);
	if ((d = opendir(from)) == NULL)
		return werr_errno("opendir", from);
	while (err == NULL && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		f = path_join(from, de->d_name);
		t = path_join(to, de->d_name);
		if (lstat(f, &sb) == -1)
			err = werr_errno("lstat", f);
		else if (S_ISDIR(sb.st_mode))
			err = link_tree(f, t);
		else if (S_ISLNK(sb.st_mode)) {
			if ((n = readlink(f, target, sizeof(target) - 1)) == -1)
				err = werr_errno("readlink", f);
			else {
				target[n] = '\0';
				if (symlink(target, t) == -1)
					err = werr_errno("symlink", t);
			}
		} else if (S_ISREG(sb.st_mode)) {
			if (link(f, t) == -1)
				err = errno == EXDEV || errno == EPERM ||
				    errno == EMLINK ? copy_file(f, t, sb.st_mode) :
				    werr_errno("link", t);
		}
		/* sockets, FIFOs: nothing a venv needs back */
		free(f);
		free(t);
	}
	closedir(d);
	return err;
}

static struct werr *
remove_if_there(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) == -1)
		return NULL;
	return path_remove_tree(path);
}

struct werr *
update_stash_keep(const char *env_dir, int64_t previous_id)
{
	struct stash_paths p;
	struct werr *err;
	json_t *doc;
	char *text;

	paths_init(&p, env_dir);
	if ((err = remove_if_there(p.tmp)) != NULL ||
	    (err = remove_if_there(p.prev)) != NULL)
		goto out;
	doc = json_pack("{s:I}", "previous_id", (json_int_t)previous_id);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	err = file_write_atomic(p.marker, text, strlen(text));
	free(text);
	if (err != NULL)
		goto out;
	if ((err = link_tree(p.venv, p.tmp)) != NULL) {
		werr_free(remove_if_there(p.tmp));
		werr_free(update_stash_settle(NULL, env_dir, previous_id));
		goto out;
	}
	if (rename(p.tmp, p.prev) == -1)
		err = werr_errno("rename", p.tmp);
	else	/* the old environment is aside; the venv may now move */
		fault_point("update.stashed");
out:
	if (err != NULL)
		err = werr_wrap(err, "cannot keep '%s' aside", p.venv);
	paths_free(&p);
	return err;
}

int
update_stash_pending(const char *env_dir, int64_t *previous_id)
{
	char *marker = path_join(env_dir, "stash.json");
	struct buf b = BUF_INIT;
	json_error_t jerr;
	json_t *doc;
	int found = 0;

	*previous_id = 0;
	if (path_exists(marker) && file_read(&b, marker) == NULL) {
		doc = json_loads(buf_cstr(&b), 0, &jerr);
		*previous_id = json_integer_value(json_object_get(doc,
		    "previous_id"));
		json_decref(doc);
		found = 1;
	}
	buf_free(&b);
	free(marker);
	return found;
}

struct werr *
update_stash_settle(int *restored, const char *env_dir, int64_t current_id)
{
	struct stash_paths p;
	struct werr *err = NULL;
	int64_t previous_id;
	int pending;

	if (restored != NULL)
		*restored = 0;
	paths_init(&p, env_dir);
	pending = update_stash_pending(env_dir, &previous_id);
	if ((err = remove_if_there(p.tmp)) != NULL ||
	    (err = remove_if_there(p.dead)) != NULL)
		goto out;
	if (!path_exists(p.prev))
		;	/* nothing was kept: the venv never moved */
	else if (pending && current_id == previous_id) {
		/* not committed: the kept environment goes back */
		if (path_exists(p.venv) && rename(p.venv, p.dead) == -1) {
			err = werr_errno("rename", p.venv);
			goto out;
		}
		fault_point("update.stash_restoring");
		if (rename(p.prev, p.venv) == -1) {
			err = werr_errno("rename", p.prev);
			goto out;
		}
		if ((err = remove_if_there(p.dead)) != NULL)
			goto out;
		if (restored != NULL)
			*restored = 1;
	} else if ((err = path_remove_tree(p.prev)) != NULL)
		goto out;
	if (pending && unlink(p.marker) == -1 && errno != ENOENT)
		err = werr_errno("unlink", p.marker);
out:
	if (err != NULL)
		err = werr_wrap(err, "cannot settle the environment kept aside "
		    "in '%s'", env_dir);
	paths_free(&p);
	return err;
}
