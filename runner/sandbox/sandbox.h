/*
 * sandbox.h - the OS sandbox around every program that comes from
 * content no maintainer has approved: the maintainer agent, the
 * engine servers, pre_start and stop steps of a smoke campaign of an
 * unreviewed change (agent, pr-check, triage's scratch runs), and the
 * programs of triage's scratch builds (update/scratchbox.c). bubblewrap
 * on Linux (sandbox-linux.c), sandbox-exec with a generated profile on
 * macOS (sandbox-darwin.c); the network rule on Linux through Landlock
 * (netlimit.c).
 *
 * The rule, the same on both: the system is readable; the places where
 * a maintainer keeps secrets are not there at all (every home directory,
 * the temporary and runtime directories where agent sockets live, the
 * repository with its .git: sandbox_hidden_places()); of those, only
 * what the spec names comes back, read-only or writable; nothing else is
 * writable. The program inherits no descriptor but 0-2 (spawn.h), runs in
 * a session and PID namespace of its own, with no capabilities.
 *
 * A sandbox is a prefix put before the program's argv. This module only
 * builds and probes that prefix: it never decides whether a program may
 * run without one (the callers' policy does) and never prints.
 */
#ifndef WARDEN_SANDBOX_H
#define WARDEN_SANDBOX_H

#include <stddef.h>

#include "error.h"

/* What the program may reach over the network. */
enum sandbox_net {
	SANDBOX_NET_HOST = 0,	/* "host": the machine's network (engines:
				   they serve on the host's loopback) */
	SANDBOX_NET_HTTPS,	/* "https": outbound TCP to port 443 only,
				   and name lookups over TCP (a coding
				   agent's model service); no UDP */
	SANDBOX_NET_NONE,	/* "none": no network but its own loopback */
};

/* "host", "https", "none"; -1 for another name. */
int sandbox_net_parse(const char *name);
const char *sandbox_net_name(enum sandbox_net net);

/* How a path is shown. */
enum sandbox_how {
	SANDBOX_READ = 0,	/* read-only */
	SANDBOX_WRITE,		/* writable */
	SANDBOX_HIDE,		/* hidden again (a .git inside a tree shown) */
};

/* One path: src (absolute) at dst (NULL: src). A src that does not
 * exist is left out. */
struct sandbox_bind {
	char *src;
	char *dst;
	enum sandbox_how how;
};

/* What a sandboxed program sees. Everything in it is owned by it: built
 * with sandbox_spec_bind/_hide, freed with sandbox_spec_free. */
struct sandbox_spec {
	/* Shown, in this order (later ones on top of earlier ones). */
	struct sandbox_bind *binds;
	size_t nbinds;
	/* Hidden beside the standard places (the repository root). */
	char **hide;
	size_t nhide;
	char *cwd;		/* where the program starts; shown */
	enum sandbox_net net;
	char *run_dir;		/* where a profile file may be written */
};

void sandbox_spec_bind(struct sandbox_spec *spec, const char *src,
    const char *dst, enum sandbox_how how);
void sandbox_spec_hide(struct sandbox_spec *spec, const char *dir);
void sandbox_spec_free(struct sandbox_spec *spec);

struct sandbox {
	const char *kind;	/* "bubblewrap", "sandbox-exec" */
	char **prefix;		/* NULL-terminated argv to put first */
	size_t nprefix;
};

/* What the probe found. */
struct sandbox_caps {
	const char *kind;	/* "bubblewrap", "sandbox-exec" */
	int net_https;		/* the "https" network rule can be kept */
	int scoped;		/* abstract sockets and signals outside the
				   sandbox are out of reach (Landlock 6) */
};

/*
 * Is there a sandbox here that works? NULL when there is (*caps set);
 * otherwise an error (WEXIT_ENV) saying why not. Runs the sandbox once
 * on true (bounded), so a sandbox present but unable to run on this
 * kernel counts as absent. $WARDEN_BWRAP names bubblewrap (default:
 * bwrap on PATH).
 */
struct werr *sandbox_probe(struct sandbox_caps *caps);

