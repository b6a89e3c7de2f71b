/*
 * report.h - the human and machine summaries of a result set:
 * comparison.json (SiliconBench's per-concurrency tables per model and
 * split) and REPORT.md (those tables, the gate table, the fidelity table,
 * the memory table, and the figures). Deterministic: the same result set
 * and gate give the same bytes (no clock, no host). Never prints.
 */
#ifndef WARDEN_REPORT_H
#define WARDEN_REPORT_H

#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "policy.h"
#include "store.h"

#include "results/plot.h"
#include "results/resultset.h"

/* {"schema": 1, "tables": [{"model", "split", "rows": [...],
 * "scaling": [...]}]}: one row per (engine, machine, concurrency), its
 * status (campaign_level_status, by pol's completion line) beside its
 * outcome; a figure not measured is null. */
json_t *report_comparison(const struct resultset *rs,
    const struct policy *pol);

/*
 * The results on the official branch (report-since.c): {"official": its
 * tip, "snapshot_sha256", "commit" (what they measured), "comparison":
 * their comparison.json}, or NULL when it has none.
 */
json_t *report_previous(const char *repo_root, const char *branch);

/*
 * What moved since previous (report_previous(), or NULL): each cell of
 * comparison on the same machine, its two runs judged by the regressions
 * rule (regress_compare()) when store (may be NULL) has both:
 * {"official", "commit", "measured", "policy", "cells": [{engine, model,
 * split, concurrency, before_run, after_run, output_throughput and
 * median_tpot_ms {before, after, ratio}, verdict ("regressed",
 * "improved", "unchanged", "too-few", or "untested": ratio only), text,
 * metrics}], "new": [cells it did not have]}; or {"why"} when there is
 * nothing to compare with.
 */
json_t *report_since(const json_t *previous, const json_t *comparison,
    struct store *store, const struct policy *pol);
/* Its section of REPORT.md ("## Since the last snapshot"): changed
 * cells in a table, unchanged ones and new ones in a line each. */
void report_md_since(struct buf *b, const json_t *since);

/* What ran (report-ran.c): {"machines": [{machine, cpu, arch, cpus,
 * system_memory_bytes, gpu_working_set_hint_bytes, os, os_release}],
 * "engines":
 * {ENGINE: {"versions": [{manifest_sha256 (null: no manifest), kind,
 * engine_version, python, packages (a count), commit}], "prompts":
 * [distinct requests per sweep]}}} from the campaign runs' provenance. */
json_t *report_what_ran(const struct resultset *rs);
/* Its section of REPORT.md ("## What ran"); nothing when ran is not an
 * object. */
void report_md_what_ran(struct buf *b, const json_t *ran);

/* A machine as "machines" has it, from a run's or a cycle journal's
 * "machine" id, "hardware" and "os" (memory under its older name
 * memory_bytes too). New reference. */
json_t *report_machine(const char *machine, const json_t *hardware,
    const json_t *os);
/*
 * The one description of a machine (m from report_machine()): its id,
 * chip or CPU (arch), cores, memory in GiB and OS, quoted for Markdown.
 * REPORT_MACHINE_ROW is a row of "What ran"'s machine table, with the
 * Metal working-set hint ("| id | cpu (arch) | 2 | 7.8 | - | Linux
 * 6.1 |
"); REPORT_MACHINE_LINE the cycle journal's Versions line
 * ("Machine `id`: cpu (arch), 2 cores, 7.8 GiB, Linux 6.1.").
 */
enum report_machine_form { REPORT_MACHINE_ROW, REPORT_MACHINE_LINE };
void report_md_machine(struct buf *b, const json_t *m,
    enum report_machine_form form);

/* REPORT.md. info: {"commit", "warden_version", "results_sha256", "ran"
 * (report_what_ran)}; gate
 * from gate_evaluate(); fidelity rows from fidelity_table(). Caller
 * frees. */
char *report_markdown(const json_t *info, const json_t *comparison,
    const json_t *gate, const json_t *fidelity_rows,
    const struct plot_file *plots, size_t nplots);

#endif
