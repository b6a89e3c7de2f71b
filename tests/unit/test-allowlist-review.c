/*
 * test-allowlist-review.c - the review queue module over a real store and
 * repository: what submit records, evidence attached by other commands,
 * and that approval takes its policy from the official tip, not from the
 * queued change.
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
#include <jansson.h>

#include "initrepo.h"
#include "review.h"
#include "store.h"
#include "util.h"

static const char new_adapter[] =
    "diff --git a/adapters/engines/x.json b/adapters/engines/x.json\n"
    "new file mode 100644\n"
    "index 0000000..9e26dfe\n"
    "--- /dev/null\n"
    "+++ b/adapters/engines/x.json\n"
    "@@ -0,0 +1 @@\n"
    "+{}\n";

struct fx {
	char dir[64];
	char *root;
	git_repository *repo;
	struct store *store;
	struct review_base base;
};

static int
setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	char commit[GIT_OID_HEXSZ + 1], *branch = NULL;

	strcpy(f->dir, "/tmp/warden-allowlist-review.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->root = path_join(f->dir, "bench");
	assert_null(initrepo_create(f->root, commit, &branch, NULL));
	assert_string_equal(branch, "official");
	free(branch);
	assert_int_equal(git_repository_open(&f->repo, f->root), 0);
	assert_null(store_open(&f->store, f->root, "test-cycle", "unit test"));
	assert_null(review_base_open(&f->base, f->repo, "refs/heads/official"));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);

	review_base_free(&f->base);
	store_close(f->store);
	git_repository_free(f->repo);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f->root);
	free(f);
	return 0;
}

static void
expect_error(struct werr *err)
{
	assert_non_null(err);
	werr_free(err);
}

static int64_t
submit(struct fx *f, const char *patch)
{
	struct review_submission s = { "agent", "A <a@example.org>", "note",
	    patch, strlen(patch), NULL };
	struct allowlist_report r;
	int64_t id;

	allowlist_report_init(&r);
	assert_null(review_submit(&id, &r, f->store, f->repo, &f->base, &s));
	allowlist_report_free(&r);
	return id;
}

static void
test_submit_records_row_and_ref(void **state)
{
	struct fx *f = *state;
	json_t *o;
	git_reference *ref;
	int64_t id = submit(f, new_adapter);

	assert_int_equal(id, 1);
	assert_int_equal(git_reference_lookup(&ref, f->repo,
	    "refs/warden/review/1"), 0);
	git_reference_free(ref);
	assert_null(review_show(&o, f->store, 1));
	assert_string_equal(json_string_value(json_object_get(o, "status")),
	    "pending");
	assert_string_equal(json_string_value(json_object_get(o, "patch")),
	    new_adapter);
	assert_true(json_is_true(json_object_get(json_object_get(o, "gate"),
	    "ok")));
	json_decref(o);
}

static void
test_evidence_is_attached_and_shown(void **state)
{
	struct fx *f = *state;
	json_t *o, *ev, *body = json_pack("{s:s, s:i}", "engine", "sim",
	    "completed", 100);

	assert_int_equal(submit(f, new_adapter), 1);
	assert_null(review_add_evidence(f->store, 1, "smoke", body));
	expect_error(review_add_evidence(f->store, 7, "smoke", body));
	json_decref(body);
	assert_null(review_show(&o, f->store, 1));
	ev = json_object_get(o, "evidence");
	assert_int_equal(json_array_size(ev), 1);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(ev, 0), "kind")), "smoke");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    json_array_get(ev, 0), "body"), "completed")), 100);
	json_decref(o);
}

/* A queued patch that widens the allowlist in policy is refused at submit;
 * the policy used is the official tip's. */
static void
test_policy_change_refused(void **state)
{
	struct fx *f = *state;
	static const char widen[] =
	    "diff --git a/policy/warden.json b/policy/warden.json\n"
	    "index 1111111..2222222 100644\n"
	    "--- a/policy/warden.json\n"
	    "+++ b/policy/warden.json\n"
	    "@@ -1,1 +1,1 @@\n"
	    "-{\n"
	    "+{ \n";
	struct review_submission s = { "community", NULL, NULL, widen,
	    sizeof(widen) - 1, NULL };
	struct allowlist_report r;
	json_t *rows;
	int64_t id;

	allowlist_report_init(&r);
	assert_null(review_submit(&id, &r, f->store, f->repo, &f->base, &s));
	assert_int_equal(id, 0);
	assert_true(allowlist_report_has(&r, AL_OUTSIDE_ALLOWLIST));
	allowlist_report_free(&r);
	assert_null(review_list(&rows, f->store, NULL));
	assert_int_equal(json_array_size(rows), 0);
	json_decref(rows);
}

static void
test_approve_and_reject(void **state)
{
	struct fx *f = *state;
	char commit[GIT_OID_HEXSZ + 1];
	struct allowlist_report r;
	git_commit *c;
	git_oid id;
	json_t *rows;

	assert_int_equal(submit(f, new_adapter), 1);
	assert_int_equal(submit(f, new_adapter), 2);
	allowlist_report_init(&r);
	assert_null(review_approve(commit, &r, f->store, f->repo, "official", 1,
	    "M <m@example.org>", "ok", 0));
	allowlist_report_free(&r);
	assert_int_equal(git_oid_fromstr(&id, commit), 0);
	assert_int_equal(git_commit_lookup(&c, f->repo, &id), 0);
	assert_non_null(strstr(git_commit_message(c),
	    "\nReviewed-by: M <m@example.org>\n"));
	git_commit_free(c);
	/* the same file again no longer applies: stays pending */
	allowlist_report_init(&r);
	expect_error(review_approve(commit, &r, f->store, f->repo,
	    "official", 2, "M <m@example.org>", NULL, 0));
	assert_true(r.nv > 0);
	allowlist_report_free(&r);
	assert_null(review_reject(f->store, 2, "duplicate", NULL));
	expect_error(review_reject(f->store, 2, "again", NULL));
	assert_null(review_list(&rows, f->store, "rejected"));
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
	assert_null(review_list(&rows, f->store, "approved"));
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_submit_records_row_and_ref,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_evidence_is_attached_and_shown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_policy_change_refused,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_approve_and_reject, setup,
		    teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
