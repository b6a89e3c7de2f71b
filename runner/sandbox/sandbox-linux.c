/*
 * sandbox-linux.c - the sandbox on Linux: bubblewrap, with the network
 * rule kept by Landlock (netlimit.c).
 *
 * The program sees the file system read-only (a read-only bind of /);
 * every hidden place (sandbox_hidden_places() and the spec's) is an
 * empty, small tmpfs of mode 0555 over it, private to the sandbox and
 * gone when it ends; what the spec shows is bound back on top, read-only
 * or writable, each at its real path (the folders leading to it made
 * 0555 too). It gets a fresh /dev and /proc, its own PID namespace (when
 * bubblewrap goes, every process of the program goes: no daemon
 * survives), a new session (no terminal injection), no capabilities
 * (root inside cannot remount anything), and, for "none", a network
 * namespace of its own. warden's own folder is shown read-only; its
 * executable applies the network rule and the Landlock scopes and
 * executes the program. Never prints.
 */
#include "config.h"

#ifndef __APPLE__

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "util.h"

/* The size of a hidden place's tmpfs: room for the folders that lead to
 * what is bound back, not for data. */
#define HIDDEN_TMPFS_BYTES "1048576"

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
hide(struct sandbox *sb, const char *dir)
{
	sandbox_push(sb, "--perms");
	sandbox_push(sb, "0555");
	sandbox_push(sb, "--size");
	sandbox_push(sb, HIDDEN_TMPFS_BYTES);
	sandbox_push(sb, "--tmpfs");
	sandbox_push(sb, dir);
}

struct werr *
sandbox_probe(struct sandbox_caps *caps)
{
	struct sandbox sb = { 0 };
	struct werr *err;
	int abi = sandbox_landlock_abi();

	memset(caps, 0, sizeof(*caps));
	common(&sb);
	hide(&sb, "/tmp");
	sandbox_push(&sb, "--unshare-net");
	sandbox_push(&sb, "--");
	sandbox_push(&sb, "true");
	err = sandbox_try(sb.prefix);
	sandbox_free(&sb);
	if (err != NULL)
		return werr_wrap(err, "no sandbox (bubblewrap 0.7 or later)");
	caps->kind = "bubblewrap";
	caps->net_https = abi >= 4;
	caps->scoped = abi >= 6;
	return NULL;
}

struct view {
	struct sandbox *sb;
	char **hidden;		/* every hidden place, real paths */
	size_t nhidden;
	char **made;		/* folders made inside them */
	size_t nmade;
};

static int
made(const struct view *v, const char *dir)
{
	size_t i;

	for (i = 0; i < v->nmade; i++)
		if (strcmp(v->made[i], dir) == 0)
			return 1;
	return 0;
}

/* The folders between the innermost hidden place holding dst and dst,
 * made 0555 (bubblewrap would make them 0755 and writable). */
