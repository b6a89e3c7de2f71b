/*
 * sandbox-darwin.c - the sandbox on macOS: sandbox-exec (Seatbelt) with
 * the profile of seatbelt.c, written into the run's directory, keeping
 * the rule of sandbox.h as far as Seatbelt can (doc/trust.md says where
 * it cannot). Paths reach the profile as -D parameters, resolved with
 * realpath(3). Compiled for macOS on Linux by ci/macos-check; the profile
 * text is unit-tested on Linux (tests/unit/test-seatbelt.c); run only on
 * a Mac. Never prints.
 */
#include "config.h"

#ifdef __APPLE__

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "seatbelt.h"
#include "util.h"

/* sandbox-exec(1): "-f profile-file", "-D key=value" (its manual page,
 * which marks it deprecated; it ships with every macOS release, and the
 * coding agents' own sandboxes run it too). */
#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

struct werr *
sandbox_probe(struct sandbox_caps *caps)
{
	char *argv[] = { SANDBOX_EXEC, "-p", "(version 1)(allow default)",
	    "/usr/bin/true", NULL };
	struct werr *err;

	memset(caps, 0, sizeof(*caps));
	if ((err = sandbox_try(argv)) != NULL)
		return werr_wrap(err, "no sandbox (sandbox-exec)");
	caps->kind = "sandbox-exec";
	caps->net_https = 1;
	caps->scoped = 1;
	return NULL;
}

/* The real path (Seatbelt matches real paths: /tmp is /private/tmp),
 * or NULL when path is missing. */
static char *
resolve_real(const char *path)
{
	char real[PATH_MAX];

	return realpath(path, real) != NULL ? xstrdup(real) : NULL;
}

struct werr *
sandbox_prepare(struct sandbox *sb, const struct sandbox_spec *spec)
{
	struct seatbelt profile;
	char *file = path_join(spec->run_dir, "sandbox.sb");
	char **places = sandbox_hidden_places();
	char *self = sandbox_self_dir();
	struct werr *err;
	size_t i;

	memset(sb, 0, sizeof(*sb));
	sb->kind = "sandbox-exec";
	seatbelt_profile(&profile, spec, places, self, resolve_real);
	sandbox_push(sb, SANDBOX_EXEC);
	sandbox_push(sb, "-f");
	sandbox_push(sb, file);
	for (i = 0; i < profile.nparams; i++) {
		sandbox_push(sb, "-D");
		sandbox_push(sb, profile.params[i]);
	}
	err = file_write_atomic(file, profile.text.data, profile.text.len);
	if (err != NULL)
		sandbox_free(sb);
	seatbelt_free(&profile);
	free(file);
	free(self);
	sandbox_strv_free(places);
	return err;
}

#endif
