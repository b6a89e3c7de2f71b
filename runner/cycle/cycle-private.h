/*
 * cycle-private.h - what the files of runner/cycle/ share: the state of
 * a cycle being run, and the steps. Not for other modules.
 */
#ifndef WARDEN_CYCLE_PRIVATE_H
#define WARDEN_CYCLE_PRIVATE_H

#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "cycle.h"
#include "policy.h"

struct cyc {
	const struct cycle_opts *o;
	struct store *store;
	git_repository *repo;
	struct policy *policy;		/* the official branch's own */
	const struct roster *roster;
	char *id;
	int round;
	char machine[17];
	json_t *steps;			/* this cycle's step rows so far */
	json_t *prev_steps;		/* the previous cycle's, for ETAs */
	uint64_t step_started_ns;
	const char *step;		/* under way */
	double step_eta_s;		/* of the step under way; -1 unknown */
	int waiting;			/* round 1 stops for review */
	int resumed;			/* an unfinished cycle, continued */
};

/* A step: *state "done", "skipped" (*result says why) or "failed";
 * *result (new reference) what it did. An error stops the cycle, which
 * stays resumable at this step. */
typedef struct werr *(*cycle_step_fn)(struct cyc *c, json_t **result,
    const char **state);

/* steps.c */
struct werr *cycle_step_checkout(struct cyc *c, json_t **result,
    const char **state);
struct werr *cycle_step_update(struct cyc *c, json_t **result,
    const char **state);
struct werr *cycle_step_campaign(struct cyc *c, json_t **result,
    const char **state);
struct werr *cycle_step_fidelity(struct cyc *c, json_t **result,
    const char **state);
struct werr *cycle_step_gate(struct cyc *c, json_t **result,
    const char **state);
struct werr *cycle_step_triage(struct cyc *c, json_t **result,
    const char **state);
/* regressions.c: the round's series against the last published cycles,
 * alerts recorded (regress.h). */
struct werr *cycle_step_regressions(struct cyc *c, json_t **result,
    const char **state);
/* The journal's "regressions": the alerts the cycle opened, saw again and
 * fixed (regress_cycle_alerts), with the baseline and policy of its last
 * regressions step, or "why" it compared nothing. */
struct werr *cycle_journal_regressions(json_t **out, struct cyc *c);
/* incidents.c: {ENGINE: why it is not the agent's (a string), or the
 * incident task that covers it ({"task": "incident:N", "incident": N})}
 * for each engine of failing (an object keyed by engine) in an open
 * incident of triage's. */
struct werr *cycle_incident_cover(json_t **cover, struct store *store,
    const json_t *failing);
/* timeline.c: the journal's timeline of the step rows (new array). */
json_t *cycle_timeline(const json_t *steps);
/* A step's result as the timeline's one line (caller frees). */
char *cycle_step_what(const char *step, const json_t *result);
/* agent.c */
struct werr *cycle_step_agent(struct cyc *c, json_t **result,
    const char **state);
/* publish.c */
struct werr *cycle_step_publish(struct cyc *c, json_t **result,
    const char **state);

/* The result of step in round (NULL: not over, or none). Borrowed. */
const json_t *cycle_step_result(const struct cyc *c, int round,
    const char *step);
/* The state of step in round, or NULL when it has no row. */
const char *cycle_step_state(const struct cyc *c, int round,
    const char *step);
/* "ID-rROUND-WHAT", a run id of this cycle; caller frees. */
char *cycle_run_id(const struct cyc *c, int round, const char *what);
/* The cells of this cycle's campaign of round (judged), or an empty
 * array when it has none. New reference. */
struct werr *cycle_round_cells(json_t **out, struct cyc *c, int round);
/* The review items this cycle queued (agent and triage), ids. */
json_t *cycle_queued_reviews(struct cyc *c);
/* Report progress of the step under way: a live update, a line for a
 * log, or the step's end. */
enum { CYCLE_LIVE, CYCLE_LINE, CYCLE_DONE };
void cycle_say(struct cyc *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The step under way may refine its own ETA (seconds; -1 unknown). */
void cycle_step_eta(struct cyc *c, double eta_s);

/* Read this cycle's step rows again into c->steps, after one changed. */
struct werr *cycle_reload_steps(struct cyc *c);

/* pick.c: take .warden/cycle.lock for this process (*fd_out; closing it
 * lets go), or say which process runs a cycle. */
struct werr *cycle_lock(int *fd_out, const char *repo_root);
/* Find or make the cycle to run into c; *out set (and nothing to run)
 * when the cycle still waits for review. */
struct werr *cycle_pick(json_t **out, struct cyc *c);
/* "warden review approve N --as ..." for each pending review (an id, or
 * an object with "id"). New array. */
json_t *cycle_approve_commands(git_repository *repo, const json_t *pending);
/* The reviews of waiting (every pending one) that this cycle queued: the
 * ones whose approval the cycle asks for. A new array (borrowing). */
json_t *cycle_own_waiting(struct cyc *c, const json_t *waiting);

/* checkout.c: move a clean detached HEAD forward to the official tip. */
struct werr *cycle_checkout_sync(json_t **result, git_repository *repo,
    const char *branch);

/* build.c: the cycle's structured journal, from the store. */
struct werr *cycle_build_journal(json_t **out, struct cyc *c);

/* build-reviews.c: the journal's review queue. *out: the agent's tasks,
 * each with its review's status and note. */
struct werr *cycle_agent_tasks(json_t **out, struct cyc *c);
/* journal "approved": reviews decided since since (NULL: all), with what
 * blames them and their evidence; summary "reviews_waiting": the pending. */
struct werr *cycle_reviews(json_t *journal, json_t *summary,
    struct store *store, const char *since);
/* ran.c: {"machine", "hardware", "os", "engines": [{engine,
 * manifest_sha256 (null: none), kind, engine_version, python, packages
 * (a count), commit, recorded_in}]}, every engine of the roster. */
json_t *cycle_what_ran(struct cyc *c);

#endif
