/*
 * policy-schema.c - the written contract of policy/warden.json: the
 * default policy's text (the SiliconBench protocol) and the schema every
 * policy is checked against (policy_schema). README.md and warden.1
 * describe each field. Tables only: loading is policy.c's.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"

static const char default_policy[] =
"{\n"
"  \"schema\": 1,\n"
"  \"allowlist\": [\"adapters/engines/**\", \"adapters/profiles/**\"],\n"
"  \"executable\": [\"adapters/engines/*/*.sh\"],\n"
"  \"patch_limits\": { \"max_bytes\": 1048576, \"max_files\": 200, \"allow_binary\": false },\n"
"  \"gates\": {\n"
"    \"completion_min\": 90,\n"
"    \"completion_of\": 100,\n"
"    \"fidelity_band_pp\": 1.5,\n"
"    \"required_models\": [\"qwen3-0.6b\", \"qwen3.5-0.8b\", \"gemma-4-e4b-it\"]\n"
"  },\n"
"  \"caps\": {\n"
"    \"request_timeout_s\": 300,\n"
"    \"engine_wall_s\": 3600,\n"
"    \"ready_timeout_s\": 600,\n"
"    \"hang_s\": 600,\n"
"    \"stop_grace_s\": 10,\n"
"    \"warmups\": 3\n"
"  },\n"
"  \"campaign\": {\n"
"    \"concurrency\": [1, 8, 16],\n"
"    \"splits\": [\"chat\", \"agent\"],\n"
"    \"server_per_level\": true,\n"
"    \"memory_sample_hz\": 1,\n"
"    \"client_realtime\": true,\n"
"    \"send_tools\": false,\n"
"    \"progress_interval_s\": 30\n"
"  },\n"
"  \"models\": [\"qwen3-0.6b\", \"qwen3.5-0.8b\", \"gemma-4-e4b-it\"],\n"
"  \"rosters\": {\n"
"    \"siliconbench\": [\"llama.cpp\", \"ollama\", \"mlx_lm\", \"vllm-metal\", \"vllm-mlx\",\n"
"                     \"omlx\", \"sglang\", \"hf_transformers\", \"mistral.rs\"]\n"
"  },\n"
"  \"default_roster\": \"siliconbench\",\n"
"  \"agent\": {\n"
"    \"preset\": \"claude-code\",\n"
"    \"time_limit_s\": 3600,\n"
"    \"sandbox\": \"required\",\n"
"    \"env\": [\"PATH\", \"LANG\"],\n"
"    \"instructions\": \"policy/agent-instructions.md\",\n"
"    \"queue_on_failure\": false,\n"
"    \"smoke\": { \"concurrency\": [1], \"prompts\": 4, \"rounds\": 2 }\n"
"  },\n"
"  \"retirement_days\": 60,\n"
"  \"update\": {\n"
"    \"python\": [\"python3\"],\n"
"    \"venv_pip\": true,\n"
"    \"shims\": {},\n"
"    \"index\": { \"index_url\": null, \"find_links\": [], \"no_index\": false,\n"
"               \"json_url\": null },\n"
"    \"min_release_age_days\": 0,\n"
"    \"pins\": [],\n"
"    \"holds\": [],\n"
"    \"groups\": {},\n"
"    \"shim_timeout_s\": 1800,\n"
"    \"build_timeout_s\": 7200,\n"
"    \"fetch_model_timeout_s\": 7200,\n"
"    \"mirrors\": {}\n"
"  },\n"
"  \"cycle\": {\n"
"    \"update\": true,\n"
"    \"fidelity\": true,\n"
"    \"agent\": false,\n"
"    \"publish\": false,\n"
"    \"wait_for_review\": true,\n"
"    \"limit\": 0,\n"
"    \"fidelity_limit\": 0,\n"
"    \"fidelity_shots\": [0, 5],\n"
"    \"budgets\": { \"agent_runs\": 3 }\n"
"  },\n"
"  \"triage\": {\n"
"    \"smoke\": { \"concurrency\": [1], \"prompts\": 4 },\n"
"    \"budget\": 16\n"
"  },\n"
"  \"regressions\": {\n"
"    \"threshold_pct\": 10,\n"
"    \"alpha\": 0.01,\n"
"    \"baseline_cycles\": 3,\n"
"    \"min_samples\": 5,\n"
"    \"metrics\": [\"output_throughput\", \"median_ttft_ms\", \"p99_ttft_ms\", \"median_tpot_ms\",\n"
"                \"peak_engine_memory_bytes\"]\n"
"  },\n"
"  \"store\": { \"busy_timeout_ms\": 5000 }\n"
"}\n";