static void
lead_to(struct view *v, const char *dst)
{
	size_t i, best = v->nhidden;
	char *dir, *slash;

	for (i = 0; i < v->nhidden; i++)
		if (sandbox_path_under(dst, v->hidden[i]) && strcmp(dst, v->hidden[i]) != 0 &&
		    (best == v->nhidden ||
		    strlen(v->hidden[i]) > strlen(v->hidden[best])))
			best = i;
	if (best == v->nhidden)
		return;
	i = best;
	dir = xstrdup(dst);
	for (slash = dir + strlen(v->hidden[i]) + 1;
	    (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		if (!made(v, dir)) {
			sandbox_push(v->sb, "--perms");
			sandbox_push(v->sb, "0555");
			sandbox_push(v->sb, "--dir");
			sandbox_push(v->sb, dir);
			v->made = xrealloc(v->made, (v->nmade + 1) *
			    sizeof(*v->made));
			v->made[v->nmade++] = xstrdup(dir);
		}
		*slash = '/';
	}
	free(dir);
}

static void
show(struct view *v, const char *how, const char *src, const char *dst)
{
	char real[PATH_MAX], rdst[PATH_MAX];

	if (realpath(src, real) == NULL)
		return;		/* nothing there to show */
	if (dst == NULL || realpath(dst, rdst) == NULL)
		strcpy(rdst, real);
	lead_to(v, rdst);
	sandbox_push(v->sb, how);
	sandbox_push(v->sb, real);
	sandbox_push(v->sb, rdst);
}

static void
add_hidden(struct view *v, const char *dir)
{
	char real[PATH_MAX];
	size_t i;

	if (realpath(dir, real) == NULL || strcmp(real, "/") == 0)
		return;
	for (i = 0; i < v->nhidden; i++)
		if (sandbox_path_under(real, v->hidden[i]))
			return;
	v->hidden = xrealloc(v->hidden, (v->nhidden + 1) * sizeof(*v->hidden));
	v->hidden[v->nhidden++] = xstrdup(real);
	hide(v->sb, real);
}

/* Hide dir again, inside something shown. */
static void
mask(struct view *v, const char *dir)
{
	char real[PATH_MAX];

	if (realpath(dir, real) == NULL)
		return;
	lead_to(v, real);
	v->hidden = xrealloc(v->hidden, (v->nhidden + 1) * sizeof(*v->hidden));
	v->hidden[v->nhidden++] = xstrdup(real);
	hide(v->sb, real);
}

struct werr *
sandbox_prepare(struct sandbox *sb, const struct sandbox_spec *spec)
{
	struct view v = { 0 };
	char **places = sandbox_hidden_places();
	char **links = sandbox_system_links();
	char *self = sandbox_self_exe(), *self_dir = sandbox_self_dir();
	char cwd[PATH_MAX];
	size_t i;

	memset(sb, 0, sizeof(*sb));
	if (spec->net == SANDBOX_NET_HTTPS && (self == NULL ||
	    sandbox_landlock_abi() < 4)) {
		sandbox_strv_free(places);
		sandbox_strv_free(links);
		free(self);
		free(self_dir);
		return werr_new(WEXIT_ENV, "the network rule \"https\" needs "
		    "Landlock 4 (Linux 6.7 or later); this kernel has %d",
		    sandbox_landlock_abi());
	}
	sb->kind = "bubblewrap";
	v.sb = sb;
	common(sb);
	if (spec->net == SANDBOX_NET_NONE)
		sandbox_push(sb, "--unshare-net");
	for (i = 0; places[i] != NULL; i++)
		add_hidden(&v, places[i]);
	for (i = 0; i < spec->nhide; i++)
		add_hidden(&v, spec->hide[i]);
	for (i = 0; links[i] != NULL; i++)
		show(&v, "--ro-bind", links[i], NULL);
	if (self_dir != NULL)
		show(&v, "--ro-bind", self_dir, NULL);
	for (i = 0; i < spec->nbinds; i++) {
		const struct sandbox_bind *b = &spec->binds[i];

		if (b->how == SANDBOX_HIDE)
			mask(&v, b->src);
		else
			show(&v, b->how == SANDBOX_WRITE ? "--bind" :
			    "--ro-bind", b->src, b->dst);
	}
	if (spec->cwd != NULL) {
		sandbox_push(sb, "--chdir");
		sandbox_push(sb, realpath(spec->cwd, cwd) ? cwd : spec->cwd);
	}
	sandbox_push(sb, "--");
	/* The network rule and the scopes, where Landlock can keep them. */
	if (self != NULL && (spec->net == SANDBOX_NET_HTTPS ||
	    sandbox_landlock_abi() >= 6)) {
		sandbox_push(sb, self);
		sandbox_push(sb, SANDBOX_NETLIMIT_ARG);
		sandbox_push(sb, sandbox_net_name(spec->net));
		sandbox_push(sb, "--");
	}
	for (i = 0; i < v.nhidden; i++)
		free(v.hidden[i]);
	free(v.hidden);
	for (i = 0; i < v.nmade; i++)
		free(v.made[i]);
	free(v.made);
	sandbox_strv_free(places);
	sandbox_strv_free(links);
	free(self);
	free(self_dir);
	return NULL;
}

#endif
