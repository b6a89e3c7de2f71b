/*
 * cmd-journal.c - `warden journal show|verify|export|note|adopt`.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "cmd.h"
#include "cycle/cycle.h"
#include "isotime.h"
#include "journal.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "store.h"
#include "util.h"

struct show_state {
	struct cmd_ctx *ctx;
	json_t *arr;
	size_t n;
	size_t skip;			/* -n: the older entries passed over */
	int full;			/* each body whole, as JSON */
};

/* Count the entries the filter matches (for -n). */
static struct werr *
count_one(void *arg, const struct journal_entry *e)
{
	(void)e;
	(*(size_t *)arg)++;
	return NULL;
}

/*
 * One entry in OUTPUT_WIDTH columns, as git log prints a commit: a line
 * of seq, time, cycle, kind and subject, then the body under it,
 * indented and wrapped (a long one wraps rather than runs off); with
 * --full the whole body, compact JSON on one line, exact as it is.
 */
static struct werr *
show_one(void *arg, const struct journal_entry *e)
{
	struct show_state *s = arg;
	struct output_list l;
	char seq[32];
	char *body;

	if (s->skip > 0) {
		s->skip--;
		return NULL;
	}
	s->n++;
	if (s->ctx->json) {
		json_array_append_new(s->arr, journal_entry_json(e));
		return NULL;
	}
	snprintf(seq, sizeof(seq), "%6lld  ", (long long)e->seq);
	output_list_init(&l, seq, "  ", 0);
	output_list_add(&l, "%s", e->time);
	output_list_add(&l, "%s", quote_str(e->cycle));
	output_list_add(&l, "%s", quote_str(e->kind));
	if (e->subject[0] != '\0')
		output_list_add(&l, "%s", quote_str(e->subject));
	output_list_print(&l, NULL, NULL);
	body = s->full ? json_dumps(e->body, JSON_COMPACT | JSON_SORT_KEYS) :
	    journal_body_short(e->body);
	if (s->full && body != NULL)	/* exact: one line, as git log's body */
		printf("        %s\n", quote_msg(body));
	else if (body != NULL && body[0] != '\0') {
		output_list_init(&l, "        ", NULL, 0);
		output_list_add(&l, "%s", quote_msg(body));
		output_list_print(&l, NULL, NULL);
	}
	free(body);
	return NULL;
}

/* A kind as the journal writes them (lower-case words joined by dots),
 * or such a prefix ending in a dot. */
static int
kind_ok(const char *k)
{
	size_t word = 0;

	for (; *k != '\0'; k++) {
		if ((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
		    *k == '_' || *k == '-')
			word++;
		else if (*k == '.' && word > 0)
			word = 0;
		else
			return 0;
	}
	return 1;
}

static struct werr *
journal_show(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "cycle", required_argument, NULL, 'c' },
		{ "kind", required_argument, NULL, 'k' },
		{ "full", no_argument, NULL, 'f' },
		{ "n", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	char since[ISOTIME_LEN], *end;
	long newest = -1;
	size_t matched = 0;
	int full = 0;
	struct journal_filter f;
	struct show_state s;
	struct store *store;
	struct werr *err = NULL;
	int ch;

	memset(&f, 0, sizeof(f));
	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_journal_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 's') {
			if (isotime_to_utc(since, optarg) != 0)
				return cmd_usage_error(&cmd_journal_entry,
				    "'--since' takes an ISO 8601 date or time such "
				    "as %s, not '%s'", ISOTIME_EXAMPLES, optarg);
			f.since = since;
		} else if (ch == 'c') {
			if (!store_cycle_ok(optarg))
				return cmd_usage_error(&cmd_journal_entry,
				    "'--cycle' takes a cycle id (no '/', not "
				    "starting with '.', at most 200 bytes), not "
				    "'%s'", optarg);
			f.cycle = optarg;
		} else if (ch == 'k') {
			if (!kind_ok(optarg) || optarg[0] == '\0')
				return cmd_usage_error(&cmd_journal_entry,
				    "'--kind' takes a kind such as 'note' or "
				    "'review.approved', or a prefix ending in '.' "
				    "such as 'review.', not '%s'", optarg);
			f.kind = optarg;
		} else if (ch == 'f')
			full = 1;
		else if (ch == 'n') {
			newest = strtol(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end != '\0' ||
			    newest < 0)
				return cmd_usage_error(&cmd_journal_entry,
				    "'-n' takes a number of entries, not '%s'",
				    optarg);
		}
	}
	if (err != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_journal_entry, "'journal show' takes no arguments");
	cmd_pager(ctx);
	if ((err = cmd_ctx_store_readonly(ctx, &store)) != NULL)
		return err;
	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.full = full;
	if (newest >= 0 &&
	    (err = journal_each(store, &f, count_one, &matched)) != NULL)
		return err;
	if (newest >= 0 && matched > (size_t)newest)
		s.skip = matched - (size_t)newest;
	s.arr = json_array();
	err = journal_each(store, &f, show_one, &s);
	if (err == NULL && ctx->json)
		output_json(s.arr);
	else if (err == NULL && s.n == 0 && newest != 0)
		cmd_list_empty(ctx, "journal entries%s%s%s%s%s%s",
		    f.kind != NULL ? " of kind " : "", f.kind != NULL ? f.kind :
		    "", f.cycle != NULL ? " of cycle " : "", f.cycle != NULL ?
		    quote_str(f.cycle) : "", f.since != NULL ? " since " : "",
		    f.since != NULL ? f.since : "");
	json_decref(s.arr);
	return err;
}

