/*
 * sandbox.c - what the platform sandboxes share: the places hidden from
 * every sandboxed program, building the prefix, running a probe with a
 * deadline, warden's own executable. See sandbox.h. Never prints.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "sandbox.h"
#include "spawn.h"
#include "util.h"

static const char *const net_names[] = { "host", "https", "none" };

int
sandbox_net_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(net_names) / sizeof(net_names[0]); i++)
		if (name != NULL && strcmp(name, net_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
sandbox_net_name(enum sandbox_net net)
{
	return (size_t)net < sizeof(net_names) / sizeof(net_names[0]) ?
	    net_names[net] : "?";
}

void
sandbox_push(struct sandbox *sb, const char *s)
{
	sb->prefix = xrealloc(sb->prefix, (sb->nprefix + 2) *
	    sizeof(*sb->prefix));
	sb->prefix[sb->nprefix++] = xstrdup(s);
	sb->prefix[sb->nprefix] = NULL;
}

void
sandbox_free(struct sandbox *sb)
{
	size_t i;

	for (i = 0; i < sb->nprefix; i++)
		free(sb->prefix[i]);
	free(sb->prefix);
	memset(sb, 0, sizeof(*sb));
}

void
sandbox_spec_bind(struct sandbox_spec *spec, const char *src,
    const char *dst, enum sandbox_how how)
{
	struct sandbox_bind *b;

	spec->binds = xrealloc(spec->binds, (spec->nbinds + 1) *
	    sizeof(*spec->binds));
	b = &spec->binds[spec->nbinds++];
	b->src = xstrdup(src);
	b->dst = dst != NULL ? xstrdup(dst) : NULL;
	b->how = how;
}

void
sandbox_spec_hide(struct sandbox_spec *spec, const char *dir)
{
	spec->hide = xrealloc(spec->hide, (spec->nhide + 1) *
	    sizeof(*spec->hide));
	spec->hide[spec->nhide++] = xstrdup(dir);
}

void
sandbox_spec_free(struct sandbox_spec *spec)
{
	size_t i;

	for (i = 0; i < spec->nbinds; i++) {
		free(spec->binds[i].src);
		free(spec->binds[i].dst);
	}
	free(spec->binds);
	for (i = 0; i < spec->nhide; i++)
		free(spec->hide[i]);
	free(spec->hide);
	free(spec->cwd);
	free(spec->run_dir);
	memset(spec, 0, sizeof(*spec));
}

void
sandbox_strv_free(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

struct werr *
sandbox_try(char *const *argv)
{
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	struct werr *err;
	struct buf why = BUF_INIT;
	uint64_t deadline = mono_ns() + 10000000000ULL;

	o.argv = argv;
	if ((err = spawn_start(&p, &o)) != NULL)
		return err;
	while (!spawn_poll(&p) && mono_ns() < deadline)
		usleep(5000);
	if (!p.exited) {
		werr_free(spawn_stop(&p, 100));
		return werr_new(WEXIT_ENV, "'%s' did not finish a trial run",
		    argv[0]);
	}
	werr_free(spawn_stop(&p, 100));
	if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0)
		return NULL;
	spawn_status_describe(&why, p.status);
	err = werr_new(WEXIT_ENV, "'%s' cannot run here (a trial run ended "
	    "with %s)", argv[0], buf_cstr(&why));
	buf_free(&why);
	return err;
}

char *
sandbox_self_exe(void)
{
	char real[PATH_MAX];
#ifdef __APPLE__
	char path[PATH_MAX];
	uint32_t size = sizeof(path);

	if (_NSGetExecutablePath(path, &size) != 0 ||
	    realpath(path, real) == NULL)
		return NULL;
#else
	if (realpath("/proc/self/exe", real) == NULL)
		return NULL;
#endif
	return xstrdup(real);
}

char *
sandbox_self_dir(void)
{
	char *self = sandbox_self_exe(), *slash;

	if (self == NULL || (slash = strrchr(self, '/')) == NULL ||
	    slash == self) {
		free(self);
		return NULL;
	}
	*slash = '\0';
	return self;
}

int
sandbox_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/');
}

/* Add the real path of dir to v (n of them) unless it is missing, not a
 * directory, the root, or below one already there; drop those below it. */
static void
add_place(char ***v, size_t *n, const char *dir)
{
	char real[PATH_MAX];
	size_t i, k;

	if (dir == NULL || dir[0] != '/' || realpath(dir, real) == NULL ||
	    !path_is_dir(real) || strcmp(real, "/") == 0)
		return;
	for (i = 0; i < *n; i++)
		if (sandbox_path_under(real, (*v)[i]))
			return;
	for (i = k = 0; i < *n; i++) {
		if (sandbox_path_under((*v)[i], real))
			free((*v)[i]);
		else
			(*v)[k++] = (*v)[i];
	}
	*n = k;
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(real);
	(*v)[*n] = NULL;
}

/* The folder of the socket a variable names, if any. */
static void
add_socket_dir(char ***v, size_t *n, const char *var)
{
	const char *s = getenv(var);
	char *dir;

	if (s == NULL || s[0] != '/')
		return;
	dir = xstrdup(s);
	*strrchr(dir, '/') = '\0';
	add_place(v, n, dir[0] != '\0' ? dir : "/");
	free(dir);
}

