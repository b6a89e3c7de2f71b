/*
 * cycle.h - `warden cycle`: the maintenance cycle, one resumable run
 * under one cycle id: checkout, update, campaign, fidelity, gate,
 * regressions, triage, agent, publish, journal, export, each step calling its
 * module's function and recorded against the cycle.
 *
 * A round runs the steps in that order. When the round queued fixes
 * (triage's pins, the agent's changes) and policy both publishes and
 * waits for review, the cycle stops 'waiting' after exporting its
 * journal; run again once the fixes are reviewed, it measures a second
 * round at the new official tip and publishes that. A cycle killed at
 * any moment continues, run again, at the first step not over (the
 * campaign and the fidelity task resume at their cell).
 *
 * Every cell ends the cycle with one status of SiliconBench's journals
 * (cells.c), and the cycle's journal is structured JSON (build.c),
 * stored and journaled, rendered as SiliconBench's Markdown (render.c)
 * by the journal export. Never prints: progress goes to a callback.
 */
#ifndef WARDEN_CYCLE_H
#define WARDEN_CYCLE_H

#include <signal.h>
#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "error.h"
#include "policy.h"
#include "store.h"

/* The steps of a round, in order; NULL-terminated. */
extern const char *const cycle_steps[];

struct cycle_progress {
	const char *cycle;
	int round;
	const char *step;
	const char *what;	/* what the step does now, one line */
	int step_done;		/* the step just ended (what says how) */
	int line;		/* worth a line in a log (a step starts, a
				   sweep or cell ends); else a live update */
	double eta_s;		/* of the whole cycle; -1 unknown */
	double interval_s;	/* the policy's progress interval (off a
				   terminal), or -1 before it is read */
};

struct cycle_opts {
	const char *repo_root;
	struct store *store;
	const char *roster;	/* NULL: the policy's default roster */
	int resume;		/* --resume: continue, never start a new one */
	const char *new_id;	/* id of a new cycle; NULL: cycle-UTC-time */
	/* Set (to a signal's number) when the cycle must stop: the step
	 * under way stops as the campaign does, and the cycle stays
	 * resumable. */
	const volatile sig_atomic_t *stop;
	void (*on_progress)(void *arg, const struct cycle_progress *p);
	void *arg;
};

/*
 * Run (or continue) a cycle. *out: {"cycle", "round", "state" (done or
 * waiting), "exit" (0 healthy; 1 something broke, a gate regression, an
 * incident left open, or review awaited), "resumed", "journal" (the
 * cycle's journal), "approve" (the exact commands for review items
 * waiting)}. An error leaves the cycle resumable.
 */
struct werr *cycle_run(json_t **out, const struct cycle_opts *o);

/*
 * Where the current or last cycle stands, read from the store without
 * writing it (a read-only connection: no writer lock): {"cycle",
 * "roster", "state" (running, interrupted, waiting, done), "round",
 * "alive", "pid", "step", "what" (the cell under way), "run", "eta_s",
 * "steps", "started", "finished", "exit"}, or *out NULL when there has
 * been no cycle. Also while a cycle runs.
 */
struct werr *cycle_status(json_t **out, struct store *store,
    const char *repo_root);
/* A commit on the official branch that no journal entry records (made
 * outside warden), said with the command that records it: as what stops
 * the cycle when blocks (no publish will adopt it), else as what the next
 * publish adopts. NULL when there is none (or the journal cannot be read:
 * journal verify says why). Caller frees. Reads only. */
char *cycle_official_unrecorded(struct store *store,
    struct git_repository *repo, const char *branch, int blocks);
/* What cycle_official_unrecorded() says of commit (hex). Caller frees. */
char *cycle_unrecorded_text(const char *commit, const char *branch,
    int blocks);

/* ---- cells (cells.c) ---- */

/* The cells of a campaign run's sweeps (as store_campaign_sweeps_json
 * gives them), in grid order, each judged by cycle_cell_judge. */
json_t *cycle_cells(const json_t *sweeps, const struct policy *pol);
/* One cell from its sweeps: {"engine", "model", "split", "status",
 * "reason", "notes", "levels", "requests", "failed"}; pol gives the
 * gate's completion line (degraded below it). */
json_t *cycle_cell_judge(const json_t *sweeps, const struct policy *pol);
/* "ENGINE/MODEL/SPLIT"; caller frees. */
char *cycle_cell_key(const json_t *cell);
/* Is status a failure (not ok, fixed or skipped)? */
int cycle_status_failing(const char *status);
/* The statuses counted in counts (status -> count), worst first, the same
 * order however they were counted (a fresh or a resumed cycle); the names
 * point into counts. Caller frees the array. */
const char **cycle_statuses_ordered(const json_t *counts, size_t *n);
/* Is status one of the vocabulary? */
int cycle_status_known(const char *status);

/* ---- the journal (build.c, render.c) ---- */

/* SiliconBench's Markdown of a cycle journal (the JSON that `warden
 * cycle` stores), appended to md. */
void cycle_render_markdown(struct buf *md, const json_t *journal);

#endif