/* The repository and the official branch's name, for the commands that
 * read or write the journal's anchors: the trusted name, never the
 * working tree's policy's. */
static struct werr *
open_official(struct cmd_ctx *ctx, git_repository **repo, const char **branch)
{
	const char *root;
	struct werr *err;

	*repo = NULL;
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL ||
	    (err = cmd_ctx_official_branch(ctx, branch)) != NULL)
		return err;
	if (git_repository_open(repo, root) < 0)
		return werr_git("cannot open '%s'", root);
	return NULL;
}

static void
print_verdict(struct cmd_ctx *ctx, const struct journal_verdict *v,
    const struct journal_evidence *ev, const char *branch)
{
	if (ctx->json) {
		json_t *o = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:s?}",
		    "intact", v->broken_seq == 0, "entries", (json_int_t)v->entries,
		    "anchors", (json_int_t)v->anchors,
		    "exported", (json_int_t)v->exported,
		    "recorded_moves", (json_int_t)v->records,
		    "first_broken_seq", (json_int_t)v->broken_seq,
		    "reason", v->why);

		json_object_set_new(o, "official_branch", ev->have_branch ?
		    json_string(branch) : json_null());
		output_json(o);
		json_decref(o);
	} else if (v->broken_seq != 0)
		printf("journal broken at seq %lld: %s\n",
		    (long long)v->broken_seq, quote_msg(v->why));
	else if (ctx->verbosity >= 0) {
		printf("journal intact: %lld entries, chain verified\n",
		    (long long)v->entries);
		if (ev->have_branch)
			printf("'%s': %lld anchor%s matched, %lld exported "
			    "line%s matched, %lld move%s recorded\n", branch,
			    (long long)v->anchors, v->anchors == 1 ? "" : "s",
			    (long long)v->exported, v->exported == 1 ? "" : "s",
			    (long long)v->records, v->records == 1 ? "" : "s");
		else
			printf("no branch '%s': no anchors to check\n", branch);
	}
}

static struct werr *
journal_verify_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct journal_evidence ev;
	struct journal_verdict v;
	git_repository *repo = NULL;
	struct store *store;
	const char *branch;
	struct werr *err;
	char *bad = NULL;

	memset(&ev, 0, sizeof(ev));
	memset(&v, 0, sizeof(v));
	if ((err = cmd_no_options(ctx, &cmd_journal_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_journal_entry, "'journal verify' takes no arguments");
	if ((err = open_official(ctx, &repo, &branch)) != NULL ||
	    (err = cmd_ctx_store_readonly(ctx, &store)) != NULL ||
	    (err = journal_evidence_load(&ev, &bad, repo, branch)) != NULL ||
	    (err = journal_check(&v, store, &ev)) != NULL)
		goto out;
	if (v.broken_seq == 0 && bad != NULL) {
		/* A malformed anchor proves nothing: a break of its own. */
		v.broken_seq = v.entries > 0 ? v.entries : 1;
		v.why = bad;
		bad = NULL;
	}
	print_verdict(ctx, &v, &ev, branch);
	if (v.broken_seq != 0)
		err = werr_new(WEXIT_PROBLEM, "journal verification failed at seq %lld",
		    (long long)v.broken_seq);
out:
	journal_evidence_free(&ev);
	journal_verdict_free(&v);
	git_repository_free(repo);
	free(bad);
	return err;
}

static struct werr *
journal_export_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cycle", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cycle = NULL, *branch;
	git_repository *repo = NULL;
	struct store *store;
	struct werr *err = NULL;
	char commit[GIT_OID_HEXSZ + 1];
	int ch, n = 0;

	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_journal_entry, argc, argv, opts,
	    &err)) != -1) {
		if (!store_cycle_ok(optarg))
			return cmd_usage_error(&cmd_journal_entry,
			    "'--cycle' takes a cycle id (no '/', not starting "
			    "with '.', at most 200 bytes), not '%s'", optarg);
		cycle = optarg;
	}
	if (err != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_journal_entry, "'journal export' takes no arguments");
	if ((err = text_check("--cycle", cycle)) != NULL ||
	    (err = open_official(ctx, &repo, &branch)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = journal_export(&n, commit, NULL, store, repo, branch, cycle,
	    cycle_render_markdown)) != NULL)
		goto out;
	if (ctx->json) {
		json_t *o = json_pack("{s:i, s:s, s:s, s:s?}", "appended", n,
		    "branch", branch, "path", JOURNAL_EXPORT_PATH, "commit",
		    commit[0] != '\0' ? commit : NULL);

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0 && commit[0] != '\0')
		printf("exported journal to '%s' (%d new entr%s in %s): %.12s\n",
		    branch, n, n == 1 ? "y" : "ies", JOURNAL_EXPORT_PATH, commit);
	else if (ctx->verbosity >= 0)
		printf("journal already exported to '%s' (0 new entries)\n",
		    branch);
