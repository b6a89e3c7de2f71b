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

#include "results/plot.h"
#include "results/resultset.h"

/* {"schema": 1, "tables": [{"model", "split", "rows": [...],
 * "scaling": [...]}]}: one row per (engine, machine, concurrency). */
json_t *report_comparison(const struct resultset *rs);

/* REPORT.md. info: {"commit", "warden_version", "results_sha256"}; gate
 * from gate_evaluate(); fidelity rows from fidelity_table(). Caller
 * frees. */
char *report_markdown(const json_t *info, const json_t *comparison,
    const json_t *gate, const json_t *fidelity_rows,
    const struct plot_file *plots, size_t nplots);

#endif
