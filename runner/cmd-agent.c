/*
 * cmd-agent.c - `warden agent run|list|show`: run the maintainer agent
 * bounded and see what became of its runs. The work is in runner/agent/;
 * this file parses options and prints.
 *
 * Exit status of `agent run`: 0 a change was queued for review; 1 the
 * run ended without one (rejected, quarantined, no change, or an agent
 * that failed: agent-failed); 2 usage or input; 3 environment (among them: policy requires a sandbox and there
 * is none).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "agent/agent.h"
#include "cmd.h"
#include "jsonget.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "review.h"
#include "util.h"

extern const struct cmd_entry cmd_agent_entry;

static void
on_progress(void *arg, const char *what)
{
	const struct cmd_ctx *ctx = arg;

	if (ctx->verbosity >= 0)
		output_progress(1, "agent: %s", what);
}

void
cmd_print_agent_transcript(const json_t *t, const char *indent)
{
	const json_t *tok = json_object_get(t, "tokens"), *x;
	size_t i;

	if (t == NULL)
		return;
	printf("%stranscript: %s, %s (%lld turn%s, %lld input and %lld "
	    "output tokens", indent, quote_str(jsonget_str(t, "program")),
	    quote_str(jsonget_str(t, "file")),
	    (long long)jsonget_int(t, "turns"),
	    jsonget_int(t, "turns") == 1 ? "" : "s",
	    (long long)jsonget_int(tok, "input"),
	    (long long)jsonget_int(tok, "output"));
	if (json_is_number(json_object_get(t, "cost_usd")))
		printf(", $%.4f", json_number_value(json_object_get(t,
		    "cost_usd")));
	printf(")%s\n", json_is_true(json_object_get(t, "too_large")) ?
	    ": too large, not read" : "");
	json_array_foreach(json_object_get(t, "files_read"), i, x)
		printf("%s  read    %s\n", indent,
		    quote_str(json_string_value(x)));
	json_array_foreach(json_object_get(t, "files_edited"), i, x)
		printf("%s  edited  %s\n", indent,
		    quote_str(json_string_value(x)));
	json_array_foreach(json_object_get(t, "commands"), i, x) {
		printf("%s  ran     %s", indent, quote_str(jsonget_str(x,
		    "command")));
		if (json_is_integer(json_object_get(x, "exit_code")))
			printf(" (exit %lld)", (long long)jsonget_int(x,
			    "exit_code"));
		printf("\n");
	}
	if (json_is_string(json_object_get(t, "final_message")))
		printf("%s  said    %s\n", indent, quote_str(jsonget_str(t,
		    "final_message")));
}

static void
print_run(const json_t *r)
{
	const json_t *exit = json_object_get(r, "exit");
	const json_t *ds = json_object_get(r, "diffstat");
	const json_t *gate = json_object_get(r, "gate");
	const json_t *smoke = json_object_get(r, "smoke");
	const json_t *task = json_object_get(r, "task");
	const json_t *failure = json_object_get(r, "failure");
	const json_t *x;
	size_t i;

	printf("agent run %lld: %s\n", (long long)json_integer_value(
	    json_object_get(r, "id")), jsonget_str(r, "state"));
	printf("task:     %s %s\n", jsonget_str(task, "kind"),
	    jsonget_str(task, "ref"));
	printf("base:     %s (%s)\n", jsonget_str(r, "base_commit"),
	    jsonget_str(r, "official_branch"));
	printf("sandbox:  %s (policy: %s)\n", jsonget_str(json_object_get(r,
	    "sandbox"), "in_force"), jsonget_str(json_object_get(r, "sandbox"),
	    "mode"));
	if (json_is_string(json_object_get(json_object_get(r, "sandbox"),
	    "why")))
		printf("          %s\n", quote_msg(jsonget_str(
		    json_object_get(r, "sandbox"), "why")));
	if (json_object_get(r, "argv") != NULL) {
		printf("argv:    ");
		json_array_foreach(json_object_get(r, "argv"), i, x)
			printf(" %s", quote_str(json_string_value(x)));
		printf("\n");
	}
	if (json_object_get(r, "worktree") != NULL)
		printf("worktree: %s (branch %s)\n",
		    quote_str(jsonget_str(r, "worktree")),
		    quote_str(jsonget_str(r, "branch")));
	if (json_object_get(r, "log") != NULL)
		printf("log:      %s\n", quote_str(jsonget_str(r, "log")));
	if (exit != NULL)
		printf("exit:     %s%s after %.1f s, %lld descendant%s reaped\n",
		    quote_msg(jsonget_str(exit, "status")),
		    json_is_true(json_object_get(exit,
		    "timed_out")) ? " (at the time limit)" : "",
		    json_real_value(json_object_get(exit, "duration_s")),
		    (long long)json_integer_value(json_object_get(exit,
		    "reaped")), json_integer_value(json_object_get(exit,
		    "reaped")) == 1 ? "" : "s");
	json_array_foreach(json_object_get(r, "warnings"), i, x)
		printf("warning:  %s\n", quote_msg(json_string_value(x)));
	cmd_print_agent_transcript(json_object_get(r, "transcript"), "");
	if (failure != NULL) {
		printf("failed:   the agent %s; the end of its log:\n",
		    quote_msg(jsonget_str(failure, "reason")));
		quote_print_lines(stdout, "  | ", jsonget_str(failure,
		    "log_tail"));
	}
	json_array_foreach(json_object_get(r, "reasons"), i, x)
		printf("quarantined: %s\n", quote_msg(json_string_value(x)));
	json_array_foreach(json_object_get(r, "restored"), i, x)
		printf("put back: %s\n", quote_msg(json_string_value(x)));
	if (ds != NULL) {
		printf("diff:     %lld file%s, +%lld -%lld\n",
		    (long long)json_integer_value(json_object_get(ds, "files")),
		    json_integer_value(json_object_get(ds, "files")) == 1 ?
		    "" : "s",
		    (long long)json_integer_value(json_object_get(ds, "added")),
		    (long long)json_integer_value(json_object_get(ds,
		    "deleted")));
		json_array_foreach(json_object_get(ds, "paths"), i, x)
			printf("  %s %s +%lld -%lld\n",
			    quote_str(jsonget_str(x, "status")),
			    quote_str(jsonget_str(x, "path")),
			    (long long)json_integer_value(json_object_get(x,
			    "added")),
			    (long long)json_integer_value(json_object_get(x,
			    "deleted")));
	}
	if (gate != NULL)
		printf("gate:     %s\n", json_is_true(json_object_get(gate,
		    "ok")) ? "clean" : "refused");
	json_array_foreach(json_object_get(gate, "violations"), i, x)
		printf("  %s %s: %s\n", quote_str(jsonget_str(x, "code")),
		    quote_str(jsonget_str(x, "path")),
		    quote_msg(jsonget_str(x, "reason")));
	if (json_is_integer(json_object_get(r, "review")))
		printf("review:   %lld\n", (long long)json_integer_value(
		    json_object_get(r, "review")));
	if (smoke != NULL) {
		printf("smoke:    %s\n", cmd_smoke_verdict(smoke));
		cmd_print_smoke_table(smoke, "  ");
	}
	if (json_is_string(json_object_get(r, "error")))
		printf("error:    %s\n", quote_msg(jsonget_str(r, "error")));
}

static struct werr *
state_exit(const json_t *r)
{
	const char *state = jsonget_str(r, "state");

	if (strcmp(state, "queued") == 0 || strcmp(state, "dry-run") == 0)
		return NULL;
	return werr_new(WEXIT_PROBLEM, "agent run %lld: %s",
	    (long long)json_integer_value(json_object_get(r, "id")), state);
}

static struct werr *
agent_run_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "incident", required_argument, NULL, 'i' },
		{ "engine", required_argument, NULL, 'e' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent_run_opts o;
	struct agent_task task;
	struct review_base base;
	struct policy *policy;
	struct store *store;
	git_repository *repo = NULL;
	const char *engine = NULL, *incident = NULL;
	json_t *rec = NULL;
	struct werr *err;
	int64_t n = 0;
	int ch, dry = 0;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'i')
			incident = optarg;
		else if (ch == 'e')
			engine = optarg;
		else if (ch == 'n')
			dry = 1;
		else
			return cmd_usage_error(&cmd_agent_entry,
			    "unknown option");
	}
	if (optind != argc || (engine == NULL) == (incident == NULL))
		return cmd_usage_error(&cmd_agent_entry, "agent run needs "
		    "one of --incident N or --engine E");
	if (incident != NULL && (err = cmd_parse_id(&cmd_agent_entry, incident,
	    "an incident number", &n)) != NULL)
		return err;
	memset(&task, 0, sizeof(task));
	memset(&o, 0, sizeof(o));
	if ((err = cmd_ctx_repo(ctx, &o.repo_root)) != NULL ||
	    (err = cmd_ctx_trusted_policy(ctx, &policy)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	if (git_repository_open(&repo, o.repo_root) < 0)
		return werr_git("cannot open '%s'", o.repo_root);
	/* The trusted policy names the official branch (never the working
	 * tree's); the task and the run take their rules from its tree. */
	if (engine != NULL) {
		char *ref = xasprintf("refs/heads/%s", policy->official_branch);

		err = review_base_open(&base, repo, ref);
		free(ref);
		if (err == NULL)
			err = agent_task_engine(&task, store, base.policy,
			    engine);
		review_base_free(&base);
	} else {
		err = agent_task_incident(&task, store, n);
	}
	if (err != NULL)
		goto out;
	o.repo = repo;
	o.store = store;
	o.official_branch = policy->official_branch;
	o.task = &task;
	o.dry_run = dry;
	o.on_progress = on_progress;
	o.arg = ctx;
	err = agent_run(&rec, &o);
	if (rec != NULL) {
		if (ctx->json) {
			output_json(rec);
		} else if (dry) {
			print_run(rec);
			/* The task as the agent reads it: a document of its
			 * own, last, in the first column; its lines quoted. */
			putchar('\n');
			quote_print_lines(stdout, "", jsonget_str(rec,
			    "context"));
		} else {
			print_run(rec);
		}
		if (err == NULL)
			err = state_exit(rec);
	}
