/*
 * sandbox-darwin.c - the agent's write sandbox on macOS: sandbox-exec
 * (Seatbelt) with a profile warden writes into the run's directory.
 *
 * The profile allows everything but file writes, then allows writes under
 * the worktree, the temporary directory and HOME (and the few devices a
 * shell writes), then denies the worktree's .git file again: in SBPL the
 * last matching rule wins. Paths are passed as parameters (-D), never
 * pasted into the profile text, and resolved with realpath(3) because
 * Seatbelt matches real paths (/tmp is /private/tmp). Never prints.
 */
#include "config.h"

#ifdef __APPLE__

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "util.h"

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

static const char profile_text[] =
"(version 1)\n"
"(allow default)\n"
"(deny file-write*)\n"
"(allow file-write*\n"
"  (subpath (param \"WORKTREE\"))\n"
"  (subpath (param \"TMP\"))\n"
"  (subpath (param \"HOME\"))\n"
"  (literal \"/dev/null\") (literal \"/dev/zero\")\n"
"  (literal \"/dev/tty\") (literal \"/dev/dtracehelper\")\n"
"  (regex #\"^/dev/fd/\"))\n"
"(deny file-write* (literal (param \"GITFILE\")))\n";

struct werr *
sandbox_probe(const char **kind_out)
{
	char *argv[] = { SANDBOX_EXEC, "-p", "(version 1)(allow default)",
	    "/usr/bin/true", NULL };
	struct werr *err;

	*kind_out = NULL;
	if ((err = sandbox_try(argv)) != NULL)
		return werr_wrap(err, "no write sandbox (sandbox-exec)");
	*kind_out = "sandbox-exec";
	return NULL;
}

static struct werr *
param(struct sandbox *sb, const char *name, const char *path)
{
	char real[PATH_MAX];
	char *d;

	if (realpath(path, real) == NULL)
		return werr_errno("realpath", path);
	d = xasprintf("%s=%s", name, real);
	sandbox_push(sb, "-D");
	sandbox_push(sb, d);
	free(d);
	return NULL;
}

struct werr *
sandbox_prepare(struct sandbox *sb, const struct sandbox_spec *spec)
{
	char *profile = path_join(spec->run_dir, "sandbox.sb");
	char *gitfile = path_join(spec->worktree, ".git");
	struct werr *err;

	memset(sb, 0, sizeof(*sb));
	sb->kind = "sandbox-exec";
	if ((err = file_write_atomic(profile, profile_text,
	    strlen(profile_text))) != NULL)
		goto out;
	sandbox_push(sb, SANDBOX_EXEC);
	sandbox_push(sb, "-f");
	sandbox_push(sb, profile);
	if ((err = param(sb, "WORKTREE", spec->worktree)) != NULL ||
	    (err = param(sb, "TMP", spec->tmp)) != NULL ||
	    (err = param(sb, "HOME", spec->home)) != NULL ||
	    (err = param(sb, "GITFILE", gitfile)) != NULL)
		goto out;
out:
	if (err != NULL)
		sandbox_free(sb);
	free(profile);
	free(gitfile);
	return err;
}

#endif
