/*
 * test-simengine-config.c - the simulated engine's options come from flags
 * and JSON profiles through one table, bad values are refused with a
 * message naming them, and the broken-versions fault reads a version the
 * way the adapter's environment holds it.
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

#include "simconfig.h"
#include "simversion.h"
#include "util.h"

static char tmpdir[64];

static int
setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-simengine.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int
teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static struct werr *
parse(struct sim_config *c, int argc, char **argv)
{
	struct werr *err;
	int help;

	simconfig_defaults(c);
	err = simconfig_parse_args(c, argc, argv, &help);
	if (err == NULL)
		err = simconfig_validate(c);
	return err;
}

static void
put(const char *name, const char *text)
{
	char *path = path_join(tmpdir, name);
	struct werr *err = file_write_atomic(path, text, strlen(text));

	assert_null(err);
	free(path);
}

static void
test_flags_set_fields(void **state)
{
	char *argv[] = { "sim", "--schedule", "padded", "--itl=2.5", "--crlf",
	    "--max-batch", "8", "--model", "qwen", NULL };
	struct sim_config c;

	assert_null(parse(&c, 9, argv));
	assert_string_equal(c.schedule, "padded");
	assert_true(c.itl_ms == 2.5);
	assert_int_equal(c.crlf, 1);
	assert_int_equal(c.max_batch, 8);
	assert_string_equal(c.model, "qwen");
	assert_int_equal(c.port, 8000);
	simconfig_free(&c);
}

static void expect_error(int, char **, const char *);

static void
test_mode_is_an_alias_of_schedule(void **state)
{
	char *argv[] = { "sim", "--host", "127.0.0.1", "--port", "0", "--model",
	    "m", "--mode", "padded", "--max-batch", "16", NULL };
	char *bad[] = { "sim", "--mode", "fifo", NULL };
	struct sim_config c;

	assert_null(parse(&c, 11, argv));
	assert_string_equal(c.schedule, "padded");
	simconfig_free(&c);
	expect_error(3, bad, "--schedule must be");
}

static void
test_profile_then_flags_override(void **state)
{
	char *path;
	char *argv[] = { "sim", "--config", NULL, "--itl", "7", NULL };
	struct sim_config c;

	put("p.json", "{\"schedule\": \"serial\", \"itl\": 20, \"crlf\": true,"
	    " \"labels\": \"x.jsonl\"}");
	path = path_join(tmpdir, "p.json");
	argv[2] = path;
	assert_null(parse(&c, 5, argv));
	assert_string_equal(c.schedule, "serial");
	assert_true(c.itl_ms == 7);
	assert_int_equal(c.crlf, 1);
	assert_string_equal(c.labels, "x.jsonl");
	simconfig_free(&c);
	free(path);
}

static void
expect_error(int argc, char **argv, const char *want)
{
	struct sim_config c;
	struct werr *err = parse(&c, argc, argv);

	assert_non_null(err);
	if (strstr(err->msg, want) == NULL)
		fail_msg("'%s' does not contain '%s'", err->msg, want);
	assert_int_equal(err->exit, WEXIT_INPUT);
	werr_free(err);
	simconfig_free(&c);
}

static void
test_bad_values_are_refused(void **state)
{
	char *a1[] = { "sim", "--bogus", NULL };
	char *a2[] = { "sim", "--port", "x1", NULL };
	char *a3[] = { "sim", "--schedule", "fifo", NULL };
	char *a4[] = { "sim", "--fail-rate", "1.5", NULL };
	char *a5[] = { "sim", "--mem-policy", "bounded", NULL };
	char *a6[] = { "sim", "--broken-versions", "1.0", NULL };
	char *a7[] = { "sim", "--itl", NULL };

	expect_error(2, a1, "unknown option '--bogus'");
	expect_error(3, a2, "'x1' is not an integer");
	expect_error(3, a3, "--schedule must be");
	expect_error(3, a4, "--fail-rate must be between 0 and 1");
	expect_error(3, a5, "needs --mem-cap-mb");
	expect_error(3, a6, "needs --version-file");
	expect_error(2, a7, "--itl needs a value");
}

static void
test_bad_profile_names_the_key(void **state)
{
	char *argv[] = { "sim", "--config", NULL, NULL };
	struct sim_config c;
	struct werr *err;

	put("bad.json", "{\"itl\": \"fast\"}");
	argv[2] = path_join(tmpdir, "bad.json");
	err = parse(&c, 3, argv);
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "bad.json"));
	assert_non_null(strstr(err->msg, "'itl' must be a number"));
	werr_free(err);
	simconfig_free(&c);
	free(argv[2]);
}

static void
test_version_from_file_and_broken_list(void **state)
{
	char *path, *v;

	put("version", "  0.31.2 \nextra\n");
	path = path_join(tmpdir, "version");
	assert_null(simversion_from_file(&v, path));
	assert_string_equal(v, "0.31.2");
	assert_true(simversion_is_broken(v, "0.31.2,0.31.3"));
	assert_true(simversion_is_broken(v, "0.30.0, 0.31.2"));
	assert_false(simversion_is_broken(v, "0.31.21,0.31"));
	assert_false(simversion_is_broken(v, ""));
	free(v);
	free(path);
}

static void
test_version_from_pip_metadata(void **state)
{
	char *cmd, *spec, *v = NULL;
	struct werr *err;

	cmd = xasprintf("mkdir -p '%s/env/lib/python3.12/site-packages/"
	    "mlx_lm-0.22.0.dist-info' '%s/env/lib/python3.12/site-packages/"
	    "mlx-0.31.2.dist-info'", tmpdir, tmpdir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	put("env/lib/python3.12/site-packages/mlx_lm-0.22.0.dist-info/METADATA",
	    "Metadata-Version: 2.1\nName: mlx-lm\nVersion: 0.22.0\n\nBody\n");
	put("env/lib/python3.12/site-packages/mlx-0.31.2.dist-info/METADATA",
	    "Metadata-Version: 2.1\nName: MLX\nVersion: 0.31.2\n\nName: no\n");
	spec = xasprintf("%s/env:mlx", tmpdir);
	assert_null(simversion_from_pip(&v, spec));
	assert_string_equal(v, "0.31.2");
	free(v);
	free(spec);
	spec = xasprintf("%s/env:MLX_LM", tmpdir);
	assert_null(simversion_from_pip(&v, spec));
	assert_string_equal(v, "0.22.0");
	free(v);
	free(spec);
	spec = xasprintf("%s/env:torch", tmpdir);
	err = simversion_from_pip(&v, spec);
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "package 'torch' is not installed"));
	werr_free(err);
	free(spec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags_set_fields),
		cmocka_unit_test(test_mode_is_an_alias_of_schedule),
		cmocka_unit_test(test_profile_then_flags_override),
		cmocka_unit_test(test_bad_values_are_refused),
		cmocka_unit_test(test_bad_profile_names_the_key),
		cmocka_unit_test(test_version_from_file_and_broken_list),
		cmocka_unit_test(test_version_from_pip_metadata),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