static const struct schema s_string = { .type = SCHEMA_STRING, .has_min = 1, .min = 1 };
static const struct schema s_strings = { .type = SCHEMA_ARRAY, .items = &s_string };
static const struct schema s_strings1 = { .type = SCHEMA_ARRAY, .items = &s_string,
    .has_min = 1, .min = 1 };
static const struct schema s_bool = { .type = SCHEMA_BOOLEAN };
static const struct schema s_count = { .type = SCHEMA_INTEGER, .has_min = 1, .min = 0 };
static const struct schema s_pos_int = { .type = SCHEMA_INTEGER, .has_min = 1, .min = 1 };
static const struct schema s_seconds = { .type = SCHEMA_NUMBER, .has_min = 1, .min = 0 };
static const struct schema s_percent = { .type = SCHEMA_NUMBER, .has_min = 1, .min = 0,
    .has_max = 1, .max = 100 };
static const struct schema s_event_bytes = { .type = SCHEMA_INTEGER, .has_min = 1,
    .min = 1024, .has_max = 1, .max = 1073741824 };
static const struct schema s_levels = { .type = SCHEMA_ARRAY, .items = &s_pos_int,
    .has_min = 1, .min = 1 };

static const struct schema_field f_patch_limits[] = {
	{ "max_bytes", &s_pos_int, 1 },
	{ "max_files", &s_pos_int, 1 },
	{ "allow_binary", &s_bool, 1 },
	{ NULL, NULL, 0 },
};
static const struct schema s_patch_limits = { .type = SCHEMA_OBJECT, .fields = f_patch_limits };

static const struct schema_field f_gates[] = {
	{ "completion_min", &s_count, 1 },
	{ "completion_of", &s_pos_int, 1 },
	{ "fidelity_band_pp", &s_percent, 1 },
	{ "required_models", &s_strings, 1 },
	{ NULL, NULL, 0 },
};
static const struct schema s_gates = { .type = SCHEMA_OBJECT, .fields = f_gates };

