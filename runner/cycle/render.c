/*
 * render.c - a cycle journal (the JSON of build.c) as Markdown in the
 * shape of SiliconBench's own journals: Summary; a table per (model,
 * split) of Framework | Status | Notes; Fixes; Broke (the cells that
 * broke, and the changes that landed and that an incident blames: never
 * under Fixes); Skipped, with reasons and prior occurrences; OOM;
 * Regressions (the performance alerts); Suspicious; Timeline. A pure
 * function of the JSON: the journal export calls it, so
 * journals/CYCLE.md is always what the recorded journal says.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "jsonget.h"
#include "quote.h"
#include "results/report.h"
#include "util.h"

/* A figure of a journal entry under its name, or under the one entries
 * written before the names were one carry (journal.jsonl is append-only;
 * doc/glossary.md). */
static json_int_t
journal_bytes(const json_t *o, const char *name, const char *old_name)
{
	return json_object_get(o, name) != NULL ? jsonget_int(o, name) :
	    jsonget_int(o, old_name);
}

/* Text for a table cell or a list item: one line, '|' escaped
 * (quote_md). */
static void
cell_text(struct buf *md, const char *s)
{
	quote_md(md, s);
}

static void
list_strings(struct buf *md, const json_t *arr, const char *none)
{
	const json_t *v;
	size_t i;

	if (json_array_size(arr) == 0)
		buf_puts(md, none);
	json_array_foreach((json_t *)arr, i, v) {
		buf_puts(md, i ? ", " : "");
		if (json_is_integer(v))	/* incidents: their numbers */
			buf_printf(md, "#%lld", (long long)json_integer_value(v));
		else
			cell_text(md, json_is_string(v) ? json_string_value(v) :
			    "?");
	}
}

static void
summary(struct buf *md, const json_t *j)
{
	const json_t *s = json_object_get(j, "summary"), *v, *g;
	const char *key;
	size_t i;
	int n = 0;

	buf_puts(md, "## Summary\n\n");
	buf_printf(md, "- **Cells**: %lld", (long long)jsonget_int(s, "cells"));
	json_object_foreach((json_t *)json_object_get(s, "statuses"), key, v)
		buf_printf(md, "%s%lld %s", n++ ? ", " : " — ",
		    (long long)json_integer_value(v), key);
	buf_puts(md, "\n- **Versions**: ");
	if (json_array_size(json_object_get(s, "versions")) == 0)
		buf_puts(md, "nothing moved");
	json_array_foreach(json_object_get(s, "versions"), i, v) {
		buf_puts(md, i ? "; " : "");
		cell_text(md, jsonget_str(v, "package"));
		buf_addch(md, ' ');
		cell_text(md, json_is_string(json_object_get(v, "old")) ?
		    jsonget_str(v, "old") : "(none)");
		buf_puts(md, " → ");
		cell_text(md, json_is_string(json_object_get(v, "new")) ?
		    jsonget_str(v, "new") : "(removed)");
		buf_puts(md, " (");
		cell_text(md, jsonget_str(v, "engine"));
		if (jsonget_int(j, "rounds") > 1)
			buf_printf(md, ", round %lld",
			    (long long)jsonget_int(v, "round"));
		buf_puts(md, ")");
	}
	json_array_foreach(json_object_get(s, "update_failed"), i, v)
		buf_printf(md, "%s%s: update %s", i ? "; " : "; ",
		    jsonget_str(v, "engine"), jsonget_str(v, "outcome"));
	buf_puts(md, "\n- **Broke**: ");
	if (json_array_size(json_object_get(s, "broke")) == 0)
		buf_puts(md, "nothing");
	json_array_foreach(json_object_get(s, "broke"), i, v)
		buf_printf(md, "%s%s (%s%s)", i ? ", " : "",
		    jsonget_str(v, "cell"), jsonget_str(v, "status"),
		    json_is_true(json_object_get(v, "fixed")) ? ", fixed" : "");
	g = json_object_get(s, "gate");
	buf_puts(md, "\n- **Gate**: passed ");
	list_strings(md, json_object_get(g, "passed"), "none");
	buf_puts(md, "; failed ");
	list_strings(md, json_object_get(g, "failed"), "none");
	buf_puts(md, "; regressions ");
	list_strings(md, json_object_get(g, "regressions"), "none");
	buf_puts(md, "\n- **Incidents**: ");
	if (json_object_get(s, "incidents_opened") == NULL)
		buf_puts(md, "no triage ran");
	else {
		buf_puts(md, "opened ");
		list_strings(md, json_object_get(s, "incidents_opened"), "none");
		buf_puts(md, "; fixed ");
		list_strings(md, json_object_get(s, "incidents_fixed"), "none");
	}
	if ((v = json_object_get(s, "alerts")) != NULL)
		buf_printf(md, "\n- **Regressions**: %lld alert%s opened, %lld "
		    "seen again, %lld fixed", (long long)jsonget_int(v,
		    "opened"), jsonget_int(v, "opened") == 1 ? "" : "s",
		    (long long)jsonget_int(v, "seen"),
		    (long long)jsonget_int(v, "fixed"));
	buf_puts(md, "\n- **Review**: ");
	if (json_array_size(json_object_get(s, "reviews_waiting")) == 0)
		buf_puts(md, "nothing waiting");
	json_array_foreach(json_object_get(s, "reviews_waiting"), i, v) {
		buf_printf(md, "%s#%lld (%s) waiting", i ? "; " : "",
		    (long long)jsonget_int(v, "id"), jsonget_str(v, "source"));
		if (jsonget_str(v, "note")[0] != '\0') {
			buf_puts(md, ": ");
			cell_text(md, jsonget_str(v, "note"));
		}
	}
	v = json_object_get(s, "published");
	if (v != NULL)
		buf_printf(md,
		    "\n- **Published**: snapshot `%s`, commit `%.12s`, "
		    "tag `%s`", jsonget_str(v, "snapshot"),
		    jsonget_str(v, "commit"), jsonget_str(v, "tag"));
	else
		buf_printf(md, "\n- **Not published**: %s",
		    jsonget_str(s, "not_published"));
	buf_printf(md, "\n- **Exit**: %lld (%s)\n\n",
	    (long long)jsonget_int(j, "exit"), jsonget_int(j,
	    "exit") == 0 ? "healthy" : strcmp(jsonget_str(j, "state"),
	    "waiting") == 0 ? "waiting for review" : "something broke");
}

