/*
 * worktree.c - the agent's worktree and the trees warden checks out for
 * it: validated before checkout, written without symlinks, made and
 * removed only under the run's own paths. See agent-private.h.
 *
 * Must never write the maintainer's working tree, index or config: the
 * symlink setting lives in a config file of the run, added to one
 * repository handle in memory.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-private.h"
#include "allowlist.h"
#include "repo.h"
#include "util.h"

void
agent_paths_init(struct agent_paths *p, const char *repo_root, int64_t id)
{
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->run_dir = xasprintf("%s/.warden/agent/%lld", repo_root,
	    (long long)id);
	p->worktree = xasprintf("%s/.warden/worktrees/%lld", repo_root,
	    (long long)id);
	p->home = path_join(p->run_dir, "home");
	p->tmp = path_join(p->run_dir, "tmp");
	p->log = path_join(p->run_dir, "agent.log");
	p->prompt = path_join(p->run_dir, "task.md");
	p->problem = path_join(p->run_dir, "problem.json");
	p->git_override = path_join(p->run_dir, "git.config");
	p->view = path_join(p->run_dir, "view.git");
	p->view_gitfile = path_join(p->run_dir, "view.gitfile");
	p->branch = xasprintf("refs/heads/warden/agent/%lld", (long long)id);
	p->wt_name = xasprintf("warden-agent-%lld", (long long)id);
}

void
agent_paths_free(struct agent_paths *p)
{
	free(p->run_dir);
	free(p->worktree);
	free(p->home);
	free(p->tmp);
	free(p->log);
	free(p->prompt);
	free(p->problem);
	free(p->git_override);
	free(p->view);
	free(p->view_gitfile);
	free(p->branch);
	free(p->wt_name);
	memset(p, 0, sizeof(*p));
}

struct validate {
	struct buf *why;
	size_t n;
};

static int
validate_entry(const char *root, const git_tree_entry *e, void *payload)
{
	struct validate *v = payload;
	struct allowlist_report r;
	char *path = xasprintf("%s%s", root, git_tree_entry_name(e));
	size_t i;

	allowlist_report_init(&r);
	allowlist_check_path(&r, path);
	for (i = 0; i < r.nv; i++) {
		/* .gitignore and its kin may be in the official tree. */
		if (r.v[i].code == AL_GITFILE)
			continue;
		buf_printf(v->why, "%s: %s\n", path, r.v[i].reason);
		v->n++;
	}
	if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT) {
		buf_printf(v->why, "%s: a gitlink (submodule)\n", path);
		v->n++;
	}
	allowlist_report_free(&r);
	free(path);
	return 0;
}

size_t
agent_tree_validate(struct buf *why, git_repository *repo,
    const git_oid *tree_id)
{
	struct validate v = { why, 0 };
	git_tree *tree = NULL;

	if (git_tree_lookup(&tree, repo, tree_id) < 0) {
		buf_printf(why, "cannot read the tree\n");
		return 1;
	}
	git_tree_walk(tree, GIT_TREEWALK_PRE, validate_entry, &v);
	git_tree_free(tree);
	return v.n;
}

struct werr *
agent_repo_no_symlinks(git_repository *repo, const char *override_path)
{
	static const char text[] = "[core]\n\tsymlinks = false\n";
	git_config *cfg = NULL;
	struct werr *err;

	if (!path_exists(override_path) &&
	    (err = file_write_atomic(override_path, text, strlen(text))) != NULL)
		return err;
	if (git_repository_config(&cfg, repo) < 0 ||
	    git_config_add_file_ondisk(cfg, override_path,
	    GIT_CONFIG_LEVEL_APP, repo, 1) < 0) {
		git_config_free(cfg);
		return werr_git("cannot set core.symlinks for the checkout");
	}
	git_config_free(cfg);
	return NULL;
}

struct werr *
agent_worktree_open(git_repository **out, const struct agent_paths *p)
{
	struct werr *err;

	*out = NULL;
	if (git_repository_open(out, p->worktree) < 0)
		return werr_git("cannot open the worktree '%s'", p->worktree);
	if ((err = agent_repo_no_symlinks(*out, p->git_override)) != NULL) {
		git_repository_free(*out);
		*out = NULL;
	}
	return err;
}

struct werr *
agent_worktree_create(git_repository *repo, const struct agent_paths *p,
    const git_oid *commit_id)
{
	git_worktree_add_options wo;
	git_worktree *wt = NULL;
	git_reference *branch = NULL;
	git_commit *commit = NULL;
	git_repository *wrepo = NULL;
	git_tree *tree = NULL;
	struct werr *err = NULL;
	char *parent = xasprintf("%.*s", (int)(strrchr(p->worktree, '/') -
	    p->worktree), p->worktree);

	if ((err = mkdir_p(parent)) != NULL)
		goto out;
	if (git_commit_lookup(&commit, repo, commit_id) < 0 ||
	    git_reference_create(&branch, repo, p->branch, commit_id, 0,
	    "warden: agent run") < 0) {
		err = werr_git("cannot create the branch '%s'", p->branch + 11);
		goto out;
	}
	git_worktree_add_options_init(&wo, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	wo.ref = branch;
	/* Nothing is checked out here: below, with core.symlinks=false. */
	wo.checkout_options.checkout_strategy = GIT_CHECKOUT_NONE;
	if (git_worktree_add(&wt, repo, p->wt_name, p->worktree, &wo) < 0) {
		err = werr_git("cannot add the worktree '%s'", p->worktree);
		goto out;
	}
	if ((err = agent_worktree_open(&wrepo, p)) != NULL)
		goto out;
	err = repo_tree_checkout(wrepo, git_commit_tree_id(commit), NULL);
out:
	git_tree_free(tree);
	git_repository_free(wrepo);
	git_worktree_free(wt);
	git_reference_free(branch);
	git_commit_free(commit);
	free(parent);
	return err;
}
