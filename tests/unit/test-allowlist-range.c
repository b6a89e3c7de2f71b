/*
 * test-allowlist-range.c - the range gate: the combined change from the
 * merge base, every commit of the range, and every tree entry name,
 * including trees crafted byte by byte that git itself would not write.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>	/* mkdtemp on Darwin */

#include <cmocka.h>
#include <git2.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

static const char *const allow[] = { "adapters/engines/**",
    "adapters/profiles/**" };
static const struct allowlist_policy policy = { allow, 2, NULL, 0, 0, 0, 0 };

struct repo_fixture {
	char dir[64];
	git_repository *repo;
	git_oid base;		/* the base commit */
};

/* One change of a commit: mode 0 deletes path. */
struct edit {
	const char *path;
	uint32_t mode;
	const char *data;
};

static void make_commit2(git_repository *repo, git_oid *out,
    const git_oid *parent, const git_oid *parent2, const struct edit *edits,
    size_t n);

static void
make_commit(git_repository *repo, git_oid *out, const git_oid *parent,
    const struct edit *edits, size_t n)
{
	make_commit2(repo, out, parent, NULL, edits, n);
}

/* A commit on parent (and parent2, a merge) whose tree is parent's tree
 * with edits applied. */
static void
make_commit2(git_repository *repo, git_oid *out, const git_oid *parent,
    const git_oid *parent2, const struct edit *edits, size_t n)
{
	git_commit *pc = NULL, *pc2 = NULL;
	git_tree *pt = NULL, *tree = NULL;
	git_index *idx;
	git_signature *sig;
	git_index_entry e;
	git_oid tid;
	size_t i;

	assert_int_equal(git_index_new(&idx), 0);
	if (parent != NULL) {
		assert_int_equal(git_commit_lookup(&pc, repo, parent), 0);
		assert_int_equal(git_commit_tree(&pt, pc), 0);
		assert_int_equal(git_index_read_tree(idx, pt), 0);
	}
	for (i = 0; i < n; i++) {
		if (edits[i].mode == 0) {
			assert_int_equal(git_index_remove_bypath(idx,
			    edits[i].path), 0);
			continue;
		}
		memset(&e, 0, sizeof(e));
		e.path = edits[i].path;
		e.mode = edits[i].mode;
		assert_int_equal(git_blob_create_from_buffer(&e.id, repo,
		    edits[i].data, strlen(edits[i].data)), 0);
		assert_int_equal(git_index_add(idx, &e), 0);
	}
	assert_int_equal(git_index_write_tree_to(&tid, idx, repo), 0);
	assert_int_equal(git_tree_lookup(&tree, repo, &tid), 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@example.org",
	    1700000000, 0), 0);
	if (parent2 != NULL) {
		assert_int_equal(git_commit_lookup(&pc2, repo, parent2), 0);
		assert_int_equal(git_commit_create_v(out, repo, NULL, sig, sig,
		    NULL, "merge", tree, 2, pc, pc2), 0);
	} else
		assert_int_equal(git_commit_create_v(out, repo, NULL, sig, sig,
		    NULL, "c", tree, pc ? 1 : 0, pc), 0);
	git_commit_free(pc2);
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(pt);
	git_commit_free(pc);
	git_index_free(idx);
}

static int
setup(void **state)
{
	struct repo_fixture *f = xcalloc(1, sizeof(*f));
	const struct edit base[] = {
		{ "adapters/engines/llama.json", 0100644, "{}\n" },
		{ "policy/warden.json", 0100644, "{\"p\": 1}\n" },
		{ "runner/main.c", 0100644, "int main;\n" },
	};

	strcpy(f->dir, "/tmp/warden-allowlist-range.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(git_repository_init(&f->repo, f->dir, 1), 0);
	make_commit(f->repo, &f->base, NULL, base, 3);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct repo_fixture *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);

	git_repository_free(f->repo);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f);
	return 0;
}

/* Gate base..head; return the report (caller frees). */
static void
gate(struct repo_fixture *f, const git_oid *base, const git_oid *head,
    struct allowlist_report *r)
{
	struct werr *err;

	allowlist_report_init(r);
	err = allowlist_gate_range(r, f->repo, base, head, &policy);
	if (err != NULL)
		fail_msg("%s", err->msg);
}

static const struct allowlist_violation *
find(const struct allowlist_report *r, enum allowlist_code code)
{
	size_t i;

	for (i = 0; i < r->nv; i++)
		if (r->v[i].code == code)
			return &r->v[i];
	return NULL;
}

