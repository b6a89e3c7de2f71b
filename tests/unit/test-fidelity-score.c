/*
 * test-fidelity-score.c - the parse rule and the scores of the fidelity
 * task: weighted and macro F1 on an example worked out by hand below, the
 * class `none` for unparsable answers and failed requests, and the
 * agreement with a reference.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "results/fidelity-score.h"

static const char *const labels[] = { "typosquat", "dependency confusion",
    "malicious update", "update" };
#define NLABELS 4

static int
parse(const char *answer, enum fidelity_parse *how)
{
	return fidelity_parse_answer(how, labels, NLABELS, answer,
	    strlen(answer));
}

static void
test_exact_answers(void **state)
{
	enum fidelity_parse how;

	assert_int_equal(parse("typosquat", &how), 0);
	assert_int_equal(how, FIDELITY_EXACT);
	assert_int_equal(parse("  Dependency   Confusion.\n", &how), 1);
	assert_int_equal(how, FIDELITY_EXACT);
	assert_int_equal(parse("\"TYPOSQUAT\"", &how), 0);
	assert_int_equal(how, FIDELITY_EXACT);
	assert_int_equal(parse("**update**", &how), 3);
	assert_int_equal(how, FIDELITY_EXACT);
}

static void
test_contained_answers(void **state)
{
	enum fidelity_parse how;

	assert_int_equal(parse("The incident is a typosquat of requests.",
	    &how), 0);
	assert_int_equal(how, FIDELITY_CONTAINED);
	/* "update" inside "malicious update" is not a second label */
	assert_int_equal(parse("Label: malicious update (high confidence)",
	    &how), 2);
	assert_int_equal(how, FIDELITY_CONTAINED);
	/* the same label twice is still one label */
	assert_int_equal(parse("typosquat. Yes, typosquat", &how), 0);
	assert_int_equal(how, FIDELITY_CONTAINED);
	/* word boundaries: "typosquatting" does not contain the label */
	assert_int_equal(parse("typosquatting", &how), -1);
	assert_int_equal(how, FIDELITY_NO_LABEL);
}

static void
test_unparsable_answers_are_none(void **state)
{
	enum fidelity_parse how;

	assert_int_equal(parse("typosquat or dependency confusion", &how), -1);
	assert_int_equal(how, FIDELITY_AMBIGUOUS);
	assert_int_equal(parse("a malicious update, then an update", &how), -1);
	assert_int_equal(how, FIDELITY_AMBIGUOUS);
	assert_int_equal(parse("<|im_end|> <|im_start|>user <|im_end|> "
	    "<|im_start|>assistant", &how), -1);
	assert_int_equal(how, FIDELITY_NO_LABEL);
	assert_int_equal(parse("", &how), -1);
	assert_int_equal(how, FIDELITY_NO_LABEL);
}

/*
 * Three classes a, b, c (indices 0, 1, 2); six items.
 *   gold: a a a b b c
 *   pred: a a b b - c        (- is none: an unparsable answer)
 * a: tp 2, predicted 2, support 3: P 1,   R 2/3, F1 = 2*(2/3)/(5/3) = 0.8
 * b: tp 1, predicted 2, support 2: P 1/2, R 1/2, F1 = 0.5
 * c: tp 1, predicted 1, support 1: P 1,   R 1,   F1 = 1
 * weighted F1 = (3 * 0.8 + 2 * 0.5 + 1 * 1) / 6 = 4.4 / 6 = 0.73333...
 * macro F1    = (0.8 + 0.5 + 1) / 3              = 0.76666...
 * accuracy    = 4 / 6
 */
static void
test_weighted_f1_by_hand(void **state)
{
	static const int gold[] = { 0, 0, 0, 1, 1, 2 };
	static const int pred[] = { 0, 0, 1, 1, -1, 2 };
	struct fidelity_scores s;

	fidelity_score(&s, gold, pred, 6, 3);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.correct, 4);
	assert_int_equal(s.none, 1);
	assert_float_equal(s.cls[0].f1, 0.8, 1e-12);
	assert_float_equal(s.cls[1].f1, 0.5, 1e-12);
	assert_float_equal(s.cls[2].f1, 1.0, 1e-12);
	assert_float_equal(s.weighted_f1, 4.4 / 6.0, 1e-12);
	assert_float_equal(s.macro_f1, 2.3 / 3.0, 1e-12);
	assert_float_equal(s.accuracy, 4.0 / 6.0, 1e-12);
	fidelity_scores_free(&s);
}

/* An unparsable answer counts as wrong: turning the one none of the
 * example into its gold label raises every score. */
static void
test_parse_failures_count_as_wrong(void **state)
{
	static const int gold[] = { 0, 0, 0, 1, 1, 2 };
	static const int none[] = { -1, -1, -1, -1, -1, -1 };
	static const int fixed[] = { 0, 0, 1, 1, 1, 2 };
	static const enum fidelity_parse how[] = { FIDELITY_EXACT,
	    FIDELITY_CONTAINED, FIDELITY_NO_LABEL, FIDELITY_AMBIGUOUS,
	    FIDELITY_FAILED, FIDELITY_FAILED };
	struct fidelity_scores s;
	json_t *o;

	fidelity_score(&s, gold, none, 6, 3);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.none, 6);
	assert_float_equal(s.weighted_f1, 0.0, 0);
	assert_float_equal(s.accuracy, 0.0, 0);
	fidelity_scores_free(&s);
	fidelity_score(&s, gold, fixed, 6, 3);
	assert_true(s.weighted_f1 > 4.4 / 6.0);
	fidelity_scores_free(&s);
	o = fidelity_cell_scores(labels, 3, gold, none, how, 6);
	assert_int_equal(json_integer_value(json_object_get(o, "items")), 6);
	assert_int_equal(json_integer_value(json_object_get(o,
	    "parse_failures")), 2);
	assert_int_equal(json_integer_value(json_object_get(o,
	    "request_failures")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o,
	    "parse"), "exact")), 1);
	json_decref(o);
}

static void
test_agreement(void **state)
{
	static const int a[] = { 0, 1, 2, -1, 1 };
	static const int b[] = { 0, 1, 1, -1, 2 };
	size_t agree;

	assert_float_equal(fidelity_agreement(a, b, 5, &agree), 0.4, 1e-12);
	assert_int_equal(agree, 2);
	assert_float_equal(fidelity_agreement(a, b, 0, &agree), 0.0, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_answers),
		cmocka_unit_test(test_contained_answers),
		cmocka_unit_test(test_unparsable_answers_are_none),
		cmocka_unit_test(test_weighted_f1_by_hand),
		cmocka_unit_test(test_parse_failures_count_as_wrong),
		cmocka_unit_test(test_agreement),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
