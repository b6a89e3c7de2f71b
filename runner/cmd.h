/*
 * cmd.h - the command table and what every command receives.
 *
 * Adding a command (git's checklist, ours):
 *  1. runner/cmd-NAME.c defining `const struct cmd_entry cmd_NAME_entry`
 *     with a static exec function; it parses options (cmd_getopt, so the
 *     global ones work after the name too), calls modules, prints: data
 *     as JSON with --json, nothing but data and errors with -q;
 *  2. one line in the table in runner/cmd.c;
 *  3. the file in warden_SOURCES (Makefile.am or the area's fragment);
 *  4. a page doc/warden-NAME.1.md (the man page source; Makefile.am builds
 *     and installs it, warden.1.md lists it under its group) with the same
 *     synopsis as `usage`;
 *  5. integration tests tests/tNNNN-*.sh;
 *  6. a line in README.md's command table, under its group (cmd.c).
 * No work logic in command files, no printing in modules.
 */
#ifndef WARDEN_CMD_H
#define WARDEN_CMD_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "error.h"

struct policy;
struct store;

/* What the global options and lazily opened resources give a command. */
struct cmd_ctx {
	const char *progname;
	const char *repo_arg;	/* --repo DIR, or NULL */
	int json;		/* --json: machine output on stdout */
	int no_pager;		/* --no-pager: never page (cmd_pager) */
	int verbosity;		/* -q: -1, default 0, -v: 1; the last wins */
	char *repo_root;	/* resolved by cmd_ctx_repo() */
	struct policy *policy;	/* loaded by cmd_ctx_policy() */
	struct policy *trusted;	/* loaded by cmd_ctx_trusted_policy() */
	char *official;		/* named by cmd_ctx_official_branch() */
	struct store *store;	/* opened by cmd_ctx_store() */
	const char *cmdline;	/* "warden campaign --resume", for lock notes */
};

struct cmd_entry {
	const char *name;
	const char *usage;	/* synopsis after the name, as in warden.1 */
	const char *summary;	/* one line for `warden help` */
	const char *help;	/* options, one per line, for `warden help NAME` */
	struct werr *(*exec)(struct cmd_ctx *ctx, int argc, char **argv);
};

/* "'NAME' is not a warden command", with the nearest command's name when
 * one is close ("did you mean 'cycle'?"). Caller frees. */
char *cmd_unknown_message(const char *name);

/* The table, NULL-terminated. */
extern const struct cmd_entry *const cmd_table[];

/* The exit codes and their one-line meanings, as `warden help` prints
 * them (README and warden(1) say the same); ends with a NULL meaning. */
struct cmd_exit_code {
	int code;
	const char *meaning;
};
extern const struct cmd_exit_code cmd_exit_codes[];

/*
 * The global options (--repo DIR, --json, -q, -v), accepted before the
 * command name and after it. Commands parse their options with
 * cmd_getopt, never getopt_long directly, so that the global options work
 * everywhere and getopt prints nothing of its own.
 */
extern const struct option cmd_global_options[];
/* Apply global option ch (a val of cmd_global_options); 0 if it is not
 * one. */
int cmd_global_option(struct cmd_ctx *ctx, int ch, const char *arg);
/* What went wrong when getopt_long (with opterr 0 and a ':' optstring)
 * returned '?' or ':', as one message: "unknown option '--x'", "option
 * '--since' needs a value", ... Caller frees. */
char *cmd_getopt_failure(int ch, char **argv, const struct option *opts);
/*
 * getopt_long over opts (the command's own, NULL-terminated) and the
 * global options, which it applies to ctx. Returns the next command
 * option's val, or -1 at the end or on a usage error (then *err is set,
 * naming the option, with entry's usage). Reset optind to 0 first.
 */
int cmd_getopt(struct cmd_ctx *ctx, const struct cmd_entry *entry, int argc,
    char **argv, const struct option *opts, struct werr **err);
/* For a command or subcommand without options of its own: parse the
 * global ones; optind is then the first operand. */
struct werr *cmd_no_options(struct cmd_ctx *ctx, const struct cmd_entry *entry,
    int argc, char **argv);

/* The arguments of a repeatable option (--engine A --engine B), in order
 * and NULL-terminated; the strings are borrowed from argv. free(v) when
 * done. */
struct cmd_names {
	const char **v;
	size_t n;
};
void cmd_names_add(struct cmd_names *l, const char *s);

