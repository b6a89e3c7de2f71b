/*
 * fidelity-private.h - what fidelity.c (the grid and the walk) and
 * fidelity-cell.c (asking one cell's items and scoring them) share.
 * Internal to the fidelity module: the public contract is fidelity.h.
 */
#ifndef WARDEN_FIDELITY_PRIVATE_H
#define WARDEN_FIDELITY_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "engine.h"
#include "loadgen.h"
#include "results/fidelity.h"

#define ANSWER_KEEP 512		/* bytes of each reply kept and stored */

struct cell {
	const char *engine, *model;	/* borrowed from the grid */
	int shots;
};

struct frun {
	const struct fidelity_opts *o;
	char *run_id;
	json_t *grid;
	struct cell *cells;
	size_t ncells, nitems;
	unsigned concurrency;
	uint64_t t0;
	int recorded;			/* the run is in the store */
};

/* What the walk keeps from one cell to the next. */
struct fwalk {
	const char *engine, *model;	/* of the current block */
	struct adapter *adapter;
	struct profile *profile;
	struct engine *eng;
	char *skip_outcome, *skip_detail;	/* the rest of the block */
	uint64_t deadline;
};

/* The answers of one cell while it runs. */
struct answers {
	struct frun *r;
	struct engine *eng;
	size_t k;
	const struct cell *c;
	uint64_t hang_ns;
	int *seen;
	char **answer, **error;
	const char **outcome;
};

/* Report progress of cell k (phase "starting", "asking", "done"). */
void fidelity_emit(struct frun *r, size_t k, const struct cell *c,
    const char *phase, size_t done, size_t ok, const char *outcome,
    double f1);

/* The answers of cell k, for the load generator's callbacks. */
void fidelity_answers_init(struct answers *a, struct frun *r, size_t k);
void fidelity_answers_free(struct answers *a);
/* Ask every item of a's cell of the walk's running engine; *end says
 * how the sweep ended. */
struct werr *fidelity_cell_ask(struct frun *r, struct fwalk *w,
    struct answers *a, enum loadgen_end *end);
/* Parse, score and store a cell; items without an answer are failed
 * with detail (or outcome) as their error. eng may be NULL. */
struct werr *fidelity_cell_finish(struct frun *r, int64_t cell_id,
    struct answers *a, const char *outcome, const char *detail,
    const struct engine *eng);
/* The provenance of a cell of the walk's current block. */
json_t *fidelity_cell_provenance(const struct frun *r, const struct fwalk *w);
/* "complete", "hang", "engine_cap", "server_crash". */
const char *fidelity_end_outcome(enum loadgen_end end);

#endif
