/*
 * test-scratchbox.c - unit tests of the sandbox around triage's scratch
 * builds (runner/update/scratchbox.c): what the sandbox shows and in
 * which order, the folders warden names for a build to read, the PATH a
 * sandboxed program gets (sandbox_env_path), which Python installation a
 * venv may name (sandbox_python_installation), and the environment and
 * command line a program is spawned with.
 */
#include "config.h"

#include <sys/stat.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "update-private.h"
#include "util.h"

/* A scratch folder under /tmp (always a hidden place), real path. */
static char *
scratch(void)
{
	char tmpl[] = "/tmp/test-scratchbox.XXXXXX", real[PATH_MAX];

	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, real));
	return xstrdup(real);
}

/* An executable file at dir/name (dirs made). */
static void
program(const char *dir, const char *name)
{
	char *path = path_join(dir, name);

	assert_null(mkdir_p(dir));
	assert_null(file_write_atomic(path, "#!/bin/sh\n", 10));
	assert_int_equal(chmod(path, 0755), 0);
	free(path);
}

/* An executable that is not a script at dir/name: what a real Python
 * interpreter looks like to program_find() (a script is a wrapper). */
static void
binary(const char *dir, const char *name)
{
	char *path = path_join(dir, name);

	assert_null(mkdir_p(dir));
	assert_null(file_write_atomic(path, "\177ELF", 4));
	assert_int_equal(chmod(path, 0755), 0);
	free(path);
}

static void
assert_bind(const struct sandbox_bind *b, const char *src,
    enum sandbox_how how)
{
	assert_string_equal(b->src, src);
	assert_null(b->dst);
	assert_int_equal(b->how, how);
}

static void
test_spec_shows_only_the_environment_writable(void **state)
{
	char *readable[] = { "/opt/py", "/r/.warden/wheels", "/srv/wheels",
	    "/r/.git/objects", "/r", NULL };
	char *kept[] = { "/r/.warden/triage/1/e/git", NULL };
	struct sandbox_spec spec;
	size_t i, writable = 0;

	(void)state;
	memset(&spec, 0, sizeof(spec));
	update_box_spec(&spec, "/r", "/r/.warden/triage/1/e",
	    "/r/.warden/logs/triage/1", readable, kept);
	assert_int_equal(spec.nhide, 1);
	assert_string_equal(spec.hide[0], "/r");
	assert_int_equal(spec.nbinds, 9);
	/* what warden names outside the repository first, so the hides
	 * after it still hold */
	assert_bind(&spec.binds[0], "/opt/py", SANDBOX_READ);
	assert_bind(&spec.binds[1], "/srv/wheels", SANDBOX_READ);
	assert_bind(&spec.binds[2], "/r", SANDBOX_READ);
	assert_bind(&spec.binds[3], "/r/.git", SANDBOX_HIDE);
	assert_bind(&spec.binds[4], "/r/.warden", SANDBOX_HIDE);
	/* inside it after them (a find_links folder), never under .git */
	assert_bind(&spec.binds[5], "/r/.warden/wheels", SANDBOX_READ);
	assert_bind(&spec.binds[6], "/r/.warden/logs/triage/1", SANDBOX_READ);
	assert_bind(&spec.binds[7], "/r/.warden/triage/1/e", SANDBOX_WRITE);
	/* what warden writes there itself: read-only on top */
	assert_bind(&spec.binds[8], "/r/.warden/triage/1/e/git", SANDBOX_READ);
	for (i = 0; i < spec.nbinds; i++)
		writable += spec.binds[i].how == SANDBOX_WRITE;
	assert_int_equal(writable, 1);
	assert_int_equal(spec.net, SANDBOX_NET_HOST);
	assert_null(spec.cwd);
	sandbox_spec_free(&spec);
}

