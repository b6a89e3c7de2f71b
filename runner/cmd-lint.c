/*
 * cmd-lint.c - `warden lint [FILE...]`: validate policy, adapters and
 * profiles, listing every problem (not just the first). Exit 1 when any.
 */
#include "config.h"

#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "cmd.h"
#include "output.h"
#include "policy.h"
#include "util.h"

enum lint_kind { LINT_POLICY, LINT_ADAPTER, LINT_PROFILE, LINT_UNKNOWN };

static enum lint_kind
kind_of(const char *path)
{
	if (strstr(path, "adapters/engines/") != NULL && str_endswith(path, ".json"))
		return LINT_ADAPTER;
	if (strstr(path, "adapters/profiles/") != NULL && str_endswith(path, ".json"))
		return LINT_PROFILE;
	if (str_endswith(path, "warden.json"))
		return LINT_POLICY;
	return LINT_UNKNOWN;
}

/* Sorted *.json names in REPO/DIR. */
static struct werr *
list_json(const char *root, const char *dir, struct strlist *out)
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
		if (de->d_name[0] == '.' || !str_endswith(de->d_name, ".json"))
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

static void
lint_file(const char *path, const char *display, struct problems *probs)
{
	struct adapter *a = NULL;
	struct profile *p = NULL;
	struct policy *pol = NULL;
	struct werr *err = NULL;

	switch (kind_of(display)) {
	case LINT_POLICY:
		err = policy_load_file(&pol, path, display, probs);
		break;
	case LINT_ADAPTER:
		err = adapter_load_file(&a, path, display, probs);
		break;
	case LINT_PROFILE:
		err = profile_load_file(&p, path, display, probs);
		break;
	case LINT_UNKNOWN:
		problems_add(probs, display, 0, 0, NULL, "is not a policy, adapter "
		    "or profile (expected policy/warden.json, adapters/engines/*.json "
		    "or adapters/profiles/*.json)");
		return;
	}
	/* Unreadable files come back as errors without problems. */
	if (err != NULL && (probs->n == 0 ||
	    strcmp(probs->v[probs->n - 1].file, display) != 0))
		problems_add(probs, display, 0, 0, NULL, "%s", err->msg);
	werr_free(err);
	policy_free(pol);
	adapter_free(a);
	profile_free(p);
}

/* Rules across files: every roster engine has an adapter, every model a
 * profile. */
static void
lint_repo_refs(const char *root, struct problems *probs)
{
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
out:
	buf_free(&text);
	policy_free(pol);
	free(path);
}

static struct werr *
lint_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	struct problems probs = { NULL, 0, 0 };
	struct strlist files = { NULL, 0 }, more;
	const char *root = NULL;
	struct werr *err = NULL;
	size_t i, nfiles = 0;
	int ch;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_usage_error(&cmd_lint_entry, "unknown option");
	argc -= optind;
	argv += optind;
	if (argc > 0) {
		for (i = 0; i < (size_t)argc; i++) {
			if (!path_exists(argv[i]))
				problems_add(&probs, argv[i], 0, 0, NULL,
				    "no such file");
			else
				lint_file(argv[i], argv[i], &probs);
			nfiles++;
		}
	} else {
		if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
			return err;
		files.v = xcalloc(1, sizeof(char *));
		files.v[0] = xstrdup("policy/warden.json");
		files.n = 1;
		list_json(root, "adapters/engines", &more);
		for (i = 0; i < more.n; i++) {
			files.v = xrealloc(files.v, (files.n + 1) * sizeof(char *));
			files.v[files.n++] = more.v[i];
		}
		free(more.v);
		list_json(root, "adapters/profiles", &more);
		for (i = 0; i < more.n; i++) {
			files.v = xrealloc(files.v, (files.n + 1) * sizeof(char *));
			files.v[files.n++] = more.v[i];
		}
		free(more.v);
		for (i = 0; i < files.n; i++) {
			char *abs = path_join(root, files.v[i]);

			if (!path_exists(abs))
				problems_add(&probs, files.v[i], 0, 0, NULL,
				    "no such file");
			else
				lint_file(abs, files.v[i], &probs);
			free(abs);
		}
		nfiles = files.n;
		lint_repo_refs(root, &probs);
		strlist_free(&files);
	}
	if (ctx->json) {
		json_t *o = json_object(), *arr = json_array();

		for (i = 0; i < probs.n; i++)
			json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:s?, s:s}",
			    "file", probs.v[i].file, "line", probs.v[i].line,
			    "column", probs.v[i].col, "field", probs.v[i].field,
			    "message", probs.v[i].msg));
		json_object_set_new(o, "files", json_integer((json_int_t)nfiles));
		json_object_set_new(o, "problems", arr);
		output_json(o);
		json_decref(o);
	} else {
		struct buf line = BUF_INIT;

		for (i = 0; i < probs.n; i++) {
			buf_reset(&line);
			problem_format(&probs.v[i], &line);
			printf("%s\n", buf_cstr(&line));
		}
		buf_free(&line);
		if (ctx->verbosity >= 0)
			fprintf(stderr, "%zu file%s checked, %zu problem%s\n", nfiles,
			    nfiles == 1 ? "" : "s", probs.n, probs.n == 1 ? "" : "s");
	}
	if (probs.n > 0)
		err = werr_new(WEXIT_PROBLEM, "%s", "");
	problems_free(&probs);
	return err;
}

const struct cmd_entry cmd_lint_entry = {
	"lint", "[FILE...]",
	"check policy, adapters and profiles against their schemas",
	"With no FILE: policy/warden.json, adapters/engines/*.json and\n"
	"adapters/profiles/*.json of the repository, and that every roster engine\n"
	"has an adapter and every model a profile. Prints every problem as\n"
	"FILE:LINE:COLUMN: 'FIELD' MESSAGE. Exit 1 when there is any.\n",
	lint_exec,
};
