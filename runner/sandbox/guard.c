/*
 * guard.c - what a sandboxed step must leave as it was, recorded before
 * it runs and compared after: every ref, and every file under the
 * repository root and its git directory. Any difference quarantines the
 * step (the agent's run, a smoke campaign of an unreviewed change). See
 * guard.h for what is recorded and what is left out.
 *
 * Files are compared by metadata the writer cannot choose together
 * (inode, size, mode, change time as well as modification time); small
 * files under the git directory (config, hooks, HEAD, packed-refs) also
 * by content. Never follows a symlink, never writes, never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "sha256.h"
#include "util.h"

#define GUARD_HASH_MAX	(256 * 1024)	/* bytes hashed per git file */
#define GUARD_REASONS_MAX 40
#define GUARD_NEW_MAX	10000		/* entries looked at past the snapshot's */

struct guard_entry {
	char *path;		/* "REL" of a file, or "ref NAME" */
	char *value;		/* what must stay the same */
	int in_git;		/* under the git directory: restorable */
	mode_t mode;
	char *content;		/* a small regular file under .git */
	size_t len;
};

struct sandbox_guard {
	char *root;		/* the repository root */
	char *gitdir;		/* the common git directory */
	char *gitfile;		/* the worktree's .git file */
	char **exclude;		/* absolute paths left out */
	dev_t out_dev[2];	/* warden's own stdout and stderr, when they */
	ino_t out_ino[2];	/* are files: written by warden, not the agent */
	int nout;
	struct guard_entry *v;
	size_t n, cap;
	size_t max;		/* entries recorded at most; 0: no cap */
	int cut;		/* stopped at max */
};

static struct guard_entry *
add(struct sandbox_guard *g, char *path, char *value)
{
	struct guard_entry *e;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->v = xrealloc(g->v, g->cap * sizeof(*g->v));
	}
	e = &g->v[g->n++];
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->value = value;
	return e;
}

static int
excluded(const struct sandbox_guard *g, const char *abs)
{
	size_t i;

	for (i = 0; g->exclude[i] != NULL; i++)
		if (strcmp(abs, g->exclude[i]) == 0)
			return 1;
	return 0;
}

/* Loose and packed objects: content-addressed, so adding one changes
 * nothing a later command trusts. objects/info (alternates) is kept. */
static int
is_object_dir(const struct sandbox_guard *g, const char *abs)
{
	size_t n = strlen(g->gitdir);
	const char *rest;

	if (strncmp(abs, g->gitdir, n) != 0 || abs[n] != '/')
		return 0;
	rest = abs + n + 1;
	if (strncmp(rest, "objects/", 8) != 0)
		return 0;
	rest += 8;
	if (strcmp(rest, "pack") == 0)
		return 1;
	return strlen(rest) == 2 && strspn(rest, "0123456789abcdef") == 2;
}

static char *
rel_name(const struct sandbox_guard *g, const char *abs)
{
	size_t n = strlen(g->root);

	if (strncmp(abs, g->root, n) == 0 && abs[n] == '/')
		return xstrdup(abs + n + 1);
	return xstrdup(abs);
}

static void walk(struct sandbox_guard *g, const char *abs, int in_git);

static void
record(struct sandbox_guard *g, const char *abs, int in_git)
{
	struct stat st;
	struct buf v = BUF_INIT;
	struct buf content = BUF_INIT;
	struct guard_entry *e;
	int kept = 0;

