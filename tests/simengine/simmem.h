/*
 * simmem.h - memory warden-simengine really holds, so that a sampler
 * reading /proc or task_info sees the serving model's numbers.
 *
 * Weights are one mapping made at start; the KV cache is a set of 1 MiB
 * chunks mapped or unmapped to follow the scheduler's resident figure.
 * Every page is written so it is resident, not just reserved. Never
 * decides how much to hold: sched.c does.
 */
#ifndef SIM_SIMMEM_H
#define SIM_SIMMEM_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SIMMEM_CHUNK (1024 * 1024)

struct simmem {
	void *weights;
	size_t weights_len;
	void **chunks;
	size_t nchunks;
	size_t cap;
};

void simmem_init(struct simmem *m);
/* Map and touch bytes of "weights". */
struct werr *simmem_weights(struct simmem *m, size_t bytes);
/* Hold KV chunks covering bytes (rounded up to whole chunks). Returns
 * -1 if the system refused memory (what is held stays held). */
int simmem_set_kv(struct simmem *m, uint64_t bytes);
/* Bytes of KV chunks held now. */
uint64_t simmem_kv_held(const struct simmem *m);
void simmem_free(struct simmem *m);

#endif
