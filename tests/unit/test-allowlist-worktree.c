/*
 * test-allowlist-worktree.c - what an agent leaves in a worktree becomes
 * a patch that the gate judges like any other: edits, untracked files,
 * a symlink, an executable bit; the worktree itself is never applied.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

static const char *const allow[] = { "adapters/engines/**" };
static const char *const exec_globs[] = { "adapters/engines/*/serve.sh" };
static const struct allowlist_policy policy = { allow, 1, exec_globs, 1, 0,
    0, 0 };

struct wt {
	char dir[64];
	git_repository *repo;
	git_oid tree;
};

static void
write_file(struct wt *w, const char *rel, const char *data)
{
	char *path = path_join(w->dir, rel);

	assert_null(file_write_atomic(path, data, strlen(data)));
	free(path);
}

static int
setup(void **state)
{
	struct wt *w = xcalloc(1, sizeof(*w));
	git_index *idx;
	char *d;

	strcpy(w->dir, "/tmp/warden-allowlist-wt.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	assert_int_equal(git_repository_init(&w->repo, w->dir, 0), 0);
	d = path_join(w->dir, "adapters/engines");
	assert_null(mkdir_p(d));
	free(d);
	d = path_join(w->dir, "policy");
	assert_null(mkdir_p(d));
	free(d);
	write_file(w, "adapters/engines/a.json", "{\"port\": 1}\n");
	write_file(w, "policy/warden.json", "{}\n");
	assert_int_equal(git_repository_index(&idx, w->repo), 0);
	assert_int_equal(git_index_add_bypath(idx, "adapters/engines/a.json"), 0);
	assert_int_equal(git_index_add_bypath(idx, "policy/warden.json"), 0);
	assert_int_equal(git_index_write_tree(&w->tree, idx), 0);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
	*state = w;
	return 0;
}

static int
teardown(void **state)
{
	struct wt *w = *state;
	char *cmd = xasprintf("rm -rf '%s'", w->dir);

	git_repository_free(w->repo);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(w);
	return 0;
}

static void
gate_worktree(struct wt *w, struct allowlist_report *r)
{
	struct buf patch = BUF_INIT;

	allowlist_report_init(r);
	assert_null(allowlist_worktree_patch(r, &patch, w->repo, &w->tree,
	    w->dir, NULL, &policy));
	assert_null(allowlist_gate_patch(r, w->repo, &w->tree, patch.data,
	    patch.len, &policy, 0));
	buf_free(&patch);
}

static void
test_clean_edits_pass(void **state)
{
	struct wt *w = *state;
	struct allowlist_report r;
	char *d = path_join(w->dir, "adapters/engines/omlx");

	write_file(w, "adapters/engines/a.json", "{\"port\": 2}\n");
	assert_null(mkdir_p(d));
	write_file(w, "adapters/engines/omlx/serve.sh", "#!/bin/sh\n");
	free(d);
	d = path_join(w->dir, "adapters/engines/omlx/serve.sh");
	assert_int_equal(chmod(d, 0755), 0);
	free(d);
	gate_worktree(w, &r);
	assert_int_equal(r.nv, 0);
	assert_true(r.applied);
	assert_int_equal(r.nfiles, 2);
	allowlist_report_free(&r);
}

static void
test_symlink_and_outside_edit_refused(void **state)
{
	struct wt *w = *state;
	struct allowlist_report r;
	char *link = path_join(w->dir, "adapters/engines/l");

	assert_int_equal(symlink("../../policy", link), 0);
	free(link);
	write_file(w, "policy/warden.json", "{\"allowlist\": [\"**\"]}\n");
	gate_worktree(w, &r);
	assert_true(allowlist_report_has(&r, AL_SYMLINK));
	assert_true(allowlist_report_has(&r, AL_OUTSIDE_ALLOWLIST));
	allowlist_report_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_edits_pass, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_symlink_and_outside_edit_refused, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
