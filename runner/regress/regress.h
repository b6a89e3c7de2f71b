/*
 * regress.h - performance regressions as alerts, the way Mozilla's
 * Perfherder raises them: a series is one engine x model x split x
 * concurrency x metric (output throughput, TTFT p50 and p99, TPOT p50,
 * peak engine memory); a campaign run's series are compared with the
 * same series in the last published cycles measured on the same
 * machine, on their per-request samples, with the Mann-Whitney U test
 * (stats.h) AND a magnitude threshold from policy `regressions`. A
 * series that is both significantly and sizeably worse raises an alert
 * (untriaged); maintainers move it to acknowledged, invalid or fixed
 * with who and why, every transition journaled. doc/regressions.md says
 * all of it for people.
 *
 * regress_run() is the cycle's step; regress_list/show/set are `warden
 * regressions`; regress_cycle_regressed() is what triage reads to treat
 * a regressed engine as broken. Never prints.
 */
#ifndef WARDEN_REGRESS_H
#define WARDEN_REGRESS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "stats.h"
#include "store.h"

/* A metric of a series. */
struct regress_metric {
	const char *name;	/* "output_throughput", "median_ttft_ms", ... */
	const char *unit;	/* "tok/s", "ms", "bytes" */
	int lower_worse;	/* throughput: lower is worse */
	double percentile;	/* of the per-request samples; 0: a
				   per-sweep figure (throughput, memory) */
};

/* The metrics, NULL-named at the end; policy's `regressions.metrics`
 * names them. */
extern const struct regress_metric regress_metrics[];
#define REGRESS_N_METRICS 5
const struct regress_metric *regress_metric_find(const char *name);

/* The alert states, NULL-terminated: untriaged, acknowledged, invalid,
 * fixed. Open: untriaged and acknowledged. */
extern const char *const regress_states[];
int regress_state_valid(const char *state);
int regress_state_open(const char *state);

/* How much worse after is than before, in percent of the better figure:
 * (after / before - 1) x 100 where higher is worse, (before / after - 1)
 * x 100 where lower is worse; negative when it is better. A halving of
 * throughput and a doubling of TTFT are both 100 % worse. */
double regress_worse_pct(const struct regress_metric *m, double before,
    double after);

/* The verdict on one series. */
struct regress_verdict {
	double before, after;	/* the baseline's figure, the current one */
	double change_pct;	/* (after / before - 1) x 100 */
	double worse_pct;	/* regress_worse_pct() */
	struct stats_mwu test;	/* current samples against the baseline's */
	double p_value;		/* one-sided, in the direction of worse */
	int significant;	/* p_value < alpha */
	int beyond;		/* worse_pct >= threshold */
	int regressed;		/* both */
	const char *why_not;	/* why it was not compared; NULL: compared */
};

/*
 * Judge one series: before and after are the figures, now[] and base[]
 * the per-request samples (current, baseline pooled). Fewer than
 * min_samples on a side, or a figure that is not positive, is not
 * compared (why_not says why).
 */
void regress_judge(struct regress_verdict *v, const struct regress_metric *m,
    double before, double after, const double *now, size_t n_now,
    const double *base, size_t n_base, double threshold_pct, double alpha,
    size_t min_samples);

/*
 * The figure of metric in a stored sweep (a row of
 * store_campaign_sweeps_json: its summary and peak_engine_bytes), as
 * the campaign reported it. 0 and *out set, or -1 when the sweep has
 * none (no successful request).
 */
int regress_sweep_figure(const json_t *sweep, const char *metric,
    double *out);

/*
 * Two sides of one measurement on one machine (a change's smoke campaign:
 * the runs from the base tree and from the change, interleaved), each
 * series (engine x model x split x concurrency) judged metric by metric
 * (policy regressions.metrics) with regress_judge() and the policy's
 * threshold, alpha and min_samples, both ways: after worse than before
 * ("regressed"), before worse than after ("improved"), neither
 * ("unchanged"), or too few samples on a side ("too-few"). A side's
 * figure is a percentile of its pooled per-request samples, or the
 * median of its sweeps' figures (throughput, peak memory). The one rule
 * review smoke, pr-check --smoke, the agent's smoke and triage's
 * evidence apply.
 *
 * *out: {"policy": {threshold_pct, alpha, min_samples}, "before_runs",
 * "after_runs", "cells": [{engine, model, split, concurrency,
 * requests_before, requests_after, verdict, text, metrics: [{metric,
 * unit, before, after, ratio, p_value, n_before, n_after, verdict,
 * text}]}], "regressed": any cell regressed}; with no metric in the
 * policy, no cell and "why". A cell's text is its
 * verdict in words: "5.02x slower decode: TPOT p50 3.1 -> 15.4 ms,
 * p < 0.001", "no measurable change", "too few samples to tell".
 */
