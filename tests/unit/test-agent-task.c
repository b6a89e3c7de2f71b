/*
 * test-agent-task.c - the agent's task as triage will hand it over: an
 * incident's problem (culprit, versions, proposed pin, evidence, failing
 * cells) validates and every part reaches the task context, a
 * regression's figures (metric, before, after, how much worse) too; a malformed
 * problem is refused naming its field; argv placeholders expand to the
 * run's paths and an unknown one is refused.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/agent-private.h"
#include "policy.h"
#include "util.h"

static const char incident[] =
"{\"kind\": \"incident\", \"incident\": 7,"
" \"summary\": \"mlx 0.31.2 breaks mlx_lm and vllm-mlx\","
" \"engines\": [\"mlx_lm\", \"vllm-mlx\"],"
" \"culprit\": {\"package\": \"mlx\", \"from\": \"0.31.1\", \"to\": \"0.31.2\"},"
" \"versions\": {\"mlx_lm\": {\"before\": {\"mlx\": \"0.31.1\", \"numpy\": \"2.1\"},"
"   \"after\": {\"mlx\": \"0.31.2\", \"numpy\": \"2.1\"}}},"
" \"proposed_pin\": {\"engine\": \"mlx_lm\", \"pin\": \"mlx==0.31.1\"},"
" \"evidence\": [{\"smoke_with_pin\": \"complete\"}],"
" \"failing_cells\": [{\"engine\": \"mlx_lm\", \"model\": \"qwen3-0.6b\","
"   \"split\": \"chat\", \"concurrency\": 8, \"outcome\": \"server_crash\","
"   \"completed\": 0, \"total\": 100, \"log_tail\": \"Segmentation fault\"}]}";

/* A performance regression's incident, as triage records it: every
 * request completed, the failing cells are the regressed series. */
static const char regression[] =
"{\"kind\": \"incident\", \"incident\": 4,"
" \"summary\": \"shared 1.0 \u2192 2.0 broke slowy\","
" \"engines\": [\"slowy\"],"
" \"failing_cells\": [{\"engine\": \"slowy\", \"model\": \"qwen3-0.6b\","
"   \"split\": \"chat\", \"concurrency\": 1, \"outcome\": \"regression\","
"   \"status\": \"ok\", \"completed\": 8, \"total\": 8,"
"   \"detail\": \"median_ttft_ms 41.0 \u2192 95.5 ms (133 % worse than published,"
" threshold 25 %): regression alert 3\","
"   \"metric\": \"median_ttft_ms\", \"before\": 41.04, \"after\": 95.5,"
"   \"unit\": \"ms\", \"worse_pct\": 132.75, \"threshold_pct\": 25,"
"   \"p_value\": 0.0004, \"alert\": 3, \"state\": \"untriaged\","
"   \"run_id\": \"c2-r1-campaign\", \"log_path\": null}]}";

static struct policy *
policy(void)
{
	struct policy *p = NULL;
	const char *t = policy_default_text();

	assert_null(policy_load_buffer(&p, t, strlen(t), "policy", NULL));
	return p;
}

static void
test_incident_problem_reaches_the_context(void **state)
{
	struct agent_task t;
	struct agent_paths paths;
	struct buf text = BUF_INIT;
	struct policy *pol = policy();
	json_t *doc = json_loads(incident, 0, NULL);

	(void)state;
	assert_non_null(doc);
	assert_null(agent_task_set(&t, "incident", "7", doc));
	agent_paths_init(&paths, "/r", 3);
	agent_context_text(&text, &paths, &t, pol, "Be careful.\n", 12);
	assert_non_null(strstr(text.data, "# warden agent run 3: incident 7\n"));
	assert_non_null(strstr(text.data, "mlx 0.31.2 breaks mlx_lm"));
	assert_non_null(strstr(text.data, "## Instructions\n\nBe careful.\n"));
	assert_non_null(strstr(text.data, "\"pin\": \"mlx==0.31.1\""));
	assert_non_null(strstr(text.data, "| mlx | 0.31.1 | 0.31.2 |"));
	assert_null(strstr(text.data, "| numpy |"));
	assert_non_null(strstr(text.data, "| mlx_lm | qwen3-0.6b | chat | 8 | "
	    "server_crash | 0/100 |"));
	assert_non_null(strstr(text.data, "Segmentation fault"));
	assert_non_null(strstr(text.data, "- `adapters/engines/**`"));
	assert_non_null(strstr(text.data, "/r/.warden/agent/3/problem.json"));
	buf_free(&text);
	agent_paths_free(&paths);
	agent_task_free(&t);
	json_decref(doc);
	policy_free(pol);
}

