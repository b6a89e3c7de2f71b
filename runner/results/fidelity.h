/*
 * fidelity.h - run the fidelity task against engines: for each (engine,
 * model, shots) cell, build the task's prompts, send them through the
 * campaign's load generator to a server started by the campaign's engine
 * lifecycle, parse every answer into a label (fidelity-score.h), and
 * record every item's prediction and the cell's scores in the store.
 *
 * Nothing is ever dropped: a failed request, an item never sent (a crash,
 * the wall cap), an engine that does not start, are predictions of the
 * class `none`, counted on their own. Engine failures are outcomes, as in
 * the campaign; an error means warden itself could not go on. A run has
 * an explicit id, the provenance of a campaign run plus the task digest,
 * and resumes after a kill (a cell left running is run again).
 *
 * Also: importing a reference engine's answers, and marking a measured
 * run as the reference. Never prints: progress goes to a callback.
 */
#ifndef WARDEN_FIDELITY_H
#define WARDEN_FIDELITY_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "store.h"
#include "results/fidelity-task.h"

struct fidelity_progress {
	size_t cell, cells;		/* 1-based position, count */
	const char *engine, *model;
	int shots;
	const char *phase;		/* "starting", "asking", "done" */
	size_t done, total, ok;
	const char *outcome;		/* when done */
	double weighted_f1;		/* when done; -1 when the cell did not
					   run to completion (no figure) */
	double elapsed_s;
};

struct fidelity_opts {
	const char *repo_root;
	const struct policy *policy;
	struct store *store;
	const struct fidelity_task *task;
	const char *roster;		/* NULL: policy default */
	const char *const *engines;	/* NULL-terminated filters; NULL: all */
	const char *const *models;
	const int *shots;		/* NULL: 0 and 5 */
	size_t nshots;
	size_t limit;			/* first N items; 0: all */
	unsigned concurrency;		/* 0: 8 */
	int resume;
	const char *run_id;		/* NULL: new (or newest unfinished) */
	void (*on_progress)(void *arg, const struct fidelity_progress *p);
	void *arg;
};

/* Run (or resume) the task. *run_id_out (caller frees) names the run. */
struct werr *fidelity_run(const struct fidelity_opts *o, char **run_id_out);

/*
 * Import a reference engine's answers from a JSON Lines file, one
 * {"model", "shots", "id", "answer"} per line (answer: the raw reply,
 * parsed by the same rule; null for a failed request). Every item of the
 * task must be answered for each (model, shots) in the file. Stored as
 * a done run of kind "imported" under engine, scored, and marked as the
 * reference. Errors name the file and line.
 */
struct werr *fidelity_import_reference(struct store *store,
    const char *repo_root, const struct policy *policy,
    const struct fidelity_task *task, const char *path, const char *display,
    const char *engine, const char *run_id, char **run_id_out);

/* A new run id: UTC time, machine, random (caller frees). */
char *fidelity_new_run_id(const char *machine);

#endif
