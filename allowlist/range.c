/*
 * range.c - gate a commit range: the combined change merge-base..HEAD,
 * every commit of the range against each of its parents (so a symlink
 * made in one commit and written through in the next is seen), and every
 * tree entry name of every commit (crafted trees can hold '..' or '.git').
 *
 * It reads objects only; it never checks anything out. The policy it is
 * given must come from the base side, never from HEAD.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

/* Tree ids already walked, so each tree's names are checked once. */
struct seen {
	git_oid *ids;
	size_t n, cap;
};

static int
seen_add(struct seen *s, const git_oid *id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (git_oid_equal(&s->ids[i], id))
			return 0;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->ids = xrealloc(s->ids, s->cap * sizeof(*s->ids));
	}
	git_oid_cpy(&s->ids[s->n++], id);
	return 1;
}

/* Entry names git itself would refuse to check out, in any tree. */
static void
check_entry_name(struct allowlist_report *r, const char *dir, const char *name)
{
	char *path = xasprintf("%s%s", dir, name);
	struct allowlist_report tmp;
	size_t i;

	if (*name == '\0' || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0 || strchr(name, '/') != NULL) {
		allowlist_report_add(r, AL_BAD_PATH, path,
		    "tree entry named '%s'", name);
		free(path);
		return;
	}
	allowlist_report_init(&tmp);
	allowlist_check_path(&tmp, name);
	for (i = 0; i < tmp.nv; i++)
		if (tmp.v[i].code == AL_DOTGIT)
			allowlist_report_add(r, AL_DOTGIT, path,
			    "tree entry '%s' names the repository's .git",
			    name);
	allowlist_report_free(&tmp);
	free(path);
}

static struct werr *
walk_names(struct allowlist_report *r, git_repository *repo,
    const git_oid *tree_id, const char *dir, struct seen *seen)
{
	git_tree *tree = NULL;
	struct werr *err = NULL;
	size_t i, n;

	if (!seen_add(seen, tree_id))
		return NULL;
	if (git_tree_lookup(&tree, repo, tree_id) < 0)
		return werr_git("cannot read tree %s", dir);
	n = git_tree_entrycount(tree);
	for (i = 0; i < n && err == NULL; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		const char *name = git_tree_entry_name(e);
		char *sub;

		check_entry_name(r, dir, name);
		if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
			continue;
		sub = xasprintf("%s%s/", dir, name);
		err = walk_names(r, repo, git_tree_entry_id(e), sub, seen);
		free(sub);
	}
	git_tree_free(tree);
	return err;
}

/* Is PATH in tree b exactly as in tree t (both absent counts)? */
static int
same_entry(git_tree *b, git_tree *t, const char *path)
{
	git_tree_entry *x = NULL, *y = NULL;
	int same;

	git_tree_entry_bypath(&x, b, path);
	git_tree_entry_bypath(&y, t, path);
	if (x == NULL || y == NULL)
		same = x == y;
	else
		same = git_tree_entry_filemode_raw(x) ==
		    git_tree_entry_filemode_raw(y) &&
		    git_oid_equal(git_tree_entry_id(x), git_tree_entry_id(y));
	git_tree_entry_free(x);
	git_tree_entry_free(y);
	return same;
}

/*
 * Decide on every change from tree a to tree b (a may be NULL). For a
 * merge, a is the first parent's tree and others the other parents':
 * a path the merge took unchanged from another parent is that parent's
 * change, not the merge's, and is judged in that parent's commit.
 */
