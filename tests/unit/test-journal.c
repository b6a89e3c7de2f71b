/* Unit tests of the journal's hash chain on a real sqlite store. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "journal.h"
#include "sha256.h"
#include "store.h"
#include "util.h"

struct fixture {
	char dir[64];
	struct store *store;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/warden-journal-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	if (store_open(&f->store, f->dir, "c1", "unit test") != NULL)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char *cmd;

	store_close(f->store);
	cmd = xasprintf("rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", f->dir);
	free(cmd);
	free(f);
	return 0;
}

static void
append(struct store *s, const char *kind)
{
	json_t *body = json_pack("{s:s, s:i}", "what", kind, "n", 7);

	assert_null(store_begin(s));
	assert_null(journal_append(s, kind, "subj", body, NULL));
	assert_null(store_commit(s));
	json_decref(body);
}

static void
test_sha256_known_vector(void **state)
{
	char hex[65];

	(void)state;
	sha256_hex("abc", 3, hex);
	assert_string_equal(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void
test_chain_links_entries(void **state)
{
	struct fixture *f = *state;
	int64_t broken = -1, count = 0;
	char *why = NULL;

	append(f->store, "a");
	append(f->store, "b");
	append(f->store, "c");
	assert_null(journal_verify(f->store, &broken, &why, &count));
	assert_int_equal(broken, 0);
	assert_int_equal(count, 3);
	assert_null(why);
}

static void
test_hash_covers_canonical_entry(void **state)
{
	struct journal_entry e;
	char h1[65], h2[65];
	char *c;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.seq = 1;
	e.time = "2026-01-01T00:00:00.000Z";
	e.cycle = "c";
	e.kind = "k";
	e.subject = "s";
	e.body = json_pack("{s:i, s:s}", "b", 2, "a", "x");
	c = journal_canonical(&e);
	assert_string_equal(c, "{\"body\":{\"a\":\"x\",\"b\":2},\"cycle\":\"c\","
	    "\"kind\":\"k\",\"seq\":1,\"subject\":\"s\",\"time\":\"2026-01-01T00:00:00.000Z\"}");
	journal_hash("0", c, h1);
	journal_hash("1", c, h2);
	assert_string_not_equal(h1, h2);
	free(c);
	json_decref(e.body);
}

static void
test_edit_is_detected_at_its_seq(void **state)
{
	struct fixture *f = *state;
	int64_t broken = 0, count = 0;
	char *why = NULL;

	append(f->store, "a");
	append(f->store, "b");
	append(f->store, "c");
	assert_null(store_exec(f->store, "DROP TRIGGER journal_no_update;"
	    "UPDATE journal SET body = '{\"n\":8,\"what\":\"b\"}' WHERE seq = 2"));
	assert_null(journal_verify(f->store, &broken, &why, &count));
	assert_int_equal(broken, 2);
	assert_non_null(strstr(why, "altered"));
	free(why);
}

static void
test_delete_is_detected(void **state)
{
	struct fixture *f = *state;
	int64_t broken = 0, count = 0;
	char *why = NULL;

	append(f->store, "a");
	append(f->store, "b");
	append(f->store, "c");
	assert_null(store_exec(f->store, "DROP TRIGGER journal_no_delete;"
	    "DELETE FROM journal WHERE seq = 3"));
	assert_null(journal_verify(f->store, &broken, &why, &count));
	assert_int_equal(broken, 3);
	assert_non_null(strstr(why, "deleted from the end"));
	free(why);
}

static void
test_append_only_triggers_refuse_edits(void **state)
{
	struct fixture *f = *state;
	struct werr *err;

	append(f->store, "a");
	err = store_exec(f->store, "UPDATE journal SET kind = 'x'");
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "append-only"));
	werr_free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_known_vector),
		cmocka_unit_test_setup_teardown(test_chain_links_entries, setup, teardown),
		cmocka_unit_test(test_hash_covers_canonical_entry),
		cmocka_unit_test_setup_teardown(test_edit_is_detected_at_its_seq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_is_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_only_triggers_refuse_edits, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
