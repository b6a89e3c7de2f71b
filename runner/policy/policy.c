/*
 * policy.c - load and validate policy/warden.json against its schema
 * (policy-schema.c, the written contract of the file; README.md and
 * warden.1 describe each field) into struct policy, filling defaults.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"

void
strlist_from_json(struct strlist *l, const json_t *arr)
{
	size_t i;
	json_t *v;

	l->n = json_array_size(arr);
	l->v = xcalloc(l->n + 1, sizeof(*l->v));
	json_array_foreach((json_t *)arr, i, v)
		l->v[i] = xstrdup(json_string_value(v));
}

void
strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int
strlist_contains(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

static double
num(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

static const char *
str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static double
num_or(const json_t *obj, const char *key, double dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static char *
str_or_null(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s != NULL ? xstrdup(s) : NULL;
}

/* The `update` section; absent fields take their defaults. */
static void
policy_load_update(struct policy *p, const json_t *u)
{
	const json_t *shims = json_object_get(u, "shims");
	const json_t *index = json_object_get(u, "index");
	const char *key;
	json_t *v, *g;
	size_t i;

	v = json_object_get(u, "python");
	if (v != NULL)
		strlist_from_json(&p->update.python, v);
	else {
		p->update.python.v = xcalloc(2, sizeof(char *));
		p->update.python.v[0] = xstrdup("python3");
		p->update.python.n = 1;
	}
	v = json_object_get(u, "venv_pip");
	p->update.venv_pip = v == NULL || json_is_true(v);
	strlist_from_json(&p->update.shim_pip, json_object_get(shims, "pip"));
	strlist_from_json(&p->update.shim_brew, json_object_get(shims, "brew"));
	p->update.index_url = str_or_null(index, "index_url");
	strlist_from_json(&p->update.find_links, json_object_get(index, "find_links"));
	p->update.no_index = json_is_true(json_object_get(index, "no_index"));
	p->update.json_url = str_or_null(index, "json_url");
	p->update.min_release_age_days = num_or(u, "min_release_age_days", 0);
	strlist_from_json(&p->update.pins, json_object_get(u, "pins"));
	strlist_from_json(&p->update.holds, json_object_get(u, "holds"));
	v = json_object_get(u, "groups");
	p->update.n_groups = json_object_size(v);
	p->update.groups = xcalloc(p->update.n_groups + 1, sizeof(*p->update.groups));
	i = 0;
	json_object_foreach(v, key, g) {
		p->update.groups[i].name = xstrdup(key);
		strlist_from_json(&p->update.groups[i].packages, g);
		i++;
	}
	p->update.shim_timeout_s = num_or(u, "shim_timeout_s", 1800);
	p->update.build_timeout_s = num_or(u, "build_timeout_s", 7200);
	p->update.fetch_model_timeout_s = num_or(u, "fetch_model_timeout_s", 7200);
	p->update.build_jobs = (int)num_or(u, "build_jobs", 0);
	v = json_object_get(u, "mirrors");
	p->update.n_mirrors = json_object_size(v);
	p->update.mirrors = xcalloc(p->update.n_mirrors + 1,
	    sizeof(*p->update.mirrors));
	i = 0;
	json_object_foreach(v, key, g) {
		p->update.mirrors[i].from = xstrdup(key);
		p->update.mirrors[i].to = xstrdup(json_string_value(g));
		i++;
	}
}

static int
bool_or(const json_t *obj, const char *key, int dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* The `cycle` section; absent fields take their defaults. */
static void
policy_load_cycle(struct policy *p, const json_t *c)
{
	const json_t *b = json_object_get(c, "budgets");
	json_t *v;
	size_t i;

	p->cycle.update = bool_or(c, "update", 1);
	p->cycle.fidelity = bool_or(c, "fidelity", 1);
	p->cycle.agent = bool_or(c, "agent", 0);
	p->cycle.publish = bool_or(c, "publish", 0);
	p->cycle.wait_for_review = bool_or(c, "wait_for_review", 1);
	p->cycle.limit = (size_t)num_or(c, "limit", 0);
	p->cycle.fidelity_limit = (size_t)num_or(c, "fidelity_limit", 0);
	v = json_object_get(c, "fidelity_shots");
	p->cycle.n_fidelity_shots = v != NULL ? json_array_size(v) : 2;
	p->cycle.fidelity_shots = xcalloc(p->cycle.n_fidelity_shots,
	    sizeof(int));
	if (v == NULL)
		p->cycle.fidelity_shots[1] = 5;
	for (i = 0; v != NULL && i < p->cycle.n_fidelity_shots; i++)
		p->cycle.fidelity_shots[i] =
		    (int)json_integer_value(json_array_get(v, i));
	p->cycle.agent_runs = (int)num_or(b, "agent_runs", 3);
	p->cycle.triage_smoke_runs = (int)num_or(b, "triage_smoke_runs", 0);
}

const char *const policy_regression_metrics[] = { "output_throughput",
    "median_ttft_ms", "p99_ttft_ms", "median_tpot_ms",
    "peak_engine_memory_bytes", NULL };

const char *
policy_regression_metric(const char *name)
{
	static const char *const old[][2] = {
		{ "ttft_p50", "median_ttft_ms" },
		{ "ttft_p99", "p99_ttft_ms" },
		{ "tpot_p50", "median_tpot_ms" },
		{ "peak_engine_memory", "peak_engine_memory_bytes" },
	};
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; policy_regression_metrics[i] != NULL; i++)
		if (strcmp(name, policy_regression_metrics[i]) == 0)
			return policy_regression_metrics[i];
	for (i = 0; i < sizeof(old) / sizeof(old[0]); i++)
		if (strcmp(name, old[i][0]) == 0)
			return old[i][1];
	return NULL;
}

