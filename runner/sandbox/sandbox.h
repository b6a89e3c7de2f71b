/*
 * sandbox.h - the write sandbox around the maintainer agent, behind one
 * small interface: bubblewrap on Linux (sandbox-linux.c), sandbox-exec
 * with a generated profile on macOS (sandbox-darwin.c).
 *
 * Inside it the agent may write its worktree (but for the worktree's
 * .git file), its temporary directory and its HOME; everything else is
 * read-only, the repository's own .git included. A sandbox is a prefix
 * put before the agent's argv. This module only builds and probes that
 * prefix: it never decides whether a run may go without one (policy
 * agent.sandbox does, in run.c) and never prints.
 */
#ifndef WARDEN_AGENT_SANDBOX_H
#define WARDEN_AGENT_SANDBOX_H

#include <stddef.h>

#include "error.h"

/* What the sandbox lets the agent write. Paths exist and are absolute. */
struct sandbox_spec {
	const char *worktree;	/* writable, but for WORKTREE/.git */
	const char *tmp;	/* writable */
	const char *home;	/* writable */
	const char *run_dir;	/* where a profile file may be written */
};

struct sandbox {
	const char *kind;	/* "bubblewrap", "sandbox-exec" */
	char **prefix;		/* NULL-terminated argv to put first */
	size_t nprefix;
};

/*
 * Is there a sandbox here that works? NULL when there is (kind set);
 * otherwise an error (WEXIT_ENV) saying why not. Runs the sandbox once
 * on /bin true (bounded), so a sandbox present but unable to run on this
 * kernel counts as absent. $WARDEN_BWRAP names bubblewrap (default:
 * bwrap on PATH).
 */
struct werr *sandbox_probe(const char **kind_out);

/* The prefix for spec (after a successful probe). Free with
 * sandbox_free. */
struct werr *sandbox_prepare(struct sandbox *sb,
    const struct sandbox_spec *spec);
void sandbox_free(struct sandbox *sb);

/* Shared by the platform files: append a copy of s to sb->prefix. */
void sandbox_push(struct sandbox *sb, const char *s);
/* Run argv (bounded to a few seconds); NULL when it exited 0. */
struct werr *sandbox_try(char *const *argv);

#endif
