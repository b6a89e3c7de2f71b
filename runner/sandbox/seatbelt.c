/*
 * seatbelt.c - the Seatbelt profile of a sandbox spec (seatbelt.h), in
 * SBPL, the Scheme dialect sandbox-exec(1) reads. Built everywhere and
 * unit-tested on Linux (tests/unit/test-seatbelt.c); run only on macOS,
 * by sandbox-darwin.c. Never touches a file, never prints.
 *
 * The rules, in the order SBPL needs them: "(version 1)" first; then,
 * because among the rules that match an operation the last one wins:
 *
 *   1. (allow default), then (deny file-write*): the system is readable,
 *      nothing is writable;
 *   2. the hidden places: no reading, no connecting to a socket there;
 *   3. warden's own folder, readable again;
 *   4. the spec's binds in its order, each over what came before:
 *      read-only (writes denied, reads allowed), writable, or hidden
 *      again; a bind shown at another path (dst) cannot be: Seatbelt has
 *      no mounts, so dst keeps what is really there, read-only;
 *   5. the device files every program writes (/dev/null, /dev/tty, ...);
 *   6. signals only to processes of the same sandbox;
 *   7. the network, last, over the hidden places' socket rule: "https"
 *      denies every outbound connection and datagram (UDP included),
 *      then allows TCP to port 443 and the resolver's socket; "none"
 *      denies outbound, binding and inbound; "host" adds nothing.
 *
 * Paths are never pasted into the text: each is a parameter (-D
 * NAME=PATH), read with (param "NAME"), so a path with a quote, a
 * parenthesis or a newline is only ever a string. The operations and
 * filters are those of Apple's own profiles (the .sb files of
 * /System/Library/Sandbox/Profiles and /usr/share/sandbox on a Mac):
 * file-read*,
 * file-write*, network-outbound, network-bind, network-inbound, signal,
 * (subpath ...), (literal ...), (remote tcp "*:443"), (target
 * same-sandbox).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "seatbelt.h"
#include "util.h"

/* mDNSResponder's socket: every name lookup of the C library goes
 * through it on macOS (DNSServiceGetAddrInfo, <dns_sd.h>), never UDP. */
#define SEATBELT_RESOLVER_SOCKET "/private/var/run/mDNSResponder"

static void
push_param(struct seatbelt *sb, char *param)
{
	sb->params = xrealloc(sb->params, (sb->nparams + 2) *
	    sizeof(*sb->params));
	sb->params[sb->nparams++] = param;
	sb->params[sb->nparams] = NULL;
}

/* One rule "(VERBS (FILTER (param "Kn")))" over the real path of path,
 * its parameter Kn=REAL; *n counts the parameters of kind K. Nothing when
 * path is missing. */
static void
rule(struct seatbelt *sb, seatbelt_resolve_fn resolve, char kind, size_t *n,
    const char *path, const char *verbs, const char *filter)
{
	char *real = resolve(path);

	if (real == NULL)
		return;
	push_param(sb, xasprintf("%c%zu=%s", kind, *n, real));
	buf_printf(&sb->text, "(%s (%s (param \"%c%zu\")))\n", verbs, filter,
	    kind, *n);
	(*n)++;
	free(real);
}

void
seatbelt_profile(struct seatbelt *sb, const struct sandbox_spec *spec,
    char *const *hidden, const char *self_dir, seatbelt_resolve_fn resolve)
{
	size_t i, nh = 0, ns = 0, nb = 0;

	memset(sb, 0, sizeof(*sb));
	buf_puts(&sb->text, "(version 1)\n(allow default)\n"
	    "(deny file-write*)\n");
	for (i = 0; hidden != NULL && hidden[i] != NULL; i++)
		rule(sb, resolve, 'H', &nh, hidden[i],
		    "deny file-read* network-outbound", "subpath");
	for (i = 0; i < spec->nhide; i++)
		rule(sb, resolve, 'H', &nh, spec->hide[i],
		    "deny file-read* network-outbound", "subpath");
	if (self_dir != NULL)
		rule(sb, resolve, 'S', &ns, self_dir, "allow file-read*",
		    "subpath");
	for (i = 0; i < spec->nbinds; i++) {
		const struct sandbox_bind *b = &spec->binds[i];

		if (b->how == SANDBOX_HIDE)
			rule(sb, resolve, 'B', &nb, b->src,
			    "deny file-read* file-write* network-outbound",
			    "subpath");
		else if (b->dst != NULL && strcmp(b->dst, b->src) != 0)
			rule(sb, resolve, 'B', &nb, b->dst, "deny file-write*",
			    "literal");
		else if (b->how == SANDBOX_WRITE)
			rule(sb, resolve, 'B', &nb, b->src,
			    "allow file-read* file-write*", "subpath");
		else {
			rule(sb, resolve, 'B', &nb, b->src, "deny file-write*",
			    "subpath");
			rule(sb, resolve, 'B', &nb, b->src, "allow file-read*",
			    "subpath");
		}
	}
	buf_puts(&sb->text, "(allow file-write* (literal \"/dev/null\") "
	    "(literal \"/dev/zero\") (literal \"/dev/tty\") "
	    "(literal \"/dev/dtracehelper\") (regex #\"^/dev/fd/\"))\n"
	    "(deny signal)\n(allow signal (target same-sandbox))\n");
	if (spec->net == SANDBOX_NET_HTTPS)
		buf_puts(&sb->text, "(deny network-outbound)\n"
		    "(allow network-outbound (remote tcp \"*:443\"))\n"
		    "(allow network-outbound (literal \""
		    SEATBELT_RESOLVER_SOCKET "\"))\n");
	else if (spec->net == SANDBOX_NET_NONE)
		buf_puts(&sb->text, "(deny network-outbound network-bind "
		    "network-inbound)\n");
}

void
seatbelt_free(struct seatbelt *sb)
{
	size_t i;

	for (i = 0; i < sb->nparams; i++)
		free(sb->params[i]);
	free(sb->params);
	buf_free(&sb->text);
	memset(sb, 0, sizeof(*sb));
}
