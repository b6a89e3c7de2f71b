/*
 * view.c - the repository the agent sees, and what its sandbox shows.
 *
 * The view is RUN/view.git, a git directory of its own: no remote, no
 * credential, no hook, none of the maintainer's config; the repository's
 * objects borrowed read-only (objects/info/alternates); HEAD on the
 * run's branch at the base commit; a copy of the worktree's index, so
 * `git status` and `git diff` in the worktree answer as usual; its
 * core.worktree names the worktree. Inside
 * the sandbox RUN/view.gitfile is shown over WORKTREE/.git; on disk the
 * worktree stays the repository's, and warden reads the agent's change
 * from the worktree's files, never from the view. See agent-private.h.
 * Never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include "agent-private.h"
#include "util.h"

#define VIEW_USER_NAME	"warden agent"
#define VIEW_USER_EMAIL	"agent@warden.invalid"

/* The view's config: a repository with a working tree, the agent's
 * worktree, named (core.worktree) so that a program that opens the view
 * by its path (libgit2, `warden --repo .` in the worktree) finds the
 * worktree as its root, not the run's directory. */
static struct werr *
view_config(git_repository *view, const char *worktree)
{
	git_config *cfg = NULL;
	int rc;

	if (git_repository_config(&cfg, view) < 0)
		return werr_git("cannot read the view's config");
	rc = git_config_set_bool(cfg, "core.bare", 0) < 0 ||
	    git_config_set_string(cfg, "core.worktree", worktree) < 0 ||
	    git_config_set_bool(cfg, "core.symlinks", 0) < 0 ||
	    git_config_set_string(cfg, "core.hooksPath", "/dev/null") < 0 ||
	    git_config_set_string(cfg, "user.name", VIEW_USER_NAME) < 0 ||
	    git_config_set_string(cfg, "user.email", VIEW_USER_EMAIL) < 0;
	git_config_free(cfg);
	return rc ? werr_git("cannot write the view's config") : NULL;
}

struct werr *
agent_view_create(git_repository *repo, const struct agent_paths *p,
    const git_oid *commit)
{
	git_repository_init_options io;
	git_repository *view = NULL;
	git_reference *ref = NULL;
	char *common = xstrdup(git_repository_commondir(repo));
	char *alt = path_join(p->view, "objects/info/alternates");
	char *wt_index = xasprintf("%s/worktrees/%s/index", common,
	    p->wt_name);
	char *view_index = path_join(p->view, "index");
	struct buf b = BUF_INIT;
	struct werr *err = NULL;
	size_t n = strlen(common);

	while (n > 1 && common[n - 1] == '/')
		common[--n] = '\0';
	git_repository_init_options_init(&io,
	    GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	io.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH |
	    GIT_REPOSITORY_INIT_NO_REINIT;
	io.initial_head = p->branch + 11;
	if (git_repository_init_ext(&view, p->view, &io) < 0) {
		err = werr_git("cannot make the agent's repository view '%s'",
		    p->view);
		goto out;
	}
	git_repository_free(view);
	view = NULL;
	buf_printf(&b, "%s/objects\n", common);
	if ((err = file_write_atomic(alt, b.data, b.len)) != NULL)
		goto out;
	if (git_repository_open_bare(&view, p->view) < 0 ||
	    git_reference_create(&ref, view, p->branch, commit, 1,
	    "warden: the agent's view") < 0) {
		err = werr_git("cannot set the view's branch");
		goto out;
	}
	if ((err = view_config(view, p->worktree)) != NULL)
		goto out;
	buf_reset(&b);
	if (path_exists(wt_index) && ((err = file_read(&b, wt_index)) != NULL ||
	    (err = file_write_atomic(view_index, b.data, b.len)) != NULL))
		goto out;
	buf_reset(&b);
	buf_printf(&b, "gitdir: %s\n", p->view);
	err = file_write_atomic(p->view_gitfile, b.data, b.len);
out:
	git_reference_free(ref);
	git_repository_free(view);
	buf_free(&b);
	free(common);
	free(alt);
	free(wt_index);
	free(view_index);
	return err;
}

void
agent_sandbox_spec(struct sandbox_spec *s, git_repository *repo,
    const char *repo_root, const struct policy *pol,
    const struct agent_paths *p, char *const *argv, char *const *env)
{
	const char *common = git_repository_commondir(repo);
	char *objects = path_join(common, "objects");
	char *gitfile = path_join(p->worktree, ".git");
	char *prog = agent_program_path(argv[0], env);
	struct stat st;
	size_t i;

	memset(s, 0, sizeof(*s));
	sandbox_spec_hide(s, repo_root);
	sandbox_spec_hide(s, common);
	/* The maintainer's choices first: the policy's, the argv's. */
	for (i = 0; i < pol->agent.readable.n; i++)
		sandbox_spec_bind(s, pol->agent.readable.v[i], NULL,
		    SANDBOX_READ);
	if (prog != NULL)
		sandbox_spec_bind(s, prog, NULL, SANDBOX_READ);
	for (i = 0; argv[i] != NULL; i++)
		if (argv[i][0] == '/' && stat(argv[i], &st) == 0 &&
		    S_ISREG(st.st_mode))
			sandbox_spec_bind(s, argv[i], NULL, SANDBOX_READ);
	sandbox_spec_bind(s, objects, NULL, SANDBOX_READ);
	sandbox_spec_bind(s, p->run_dir, NULL, SANDBOX_READ);
	sandbox_spec_bind(s, p->worktree, NULL, SANDBOX_WRITE);
	sandbox_spec_bind(s, p->home, NULL, SANDBOX_WRITE);
	sandbox_spec_bind(s, p->tmp, NULL, SANDBOX_WRITE);
	sandbox_spec_bind(s, p->view, NULL, SANDBOX_WRITE);
	sandbox_spec_bind(s, p->view_gitfile, gitfile, SANDBOX_READ);
	s->cwd = xstrdup(p->worktree);
	s->net = (enum sandbox_net)sandbox_net_parse(pol->agent.network);
	s->run_dir = xstrdup(p->run_dir);
	free(objects);
	free(gitfile);
	free(prog);
}
