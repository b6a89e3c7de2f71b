/*
 * campaign-report.h - a campaign run as data, for `warden campaign` and
 * `warden campaign show` to print: its sweeps grouped per (model, split)
 * into rows that read as `vllm bench serve` results, the scaling of each
 * engine between its lowest and highest level, and the list of runs.
 *
 * Each figure has one name: vllm's where the meaning is the same
 * (median_tpot_ms is the per-request TPOT, median_itl_ms the median gap
 * between chunks), warden's own otherwise (peak_engine_memory_bytes,
 * peak_system_memory_bytes, client_limited, ...). Never prints; reads the
 * store only.
 */
#ifndef WARDEN_CAMPAIGN_REPORT_H
#define WARDEN_CAMPAIGN_REPORT_H

#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "store.h"

/*
 * The report of run_id (new reference in *out): run_id, machine, state,
 * created, finished, date (vllm's %Y%m%d-%H%M%S, UTC), roster, limit,
 * limit_beyond (the splits with fewer timed prompts than limit, which
 * their sweeps ran whole: [{split, prompts}]), ad_hoc_levels, sweeps, sweeps_done, provenance, and tables: [{model,
 * split, rows, scaling}]. Each row has its status (campaign_level_status,
 * by pol's completion line) beside its outcome. With per_request, each row also carries vllm's
 * per-request arrays (ttfts, itls, e2els, output_lens, input_lens, errors)
 * and warden's connect_times, in seconds. WEXIT_INPUT for an unknown run.
 */
struct werr *campaign_report(json_t **out, struct store *store,
    const struct policy *pol, const char *run_id, int per_request);

/*
 * The status of one level of a cell (a sweep, a campaign row, a published
 * concurrency result: anything with outcome, detail, total, completed,
 * peak_system_memory_bytes and system_memory_bytes) in SiliconBench's
 * vocabulary, from its outcome, its successes and pol's completion line:
 * oom, crashed, hang, capped, wrong-model, all-failed, degraded, ok or
 * skipped (doc/glossary.md "Cell statuses"). The one place an outcome
 * becomes a status; a cell takes its worst level's (the cycle's
 * cells.c), and "fixed" is the cycle's to say.
 */
const char *campaign_level_status(const json_t *level,
    const struct policy *pol);

/* Widen the span *lo..*hi of levels (anything with a "concurrency"; NULL
 * before the first) to take in level. */
void campaign_level_span(const json_t *level, const json_t **lo,
    const json_t **hi);

/* The scaling from level lo to level hi: hi's output_throughput over
 * lo's, or JSON null where lo has none above 0 or hi none. */
json_t *campaign_scaling_ratio(const json_t *lo, const json_t *hi);

/* Every run, newest first: run_id, created, finished, state, machine,
 * roster, sweeps, sweeps_done, limit, ad_hoc_levels. */
struct werr *campaign_run_list(json_t **out, struct store *store);

/*
 * A sweep's detail in one line (caller frees; NULL for NULL): its first
 * line without the log tail, and the last line of the log tail after
 * "; log: " when there is one.
 */
char *campaign_reason(const char *detail);

#endif
