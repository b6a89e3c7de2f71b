/*
 * test-triage-search.c - unit tests of triage's search over an engine's
 * changes: one culprit found and confirmed by pinning back within
 * ceil(log2 n) + 1 runs (at most one more to check it breaks alone),
 * wherever it is; a pair that breaks only together found by ddmin;
 * nothing that explains a failure; the budget; environments that do
 * not build. The oracle is a rule over the applied changes. And the
 * scoring of suspects across engines.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "triage/search.h"
#include "triage/suspects.h"

/* The engine fails when the applied changes (not pinned back) include
 * every index of one of the "causes" (each a bit mask). */
struct world {
	unsigned long causes[4];
	size_t ncauses;
	unsigned long unbuildable;	/* pinned-back sets that cannot build */
	size_t calls;
	size_t last_k, last_max;
};

static struct werr *
oracle(void *arg, const unsigned char *pinned, size_t n,
    enum search_purpose purpose, size_t k, size_t max,
    enum search_verdict *out)
{
	struct world *w = arg;
	unsigned long applied = 0, back = 0;
	size_t i;

	(void)purpose;
	for (i = 0; i < n; i++) {
		if (pinned[i])
			back |= 1UL << i;
		else
			applied |= 1UL << i;
	}
	w->calls++;
	assert_int_equal(k, w->calls);
	assert_true(k <= max);
	w->last_k = k;
	w->last_max = max;
	if (w->unbuildable != 0 && back == w->unbuildable) {
		*out = SEARCH_UNRESOLVED;
		return NULL;
	}
	*out = SEARCH_PASS;
	for (i = 0; i < w->ncauses; i++)
		if ((applied & w->causes[i]) == w->causes[i])
			*out = SEARCH_FAIL;
	return NULL;
}

static void
run(struct search_result *res, struct world *w, size_t n, size_t budget)
{
	struct search_oracle o = { oracle, w };

	assert_null(search_run(res, n, budget, &o));
	assert_int_equal(res->runs, w->calls);
}

static void
test_bound(void **state)
{
	(void)state;
	assert_int_equal(search_bound(1), 1);
	assert_int_equal(search_bound(2), 2);
	assert_int_equal(search_bound(3), 3);
	assert_int_equal(search_bound(4), 3);
	assert_int_equal(search_bound(5), 4);
	assert_int_equal(search_bound(8), 4);
	assert_int_equal(search_bound(9), 5);
}

/* Every position of one culprit among n = 1..12 changes. */
static void
test_one_culprit_anywhere(void **state)
{
	struct search_result res;
	size_t n, j, i;

	(void)state;
	for (n = 1; n <= 12; n++)
		for (j = 0; j < n; j++) {
			struct world w = { { 1UL << j }, 1, 0, 0, 0, 0 };

			run(&res, &w, n, 0);
			assert_int_equal(res.kind, SEARCH_SINGLE);
			for (i = 0; i < n; i++)
				assert_int_equal(res.culprits[i], i == j);
			assert_false(res.used_ddmin);
			/* found and confirmed by pinning back within the
			 * bound; one more to check it breaks alone */
			assert_true(res.runs <= search_bound(n) + 1);
			if (j == 0 || n <= 2)
				assert_true(res.runs <= search_bound(n));
			search_result_free(&res);
		}
}

/* The most suspicious change is the culprit: ceil(log2 n) + 1 at most,
 * and a single change costs one run. */
static void
test_first_suspect(void **state)
{
	struct world w1 = { { 1 }, 1, 0, 0, 0, 0 };
	struct world w7 = { { 1 }, 1, 0, 0, 0, 0 };
	struct search_result res;

	(void)state;
	run(&res, &w1, 1, 0);
	assert_int_equal(res.kind, SEARCH_SINGLE);
	assert_int_equal(res.runs, 1);
	search_result_free(&res);
	run(&res, &w7, 7, 0);
	assert_int_equal(res.kind, SEARCH_SINGLE);
	assert_true(res.culprits[0]);
	assert_int_equal(res.runs, 4);
	assert_int_equal(w7.last_max, search_bound(7) + 1);
	/* one or two changes: the bound is the most there can be */
	{
		struct world w2 = { { 2 }, 1, 0, 0, 0, 0 };

		search_result_free(&res);
		run(&res, &w2, 2, 0);
		assert_int_equal(w2.last_max, search_bound(2));
	}
	search_result_free(&res);
}

/* Two changes that break only together: ddmin finds exactly the pair. */
static void
test_pair_only_together(void **state)
{
	struct search_result res;
	size_t n, a, b, i;

	(void)state;
	for (n = 2; n <= 7; n++)
		for (a = 0; a < n; a++)
			for (b = a + 1; b < n; b++) {
				struct world w = { { (1UL << a) | (1UL << b) }, 1,
				    0, 0, 0, 0 };

				run(&res, &w, n, 0);
				assert_int_equal(res.kind, SEARCH_COMBINATION);
				assert_true(res.used_ddmin);
				for (i = 0; i < n; i++)
					assert_int_equal(res.culprits[i],
					    i == a || i == b);
				search_result_free(&res);
			}
}