out:
	json_decref(rec);
	agent_task_free(&task);
	git_repository_free(repo);
	return err;
}

static struct werr *
agent_list_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	json_t *rows = NULL, *row;
	struct werr *err;
	size_t i;

	(void)argv;
	if (argc != 1)
		return cmd_usage_error(&cmd_agent_entry,
		    "agent list takes no arguments");
	if ((err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = agent_list(&rows, store)) != NULL)
		return err;
	if (ctx->json)
		output_json(rows);
	else if (json_array_size(rows) == 0)
		cmd_list_empty(ctx, "agent runs");
	else
		json_array_foreach(rows, i, row) {
			json_t *rid = json_object_get(row, "review_id");

			printf("%-5lld %-12s %-8s %-16s %-24s %-12s",
			    (long long)json_integer_value(json_object_get(row,
			    "id")), quote_str(jsonget_str(row, "state")),
			    quote_str(jsonget_str(row, "task_kind")),
			    quote_str(jsonget_str(row, "task_ref")),
			    quote_str(jsonget_str(row, "created")),
			    quote_str(jsonget_str(row, "sandbox")));
			if (json_is_integer(rid))
				printf(" review %lld (%s)",
				    (long long)json_integer_value(rid),
				    quote_str(jsonget_str(row,
				    "review_status")));
			printf("\n");
		}
	json_decref(rows);
	return NULL;
}

