/*
 * cmd-lint.c - `warden lint [FILE...]`: validate policy, adapters,
 * profiles, workload splits and the fidelity task, listing every problem
 * (not just the first; the fidelity task's first). Exit 1 when a file
 * breaks a rule, 2 when a file cannot be read or parsed at all.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "campaign/campaign-input.h"
#include "cmd.h"
#include "results/fidelity-task.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "util.h"

enum lint_kind {
	LINT_POLICY, LINT_ADAPTER, LINT_PROFILE, LINT_WORKLOAD, LINT_UNKNOWN
};
#define FIDELITY_DIR	"workloads/fidelity"	/* as the cycle reads it */

static enum lint_kind
kind_of(const char *path)
{
	if (strstr(path, "adapters/engines/") != NULL && str_endswith(path, ".json"))
		return LINT_ADAPTER;
	if (strstr(path, "adapters/profiles/") != NULL && str_endswith(path, ".json"))
		return LINT_PROFILE;
	if (str_endswith(path, "warden.json"))
		return LINT_POLICY;
	if (strstr(path, "workloads/") != NULL && str_endswith(path, ".jsonl") &&
	    strstr(path, FIDELITY_DIR "/") == NULL)
		return LINT_WORKLOAD;
	return LINT_UNKNOWN;
}

/* Sorted names ending in ext in REPO/DIR. */
static struct werr *
list_files(const char *root, const char *dir, const char *ext,
    struct strlist *out)
{
	char *path = path_join(root, dir);
	struct dirent *de;
	DIR *d;
	size_t cap = 0;

	out->v = NULL;
	out->n = 0;
	d = opendir(path);
	free(path);
	if (d == NULL)
		return NULL;	/* an absent folder holds nothing to lint */
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !str_endswith(de->d_name, ext))
			continue;
		if (out->n + 1 >= cap) {
			cap = cap ? cap * 2 : 16;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
		}
		out->v[out->n++] = xasprintf("%s/%s", dir, de->d_name);
	}
	closedir(d);
	qsort(out->v, out->n, sizeof(*out->v), strcmp_ptr);
	return NULL;
}

/* The reason at the end of a file_read error ("open 'x': REASON"). */
static const char *
read_reason(const struct werr *err)
{
	const char *colon = strrchr(err->msg, ':');

	return colon != NULL && colon[1] == ' ' ? colon + 2 : err->msg;
}

/* Lint one file into probs; a file that cannot be read, or is none of
 * the three kinds, is an unusable input (exit 2), like invalid JSON. */
static void
lint_file(const char *path, const char *display, struct problems *probs)
{
	struct adapter *a = NULL;
	struct profile *p = NULL;
	struct policy *pol = NULL;
	struct buf text = BUF_INIT;
	enum lint_kind kind = kind_of(display);
	struct werr *err;

	if ((err = file_read_max(&text, path, kind == LINT_WORKLOAD ?
	    FILE_MAX_DATA : FILE_MAX_CONFIG)) != NULL) {
		problems_add(probs, display, 0, 0, NULL, "cannot be read: %s",
		    read_reason(err));
		probs->v[probs->n - 1].unusable = 1;
		werr_free(err);
		buf_free(&text);
		return;
	}
	if (kind == LINT_UNKNOWN) {
		problems_add(probs, display, 0, 0, NULL, "is not a policy, adapter, "
		    "profile or workload (expected policy/warden.json, "
		    "adapters/engines/*.json, adapters/profiles/*.json or "
		    "workloads/*.jsonl)");
		probs->v[probs->n - 1].unusable = 1;
		buf_free(&text);
		return;
	}
	/* Problems land in probs; the error only repeats the first. */
	if (kind == LINT_POLICY)
		err = policy_load_buffer(&pol, buf_cstr(&text), text.len, display,
		    probs);
	else if (kind == LINT_ADAPTER)
		err = adapter_load_buffer(&a, buf_cstr(&text), text.len, display,
		    probs);
	else if (kind == LINT_WORKLOAD)
		workload_lint(buf_cstr(&text), text.len, display, probs);
	else
		err = profile_load_buffer(&p, buf_cstr(&text), text.len, display,
		    probs);
	werr_free(err);
	buf_free(&text);
	policy_free(pol);
	adapter_free(a);
	profile_free(p);
}