/* The `regressions` section; absent fields take their defaults. Metrics
 * under their names before the glossary's are read as the glossary's. */
static void
policy_load_regressions(struct policy *p, const json_t *r)
{
	const char *const *all = policy_regression_metrics;
	const json_t *m = json_object_get(r, "metrics");
	const char *name;
	size_t i;

	p->regressions.threshold_pct = num_or(r, "threshold_pct", 10);
	p->regressions.alpha = num_or(r, "alpha", 0.01);
	p->regressions.baseline_cycles = (int)num_or(r, "baseline_cycles", 3);
	p->regressions.min_samples = (int)num_or(r, "min_samples", 5);
	if (m != NULL) {
		strlist_from_json(&p->regressions.metrics, m);
		for (i = 0; i < p->regressions.metrics.n; i++)
			if ((name = policy_regression_metric(
			    p->regressions.metrics.v[i])) != NULL &&
			    strcmp(name, p->regressions.metrics.v[i]) != 0) {
				free(p->regressions.metrics.v[i]);
				p->regressions.metrics.v[i] = xstrdup(name);
			}
		return;
	}
	for (p->regressions.metrics.n = 0; all[p->regressions.metrics.n] !=
	    NULL; p->regressions.metrics.n++)
		;
	p->regressions.metrics.v = xcalloc(p->regressions.metrics.n + 1,
	    sizeof(char *));
	for (i = 0; i < p->regressions.metrics.n; i++)
		p->regressions.metrics.v[i] = xstrdup(all[i]);
}

/* Cross-field rules the schema cannot say. */
static void
policy_check_refs(const struct policy *p, const char *name, const char *text,
    size_t len, struct problems *probs)
{
	size_t i, j;

	if (policy_roster(p, p->default_roster) == NULL)
		problems_add_field(probs, name, text, len, "default_roster",
		    "names roster '%s', which 'rosters' does not define",
		    p->default_roster);
	if (p->agent.time_limit_s <= 0)
		problems_add_field(probs, name, text, len, "agent.time_limit_s",
		    "must be more than 0");
	policy_agent_check(p, name, text, len, probs);
	if (p->publish.require_signature && p->publish.allowed_signers == NULL)
		problems_add_field(probs, name, text, len,
		    "publish.require_signature", "needs "
		    "'publish.allowed_signers' to check signatures against");
	if (p->gates.completion_min > p->gates.completion_of)
		problems_add_field(probs, name, text, len, "gates.completion_min",
		    "must not exceed 'gates.completion_of' (%d)",
		    p->gates.completion_of);
	for (i = 0; i < p->gates.required_models.n; i++)
		if (!strlist_contains(&p->models, p->gates.required_models.v[i]))
			problems_add_field(probs, name, text, len, "gates.required_models",
			    "names model '%s', which 'models' does not list",
			    p->gates.required_models.v[i]);
	for (i = 0; i < p->campaign.splits.n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(p->campaign.splits.v[i], p->campaign.splits.v[j]) == 0)
				problems_add_field(probs, name, text, len, "campaign.splits",
				    "lists '%s' twice", p->campaign.splits.v[i]);
	for (i = 0; i < p->regressions.metrics.n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(p->regressions.metrics.v[i],
			    p->regressions.metrics.v[j]) == 0)
				problems_add_field(probs, name, text, len,
				    "regressions.metrics", "lists '%s' twice",
				    p->regressions.metrics.v[i]);
}