static void
test_readable_names_shims_python_index(void **state)
{
	char *t = scratch(), *bin = path_join(t, "inst/bin");
	char *home = path_join(t, "home"), *home_bin = path_join(home, "bin");
	char *shims = path_join(t, "shims"), *inst = path_join(t, "inst");
	char *fl[] = { "wheels", "/abs/dir", "https://example.org/simple",
	    "file:///srv/idx", "/abs/dir" };
	char *py[] = { "python-w" }, *lib;
	struct update_ctx ctx;
	struct policy pol;
	char **v;

	(void)state;
	binary(bin, "python-w");
	binary(bin, "python3");
	lib = path_join(inst, "lib/python3.11");
	assert_null(mkdir_p(lib));
	free(lib);
	/* a home that looks like a Python installation */
	binary(home_bin, "python3");
	lib = path_join(home, "lib/python3.11");
	assert_null(mkdir_p(lib));
	free(lib);
	setenv("PATH", bin, 1);
	setenv("WARDEN_SHIM_DIR", shims, 1);
	memset(&pol, 0, sizeof(pol));
	pol.update.python.v = py;
	pol.update.python.n = 1;
	pol.update.find_links.v = fl;
	pol.update.find_links.n = 5;
	pol.update.index_url = "file:///srv/index";
	memset(&ctx, 0, sizeof(ctx));
	ctx.repo_root = "/r";
	ctx.policy = &pol;
	v = update_box_readable(&ctx);
	/* each once: the shims' folder, the Python's installation (the
	 * folder above bin, holding lib/python3.*), the index's local
	 * paths; never a url's host */
	assert_non_null(v[5]);
	assert_null(v[6]);
	assert_string_equal(v[0], shims);
	assert_string_equal(v[1], inst);
	assert_string_equal(v[2], "/srv/index");
	assert_string_equal(v[3], "/r/wheels");
	assert_string_equal(v[4], "/abs/dir");
	assert_string_equal(v[5], "/srv/idx");
	sandbox_strv_free(v);
	/* a Python in a home's own bin: that bin, never the home */
	setenv("HOME", home, 1);
	setenv("PATH", home_bin, 1);
	py[0] = "python3";
	pol.update.find_links.n = 0;
	pol.update.index_url = NULL;
	v = update_box_readable(&ctx);
	assert_string_equal(v[0], shims);
	assert_string_equal(v[1], home_bin);
	assert_null(v[2]);
	sandbox_strv_free(v);
	/* a wrapper script first on PATH (pyenv's shims): passed over for
	 * the real interpreter after it */
	program(shims, "python3");
	{
		char *both = xasprintf("%s:%s", shims, bin);

		setenv("PATH", both, 1);
		free(both);
	}
	v = update_box_readable(&ctx);
	assert_string_equal(v[0], shims);
	assert_string_equal(v[1], inst);
	assert_null(v[2]);
	sandbox_strv_free(v);
	/* a Python in a folder that holds a home: not shown at all */
	binary(t, "python-t");
	setenv("PATH", t, 1);
	py[0] = "python-t";
	v = update_box_readable(&ctx);
	assert_string_equal(v[0], shims);
	assert_null(v[1]);
	sandbox_strv_free(v);
	assert_null(path_remove_tree(t));
	free(t);
	free(bin);
	free(home);
	free(home_bin);
	free(shims);
	free(inst);
}

static void
test_path_keeps_only_folders_shown(void **state)
{
	char *t = scratch(), *shown = path_join(t, "shown");
	char *hidden_bin = path_join(t, "hidden/bin");
	char *shown_bin = path_join(t, "shown/bin");
	char *masked = path_join(t, "shown/masked");
	char *masked_bin = path_join(t, "shown/masked/bin");
	char *path, *want;
	struct sandbox_spec spec;

	(void)state;
	assert_null(mkdir_p(hidden_bin));
	assert_null(mkdir_p(shown_bin));
	assert_null(mkdir_p(masked_bin));
	path = xasprintf("/usr/bin:%s:%s:%s:relative/bin:/nonexistent/bin",
	    hidden_bin, shown_bin, masked_bin);
	setenv("PATH", path, 1);
	free(path);
	memset(&spec, 0, sizeof(spec));
	sandbox_spec_bind(&spec, shown, NULL, SANDBOX_READ);
	sandbox_spec_bind(&spec, masked, NULL, SANDBOX_HIDE);
	path = sandbox_env_path(&spec);
	want = xasprintf("PATH=/usr/bin:%s", shown_bin);
	assert_string_equal(path, want);
	free(path);
	free(want);
	/* a folder the spec hides beside the standard places */
	sandbox_spec_free(&spec);
	memset(&spec, 0, sizeof(spec));
	sandbox_spec_hide(&spec, "/usr");
	path = sandbox_env_path(&spec);
	assert_string_equal(path, "PATH=");
	free(path);
	sandbox_spec_free(&spec);
	assert_null(path_remove_tree(t));
	free(t);
	free(shown);
	free(hidden_bin);
	free(shown_bin);
	free(masked);
	free(masked_bin);
}