static struct werr *
agent_show_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	json_t *o = NULL;
	int64_t id;

	if (argc != 2)
		return cmd_usage_error(&cmd_agent_entry,
		    "agent show needs one run number");
	if ((err = cmd_parse_id(&cmd_agent_entry, argv[1],
	    "an agent run number", &id)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = agent_show(&o, store, id)) != NULL)
		return err;
	if (ctx->json) {
		output_json(o);
	} else {
		json_t *rec = json_object_get(o, "record");

		json_object_set(rec, "state", json_object_get(o, "state"));
		json_object_set(rec, "id", json_object_get(o, "id"));
		print_run(rec);
	}
	json_decref(o);
	return NULL;
}

static struct werr *
agent_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_agent_entry,
		    "agent needs a subcommand");
	if (strcmp(argv[1], "run") == 0)
		return agent_run_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0)
		return agent_list_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return agent_show_cmd(ctx, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_agent_entry,
	    "unknown agent subcommand '%s'", argv[1]);
}

const struct cmd_entry cmd_agent_entry = {
	"agent",
	"run [--incident N | --engine E] [--dry-run]\n"
	"list\n"
	"show ID",
	"run the maintainer agent bounded, and see its runs",
	"run        in a fresh worktree of the official tip, with the task\n"
	"           (an engine's failing cells, or an incident) in a file\n"
	"           outside it, run policy's agent.command: scrubbed\n"
	"           environment, own process group, agent.time_limit_s,\n"
	"           the sandbox per agent.sandbox (no secret, network per\n"
	"           agent.network); then check nothing\n"
	"           outside the worktree changed (else: quarantined), gate\n"
	"           the worktree's diff, queue a clean change for review and\n"
	"           attach a before/after smoke campaign; exit 0 queued,\n"
	"           1 not queued, 3 no sandbox where policy requires one\n"
	"--dry-run  show the argv, sandbox, environment and task context;\n"
	"           make nothing; exit non-zero where run would refuse it\n"
	"list       every run: id, state, task, sandbox, review and its status\n"
	"show ID    one run: argv, exit, why it failed, what it did (its\n"
	"           transcript: files, commands, tokens, cost), sandbox,\n"
	"           diff, gate, smoke, review\n"
	"--json     the records as JSON\n"
	"Examples:\n"
	"  warden agent run --engine sim-padded --dry-run\n"
	"  warden agent run --incident 1\n"
	"  warden agent list && warden agent show 1\n",
	agent_exec,
};
