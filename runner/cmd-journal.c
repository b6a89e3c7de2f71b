/*
 * cmd-journal.c - `warden journal show|verify|export|note`.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "journal.h"
#include "output.h"
#include "store.h"
#include "util.h"

struct show_state {
	struct cmd_ctx *ctx;
	json_t *arr;
	size_t n;
};

static struct werr *
show_one(void *arg, const struct journal_entry *e)
{
	struct show_state *s = arg;
	char *body;

	s->n++;
	if (s->ctx->json) {
		json_array_append_new(s->arr, journal_entry_json(e));
		return NULL;
	}
	body = json_dumps(e->body, JSON_COMPACT | JSON_SORT_KEYS);
	printf("%6lld  %s  %-10s %-18s %s  %s\n", (long long)e->seq, e->time,
	    e->cycle, e->kind, e->subject[0] != '\0' ? e->subject : "-",
	    body != NULL ? body : "");
	free(body);
	return NULL;
}

static struct werr *
journal_show(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "cycle", required_argument, NULL, 'c' },
		{ "kind", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct journal_filter f;
	struct show_state s;
	struct store *store;
	struct werr *err;
	int ch;

	memset(&f, 0, sizeof(f));
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			f.since = optarg;
			break;
		case 'c':
			f.cycle = optarg;
			break;
		case 'k':
			f.kind = optarg;
			break;
		default:
			return cmd_usage_error(&cmd_journal_entry, "bad option to 'journal show'");
		}
	}
	if (optind != argc)
		return cmd_usage_error(&cmd_journal_entry, "'journal show' takes no arguments");
	if ((err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.arr = json_array();
	err = journal_each(store, &f, show_one, &s);
	if (err == NULL && ctx->json)
		output_json(s.arr);
	json_decref(s.arr);
	return err;
}

static struct werr *
journal_verify_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct store *store;
	struct werr *err;
	const char *root;
	int64_t broken = 0, count = 0, xbroken = 0;
	char *why = NULL, *xwhy = NULL;

	(void)argv;
	if (argc != 1)
		return cmd_usage_error(&cmd_journal_entry, "'journal verify' takes no arguments");
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if ((err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	if ((err = journal_verify(store, &broken, &why, &count)) != NULL)
		return err;
	if (broken == 0 && (err = journal_verify_export(store, root, &xbroken, &xwhy)) != NULL) {
		free(why);
		return err;
	}
	if (broken == 0 && xbroken != 0) {
		broken = xbroken;
		why = xwhy;
		xwhy = NULL;
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:b, s:I, s:I, s:s?}", "intact", broken == 0,
		    "entries", (json_int_t)count, "first_broken_seq", (json_int_t)broken,
		    "reason", why);

		output_json(o);
		json_decref(o);
	} else if (broken == 0) {
		if (ctx->verbosity >= 0)
			printf("journal intact: %lld entries, chain verified\n",
			    (long long)count);
	} else
		printf("journal broken at seq %lld: %s\n", (long long)broken, why);
	if (broken != 0)
		err = werr_new(WEXIT_PROBLEM, "journal verification failed at seq %lld",
		    (long long)broken);
	free(why);
	free(xwhy);
	return err;
}

static struct werr *
journal_export_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cycle", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cycle = NULL, *root;
	struct store *store;
	struct werr *err;
	int ch, n = 0;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'c')
			return cmd_usage_error(&cmd_journal_entry, "bad option to 'journal export'");
		cycle = optarg;
	}
	if (optind != argc)
		return cmd_usage_error(&cmd_journal_entry, "'journal export' takes no arguments");
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if ((err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	if ((err = journal_export(store, root, cycle, &n)) != NULL)
		return err;
	if (ctx->json) {
		json_t *o = json_pack("{s:i, s:s}", "appended", n, "directory", "journals");

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0)
		printf("exported journal to journals/ (%d new entr%s in journal.jsonl)\n",
		    n, n == 1 ? "y" : "ies");
	return NULL;
}

static struct werr *
journal_note(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "subject", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *subject = "";
	struct store *store;
	struct werr *err;
	int64_t seq = 0;
	json_t *body;
	int ch;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 's')
			return cmd_usage_error(&cmd_journal_entry, "bad option to 'journal note'");
		subject = optarg;
	}
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_journal_entry, "'journal note' takes one TEXT");
	if ((err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	body = json_pack("{s:s}", "text", argv[optind]);
	if ((err = store_begin(store)) == NULL) {
		err = journal_append(store, "note", subject, body, &seq);
		if (err == NULL)
			err = store_commit(store);
		else
			store_rollback(store);
	}
	json_decref(body);
	if (err == NULL && ctx->verbosity >= 0 && !ctx->json)
		printf("journal entry %lld written\n", (long long)seq);
	else if (err == NULL && ctx->json) {
		json_t *o = json_pack("{s:I}", "seq", (json_int_t)seq);

		output_json(o);
		json_decref(o);
	}
	return err;
}

static struct werr *
journal_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_journal_entry, "journal needs a subcommand");
	if (strcmp(argv[1], "show") == 0)
		return journal_show(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "verify") == 0)
		return journal_verify_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "export") == 0)
		return journal_export_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "note") == 0)
		return journal_note(ctx, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_journal_entry, "unknown journal subcommand '%s'", argv[1]);
}

const struct cmd_entry cmd_journal_entry = {
	"journal",
	"show [--since TIME] [--cycle C] [--kind K]\n"
	"verify\n"
	"export [--cycle C]\n"
	"note [--subject S] TEXT",
	"show, verify, export or annotate the hash-chained maintenance journal",
	"show     entries in order; --since compares UTC ISO times, --kind K matches\n"
	"         exactly or, ending in '.', as a prefix (e.g. 'review.')\n"
	"verify   recompute the hash chain; exit 1 naming the first broken seq\n"
	"         when a row was edited, deleted, inserted or reordered, or when\n"
	"         journals/journal.jsonl holds an entry the database lost\n"
	"export   write journals/CYCLE.md and append new entries to\n"
	"         journals/journal.jsonl (idempotent)\n"
	"note     append a maintainer's note\n",
	journal_exec,
};