/* The fidelity task as the cycle loads it: its first problem. */
static void
lint_fidelity(const char *root, struct problems *probs)
{
	char *dir = path_join(root, FIDELITY_DIR);
	struct fidelity_task *task = NULL;
	struct werr *err;

	if ((err = fidelity_task_load(&task, dir, FIDELITY_DIR)) != NULL) {
		problems_add_werr(probs, FIDELITY_DIR, err);
		werr_free(err);
	}
	fidelity_task_free(task);
	free(dir);
}

/* Rules across files: every roster engine has an adapter, every model a
 * profile, every split a workload file. Returns whether the cycle runs the
 * fidelity task. */
static int
lint_repo_refs(const char *root, struct problems *probs)
{
	int fidelity = 0;
	struct policy *pol = NULL;
	struct buf text = BUF_INIT;
	char *path = path_join(root, "policy/warden.json");
	struct werr *err;
	size_t i, j;

	if ((err = policy_load_file(&pol, path, "policy/warden.json", NULL)) != NULL) {
		werr_free(err);	/* already reported */
		goto out;
	}
	werr_free(file_read(&text, path));
	for (i = 0; i < pol->n_rosters; i++)
		for (j = 0; j < pol->rosters[i].engines.n; j++) {
			char *rel = xasprintf("adapters/engines/%s.json",
			    pol->rosters[i].engines.v[j]);
			char *abs = path_join(root, rel);
			char *field = xasprintf("rosters.%s", pol->rosters[i].name);

			if (!path_exists(abs))
				problems_add_field(probs, "policy/warden.json",
				    text.data, text.len, field,
				    "names engine '%s', but %s does not exist",
				    pol->rosters[i].engines.v[j], rel);
			free(field);
			free(rel);
			free(abs);
		}
	for (i = 0; i < pol->models.n; i++) {
		char *rel = xasprintf("adapters/profiles/%s.json", pol->models.v[i]);
		char *abs = path_join(root, rel);

		if (!path_exists(abs))
			problems_add_field(probs, "policy/warden.json", text.data,
			    text.len, "models", "names model '%s', but %s does not exist",
			    pol->models.v[i], rel);
		free(rel);
		free(abs);
	}
	for (i = 0; i < pol->campaign.splits.n; i++) {
		char *rel = xasprintf("workloads/%s.jsonl",
		    pol->campaign.splits.v[i]);
		char *abs = path_join(root, rel);

		if (!path_exists(abs))
			problems_add_field(probs, "policy/warden.json", text.data,
			    text.len, "campaign.splits", "names split '%s', but "
			    "%s does not exist", pol->campaign.splits.v[i], rel);
		free(rel);
		free(abs);
	}
	fidelity = pol->cycle.fidelity;
out:
	buf_free(&text);
	policy_free(pol);
	free(path);
	return fidelity;
}

/* With -v, how linting display went: the problems since before. */
static void
lint_said(struct cmd_ctx *ctx, const char *display,
    const struct problems *probs, size_t before)
{
	if (ctx->verbosity > 0 && !ctx->json) {
		if (probs->n == before)
			fprintf(stderr, "%s: ok\n", quote_str(display));
		else
			fprintf(stderr, "%s: %zu problem%s\n",
			    quote_str(display), probs->n - before, probs->n - before == 1 ? "" : "s");
	}
}

/* Lint one file and, with -v, say how it went. */
static void
lint_one(struct cmd_ctx *ctx, const char *path, const char *display,
    struct problems *probs)
{
	size_t before = probs->n;

	lint_file(path, display, probs);
	lint_said(ctx, display, probs, before);
}

/* Every file of the repository lint reads, policy first, then the
 * adapters, the profiles and the workload splits. */
static struct strlist
repo_files(const char *root)
{
	struct strlist files = { NULL, 0 }, more;
	const char *dirs[][2] = { { "adapters/engines", ".json" },
	    { "adapters/profiles", ".json" }, { "workloads", ".jsonl" } };
	size_t i, d;

	files.v = xcalloc(1, sizeof(char *));
	files.v[files.n++] = xstrdup("policy/warden.json");
	for (d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		list_files(root, dirs[d][0], dirs[d][1], &more);
		for (i = 0; i < more.n; i++) {
			files.v = xrealloc(files.v, (files.n + 1) * sizeof(char *));
			files.v[files.n++] = more.v[i];
		}
		free(more.v);
	}
	return files;
}

