/*
 * context.c - the agent's task: the problem (validated, whoever wrote
 * it: `--engine` here, triage for incidents), and the task context file
 * the agent reads, written outside its worktree. See agent.h for the
 * problem's fields.
 *
 * The problem is data shown to the agent; nothing in it is executed or
 * used as a path by warden (log tails are read here, from paths the
 * store recorded, before the problem is written). Never prints.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-private.h"
#include "campaign-report.h"
#include "regress/regress.h"
#include "review-smoke.h"
#include "schema.h"
#include "store.h"
#include "store-agent.h"
#include "triage/triage.h"
#include "util.h"

#define LOG_TAIL_BYTES 4096

static const struct schema s_str = { .type = SCHEMA_STRING, .has_min = 1, .min = 1 };
static const struct schema s_text = { .type = SCHEMA_STRING, .nullable = 1 };
static const struct schema s_strs1 = { .type = SCHEMA_ARRAY, .items = &s_str,
    .has_min = 1, .min = 1 };
static const struct schema s_int = { .type = SCHEMA_INTEGER, .nullable = 1,
    .has_min = 1, .min = 0 };
static const struct schema s_any = { .type = SCHEMA_ANY };
static const struct schema s_anys = { .type = SCHEMA_ARRAY, .items = &s_any };
static const char *const kinds[] = { "engine", "incident", NULL };
static const struct schema s_kind = { .type = SCHEMA_STRING, .one_of = kinds };
static const struct schema s_pos = { .type = SCHEMA_INTEGER, .has_min = 1, .min = 1 };

static const struct schema_field f_culprit[] = {
	{ "package", &s_str, 1 },
	{ "from", &s_text, 0 },
	{ "to", &s_text, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_culprit = { .type = SCHEMA_OBJECT, .fields = f_culprit };

static const struct schema s_manifest = { .type = SCHEMA_MAP, .items = &s_str };
static const struct schema_field f_version[] = {
	{ "before", &s_manifest, 0 },
	{ "after", &s_manifest, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_version = { .type = SCHEMA_OBJECT, .fields = f_version };
static const struct schema s_versions = { .type = SCHEMA_MAP, .items = &s_version };

static const struct schema_field f_pin[] = {
	{ "engine", &s_str, 1 },
	{ "pin", &s_str, 1 },
	{ NULL, NULL, 0 },
};
static const struct schema s_pin = { .type = SCHEMA_OBJECT, .fields = f_pin };

/* The figures of a regressed series (triage's cells of outcome
 * "regression", from regress_cycle_regressed): before and after are
 * measurements, never null nor negative; the percentages and the
 * p-value may be unknown (null); state is the alert's. */
static const struct schema s_figure = { .type = SCHEMA_NUMBER, .has_min = 1,
    .min = 0 };
static const struct schema s_pct = { .type = SCHEMA_NUMBER, .nullable = 1 };
static const struct schema s_p_value = { .type = SCHEMA_NUMBER,
    .nullable = 1, .has_min = 1, .min = 0, .has_max = 1, .max = 1 };
static const struct schema s_unit = { .type = SCHEMA_STRING };
static const struct schema s_alert_state = { .type = SCHEMA_STRING,
    .one_of = regress_states };

