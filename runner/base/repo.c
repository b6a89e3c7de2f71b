/*
 * repo.c - find the benchmark repository and its state, and check trees
 * out, through libgit2.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "repo.h"
#include "util.h"

void
repo_lib_init(void)
{
	git_libgit2_init();
}

void
repo_lib_shutdown(void)
{
	git_libgit2_shutdown();
}

struct werr *
repo_find_root(char **root_out, const char *start)
{
	git_buf found = { NULL, 0, 0 };
	git_repository *repo = NULL;
	const char *wd;
	struct werr *err = NULL;
	size_t n;

	*root_out = NULL;
	if (git_repository_discover(&found, start, 0, NULL) != 0)
		return werr_new(WEXIT_ENV,
		    "not in a benchmark repository: no git repository holds '%s' "
		    "(use --repo DIR or 'warden init DIR')", start);
	if (git_repository_open(&repo, found.ptr) != 0) {
		err = werr_git("open repository '%s'", found.ptr);
		goto out;
	}
	wd = git_repository_workdir(repo);
	if (wd == NULL) {
		err = werr_new(WEXIT_ENV, "'%s' is a bare repository; warden "
		    "needs a working tree", found.ptr);
		goto out;
	}
	*root_out = xstrdup(wd);
	n = strlen(*root_out);
	if (n > 1 && (*root_out)[n - 1] == '/')
		(*root_out)[n - 1] = '\0';
out:
	git_repository_free(repo);
	git_buf_dispose(&found);
	return err;
}

struct werr *
repo_head_state(const char *root, char *commit_out, int *dirty_out)
{
	git_repository *repo = NULL;
	git_status_list *st = NULL;
	git_status_options opts;
	git_oid oid;
	struct werr *err = NULL;

	commit_out[0] = '\0';
	*dirty_out = 0;
	if (git_repository_open(&repo, root) != 0)
		return werr_git("open repository '%s'", root);
	if (git_reference_name_to_id(&oid, repo, "HEAD") == 0)
		git_oid_tostr(commit_out, 41, &oid);
	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	    GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&st, repo, &opts) != 0) {
		err = werr_git("status of '%s'", root);
		goto out;
	}
	*dirty_out = git_status_list_entrycount(st) > 0;
out:
	git_status_list_free(st);
	git_repository_free(repo);
	return err;
}

struct werr *
repo_tree_checkout(git_repository *repo, const git_oid *tree_id,
    const char *dir)
{
	git_checkout_options co;
	git_object *tree = NULL;
	struct werr *err = NULL;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (dir != NULL) {
		co.target_directory = dir;
		co.checkout_strategy |= GIT_CHECKOUT_DONT_UPDATE_INDEX;
	}
	if (git_object_lookup(&tree, repo, tree_id, GIT_OBJECT_TREE) < 0 ||
	    git_checkout_tree(repo, tree, &co) < 0)
		err = werr_git("cannot check out the tree");
	git_object_free(tree);
	return err;
}

struct werr *
repo_tree_materialize(git_repository *repo, const git_oid *tree_id,
    const char *dir)
{
	struct werr *err;

	if (path_exists(dir))
		return werr_new(WEXIT_ENV, "'%s' exists already", dir);
	if ((err = mkdir_p(dir)) != NULL)
		return err;
	return repo_tree_checkout(repo, tree_id, dir);
}

/* The blob at path in tree, or NULL (caller frees). */
static git_blob *
tree_blob(git_repository *repo, const git_oid *tree_id, const char *path)
{
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;

	if (git_tree_lookup(&tree, repo, tree_id) == 0 &&
	    git_tree_entry_bypath(&te, tree, path) == 0 &&
	    git_tree_entry_type(te) == GIT_OBJECT_BLOB &&
	    git_blob_lookup(&blob, repo, git_tree_entry_id(te)) != 0)
		blob = NULL;
	git_tree_entry_free(te);
	git_tree_free(tree);
	return blob;
}

char *
repo_tree_text(git_repository *repo, const git_oid *tree_id, const char *path)
{
	git_blob *blob = tree_blob(repo, tree_id, path);
	char *text = blob != NULL ? xstrndup(git_blob_rawcontent(blob),
	    (size_t)git_blob_rawsize(blob)) : NULL;

	git_blob_free(blob);
	return text;
}

json_t *
repo_tree_json(git_repository *repo, const git_oid *tree_id, const char *path)
{
	git_blob *blob = tree_blob(repo, tree_id, path);
	json_t *doc = blob != NULL ? json_loadb(git_blob_rawcontent(blob),
	    (size_t)git_blob_rawsize(blob), 0, NULL) : NULL;

	git_blob_free(blob);
	return doc;
}
