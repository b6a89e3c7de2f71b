/*
 * sandbox-linux.c - the agent's write sandbox on Linux: bubblewrap.
 *
 * The agent sees the whole file system read-only (a read-only bind of /),
 * with writable binds of its worktree, temporary directory and HOME, and
 * the worktree's .git file bound read-only over itself. It gets a fresh
 * /dev and /proc, its own PID namespace (so when bubblewrap goes, every
 * process of the agent goes: no daemon survives), a new session (no
 * terminal injection), and no capabilities (root inside cannot remount
 * anything writable). The network is left as it is: agents call their
 * model's API. Never prints.
 */
#include "config.h"

#ifndef __APPLE__

#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "util.h"

static const char *
bwrap_path(void)
{
	const char *p = getenv("WARDEN_BWRAP");

	return p != NULL && p[0] != '\0' ? p : "bwrap";
}

/* The options every run and the probe share. */
static void
common(struct sandbox *sb)
{
	sandbox_push(sb, bwrap_path());
	sandbox_push(sb, "--ro-bind");
	sandbox_push(sb, "/");
	sandbox_push(sb, "/");
	sandbox_push(sb, "--dev");
	sandbox_push(sb, "/dev");
	sandbox_push(sb, "--proc");
	sandbox_push(sb, "/proc");
	sandbox_push(sb, "--unshare-pid");
	sandbox_push(sb, "--die-with-parent");
	sandbox_push(sb, "--new-session");
	sandbox_push(sb, "--cap-drop");
	sandbox_push(sb, "ALL");
}

static void
bind(struct sandbox *sb, const char *how, const char *path)
{
	sandbox_push(sb, how);
	sandbox_push(sb, path);
	sandbox_push(sb, path);
}

struct werr *
sandbox_probe(const char **kind_out)
{
	struct sandbox sb = { 0 };
	struct werr *err;

	*kind_out = NULL;
	common(&sb);
	sandbox_push(&sb, "--");
	sandbox_push(&sb, "true");
	err = sandbox_try(sb.prefix);
	sandbox_free(&sb);
	if (err != NULL)
		return werr_wrap(err, "no write sandbox (bubblewrap)");
	*kind_out = "bubblewrap";
	return NULL;
}

struct werr *
sandbox_prepare(struct sandbox *sb, const struct sandbox_spec *spec)
{
	char *gitfile = path_join(spec->worktree, ".git");

	memset(sb, 0, sizeof(*sb));
	sb->kind = "bubblewrap";
	common(sb);
	bind(sb, "--bind", spec->worktree);
	bind(sb, "--ro-bind", gitfile);
	bind(sb, "--bind", spec->tmp);
	bind(sb, "--bind", spec->home);
	sandbox_push(sb, "--chdir");
	sandbox_push(sb, spec->worktree);
	sandbox_push(sb, "--");
	free(gitfile);
	return NULL;
}

#endif