	if (g->cut || excluded(g, abs) || is_object_dir(g, abs))
		return;
	if (g->max != 0 && g->n >= g->max) {
		g->cut = 1;
		return;
	}
	if (lstat(abs, &st) == -1) {
		add(g, rel_name(g, abs), xasprintf("unreadable: %s",
		    strerror(errno)));
		return;
	}
	if (S_ISREG(st.st_mode)) {
		int i;

		for (i = 0; i < g->nout; i++)
			if (st.st_dev == g->out_dev[i] &&
			    st.st_ino == g->out_ino[i])
				return;
	}
	/* A directory's entries are recorded one by one; its own times
	 * change whenever git renames a lock file inside it. */
	if (S_ISDIR(st.st_mode)) {
		e = add(g, rel_name(g, abs), xasprintf("mode %o ino %llu",
		    (unsigned)st.st_mode, (unsigned long long)st.st_ino));
		e->in_git = in_git;
		e->mode = st.st_mode;
		walk(g, abs, in_git);
		return;
	}
	buf_printf(&v, "mode %o ino %llu size %lld mtime %lld.%09ld "
	    "ctime %lld.%09ld", (unsigned)st.st_mode,
	    (unsigned long long)st.st_ino, (long long)st.st_size,
#ifdef __APPLE__
	    (long long)st.st_mtimespec.tv_sec, st.st_mtimespec.tv_nsec,
	    (long long)st.st_ctimespec.tv_sec, st.st_ctimespec.tv_nsec);
#else
	    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
	    (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
#endif
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(abs, target, sizeof(target) - 1);

		if (n >= 0) {
			target[n] = '\0';
			buf_printf(&v, " -> %s", target);
		}
	} else if (S_ISREG(st.st_mode) && in_git &&
	    st.st_size <= GUARD_HASH_MAX) {
		char hex[SHA256_HEX_LEN + 1];
		/* Bounded: the file may have grown since lstat. */
		struct werr *err = file_read_max(&content, abs, GUARD_HASH_MAX);

		if (err == NULL) {
			sha256_hex(content.data ? content.data : "",
			    content.len, hex);
			buf_printf(&v, " sha256 %s", hex);
			kept = 1;
		}
		werr_free(err);
	}
	e = add(g, rel_name(g, abs), buf_detach(&v));
	e->in_git = in_git;
	e->mode = st.st_mode;
	if (kept) {
		e->len = content.len;
		e->content = content.len > 0 ? buf_detach(&content) :
		    xstrdup("");
	}
	buf_free(&content);
}

static void
walk(struct sandbox_guard *g, const char *abs, int in_git)
{
	struct dirent *de;
	DIR *d;

	if ((d = opendir(abs)) == NULL)
		return;		/* recorded as a directory; contents unknown */
	while (!g->cut && (de = readdir(d)) != NULL) {
		char *sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sub = path_join(abs, de->d_name);
		record(g, sub, in_git || strcmp(sub, g->gitdir) == 0);
		free(sub);
	}
	closedir(d);
}

static struct werr *
refs(struct sandbox_guard *g, git_repository *repo)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	int rc;

	if (git_reference_lookup(&ref, repo, "HEAD") == 0) {
		add(g, xstrdup("ref HEAD"), git_reference_type(ref) ==
		    GIT_REFERENCE_SYMBOLIC ?
		    xstrdup(git_reference_symbolic_target(ref)) :
		    xstrdup(git_oid_tostr(hex, sizeof(hex),
		    git_reference_target(ref))));
		git_reference_free(ref);
	}
	if (git_reference_iterator_new(&it, repo) < 0)
		return werr_git("cannot list the references");
	while ((rc = git_reference_next(&ref, it)) == 0) {
		char *name;

		if (g->max != 0 && g->n >= g->max) {
			g->cut = 1;
			git_reference_free(ref);
			rc = GIT_ITEROVER;
			break;
		}
		name = xasprintf("ref %s", git_reference_name(ref));

		if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC)
			add(g, name, xasprintf("-> %s",
			    git_reference_symbolic_target(ref)));
		else
			add(g, name, xstrdup(git_oid_tostr(hex, sizeof(hex),
			    git_reference_target(ref))));
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return werr_git("cannot list the references");
	return NULL;
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct guard_entry *)a)->path,
	    ((const struct guard_entry *)b)->path);
}

