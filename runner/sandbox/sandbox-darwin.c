/*
 * sandbox-darwin.c - the sandbox on macOS: sandbox-exec (Seatbelt) with a
 * profile warden writes into the run's directory, keeping the rule of
 * sandbox.h as the Linux side does.
 *
 * The profile allows what is not said otherwise, then: denies every file
 * write; denies reading (and connecting to sockets) in every hidden
 * place; allows reading what the spec shows read-only and reading and
 * writing what it shows writable (in SBPL the last matching rule wins);
 * keeps signals inside the sandbox; and the network rule: "https" allows
 * outbound TCP to port 443 and the resolver's socket only, "none" only
 * nothing. Paths are passed as parameters (-D H0=..., R0=...,
 * W0=...), never pasted into the profile text, and resolved with
 * realpath(3) because Seatbelt matches real paths (/tmp is /private/tmp).
 * Seatbelt cannot show a file at another path: a bind whose dst differs
 * from its src is shown at src. Not built or run on Linux: kept to the
 * same rule by reading. Never prints.
 */
#include "config.h"

#ifdef __APPLE__

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "util.h"

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"
#define RESOLVER_SOCKET "/private/var/run/mDNSResponder"

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

/* -D NAME=realpath(path) and the rule "(VERBS (FILTER (param NAME)))";
 * 0 when path is missing. */
static int
param(struct sandbox *sb, struct buf *profile, char kind, size_t i,
    const char *path, const char *verbs, const char *filter)
{
	char real[PATH_MAX];
	char *d;

	if (realpath(path, real) == NULL)
		return 0;
	d = xasprintf("%c%zu=%s", kind, i, real);
	sandbox_push(sb, "-D");
	sandbox_push(sb, d);
	free(d);
	buf_printf(profile, "(%s (%s (param \"%c%zu\")))\n", verbs, filter,
	    kind, i);
	return 1;
}

struct werr *
sandbox_prepare(struct sandbox *sb, const struct sandbox_spec *spec)
{
	struct buf p = BUF_INIT;
	char *profile = path_join(spec->run_dir, "sandbox.sb");
	char **places = sandbox_hidden_places();
	char *self = sandbox_self_dir();
	struct werr *err;
	size_t i, k = 0;

	memset(sb, 0, sizeof(*sb));
	sb->kind = "sandbox-exec";
	sandbox_push(sb, SANDBOX_EXEC);
	sandbox_push(sb, "-f");
	sandbox_push(sb, profile);
	buf_puts(&p, "(version 1)\n(allow default)\n(deny file-write*)\n");
	for (i = 0; places[i] != NULL; i++)
		k += param(sb, &p, 'H', k, places[i],
		    "deny file-read* network-outbound", "subpath");
	for (i = 0; i < spec->nhide; i++)
		k += param(sb, &p, 'H', k, spec->hide[i],
		    "deny file-read* network-outbound", "subpath");
	k = 0;
	if (self != NULL)
		k += param(sb, &p, 'S', k, self, "allow file-read*",
		    "subpath");
	/* In order, as bubblewrap mounts them: a later rule wins. A bind
	 * over another path (a .git file) is kept read-only at src. */
	for (i = k = 0; i < spec->nbinds; i++) {
		const struct sandbox_bind *b = &spec->binds[i];

		if (b->how == SANDBOX_HIDE)
			k += param(sb, &p, 'B', k, b->src,
			    "deny file-read* file-write* network-outbound",
			    "subpath");
		else if (b->dst != NULL && strcmp(b->dst, b->src) != 0)
			k += param(sb, &p, 'B', k, b->dst, "deny file-write*",
			    "literal");
		else if (b->how == SANDBOX_WRITE)
			k += param(sb, &p, 'B', k, b->src,
			    "allow file-read* file-write*", "subpath");
		else if (param(sb, &p, 'B', k, b->src, "deny file-write*",
		    "subpath"))
			k += 1 + param(sb, &p, 'B', k + 1, b->src,
			    "allow file-read*", "subpath");
	}
	buf_puts(&p, "(allow file-write* (literal \"/dev/null\") "
	    "(literal \"/dev/zero\") (literal \"/dev/tty\") "
	    "(literal \"/dev/dtracehelper\") (regex #\"^/dev/fd/\"))\n"
	    "(deny signal)\n(allow signal (target same-sandbox))\n");
	if (spec->net == SANDBOX_NET_HTTPS)
		buf_puts(&p, "(deny network-outbound)\n"
		    "(allow network-outbound (remote tcp \"*:443\"))\n"
		    "(allow network-outbound (literal \"" RESOLVER_SOCKET
		    "\"))\n");
	else if (spec->net == SANDBOX_NET_NONE)
		buf_puts(&p, "(deny network-outbound)\n");
	err = file_write_atomic(profile, p.data, p.len);
	if (err != NULL)
		sandbox_free(sb);
	buf_free(&p);
	free(profile);
	free(self);
	sandbox_strv_free(places);
	return err;
}

#endif
