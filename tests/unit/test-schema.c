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
#include "util.h"

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

static const char step_adapter[] =
"{\"schema\": 1, \"name\": \"svc\", \"api\": \"openai-chat\",\n"
" \"source\": {\"kind\": \"none\"},\n"
" \"serve\": {\"argv\": [\"svc\", \"--port\", \"{port}\"], \"health\": \"/health\",\n"
"  \"pre_start\": [{\"argv\": [\"launchctl\", \"stop\", \"svc\"], \"may_fail\": true,\n"
"                  \"timeout_s\": 10},\n"
"                 {\"argv\": [\"ln\", \"-s\", \"{model_dir}\", \"{scratch}/{model}\"]}],\n"
"  \"stop\": [{\"argv\": [\"rm\", \"-f\", \"{models_dir}/lock\"]}]}}\n";

static void
test_adapter_steps_load(void **state)
{
	struct adapter *a = NULL;

	(void)state;
	assert_null(adapter_load_buffer(&a, step_adapter, strlen(step_adapter),
	    "adapters/engines/svc.json", NULL));
	assert_int_equal(a->serve.n_pre_start, 2);
	assert_true(a->serve.pre_start[0].may_fail);
	assert_int_equal(a->serve.pre_start[0].timeout_s, 10);
	assert_string_equal(a->serve.pre_start[1].argv.v[3], "{scratch}/{model}");
	assert_false(a->serve.pre_start[1].may_fail);
	assert_int_equal(a->serve.pre_start[1].timeout_s, ADAPTER_STEP_TIMEOUT_S);
	assert_int_equal(a->serve.n_stop, 1);
	assert_string_equal(a->serve.stop[0].argv.v[0], "rm");
	adapter_free(a);
}

/* A step needs an argv of known placeholders, a timeout above zero, and
 * nothing else; every problem is reported with its field. */
static void
test_adapter_bad_steps_reported(void **state)
{
	const char *t =
	    "{\"schema\": 1, \"name\": \"svc\", \"api\": \"openai-chat\",\n"
	    " \"source\": {\"kind\": \"none\"},\n"
	    " \"serve\": {\"argv\": [\"svc\"], \"health\": \"/health\",\n"
	    "  \"pre_start\": [{\"may_fail\": true}, {\"argv\": [\"x\"], \"timeout_s\": 0},\n"
	    "                {\"argv\": [\"{nope}\"], \"shell\": true}],\n"
	    "  \"stop\": {\"argv\": [\"x\"]}}}\n";
	struct problems probs = { NULL, 0, 0 };
	struct adapter *a = NULL;
	struct werr *err;
	size_t i;
	int seen = 0;

	(void)state;
	err = adapter_load_buffer(&a, t, strlen(t), "adapters/engines/svc.json",
	    &probs);
	assert_non_null(err);
	assert_null(a);
	for (i = 0; i < probs.n; i++) {
		const char *f = probs.v[i].field, *m = probs.v[i].msg;

		if (strcmp(f, "serve.pre_start[0].argv") == 0 &&
		    strcmp(m, "is required") == 0)
			seen |= 1;
		if (strcmp(f, "serve.pre_start[1].timeout_s") == 0 &&
		    strstr(m, "at least") != NULL)
			seen |= 2;
		if (strcmp(f, "serve.pre_start[2].argv[0]") == 0 &&
		    strstr(m, "unknown placeholder '{nope}'") != NULL)
			seen |= 4;
		if (strcmp(f, "serve.pre_start[2].shell") == 0)
			seen |= 8;
		if (strcmp(f, "serve.stop") == 0 &&
		    strcmp(m, "must be an array") == 0 && probs.v[i].line == 6)
			seen |= 16;
	}
	assert_int_equal(seen, 31);
	werr_free(err);
	problems_free(&probs);
}

static struct werr *
load_entry(struct profile **p, const char *entry, struct problems *probs)
{
	char *t = xasprintf("{\"schema\": 1, \"name\": \"m\", \"hf_id\": \"O/M\",\n"
	    " \"context_length\": 4096,\n"
	    " \"thinking\": {\"supported\": true, \"switch\": \"enable_thinking\"},\n"
	    " \"engines\": {\"e\": %s}}\n", entry);
	struct werr *err = profile_load_buffer(p, t, strlen(t),
	    "adapters/profiles/m.json", probs);

	free(t);
	return err;
}

/* An engine entry names a model, or says why the engine does not serve
 * it, never both; an unsupported entry names no weights. */