static void
test_regression_reaches_the_context(void **state)
{
	struct agent_task t;
	struct agent_paths paths;
	struct buf text = BUF_INIT;
	struct policy *pol = policy();
	json_t *doc = json_loads(regression, 0, NULL);

	(void)state;
	assert_non_null(doc);
	assert_null(agent_task_set(&t, "incident", "4", doc));
	agent_paths_init(&paths, "/r", 5);
	agent_context_text(&text, &paths, &t, pol, NULL, 0);
	assert_non_null(strstr(text.data, "| slowy | qwen3-0.6b | chat | 1 | "
	    "regression | 8/8 | ok |\n"));
	assert_non_null(strstr(text.data, "## Regressed series\n"));
	assert_non_null(strstr(text.data, "| engine | model | split | c | "
	    "metric | before | after | unit | worse | threshold | alert |\n"));
	assert_non_null(strstr(text.data, "| slowy | qwen3-0.6b | chat | 1 | "
	    "median_ttft_ms | 41.0 | 95.5 | ms | 133 % | 25 % | 3 |\n"));
	assert_non_null(strstr(text.data, "\"worse_pct\": 132.75"));
	buf_free(&text);
	agent_paths_free(&paths);
	agent_task_free(&t);
	json_decref(doc);

	/* a break's cells have no such table */
	doc = json_loads(incident, 0, NULL);
	assert_null(agent_task_set(&t, "incident", "7", doc));
	agent_paths_init(&paths, "/r", 3);
	agent_context_text(&text, &paths, &t, pol, NULL, 0);
	assert_null(strstr(text.data, "## Regressed series"));
	buf_free(&text);
	agent_paths_free(&paths);
	agent_task_free(&t);
	json_decref(doc);
	policy_free(pol);
}

static void
expect_refused(const char *text, const char *kind, const char *field)
{
	struct agent_task t;
	json_t *doc = json_loads(text, 0, NULL);
	struct werr *err;

	assert_non_null(doc);
	err = agent_task_set(&t, kind, "1", doc);
	assert_non_null(err);
	assert_int_equal(err->exit, WEXIT_INPUT);
	assert_non_null(strstr(err->msg, field));
	werr_free(err);
	json_decref(doc);
}

static void
test_malformed_problems_are_refused(void **state)
{
	(void)state;
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\"}",
	    "incident", "'engines'");
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": []}", "incident", "'engines'");
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"], \"proposed_pin\": {\"engine\": \"e\"}}",
	    "incident", "'proposed_pin.pin'");
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"], \"colour\": 1}", "incident", "'colour'");
	expect_refused("{\"kind\": \"engine\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"]}", "incident", "'kind'");
	/* a regressed series: its figures are numbers, its alert's state
	 * one of the alert states; a cell still has no other field */
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"], \"failing_cells\": [{\"engine\": \"e\", "
	    "\"metric\": \"median_ttft_ms\", \"before\": \"41\"}]}",
	    "incident", "'failing_cells[0].before'");
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"], \"failing_cells\": [{\"engine\": \"e\", "
	    "\"after\": -1}]}", "incident", "'failing_cells[0].after'");
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"], \"failing_cells\": [{\"engine\": \"e\", "
	    "\"state\": \"gone\"}]}", "incident", "'failing_cells[0].state'");
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"], \"failing_cells\": [{\"engine\": \"e\", "
	    "\"metric\": \"\"}]}", "incident", "'failing_cells[0].metric'");
	expect_refused("{\"kind\": \"incident\", \"summary\": \"s\", "
	    "\"engines\": [\"e\"], \"failing_cells\": [{\"engine\": \"e\", "
	    "\"change_pct\": 5}]}", "incident", "'failing_cells[0].change_pct'");
}

static void
test_argv_placeholders(void **state)
{
	struct agent_task t;
	struct agent_paths paths;
	struct policy *pol = policy();
	json_t *doc = json_loads(incident, 0, NULL);
	char **argv = NULL;
	struct werr *err;

	(void)state;
	assert_null(agent_task_set(&t, "incident", "7", doc));
	agent_paths_init(&paths, "/r", 3);
	strlist_free(&pol->agent.command);
	pol->agent.command.v = xcalloc(4, sizeof(char *));
	pol->agent.command.v[0] = xstrdup("agent");
	pol->agent.command.v[1] = xstrdup("--in={worktree}:{incident}{engine}");
	pol->agent.command.v[2] = xstrdup("{prompt_file}");
	pol->agent.command.n = 3;
	assert_null(agent_argv(&argv, pol, &paths, &t));
	assert_string_equal(argv[1], "--in=/r/.warden/worktrees/3:7");
	assert_string_equal(argv[2], "/r/.warden/agent/3/task.md");
	assert_null(argv[3]);
	agent_argv_free(argv);
	free(pol->agent.command.v[2]);
	pol->agent.command.v[2] = xstrdup("{secret}");
	err = agent_argv(&argv, pol, &paths, &t);
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "unknown placeholder '{secret}'"));
	werr_free(err);
	agent_paths_free(&paths);
	agent_task_free(&t);
	json_decref(doc);
	policy_free(pol);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incident_problem_reaches_the_context),
		cmocka_unit_test(test_regression_reaches_the_context),
		cmocka_unit_test(test_malformed_problems_are_refused),
		cmocka_unit_test(test_argv_placeholders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