static struct werr *
gate_trees(struct allowlist_report *r, git_repository *repo,
    const struct allowlist_policy *p, git_tree *a, git_tree *b,
    int record, git_tree *const *others, size_t nothers)
{
	git_diff_options opts;
	struct allowlist_base *base = NULL;
	git_diff *diff = NULL;
	struct werr *err;
	size_t i, n;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if ((err = allowlist_base_load(&base, repo, a)) != NULL)
		return err;
	if (git_diff_tree_to_tree(&diff, repo, a, b, &opts) < 0) {
		allowlist_base_free(base);
		return werr_git("cannot diff trees");
	}
	n = git_diff_num_deltas(diff);
	if (record && p->max_files > 0 && n > p->max_files)
		allowlist_report_add(r, AL_TOO_MANY_FILES, "",
		    "change touches %zu files, policy allows %zu", n,
		    p->max_files);
	for (i = 0; i < n; i++) {
		const git_diff_delta *dl = git_diff_get_delta(diff, i);
		struct allowlist_change c;
		git_blob *blob = NULL;
		git_patch *patch = NULL;
		size_t k;

		for (k = 0; k < nothers; k++)
			if (same_entry(b, others[k], dl->new_file.path))
				break;
		if (k < nothers)
			continue;
		memset(&c, 0, sizeof(c));
		c.status = allowlist_status_char(dl->status);
		if (c.status != 'A')
			c.old_path = dl->old_file.path;
		if (c.status != 'D') {
			c.new_path = dl->new_file.path;
			c.new_mode = dl->new_file.mode;
			if ((c.new_mode & 0170000) == 0100000 &&
			    git_blob_lookup(&blob, repo, &dl->new_file.id) == 0) {
				c.binary = git_blob_is_binary(blob);
				git_blob_free(blob);
			}
			allowlist_decide_blob(r, p, base, c.new_path,
			    &dl->new_file.id);
		}
		allowlist_decide(r, p, base, &c);
		if (record) {
			struct allowlist_file *f;

			if (r->nfiles == r->capfiles) {
				r->capfiles = r->capfiles ? r->capfiles * 2 : 16;
				r->files = xrealloc(r->files,
				    r->capfiles * sizeof(*r->files));
			}
			f = &r->files[r->nfiles++];
			memset(f, 0, sizeof(*f));
			f->status = c.status;
			f->old_path = c.old_path ? xstrdup(c.old_path) : NULL;
			f->new_path = c.new_path ? xstrdup(c.new_path) : NULL;
			f->old_mode = c.old_path ?
			    allowlist_base_mode(base, c.old_path) : 0;
			f->new_mode = c.new_mode;
			/* Line counts, and the first changed line that
			 * annotations point at. */
			if (git_patch_from_diff(&patch, diff, i) < 0)
				patch = NULL;
			allowlist_file_stats(f, patch);
			git_patch_free(patch);
			patch = NULL;
		}
	}
	git_diff_free(diff);
	allowlist_base_free(base);
	return NULL;
}

static struct werr *
gate_commit(struct allowlist_report *r, git_repository *repo,
    const struct allowlist_policy *p, const git_oid *id, struct seen *seen)
{
	git_commit *commit = NULL, *parent = NULL;
	git_tree *tree = NULL, **ptrees = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	struct werr *err = NULL;
	unsigned i, np = 0;

	git_oid_tostr(hex, sizeof(hex), id);
	r->commit = hex;
	if (git_commit_lookup(&commit, repo, id) < 0 ||
	    git_commit_tree(&tree, commit) < 0) {
		err = werr_git("cannot read commit %s", hex);
		goto out;
	}
	if ((err = walk_names(r, repo, git_tree_id(tree), "", seen)) != NULL)
		goto out;
	np = git_commit_parentcount(commit);
	ptrees = xcalloc(np + 1, sizeof(*ptrees));
	for (i = 0; i < np; i++) {
		int bad = git_commit_parent(&parent, commit, i) < 0 ||
		    git_commit_tree(&ptrees[i], parent) < 0;

		git_commit_free(parent);
		parent = NULL;
		if (bad) {
			err = werr_git("cannot read a parent of %s", hex);
			goto out;
		}
	}
	err = gate_trees(r, repo, p, np ? ptrees[0] : NULL, tree, 0,
	    np > 1 ? ptrees + 1 : NULL, np > 1 ? np - 1 : 0);
out:
	r->commit = NULL;
	for (i = 0; ptrees != NULL && i < np; i++)
		git_tree_free(ptrees[i]);
	free(ptrees);
	git_tree_free(tree);
	git_commit_free(commit);
	return err;
}

struct werr *
allowlist_gate_range(struct allowlist_report *r, git_repository *repo,
    const git_oid *base, const git_oid *head, const struct allowlist_policy *p)
{
	git_commit *bc = NULL, *hc = NULL;
	git_tree *bt = NULL, *ht = NULL;
	git_revwalk *walk = NULL;
	struct seen seen = { NULL, 0, 0 };
	struct werr *err = NULL;
	git_oid mb, id;

	if (git_merge_base(&mb, repo, base, head) < 0) {
		allowlist_report_add(r, AL_MALFORMED, "",
		    "base and head have no common ancestor");
		return NULL;
	}
	if (git_commit_lookup(&bc, repo, &mb) < 0 ||
	    git_commit_lookup(&hc, repo, head) < 0 ||
	    git_commit_tree(&bt, bc) < 0 || git_commit_tree(&ht, hc) < 0) {
		err = werr_git("cannot read the range");
		goto out;
	}
	git_oid_cpy(&r->base_tree, git_tree_id(bt));
	git_oid_cpy(&r->result_tree, git_tree_id(ht));
	r->applied = 1;
	if ((err = gate_trees(r, repo, p, bt, ht, 1, NULL, 0)) != NULL)
		goto out;
	/* Trees of the base were accepted by maintainers: not re-walked. */
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_push(walk, head) < 0 ||
	    git_revwalk_hide(walk, &mb) < 0) {
		err = werr_git("cannot walk the range");
		goto out;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	while (git_revwalk_next(&id, walk) == 0) {
		if ((err = gate_commit(r, repo, p, &id, &seen)) != NULL)
			goto out;
	}
out:
	free(seen.ids);
	git_revwalk_free(walk);
	git_tree_free(bt);
	git_tree_free(ht);
	git_commit_free(bc);
	git_commit_free(hc);
	return err;
}