static char *
trimmed(const char *path)
{
	char *s = xstrdup(path);
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

static struct werr *
take(struct sandbox_guard *g, git_repository *repo)
{
	struct werr *err;

	record(g, g->root, 0);
	if (g->gitfile != NULL)
		record(g, g->gitfile, 1);
	if (strncmp(g->gitdir, g->root, strlen(g->root)) != 0 ||
	    g->gitdir[strlen(g->root)] != '/')
		record(g, g->gitdir, 1);
	if ((err = refs(g, repo)) != NULL)
		return err;
	qsort(g->v, g->n, sizeof(*g->v), entry_cmp);
	return NULL;
}

static struct sandbox_guard *
guard_new(const char *root, const char *gitdir, const char *gitfile,
    char *const *exclude)
{
	struct sandbox_guard *g = xcalloc(1, sizeof(*g));
	size_t n = 0, i;
	struct stat st;
	int fd;

	g->root = trimmed(root);
	g->gitdir = trimmed(gitdir);
	g->gitfile = gitfile != NULL ? xstrdup(gitfile) : NULL;
	for (fd = 1; fd <= 2; fd++)
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			g->out_dev[g->nout] = st.st_dev;
			g->out_ino[g->nout] = st.st_ino;
			g->nout++;
		}
	while (exclude[n] != NULL)
		n++;
	g->exclude = xcalloc(n + 1, sizeof(*g->exclude));
	for (i = 0; i < n; i++)
		g->exclude[i] = xstrdup(exclude[i]);
	return g;
}

struct werr *
sandbox_guard_snapshot(struct sandbox_guard **out, git_repository *repo,
    const char *repo_root, const char *gitfile, char *const *exclude)
{
	char *gitdir = trimmed(git_repository_commondir(repo));
	struct sandbox_guard *g = guard_new(repo_root, gitdir, gitfile,
	    exclude);
	struct werr *err;

	*out = NULL;
	if ((err = take(g, repo)) != NULL)
		sandbox_guard_free(g);
	else
		*out = g;
	free(gitdir);
	return err;
}

static void
reason(json_t *reasons, size_t *n, const char *verb, const char *path)
{
	const char *what = path;
	const char *kind = "file";

	if (str_startswith(path, "ref ")) {
		kind = "ref";
		what = path + 4;
	}
	if ((*n)++ < GUARD_REASONS_MAX) {
		char *s = xasprintf("%s '%s' %s", kind, what, verb);

		json_array_append_new(reasons, json_string(s));
		free(s);
	}
}

struct werr *
sandbox_guard_compare(json_t *reasons, const struct sandbox_guard *before,
    git_repository *repo)
{
	struct sandbox_guard *now = guard_new(before->root, before->gitdir,
	    before->gitfile, before->exclude);
	struct werr *err;
	size_t i = 0, j = 0, n = 0;

	/* What the agent may have made is looked at with a bound. */
	now->max = before->n + GUARD_NEW_MAX;
	if ((err = take(now, repo)) != NULL)
		goto out;
	if (now->cut) {
		char *s = xasprintf("more than %d files were created under "
		    "the repository (the guard looks at no more)",
		    GUARD_NEW_MAX);

		json_array_append_new(reasons, json_string(s));
		free(s);
		goto out;
	}
	while (i < before->n || j < now->n) {
		int c = i == before->n ? 1 : j == now->n ? -1 :
		    strcmp(before->v[i].path, now->v[j].path);

		if (c < 0) {
			reason(reasons, &n, "was removed",
			    before->v[i].path);
			i++;
		} else if (c > 0) {
			reason(reasons, &n, "was created",
			    now->v[j].path);
			j++;
		} else {
			if (strcmp(before->v[i].value, now->v[j].value) != 0)
				reason(reasons, &n, "changed",
				    before->v[i].path);
			i++;
			j++;
		}
	}
	if (n > GUARD_REASONS_MAX) {
		char *s = xasprintf("and %zu more changes",
		    n - GUARD_REASONS_MAX);

		json_array_append_new(reasons, json_string(s));
		free(s);
	}
out:
	sandbox_guard_free(now);
	return err;
}

static char *
abs_name(const struct sandbox_guard *g, const char *rel)
{
	return rel[0] == '/' ? xstrdup(rel) : path_join(g->root, rel);
}

static void
restored(json_t *out, const char *what, const char *path)
{
	char *s = xasprintf("%s '%s'", what, path);

	json_array_append_new(out, json_string(s));
	free(s);
}

/* Put back a file of the git directory the agent changed or removed. */
static void
put_back(json_t *out, const struct sandbox_guard *g, const struct guard_entry *e)
{
	char *abs = abs_name(g, e->path);
	struct werr *err;

	werr_free(path_remove_tree(abs));
	if ((err = file_write_atomic(abs, e->content, e->len)) == NULL &&
	    chmod(abs, e->mode & 07777) == 0)
		restored(out, "restored", e->path);
	else
		restored(out, "could not restore", e->path);
	werr_free(err);
	free(abs);
}

