/*
 * gate.h - SiliconBench's audit gates (its Table 5) over a result set:
 * per engine, completion at every concurrency level on every split,
 * fidelity within the band of the reference for every measured (model,
 * shots), and coverage of every required model; each pass or fail with
 * why (the failing cell and its figure). Speed and memory are reported
 * beside it (peak against RAM and the Metal hint, growth from the lowest
 * to the highest level) and never gated. Thresholds come from policy.
 *
 * gate_evaluate() is pure; gate_run() is what a command, the cycle or
 * triage calls: it gathers the runs, evaluates, compares with the gate
 * of the last published snapshot and records the result. Never prints.
 */
#ifndef WARDEN_GATE_H
#define WARDEN_GATE_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "store.h"
#include "results/resultset.h"

/*
 * The gate of rs: {"schema", "results_sha256", "runs", "thresholds",
 * "engines": [{"engine", "pass", "completion": {"pass", "failures"},
 * "fidelity": {"pass", "failures", "cells"}, "coverage": {"pass",
 * "failures"}, "speed", "memory"}], "passed": [...], "failed": [...]}.
 * Each failure is {"cell", "why"} with why a sentence naming the figure.
 */
json_t *gate_evaluate(const struct policy *policy, const struct resultset *rs);

/* Add "previous" (the published gate's passed list and snapshot) and
 * "regressions": engines that passed there and fail now. previous may
 * be NULL (no publish yet). Returns the number of regressions. */
size_t gate_compare(json_t *gate, const json_t *previous);

/* results/gate.json of the official branch tip (the last published
 * snapshot), or *out NULL when there is none. */
struct werr *gate_published(json_t **out, const char *repo_root,
    const char *official_branch);

struct gate_input {
	const char *repo_root;
	const struct policy *policy;
	struct store *store;
	/* The runs to judge; none given: the newest finished campaign run
	 * and the newest finished measured fidelity run. The current
	 * reference is always added. */
	const char *const *campaigns;
	size_t ncampaigns;
	const char *const *fidelity;
	size_t nfidelity;
	int no_fidelity;		/* do not add a fidelity run by default */
};

/* Build the result set of in, evaluate and compare it, and record the
 * result in the store (journaled). *out is the gate JSON. */
struct werr *gate_run(json_t **out, const struct gate_input *in);

/* Gather the result set of in (as gate_run does). */
struct werr *gate_resultset(struct resultset *rs, const struct gate_input *in);

/* Evaluate rs, compare with the published gate, and record. */
struct werr *gate_judge(json_t **out, const struct gate_input *in,
    const struct resultset *rs);

#endif