static void
test_profile_engine_model_or_unsupported(void **state)
{
	struct problems probs = { NULL, 0, 0 };
	struct profile *p = NULL;
	const struct profile_engine *pe;
	struct werr *err;

	(void)state;
	assert_null(load_entry(&p, "{\"unsupported\": \"no registry tag\"}", NULL));
	pe = profile_engine(p, "e");
	assert_null(pe->model);
	assert_string_equal(pe->unsupported, "no registry tag");
	profile_free(p);
	assert_null(load_entry(&p, "{\"model\": \"m-gguf\", \"repo\": \"o/M-GGUF\","
	    " \"file\": \"M-BF16.gguf\", \"dir\": \"M\"}", NULL));
	pe = profile_engine(p, "e");
	assert_string_equal(pe->repo, "o/M-GGUF");
	assert_string_equal(pe->file, "M-BF16.gguf");
	assert_string_equal(pe->dir, "M");
	assert_null(pe->unsupported);
	profile_free(p);

	err = load_entry(&p, "{\"notes\": \"x\"}", &probs);
	assert_non_null(err);
	assert_int_equal(probs.n, 1);
	assert_string_equal(probs.v[0].field, "engines.e");
	assert_int_equal(probs.v[0].line, 4);
	assert_non_null(strstr(probs.v[0].msg, "needs 'model'"));
	werr_free(err);
	problems_free(&probs);
	err = load_entry(&p, "{\"model\": \"x\", \"unsupported\": \"y\"}", &probs);
	assert_non_null(err);
	assert_non_null(strstr(probs.v[0].msg, "give one of them"));
	werr_free(err);
	problems_free(&probs);
	err = load_entry(&p, "{\"unsupported\": \"y\", \"file\": \"w.gguf\"}", &probs);
	assert_non_null(err);
	assert_non_null(strstr(probs.v[0].msg, "names no weights"));
	werr_free(err);
	problems_free(&probs);
}

/* A loader's error as lint's problem: where werr_at() placed it, else
 * all of its message about the file given. */
static void
test_problems_from_werr(void **state)
{
	struct problems pr = { NULL, 0, 0 };
	struct werr *e[5];
	size_t i;

	(void)state;
	e[0] = werr_at("w/items.jsonl", 3, 7, "id", "must be a string");
	e[1] = werr_at("w/items.jsonl", 12, 0, NULL, "is empty");
	e[2] = werr_at("w/task.json", 0, 0, NULL, "no labels: at all");
	e[3] = werr_new(WEXIT_ENV, "open 'w/x.json': No such file");
	e[4] = werr_at("w/a:b.json", 9, 0, NULL, "odd name");
	assert_string_equal(e[0]->msg, "w/items.jsonl:3:7: 'id' must be a "
	    "string");
	assert_string_equal(e[2]->msg, "w/task.json: no labels: at all");
	for (i = 0; i < 5; i++) {
		problems_add_werr(&pr, "w", e[i]);
		werr_free(e[i]);
	}
	assert_int_equal(pr.n, 5);
	assert_string_equal(pr.v[0].file, "w/items.jsonl");
	assert_int_equal(pr.v[0].line, 3);
	assert_int_equal(pr.v[0].col, 7);
	assert_string_equal(pr.v[0].field, "id");
	assert_string_equal(pr.v[0].msg, "must be a string");
	assert_int_equal(pr.v[0].unusable, 1);
	assert_int_equal(pr.v[1].line, 12);
	assert_int_equal(pr.v[1].col, 0);
	assert_null(pr.v[1].field);
	assert_string_equal(pr.v[1].msg, "is empty");
	assert_string_equal(pr.v[2].file, "w/task.json");
	assert_int_equal(pr.v[2].line, 0);
	assert_string_equal(pr.v[2].msg, "no labels: at all");
	assert_string_equal(pr.v[3].file, "w");
	assert_string_equal(pr.v[3].msg, "open 'w/x.json': No such file");
	assert_int_equal(pr.v[3].unusable, 0);
	assert_string_equal(pr.v[4].file, "w/a:b.json");
	assert_int_equal(pr.v[4].line, 9);
	assert_int_equal(pr.v[4].col, 0);
	problems_free(&pr);
}

static void
test_policy_send_tools_defaults_off(void **state)
{
	struct policy *p = NULL;
	const char *t = policy_default_text();
	char *on;

	(void)state;
	assert_null(policy_load_buffer(&p, t, strlen(t), "policy/warden.json", NULL));
	assert_false(p->campaign.send_tools);
	policy_free(p);
	on = xstrdup(t);
	memcpy(strstr(on, "\"send_tools\": false"), "\"send_tools\": true ", 19);
	assert_null(policy_load_buffer(&p, on, strlen(on), "policy/warden.json", NULL));
	assert_true(p->campaign.send_tools);
	policy_free(p);
	free(on);
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
		cmocka_unit_test(test_adapter_steps_load),
		cmocka_unit_test(test_adapter_bad_steps_reported),
		cmocka_unit_test(test_profile_engine_model_or_unsupported),
		cmocka_unit_test(test_problems_from_werr),
		cmocka_unit_test(test_policy_send_tools_defaults_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
