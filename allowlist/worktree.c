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
 * The walk is wtread.c; here the base, its ignore rules and the tree.
 * Nothing here decides whether the change may land: the text is gated
 * like any other untrusted patch. Never writes the worktree.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allowlist.h"
#include "buf.h"
#include "scan.h"
#include "util.h"
#include "wtread.h"

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
		wt_push(&bw->w->dirs, &bw->w->ndirs, &bw->w->capdirs,
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

	if (git_index_new(&w->base) < 0 ||
	    git_index_read_tree(w->base, tree) < 0)
		return werr_git("cannot read the base tree");
	w->seen = xcalloc(git_index_entrycount(w->base) + 1, 1);
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, base_entry, &bw) < 0)
		return bw.err != NULL ? bw.err :
		    werr_git("cannot read the base tree");
	if (w->ndirs > 0)
		qsort(w->dirs, w->ndirs, sizeof(char *), wt_cmp_strp);
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

		if (!w->seen[i] && !wt_is_kept(w, e->path))
			wt_push(&gone, &ngone, &capgone, xstrdup(e->path));
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
		allowlist_report_add(r, AL_UNREADABLE, "", "the worktree "
		    "cannot be opened: %s", strerror(errno));
		goto out;
	}
	if ((err = wt_walk_dir(&w, fd, "", 0)) != NULL || w.cut)
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
