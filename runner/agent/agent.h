/*
 * agent.h - run the maintainer agent bounded, and trust only its diff.
 *
 * `warden agent run` makes a git worktree of the official tip under
 * .warden/worktrees/ID on a fresh branch, writes the task context to a
 * file outside it, and runs the agent's argv (from the official branch's
 * policy, never from a working tree) in it: a scrubbed environment, its
 * own process group, a wall-clock limit, the sandbox where the OS has one
 * (sandbox/sandbox.h: no secret, its own repository view, the network
 * rule agent.network). Afterwards, whatever the agent says, it checks that nothing outside
 * the worktree changed (the maintainer's checkout, .git's hooks, config
 * and refs: any change quarantines the run), takes the worktree's diff
 * against its base through the allowlist gate, queues a clean change for
 * review (source agent) and attaches a before/after smoke campaign of the
 * engines it touches, whose engines run sandboxed too and after which the
 * repository is checked again. Every run is a row and journal entries.
 *
 * Never prints; progress goes to the caller's callback.
 */
#ifndef WARDEN_AGENT_H
#define WARDEN_AGENT_H

#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "error.h"

struct store;
struct policy;

/*
 * What an agent run works on. The problem is a JSON object, validated
 * by agent_task_set against the schema in context.c (s_problem):
 *
 *   kind          "engine" or "incident" (required)
 *   summary       one line (required)
 *   engines       the engines concerned; they are smoke-tested (required)
 *   incident      the incident's number (incident tasks)
 *   culprit       {"package", "from", "to"}: the dependency triage blames
 *   versions      {ENGINE: {"before": {PKG: VER}, "after": {PKG: VER}}}
 *   proposed_pin  {"engine", "pin"}: e.g. "mlx==0.31.1"
 *   evidence      [anything]: what triage measured (shown as JSON)
 *   failing_cells [{"engine", "model", "split", "concurrency", "outcome",
 *                   "status", "detail", "completed", "total", "run_id",
 *                   "log_path", "log_tail"}]; status is the level's
 *                   (campaign_level_status), null where none is known.
 *                   A cell of outcome "regression" (a performance
 *                   regression triage took as a break: every request
 *                   completed) adds its series' figures, as
 *                   regress_cycle_regressed gives them: "metric",
 *                   "before" (the published figure), "after" (the
 *                   cycle's), "unit", "worse_pct", "threshold_pct",
 *                   "p_value", "alert" (its number) and "state" (the
 *                   alert's); the task context shows them in a table
 *
 * Only kind, summary and engines are required; the rest is shown to the
 * agent in the task context when present.
 */
struct agent_task {
	char *kind;		/* "engine" or "incident" */
	char *ref;		/* the engine's name, or the incident's number */
	json_t *problem;
};

/* Take kind, ref and problem (a new reference is kept) after validating
 * the problem; an invalid problem is an input error naming the field. */
struct werr *agent_task_set(struct agent_task *t, const char *kind,
    const char *ref, json_t *problem);
/* The task of `--engine E`: the engine's failing cells in the newest
 * campaign run that has it, their log tails, and its version diff
 * against its last complete sweep where the update step recorded
 * manifests. An engine the policy's rosters do not name is an input
 * error. */
struct werr *agent_task_engine(struct agent_task *t, struct store *store,
    const struct policy *policy, const char *engine);
/* The task of `--incident N`: the incident's problem, as triage records
 * it (triage_incident_problem); an unknown incident is an input error. */
struct werr *agent_task_incident(struct agent_task *t, struct store *store,
    int64_t incident);
void agent_task_free(struct agent_task *t);

struct agent_run_opts {
	const char *repo_root;
	git_repository *repo;
	struct store *store;
	const char *official_branch;	/* named by the working tree's
					   policy; its own tree's policy rules */
	const struct agent_task *task;
	int dry_run;			/* resolve and show; change nothing */
	void (*on_progress)(void *arg, const char *what);
	void *arg;
};

/*
 * Run the agent on the task (see the top of this file). *out is the
 * run's record (see warden-agent(1): `warden agent show`). An error means warden
 * could not go on (repository, store, a required sandbox missing: then
 * the run is recorded as 'refused'); an agent that misbehaves is an
 * outcome in the record (state rejected, quarantined, ...), not an error.
 */
struct werr *agent_run(json_t **out, const struct agent_run_opts *o);

/* Every run, oldest first, without records; one run with its record. */
struct werr *agent_list(json_t **out, struct store *store);
struct werr *agent_show(json_t **out, struct store *store, int64_t id);

/* The example instructions `warden init` writes (policy's
 * agent.instructions, policy/agent-instructions.md). */
const char *agent_instructions_default_text(void);

#endif
