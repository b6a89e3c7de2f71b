/*
 * policy-trusted.c - policy read from git: from the tree of any commit
 * (the base of a check, pr-check's BASE), and the trusted policy, the one
 * on the official branch's tip. DESIGN.md's rule: policy always comes
 * from the trusted base, never from a change or a working tree; every
 * command that decides something with policy (patch, review, journal)
 * calls policy_load_trusted().
 *
 * The one thing that cannot come from the official tree is that branch's
 * name: it is `git config warden.officialBranch`, else "official", and
 * nowhere else (policy/warden.json's 'official_branch' is refused: a name
 * read from a tree would have to be found on the branch it names).
 * Neither a patch nor a pull request can change a repository's git
 * config, and the working tree is never read.
 *
 * Reads blobs only; never writes, never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "policy.h"
#include "util.h"

#define POLICY_PATH "policy/warden.json"
#define OFFICIAL_CONFIG "warden.officialBranch"

char *
policy_official_branch(git_repository *repo)
{
	git_config *cfg = NULL;
	git_buf name = { NULL, 0, 0 };
	char *out = NULL;

	if (git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_string_buf(&name, cfg, OFFICIAL_CONFIG) == 0 &&
	    name.ptr != NULL && name.ptr[0] != '\0')
		out = xstrdup(name.ptr);
	git_buf_dispose(&name);
	git_config_free(cfg);
	return out != NULL ? out : xstrdup(POLICY_OFFICIAL_DEFAULT);
}

void
policy_set_official(struct policy *p, git_repository *repo)
{
	free(p->official_branch);
	p->official_branch = policy_official_branch(repo);
}

int
policy_official_exists(const char *repo_root)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	char *branch, *refname;
	int found;

	if (git_repository_open(&repo, repo_root) < 0)
		return 0;
	branch = policy_official_branch(repo);
	refname = xasprintf("refs/heads/%s", branch);
	found = git_reference_lookup(&ref, repo, refname) == 0;
	git_reference_free(ref);
	free(refname);
	free(branch);
	git_repository_free(repo);
	return found;
}

struct werr *
policy_commit_file(struct buf *out, int *missing, git_repository *repo,
    const git_commit *commit, const char *path, const char *rev)
{
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	struct werr *err = NULL;
	git_filemode_t mode;

	*missing = 0;
	if (git_commit_tree(&tree, commit) < 0)
		return werr_git("cannot read the tree of '%s'", rev);
	if (git_tree_entry_bypath(&te, tree, path) < 0) {
		git_error_clear();
		*missing = 1;
		goto out;
	}
	/* A symlink is a blob too: only a regular file is a file here. */
	mode = git_tree_entry_filemode(te);
	if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE) {
		*missing = (int)mode;
		goto out;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0) {
		err = werr_git("%s of '%s'", path, rev);
		goto out;
	}
	if ((uint64_t)git_blob_rawsize(blob) > FILE_MAX_CONFIG) {
		err = werr_new(WEXIT_INPUT, "%s of '%s' is larger than %zu MiB, "
		    "the most warden reads from such a file", path, rev,
		    FILE_MAX_CONFIG >> 20);
		goto out;
	}
	buf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	buf_puts(out, "");
out:
	git_blob_free(blob);
	git_tree_entry_free(te);
	git_tree_free(tree);
	return err;
}

struct werr *
policy_load_commit(struct policy **out, git_repository *repo,
    const git_commit *commit, const char *rev)
{
	struct buf text = BUF_INIT;
	struct werr *err;
	int missing;

	*out = NULL;
	if ((err = policy_commit_file(&text, &missing, repo, commit,
	    POLICY_PATH, rev)) != NULL)
		goto out;
	if (missing == 1) {
		err = werr_new(WEXIT_INPUT, "'%s' has no %s", rev, POLICY_PATH);
		goto out;
	}
	if (missing != 0) {
		err = werr_new(WEXIT_INPUT, "%s of '%s' is not a regular file "
		    "(mode %06o)", POLICY_PATH, rev, (unsigned)missing);
		goto out;
	}
	err = policy_load_buffer(out, text.data ? text.data : "", text.len,
	    POLICY_PATH, NULL);
	if (err != NULL)
		err = werr_wrap(err, "policy of '%s'", rev);
	else
		policy_set_official(*out, repo);
out:
	buf_free(&text);
	return err;
}

struct werr *
policy_load_trusted(struct policy **out, git_oid *commit_out,
    git_repository *repo)
{
	char *branch = policy_official_branch(repo);
	char *refname = xasprintf("refs/heads/%s", branch);
	git_reference *ref = NULL;
	git_commit *commit = NULL;
	struct werr *err = NULL;

	*out = NULL;
	if (git_reference_lookup(&ref, repo, refname) < 0 ||
	    git_reference_peel((git_object **)&commit, ref,
	    GIT_OBJECT_COMMIT) < 0) {
		err = werr_new(WEXIT_ENV, "no official branch '%s' in this "
		    "repository to read the policy from (see 'warden init'; "
		    "git config %s names another)", branch, OFFICIAL_CONFIG);
		goto out;
	}
	if ((err = policy_load_commit(out, repo, commit, branch)) != NULL)
		goto out;
	if (commit_out != NULL)
		git_oid_cpy(commit_out, git_commit_id(commit));
out:
	git_commit_free(commit);
	git_reference_free(ref);
	free(refname);
	free(branch);
	return err;
}