static const struct schema_field f_cell[] = {
	{ "engine", &s_str, 1 },
	{ "model", &s_text, 0 },
	{ "split", &s_text, 0 },
	{ "concurrency", &s_int, 0 },
	{ "outcome", &s_text, 0 },
	{ "status", &s_text, 0 },
	{ "detail", &s_text, 0 },
	{ "completed", &s_int, 0 },
	{ "total", &s_int, 0 },
	{ "run_id", &s_text, 0 },
	{ "log_path", &s_text, 0 },
	{ "log_tail", &s_text, 0 },
	/* outcome "regression": the regressed series */
	{ "metric", &s_str, 0 },
	{ "before", &s_figure, 0 },
	{ "after", &s_figure, 0 },
	{ "unit", &s_unit, 0 },
	{ "worse_pct", &s_pct, 0 },
	{ "threshold_pct", &s_pct, 0 },
	{ "p_value", &s_p_value, 0 },
	{ "alert", &s_pos, 0 },
	{ "state", &s_alert_state, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_cell = { .type = SCHEMA_OBJECT, .fields = f_cell };
static const struct schema s_cells = { .type = SCHEMA_ARRAY, .items = &s_cell };

static const struct schema_field f_problem[] = {
	{ "kind", &s_kind, 1 },
	{ "summary", &s_str, 1 },
	{ "engines", &s_strs1, 1 },
	{ "incident", &s_pos, 0 },
	{ "culprit", &s_culprit, 0 },
	{ "versions", &s_versions, 0 },
	{ "proposed_pin", &s_pin, 0 },
	{ "evidence", &s_anys, 0 },
	{ "failing_cells", &s_cells, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_problem = { .type = SCHEMA_OBJECT, .fields = f_problem };

struct werr *
agent_task_set(struct agent_task *t, const char *kind, const char *ref,
    json_t *problem)
{
	struct problems probs = { NULL, 0, 0 };
	struct werr *err = NULL;
	char *name = xasprintf("%s %s: problem", kind, ref);

	memset(t, 0, sizeof(*t));
	if (schema_validate(&s_problem, problem, NULL, 0, name, &probs) > 0)
		err = problems_to_werr(&probs);
	else if (strcmp(json_string_value(json_object_get(problem, "kind")),
	    kind) != 0)
		err = werr_new(WEXIT_INPUT, "%s: 'kind' must be '%s'", name,
		    kind);
	problems_free(&probs);
	free(name);
	if (err != NULL)
		return err;
	t->kind = xstrdup(kind);
	t->ref = xstrdup(ref);
	t->problem = json_incref(problem);
	return NULL;
}

void
agent_task_free(struct agent_task *t)
{
	free(t->kind);
	free(t->ref);
	json_decref(t->problem);
	memset(t, 0, sizeof(*t));
}

/* The last LOG_TAIL_BYTES of a log, from its first whole line. */
static char *
log_tail(const char *path)
{
	struct buf b = BUF_INIT;
	struct stat st;
	char *nl;
	ssize_t n;
	int fd;

	if (path == NULL || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > LOG_TAIL_BYTES)
		(void)lseek(fd, st.st_size - LOG_TAIL_BYTES, SEEK_SET);
	buf_grow(&b, LOG_TAIL_BYTES + 1);
	n = read(fd, b.data, LOG_TAIL_BYTES);
	close(fd);
	if (n <= 0) {
		buf_free(&b);
		return NULL;
	}
	b.len = (size_t)n;
	b.data[b.len] = '\0';
	if (st.st_size > LOG_TAIL_BYTES && (nl = memchr(b.data, '\n',
	    b.len)) != NULL)
		buf_consume(&b, (size_t)(nl + 1 - b.data));
	/* Bytes that are not text would break the JSON record. */
	for (n = 0; (size_t)n < b.len; n++)
		if ((unsigned char)b.data[n] >= 0x80 || (b.data[n] < 0x20 &&
		    b.data[n] != '\n' && b.data[n] != '\t'))
			b.data[n] = '?';
	return buf_detach(&b);
}

/* A manifest as {PKG: VERSION} strings only, or NULL. */
static json_t *
manifest(json_t *provenance)
{
	json_t *m = json_object_get(provenance, "engine_manifest");
	json_t *pk = json_object_get(m, "packages"), *out, *v;
	const char *k;

	if (json_is_object(pk))
		m = pk;
	if (!json_is_object(m) || json_object_size(m) == 0)
		return NULL;
	out = json_object();
	json_object_foreach(m, k, v)
		if (json_is_string(v) && json_string_length(v) > 0)
			json_object_set(out, k, v);
	return out;
}

struct werr *
agent_task_engine(struct agent_task *t, struct store *store,
    const struct policy *pol, const char *engine)
{
	json_t *sweeps = NULL, *cells = json_array(), *problem = NULL, *s;
	json_t *good = NULL, *before = NULL, *after = NULL;
	const char *run_id = NULL;
	struct werr *err;
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!policy_engine_roster(pol, engine)) {
		err = werr_new(WEXIT_INPUT, "engine '%s' is in no roster of "
		    "the official policy", engine);
		goto out;
	}
	if ((err = store_agent_engine_sweeps(store, engine, &sweeps)) != NULL)
		goto out;
	json_array_foreach(sweeps, i, s) {
		char *tail;
		json_t *c;

		run_id = json_string_value(json_object_get(s, "run_id"));
		if (!review_sweep_failed(s, pol))
			continue;
		c = json_pack("{s:s, s:O, s:O, s:O, s:O, s:s, s:O, s:O, s:O, "
		    "s:O, s:O}", "engine", engine,
		    "model", json_object_get(s, "model"),
		    "split", json_object_get(s, "split"),
		    "concurrency", json_object_get(s, "concurrency"),
		    "outcome", json_object_get(s, "outcome"),
		    "status", campaign_level_status(s, pol),
		    "detail", json_object_get(s, "detail"),
		    "completed", json_object_get(s, "completed"),
		    "total", json_object_get(s, "total"),
		    "run_id", json_object_get(s, "run_id"),
		    "log_path", json_object_get(s, "log_path"));
		tail = log_tail(json_string_value(json_object_get(s,
		    "log_path")));
		if (tail != NULL)
			json_object_set_new(c, "log_tail", json_string(tail));
		free(tail);
		if (after == NULL)
			after = manifest(json_object_get(s, "provenance"));
		json_array_append_new(cells, c);
	}
	problem = json_pack("{s:s, s:s, s:[s]}", "kind", "engine",
	    "summary", "", "engines", engine);
	if (json_array_size(sweeps) == 0) {
		char *sum = xasprintf("engine %s: no campaign run has it yet",
		    engine);

		json_object_set_new(problem, "summary", json_string(sum));
		free(sum);
	} else {
		char *sum = xasprintf("engine %s: %zu of %zu cells failing in "
		    "campaign run %s", engine, json_array_size(cells),
		    json_array_size(sweeps), run_id);

		json_object_set_new(problem, "summary", json_string(sum));
		free(sum);
		json_object_set(problem, "failing_cells", cells);
		if (after != NULL && (err = store_agent_last_good(store, engine,
		    run_id, &good)) == NULL && good != NULL &&
		    (before = manifest(good)) != NULL)
			json_object_set_new(problem, "versions", json_pack(
			    "{s:{s:O, s:O}}", engine, "before", before,
			    "after", after));
		if (err != NULL)
			goto out;
	}
	err = agent_task_set(t, "engine", engine, problem);
out:
	json_decref(sweeps);
	json_decref(cells);
	json_decref(problem);
	json_decref(good);
	json_decref(before);
	json_decref(after);
	return err;
}

/* The task of `--incident N`: the incident's problem as triage records
 * it (triage.h: triage_incident_problem), each failing cell with the
 * tail of its engine's log, as an engine's task has it. */
struct werr *
agent_task_incident(struct agent_task *t, struct store *store,
    int64_t incident)
{
	struct werr *err;
	json_t *problem = NULL, *c;
	char *ref, *tail;
	size_t i;

	memset(t, 0, sizeof(*t));
	if ((err = triage_incident_problem(&problem, store, incident)) != NULL)
		return err;
	json_array_foreach(json_object_get(problem, "failing_cells"), i, c) {
		if (json_object_get(c, "log_tail") != NULL)
			continue;
		tail = log_tail(json_string_value(json_object_get(c,
		    "log_path")));
		if (tail != NULL)
			json_object_set_new(c, "log_tail", json_string(tail));
		free(tail);
	}
	ref = xasprintf("%lld", (long long)incident);
	err = agent_task_set(t, "incident", ref, problem);
	free(ref);
	json_decref(problem);
	return err;
}

/* ---- the task context ---- */

/* A string field of o, or "-". */
static const char *
field(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

static void
json_block(struct buf *out, const json_t *v)
{
	char *text = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	buf_printf(out, "```json\n%s\n```\n\n", text != NULL ? text : "null");
	free(text);
}

static void
versions_section(struct buf *out, const json_t *versions)
{
	const char *engine, *pkg;
	json_t *ev, *v;

	buf_puts(out, "## Version diff\n\n");
	json_object_foreach((json_t *)versions, engine, ev) {
		json_t *b = json_object_get(ev, "before");
		json_t *a = json_object_get(ev, "after");

		buf_printf(out, "%s:\n\n| package | before | after |\n"
		    "|---|---|---|\n", engine);
		json_object_foreach(a, pkg, v) {
			const char *old = json_string_value(json_object_get(b,
			    pkg));

			if (old == NULL || strcmp(old, json_string_value(v)) != 0)
				buf_printf(out, "| %s | %s | %s |\n", pkg,
				    old ? old : "-", json_string_value(v));
		}
		json_object_foreach(b, pkg, v)
			if (json_object_get(a, pkg) == NULL)
				buf_printf(out, "| %s | %s | - |\n", pkg,
				    json_string_value(v));
		buf_addch(out, '\n');
	}
}

/* A number of o with prec decimals (%g when negative) and suffix, or
 * "-" where it has none. */
static void
number(struct buf *out, const json_t *o, const char *key, int prec,
    const char *suffix)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		buf_addch(out, '-');
	else if (prec < 0)
		buf_printf(out, "%g%s", json_number_value(v), suffix);
	else
		buf_printf(out, "%.*f%s", prec, json_number_value(v), suffix);
}

/* The figures of the regressed series among the cells (those with a
 * metric), or nothing when there is none. */
static void
regressions_section(struct buf *out, const json_t *cells)
{
	json_t *c;
	size_t i;
	int any = 0;

	json_array_foreach((json_t *)cells, i, c) {
		if (json_object_get(c, "metric") == NULL)
			continue;
		if (!any++)
			buf_puts(out, "## Regressed series\n\nEvery request "
			    "completed, but a metric is worse than its "
			    "published figure by at least the threshold. "
			    "before: the published figure; after: this "
			    "cycle's; worse: by how much, in percent; alert: "
			    "the regression alert's number.\n\n"
			    "| engine | model | split | c | metric | before | "
			    "after | unit | worse | threshold | alert |\n"
			    "|---|---|---|---|---|---|---|---|---|---|---|\n");
		buf_printf(out, "| %s | %s | %s | %lld | %s | ",
		    field(c, "engine"), field(c, "model"), field(c, "split"),
		    (long long)json_integer_value(json_object_get(c,
		    "concurrency")), field(c, "metric"));
		number(out, c, "before", 1, "");
		buf_puts(out, " | ");
		number(out, c, "after", 1, "");
		buf_printf(out, " | %s | ", field(c, "unit"));
		number(out, c, "worse_pct", 0, " %");
		buf_puts(out, " | ");
		number(out, c, "threshold_pct", -1, " %");
		buf_puts(out, " | ");
		number(out, c, "alert", 0, "");
		buf_puts(out, " |\n");
	}
	if (any)
		buf_addch(out, '\n');
}

static void
cells_section(struct buf *out, const json_t *cells)
{
	json_t *c;
	size_t i;

	buf_puts(out, "## Failing cells\n\n| engine | model | split | c | "
	    "outcome | completed | status |\n|---|---|---|---|---|---|---|\n");
	json_array_foreach((json_t *)cells, i, c)
		buf_printf(out, "| %s | %s | %s | %lld | %s | %lld/%lld | "
		    "%s |\n",
		    field(c, "engine"), field(c, "model"), field(c, "split"),
		    (long long)json_integer_value(json_object_get(c,
		    "concurrency")),
		    field(c, "outcome"),
		    (long long)json_integer_value(json_object_get(c,
		    "completed")),
		    (long long)json_integer_value(json_object_get(c, "total")),
		    field(c, "status"));
	buf_addch(out, '\n');
	regressions_section(out, cells);
	json_array_foreach((json_t *)cells, i, c) {
		const char *tail = json_string_value(json_object_get(c,
		    "log_tail"));
		const char *detail = json_string_value(json_object_get(c,
		    "detail"));

		if (detail != NULL)
			buf_printf(out, "%s %s c=%lld: %s\n\n",
			    field(c, "engine"), field(c, "split"),
			    (long long)json_integer_value(json_object_get(c,
			    "concurrency")), detail);
		if (tail != NULL)
			buf_printf(out, "Log tail (%s):\n\n```\n%s\n```\n\n",
			    field(c, "log_path"), tail);
	}
}

void
agent_context_text(struct buf *out, const struct agent_paths *p,
    const struct agent_task *t, const struct policy *pol,
    const char *instructions, size_t ilen)
{
	const json_t *pr = t->problem;
	json_t *e;
	size_t i;

	buf_printf(out, "# warden agent run %lld: %s %s\n\n", (long long)p->id,
	    t->kind, t->ref);
	buf_printf(out, "%s\n\n", json_string_value(json_object_get(pr,
	    "summary")));
	buf_printf(out, "- your worktree (the official tip, on branch %s): "
	    "%s\n", p->branch + 11, p->worktree);
	buf_printf(out, "- time limit: %.0f s; then your processes are "
	    "killed\n", pol->agent.time_limit_s);
	buf_printf(out, "- writable: the worktree (not its .git file), "
	    "$HOME=%s, $TMPDIR=%s\n", p->home, p->tmp);
	buf_puts(out, "- engines concerned:");
	json_array_foreach(json_object_get(pr, "engines"), i, e)
		buf_printf(out, " %s", json_string_value(e));
	buf_puts(out, "\n\n");
	if (instructions != NULL) {
		buf_puts(out, "## Instructions\n\n");
		buf_add(out, instructions, ilen);
		if (ilen > 0 && instructions[ilen - 1] != '\n')
			buf_addch(out, '\n');
		buf_addch(out, '\n');
	}
	buf_puts(out, "## What you may change\n\nThe allowlist of the "
	    "official policy (every other path is refused):\n\n");
	for (i = 0; i < pol->allowlist.n; i++)
		buf_printf(out, "- `%s`\n", pol->allowlist.v[i]);
	buf_puts(out, "\nMay carry the executable bit:\n\n");
	for (i = 0; i < pol->executable.n; i++)
		buf_printf(out, "- `%s`\n", pol->executable.v[i]);
	buf_printf(out, "\nAt most %ld files and %ld bytes of patch; %s.\n\n",
	    pol->patch_limits.max_files, pol->patch_limits.max_bytes,
	    pol->patch_limits.allow_binary ? "binary files allowed" :
	    "no binary files");
	if (json_object_get(pr, "culprit") != NULL) {
		buf_puts(out, "## Culprit\n\n");
		json_block(out, json_object_get(pr, "culprit"));
	}
	if (json_object_get(pr, "proposed_pin") != NULL) {
		buf_puts(out, "## Proposed pin\n\n");
		json_block(out, json_object_get(pr, "proposed_pin"));
	}
	if (json_object_get(pr, "versions") != NULL)
		versions_section(out, json_object_get(pr, "versions"));
	if (json_array_size(json_object_get(pr, "failing_cells")) > 0)
		cells_section(out, json_object_get(pr, "failing_cells"));
	if (json_object_get(pr, "evidence") != NULL) {
		buf_puts(out, "## Evidence\n\n");
		json_block(out, json_object_get(pr, "evidence"));
	}
	buf_printf(out, "## The problem as JSON\n\nAlso in %s.\n\n",
	    p->problem);
	json_block(out, pr);
}

struct werr *
agent_context_write(const struct agent_paths *p, const struct agent_task *t,
    const struct policy *pol, const char *instructions, size_t ilen)
{
	struct buf text = BUF_INIT;
	char *json = json_dumps(t->problem, JSON_INDENT(2) |
	    JSON_PRESERVE_ORDER);
	struct werr *err;

	agent_context_text(&text, p, t, pol, instructions, ilen);
	err = file_write_atomic(p->prompt, text.data, text.len);
	if (err == NULL)
		err = file_write_atomic(p->problem, json, strlen(json));
	buf_free(&text);
	free(json);
	return err;
}
