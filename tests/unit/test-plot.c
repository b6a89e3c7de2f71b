/*
 * test-plot.c - every figure of a result set rendered from a fixture made
 * to be hard to draw: three engines with exactly the same figures (their
 * lines and points drawn exactly on top of each other, their c=N labels
 * colliding) and a Metal hint a hair under the RAM (the two rule labels
 * colliding). Each figure must report the series it drew, each with a
 * (marker, dash) pair no other series of the figure has (so no series
 * is told apart by colour alone), every label placed, and no two label
 * boxes overlapping. With $WARDEN_TEST_PLOT_DIR set, the figures are
 * written there too, to be looked at.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "results/chart.h"
#include "results/plot.h"
#include "results/resultset.h"

#define GIB 1073741824.0
#define NTRACE 60

static const char *const engines[] = { "sim-a", "sim-b", "sim-c" };
#define NENGINES 3
static const int levels[] = { 1, 8 };
#define NLEVELS 2

static json_t *
trace(int level)
{
	json_t *t = json_array(), *sys = json_array(), *eng = json_array();
	int i;

	for (i = 0; i < NTRACE; i++) {
		json_array_append_new(t, json_real(i));
		json_array_append_new(sys, json_integer((json_int_t)((6.0 +
		    level * 0.1 + (i % 7) * 0.01) * GIB)));
		json_array_append_new(eng, json_integer((json_int_t)(1.0 *
		    GIB)));
	}
	return json_pack("{s:o, s:o, s:o}", "t_s", t, "system_used_bytes",
	    sys, "engine_bytes", eng);
}

/* A campaign document as a snapshot holds it; every engine's the same. */
static json_t *
campaign_doc(const char *engine)
{
	json_t *results = json_array();
	int i;

	for (i = 0; i < NLEVELS; i++)
		json_array_append_new(results, json_pack("{s:i, s:s, s:s, s:i, "
		    "s:i, s:{s:f, s:f, s:f}, s:I, s:I, s:I, s:I, s:o}",
		    "concurrency", levels[i], "outcome", "complete", "status",
		    "ok", "completed", 8, "total", 8, "summary",
		    "output_throughput", 100.0 * levels[i], "median_ttft_ms",
		    40.0 * levels[i], "p99_ttft_ms", 55.0 * levels[i],
		    "peak_system_memory_bytes", (json_int_t)(6.5 * GIB),
		    "peak_engine_memory_bytes", (json_int_t)GIB,
		    "system_memory_bytes", (json_int_t)(16 * GIB),
		    "gpu_working_set_hint_bytes", (json_int_t)(15.9 * GIB),
		    "memory_trace", trace(levels[i])));
	return json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "schema",
	    1, "kind", "campaign", "run_id", "r1", "machine", "m1", "engine",
	    engine, "model", "qwen3-0.6b", "split", "chat",
	    "concurrency_results", results);
}

static void
fixture(struct resultset *rs)
{
	char path[128];
	json_t *doc;
	size_t i;

	resultset_init(rs);
	for (i = 0; i < NENGINES; i++) {
		snprintf(path, sizeof(path),
		    "results/qwen3-0.6b/chat/%s_r1.json", engines[i]);
		doc = campaign_doc(engines[i]);
		assert_null(resultset_add_doc(rs, path, doc, "fixture"));
		json_decref(doc);
	}
}

static const struct plot_file *
find(const struct plot_file *f, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return &f[i];
	fail_msg("no figure '%s'", name);
	return NULL;
}

static void
keep(const struct plot_file *f, size_t n)
{
	const char *dir = getenv("WARDEN_TEST_PLOT_DIR");
	char path[512];
	FILE *fp;
	size_t i;

	for (i = 0; dir != NULL && i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir,
		    strrchr(f[i].name, '/') + 1);
		assert_non_null(fp = fopen(path, "w"));
		assert_int_equal(fwrite(f[i].svg.data, 1, f[i].svg.len, fp),
		    f[i].svg.len);
		assert_int_equal(fclose(fp), 0);
	}
}