struct werr *
policy_load_buffer(struct policy **out, const char *text, size_t len,
    const char *name, struct problems *probs)
{
	struct problems local = { NULL, 0, 0 };
	struct problems *pp = probs != NULL ? probs : &local;
	size_t before = pp->n, i;
	struct policy *p;
	const char *key;
	json_t *doc, *o, *v;

	*out = NULL;
	if (schema_load(&doc, &policy_schema, text, len, name, pp) != 0)
		goto fail;
	p = xcalloc(1, sizeof(*p));
	p->path = xstrdup(name);
	p->doc = doc;
	strlist_from_json(&p->allowlist, json_object_get(doc, "allowlist"));
	strlist_from_json(&p->executable, json_object_get(doc, "executable"));
	o = json_object_get(doc, "patch_limits");
	p->patch_limits.max_bytes = (long)num(o, "max_bytes");
	p->patch_limits.max_files = (long)num(o, "max_files");
	p->patch_limits.allow_binary = json_is_true(json_object_get(o, "allow_binary"));
	o = json_object_get(doc, "gates");
	p->gates.completion_min = (int)num(o, "completion_min");
	p->gates.completion_of = (int)num(o, "completion_of");
	p->gates.fidelity_band_pp = num(o, "fidelity_band_pp");
	strlist_from_json(&p->gates.required_models, json_object_get(o, "required_models"));
	o = json_object_get(doc, "caps");
	p->caps.request_timeout_s = num(o, "request_timeout_s");
	p->caps.engine_wall_s = num(o, "engine_wall_s");
	p->caps.ready_timeout_s = num(o, "ready_timeout_s");
	p->caps.hang_s = num(o, "hang_s");
	p->caps.stop_grace_s = num(o, "stop_grace_s");
	p->caps.warmups = (int)num(o, "warmups");
	v = json_object_get(o, "max_event_bytes");
	p->caps.max_event_bytes = v != NULL ? (size_t)json_integer_value(v) :
	    POLICY_MAX_EVENT_DEFAULT;
	o = json_object_get(doc, "campaign");
	v = json_object_get(o, "concurrency");
	p->campaign.n_concurrency = json_array_size(v);
	p->campaign.concurrency = xcalloc(p->campaign.n_concurrency, sizeof(int));
	for (i = 0; i < p->campaign.n_concurrency; i++)
		p->campaign.concurrency[i] = (int)json_integer_value(json_array_get(v, i));
	strlist_from_json(&p->campaign.splits, json_object_get(o, "splits"));
	p->campaign.server_per_level = json_is_true(json_object_get(o, "server_per_level"));
	p->campaign.memory_sample_hz = num(o, "memory_sample_hz");
	v = json_object_get(o, "client_realtime");
	p->campaign.client_realtime = v == NULL || json_is_true(v);
	p->campaign.send_tools = json_is_true(json_object_get(o, "send_tools"));
	v = json_object_get(o, "progress_interval_s");
	p->campaign.progress_interval_s = v != NULL ? json_number_value(v) : 30;
	strlist_from_json(&p->models, json_object_get(doc, "models"));
	o = json_object_get(doc, "rosters");
	p->n_rosters = json_object_size(o);
	p->rosters = xcalloc(p->n_rosters, sizeof(*p->rosters));
	i = 0;
	json_object_foreach(o, key, v) {
		p->rosters[i].name = xstrdup(key);
		strlist_from_json(&p->rosters[i].engines, v);
		i++;
	}
	p->default_roster = xstrdup(str(doc, "default_roster"));
	p->official_branch = xstrdup(POLICY_OFFICIAL_DEFAULT);
	o = json_object_get(doc, "agent");
	policy_agent_load(p, o);
	p->agent.time_limit_s = num(o, "time_limit_s");
	p->agent.sandbox = xstrdup(str(o, "sandbox"));
	p->agent.network = xstrdup(str(o, "network") ? str(o, "network") :
	    "https");
	strlist_from_json(&p->agent.readable, json_object_get(o, "readable"));
	p->agent.instructions = str(o, "instructions") ?
	    xstrdup(str(o, "instructions")) : NULL;
	p->agent.queue_on_failure = json_is_true(json_object_get(o,
	    "queue_on_failure"));
	v = json_object_get(json_object_get(o, "smoke"), "concurrency");
	p->agent.smoke_n_concurrency = v ? json_array_size(v) : 1;
	p->agent.smoke_concurrency = xcalloc(p->agent.smoke_n_concurrency,
	    sizeof(int));
	p->agent.smoke_concurrency[0] = 1;
	for (i = 0; v != NULL && i < p->agent.smoke_n_concurrency; i++)
		p->agent.smoke_concurrency[i] =
		    (int)json_integer_value(json_array_get(v, i));
	v = json_object_get(json_object_get(o, "smoke"), "prompts");
	p->agent.smoke_prompts = v ? (int)json_integer_value(v) : 4;
	v = json_object_get(json_object_get(o, "smoke"), "rounds");
	p->agent.smoke_rounds = v ? (int)json_integer_value(v) : 2;
	p->retirement_days = (int)num(doc, "retirement_days");
	p->busy_timeout_ms = (int)num(json_object_get(doc, "store"), "busy_timeout_ms");
	o = json_object_get(doc, "publish");
	if (str(o, "allowed_signers") != NULL)
		p->publish.allowed_signers = xstrdup(str(o, "allowed_signers"));
	p->publish.require_signature = json_is_true(json_object_get(o,
	    "require_signature"));

	policy_load_update(p, json_object_get(doc, "update"));
	policy_load_cycle(p, json_object_get(doc, "cycle"));
	policy_load_regressions(p, json_object_get(doc, "regressions"));
	o = json_object_get(json_object_get(doc, "triage"), "smoke");
	v = json_object_get(o, "concurrency");
	p->triage.smoke_n_concurrency = v ? json_array_size(v) : 1;
	p->triage.smoke_concurrency = xcalloc(p->triage.smoke_n_concurrency,
	    sizeof(int));
	p->triage.smoke_concurrency[0] = 1;
	for (i = 0; v != NULL && i < p->triage.smoke_n_concurrency; i++)
		p->triage.smoke_concurrency[i] =
		    (int)json_integer_value(json_array_get(v, i));
	v = json_object_get(o, "prompts");
	p->triage.smoke_prompts = v ? (int)json_integer_value(v) : 4;
	v = json_object_get(json_object_get(doc, "triage"), "budget");
	p->triage.budget = v ? (int)json_integer_value(v) : 16;
	policy_check_refs(p, name, text, len, pp);
	if (pp->n != before) {
		policy_free(p);
		goto fail;
	}
	problems_free(&local);
	*out = p;
	return NULL;
fail:
	return problems_since_werr(pp, &local, before);
}

