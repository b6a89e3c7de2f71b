/*
 * campaign-input.h - what a campaign reads and records about its inputs:
 * the workload splits (workloads/SPLIT.jsonl, timed and warmup prompts),
 * the request bodies built from them, and provenance (file digests,
 * hardware, OS, this machine's fingerprint). Never prints; never touches
 * the store.
 */
#ifndef WARDEN_CAMPAIGN_INPUT_H
#define WARDEN_CAMPAIGN_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "adapter.h"
#include "error.h"
#include "loadgen.h"
#include "schema.h"
#include "sha256.h"

/* The prompts of one split: timed and warmup lines of workloads/S.jsonl. */
struct workload {
	char *split;
	char digest[SHA256_HEX_LEN + 1];
	json_t **timed, **warm;
	size_t ntimed, nwarm;
};

/* Load workloads/SPLIT.jsonl of repo_root; its sha256 goes to digest. */
struct werr *workload_load(struct workload *w, const char *repo_root,
    const char *split);
/* The lines of a workload file (text, len bytes; name for messages) into
 * w, which must be zeroed with its split set; workload_load() reads the
 * file and calls it. A line jansson cannot parse, or that is not an object
 * with 'messages', is an input error at name:LINE:COLUMN. */
struct werr *workload_parse(struct workload *w, const char *text, size_t len,
    const char *name);
/* For lint: every bad line of a workload file into probs, as
 * workload_parse() would refuse the first. */
void workload_lint(const char *text, size_t len, const char *name,
    struct problems *probs);
void workload_free(struct workload *w);

/* The request bodies of a sweep and the workload ids they came from. */
struct bodies {
	struct loadgen_body *timed, *warm;
	const char **timed_ids, **warm_ids;
	size_t ntimed, nwarm;
};

/*
 * The first limit (0: all) timed prompts and the first warmups warmup
 * prompts as request bodies for model: messages, max_tokens, stream with
 * usage, temperature 0, thinking off where the profile names a switch,
 * and, when send_tools, a line's tools as the request's tools (policy
 * campaign.send_tools; SiliconBench sends none: the agent split's tool
 * calls are in its messages).
 */
void bodies_build(struct bodies *b, const struct workload *w, size_t limit,
    size_t warmups, const char *model, const struct profile *p,
    int send_tools);
void bodies_free(struct bodies *b);

/* sha256 of a file as a JSON string, or JSON null if it cannot be read. */
json_t *provenance_file_digest(const char *path);
/* The same for a path relative to repo_root (absolute paths as they
 * are): adapters and profiles keep their repository-relative name. */
json_t *provenance_repo_digest(const char *repo_root, const char *path);
/* {"cpu", "cpus", "system_memory_bytes", "gpu_working_set_hint_bytes",
 * "arch"}; runs recorded before the names were one say "memory_bytes"
 * for system_memory_bytes. */
json_t *provenance_hardware(uint64_t gpu_hint);
/* {"name", "release", "version"} of uname(3) */
json_t *provenance_os(void);
/*
 * What every result of a run carries (the campaign's, the fidelity
 * task's): {"warden_version", "machine", "repo_commit", "repo_dirty" (or
 * "repo_error"), "policy_sha256", "hardware", "os"}. policy_path is the
 * policy file as loaded (relative paths are taken from repo_root).
 */
json_t *provenance_run(const char *repo_root, const char *policy_path,
    const char *machine, uint64_t gpu_hint);

/* This machine's fingerprint: 16 hex digits of sha256 over hostname, OS,
 * architecture, CPU model and installed memory. */
void campaign_machine_id(char out[17]);

#endif