/* The machine and every engine's version, changed this cycle or not. */
static void
versions(struct buf *md, const json_t *j)
{
	const json_t *ran = json_object_get(j, "ran"), *e;
	json_t *machine;
	size_t i;

	if (!json_is_object(ran))
		return;		/* a journal of an older warden */
	machine = report_machine(jsonget_str(ran, "machine"),
	    json_object_get(ran, "hardware"), json_object_get(ran, "os"));
	buf_puts(md, "## Versions\n\n");
	report_md_machine(md, machine, REPORT_MACHINE_LINE);
	json_decref(machine);
	buf_puts(md, "\n\n| Framework | Version | Manifest sha256 | Python | "
	    "Packages | Commit | Recorded in cycle |\n"
	    "|---|---|---|---|--:|---|---|\n");
	json_array_foreach(json_object_get(ran, "engines"), i, e) {
		buf_puts(md, "| ");
		cell_text(md, jsonget_str(e, "engine"));
		if (!json_is_string(json_object_get(e, "manifest_sha256"))) {
			buf_puts(md, " | no version manifest | - | - | - | - "
			    "| - |\n");
			continue;
		}
		buf_puts(md, " | ");
		cell_text(md, json_is_string(json_object_get(e,
		    "engine_version")) ? jsonget_str(e, "engine_version") : "-");
		buf_printf(md, " | `%.12s` | ", jsonget_str(e,
		    "manifest_sha256"));
		cell_text(md, json_is_string(json_object_get(e, "python")) ?
		    jsonget_str(e, "python") : "-");
		buf_printf(md, " | %lld | ", (long long)jsonget_int(e,
		    "packages"));
		if (json_is_string(json_object_get(e, "commit")))
			buf_printf(md, "`%.12s`", jsonget_str(e, "commit"));
		else
			buf_puts(md, "-");
		buf_puts(md, " | ");
		cell_text(md, json_is_string(json_object_get(e, "recorded_in")) ?
		    jsonget_str(e, "recorded_in") : "-");
		buf_puts(md, " |\n");
	}
	buf_puts(md, "\n");
}

static void
splits(struct buf *md, const json_t *j)
{
	const json_t *sp, *c;
	size_t i, k;

	json_array_foreach(json_object_get(j, "splits"), i, sp) {
		buf_printf(md, "## %s / %s\n\n| Framework | Status | Notes |\n"
		    "|---|---|---|\n", jsonget_str(sp, "model"),
		    jsonget_str(sp, "split"));
		json_array_foreach(json_object_get(sp, "cells"), k, c) {
			buf_puts(md, "| ");
			cell_text(md, jsonget_str(c, "engine"));
			buf_printf(md, " | %s | ", jsonget_str(c, "status"));
			cell_text(md, jsonget_str(c, "notes"));
			buf_puts(md, " |\n");
		}
		buf_puts(md, "\n");
	}
}

