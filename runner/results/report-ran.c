/*
 * report-ran.c - what a result set says ran: the machines (chip or CPU,
 * cores, memory, OS) and each engine's version manifests (version,
 * manifest digest, Python, package count, git commit) with the prompts
 * run per cell, taken from the run documents' provenance; and its
 * section of REPORT.md. See report.h. Deterministic; never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "quote.h"
#include "sha256.h"
#include "results/report.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Add v to the array set if it is not in it. */
static void
add_distinct(json_t *set, json_t *v)
{
	const json_t *x;
	size_t i;

	json_array_foreach(set, i, x)
		if (json_equal((json_t *)x, v)) {
			json_decref(v);
			return;
		}
	json_array_append_new(set, v);
}

json_t *
report_machine(const char *machine, const json_t *hw, const json_t *os)
{
	const json_t *ram = json_object_get(hw, "system_memory_bytes");

	if (ram == NULL)	/* a run recorded before the names were one */
		ram = json_object_get(hw, "memory_bytes");
	return json_pack("{s:s, s:s, s:s, s:O?, s:O?, s:O?, s:s, s:s}",
	    "machine", machine,
	    "cpu", jsonget_str(hw, "cpu"), "arch", jsonget_str(hw, "arch"),
	    "cpus", json_object_get(hw, "cpus"),
	    "system_memory_bytes", ram,
	    "gpu_working_set_hint_bytes", json_object_get(hw,
	    "gpu_working_set_hint_bytes"),
	    "os", jsonget_str(os, "name"), "os_release", jsonget_str(os,
	    "release"));
}

void
report_md_machine(struct buf *b, const json_t *m, enum report_machine_form form)
{
	const json_t *hint = json_object_get(m, "gpu_working_set_hint_bytes");
	int row = form == REPORT_MACHINE_ROW;

	buf_puts(b, row ? "| " : "Machine `");
	quote_md(b, jsonget_str(m, "machine"));
	buf_puts(b, row ? " | " : "`: ");
	quote_md(b, jsonget_str(m, "cpu"));
	buf_puts(b, " (");
	quote_md(b, jsonget_str(m, "arch"));
	buf_printf(b, row ? ") | %lld | %.1f | " : "), %lld cores, %.1f GiB, ",
	    (long long)jsonget_int(m, "cpus"),
	    (double)jsonget_int(m, "system_memory_bytes") / GIB);
	if (row && json_is_integer(hint))
		buf_printf(b, "%.1f | ", (double)json_integer_value(hint) / GIB);
	else if (row)
		buf_puts(b, "- | ");
	quote_md(b, jsonget_str(m, "os"));
	buf_addch(b, ' ');
	quote_md(b, jsonget_str(m, "os_release"));
	buf_puts(b, row ? " |\n" : ".");
}

static json_t *
machine_of(const json_t *doc)
{
	const json_t *p = json_object_get(doc, "provenance");

	return report_machine(jsonget_str(doc, "machine"), json_object_get(p,
	    "hardware"), json_object_get(p, "os"));
}

/* What a version manifest says of an engine, named by its digest. */
static json_t *
version_of(const json_t *m)
{
	char hex[SHA256_HEX_LEN + 1], *text;

	if (!json_is_object(m))
		return json_pack("{s:n}", "manifest_sha256");
	if (json_is_string(json_object_get(m, "sha256")))
		snprintf(hex, sizeof(hex), "%s", jsonget_str(m, "sha256"));
	else {	/* the store's digest of it, else the document's own */
		text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
		sha256_hex(text, strlen(text), hex);
		free(text);
	}
	return json_pack("{s:s, s:O?, s:O?, s:O?, s:I, s:O?}",
	    "manifest_sha256", hex,
	    "kind", json_object_get(m, "kind"),
	    "engine_version", json_object_get(m, "engine_version"),
	    "python", json_object_get(m, "python"),
	    "packages", (json_int_t)json_object_size(json_object_get(m,
	    "packages")),
	    "commit", json_object_get(json_object_get(m, "source"), "commit"));
}