/* Series count, distinct styles without colour, no overlapping label. */
static void
check_layout(const struct plot_file *f, size_t nseries, size_t npoint,
    size_t nrule)
{
	const struct chart_layout *l = &f->layout;
	size_t i, j, k[3] = { 0, 0, 0 };

	assert_true(f->svg.len > 0);
	assert_int_equal(l->nseries, nseries);
	for (i = 0; i < l->nseries; i++) {
		assert_true(l->series[i].points > 0);
		for (j = 0; j < i; j++)
			if (l->series[i].marker == l->series[j].marker &&
			    l->series[i].dash == l->series[j].dash)
				fail_msg("%s: '%s' and '%s' look alike but for "
				    "colour", f->name, l->series[i].name,
				    l->series[j].name);
	}
	assert_int_equal(l->dropped, 0);
	for (i = 0; i < l->nlabels; i++) {
		k[l->labels[i].kind]++;
		assert_true(l->labels[i].box.w > 0 && l->labels[i].box.h > 0);
		for (j = 0; j < i; j++)
			if (chart_boxes_overlap(&l->labels[i].box,
			    &l->labels[j].box))
				fail_msg("%s: label '%s' at (%.1f, %.1f) "
				    "overlaps '%s' at (%.1f, %.1f)", f->name,
				    l->labels[i].text, l->labels[i].box.x,
				    l->labels[i].box.y, l->labels[j].text,
				    l->labels[j].box.x, l->labels[j].box.y);
	}
	assert_int_equal(k[CHART_LABEL_LEGEND], nseries);
	assert_int_equal(k[CHART_LABEL_POINT], npoint);
	assert_int_equal(k[CHART_LABEL_RULE], nrule);
}

static void
test_every_figure(void **state)
{
	struct plot_file *files = NULL;
	struct resultset rs;
	size_t n = 0;

	(void)state;
	fixture(&rs);
	assert_null(plot_results(&files, &n, &rs));
	keep(files, n);
	/* throughput, TTFT, memory at each level, throughput vs memory */
	assert_int_equal(n, 3 + NLEVELS);
	check_layout(find(files, n, "plots/throughput-qwen3-0.6b-chat.svg"),
	    NENGINES, 0, 0);
	check_layout(find(files, n, "plots/ttft-qwen3-0.6b-chat.svg"),
	    2 * NENGINES, 0, 0);
	check_layout(find(files, n, "plots/memory-qwen3-0.6b-chat-c1.svg"),
	    NENGINES, 0, 2);
	check_layout(find(files, n, "plots/memory-qwen3-0.6b-chat-c8.svg"),
	    NENGINES, 0, 2);
	check_layout(find(files, n,
	    "plots/throughput-memory-qwen3-0.6b-chat.svg"), NENGINES,
	    NENGINES * NLEVELS, 0);
	plot_files_free(files, n);
	resultset_free(&rs);
}

/* Nine engines on top of each other (SiliconBench's roster): the TTFT
 * figure's 18 series still differ without colour, and its legend's 18
 * names do not overlap. */
static void
test_nine_engines(void **state)
{
	static const char *const many[] = { "e1", "e2", "e3", "e4", "e5",
	    "e6", "e7", "e8", "e9" };
	struct plot_file *files = NULL;
	struct resultset rs;
	char path[128];
	json_t *doc;
	size_t i, n = 0;

	(void)state;
	resultset_init(&rs);
	for (i = 0; i < 9; i++) {
		snprintf(path, sizeof(path),
		    "results/qwen3-0.6b/chat/%s_r1.json", many[i]);
		doc = campaign_doc(many[i]);
		assert_null(resultset_add_doc(&rs, path, doc, "fixture"));
		json_decref(doc);
	}
	assert_null(plot_results(&files, &n, &rs));
	check_layout(find(files, n, "plots/ttft-qwen3-0.6b-chat.svg"), 18, 0,
	    0);
	check_layout(find(files, n, "plots/throughput-qwen3-0.6b-chat.svg"),
	    9, 0, 0);
	plot_files_free(files, n);
	resultset_free(&rs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_figure),
		cmocka_unit_test(test_nine_engines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