struct werr *
policy_load_file(struct policy **out, const char *path, const char *display,
    struct problems *probs)
{
	struct buf text = BUF_INIT;
	struct werr *err;

	*out = NULL;
	if ((err = schema_read_input(&text, path, FILE_MAX_CONFIG)) == NULL)
		err = policy_load_buffer(out, buf_cstr(&text), text.len,
		    display != NULL ? display : path, probs);
	buf_free(&text);
	return err;
}

const struct roster *
policy_roster(const struct policy *policy, const char *name)
{
	size_t i;

	for (i = 0; i < policy->n_rosters; i++)
		if (strcmp(policy->rosters[i].name, name) == 0)
			return &policy->rosters[i];
	return NULL;
}

const struct roster *
policy_engine_roster(const struct policy *policy, const char *engine)
{
	const struct roster *d = policy_roster(policy, policy->default_roster);
	size_t i;

	if (d != NULL && strlist_contains(&d->engines, engine))
		return d;
	for (i = 0; i < policy->n_rosters; i++)
		if (strlist_contains(&policy->rosters[i].engines, engine))
			return &policy->rosters[i];
	return NULL;
}

void
policy_free(struct policy *p)
{
	size_t i;

	if (p == NULL)
		return;
	free(p->path);
	json_decref(p->doc);
	strlist_free(&p->allowlist);
	strlist_free(&p->executable);
	strlist_free(&p->gates.required_models);
	free(p->campaign.concurrency);
	strlist_free(&p->campaign.splits);
	for (i = 0; i < p->n_rosters; i++) {
		free(p->rosters[i].name);
		strlist_free(&p->rosters[i].engines);
	}
	free(p->rosters);
	free(p->default_roster);
	strlist_free(&p->models);
	free(p->official_branch);
	policy_agent_free(p);
	free(p->agent.sandbox);
	free(p->agent.network);
	strlist_free(&p->agent.readable);
	free(p->agent.instructions);
	free(p->agent.smoke_concurrency);
	free(p->triage.smoke_concurrency);
	free(p->publish.allowed_signers);

	strlist_free(&p->update.python);
	strlist_free(&p->update.shim_pip);
	strlist_free(&p->update.shim_brew);
	free(p->update.index_url);
	strlist_free(&p->update.find_links);
	free(p->update.json_url);
	strlist_free(&p->update.pins);
	strlist_free(&p->update.holds);
	for (i = 0; i < p->update.n_groups; i++) {
		free(p->update.groups[i].name);
		strlist_free(&p->update.groups[i].packages);
	}
	free(p->update.groups);
	for (i = 0; i < p->update.n_mirrors; i++) {
		free(p->update.mirrors[i].from);
		free(p->update.mirrors[i].to);
	}
	free(p->update.mirrors);
	free(p->cycle.fidelity_shots);
	strlist_free(&p->regressions.metrics);
	free(p);
}
