/*
 * merge.h - combine snapshots measured on different machines (shards of
 * one campaign, a fleet) into one result set. Each part is verified
 * first; parts must share their inputs (every policy, adapter, profile
 * and workload digest, and the commit) and no cell may be measured twice
 * (the same engine, model, split and concurrency on the same machine, or
 * the same fidelity cell). A refusal names the input or cell and the two
 * parts. Never prints.
 */
#ifndef WARDEN_MERGE_H
#define WARDEN_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "results/resultset.h"
#include "results/sign.h"

struct merge_result {
	struct resultset rs;	/* the union of the parts' run documents */
	json_t *inputs;		/* the common inputs (manifest "inputs") */
	json_t *parts;		/* [{"path", "id", "sha256"}] */
	char commit[41];
	int64_t source_date;	/* the latest of the parts' */
};

/* Merge the snapshot archives at paths, each verified with signers (NULL:
 * none) and the requirement. Mismatches are WEXIT_PROBLEM. */
struct werr *merge_snapshots(struct merge_result *out,
    const char *const *paths, size_t n, const struct signers *signers,
    int require_signature);
void merge_result_free(struct merge_result *m);

#endif