/* Pinning back every change does not heal: nothing explains it. */
static void
test_unexplained(void **state)
{
	struct world w = { { 0 }, 1, 0, 0, 0, 0 };
	struct search_result res;

	(void)state;
	run(&res, &w, 3, 0);
	assert_int_equal(res.kind, SEARCH_UNEXPLAINED);
	assert_false(res.culprits[0] || res.culprits[1] || res.culprits[2]);
	search_result_free(&res);
}

/* Two independent causes: no single change, and no set whose pin heals. */
static void
test_two_causes(void **state)
{
	struct world w = { { 1UL << 1, 1UL << 3 }, 2, 0, 0, 0, 0 };
	struct search_result res;

	(void)state;
	run(&res, &w, 5, 0);
	assert_int_equal(res.kind, SEARCH_UNCONFIRMED);
	assert_true(res.culprits[1] || res.culprits[3]);
	search_result_free(&res);
}

/* The budget stops the search, which never runs more than it. */
static void
test_budget(void **state)
{
	struct world w = { { (1UL << 2) | (1UL << 6) }, 1, 0, 0, 0, 0 };
	struct search_result res;

	(void)state;
	run(&res, &w, 8, 5);
	assert_int_equal(res.kind, SEARCH_BUDGET);
	assert_int_equal(res.runs, 5);
	assert_true(w.last_max <= 5);
	search_result_free(&res);
}

/* A halving step that does not build hands over to ddmin, which still
 * finds the culprit. */
static void
test_unresolved(void **state)
{
	struct world w = { { 1UL << 0 }, 1, 0x3, 0, 0, 0 };
	struct search_result res;

	(void)state;
	run(&res, &w, 4, 0);
	assert_true(res.used_ddmin);
	assert_int_equal(res.kind, SEARCH_SINGLE);
	assert_true(res.culprits[0]);
	search_result_free(&res);
}

/* The MLX case: three broken engines took shared 2.0, a healthy one
 * took tok 1.1 too; an engine whose only change is its own release. */
static void
test_suspects_across_engines(void **state)
{
	json_t *in, *out, *a, *s;
	json_error_t jerr;

	(void)state;
	in = json_loads("{"
	    "\"mlx\": {\"status\": \"broken\", \"own\": \"mlx-lm\", \"changes\": {"
	    "  \"shared\": {\"old\": \"1.0\", \"new\": \"2.0\"},"
	    "  \"tok\": {\"old\": \"1.0\", \"new\": \"1.1\"},"
	    "  \"extra\": {\"old\": null, \"new\": \"0.1\"}}},"
	    "\"metal\": {\"status\": \"broken\", \"own\": \"metal\", \"changes\": {"
	    "  \"shared\": {\"old\": \"0.9\", \"new\": \"2.0\"}}},"
	    "\"vmlx\": {\"status\": \"broken\", \"own\": \"vmlx\", \"changes\": {"
	    "  \"shared\": {\"old\": \"1.0\", \"new\": \"2.0\"},"
	    "  \"tok\": {\"old\": \"1.0\", \"new\": \"1.1\"}}},"
	    "\"llama\": {\"status\": \"healthy\", \"own\": \"llama\", \"changes\": {"
	    "  \"tok\": {\"old\": \"1.0\", \"new\": \"1.1\"},"
	    "  \"shared\": {\"old\": \"1.0\", \"new\": \"2.1\"}}},"
	    "\"selfy\": {\"status\": \"broken\", \"own\": \"selfy\", \"changes\": {"
	    "  \"selfy\": {\"old\": \"1.0\", \"new\": \"2.0\"}}},"
	    "\"plain\": {\"status\": \"broken\"}"
	    "}", 0, &jerr);
	assert_non_null(in);
	out = suspects_rank(in);
	/* only broken engines with something to compare */
	assert_int_equal(json_object_size(out), 4);
	assert_null(json_object_get(out, "llama"));
	assert_null(json_object_get(out, "plain"));
	a = json_object_get(out, "mlx");
	assert_int_equal(json_array_size(a), 3);
	s = json_array_get(a, 0);
	assert_string_equal(json_string_value(json_object_get(s, "package")),
	    "shared");
	/* a healthy engine on another release of shared does not count */
	assert_int_equal(json_integer_value(json_object_get(s, "score")), 3);
	assert_int_equal(json_array_size(json_object_get(s, "healthy_with")), 0);
	s = json_array_get(a, 1);
	assert_string_equal(json_string_value(json_object_get(s, "package")),
	    "tok");
	/* two broken engines took it, one healthy took it and stayed so */
	assert_int_equal(json_integer_value(json_object_get(s, "score")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(s,
	    "healthy_with"), 0)), "llama");
	s = json_array_get(a, 2);
	assert_string_equal(json_string_value(json_object_get(s, "package")),
	    "extra");
	assert_false(json_is_true(json_object_get(s, "bisectable")));
	a = json_object_get(out, "selfy");
	assert_true(suspects_own_release_only(a));
	assert_false(suspects_own_release_only(json_object_get(out, "mlx")));
	json_decref(in);
	json_decref(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_one_culprit_anywhere),
		cmocka_unit_test(test_first_suspect),
		cmocka_unit_test(test_pair_only_together),
		cmocka_unit_test(test_unexplained),
		cmocka_unit_test(test_two_causes),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_unresolved),
		cmocka_unit_test(test_suspects_across_engines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