char **
sandbox_hidden_places(void)
{
	static const char *const fixed[] = {
		"/home", "/root", "/Users", "/tmp", "/var/tmp", "/run",
		"/var/run", "/mnt", "/media", "/srv", "/Volumes",
		"/private/tmp", "/private/var/tmp", "/private/var/folders",
		"/private/var/run",
	};
	struct passwd *pw = getpwuid(getuid());
	char **v = xcalloc(1, sizeof(*v));
	size_t n = 0, i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		add_place(&v, &n, fixed[i]);
	add_place(&v, &n, getenv("HOME"));
	if (pw != NULL)
		add_place(&v, &n, pw->pw_dir);
	add_place(&v, &n, getenv("TMPDIR"));
	add_place(&v, &n, getenv("XDG_RUNTIME_DIR"));
	add_socket_dir(&v, &n, "SSH_AUTH_SOCK");
	add_socket_dir(&v, &n, "GPG_AGENT_INFO");
	return v;
}

char **
sandbox_system_links(void)
{
	static const char *const files[] = { "/etc/resolv.conf" };
	char **places = sandbox_hidden_places();
	char **v = xcalloc(1, sizeof(*v));
	char real[PATH_MAX];
	size_t n = 0, i, j;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (realpath(files[i], real) == NULL)
			continue;
		for (j = 0; places[j] != NULL; j++)
			if (sandbox_path_under(real, places[j]))
				break;
		if (places[j] == NULL)
			continue;
		v = xrealloc(v, (n + 2) * sizeof(*v));
		v[n++] = xstrdup(real);
		v[n] = NULL;
	}
	sandbox_strv_free(places);
	return v;
}

/* Is real (a real path) under dir once dir is resolved? */
static int
under_real(const char *real, const char *dir)
{
	char rdir[PATH_MAX];

	return dir != NULL && realpath(dir, rdir) != NULL &&
	    sandbox_path_under(real, rdir);
}

/* Does the sandbox of spec show folder real (a real path)? */
static int
shown(const struct sandbox_spec *spec, char **places, const char *self_dir,
    const char *real)
{
	const struct sandbox_bind *b;
	int visible = 1;
	size_t i;

	for (i = 0; places[i] != NULL && visible; i++)
		if (sandbox_path_under(real, places[i]))
			visible = 0;
	for (i = 0; i < spec->nhide && visible; i++)
		if (under_real(real, spec->hide[i]))
			visible = 0;
	if (self_dir != NULL && sandbox_path_under(real, self_dir))
		visible = 1;
	for (i = 0; i < spec->nbinds; i++) {
		b = &spec->binds[i];
		if (under_real(real, b->how != SANDBOX_HIDE && b->dst != NULL ?
		    b->dst : b->src))
			visible = b->how != SANDBOX_HIDE;
	}
	return visible;
}

char *
sandbox_env_path(const struct sandbox_spec *spec)
{
	const char *path = getenv("PATH"), *s, *colon;
	char **places = sandbox_hidden_places();
	char *self_dir = sandbox_self_dir();
	struct buf b = BUF_INIT;
	char real[PATH_MAX];

	buf_puts(&b, "PATH=");
	for (s = path != NULL ? path : "/usr/bin:/bin";; s = colon + 1) {
		char *dir;

		colon = strchr(s, ':');
		dir = colon ? xstrndup(s, (size_t)(colon - s)) : xstrdup(s);
		if (dir[0] == '/' && realpath(dir, real) != NULL &&
		    shown(spec, places, self_dir, real)) {
			if (b.len > 5)
				buf_addch(&b, ':');
			buf_puts(&b, dir);
		}
		free(dir);
		if (colon == NULL)
			break;
	}
	sandbox_strv_free(places);
	free(self_dir);
	return buf_detach(&b);
}

int
sandbox_shows_hidden(const char *dir)
{
	char **places = sandbox_hidden_places(), real[PATH_MAX], home[PATH_MAX];
	const char *homes[2] = { getenv("HOME"), NULL };
	struct passwd *pw = getpwuid(getuid());
	int shows = 0;
	size_t i;

	if (realpath(dir, real) == NULL) {
		sandbox_strv_free(places);
		return 0;	/* nothing there: nothing shown */
	}
	homes[1] = pw != NULL ? pw->pw_dir : NULL;
	for (i = 0; places[i] != NULL && !shows; i++)
		shows = sandbox_path_under(places[i], real);
	for (i = 0; i < 2 && !shows; i++)
		shows = homes[i] != NULL && realpath(homes[i], home) != NULL &&
		    sandbox_path_under(home, real);
	sandbox_strv_free(places);
	return shows;
}

int
sandbox_python_installation(const char *dir)
{
	static const char *const names[] = { "bin/python3", "bin/python" };
	struct dirent *de;
	struct stat st;
	char *path;
	int python = 0, lib = 0;
	size_t i;
	DIR *d;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !python; i++) {
		path = path_join(dir, names[i]);
		python = stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path, X_OK) == 0;
		free(path);
	}
	path = path_join(dir, "lib");
	if (python && (d = opendir(path)) != NULL) {
		while (!lib && (de = readdir(d)) != NULL)
			lib = strncmp(de->d_name, "python3", 7) == 0;
		closedir(d);
	}
	free(path);
	return python && lib && !sandbox_shows_hidden(dir);
}
