/*
 * gate-private.h - what gate.c (the verdicts) takes from gate-report.c
 * (speed and memory, reported beside them, never deciding one). Internal
 * to runner/results.
 */
#ifndef WARDEN_GATE_PRIVATE_H
#define WARDEN_GATE_PRIVATE_H

#include <jansson.h>

/* Speed per (model, split, machine) of engine in the campaign documents
 * camp: output tok/s at each level; *best the highest of them. */
json_t *gate_report_speed(const json_t *camp, const char *engine,
    double *best);

/* Memory of engine in camp: the highest peak, against RAM and the Metal
 * hint, and the largest growth of its footprint from the lowest level to
 * the highest of one (model, split, machine); JSON null when none was
 * sampled. */
json_t *gate_report_memory(const json_t *camp, const char *engine);

#endif