static void
print_problems(struct cmd_ctx *ctx, const struct problems *probs, size_t nfiles,
    size_t unusable)
{
	struct buf line = BUF_INIT;
	json_t *o, *arr;
	size_t i;

	if (ctx->json) {
		arr = json_array();
		for (i = 0; i < probs->n; i++)
			json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:s?, "
			    "s:s, s:s}", "file", probs->v[i].file, "line",
			    probs->v[i].line, "column", probs->v[i].col, "field",
			    probs->v[i].field, "message", probs->v[i].msg, "class",
			    probs->v[i].unusable ? "input" : "schema"));
		o = json_pack("{s:I, s:o}", "files", (json_int_t)nfiles,
		    "problems", arr);
		output_json(o);
		json_decref(o);
		return;
	}
	for (i = 0; i < probs->n; i++) {
		buf_reset(&line);
		problem_format(&probs->v[i], &line);
		printf("%s\n", quote_msg(buf_cstr(&line)));
	}
	buf_free(&line);
	if (ctx->verbosity < 0)
		return;
	fprintf(stderr, "%zu file%s checked, %zu problem%s", nfiles,
	    nfiles == 1 ? "" : "s", probs->n, probs->n == 1 ? "" : "s");
	if (unusable > 0)
		fprintf(stderr, " (%zu input%s could not be read or parsed)",
		    unusable, unusable == 1 ? "" : "s");
	fputc('\n', stderr);
}

static struct werr *
lint_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct problems probs = { NULL, 0, 0 };
	struct strlist files;
	const char *root = NULL;
	struct werr *err = NULL;
	size_t i, nfiles = 0, unusable = 0;

	if ((err = cmd_no_options(ctx, &cmd_lint_entry, argc, argv)) != NULL)
		return err;
	argc -= optind;
	argv += optind;
	if (argc > 0) {
		for (i = 0; i < (size_t)argc; i++)
			lint_one(ctx, argv[i], argv[i], &probs);
		nfiles = (size_t)argc;
	} else {
		if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
			return err;
		files = repo_files(root);
		for (i = 0; i < files.n; i++) {
			char *abs = path_join(root, files.v[i]);

			lint_one(ctx, abs, files.v[i], &probs);
			free(abs);
		}
		nfiles = files.n;
		if (lint_repo_refs(root, &probs)) {
			size_t before = probs.n;

			lint_fidelity(root, &probs);
			lint_said(ctx, FIDELITY_DIR, &probs, before);
			nfiles++;
		}
		strlist_free(&files);
	}
	for (i = 0; i < probs.n; i++)
		unusable += probs.v[i].unusable != 0;
	print_problems(ctx, &probs, nfiles, unusable);
	/* The problems are the output; exit status alone says which kind. */
	if (unusable > 0)
		err = werr_new(WEXIT_INPUT, "%s", "");
	else if (probs.n > 0)
		err = werr_new(WEXIT_PROBLEM, "%s", "");
	problems_free(&probs);
	return err;
}

const struct cmd_entry cmd_lint_entry = {
	"lint", "[FILE...]",
	"check policy, adapters, profiles and workloads against their schemas",
	"With no FILE: policy/warden.json, adapters/engines/*.json,\n"
	"adapters/profiles/*.json and workloads/*.jsonl of the repository; that\n"
	"every roster engine has an adapter, every model a profile and every\n"
	"split a workload file; and, where the cycle runs it, that the fidelity\n"
	"task in workloads/fidelity loads (its first problem). Prints every\n"
	"problem as FILE:LINE:COLUMN: 'FIELD' MESSAGE. Exit 1 when files break a\n"
	"schema or cross-file rule; exit 2 when any file cannot be read, is not\n"
	"valid JSON or is none of the four kinds, or the fidelity task does not\n"
	"load (every problem is still printed).\n"
	"-v names every file checked; -q drops the closing summary.\n"
	"--json: {files, problems: [{file, line, column, field, message, class}]},\n"
	"class \"schema\" (exit 1) or \"input\" (exit 2).\n"
	"Examples:\n"
	"  warden lint\n"
	"  warden -v lint adapters/engines/sim-padded.json\n",
	lint_exec,
};