static void
test_clean_range(void **state)
{
	struct repo_fixture *f = *state;
	const struct edit e[] = {
		{ "adapters/engines/new.json", 0100644, "{\"n\": 1}\n" } };
	struct allowlist_report r;
	git_oid head;

	make_commit(f->repo, &head, &f->base, e, 1);
	gate(f, &f->base, &head, &r);
	assert_int_equal(r.nv, 0);
	assert_int_equal(r.nfiles, 1);
	assert_string_equal(r.files[0].new_path, "adapters/engines/new.json");
	allowlist_report_free(&r);
}

/* A symlink made in one commit and replaced by a directory in the next:
 * the combined change looks clean, the first commit does not. */
static void
test_symlink_then_write_through(void **state)
{
	struct repo_fixture *f = *state;
	const struct edit e1[] = {
		{ "adapters/engines/l", 0120000, "../../policy" } };
	const struct edit e2[] = {
		{ "adapters/engines/l", 0, NULL },
		{ "adapters/engines/l/warden.json", 0100644, "{}\n" } };
	const struct allowlist_violation *v;
	struct allowlist_report r;
	git_oid c1, c2;
	char hex[GIT_OID_HEXSZ + 1];

	make_commit(f->repo, &c1, &f->base, e1, 1);
	make_commit(f->repo, &c2, &c1, e2, 2);
	gate(f, &f->base, &c2, &r);
	v = find(&r, AL_SYMLINK);
	assert_non_null(v);
	assert_string_equal(v->path, "adapters/engines/l");
	assert_non_null(v->commit);
	git_oid_tostr(hex, sizeof(hex), &c1);
	assert_string_equal(v->commit, hex);
	allowlist_report_free(&r);
}

/* An outside change reverted later is still seen, in the commit that
 * made it, though the combined change is empty. */
static void
test_reverted_outside_change(void **state)
{
	struct repo_fixture *f = *state;
	const struct edit e1[] = {
		{ "runner/main.c", 0100644, "int main = 1;\n" } };
	const struct edit e2[] = {
		{ "runner/main.c", 0100644, "int main;\n" } };
	const struct allowlist_violation *v;
	struct allowlist_report r;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid c1, c2;

	make_commit(f->repo, &c1, &f->base, e1, 1);
	make_commit(f->repo, &c2, &c1, e2, 1);
	gate(f, &f->base, &c2, &r);
	assert_int_equal(r.nfiles, 0);
	assert_int_equal(r.nv, 1);
	v = find(&r, AL_OUTSIDE_ALLOWLIST);
	assert_non_null(v);
	assert_string_equal(v->path, "runner/main.c");
	git_oid_tostr(hex, sizeof(hex), &c1);
	assert_string_equal(v->commit, hex);
	allowlist_report_free(&r);
}

/* Base-side changes after the fork are not the head's. */
static void
test_merge_base_is_the_base(void **state)
{
	struct repo_fixture *f = *state;
	const struct edit eb[] = {
		{ "policy/warden.json", 0100644, "{\"p\": 2}\n" } };
	const struct edit eh[] = {
		{ "adapters/engines/x.json", 0100644, "{}\n" } };
	struct allowlist_report r;
	git_oid b2, head;

	make_commit(f->repo, &b2, &f->base, eb, 1);
	make_commit(f->repo, &head, &f->base, eh, 1);
	gate(f, &b2, &head, &r);
	assert_int_equal(r.nv, 0);
	allowlist_report_free(&r);
}

/* A pull request that merges the newer official branch into itself: the
 * official side's policy change is not the merge's doing. */
static void
test_merge_of_official_is_not_blamed(void **state)
{
	struct repo_fixture *f = *state;
	const struct edit eo[] = {
		{ "policy/warden.json", 0100644, "{\"p\": 2}\n" } };
	const struct edit ep[] = {
		{ "adapters/engines/n.json", 0100644, "{\"n\": 1}\n" } };
	struct allowlist_report r;
	git_oid o1, p1, m;

	make_commit(f->repo, &o1, &f->base, eo, 1);
	make_commit(f->repo, &p1, &f->base, ep, 1);
	make_commit2(f->repo, &m, &p1, &o1, eo, 1);
	gate(f, &o1, &m, &r);
	if (r.nv != 0)
		fail_msg("%s %s", allowlist_code_name(r.v[0].code),
		    r.v[0].path);
	assert_int_equal(r.nfiles, 1);
	allowlist_report_free(&r);
}

