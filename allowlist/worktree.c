/*
 * worktree.c - the patch text of everything a worktree changed against a
 * base tree (edits, deletions, mode changes, untracked files with their
 * content, symlinks as symlinks), for the maintainer agent's worktree.
 *
 * The text is then gated like any other untrusted patch: nothing here
 * decides anything, and the worktree is never applied or trusted.
 * Ignored files are left out (they are not part of any change).
 */
#include "config.h"

#include <string.h>

#include "allowlist.h"
#include "buf.h"

struct werr *
allowlist_worktree_patch(struct buf *out, git_repository *wt,
    const git_oid *base_tree)
{
	git_diff_options opts;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	git_buf text = { NULL, 0, 0 };
	struct werr *err = NULL;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
	    GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_INCLUDE_TYPECHANGE |
	    GIT_DIFF_SHOW_BINARY;
	if (git_tree_lookup(&tree, wt, base_tree) < 0) {
		err = werr_git("cannot read the base tree");
		goto out;
	}
	if (git_diff_tree_to_workdir(&diff, wt, tree, &opts) < 0 ||
	    git_diff_to_buf(&text, diff, GIT_DIFF_FORMAT_PATCH) < 0) {
		err = werr_git("cannot diff the worktree");
		goto out;
	}
	buf_add(out, text.ptr != NULL ? text.ptr : "", text.size);
	buf_puts(out, "");
out:
	git_buf_dispose(&text);
	git_diff_free(diff);
	git_tree_free(tree);
	return err;
}