/* "review #3 (community) approved by M at T, commit `c`: note
 * (evidence: smoke)" */
static void
approved_text(struct buf *md, const json_t *r)
{
	const json_t *k;
	size_t i;

	buf_printf(md, "- review #%lld (%s) approved by %s at %s, commit "
	    "`%.12s`", (long long)jsonget_int(r, "id"), jsonget_str(r,
	    "source"), jsonget_str(r, "decided_by"), jsonget_str(r, "decided"),
	    jsonget_str(r, "merged_commit"));
	if (jsonget_str(r, "note")[0] != '\0') {
		buf_puts(md, ": ");
		cell_text(md, jsonget_str(r, "note"));
	}
	if (json_object_get(r, "evidence") == NULL)
		return;		/* a journal of before the field */
	if (json_array_size(json_object_get(r, "evidence")) == 0)
		buf_puts(md, " (no evidence attached)");
	else {
		buf_puts(md, " (evidence:");
		json_array_foreach(json_object_get(r, "evidence"), i, k)
			buf_printf(md, "%s %s", i ? "," : "",
			    json_string_value(k));
		buf_puts(md, ")");
	}
	/* its measured effect, as its smoke judged it */
	json_array_foreach(json_object_get(r, "effect"), i, k) {
		buf_puts(md, i ? "; " : "; measured: ");
		cell_text(md, json_string_value(k));
	}
}

static void
fixes(struct buf *md, const json_t *j)
{
	const json_t *a, *r;
	size_t i;
	int n = 0;

	buf_puts(md, "## Fixes\n\n");
	json_array_foreach(json_object_get(j, "agent"), i, a) {
		buf_printf(md, "- agent on `%s`", jsonget_str(a, "task"));
		if (jsonget_int(a, "agent_run") > 0)
			buf_printf(md, " (run %lld)", (long long)jsonget_int(a,
			    "agent_run"));
		buf_printf(md, ": %s", json_is_string(json_object_get(a,
		    "state")) ? jsonget_str(a, "state") : "interrupted");
		if (jsonget_int(a, "review") > 0)
			buf_printf(md, ", review #%lld (%s)",
			    (long long)jsonget_int(a, "review"),
			    jsonget_str(a, "review_status"));
		buf_puts(md, "\n");
		n++;
	}
	json_array_foreach(json_object_get(j, "approved"), i, r) {
		if (json_array_size(json_object_get(r, "blamed_by")) > 0)
			continue;	/* under Broke */
		approved_text(md, r);
		buf_puts(md, "\n");
		n++;
	}
	buf_puts(md, n ? "\n" : "None.\n\n");
}

/* Changes that landed and that an incident blames for breaking an
 * engine: never a fix. */
static void
broke(struct buf *md, const json_t *j)
{
	const json_t *r, *b, *e;
	size_t i, k, m;
	int n = 0;

	buf_puts(md, "## Broke\n\n");
	json_array_foreach(json_object_get(j, "approved"), i, r)
		json_array_foreach(json_object_get(r, "blamed_by"), k, b) {
			approved_text(md, r);
			buf_puts(md, "; it broke ");
			json_array_foreach(json_object_get(b, "engines"), m, e) {
				buf_puts(md, m ? ", " : "");
				cell_text(md, json_string_value(e));
			}
			buf_printf(md, " (incident %lld, %s)", (long long)
			    jsonget_int(b, "incident"), jsonget_str(b, "state"));
			if (jsonget_int(b, "revert") > 0)
				buf_printf(md, "; its revert is review #%lld",
				    (long long)jsonget_int(b, "revert"));
			buf_puts(md, "\n");
			n++;
		}
	json_array_foreach(json_object_get(json_object_get(j, "summary"),
	    "broke"), i, b) {
		buf_printf(md, "- %s: %s%s\n", jsonget_str(b, "cell"),
		    jsonget_str(b, "status"), json_is_true(json_object_get(b,
		    "fixed")) ? ", fixed in this cycle" : "");
		n++;
	}
	buf_puts(md, n ? "\n" : "Nothing.\n\n");
}