/* A merge that changes what neither parent had is judged itself. */
static void
test_evil_merge_is_blamed(void **state)
{
	struct repo_fixture *f = *state;
	const struct edit eo[] = {
		{ "policy/warden.json", 0100644, "{\"p\": 2}\n" } };
	const struct edit ep[] = {
		{ "adapters/engines/n.json", 0100644, "{\"n\": 1}\n" } };
	const struct edit em[] = {
		{ "policy/warden.json", 0100644, "{\"p\": 2}\n" },
		{ "runner/main.c", 0100644, "int evil;\n" } };
	const struct allowlist_violation *v;
	struct allowlist_report r;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid o1, p1, m;

	make_commit(f->repo, &o1, &f->base, eo, 1);
	make_commit(f->repo, &p1, &f->base, ep, 1);
	make_commit2(f->repo, &m, &p1, &o1, em, 2);
	gate(f, &o1, &m, &r);
	v = find(&r, AL_OUTSIDE_ALLOWLIST);
	assert_non_null(v);
	assert_string_equal(v->path, "runner/main.c");
	git_oid_tostr(hex, sizeof(hex), &m);
	assert_string_equal(v->commit, hex);
	assert_int_equal(r.nv, 1);
	allowlist_report_free(&r);
}

/* Raw tree bytes: entries "MODE NAME\0<20-byte id>". */
static void
raw_entry(struct buf *b, const char *mode, const char *name,
    const git_oid *id)
{
	buf_printf(b, "%s %s", mode, name);
	buf_addch(b, '\0');
	buf_add(b, id->id, GIT_OID_RAWSZ);
}

static void
crafted_head(struct repo_fixture *f, const char *evil_mode,
    const char *evil_name, git_oid *head)
{
	struct buf t = BUF_INIT;
	git_odb *odb;
	git_oid blob, engines, adapters, root;
	git_signature *sig;
	git_tree *tree;
	git_commit *parent;

	assert_int_equal(git_repository_odb(&odb, f->repo), 0);
	assert_int_equal(git_blob_create_from_buffer(&blob, f->repo, "{}\n",
	    3), 0);
	if (strcmp(evil_name, "llama.json") < 0)
		raw_entry(&t, evil_mode, evil_name, &blob);
	raw_entry(&t, "100644", "llama.json", &blob);
	if (strcmp(evil_name, "llama.json") >= 0)
		raw_entry(&t, evil_mode, evil_name, &blob);
	assert_int_equal(git_odb_write(&engines, odb, t.data, t.len,
	    GIT_OBJECT_TREE), 0);
	buf_reset(&t);
	raw_entry(&t, "40000", "engines", &engines);
	assert_int_equal(git_odb_write(&adapters, odb, t.data, t.len,
	    GIT_OBJECT_TREE), 0);
	buf_reset(&t);
	raw_entry(&t, "40000", "adapters", &adapters);
	assert_int_equal(git_odb_write(&root, odb, t.data, t.len,
	    GIT_OBJECT_TREE), 0);
	assert_int_equal(git_tree_lookup(&tree, f->repo, &root), 0);
	assert_int_equal(git_commit_lookup(&parent, f->repo, &f->base), 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@example.org",
	    1700000000, 0), 0);
	assert_int_equal(git_commit_create_v(head, f->repo, NULL, sig, sig,
	    NULL, "crafted", tree, 1, parent), 0);
	git_signature_free(sig);
	git_commit_free(parent);
	git_tree_free(tree);
	git_odb_free(odb);
	buf_free(&t);
}

static void
test_crafted_dotdot_entry(void **state)
{
	struct repo_fixture *f = *state;
	struct allowlist_report r;
	git_oid head;

	crafted_head(f, "100644", "..", &head);
	gate(f, &f->base, &head, &r);
	assert_non_null(find(&r, AL_BAD_PATH));
	allowlist_report_free(&r);
}

static void
test_crafted_dotgit_entry(void **state)
{
	struct repo_fixture *f = *state;
	struct allowlist_report r;
	git_oid head;

	crafted_head(f, "100644", ".GIT", &head);
	gate(f, &f->base, &head, &r);
	assert_non_null(find(&r, AL_DOTGIT));
	allowlist_report_free(&r);
}

/* A name holding '/' reads as a nested path in a diff, where every
 * segment looks fine: only the entry-name walk sees it. */
static void
test_crafted_slash_entry(void **state)
{
	struct repo_fixture *f = *state;
	const struct allowlist_violation *v;
	struct allowlist_report r;
	git_oid head;

	crafted_head(f, "100644", "sub/x.json", &head);
	gate(f, &f->base, &head, &r);
	v = find(&r, AL_BAD_PATH);
	assert_non_null(v);
	assert_string_equal(v->path, "adapters/engines/sub/x.json");
	assert_non_null(strstr(v->reason, "tree entry"));
	allowlist_report_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_range, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_symlink_then_write_through,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_reverted_outside_change,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_base_is_the_base,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_crafted_dotdot_entry,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_crafted_dotgit_entry,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_crafted_slash_entry,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_merge_of_official_is_not_blamed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evil_merge_is_blamed,
		    setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