const struct cmd_entry *cmd_find(const char *name);
void cmd_print_usage(FILE *fp, const struct cmd_entry *entry);
void cmd_print_help(FILE *fp, const struct cmd_entry *entry);
void cmd_print_overview(FILE *fp);
/* `warden help --json`: every command, or one (entry non-NULL). */
json_t *cmd_help_json(const struct cmd_entry *entry);
/* A usage error for entry: "usage: warden NAME USAGE" after msg. */
struct werr *cmd_usage_error(const struct cmd_entry *entry, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A positive decimal number naming a row (a review, incident, agent run);
 * anything else is a usage error for entry: "'S' is not WHAT". */
struct werr *cmd_parse_id(const struct cmd_entry *entry, const char *s,
    const char *what, int64_t *id);
/* Did argv ask for help (-h or --help before any "--")? */
int cmd_wants_help(int argc, char **argv);

/* Resolve the repository root (--repo, $WARDEN_REPO, or discovery from cwd). */
struct werr *cmd_ctx_repo(struct cmd_ctx *ctx, const char **root);
/* Load policy/warden.json from the repository's working tree: for the
 * commands that work on the working tree (lint, campaign). */
struct werr *cmd_ctx_policy(struct cmd_ctx *ctx, struct policy **policy);
/* The trusted policy, from the official branch's tip whatever the working
 * tree holds (policy_load_trusted): for every command that decides
 * something with policy (patch, review, journal, the store's settings). */
struct werr *cmd_ctx_trusted_policy(struct cmd_ctx *ctx,
    struct policy **policy);
/* The official branch's name (policy_official_branch: git config
 * warden.officialBranch, else "official"), never the working tree's
 * policy's; the branch need not exist. */
struct werr *cmd_ctx_official_branch(struct cmd_ctx *ctx,
    const char **branch);
/* Long output goes through a pager from here on (output_pager_start),
 * unless --no-pager or --json: for `journal show`. */
void cmd_pager(struct cmd_ctx *ctx);
/* Open (creating and migrating) .warden/warden.db. */
struct werr *cmd_ctx_store(struct cmd_ctx *ctx, struct store **store);
/* For commands that only read it: store_open_readonly(), so they work on
 * a read-only file system (where nothing is written, not even the
 * recovery of an interrupted official move, left to the next writer). */
struct werr *cmd_ctx_store_readonly(struct cmd_ctx *ctx,
    struct store **store);
/* A list that has nothing in it, as text: standard output stays empty (a
 * script counts lines), and one line, "no FMT...", says so on standard
 * error, unless -q. */
void cmd_list_empty(const struct cmd_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_ctx_release(struct cmd_ctx *ctx);

/* Every command's entry. */
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_version_entry;
extern const struct cmd_entry cmd_init_entry;
extern const struct cmd_entry cmd_lint_entry;
extern const struct cmd_entry cmd_journal_entry;
extern const struct cmd_entry cmd_campaign_entry;
extern const struct cmd_entry cmd_patch_entry;
extern const struct cmd_entry cmd_review_entry;
extern const struct cmd_entry cmd_prcheck_entry;
extern const struct cmd_entry cmd_agent_entry;
extern const struct cmd_entry cmd_fidelity_entry;
extern const struct cmd_entry cmd_gate_entry;
extern const struct cmd_entry cmd_snapshot_entry;
extern const struct cmd_entry cmd_verify_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_merge_entry;
extern const struct cmd_entry cmd_publish_entry;
extern const struct cmd_entry cmd_update_entry;
extern const struct cmd_entry cmd_versions_entry;
extern const struct cmd_entry cmd_stale_entry;
extern const struct cmd_entry cmd_cycle_entry;
extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_triage_entry;
extern const struct cmd_entry cmd_incident_entry;
extern const struct cmd_entry cmd_regressions_entry;

/* A smoke campaign of a change (review-smoke.h) as a table, a row per
 * engine, model, split and concurrency, with its sweep's "OUTCOME K/T"
 * before and after the change (summed over its rounds), then its speed;
 * each line starts with indent. And its verdict in words ("fails before
 * the change, passes after it"). For `agent run`, `review show|smoke`
 * and `pr-check --smoke`. cmd-smoke-print.c */
void cmd_print_smoke_table(const json_t *smoke, const char *indent);
const char *cmd_smoke_verdict(const json_t *smoke);
/* The speed of a smoke (its "speed": regress_compare()'s cells), or of
 * triage's evidence, under indent; nothing when it has no cell. */
void cmd_print_smoke_speed(const json_t *smoke, const char *indent);
/* What an agent did, from its transcript (agent-private.h's
 * agent_transcript: files read and edited, commands and their exit
 * status, the final message, tokens and cost), each line starting with
 * indent; every string of it quoted. For `agent show` and `review show`.
 * cmd-agent.c */
void cmd_print_agent_transcript(const json_t *t, const char *indent);
/* The progress of a smoke campaign ("smoke before: simfix") on stderr,
 * unless -q; arg is the struct cmd_ctx. */
void cmd_smoke_progress(void *arg, const char *what);

#endif
