/*
 * triage.h - find the dependency that broke several engines at once,
 * prove it by pinning it back, and open an incident.
 *
 * triage_run() looks at one cycle (the newest with a campaign run, or
 * the one named): an engine broke when its cells now fail (from the
 * stored sweep outcomes, never logs) or its update failed, and it was
 * healthy in an earlier cycle. Each broken engine's manifest is diffed
 * against that healthy cycle's; every changed package is scored across
 * engines (the broken engines that took the same release, minus the
 * healthy ones that took it and stayed healthy); then the changes are
 * searched in a scratch environment (search.h: binary search, then
 * ddmin within the budget), each smoke run recorded. The culprits
 * become incidents (Perfherder's states: untriaged, investigating,
 * confirmed, fixed, wontfix, upstream), each transition journaled with
 * who and why, and a confirmed dependency gets a pin patch to the
 * affected adapters through the allowlist gate into the review queue
 * (source triage). An engine broken by its own release is an incident
 * of its own, `upstream`. Incidents whose engines are healthy again
 * become fixed; a fixed incident whose culprit has a newer release is
 * reopened, the release smoke-tested, and lifting the pin proposed when
 * it passes.
 *
 * Never prints: progress goes to the caller's callback. `warden triage`
 * (cmd-triage.c) and the cycle call triage_run(); `warden incident`
 * (cmd-incident.c) and `warden agent run --incident` the rest.
 */
#ifndef WARDEN_TRIAGE_H
#define WARDEN_TRIAGE_H

#include <stddef.h>
#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "store.h"

struct triage_progress {
	const char *phase;	/* "detect", "search", "smoke", "propose",
				   "lift", "settle" */
	const char *engine;	/* NULL: not about one engine */
	size_t run;		/* smoke run k ... */
	size_t max;		/* ... of at most max (0: not a smoke run) */
	const char *what;	/* a line for people */
};

struct triage_opts {
	const char *repo_root;		/* .warden/ and the adapters smoked */
	git_repository *repo;		/* the official branch, for patches */
	const struct policy *policy;	/* the trusted policy */
	struct store *store;
	const char *cycle;		/* NULL: the newest with a campaign run */
	const char *const *engines;	/* NULL-terminated filter; NULL: all */
	size_t budget;			/* smoke runs per engine; 0: policy's
					   triage.budget */
	void (*on_progress)(void *arg, const struct triage_progress *p);
	void *arg;
};

struct triage_result {
	char *cycle;		/* the cycle triaged; NULL: no campaign run */
	int nothing_broke;	/* every engine of the cycle is healthy */
	int nothing_to_compare;	/* engines failed, but none was healthy in
				   an earlier cycle */
	json_t *broken;		/* [ENGINE]: broken against an earlier cycle */
	json_t *cannot_compare;	/* [{"engine", "why"}] */
	json_t *opened;		/* [incident id] opened by this run */
	json_t *updated;	/* [incident id] seen again, engines added */
	json_t *fixed;		/* [incident id] that became fixed */
	json_t *reopened;	/* [incident id] reopened by a new release */
	json_t *reviews;	/* [review id] queued by this run */
	json_t *report;		/* all of it (doc/triage.md: "Exit status and output") */
};

/*
 * Triage one cycle (see the top of this file). An error means warden
 * could not go on (store, repository, policy, a cycle that names no
 * campaign run); broken engines are results. Free res with
 * triage_result_free().
 */
struct werr *triage_run(struct triage_result *res, const struct triage_opts *o);
void triage_result_free(struct triage_result *res);

/* The incident states, NULL-terminated. */
extern const char *const triage_states[];
int triage_state_valid(const char *state);

/* Incidents, oldest first (state NULL: all): a new array. */
struct werr *triage_incident_list(json_t **out, struct store *store,
    const char *state);
/* One incident with its record, transitions and smoke runs; an unknown
 * number is an input error. */
struct werr *triage_incident_show(json_t **out, struct store *store,
    int64_t id);
/* A maintainer's transition: journaled with who and why. Text that is
 * not UTF-8, an unknown state or incident, or the state it already has
 * are input errors. */
struct werr *triage_incident_set(struct store *store, int64_t id,
    const char *state, const char *reason, const char *who);
/*
 * The problem of incident id for the maintainer agent (agent.h's
 * fields: kind "incident", summary, engines, incident, culprit,
 * versions, proposed_pin, evidence, failing_cells): a new object. An
 * unknown number is an input error.
 */
struct werr *triage_incident_problem(json_t **out, struct store *store,
    int64_t id);

#endif