static void
skipped(struct buf *md, const json_t *j)
{
	const json_t *s;
	size_t i;

	buf_puts(md, "## Skipped\n\n");
	if (json_array_size(json_object_get(j, "skipped")) == 0) {
		buf_puts(md, "None.\n\n");
		return;
	}
	buf_puts(md, "| Framework | Model | Split | Reason | Prior occurrences |\n"
	    "|---|---|---|---|---|\n");
	json_array_foreach(json_object_get(j, "skipped"), i, s) {
		buf_puts(md, "| ");
		if (json_object_get(s, "task") != NULL) {
			cell_text(md, jsonget_str(s, "task"));
			buf_puts(md, " (agent) | - | - | ");
		} else
			buf_printf(md, "%s | %s | %s | ",
			    jsonget_str(s, "engine"), jsonget_str(s, "model"),
			    jsonget_str(s, "split"));
		cell_text(md, jsonget_str(s, "reason"));
		if (jsonget_int(s, "prior") > 0)
			buf_printf(md, " | %lld (skipped since cycle %s) |\n",
			    (long long)jsonget_int(s, "prior"),
			    jsonget_str(s, "since"));
		else
			buf_puts(md, " | 0 |\n");
	}
	buf_puts(md, "\n");
}

static void
oom(struct buf *md, const json_t *j)
{
	const json_t *o;
	size_t i;

	buf_puts(md, "## OOM\n\n");
	if (json_array_size(json_object_get(j, "oom")) == 0) {
		buf_puts(md, "None.\n\n");
		return;
	}
	buf_puts(md, "| Framework | Model | Split | c | Peak system memory | "
	    "RAM | Detail |\n|---|---|---|---:|---:|---:|---|\n");
	json_array_foreach(json_object_get(j, "oom"), i, o) {
		buf_printf(md, "| %s | %s | %s | %lld | %.2f GiB | %.2f GiB | ",
		    jsonget_str(o, "engine"), jsonget_str(o, "model"),
		    jsonget_str(o, "split"), (long long)jsonget_int(o,
		    "concurrency"), (double)journal_bytes(o,
		    "peak_system_memory_bytes", "peak_system_bytes") /
		    1073741824.0, (double)journal_bytes(o,
		    "system_memory_bytes", "system_total_bytes") /
		    1073741824.0);
		cell_text(md, jsonget_str(o, "detail"));
		buf_puts(md, " |\n");
	}
	buf_puts(md, "\n");
}

/* One alert's row: series, before -> after, change, p-value, state. */
static void
alert_row(struct buf *md, const json_t *a, const char *how)
{
	const char *unit = jsonget_str(a, "unit");
	double scale = strcmp(unit, "bytes") == 0 ? 1048576.0 : 1;

	buf_printf(md, "| #%lld | ", (long long)jsonget_int(a, "id"));
	cell_text(md, jsonget_str(a, "engine"));
	buf_addch(md, ' ');
	cell_text(md, jsonget_str(a, "model"));
	buf_addch(md, '/');
	cell_text(md, jsonget_str(a, "split"));
	buf_printf(md, " c=%lld %s | %.1f → %.1f %s | %+.1f %% | ",
	    (long long)jsonget_int(a, "concurrency"), jsonget_str(a, "metric"),
	    json_number_value(json_object_get(a, "before")) / scale,
	    json_number_value(json_object_get(a, "after")) / scale,
	    scale > 1 ? "MiB" : unit,
	    json_number_value(json_object_get(a, "change_pct")));
	if (json_is_number(json_object_get(a, "p_value")))
		buf_printf(md, "%.2g", json_number_value(json_object_get(a,
		    "p_value")));
	else
		buf_puts(md, "-");
	buf_printf(md, " | %s (%s) |\n", jsonget_str(a, "state"), how);
}

/* The alerts the cycle opened, saw again and fixed, and what it
 * compared with. */
