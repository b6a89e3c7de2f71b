/*
 * export-sb.h - a result set written in SiliconBench's own layout, which
 * its collector (scripts/collect_results.py) and report generator
 * (scripts/generate_report.py) read unchanged:
 *
 *   DIR/results/MODEL[/CHIP]/SPLIT/ENGINE_YYYYmmdd_HHMMSS.json
 *       one campaign run as benchmark.py writes a result: "framework",
 *       "framework_version" ({version, manifest_sha256, commit} of the
 *       engine's version manifest, or null), "model" (the served name),
 *       "endpoint" (the port is not provenance: "{port}"), "timestamp"
 *       (the run's start, UTC), "machine" ({host: warden's machine id,
 *       never a host name; chip; os}), "concurrency_results" and
 *       "total_duration_s" (first sweep's start to last sweep's end);
 *   DIR/results/MODEL[/CHIP]/SPLIT/comparison.json
 *       {model_name, split, frameworks, results} as the collector makes
 *       it.
 *
 * A level maps warden's figures onto benchmark.py's summarize() names:
 * num_requests, successful, failed (sent - completed), wall_time_s,
 * total_output_tokens, total_input_tokens, server_usage_available,
 * ttft_avg/p50/p99_ms (mean/median/p99 TTFT), itl_avg_ms and itl_p50_ms
 * (mean and median TPOT: SiliconBench's per-request "inter-token latency"
 * is (last - first content) / (tokens - 1)), throughput_avg_tps and
 * throughput_p50_tps (1000 / those), latency_avg/p50/p99_s (E2EL),
 * output/input/total_token_throughput_tps; a level with no success has
 * "error" (its report shows CRASHED, or SKIPPED) and no figures.
 * Deterministic; never prints.
 */
#ifndef WARDEN_EXPORT_SB_H
#define WARDEN_EXPORT_SB_H

#include <jansson.h>

#include "error.h"
#include "results/resultset.h"

/* Write rs's campaign runs under dir (chip NULL: no chip level); *out
 * {"format": "siliconbench", "files": [paths written]}. */
struct werr *export_siliconbench(json_t **out, const struct resultset *rs,
    const char *dir, const char *chip);

#endif
