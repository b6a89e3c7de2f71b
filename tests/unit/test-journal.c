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

#include "buf.h"
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


/* The lines `journal export` writes for the whole journal. */
static struct werr *
line_of(void *arg, const struct journal_entry *e)
{
	struct buf *b = arg;
	char *l = journal_entry_line(e);

	buf_puts(b, l);
	buf_addch(b, '\n');
	free(l);
	return NULL;
}

static void
evidence_of(struct fixture *f, struct journal_evidence *ev, struct buf *text)
{
	memset(ev, 0, sizeof(*ev));
	buf_reset(text);
	assert_null(journal_each(f->store, NULL, line_of, text));
	ev->have_branch = 1;
	ev->export_text = text->data;
	ev->export_len = text->len;
	ev->records = json_object();
	ev->record_seq = json_object();
}

static void
evidence_clear(struct journal_evidence *ev)
{
	json_decref(ev->records);
	json_decref(ev->record_seq);
}

static void
test_check_matches_anchors_and_export(void **state)
{
	struct fixture *f = *state;
	struct journal_evidence ev;
	struct journal_verdict v;
	struct journal_anchor a[2];
	struct buf text = BUF_INIT;
	sqlite3_stmt *st;
	int64_t seq;

	append(f->store, "a");
	append(f->store, "b");
	append(f->store, "c");
	evidence_of(f, &ev, &text);
	memset(a, 0, sizeof(a));
	a[0].seq = 1;
	assert_null(journal_head(f->store, &seq, a[1].hash));
	a[1].seq = seq;
	assert_int_equal(sqlite3_prepare_v2(store_db(f->store),
	    "SELECT hash FROM journal WHERE seq = 1", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(a[0].hash, sizeof(a[0].hash), "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	strcpy(a[0].commit, "c0");
	strcpy(a[1].commit, "c1");
	ev.anchors = a;
	ev.nanchors = 2;
	ev.export_through = 3;
	assert_null(journal_check(&v, f->store, &ev));
	assert_int_equal(v.broken_seq, 0);
	assert_int_equal(v.entries, 3);
	assert_int_equal(v.anchors, 2);
	assert_int_equal(v.exported, 3);
	journal_verdict_free(&v);

	/* A wrong anchor hash is a rewrite at that seq. */
	a[0].hash[0] = a[0].hash[0] == 'a' ? 'b' : 'a';
	assert_null(journal_check(&v, f->store, &ev));
	assert_int_equal(v.broken_seq, 1);
	assert_non_null(strstr(v.why, "was rewritten"));
	journal_verdict_free(&v);
	evidence_clear(&ev);
	buf_free(&text);
}

static void
test_check_reads_every_export_line(void **state)
{
	struct fixture *f = *state;
	struct journal_evidence ev;
	struct journal_verdict v;
	struct buf text = BUF_INIT;
	char *nl;

	append(f->store, "a");
	append(f->store, "b");
	evidence_of(f, &ev, &text);
	/* Line 2 malformed: a break, not skipped. */
	nl = strchr(text.data, '\n');
	nl[1] = '#';
	assert_null(journal_check(&v, f->store, &ev));
	assert_int_equal(v.broken_seq, 2);
	assert_non_null(strstr(v.why, "line 2 is not a journal entry line"));
	journal_verdict_free(&v);
	evidence_clear(&ev);

	/* The last line torn. */
	evidence_of(f, &ev, &text);
	ev.export_len = text.len - 3;
	assert_null(journal_check(&v, f->store, &ev));
	assert_int_equal(v.broken_seq, 2);
	assert_non_null(strstr(v.why, "line 2 is torn"));
	journal_verdict_free(&v);

	/* Lines beyond the database. */
	ev.export_len = text.len;
	append(f->store, "c");
	evidence_clear(&ev);
	evidence_of(f, &ev, &text);
	assert_null(store_exec(f->store, "DROP TRIGGER journal_no_delete;"
	    "DELETE FROM journal WHERE seq = 3;"
	    "UPDATE meta SET value = (SELECT seq || ' ' || hash FROM journal "
	    "WHERE seq = 2) WHERE key = 'journal_head'"));
	assert_null(journal_check(&v, f->store, &ev));
	assert_int_equal(v.broken_seq, 3);
	assert_non_null(strstr(v.why, "line 3 is an entry the database does "
	    "not have"));
	journal_verdict_free(&v);
	evidence_clear(&ev);
	buf_free(&text);
}

static void
test_check_wants_every_move_recorded(void **state)
{
	struct fixture *f = *state;
	struct journal_evidence ev;
	struct journal_verdict v;
	struct buf text = BUF_INIT;
	json_t *body = json_pack("{s:s}", "commit", "abc");

	append(f->store, "a");
	evidence_of(f, &ev, &text);
	ev.export_text = NULL;
	ev.export_len = 0;
	json_object_set_new(ev.records, "abc", json_string("review.approve 1"));
	json_object_set_new(ev.record_seq, "abc", json_integer(1));
	assert_null(journal_check(&v, f->store, &ev));
	assert_int_equal(v.broken_seq, 2);
	assert_non_null(strstr(v.why, "(review.approve 1) has no journal entry"));
	journal_verdict_free(&v);

	assert_null(store_begin(f->store));
	assert_null(journal_append(f->store, "review.approved", "review/1",
	    body, NULL));
	assert_null(store_commit(f->store));
	assert_null(journal_check(&v, f->store, &ev));
	assert_int_equal(v.broken_seq, 0);
	assert_int_equal(v.records, 1);
	journal_verdict_free(&v);
	evidence_clear(&ev);
	json_decref(body);
	buf_free(&text);
}

static void
test_append_refuses_what_it_cannot_build(void **state)
{
	struct fixture *f = *state;
	json_t *body = json_pack("{s:s}", "text", "ok");
	struct werr *err;
	int64_t seq;
	char hash[65];

	append(f->store, "a");
	assert_null(store_begin(f->store));
	/* What json_pack gives for text that is not UTF-8. */
	assert_null(json_pack("{s:s}", "text", "M\xff"));
	err = journal_append(f->store, "note", "s", NULL, NULL);
	assert_non_null(err);
	assert_int_equal(err->exit, WEXIT_INPUT);
	werr_free(err);
	err = journal_append(f->store, "note", "\xc3\x28", body, NULL);
	assert_non_null(err);
	assert_int_equal(err->exit, WEXIT_INPUT);
	assert_non_null(strstr(err->msg, "not valid UTF-8"));
	werr_free(err);
	assert_null(store_commit(f->store));
	assert_null(journal_head(f->store, &seq, hash));
	assert_int_equal(seq, 1);
	json_decref(body);
}

static void
test_text_made_utf8(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	buf_puts(&b, "ok \xc3\xa9 then \xff, \xc3 and \xe2\x82\xac");
	text_make_utf8(&b, 0);
	assert_string_equal(buf_cstr(&b), "ok \xc3\xa9 then \xef\xbf\xbd, "
	    "\xef\xbf\xbd and \xe2\x82\xac");
	assert_true(text_is_utf8(buf_cstr(&b)));
	buf_reset(&b);
	/* An overlong encoding and a surrogate are not UTF-8 either; the
	 * part before from is left alone. */
	buf_puts(&b, "\xff|\xc0\xaf|\xed\xa0\x80");
	text_make_utf8(&b, 1);
	assert_string_equal(buf_cstr(&b), "\xff|\xef\xbf\xbd\xef\xbf\xbd|"
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	buf_free(&b);
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
		cmocka_unit_test_setup_teardown(test_check_matches_anchors_and_export, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_reads_every_export_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_wants_every_move_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_refuses_what_it_cannot_build, setup, teardown),
		cmocka_unit_test(test_text_made_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