json_t *
report_what_ran(const struct resultset *rs)
{
	json_t *docs = resultset_docs(rs, "campaign");
	json_t *machines = json_array(), *engines = json_object(), *e;
	const json_t *doc, *c;
	size_t i, j;

	json_array_foreach(docs, i, doc) {
		add_distinct(machines, machine_of(doc));
		if ((e = json_object_get(engines, jsonget_str(doc,
		    "engine"))) == NULL) {
			e = json_pack("{s:[], s:[]}", "versions", "prompts");
			json_object_set_new(engines, jsonget_str(doc, "engine"), e);
		}
		json_array_foreach(json_object_get(doc, "concurrency_results"),
		    j, c) {
			add_distinct(json_object_get(e, "versions"), version_of(
			    json_object_get(json_object_get(c, "provenance"),
			    "engine_manifest")));
			add_distinct(json_object_get(e, "prompts"),
			    json_integer(jsonget_int(c, "total")));
		}
	}
	json_decref(docs);
	return json_pack("{s:o, s:o}", "machines", machines, "engines",
	    engines);
}

static void
md_machines(struct buf *b, const json_t *machines)
{
	const json_t *m;
	size_t i;

	buf_puts(b, "| machine | chip or CPU | cores | memory GiB | Metal "
	    "working-set hint GiB | OS |\n|---|---|--:|--:|--:|---|\n");
	json_array_foreach(machines, i, m)
		report_md_machine(b, m, REPORT_MACHINE_ROW);
}

static void
md_engines(struct buf *b, const json_t *engines)
{
	const json_t *e, *v, *p;
	const char *name;
	size_t i, k;

	buf_puts(b, "\n| engine | version | manifest sha256 | Python | "
	    "packages | commit | prompts per cell |\n"
	    "|---|---|---|---|--:|---|---|\n");
	json_object_foreach((json_t *)engines, name, e)
		json_array_foreach(json_object_get(e, "versions"), i, v) {
			buf_puts(b, "| ");
			quote_md(b, name);
			buf_puts(b, " | ");
			if (json_is_null(json_object_get(v, "manifest_sha256"))) {
				buf_puts(b, "no version manifest (no `warden "
				    "update` before it ran) | - | - | - | -");
			} else {
				quote_md(b, json_is_string(json_object_get(v,
				    "engine_version")) ? jsonget_str(v,
				    "engine_version") : "-");
				buf_printf(b, " | `%.12s` | ", jsonget_str(v,
				    "manifest_sha256"));
				quote_md(b, json_is_string(json_object_get(v,
				    "python")) ? jsonget_str(v, "python") : "-");
				buf_printf(b, " | %lld | ", (long long)
				    jsonget_int(v, "packages"));
				if (json_is_string(json_object_get(v, "commit")))
					buf_printf(b, "`%.12s`", jsonget_str(v,
					    "commit"));
				else
					buf_puts(b, "-");
			}
			buf_puts(b, " | ");
			json_array_foreach(json_object_get(e, "prompts"), k, p)
				buf_printf(b, "%s%lld", k ? ", " : "",
				    (long long)json_integer_value(p));
			buf_puts(b, " |\n");
		}
}

void
report_md_what_ran(struct buf *b, const json_t *ran)
{
	if (!json_is_object(ran))
		return;
	buf_puts(b, "## What ran\n\n");
	md_machines(b, json_object_get(ran, "machines"));
	md_engines(b, json_object_get(ran, "engines"));
	buf_puts(b, "\nThe manifest sha256 names the engine's version manifest "
	    "(every package and version, the toolchain, the source commit) "
	    "as the run documents beside this report carry it; \"prompts per "
	    "cell\" is the number of requests each (model, split, "
	    "concurrency) sweep was sent.\n\n");
}