static void
test_python_installation_is_only_a_python(void **state)
{
	char *t = scratch(), *py = path_join(t, "py"), *bin, *lib;
	char *home = path_join(t, "home"), *ssh = path_join(home, ".ssh");

	(void)state;
	bin = path_join(py, "bin");
	program(bin, "python3");
	/* no lib/python3.*: not an installation */
	assert_false(sandbox_python_installation(py));
	lib = path_join(py, "lib/python3.12");
	assert_null(mkdir_p(lib));
	assert_true(sandbox_python_installation(py));
	/* what a venv's pyvenv.cfg may name instead: a secret's folder, a
	 * home that looks like a Python, the folder holding them */
	assert_null(mkdir_p(ssh));
	assert_false(sandbox_python_installation(ssh));
	free(bin);
	free(lib);
	bin = path_join(home, "bin");
	lib = path_join(home, "lib/python3.12");
	program(bin, "python3");
	assert_null(mkdir_p(lib));
	setenv("HOME", home, 1);
	assert_false(sandbox_python_installation(home));
	assert_false(sandbox_python_installation("/nonexistent"));
	assert_null(path_remove_tree(t));
	free(t);
	free(py);
	free(bin);
	free(lib);
	free(home);
	free(ssh);
}

static void
test_spawn_puts_the_program_in_the_box(void **state)
{
	char *prefix[] = { "bwrap", "--ro-bind", "/", "/", "--", NULL };
	char *env[] = { "PATH=/usr/bin", "HOME=/e/home", "TMPDIR=/e/tmp" };
	char *argv[] = { "sh", "build.sh", NULL };
	char *add[] = { "MAKEFLAGS=-j2", "HOME=/elsewhere", NULL };
	struct update_box box;
	struct spawn_opts so;
	char **argv_full, **env_full;

	(void)state;
	memset(&box, 0, sizeof(box));
	box.kind = "bubblewrap";
	box.sb.prefix = prefix;
	box.sb.nprefix = 5;
	box.env = env;
	box.nenv = 3;
	box.cwd = "/e";
	memset(&so, 0, sizeof(so));
	update_box_spawn(&so, &argv_full, &env_full, &box, argv, add, NULL);
	assert_ptr_equal(so.argv, argv_full);
	assert_string_equal(so.argv[0], "bwrap");
	assert_string_equal(so.argv[4], "--");
	assert_string_equal(so.argv[5], "sh");
	assert_string_equal(so.argv[6], "build.sh");
	assert_null(so.argv[7]);
	/* the box's environment, what update sets for the program over it;
	 * nothing of warden's own */
	assert_null(so.env_add);
	assert_ptr_equal(so.env, env_full);
	assert_string_equal(so.env[0], "PATH=/usr/bin");
	assert_string_equal(so.env[1], "HOME=/elsewhere");
	assert_string_equal(so.env[2], "TMPDIR=/e/tmp");
	assert_string_equal(so.env[3], "MAKEFLAGS=-j2");
	assert_null(so.env[4]);
	assert_string_equal(so.cwd, "/e");
	free(argv_full);
	free(env_full);
	update_box_spawn(&so, &argv_full, &env_full, &box, argv, NULL,
	    "/e/builds/work-a");
	assert_string_equal(so.cwd, "/e/builds/work-a");
	assert_null(so.env[3]);
	free(argv_full);
	free(env_full);
	/* no sandbox: the program as given */
	box.kind = NULL;
	update_box_spawn(&so, &argv_full, &env_full, &box, argv, add, NULL);
	assert_ptr_equal(so.argv, argv);
	assert_ptr_equal(so.env_add, add);
	assert_null(so.env);
	assert_null(so.cwd);
	assert_null(argv_full);
	assert_null(env_full);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_shows_only_the_environment_writable),
		cmocka_unit_test(test_readable_names_shims_python_index),
		cmocka_unit_test(test_path_keeps_only_folders_shown),
		cmocka_unit_test(test_python_installation_is_only_a_python),
		cmocka_unit_test(test_spawn_puts_the_program_in_the_box),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