struct werr *regress_compare(json_t **out, struct store *store,
    const struct policy *pol, const json_t *before_runs,
    const json_t *after_runs);

/* "1.42x slower decode: TPOT p50 3.1 -> 4.4 ms, p < 0.001" (better: the
 * words for better); caller frees. */
char *regress_verdict_text(const struct regress_metric *m, double before,
    double after, double p_value, int better);

struct regress_opts {
	struct store *store;
	const struct policy *policy;	/* the trusted policy */
	const char *run_id;		/* the campaign run measured */
	const char *cycle;		/* the cycle it belongs to */
	int round;
	const char *who;		/* of the transitions it makes */
};

/*
 * Compare the run's series with the last published cycles
 * (policy regressions.baseline_cycles publishes whose campaign runs were
 * measured on the run's machine), then, in one transaction with their
 * journal entries: open an alert (untriaged; `regression.opened`) for
 * each series newly regressed; mark an open alert of a series still
 * worse than its own "before" by the threshold as seen again; and move
 * an open alert whose series is back within the threshold to fixed
 * (`regression.state`). Run again for the same cycle and round, it finds
 * the alerts it opened and opens none twice.
 *
 * *out: {"run", "machine", "baseline": {"cycles": [..], "runs": [..],
 * "snapshots": [..]} (or "why" there is none), "policy": {threshold_pct,
 * alpha, baseline_cycles, min_samples, metrics}, "compared" (series
 * judged), "not_compared": [{series, why}], "opened": [alert], "seen":
 * [alert], "fixed": [alert], "regressed_engines": [ENGINE]}.
 */
struct werr *regress_run(json_t **out, const struct regress_opts *o);

/*
 * The engines with an open alert seen in cycle (opened there or seen
 * again), but for alerts accepted at approval (regress_alert_accepted()): {ENGINE: {"good_cycle": the newest baseline cycle of its
 * alerts, "cells": [{engine, model, split, concurrency, metric, before,
 * after, worse_pct, p_value, threshold_pct, unit, alert, run_id,
 * state}]}}. Empty when none; triage treats each engine as broken in
 * those cells (and the agent's task lists those fields: agent.h).
 */
struct werr *regress_cycle_regressed(json_t **out, struct store *store,
    const char *cycle);

/*
 * What cycle did to the alerts, for its journal: {"opened": [..], "seen":
 * [..] (open alerts of earlier cycles it found still regressed),
 * "fixed": [..] (alerts it found back within the threshold)}, each
 * {"id", "state" (now), "cycle" (opened in), "engine", "model", "split",
 * "concurrency", "metric", "unit", "before", "after", "change_pct",
 * "p_value"} with this cycle's figures.
 */
struct werr *regress_cycle_alerts(json_t **out, struct store *store,
    const char *cycle);

/* Is alert acknowledged because its regression was accepted at the
 * approval of a review (its record's "accepted_review")? Triage leaves
 * such an alert alone. */
int regress_alert_accepted(const json_t *alert);

/* Alerts, oldest first; state and engine NULL: all. A new array. */
struct werr *regress_list(json_t **out, struct store *store,
    const char *state, const char *engine);
/* One alert with its record and transitions; an unknown id is an input
 * error. */
struct werr *regress_show(json_t **out, struct store *store, int64_t id);
/* A maintainer's transition, journaled `regression.state` with who and
 * why. An unknown id or state, the state it already has, or text that is
 * not UTF-8 are input errors. */
struct werr *regress_set(struct store *store, int64_t id, const char *state,
    const char *reason, const char *who);

/* "ENGINE MODEL/SPLIT c=N METRIC" of an alert or series object; caller
 * frees. */
char *regress_series_name(const json_t *a);
/* "120.3 → 11.2 tok/s" of an alert (before, after, unit); caller
 * frees. */
char *regress_change_text(const json_t *a);

#endif
