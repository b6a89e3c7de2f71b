/*
 * test-cycle.c - unit tests of the cycle's pure parts: the status of a
 * cell from stored sweeps (every status of warden-cycle(1)'s CELL
 * STATUSES, the order of precedence, the gate's completion line of
 * degraded), and the Markdown of a cycle journal (SiliconBench's sections
 * in order, table text escaped).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cycle/cycle.h"

/* A done sweep as store_campaign_sweeps_json gives it. */
static json_t *
sweep(int c, const char *outcome, int completed, int total,
    const char *detail)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:i, s:i, s:I, s:I, "
	    "s:{s:{s:i}, s:i, s:f}, s:{s:s, s:s}}", "engine", "e", "model", "m",
	    "split", "chat", "concurrency", c, "outcome", outcome, "detail",
	    detail, "completed", completed, "total", total,
	    "peak_system_memory_bytes", (json_int_t)1 << 30,
	    "system_memory_bytes", (json_int_t)16 << 30, "summary", "failed_by_class", "empty",
	    total - completed, "not_started", 0, "output_throughput", 100.0,
	    "provenance", "adapter_sha256", "a", "profile_sha256", "p");
}

/* The gate of the default policy: 90 of every 100 must complete. */
static struct policy gate_90 = { .gates = { .completion_min = 90,
    .completion_of = 100 } };

/* The status of a cell of the given sweeps (references stolen). */
static char *
status_of(json_t *a, json_t *b)
{
	json_t *sweeps = json_array(), *cell;
	char *st;

	json_array_append_new(sweeps, a);
	if (b != NULL)
		json_array_append_new(sweeps, b);
	cell = cycle_cell_judge(sweeps, &gate_90);
	st = strdup(json_string_value(json_object_get(cell, "status")));
	json_decref(cell);
	json_decref(sweeps);
	return st;
}

#define assert_status(want, a, b) do { \
	char *got_ = status_of(a, b); \
	assert_string_equal(got_, want); \
	free(got_); \
} while (0)

static void
test_outcomes(void **state)
{
	(void)state;
	assert_status("ok", sweep(1, "complete", 10, 10, ""), NULL);
	assert_status("all-failed", sweep(1, "complete", 0, 10, ""), NULL);
	assert_status("degraded", sweep(1, "complete", 8, 10, ""), NULL);
	assert_status("ok", sweep(1, "complete", 9, 10, ""), NULL);
	assert_status("wrong-model", sweep(1, "wrong_model", 0, 10,
	    "serves 'x'"), NULL);
	assert_status("hang", sweep(1, "hang", 3, 10, "no bytes"), NULL);
	assert_status("capped", sweep(1, "engine_cap", 3, 10, "cap"), NULL);
	assert_status("crashed", sweep(1, "not_ready", 0, 10,
	    "exited before it was ready: exit status 3; log tail:\nx"), NULL);
	assert_status("crashed", sweep(1, "start_failed", 0, 10, "exec"), NULL);
	assert_status("crashed", sweep(1, "setup_failed", 0, 10, "step"), NULL);
	assert_status("crashed", sweep(1, "port_conflict", 0, 10, "port"), NULL);
	assert_status("crashed", sweep(1, "server_crash", 4, 10,
	    "server exited: killed by signal 6 (SIGABRT)"), NULL);
	assert_status("oom", sweep(1, "server_crash", 4, 10,
	    "server exited: killed by signal 9 (SIGKILL); log tail:\n"), NULL);
	assert_status("oom", sweep(1, "not_ready", 0, 10,
	    "exited before it was ready: killed by signal 9 (SIGKILL)"), NULL);
	assert_status("skipped", sweep(1, "skipped", 0, 10, "unsupported"),
	    NULL);
	assert_status("skipped", sweep(1, "adapter_error", 0, 10, "bad"), NULL);
	assert_status("skipped", sweep(1, "profile_error", 0, 10, "bad"), NULL);
	assert_status("skipped", sweep(1, "unsupported", 0, 10, "none"), NULL);
}

static void
test_oom_by_memory(void **state)
{
	json_t *s = sweep(1, "server_crash", 2, 10, "server exited: exit "
	    "status 1");

	(void)state;
	json_object_set_new(s, "peak_system_memory_bytes", json_integer(
	    (json_int_t)155 << 27));	/* 15.5 GiB of 16 */
	assert_status("oom", s, NULL);
}

static void
test_degraded_line(void **state)
{
	(void)state;
	/* below 90 of 100 is degraded; 90 of 100 is ok */
	assert_status("degraded", sweep(1, "complete", 89, 100, ""), NULL);
	assert_status("ok", sweep(1, "complete", 90, 100, ""), NULL);
	assert_status("degraded", sweep(1, "complete", 8, 9, ""), NULL);
	/* the policy's line, not a fixed one: 80 of 100 */
	gate_90.gates.completion_min = 80;
	assert_status("ok", sweep(1, "complete", 8, 10, ""), NULL);
	assert_status("degraded", sweep(1, "complete", 79, 100, ""), NULL);
	gate_90.gates.completion_min = 90;
}