static void
regressions(struct buf *md, const json_t *j)
{
	const json_t *r = json_object_get(j, "regressions"), *a, *b, *p, *v;
	size_t i, n;

	if (!json_is_object(r))
		return;		/* a journal of an older warden */
	buf_puts(md, "## Regressions\n\n");
	b = json_object_get(r, "baseline");
	p = json_object_get(r, "policy");
	if (json_is_string(json_object_get(r, "why")))
		buf_printf(md, "Nothing compared: %s.\n\n", jsonget_str(r,
		    "why"));
	else if (json_array_size(json_object_get(b, "cycles")) == 0)
		buf_printf(md, "Nothing compared: %s.\n\n", jsonget_str(b,
		    "why"));
	else {
		buf_printf(md, "%lld series of round %lld compared with the "
		    "published cycle%s ", (long long)jsonget_int(r, "compared"),
		    (long long)jsonget_int(r, "round"), json_array_size(
		    json_object_get(b, "cycles")) == 1 ? "" : "s");
		json_array_foreach(json_object_get(b, "cycles"), i, v) {
			buf_puts(md, i ? ", " : "");
			cell_text(md, json_string_value(v));
		}
		buf_printf(md, ": Mann-Whitney U on the per-request samples, "
		    "p < %g, and at least %g %% worse.\n\n",
		    json_number_value(json_object_get(p, "alpha")),
		    json_number_value(json_object_get(p, "threshold_pct")));
	}
	n = json_array_size(json_object_get(r, "opened")) +
	    json_array_size(json_object_get(r, "seen")) +
	    json_array_size(json_object_get(r, "fixed"));
	if (n == 0) {
		buf_puts(md, "No alert.\n\n");
		return;
	}
	buf_puts(md, "| Alert | Series | Before → after | Change | p-value | "
	    "State |\n|---:|---|---|---:|---:|---|\n");
	json_array_foreach(json_object_get(r, "opened"), i, a)
		alert_row(md, a, "new");
	json_array_foreach(json_object_get(r, "seen"), i, a) {
		char *how = xasprintf("seen again, since %s",
		    jsonget_str(a, "cycle"));

		alert_row(md, a, how);
		free(how);
	}
	json_array_foreach(json_object_get(r, "fixed"), i, a)
		alert_row(md, a, "back within the threshold");
	buf_puts(md, "\n");
}

static void
suspicious(struct buf *md, const json_t *j)
{
	const json_t *s;
	size_t i;

	buf_puts(md, "## Suspicious\n\n");
	if (json_array_size(json_object_get(j, "suspicious")) == 0) {
		buf_puts(md, "None.\n\n");
		return;
	}
	json_array_foreach(json_object_get(j, "suspicious"), i, s) {
		buf_printf(md, "- %s", jsonget_str(s, "engine"));
		if (jsonget_str(s, "model")[0] != '\0')
			buf_printf(md, " %s/%s", jsonget_str(s, "model"),
			    jsonget_str(s, "split"));
		if (jsonget_int(s, "concurrency") > 0)
			buf_printf(md, " c=%lld", (long long)jsonget_int(s,
			    "concurrency"));
		buf_puts(md, ": ");
		cell_text(md, jsonget_str(s, "why"));
		buf_addch(md, '\n');
	}
	buf_puts(md, "\n");
}

static void
timeline(struct buf *md, const json_t *j)
{
	const json_t *t;
	size_t i;

	buf_puts(md, "## Timeline\n\n| Time (UTC) | Round | Step | State | What |\n"
	    "|---|---:|---|---|---|\n");
	json_array_foreach(json_object_get(j, "timeline"), i, t) {
		buf_printf(md, "| %s | %lld | %s | %s | ",
		    json_is_string(json_object_get(t,
		    "finished")) ? jsonget_str(t, "finished") : jsonget_str(t,
		    "started"), (long long)jsonget_int(t, "round"),
		    jsonget_str(t, "step"), jsonget_str(t, "state"));
		cell_text(md, jsonget_str(t, "what"));
		buf_puts(md, " |\n");
	}
	buf_puts(md, "\n");
}

void
cycle_render_markdown(struct buf *md, const json_t *j)
{
	buf_printf(md, "# Maintenance journal: cycle %s\n\n"
	    "Roster `%s` on machine `%s`, %s to %s, %lld round%s%s%s. Rendered "
	    "from the cycle's journal entry by `warden journal export`; `warden "
	    "journal verify` checks the hash chain. Do not edit.\n\n",
	    jsonget_str(j, "cycle"), jsonget_str(j, "roster"),
	    jsonget_str(j, "machine"), jsonget_str(j, "started"),
	    jsonget_str(j, "finished"), (long long)jsonget_int(j, "rounds"),
	    jsonget_int(j, "rounds") == 1 ? "" : "s",
	    json_is_string(json_object_get(j,
	    "previous")) ? "; the previous cycle was " : "",
	    jsonget_str(j, "previous"));
	summary(md, j);
	versions(md, j);
	splits(md, j);
	fixes(md, j);
	broke(md, j);
	skipped(md, j);
	oom(md, j);
	regressions(md, j);
	suspicious(md, j);
	timeline(md, j);
	quote_md_doc(md);
}