struct werr *
sandbox_guard_restore(json_t *out, const struct sandbox_guard *before)
{
	struct sandbox_guard *now = guard_new(before->root, before->gitdir,
	    before->gitfile, before->exclude);
	size_t i = 0, j = 0, k;
	char **made = NULL;
	size_t nmade = 0;

	/* Refs are files of the git directory: they come back with it. */
	now->max = before->n + GUARD_NEW_MAX;
	record(now, now->root, 0);
	if (now->gitfile != NULL)
		record(now, now->gitfile, 1);
	if (strncmp(now->gitdir, now->root, strlen(now->root)) != 0 ||
	    now->gitdir[strlen(now->root)] != '/')
		record(now, now->gitdir, 1);
	qsort(now->v, now->n, sizeof(*now->v), entry_cmp);
	while (i < before->n || j < now->n) {
		int c = i == before->n ? 1 : j == now->n ? -1 :
		    strcmp(before->v[i].path, now->v[j].path);
		const struct guard_entry *b = c <= 0 ? &before->v[i] : NULL;
		const struct guard_entry *a = c >= 0 ? &now->v[j] : NULL;

		if (b != NULL && b->content != NULL && (a == NULL ||
		    strcmp(a->value, b->value) != 0))
			put_back(out, before, b);
		else if (b == NULL && a->in_git) {
			if (S_ISDIR(a->mode)) {
				made = xrealloc(made, (nmade + 1) *
				    sizeof(*made));
				made[nmade++] = abs_name(now, a->path);
			} else {
				char *abs = abs_name(now, a->path);

				if (unlink(abs) == 0)
					restored(out, "removed", a->path);
				free(abs);
			}
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	for (k = nmade; k > 0; k--) {
		if (rmdir(made[k - 1]) == 0)
			restored(out, "removed", made[k - 1]);
		free(made[k - 1]);
	}
	free(made);
	if (now->cut)
		json_array_append_new(out, json_string("stopped looking after "
		    "the first files created: more may be left"));
	sandbox_guard_free(now);
	return NULL;
}

void
sandbox_guard_free(struct sandbox_guard *g)
{
	size_t i;

	if (g == NULL)
		return;
	for (i = 0; i < g->n; i++) {
		free(g->v[i].path);
		free(g->v[i].value);
		free(g->v[i].content);
	}
	for (i = 0; g->exclude[i] != NULL; i++)
		free(g->exclude[i]);
	free(g->exclude);
	free(g->v);
	free(g->root);
	free(g->gitdir);
	free(g->gitfile);
	free(g);
}

struct werr *
sandbox_guard_campaign(struct sandbox_guard **out, git_repository *repo,
    const char *repo_root)
{
	char *own = path_join(repo_root, ".warden");
	char *exclude[] = { own, NULL };
	struct werr *err = sandbox_guard_snapshot(out, repo, repo_root, NULL,
	    exclude);

	free(own);
	return err;
}

static void
join_strings(struct buf *b, const json_t *a)
{
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v) {
		if (i > 0)
			buf_puts(b, "; ");
		buf_puts(b, json_string_value(v));
	}
}

struct werr *
sandbox_guard_settle(json_t *reasons, json_t *back,
    const struct sandbox_guard *before, git_repository *repo)
{
	struct werr *err;

	if ((err = sandbox_guard_compare(reasons, before, repo)) != NULL ||
	    json_array_size(reasons) == 0)
		return err;
	return sandbox_guard_restore(back, before);
}

struct werr *
sandbox_guard_check(const struct sandbox_guard *before, git_repository *repo,
    const char *step)
{
	json_t *reasons = json_array(), *back = json_array();
	struct buf b = BUF_INIT;
	struct werr *err;

	if ((err = sandbox_guard_settle(reasons, back, before, repo)) != NULL ||
	    json_array_size(reasons) == 0)
		goto out;
	join_strings(&b, reasons);
	if (json_array_size(back) > 0) {
		buf_puts(&b, "; put back: ");
		join_strings(&b, back);
	}
	err = werr_new(WEXIT_ENV, "quarantined: %s changed the repository: "
	    "%s", step, buf_cstr(&b));
out:
	json_decref(reasons);
	json_decref(back);
	buf_free(&b);
	return err;
}
