/*
 * test-simengine-text.c - what the simulated engine answers is a pure
 * function of seed and prompt: the prompt-token rule, reply lengths and
 * finish reasons, tool-call arguments, and fidelity answers whose accuracy
 * is known in advance.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "textgen.h"
#include "util.h"

static void
opts(struct textgen_opts *o, uint64_t seed, int natural, int max)
{
	memset(o, 0, sizeof(*o));
	o->seed = seed;
	o->natural_tokens = natural;
	o->max_tokens = max;
}

static char *
reply_text(uint64_t seed, const char *prompt, int natural)
{
	struct textgen_opts o;
	struct textgen_reply r;
	char *s;

	opts(&o, seed, natural, -1);
	textgen_plan(&r, prompt, &o);
	s = textgen_join(&r, TEXTGEN_CONTENT);
	textgen_reply_free(&r);
	return s;
}

static void
test_prompt_tokens_are_whitespace_words(void **state)
{
	assert_int_equal(textgen_count_words(""), 0);
	assert_int_equal(textgen_count_words("   \n\t "), 0);
	assert_int_equal(textgen_count_words("one"), 1);
	assert_int_equal(textgen_count_words("  a b\tc\n\nd  "), 4);
	assert_int_equal(textgen_count_words("café déjà-vu 東京"), 3);
}

static void
test_replies_are_deterministic_by_seed_and_prompt(void **state)
{
	char *a = reply_text(7, "hello world", 40);
	char *b = reply_text(7, "hello world", 40);
	char *c = reply_text(8, "hello world", 40);
	char *d = reply_text(7, "hello world!", 40);

	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_string_not_equal(a, d);
	assert_int_equal(textgen_count_words(a), 40);
	free(a);
	free(b);
	free(c);
	free(d);
}

static void
test_max_tokens_caps_the_reply_and_says_length(void **state)
{
	struct textgen_opts o;
	struct textgen_reply r;
	enum textgen_kind k;
	int i;

	opts(&o, 1, 10, 3);
	o.reasoning_tokens = 2;
	textgen_plan(&r, "p", &o);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.finish, TEXTGEN_LENGTH);
	textgen_token(&r, 0, &k);
	assert_int_equal(k, TEXTGEN_REASONING);
	textgen_token(&r, 1, &k);
	assert_int_equal(k, TEXTGEN_REASONING);
	textgen_token(&r, 2, &k);
	assert_int_equal(k, TEXTGEN_CONTENT);
	textgen_reply_free(&r);

	opts(&o, 1, 3, 10);
	textgen_plan(&r, "p", &o);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.finish, TEXTGEN_STOP);
	for (i = 0; i < r.n; i++)
		assert_true(strlen(textgen_token(&r, i, &k)) > 0);
	textgen_reply_free(&r);
}

static void
test_tool_call_arguments_are_json(void **state)
{
	struct textgen_opts o;
	struct textgen_reply r;
	json_error_t jerr;
	json_t *args;
	char *s;

	opts(&o, 3, 12, -1);
	o.tool_name = "search";
	textgen_plan(&r, "TOOL_CALL find it", &o);
	assert_int_equal(r.finish, TEXTGEN_TOOL_CALLS);
	assert_int_equal(r.n, 12);
	s = textgen_join(&r, TEXTGEN_TOOL_ARGS);
	args = json_loads(s, 0, &jerr);
	assert_non_null(args);
	assert_true(json_is_string(json_object_get(args, "query")));
	assert_int_equal(textgen_count_words(json_string_value(
	    json_object_get(args, "query"))), 10);
	json_decref(args);
	free(s);
	s = textgen_join(&r, TEXTGEN_CONTENT);
	assert_string_equal(s, "");
	free(s);
	textgen_reply_free(&r);
}

static void
test_huge_first_token(void **state)
{
	struct textgen_opts o;
	struct textgen_reply r;
	enum textgen_kind k;

	opts(&o, 3, 4, -1);
	o.huge_bytes = 3 * 1024 * 1024;
	textgen_plan(&r, "p", &o);
	assert_true(strlen(textgen_token(&r, 0, &k)) >= 3 * 1024 * 1024);
	assert_true(strlen(textgen_token(&r, 1, &k)) < 32);
	textgen_reply_free(&r);
}

static void
test_classify_id_is_found_in_the_prompt(void **state)
{
	char *id = textgen_classify_id("Classify this.\nCLASSIFY id=gm-0042\nText");

	assert_string_equal(id, "gm-0042");
	free(id);
	assert_null(textgen_classify_id("no marker here"));
	assert_null(textgen_classify_id("CLASSIFY id= x"));
}

static char *
write_labels(int n)
{
	static const char *const set[] = { "typosquat", "dependency confusion",
	    "malicious update", "account takeover" };
	char path[] = "/tmp/test-simengine-labels.XXXXXX";
	FILE *fp;
	int fd, i;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	for (i = 0; i < n; i++)
		fprintf(fp, "{\"id\": \"item-%d\", \"label\": \"%s\"}\n", i,
		    set[(i * 7) % 4]);
	fprintf(fp, "\n{\"id\": %d, \"label\": \"typosquat\"}\n", n);
	fclose(fp);
	return xstrdup(path);
}

static void
test_answers_have_the_configured_accuracy(void **state)
{
	struct textgen_labels l;
	char *path = write_labels(2000), id[32];
	const char *gold, *ans;
	int i, right = 0;

	assert_null(textgen_labels_load(&l, path));
	assert_int_equal(l.nids, 2001);
	assert_int_equal(l.nlabels, 4);
	assert_string_equal(textgen_labels_gold(&l, "2000"), "typosquat");
	assert_null(textgen_labels_gold(&l, "nope"));
	for (i = 0; i < 2000; i++) {
		snprintf(id, sizeof(id), "item-%d", i);
		gold = textgen_labels_gold(&l, id);
		ans = textgen_labels_answer(&l, id, 42, 0.8);
		assert_ptr_equal(ans, textgen_labels_answer(&l, id, 42, 0.8));
		if (strcmp(ans, gold) == 0)
			right++;
		assert_string_equal(textgen_labels_answer(&l, id, 42, 1.0), gold);
		assert_string_not_equal(textgen_labels_answer(&l, id, 42, 0.0),
		    gold);
	}
	assert_in_range(right, 1520, 1680);
	textgen_labels_free(&l);
	unlink(path);
	free(path);
}

static void
test_template_bug_answer_names_no_label(void **state)
{
	struct textgen_labels l;
	char *path = write_labels(10);
	size_t i;

	assert_null(textgen_labels_load(&l, path));
	for (i = 0; i < l.nlabels; i++)
		assert_null(strstr(textgen_template_bug_text(), l.labels[i]));
	textgen_labels_free(&l);
	unlink(path);
	free(path);
}

static void
test_bad_label_lines_are_reported_with_their_line(void **state)
{
	char path[] = "/tmp/test-simengine-labels.XXXXXX";
	struct textgen_labels l;
	struct werr *err;
	int fd = mkstemp(path);
	const char text[] = "{\"id\":\"a\",\"label\":\"x\"}\n{\"id\":\"b\"}\n";

	assert_true(write(fd, text, sizeof(text) - 1) > 0);
	close(fd);
	err = textgen_labels_load(&l, path);
	assert_non_null(err);
	assert_non_null(strstr(err->msg, ":2"));
	assert_non_null(strstr(err->msg, "'label' must be a string"));
	werr_free(err);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prompt_tokens_are_whitespace_words),
		cmocka_unit_test(test_replies_are_deterministic_by_seed_and_prompt),
		cmocka_unit_test(test_max_tokens_caps_the_reply_and_says_length),
		cmocka_unit_test(test_tool_call_arguments_are_json),
		cmocka_unit_test(test_huge_first_token),
		cmocka_unit_test(test_classify_id_is_found_in_the_prompt),
		cmocka_unit_test(test_answers_have_the_configured_accuracy),
		cmocka_unit_test(test_template_bug_answer_names_no_label),
		cmocka_unit_test(test_bad_label_lines_are_reported_with_their_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
