/*
 * agent-private.h - what the files of runner/agent/ share: the paths of
 * a run, the worktree and tree helpers, the repository view and the
 * sandbox spec, the task context and the launch (the smoke campaign of
 * its change is review-smoke.h's).
 * Internal: nothing outside runner/agent/ and cmd-agent.c includes it; the public
 * contract is agent.h.
 */
#ifndef WARDEN_AGENT_PRIVATE_H
#define WARDEN_AGENT_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "agent.h"
#include "buf.h"
#include "error.h"
#include "policy.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"

struct allowlist_report;
struct store;

/* Where run ID lives. Every path is absolute. */
struct agent_paths {
	int64_t id;
	char *run_dir;		/* .warden/agent/ID */
	char *worktree;		/* .warden/worktrees/ID */
	char *home;		/* RUN/home */
	char *tmp;		/* RUN/tmp */
	char *log;		/* RUN/agent.log */
	char *prompt;		/* RUN/task.md: the task context */
	char *problem;		/* RUN/problem.json */
	char *git_override;	/* RUN/git.config: core.symlinks=false */
	char *view;		/* RUN/view.git: the repository it sees */
	char *view_gitfile;	/* RUN/view.gitfile: "gitdir: RUN/view.git" */
	char *branch;		/* refs/heads/warden/agent/ID */
	char *wt_name;		/* warden-agent-ID (.git/worktrees/NAME) */
};

void agent_paths_init(struct agent_paths *p, const char *repo_root,
    int64_t id);
void agent_paths_free(struct agent_paths *p);

/* ---- worktree.c ---- */

/* Path rules over every entry of the official tree before anything of it
 * is checked out: no .git entry (in any spelling), no gitlink, no bad
 * path. Problems go to why (one per line); returns how many. */
size_t agent_tree_validate(struct buf *why, git_repository *repo,
    const git_oid *tree);
/* Make repo (this handle only) see core.symlinks=false, so checkouts
 * write a symlink of the tree as a plain file holding its target. */
struct werr *agent_repo_no_symlinks(git_repository *repo,
    const char *override_path);
/* The worktree: branch p->branch at commit, .git/worktrees/NAME, the
 * files of the commit's tree checked out without symlinks. */
struct werr *agent_worktree_create(git_repository *repo,
    const struct agent_paths *p, const git_oid *commit);
/* Open the worktree as a repository (core.symlinks=false as above). */
struct werr *agent_worktree_open(git_repository **out,
    const struct agent_paths *p);

/* ---- view.c ---- */

/* The agent's repository view (p->view, p->view_gitfile) for commit, on
 * p->branch, with the worktree's index. */
struct werr *agent_view_create(git_repository *repo,
    const struct agent_paths *p, const git_oid *commit);

/* What the agent's sandbox shows (sandbox.h): the repository and its git
 * directory hidden; the policy's agent.readable, its program (found on
 * its PATH, links followed), the files its argv names by absolute path
 * (a script), the repository's objects and the run's directory
 * read-only; its worktree, HOME, TMPDIR and view writable; the view's
 * .git file over the worktree's. Free with sandbox_spec_free. */
void agent_sandbox_spec(struct sandbox_spec *s, git_repository *repo,
    const char *repo_root, const struct policy *policy,
    const struct agent_paths *p, char *const *argv, char *const *env);

/* ---- context.c ---- */

/* Write the task context (Markdown, p->prompt) and the problem
 * (p->problem): the problem, failing cells, version diff, log tails, the
 * allowlist and the instructions text. */
struct werr *agent_context_write(const struct agent_paths *p,
    const struct agent_task *t, const struct policy *policy,
    const char *instructions, size_t ilen);
/* The task context as text (what agent_context_write writes). */
void agent_context_text(struct buf *out, const struct agent_paths *p,
    const struct agent_task *t, const struct policy *policy,
    const char *instructions, size_t ilen);

/* ---- launch.c ---- */

