/*
 * test-allowlist-worktree.c - what an agent leaves in a worktree becomes
 * a patch that the gate judges like any other: edits, untracked files,
 * a symlink, an executable bit; the worktree itself is never applied.
 * It is read bounded: what is too large, special, linked or too many is
 * refused with the path and left unread; ignored files are left out.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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
	write_file(w, ".gitignore", "/scratch/\n*.log\n");
	assert_int_equal(git_repository_index(&idx, w->repo), 0);
	assert_int_equal(git_index_add_bypath(idx, "adapters/engines/a.json"), 0);
	assert_int_equal(git_index_add_bypath(idx, ".gitignore"), 0);
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

/* The bounded read alone: violations to r, the patch to out. */
static void
read_worktree(struct wt *w, struct allowlist_report *r, struct buf *out,
    const struct allowlist_policy *p)
{
	char *scratch = xasprintf("%s.ignore", w->dir);

	assert_int_equal(mkdir(scratch, 0700), 0);
	allowlist_report_init(r);
	assert_null(allowlist_worktree_patch(r, out, w->repo, &w->tree,
	    w->dir, scratch, p));
	assert_false(path_exists(scratch));
	free(scratch);
}

static void
make_sized(struct wt *w, const char *rel, off_t size)
{
	char *path = path_join(w->dir, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
	free(path);
}

static int
has(const struct allowlist_report *r, enum allowlist_code code,
    const char *path)
{
	size_t i;

	for (i = 0; i < r->nv; i++)
		if (r->v[i].code == code && strcmp(r->v[i].path, path) == 0)
			return 1;
	return 0;
}

static void
test_unchanged_is_no_patch(void **state)
{
	struct wt *w = *state;
	struct allowlist_report r;
	struct buf patch = BUF_INIT;

	read_worktree(w, &r, &patch, &policy);
	assert_int_equal(r.nv, 0);
	assert_int_equal(patch.len, 0);
	allowlist_report_free(&r);
	buf_free(&patch);
}

static void
test_refused_entries_are_named_and_unread(void **state)
{
	struct wt *w = *state;
	struct allowlist_policy p = policy;
	struct allowlist_report r;
	struct buf patch = BUF_INIT;
	char *fifo = path_join(w->dir, "adapters/engines/pipe");
	char *lnk = path_join(w->dir, "adapters/engines/b.json");
	char *orig = path_join(w->dir, "adapters/engines/a.json");

	p.max_bytes = 4096;
	assert_int_equal(mkfifo(fifo, 0644), 0);
	make_sized(w, "adapters/engines/big.bin", (off_t)6 << 30);
	assert_int_equal(link(orig, lnk), 0);
	write_file(w, "adapters/engines/c.json", "{\"port\": 3}\n");
	read_worktree(w, &r, &patch, &p);
	assert_true(has(&r, AL_SPECIAL_FILE, "adapters/engines/pipe"));
	assert_true(has(&r, AL_TOO_LARGE, "adapters/engines/big.bin"));
	assert_true(has(&r, AL_HARD_LINK, "adapters/engines/b.json"));
	/* The linked tracked file is kept as the base has it, not deleted. */
	assert_true(has(&r, AL_HARD_LINK, "adapters/engines/a.json"));
	assert_null(strstr(buf_cstr(&patch), "deleted file"));
	/* The rest of the change is still there. */
	assert_non_null(strstr(buf_cstr(&patch), "b/adapters/engines/c.json"));
	assert_null(strstr(buf_cstr(&patch), "big.bin"));
	allowlist_report_free(&r);
	buf_free(&patch);
	free(fifo);
	free(lnk);
	free(orig);
}

static void
test_directory_replaced_by_symlink(void **state)
{
	struct wt *w = *state;
	struct allowlist_report r;
	struct buf patch = BUF_INIT;
	char *dir = path_join(w->dir, "adapters/engines");

	assert_null(path_remove_tree(dir));
	assert_int_equal(symlink("../policy", dir), 0);
	read_worktree(w, &r, &patch, &policy);
	assert_true(has(&r, AL_SYMLINK, "adapters/engines"));
	assert_int_equal(patch.len, 0);
	allowlist_report_free(&r);
	buf_free(&patch);
	free(dir);
}

static void
test_too_many_entries_stop_the_walk(void **state)
{
	struct wt *w = *state;
	struct allowlist_policy p = policy;
	struct allowlist_report r;
	struct buf patch = BUF_INIT;
	char name[64];
	int i;

	p.max_files = 1;
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "adapters/engines/f%d.json", i);
		write_file(w, name, "{}\n");
	}
	read_worktree(w, &r, &patch, &p);
	assert_true(allowlist_report_has(&r, AL_TOO_MANY_FILES));
	assert_int_equal(patch.len, 0);
	allowlist_report_free(&r);
	buf_free(&patch);
}

static void
test_base_ignore_rules_leave_files_unread(void **state)
{
	struct wt *w = *state;
	struct allowlist_report r;
	struct buf patch = BUF_INIT;
	char *d = path_join(w->dir, "scratch"), *fifo;

	assert_null(mkdir_p(d));
	make_sized(w, "scratch/huge.bin", (off_t)6 << 30);
	fifo = path_join(d, "pipe");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	make_sized(w, "adapters/engines/run.log", (off_t)6 << 30);
	/* The worktree's own .gitignore is not a rule, only a change. */
	write_file(w, "adapters/.gitignore", "*\n");
	write_file(w, "adapters/engines/new.json", "{}\n");
	read_worktree(w, &r, &patch, &policy);
	assert_int_equal(r.nv, 0);
	assert_non_null(strstr(buf_cstr(&patch), "b/adapters/.gitignore"));
	assert_non_null(strstr(buf_cstr(&patch), "b/adapters/engines/new.json"));
	assert_null(strstr(buf_cstr(&patch), "huge.bin"));
	assert_null(strstr(buf_cstr(&patch), "run.log"));
	allowlist_report_free(&r);
	buf_free(&patch);
	free(d);
	free(fifo);
}

static void
test_deletion_and_mode(void **state)
{
	struct wt *w = *state;
	struct allowlist_report r;
	struct buf patch = BUF_INIT;
	char *a = path_join(w->dir, "adapters/engines/a.json");
	char *pol = path_join(w->dir, "policy/warden.json");

	assert_int_equal(unlink(a), 0);
	assert_int_equal(chmod(pol, 0755), 0);
	read_worktree(w, &r, &patch, &policy);
	assert_int_equal(r.nv, 0);
	assert_non_null(strstr(buf_cstr(&patch), "deleted file mode 100644"));
	assert_non_null(strstr(buf_cstr(&patch), "new mode 100755"));
	allowlist_report_free(&r);
	buf_free(&patch);
	free(a);
	free(pol);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_edits_pass, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_symlink_and_outside_edit_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unchanged_is_no_patch,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_refused_entries_are_named_and_unread, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_directory_replaced_by_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_too_many_entries_stop_the_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_base_ignore_rules_leave_files_unread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deletion_and_mode,
		    setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