static const struct schema_field f_caps[] = {
	{ "request_timeout_s", &s_seconds, 1 },
	{ "engine_wall_s", &s_seconds, 1 },
	{ "ready_timeout_s", &s_seconds, 1 },
	{ "hang_s", &s_seconds, 1 },
	{ "stop_grace_s", &s_seconds, 1 },
	{ "warmups", &s_count, 1 },
	{ "max_event_bytes", &s_event_bytes, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_caps = { .type = SCHEMA_OBJECT, .fields = f_caps };

static const struct schema_field f_campaign[] = {
	{ "concurrency", &s_levels, 1 },
	{ "splits", &s_strings1, 1 },
	{ "server_per_level", &s_bool, 1 },
	{ "memory_sample_hz", &s_seconds, 1 },
	{ "client_realtime", &s_bool, 0 },
	{ "send_tools", &s_bool, 0 },
	{ "progress_interval_s", &s_seconds, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_campaign = { .type = SCHEMA_OBJECT, .fields = f_campaign };

static const struct schema s_rosters = { .type = SCHEMA_MAP, .items = &s_strings1 };

static const char *const sandbox_modes[] = { "required", "best-effort", "off", NULL };
static const struct schema s_sandbox = { .type = SCHEMA_STRING, .one_of = sandbox_modes };

/* "host", "https", "none": what a sandboxed agent reaches (sandbox.h). */
static const char *const network_rules[] = { "host", "https", "none", NULL };
static const struct schema s_network = { .type = SCHEMA_STRING, .one_of = network_rules };

static int
check_absolute(const json_t *v, struct buf *why)
{
	const char *s = json_string_value(v);

	if (s != NULL && s[0] == '/')
		return 0;
	buf_puts(why, "must be an absolute path");
	return -1;
}
static const struct schema s_abs_path = { .type = SCHEMA_STRING, .check = check_absolute };
static const struct schema s_abs_paths = { .type = SCHEMA_ARRAY, .items = &s_abs_path };

static const struct schema_field f_smoke[] = {
	{ "concurrency", &s_levels, 1 },
	{ "prompts", &s_pos_int, 1 },
	{ NULL, NULL, 0 },
};
static const struct schema s_smoke = { .type = SCHEMA_OBJECT, .fields = f_smoke };
/* A change's smoke (agent.smoke, review smoke, pr-check --smoke): what
 * triage's has, and how many interleaved rounds (before, after, before,
 * after...) measure each side. */
static const struct schema_field f_change_smoke[] = {
	{ "concurrency", &s_levels, 1 },
	{ "prompts", &s_pos_int, 1 },
	{ "rounds", &s_pos_int, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_change_smoke = { .type = SCHEMA_OBJECT,
    .fields = f_change_smoke };

/* The agents warden has a tested configuration for (policy-agent.c). */
static const char *const agent_presets[] = { "claude-code", "codex", NULL };
static const struct schema s_preset = { .type = SCHEMA_STRING, .one_of = agent_presets };

/* An http or https URL, with nothing a TOML string would need escaped. */
static int
check_url(const json_t *v, struct buf *why)
{
	const char *s = json_string_value(v);

	if (s != NULL && (str_startswith(s, "http://") ||
	    str_startswith(s, "https://")) && strpbrk(s, "\"\\ \t\n") == NULL)
		return 0;
	buf_puts(why, "must be an http:// or https:// URL without quotes, "
	    "backslashes or spaces");
	return -1;
}
static const struct schema s_url = { .type = SCHEMA_STRING, .check = check_url };
static const struct schema s_cost = { .type = SCHEMA_NUMBER, .has_min = 1, .min = 0.01 };

static const struct schema_field f_agent[] = {
	{ "preset", &s_preset, 0 },
	{ "command", &s_strings1, 0 },
	{ "gateway", &s_url, 0 },
	{ "model", &s_string, 0 },
	{ "max_turns", &s_pos_int, 0 },
	{ "max_cost_usd", &s_cost, 0 },
	{ "api_retries", &s_count, 0 },
	{ "time_limit_s", &s_seconds, 1 },
	{ "sandbox", &s_sandbox, 1 },
	{ "network", &s_network, 0 },
	{ "readable", &s_abs_paths, 0 },
	{ "env", &s_strings, 0 },
	{ "instructions", &s_string, 0 },
	{ "queue_on_failure", &s_bool, 0 },
	{ "smoke", &s_change_smoke, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_agent = { .type = SCHEMA_OBJECT, .fields = f_agent };

static const struct schema_field f_store[] = {
	{ "busy_timeout_ms", &s_count, 1 },
	{ NULL, NULL, 0 },
};
static const struct schema s_store = { .type = SCHEMA_OBJECT, .fields = f_store };

static const struct schema_field f_publish[] = {
	{ "allowed_signers", &s_string, 0 },
	{ "require_signature", &s_bool, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_publish = { .type = SCHEMA_OBJECT, .fields = f_publish };

int
policy_check_pin_spec(const json_t *v, struct buf *why)
{
	const char *s = json_string_value(v), *eq = strstr(s, "==");

	if (eq == NULL || eq == s || eq[2] == '\0' ||
	    strpbrk(s, " \t<>!~;,") != NULL || strstr(eq + 2, "==") != NULL) {
		buf_puts(why, "must be 'package==version'");
		return -1;
	}
	return 0;
}

static int
check_json_url(const json_t *v, struct buf *why)
{
	if (strstr(json_string_value(v), "{package}") == NULL) {
		buf_puts(why, "must contain '{package}'");
		return -1;
	}
	return 0;
}

static const struct schema s_opt_string = { .type = SCHEMA_STRING, .nullable = 1,
    .has_min = 1, .min = 1 };
static const struct schema s_json_url = { .type = SCHEMA_STRING, .nullable = 1,
    .check = check_json_url };
static const struct schema s_pin_spec = { .type = SCHEMA_STRING, .check = policy_check_pin_spec };
static const struct schema s_pin_specs = { .type = SCHEMA_ARRAY, .items = &s_pin_spec };
static const struct schema s_days = { .type = SCHEMA_NUMBER, .has_min = 1, .min = 0 };
static const struct schema s_timeout = { .type = SCHEMA_NUMBER, .has_min = 1, .min = 0.001 };

static const struct schema_field f_shims[] = {
	{ "pip", &s_strings1, 0 },
	{ "brew", &s_strings1, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_shims = { .type = SCHEMA_OBJECT, .fields = f_shims };

static const struct schema_field f_index[] = {
	{ "index_url", &s_opt_string, 0 },
	{ "find_links", &s_strings, 0 },
	{ "no_index", &s_bool, 0 },
	{ "json_url", &s_json_url, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_index = { .type = SCHEMA_OBJECT, .fields = f_index };
static const struct schema s_groups = { .type = SCHEMA_MAP, .items = &s_strings1 };
static const struct schema s_mirrors = { .type = SCHEMA_MAP, .items = &s_string };

static const struct schema_field f_update[] = {
	{ "python", &s_strings1, 0 },
	{ "venv_pip", &s_bool, 0 },
	{ "shims", &s_shims, 0 },
	{ "index", &s_index, 0 },
	{ "min_release_age_days", &s_days, 0 },
	{ "pins", &s_pin_specs, 0 },
	{ "holds", &s_strings, 0 },
	{ "groups", &s_groups, 0 },
	{ "shim_timeout_s", &s_timeout, 0 },
	{ "build_timeout_s", &s_timeout, 0 },
	{ "fetch_model_timeout_s", &s_timeout, 0 },
	{ "build_jobs", &s_pos_int, 0 },
	{ "mirrors", &s_mirrors, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_update = { .type = SCHEMA_OBJECT, .fields = f_update };

static const struct schema s_shots = { .type = SCHEMA_ARRAY, .items = &s_count,
    .has_min = 1, .min = 1 };

static const struct schema_field f_budgets[] = {
	{ "agent_runs", &s_count, 0 },
	{ "triage_smoke_runs", &s_pos_int, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_budgets = { .type = SCHEMA_OBJECT, .fields = f_budgets };

static const struct schema_field f_cycle[] = {
	{ "update", &s_bool, 0 },
	{ "fidelity", &s_bool, 0 },
	{ "agent", &s_bool, 0 },
	{ "publish", &s_bool, 0 },
	{ "wait_for_review", &s_bool, 0 },
	{ "limit", &s_count, 0 },
	{ "fidelity_limit", &s_count, 0 },
	{ "fidelity_shots", &s_shots, 0 },
	{ "budgets", &s_budgets, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_cycle = { .type = SCHEMA_OBJECT, .fields = f_cycle };
static const struct schema_field f_triage[] = {
	{ "smoke", &s_smoke, 0 },
	{ "budget", &s_pos_int, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_triage = { .type = SCHEMA_OBJECT, .fields = f_triage };

/* Exclusive bounds the schema's inclusive min and max cannot say. */
static int
check_above_zero(const json_t *v, struct buf *why)
{
	if (json_number_value(v) > 0)
		return 0;
	buf_puts(why, "must be more than 0");
	return -1;
}
static int
check_probability(const json_t *v, struct buf *why)
{
	double p = json_number_value(v);

	if (p > 0 && p < 1)
		return 0;
	buf_puts(why, "must be more than 0 and less than 1");
	return -1;
}
/* A metric of regressions.metrics: a glossary name, or the name it had
 * before (policy_regression_metric). */
static int
check_regression_metric(const json_t *v, struct buf *why)
{
	const char *const *m;

	if (policy_regression_metric(json_string_value(v)) != NULL)
		return 0;
	buf_puts(why, "must be one of ");
	for (m = policy_regression_metrics; *m != NULL; m++)
		buf_printf(why, "%s'%s'", m == policy_regression_metrics ? "" :
		    ", ", *m);
	buf_printf(why, ", not '%s'", json_string_value(v));
	return -1;
}
static const struct schema s_regression_metric = { .type = SCHEMA_STRING,
    .check = check_regression_metric };
static const struct schema s_regression_metrics = { .type = SCHEMA_ARRAY,
    .items = &s_regression_metric };
static const struct schema s_threshold_pct = { .type = SCHEMA_NUMBER,
    .check = check_above_zero };
static const struct schema s_alpha = { .type = SCHEMA_NUMBER,
    .check = check_probability };
static const struct schema s_baseline_cycles = { .type = SCHEMA_INTEGER,
    .has_min = 1, .min = 1, .has_max = 1, .max = 100 };
static const struct schema s_min_samples = { .type = SCHEMA_INTEGER,
    .has_min = 1, .min = 2 };
static const struct schema_field f_regressions[] = {
	{ "threshold_pct", &s_threshold_pct, 0 },
	{ "alpha", &s_alpha, 0 },
	{ "baseline_cycles", &s_baseline_cycles, 0 },
	{ "min_samples", &s_min_samples, 0 },
	{ "metrics", &s_regression_metrics, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_regressions = { .type = SCHEMA_OBJECT,
    .fields = f_regressions };

static const struct schema s_schema_version = { .type = SCHEMA_INTEGER, .has_min = 1,
    .min = 1, .has_max = 1, .max = 1 };

/*
 * The official branch is named in one place, the clone's git config
 * (policy_official_branch): a policy that still names it would be read by
 * nobody, so it is refused, where it stands, saying where the name goes.
 */
static int
check_official_branch(const json_t *v, struct buf *why)
{
	(void)v;
	buf_puts(why, "is no longer read: the official branch is named by "
	    "'git config warden.officialBranch' in each clone (default "
	    "'official'); remove the field, and set the git config if it "
	    "named another branch");
	return -1;
}
static const struct schema s_official_branch = { .type = SCHEMA_ANY,
    .check = check_official_branch };

static const struct schema_field f_policy[] = {
	{ "schema", &s_schema_version, 1 },
	{ "allowlist", &s_strings1, 1 },
	{ "executable", &s_strings, 1 },
	{ "patch_limits", &s_patch_limits, 1 },
	{ "gates", &s_gates, 1 },
	{ "caps", &s_caps, 1 },
	{ "campaign", &s_campaign, 1 },
	{ "models", &s_strings1, 1 },
	{ "rosters", &s_rosters, 1 },
	{ "default_roster", &s_string, 1 },
	{ "official_branch", &s_official_branch, 0 },
	{ "agent", &s_agent, 1 },
	{ "retirement_days", &s_pos_int, 1 },
	{ "store", &s_store, 1 },
	{ "publish", &s_publish, 0 },

	{ "update", &s_update, 0 },
	{ "cycle", &s_cycle, 0 },
	{ "triage", &s_triage, 0 },
	{ "regressions", &s_regressions, 0 },
	{ NULL, NULL, 0 },
};
const struct schema policy_schema = { .type = SCHEMA_OBJECT, .fields = f_policy };

const char *
policy_default_text(void)
{
	return default_policy;
}
