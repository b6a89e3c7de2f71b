/*
 * test-outcome-docs.c - every outcome name the code can record is in
 * the glossary, doc/glossary.md: the request outcomes of the load generator, how a sweep can end,
 * and the engine states a sweep records when its server fails. A name
 * added to the code without a word in the glossary fails here.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "engine.h"
#include "loadgen.h"
#include "util.h"

static struct buf readme = BUF_INIT;

static int
setup(void **state)
{
	const char *top = getenv("TOP_SRCDIR");
	char *path = path_join(top != NULL ? top : ".", "doc/glossary.md");
	struct werr *err = file_read(&readme, path);

	(void)state;
	free(path);
	if (err != NULL) {
		fprintf(stderr, "%s\n", err->msg);
		werr_free(err);
		return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	buf_free(&readme);
	return 0;
}

/* The glossary names it in backquotes. */
static void
documented(const char *name)
{
	char *quoted = xasprintf("`%s`", name);

	if (strstr(buf_cstr(&readme), quoted) == NULL)
		fail_msg("doc/glossary.md does not name the outcome %s", quoted);
	free(quoted);
}

static void
test_request_outcomes(void **state)
{
	int i;

	(void)state;
	for (i = 1; i < LOADGEN_OUTCOME_COUNT; i++)
		documented(loadgen_outcome_name((enum loadgen_outcome)i));
}

static void
test_sweep_ends(void **state)
{
	int i;

	(void)state;
	/* A deadline ends the sweep as engine_cap (campaign-sweep.c); a
	 * stopped sweep is not recorded (--resume runs it again). */
	for (i = 0; i < LOADGEN_END_COUNT; i++)
		if (i != LOADGEN_END_DEADLINE && i != LOADGEN_END_STOPPED)
			documented(loadgen_end_name((enum loadgen_end)i));
	documented("engine_cap");
}

static void
test_engine_failures(void **state)
{
	int i;

	(void)state;
	/* Every state but starting, ready and stopped is a sweep outcome. */
	for (i = 0; strcmp(engine_state_name((enum engine_state)i),
	    "unknown") != 0; i++) {
		const char *s = engine_state_name((enum engine_state)i);

		if (strcmp(s, "starting") != 0 && strcmp(s, "ready") != 0 &&
		    strcmp(s, "stopped") != 0)
			documented(s);
	}
}

static void
test_skip_outcomes(void **state)
{
	(void)state;
	/* Literals of campaign-sweep.c's walk. */
	documented("adapter_error");
	documented("unsupported");
	documented("skipped");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_outcomes),
		cmocka_unit_test(test_sweep_ends),
		cmocka_unit_test(test_engine_failures),
		cmocka_unit_test(test_skip_outcomes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