static void
test_worst_level_wins(void **state)
{
	(void)state;
	assert_status("crashed", sweep(1, "complete", 10, 10, ""),
	    sweep(8, "server_crash", 2, 10, "server exited: exit status 1"));
	assert_status("oom", sweep(1, "hang", 0, 10, "hang"),
	    sweep(8, "server_crash", 2, 10, "killed by signal 9 (SIGKILL)"));
	assert_status("degraded", sweep(1, "complete", 10, 10, ""),
	    sweep(8, "complete", 5, 10, ""));
	assert_status("ok", sweep(1, "skipped", 0, 10, "x"),
	    sweep(8, "complete", 10, 10, ""));
}

static void
test_notes_and_reason(void **state)
{
	json_t *sweeps = json_array(), *cell;

	(void)state;
	json_array_append_new(sweeps, sweep(1, "complete", 10, 10, ""));
	json_array_append_new(sweeps, sweep(8, "not_ready", 0, 10,
	    "exited before it was ready: exit status 3; log tail:\nboom"));
	cell = cycle_cell_judge(sweeps, &gate_90);
	assert_string_equal(json_string_value(json_object_get(cell, "reason")),
	    "exited before it was ready: exit status 3");
	assert_string_equal(json_string_value(json_object_get(cell, "notes")),
	    "c=1 10/10, c=8 0/10 outcome not_ready; best 100.0 tok/s; exited "
	    "before it was ready: exit status 3");
	assert_int_equal(json_integer_value(json_object_get(cell, "failed")),
	    10);
	json_decref(cell);
	json_decref(sweeps);
}

static void
test_failing(void **state)
{
	(void)state;
	assert_false(cycle_status_failing("ok"));
	assert_false(cycle_status_failing("fixed"));
	assert_false(cycle_status_failing("skipped"));
	assert_true(cycle_status_failing("degraded"));
	assert_true(cycle_status_failing("oom"));
	assert_true(cycle_status_known("capped"));
	assert_true(cycle_status_known("fixed"));
	assert_false(cycle_status_known("complete"));
}

static void
test_markdown(void **state)
{
	struct buf md = BUF_INIT;
	json_t *j;
	const char *p, *heads[] = { "## Summary", "## m / chat",
	    "## Fixes", "## Skipped", "## OOM", "## Suspicious",
	    "## Timeline", NULL };
	int i;

	(void)state;
	j = json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:{s:i, s:{s:i}, s:[], "
	    "s:{s:[s], s:[], s:[]}, s:[], s:s}, s:[{s:s, s:s, s:[{s:s, s:s, "
	    "s:s, s:s, s:s}]}], s:[], s:[], s:[{s:s, s:s, s:s, s:s, s:i}], "
	    "s:[], s:[], s:[]}", "cycle", "c1", "roster", "demo", "machine", "m",
	    "rounds", 1, "state", "done", "exit", 0, "summary", "cells", 1,
	    "statuses", "skipped", 1, "broke", "gate", "passed", "e", "failed",
	    "regressions", "reviews_waiting", "not_published", "policy says no",
	    "splits", "model", "m", "split", "chat", "cells", "engine", "e",
	    "model", "m", "split", "chat", "status", "skipped", "notes",
	    "no build | none", "agent", "approved", "skipped", "engine", "e",
	    "model", "m", "split", "chat", "reason", "no build | none",
	    "prior", 2, "oom", "suspicious", "timeline");
	json_object_set_new(json_array_get(json_object_get(j, "skipped"), 0),
	    "since", json_string("c0"));
	cycle_render_markdown(&md, j);
	p = buf_cstr(&md);
	for (i = 0; heads[i] != NULL; i++) {
		const char *h = strstr(p, heads[i]);

		assert_non_null(h);
		p = h + strlen(heads[i]);
	}
	assert_non_null(strstr(buf_cstr(&md), "| e | skipped | no build \\| "
	    "none |\n"));
	assert_non_null(strstr(buf_cstr(&md), "| 2 (skipped since cycle c0) "
	    "|\n"));
	assert_non_null(strstr(buf_cstr(&md), "**Not published**: policy "
	    "says no"));
	assert_non_null(strstr(buf_cstr(&md), "**Incidents**: no triage ran"));
	buf_free(&md);
	json_decref(j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_oom_by_memory),
		cmocka_unit_test(test_degraded_line),
		cmocka_unit_test(test_worst_level_wins),
		cmocka_unit_test(test_notes_and_reason),
		cmocka_unit_test(test_failing),
		cmocka_unit_test(test_markdown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
