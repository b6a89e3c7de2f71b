/*
 * test-agent-task.c - the agent's task as triage will hand it over: an
 * incident's problem (culprit, versions, proposed pin, evidence, failing
 * cells) validates and every part reaches the task context; a malformed
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
		cmocka_unit_test(test_malformed_problems_are_refused),
		cmocka_unit_test(test_argv_placeholders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
