/*
 * test-report-machine.c - the one description of a machine, as REPORT.md's
 * "What ran" table has it (a row, with the Metal working-set hint) and as
 * the cycle journal's Versions line has it: the same fields from the same
 * provenance, memory under its older name too, text quoted for Markdown.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "results/report.h"

/* m (report_machine() of the JSON texts) rendered in form. */
static void
expect_machine(const char *hardware, const char *os,
    enum report_machine_form form, const char *want)
{
	json_t *hw = json_loads(hardware, 0, NULL), *o = json_loads(os, 0, NULL);
	json_t *m = report_machine("0123456789abcdef", hw, o);
	struct buf b = BUF_INIT;

	assert_non_null(m);
	report_md_machine(&b, m, form);
	if (strcmp(buf_cstr(&b), want) != 0)
		fail_msg("got  '%s'\nwant '%s'", buf_cstr(&b), want);
	buf_free(&b);
	json_decref(m);
	json_decref(hw);
	json_decref(o);
}

static const char *const linux_hw = "{\"cpu\": \"AMD EPYC 7B13\", "
    "\"arch\": \"x86_64\", \"cpus\": 2, \"system_memory_bytes\": "
    "8363466752, \"gpu_working_set_hint_bytes\": null}";
static const char *const linux_os = "{\"name\": \"Linux\", \"release\": "
    "\"6.1.0-27-cloud-amd64\"}";

static void
test_row(void **state)
{
	(void)state;
	expect_machine(linux_hw, linux_os, REPORT_MACHINE_ROW,
	    "| 0123456789abcdef | AMD EPYC 7B13 (x86_64) | 2 | 7.8 | - | "
	    "Linux 6.1.0-27-cloud-amd64 |\n");
	expect_machine("{\"cpu\": \"Apple M3 Max\", \"arch\": \"arm64\", "
	    "\"cpus\": 16, \"system_memory_bytes\": 137438953472, "
	    "\"gpu_working_set_hint_bytes\": 115964116992}",
	    "{\"name\": \"Darwin\", \"release\": \"24.6.0\"}",
	    REPORT_MACHINE_ROW, "| 0123456789abcdef | Apple M3 Max (arm64) | "
	    "16 | 128.0 | 108.0 | Darwin 24.6.0 |\n");
}

static void
test_line(void **state)
{
	(void)state;
	expect_machine(linux_hw, linux_os, REPORT_MACHINE_LINE,
	    "Machine `0123456789abcdef`: AMD EPYC 7B13 (x86_64), 2 cores, "
	    "7.8 GiB, Linux 6.1.0-27-cloud-amd64.");
}

/* Runs and journals recorded before the names were one say memory_bytes. */
static void
test_older_memory_name(void **state)
{
	(void)state;
	expect_machine("{\"cpu\": \"c\", \"arch\": \"a\", \"cpus\": 4, "
	    "\"memory_bytes\": 17179869184}", linux_os, REPORT_MACHINE_LINE,
	    "Machine `0123456789abcdef`: c (a), 4 cores, 16.0 GiB, "
	    "Linux 6.1.0-27-cloud-amd64.");
	expect_machine("{\"cpu\": \"c\", \"arch\": \"a\", \"cpus\": 4, "
	    "\"memory_bytes\": 17179869184}", linux_os, REPORT_MACHINE_ROW,
	    "| 0123456789abcdef | c (a) | 4 | 16.0 | - | "
	    "Linux 6.1.0-27-cloud-amd64 |\n");
}

/* A CPU name is the machine's text: a '|' cannot open a column. */
static void
test_quoted(void **state)
{
	(void)state;
	expect_machine("{\"cpu\": \"a|b\", \"arch\": \"x\", \"cpus\": 1, "
	    "\"system_memory_bytes\": 0}", "{}", REPORT_MACHINE_ROW,
	    "| 0123456789abcdef | a\\|b (x) | 1 | 0.0 | - |   |\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_older_memory_name),
		cmocka_unit_test(test_quoted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