/* The prefix for spec (after a successful probe). Free with
 * sandbox_free. */
struct werr *sandbox_prepare(struct sandbox *sb,
    const struct sandbox_spec *spec);
void sandbox_free(struct sandbox *sb);

/*
 * The places hidden from every sandboxed program, NULL-terminated,
 * absolute, existing directories (free with sandbox_strv_free): every
 * home directory (/home, /root, /Users, $HOME, the user's home), the
 * temporary directories (/tmp, /var/tmp, $TMPDIR), the runtime ones
 * where agent and bus sockets live (/run, $XDG_RUNTIME_DIR, the folder
 * of $SSH_AUTH_SOCK), and removable or served mounts (/mnt, /media,
 * /srv).
 */
char **sandbox_hidden_places(void);

/*
 * The system files that live in a hidden place but that every program
 * needs (the resolver's configuration where /etc/resolv.conf links into
 * /run): shown read-only at their own paths. NULL-terminated (free
 * with sandbox_strv_free).
 */
char **sandbox_system_links(void);
void sandbox_strv_free(char **v);

/*
 * "PATH=" and the folders of warden's PATH that the sandbox of spec
 * shows: a folder outside every hidden place (sandbox_hidden_places()
 * and spec->hide), or inside one but shown back (warden's own folder, a
 * bind of spec not hidden again by a later one). Relative and missing
 * folders are left out. The environment of every sandboxed program
 * starts from it. Caller frees.
 */
char *sandbox_env_path(const struct sandbox_spec *spec);

/*
 * Would showing dir show back what the sandbox hides: is it (once
 * resolved) a hidden place or the user's home, or does it hold one?
 * (A home can lie inside another hidden place: a test's HOME in /tmp.)
 * 0 for a dir that does not exist. A folder warden shows back inside a
 * hidden place must pass this.
 */
int sandbox_shows_hidden(const char *dir);
/*
 * May dir, named by content no maintainer approved (a venv's pyvenv.cfg),
 * be shown as the Python installation a program runs on? Only a real
 * one: it holds an executable bin/python3 (or bin/python) and a
 * lib/python3.* folder, and sandbox_shows_hidden() says no.
 */
int sandbox_python_installation(const char *dir);

/* Is path dir itself or below it ("/" holds everything)? */
int sandbox_path_under(const char *path, const char *dir);

/* Shared by the platform files: append a copy of s to sb->prefix. */
void sandbox_push(struct sandbox *sb, const char *s);
/* Run argv (bounded to a few seconds); NULL when it exited 0. */
struct werr *sandbox_try(char *const *argv);
/* warden's own executable, resolved (caller frees), or NULL. */
char *sandbox_self_exe(void);
/* The folder holding it (a build tree holds warden-simengine beside it),
 * shown read-only in every sandbox even inside a hidden place (caller
 * frees), or NULL. */
char *sandbox_self_dir(void);

/*
 * The network rule inside the sandbox (Linux): the argument warden's
 * own executable takes as argv[1] to apply it and exec the rest, and
 * the function main() hands that argv to. Never returns on success.
 */
#define SANDBOX_NETLIMIT_ARG "--sandbox-netlimit"
int sandbox_netlimit_main(int argc, char **argv);

/*
 * The engines' ports of a sandboxed agent: "LO-HI" (at most
 * SANDBOX_PORTS_MAX ports) in the variable SANDBOX_PORTS_ENV of its
 * environment, chosen free by warden before it starts. Under "https" the
 * network rule lets TCP connect to them too, so a smoke campaign the
 * agent runs reaches its own engine; warden inside the sandbox serves
 * engines only on them (engine_free_port()). 0 and *lo, *hi set when s
 * is such a range, else -1.
 */
#define SANDBOX_PORTS_ENV "WARDEN_ENGINE_PORTS"
#define SANDBOX_PORTS_MAX 64
int sandbox_ports_parse(const char *s, int *lo, int *hi);
/* The Landlock ABI of this kernel, 0 when there is none. */
int sandbox_landlock_abi(void);

#endif