struct agent_exec {
	uint64_t started_ns;
	double duration_s;
	int status;		/* wait status of the agent (or the sandbox) */
	int timed_out;		/* killed at the time limit */
	unsigned reaped;	/* descendants killed after it */
};

/* The agent's argv from the policy's template, placeholders expanded
 * (an unknown placeholder is an input error naming policy's field). */
struct werr *agent_argv(char ***argv_out, const struct policy *policy,
    const struct agent_paths *p, const struct agent_task *t);
void agent_argv_free(char **argv);
/* The agent's environment: the variables policy lists (when set), PATH
 * (policy's or a safe default), HOME, TMPDIR, and git told to read no
 * system or global config and to run no hook. */
char **agent_env(const struct policy *policy, const struct agent_paths *p);
/* Can argv[0] be run, by itself or found on env's PATH? */
struct werr *agent_program_check(char *const *argv, char *const *env);
/* Where exec finds prog on env's PATH, links followed (caller frees);
 * NULL when it is not there or not executable. */
char *agent_program_path(const char *prog, char *const *env);
/* Run argv (after sb's prefix when sb is not NULL) in the worktree with
 * env, output to p->log, until it exits or the time limit; then stop its
 * group and reap every descendant. */
struct werr *agent_launch(struct agent_exec *ex, char *const *argv,
    char *const *env, const struct sandbox *sb, const struct policy *policy,
    const struct agent_paths *p);
/* The exit as JSON: {"status": "exit status 0", "exit_code"|"signal",
 * "timed_out", "duration_s", "reaped"}. */
json_t *agent_exec_json(const struct agent_exec *ex);

/* ---- guard.c ---- */

/* The journal's head when a run began: the store's content that
 * agent_settle() holds the run to. */
struct agent_store_head {
	int64_t seq;		/* 0: the journal was empty */
	char hash[65];
};
/* Snapshot what the run must not change: the repository, less the run's
 * own places and the store's files (warden's readers and writers change
 * those while the agent runs), and the journal's head into *head. */
struct werr *agent_guard_snapshot(struct sandbox_guard **out,
    git_repository *repo, const char *repo_root, const struct agent_paths *p,
    struct store *store, struct agent_store_head *head);
/* After an unreviewed step (the agent, its smoke campaign): compare the
 * repository with guard and the store with head (its chain verifies and
 * head's entry is unchanged); on any difference put .git back, record
 * "reasons" and "restored" in rec, set *state to "quarantined" and
 * *changed. */
struct werr *agent_settle(json_t *rec, const struct sandbox_guard *guard,
    git_repository *repo, struct store *store,
    const struct agent_store_head *head, const char **state, int *changed);

/* ---- verdict.c ---- */

/* The gate report's change in brief: {"files", "added", "deleted",
 * "paths": [{"status", "path", "added", "deleted"}]}. */
json_t *agent_diffstat_json(const struct allowlist_report *g);

/* Why the agent failed (it exited non-zero, was killed, or ran past the
 * time limit): {"reason", "log_tail": the last lines of log}. */
json_t *agent_failure_json(const struct policy *policy, const char *log,
    const struct agent_exec *ex);
/* What env points the agent at that policy's network rule does not
 * reach (a model API URL on a port other than 443 under "https"), as an
 * array of sentences; NULL when nothing. */
json_t *agent_network_warnings(const struct policy *policy,
    char *const *env);

/* ---- transcript.c ---- */

/* What the agent did, from its program's own transcript under home (the
 * newest Claude Code session or Codex CLI rollout; read bounded, never
 * through a link): {"program", "file" (under its sessions folder),
 * "bytes", "too_large", "files_read", "files_edited", "commands"
 * [{"command", "exit_code"}], "final_message", "tokens" {"input",
 * "output"}, "turns", "cost_usd" (null where the program gives none)}.
 * NULL when there is none. */
json_t *agent_transcript(const char *home);

#endif
