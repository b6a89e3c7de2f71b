/*
 * policy.h - policy/warden.json, the maintainer-controlled rules: the write
 * allowlist, gates, caps, campaign grid, rosters, the official branch and
 * the agent. Defaults reproduce the SiliconBench protocol.
 *
 * Policy is data read from a trusted tree; loading never executes anything.
 */
#ifndef WARDEN_POLICY_H
#define WARDEN_POLICY_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "schema.h"

/* caps.max_event_bytes when the policy leaves it out: far above any real
 * chat chunk (sse.h's bound). */
#define POLICY_MAX_EVENT_DEFAULT	((size_t)8 << 20)

struct strlist {
	char **v;
	size_t n;
};

struct roster {
	char *name;
	struct strlist engines;
};

/* A policy group: packages moved in every engine at once or in none. */
struct policy_group {
	char *name;
	struct strlist packages;
};

struct policy {
	char *path;			/* as given to the loader */
	json_t *doc;			/* the whole validated document */

	struct strlist allowlist;	/* globs a change may touch */
	struct strlist executable;	/* globs that may carry the exec bit */
	struct {
		long max_bytes;
		long max_files;
		int allow_binary;
	} patch_limits;

	struct {
		int completion_min;	/* of completion_of, every level and split */
		int completion_of;
		double fidelity_band_pp;
		struct strlist required_models;
	} gates;

	struct {
		double request_timeout_s;
		double engine_wall_s;
		double ready_timeout_s;
		double hang_s;
		double stop_grace_s;
		int warmups;
		size_t max_event_bytes;	/* optional, default 8 MiB */
	} caps;

	struct {
		int *concurrency;
		size_t n_concurrency;
		struct strlist splits;
		int server_per_level;
		double memory_sample_hz;
		int client_realtime;	/* optional, default true */
		int send_tools;		/* optional, default false: send each
					   workload line's tools (SiliconBench
					   sends none) */
		/* optional, default 30: seconds between progress lines
		 * when stderr is not a terminal (0: none but each sweep's
		 * start and end) */
		double progress_interval_s;
	} campaign;

	struct roster *rosters;
	size_t n_rosters;
	char *default_roster;
	struct strlist models;

	/* The official branch: never read from the file, whose
	 * 'official_branch' is refused. `git config warden.officialBranch`
	 * (policy_official_branch), set by the loaders that have the
	 * repository (policy_load_trusted, policy_load_commit,
	 * policy_set_official); POLICY_OFFICIAL_DEFAULT otherwise. */
	char *official_branch;
	struct {
		struct strlist command;	/* argv template, see agent.h;
					   the preset's when policy has none */
		int command_given;	/* policy wrote agent.command */
		char *preset;		/* "claude-code", "codex" or NULL */
		char *gateway;		/* the model API's base URL, or NULL */
		char *model;		/* the model to ask for, or NULL */
		int max_turns;		/* 0: no cap */
		double max_cost_usd;	/* 0: no cap */
		int api_retries;	/* -1: the program's own */
		struct strlist env_set;	/* NAME=VALUE the preset sets */
		double time_limit_s;
		char *sandbox;		/* "required", "best-effort", "off" */
		char *network;		/* "https" (default), "host", "none" */
		struct strlist readable; /* absolute paths shown read-only */
		struct strlist env;	/* variables passed to the agent */
		char *instructions;	/* a path in the tree, or NULL */
		int queue_on_failure;	/* queue a good change of an agent
					   that exited non-zero */
		int *smoke_concurrency;	/* default [1] */
		size_t smoke_n_concurrency;
		int smoke_prompts;	/* default 4 */
		int smoke_rounds;	/* interleaved rounds a side, 2 */
	} agent;
	int retirement_days;
	int busy_timeout_ms;
	struct {			/* optional object "publish" */
		char *allowed_signers;	/* repository path, or NULL */
		int require_signature;
	} publish;

	/* `triage`: optional as a whole and field by field; see doc/triage.md. */
	struct {
		int *smoke_concurrency;	/* default [1] */
		size_t smoke_n_concurrency;
		int smoke_prompts;	/* default 4 */
		int budget;		/* smoke runs per engine, default 16 */
	} triage;

	/* `regressions`: optional as a whole and field by field; the
	 * performance alerts (runner/regress/, doc/regressions.md). */
	struct {
		double threshold_pct;	/* how much worse, % of the better
					   figure (10) */
		double alpha;		/* the test's significance level (0.01) */
		int baseline_cycles;	/* published cycles compared with (3) */
		int min_samples;	/* per-request samples a side needs (5) */
		struct strlist metrics;	/* default: all five; empty: off */
	} regressions;

	/* `update`: optional as a whole and field by field (defaults in
	 * policy.c); see doc/update.md. */
	struct {
		struct strlist python;	/* makes venvs: python -m venv DIR */
		int venv_pip;		/* venvs get their own pip */
		struct strlist shim_pip;	/* empty: the installed shim */
		struct strlist shim_brew;
		char *index_url;	/* NULL: pip's own default */
		struct strlist find_links;
		int no_index;
		char *json_url;		/* release dates, "{package}" in it */
		double min_release_age_days;
		struct strlist pins;	/* "pkg==version", every engine */
		struct strlist holds;	/* packages or engines kept as they are */
		struct policy_group *groups;
		size_t n_groups;
		double shim_timeout_s;
		double build_timeout_s;
		double fetch_model_timeout_s;
		int build_jobs;		/* 0: the machine's cores */
		struct policy_mirror {	/* a source url (or a prefix of
					   urls, ending in '/') and its
					   mirror */
			char *from;
			char *to;
		} *mirrors;
		size_t n_mirrors;
	} update;

