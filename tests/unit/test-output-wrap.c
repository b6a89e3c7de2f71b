/* Unit tests of runner/output-wrap.c: lists and lines within 80 columns. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "output.h"

/* What the printers wrote on stdout: during a test stdout goes to a
 * temporary file (cmocka reports on the real one between tests). */
static FILE *out;
static int saved = -1;

static int
capture(void **state)
{
	(void)state;
	fflush(stdout);
	if (out == NULL && (out = tmpfile()) == NULL)
		return -1;
	saved = dup(STDOUT_FILENO);
	return saved >= 0 && dup2(fileno(out), STDOUT_FILENO) >= 0 ? 0 : -1;
}

static int
release(void **state)
{
	(void)state;
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	return 0;
}

static char *
printed(void)
{
	static char text[8192];
	size_t n;

	fflush(stdout);
	rewind(out);
	n = fread(text, 1, sizeof(text) - 1, out);
	text[n] = '\0';
	if (ftruncate(fileno(out), 0) != 0)
		fail_msg("ftruncate");
	rewind(out);
	return text;
}

/* Every line of s at most OUTPUT_WIDTH characters (UTF-8 lead bytes). */
static void
assert_fits(const char *s)
{
	size_t col = 0;

	for (; *s != '\0'; s++) {
		if (*s == '\n')
			col = 0;
		else if (((unsigned char)*s & 0xc0) != 0x80)
			assert_true(++col <= OUTPUT_WIDTH);
	}
}

static void
test_list_wraps_under_its_label(void **state)
{
	static const char *const e[] = { "llama.cpp", "ollama", "mlx-lm",
	    "vllm-metal", "vllm-mlx", "omlx", "sglang", "hf-transformers",
	    "mistral.rs" };
	struct output_list l;
	size_t i;

	(void)state;
	output_list_init(&l, "gate:      passed ", NULL, 0);
	for (i = 0; i < 9; i++)
		output_list_add(&l, "%s", e[i]);
	assert_int_equal(output_list_print(&l, "none", NULL), 2);
	assert_string_equal(printed(),
	    "gate:      passed llama.cpp, ollama, mlx-lm, vllm-metal, vllm-mlx, "
	    "omlx, sglang,\n"
	    "                  hf-transformers, mistral.rs\n");
	output_list_init(&l, "failed: ", NULL, 0);
	output_list_print(&l, "none", NULL);
	assert_string_equal(printed(), "failed: none\n");
}

/* Past max_lines the last line counts the rest and says where it is. */
static void
test_list_cut_points_to_the_whole(void **state)
{
	struct output_list l;
	char *s;
	size_t i;

	(void)state;
	output_list_init(&l, "cells: ", NULL, 2);
	for (i = 0; i < 60; i++)
		output_list_add(&l, "cell-%02zu", i);
	assert_int_equal(output_list_print(&l, NULL, "warden status"), 2);
	s = printed();
	assert_fits(s);
	assert_non_null(strstr(s, "\n       and "));
	assert_null(strstr(s, ",\n       and "));	/* no dangling comma */
	assert_non_null(strstr(s, " more: warden status\n"));
	assert_null(strstr(s, "cell-59"));
}

/* A row as the label: its text after it when it fits, else under the
 * row at l.indent, wrapped between words with their blanks kept. */
static void
test_row_text_goes_under_the_row(void **state)
{
	struct output_list l;

	(void)state;
	output_list_init(&l, "1    untriaged     own_release  c2           ",
	    NULL, 0);
	l.indent = 5;
	output_list_add(&l, "simv broke");
	output_list_print(&l, NULL, NULL);
	assert_string_equal(printed(),
	    "1    untriaged     own_release  c2           simv broke\n");
	output_list_init(&l, "2    untriaged     unexplained  c2           ",
	    NULL, 0);
	l.indent = 5;
	output_list_add(&l, "hf-transformers broke: pinning back every "
	    "changed package does not make it healthy");
	output_list_print(&l, NULL, NULL);
	assert_string_equal(printed(),
	    "2    untriaged     unexplained  c2\n"
	    "     hf-transformers broke: pinning back every changed package "
	    "does not make it\n"
	    "     healthy\n");
}

/* output_line keeps the line's indent and the blanks inside it, and hangs
 * its further lines; a word wider than a line is cut. */
static void
test_line_hangs_and_keeps_blanks(void **state)
{
	char word[120];
	char *s;

	(void)state;
	output_line(10, "summary:  %s", "shared 1.0 \u2192 2.0 broke mlx-lm, "
	    "vllm-metal, vllm-mlx, omlx, sglang and hf-transformers");
	assert_string_equal(printed(),
	    "summary:  shared 1.0 \u2192 2.0 broke mlx-lm, vllm-metal, vllm-mlx, "
	    "omlx, sglang and\n"
	    "          hf-transformers\n");
	output_line(4, "  short");
	assert_string_equal(printed(), "  short\n");
	memset(word, 'x', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	output_line(4, "  log: %s", word);
	s = printed();
	assert_fits(s);
	assert_non_null(strstr(s, "  log:\n      xxx"));
}

/* An item that reaches the last column exactly moves to the next line:
 * the comma its line would end with is counted; and l.fp is where the
 * list goes. */
static void
test_list_comma_within_the_width(void **state)
{
	struct output_list l;
	FILE *fp;
	char text[256];
	size_t n;

	(void)state;
	/* "label: " (7) + 60 + ", " + 11 = 80: the item fits, its comma
	 * would not */
	output_list_init(&l, "label: ", NULL, 0);
	output_list_add(&l, "%060d", 0);
	output_list_add(&l, "%011d", 1);
	output_list_add(&l, "next");
	output_list_print(&l, NULL, NULL);
	assert_string_equal(printed(),
	    "label: 000000000000000000000000000000000000000000000000000000000000,\n"
	    "       00000000001, next\n");
	/* the last item has no comma after it: it may reach column 80 */
	output_list_init(&l, "label: ", NULL, 0);
	output_list_add(&l, "%060d", 0);
	output_list_add(&l, "%011d", 1);
	output_list_print(&l, NULL, NULL);
	assert_string_equal(printed(),
	    "label: 000000000000000000000000000000000000000000000000000000000000, "
	    "00000000001\n");
	assert_non_null(fp = tmpfile());
	output_list_init(&l, "usage: warden x ", " ", 0);
	l.fp = fp;
	output_list_add(&l, "[--json]");
	output_list_print(&l, NULL, NULL);
	assert_string_equal(printed(), "");
	rewind(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	assert_string_equal(text, "usage: warden x [--json]\n");
	fclose(fp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_wraps_under_its_label,
		    capture, release),
		cmocka_unit_test_setup_teardown(test_list_cut_points_to_the_whole,
		    capture, release),
		cmocka_unit_test_setup_teardown(test_row_text_goes_under_the_row,
		    capture, release),
		cmocka_unit_test_setup_teardown(test_line_hangs_and_keeps_blanks,
		    capture, release),
		cmocka_unit_test_setup_teardown(test_list_comma_within_the_width,
		    capture, release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