out:
	git_repository_free(repo);
	return err;
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
	struct werr *err = NULL;
	int64_t seq = 0;
	json_t *body;

	optind = 0;
	while (cmd_getopt(ctx, &cmd_journal_entry, argc, argv, opts, &err) != -1)
		subject = optarg;
	if (err != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_journal_entry, "'journal note' takes one TEXT");
	if ((err = text_check("--subject", subject)) != NULL ||
	    (err = text_check("TEXT", argv[optind])) != NULL)
		return err;
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
journal_adopt_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	char commit[GIT_OID_HEXSZ + 1] = "";
	git_repository *repo = NULL;
	struct store *store;
	const char *branch;
	struct werr *err;
	int64_t seq = 0;

	if ((err = cmd_no_options(ctx, &cmd_journal_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_journal_entry, "'journal adopt' "
		    "takes one COMMIT");
	if ((err = open_official(ctx, &repo, &branch)) != NULL ||
	    (err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = journal_adopt(&seq, commit, store, repo, branch,
	    argv[optind])) != NULL)
		goto out;
	if (ctx->json) {
		json_t *o = json_pack("{s:I, s:s, s:s}", "seq", (json_int_t)seq,
		    "commit", commit, "branch", branch);

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0)
		printf("journal entry %lld records commit %.12s on '%s'\n",
		    (long long)seq, commit, branch);
out:
	git_repository_free(repo);
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
	if (strcmp(argv[1], "adopt") == 0)
		return journal_adopt_cmd(ctx, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_journal_entry, "unknown journal subcommand '%s'", argv[1]);
}

const struct cmd_entry cmd_journal_entry = {
	"journal",
	"show [-n N] [--since TIME] [--cycle C] [--kind K] [--full]\n"
	"verify\n"
	"export [--cycle C]\n"
	"note [--subject S] TEXT\n"
	"adopt COMMIT",
	"show, verify, export or annotate the hash-chained maintenance journal",
	"show     entries in order, each a line of seq, time, cycle, kind and\n"
	"         subject and its body wrapped under it, through a pager when\n"
	"         stdout is a terminal ($WARDEN_PAGER, $PAGER, less; not with\n"
	"         --no-pager or --json); --since TIME from that time on (ISO\n"
	"         8601: 2026-12-01, 2026-12-01T10:00[:30[.250]], with Z, +02:00\n"
	"         or -0500; no zone is UTC); --kind K matches exactly or, ending\n"
	"         in '.', as a prefix (e.g. 'review.'); a malformed value is\n"
	"         an error (exit 2); each body in short (a list by its\n"
	"         length, a long text cut), --full as its whole JSON on one\n"
	"         line (not wrapped); --json\n"
	"         prints the entries as a JSON array; -n N only the newest N\n"
	"         of them (still oldest first)\n"
	"verify   recompute the hash chain and check it against every\n"
	"         Warden-Journal anchor in the official branch's history and\n"
	"         against the committed journals/journal.jsonl; exit 1 naming\n"
	"         the first broken seq\n"
	"export   commit journals/journal.jsonl (extended by the new entries)\n"
	"         and journals/CYCLE.md to the official branch, with an anchor;\n"
	"         refuses a journal that does not verify (idempotent)\n"
	"note     append a maintainer's note\n"
	"adopt    record a maintainer's commit on the official branch (on its\n"
	"         first-parent history) that warden did not make, which\n"
	"         verify otherwise names as an unjournaled move\n"
	"-q: verify, export, note and adopt print nothing on success.\n"
	"Examples:\n"
	"  warden journal show -n 20 --cycle demo-2 --kind review.\n"
	"  warden journal verify && warden journal export\n"
	"  warden journal note --subject simmlx \"held at 0.31.1 for now\"\n",
	journal_exec,
};