	/* `cycle`: optional as a whole and field by field; which of the
	 * cycle's optional steps run, and their budgets (warden(1), POLICY,
	 * "cycle"). */
	struct {
		int update;		/* run the update step (default true) */
		int fidelity;		/* run the fidelity task (true) */
		int agent;		/* run the agent on what broke (false) */
		int publish;		/* publish when the conditions hold
					   (false) */
		int wait_for_review;	/* stop for the review of the cycle's
					   fixes, then measure again (true) */
		size_t limit;		/* timed prompts per sweep; 0: all */
		size_t fidelity_limit;	/* fidelity items; 0: all */
		int *fidelity_shots;	/* default [0, 5] */
		size_t n_fidelity_shots;
		int agent_runs;		/* agent runs per cycle (3) */
		int triage_smoke_runs;	/* triage's smoke runs; 0: triage.budget */
	} cycle;
};

/* The metrics regressions.metrics may name, in doc/glossary.md's names,
 * NULL-terminated; and the glossary name of name (itself, or the one it
 * had before: ttft_p50, ttft_p99, tpot_p50, peak_engine_memory), or NULL
 * when it names none. */
extern const char *const policy_regression_metrics[];
const char *policy_regression_metric(const char *name);

/* The default policy/warden.json text (what `warden init` writes). */
const char *policy_default_text(void);

/* Load and validate; every problem goes to probs. Returns NULL and sets
 * *out on success; on problems returns problems_to_werr(). */
struct werr *policy_load_buffer(struct policy **out, const char *text,
    size_t len, const char *name, struct problems *probs);
struct werr *policy_load_file(struct policy **out, const char *path,
    const char *display, struct problems *probs);
void policy_free(struct policy *policy);

/* The schema of policy/warden.json (policy-schema.c). */
extern const struct schema policy_schema;
/* Schema check: "package==version", as pins and constraints are written. */
int policy_check_pin_spec(const json_t *v, struct buf *why);
/*
 * Policy from git (policy-trusted.c). The trusted policy is the one on
 * the official branch's tip: what patch, review and journal commands use,
 * whatever the working tree holds. The official branch is named by
 * `git config warden.officialBranch` (default "official") only: a policy
 * that names it is refused. Blobs only: a symlink or an oversized blob is
 * refused.
 */
struct git_repository;
struct git_commit;
struct git_oid;

#define POLICY_OFFICIAL_DEFAULT "official"
/* The official branch's name: `git config warden.officialBranch`, else
 * POLICY_OFFICIAL_DEFAULT, the one place it is named (caller frees). */
char *policy_official_branch(struct git_repository *repo);
/* Set p->official_branch from repo's config (a policy loaded from a
 * working tree's file). */
void policy_set_official(struct policy *p, struct git_repository *repo);
/* Is there a git repository at repo_root with its official branch? */
int policy_official_exists(const char *repo_root);
/*
 * The regular file at path in commit's tree, appended to out, at most
 * FILE_MAX_CONFIG (else an input error); rev names the commit in
 * messages. *missing: 0 found; 1 no such entry; else the entry's mode
 * (a symlink, a directory, a gitlink: not a file). The caller says what
 * a missing file means.
 */
struct werr *policy_commit_file(struct buf *out, int *missing,
    struct git_repository *repo, const struct git_commit *commit,
    const char *path, const char *rev);
/* policy/warden.json of commit's tree; rev names it in messages. */
struct werr *policy_load_commit(struct policy **out,
    struct git_repository *repo, const struct git_commit *commit,
    const char *rev);
/* The trusted policy; *commit_out (may be NULL) gets the official tip. */
struct werr *policy_load_trusted(struct policy **out,
    struct git_oid *commit_out, struct git_repository *repo);

const struct roster *policy_roster(const struct policy *policy, const char *name);
/* The roster engine is served in: the default roster when it has it,
 * else the first that does; NULL: no roster has it. */
const struct roster *policy_engine_roster(const struct policy *policy,
    const char *engine);
int strlist_contains(const struct strlist *l, const char *s);

/* ---- policy-agent.c: the agent object, its presets and template ---- */

/* Fill p->agent's command, env, preset and caps from the object o,
 * resolving the preset (see policy-agent.c); free them. */
void policy_agent_load(struct policy *p, const json_t *o);
void policy_agent_free(struct policy *p);
/* The agent's rules the schema cannot say, as problems. */
void policy_agent_check(const struct policy *p, const char *name,
    const char *text, size_t len, struct problems *probs);
/* The port an http(s) URL names (its scheme's when it names none). */
long policy_agent_url_port(const char *url);
/* Is name (n bytes) a placeholder of agent.command? */
int policy_agent_placeholder_known(const char *name, size_t n);
/* Expand one argument of agent.command into out: '{{' and '}}' are
 * literal braces, '{name}' is lookup's value for a known placeholder; an
 * unknown placeholder or an unterminated '{' is an input error (its
 * message says what of the field is wrong, not which field). */
struct werr *policy_agent_expand(struct buf *out, const char *tmpl,
    const char *(*lookup)(void *arg, const char *name, size_t n),
    void *arg);
/* Copy an array of strings (NULL or empty: an empty list). */
void strlist_from_json(struct strlist *l, const json_t *arr);
void strlist_free(struct strlist *l);

#endif
