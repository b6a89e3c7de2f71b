/* Unit tests of schema validation, source positions and the policy and
 * adapter loaders: every problem reported, with line, column and field. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "adapter.h"
#include "jsonloc.h"
#include "policy.h"
#include "schema.h"

static void
test_jsonloc_finds_nested_values(void **state)
{
	const char *t = "{\n  \"a\": {\"b\": [1,\n    2, {\"c\": true}]}\n}";
	struct jsonloc_seg p[] = { { "a", 0 }, { "b", 0 }, { NULL, 2 }, { "c", 0 } };
	int line, col;

	(void)state;
	assert_int_equal(jsonloc_find(t, strlen(t), p, 4, 0, &line, &col), 0);
	assert_int_equal(line, 3);
	assert_int_equal(col, 14);
	assert_int_equal(jsonloc_find(t, strlen(t), p, 4, 1, &line, &col), 0);
	assert_int_equal(col, 9);
	p[0].key = "zz";
	assert_int_equal(jsonloc_find(t, strlen(t), p, 1, 0, &line, &col), -1);
}

static void
test_default_policy_is_valid_siliconbench(void **state)
{
	struct policy *p = NULL;
	struct werr *err;
	const char *t = policy_default_text();

	(void)state;
	err = policy_load_buffer(&p, t, strlen(t), "policy/warden.json", NULL);
	assert_null(err);
	assert_int_equal(p->caps.request_timeout_s, 300);
	assert_int_equal(p->caps.engine_wall_s, 3600);
	assert_int_equal(p->caps.warmups, 3);
	assert_int_equal(p->gates.completion_min, 90);
	assert_int_equal(p->campaign.n_concurrency, 3);
	assert_int_equal(p->campaign.concurrency[2], 16);
	assert_true(p->campaign.server_per_level);
	assert_int_equal(policy_roster(p, "siliconbench")->engines.n, 9);
	assert_true(strlist_contains(&p->allowlist, "adapters/engines/**"));
	policy_free(p);
}

static void
test_policy_reports_every_problem(void **state)
{
	const char *t =
	    "{\"schema\": 1, \"allowlist\": 5, \"bogus\": true}";
	struct problems probs = { NULL, 0, 0 };
	struct policy *p = NULL;
	struct werr *err;

	(void)state;
	err = policy_load_buffer(&p, t, strlen(t), "w.json", &probs);
	assert_non_null(err);
	assert_null(p);
	/* allowlist type, bogus unknown, and every missing section. */
	assert_true(probs.n >= 3);
	assert_string_equal(probs.v[0].field, "allowlist");
	assert_string_equal(probs.v[0].msg, "must be an array");
	assert_int_equal(probs.v[0].col, 28);
	assert_string_equal(probs.v[1].field, "bogus");
	assert_string_equal(probs.v[1].msg, "is not a known field");
	assert_non_null(strstr(err->msg, "more problem"));
	werr_free(err);
	problems_free(&probs);
}

static void
test_invalid_json_names_line_and_column(void **state)
{
	const char *t = "{\n\"schema\": 1,\n\"x\": [1, 2,]\n}";
	struct problems probs = { NULL, 0, 0 };
	struct policy *p = NULL;
	struct werr *err;

	(void)state;
	err = policy_load_buffer(&p, t, strlen(t), "w.json", &probs);
	assert_non_null(err);
	assert_int_equal(probs.n, 1);
	assert_int_equal(probs.v[0].line, 3);
	assert_non_null(strstr(probs.v[0].msg, "invalid JSON"));
	werr_free(err);
	problems_free(&probs);
}

static void
test_adapter_placeholders_checked(void **state)
{
	struct buf why = BUF_INIT;

	(void)state;
	assert_int_equal(adapter_check_placeholders("--port={port}", &why), 0);
	assert_int_equal(adapter_check_placeholders("{model_path}:{ctx}", &why), 0);
	assert_int_equal(adapter_check_placeholders("{prot}", &why), -1);
	assert_string_equal(buf_cstr(&why), "has unknown placeholder '{prot}'");
	buf_reset(&why);
	assert_int_equal(adapter_check_placeholders("{port", &why), -1);
	buf_free(&why);
}

static void
test_example_adapter_and_profile_load(void **state)
{
	struct adapter *a = NULL;
	struct profile *p = NULL;
	const char *t = adapter_example_text();

	(void)state;
	assert_null(adapter_load_buffer(&a, t, strlen(t),
	    "adapters/engines/example-sim.json", NULL));
	assert_string_equal(a->name, "example-sim");
	assert_int_equal(a->source.kind, SOURCE_NONE);
	assert_string_equal(a->serve.health, "/health");
	assert_int_equal(adapter_split(a, "agent")->ctx, 16384);
	assert_null(adapter_split(a, "chat"));
	t = profile_example_text();
	assert_null(profile_load_buffer(&p, t, strlen(t),
	    "adapters/profiles/qwen3-0.6b.json", NULL));
	assert_string_equal(profile_engine(p, "example-sim")->model, "Qwen/Qwen3-0.6B");
	adapter_free(a);
	profile_free(p);
}

static void
test_adapter_name_must_match_file(void **state)
{
	struct problems probs = { NULL, 0, 0 };
	struct adapter *a = NULL;
	struct werr *err;
	const char *t = adapter_example_text();

	(void)state;
	err = adapter_load_buffer(&a, t, strlen(t), "adapters/engines/other.json", &probs);
	assert_non_null(err);
	assert_int_equal(probs.n, 1);
	assert_string_equal(probs.v[0].field, "name");
	assert_int_equal(probs.v[0].line, 3);
	werr_free(err);
	problems_free(&probs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonloc_finds_nested_values),
		cmocka_unit_test(test_default_policy_is_valid_siliconbench),
		cmocka_unit_test(test_policy_reports_every_problem),
		cmocka_unit_test(test_invalid_json_names_line_and_column),
		cmocka_unit_test(test_adapter_placeholders_checked),
		cmocka_unit_test(test_example_adapter_and_profile_load),
		cmocka_unit_test(test_adapter_name_must_match_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
