/*
 * plot.h - SiliconBench's figures of a result set, per (model, split):
 * output throughput against concurrency (one line per engine), TTFT p50
 * and p99 against concurrency, one figure per concurrency level of the
 * system memory traces (one line per engine) with RAM and Metal-hint
 * rules, and throughput against peak system memory (a point per engine
 * and level, labelled c=N). SVG drawn with cairo (chart.h); an engine
 * has the same colour and marker in every figure, and the series of one
 * figure distinct (marker, dash) pairs. Never prints.
 */
#ifndef WARDEN_PLOT_H
#define WARDEN_PLOT_H

#include <stddef.h>

#include "buf.h"
#include "error.h"
#include "results/chart.h"
#include "results/resultset.h"

struct plot_file {
	char *name;		/* "plots/throughput-MODEL-SPLIT.svg" */
	char *title;
	char *model, *split;
	struct buf svg;
	struct chart_layout layout;	/* what was drawn */
};

/* The figures of rs, in a stable order. */
struct werr *plot_results(struct plot_file **out, size_t *n,
    const struct resultset *rs);
void plot_files_free(struct plot_file *files, size_t n);

#endif
