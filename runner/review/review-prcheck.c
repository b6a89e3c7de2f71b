/*
 * review-prcheck.c - pr-check: the gate over merge-base(BASE, HEAD)..HEAD
 * with BASE's policy, and lint of the adapters and profiles the range
 * changes, at HEAD. See review.h.
 *
 * It only reads the repository: never writes a ref, a working tree or an
 * index, and never reads policy from HEAD. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adapter.h"
#include "buf.h"
#include "review.h"
#include "schema.h"
#include "util.h"

static int
lint_kind(const char *path)
{
	const char *slash;

	if (str_startswith(path, "adapters/engines/"))
		slash = path + 17;
	else if (str_startswith(path, "adapters/profiles/"))
		slash = path + 18;
	else
		return 0;
	if (strchr(slash, '/') != NULL || !str_endswith(path, ".json"))
		return 0;
	return path[9] == 'e' ? 1 : 2;
}

/* Lint the HEAD version of every changed adapter and profile. */
static struct werr *
lint_changed(json_t *out, git_repository *repo, const git_oid *head,
    const struct allowlist_report *r)
{
	struct problems probs = { NULL, 0, 0 };
	git_commit *c = NULL;
	git_tree *tree = NULL;
	struct werr *err = NULL;
	size_t i;

	if (git_commit_lookup(&c, repo, head) < 0 ||
	    git_commit_tree(&tree, c) < 0) {
		err = werr_git("cannot read the head commit");
		goto out;
	}
	for (i = 0; i < r->nfiles; i++) {
		const char *path = r->files[i].new_path;
		git_tree_entry *te = NULL;
		git_blob *blob = NULL;
		struct adapter *a = NULL;
		struct profile *p = NULL;
		int kind;

		if (path == NULL || (kind = lint_kind(path)) == 0)
			continue;
		if (git_tree_entry_bypath(&te, tree, path) < 0 ||
		    git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0) {
			git_tree_entry_free(te);
			continue;	/* not a blob: the gate said why */
		}
		if (kind == 1)
			werr_free(adapter_load_buffer(&a, git_blob_rawcontent(blob),
			    (size_t)git_blob_rawsize(blob), path, &probs));
		else
			werr_free(profile_load_buffer(&p, git_blob_rawcontent(blob),
			    (size_t)git_blob_rawsize(blob), path, &probs));
		adapter_free(a);
		profile_free(p);
		git_blob_free(blob);
		git_tree_entry_free(te);
	}
	for (i = 0; i < probs.n; i++)
		json_array_append_new(out, json_pack("{s:s, s:i, s:i, s:s?, "
		    "s:s, s:s}", "file", probs.v[i].file, "line",
		    probs.v[i].line, "column", probs.v[i].col, "field",
		    probs.v[i].field, "message", probs.v[i].msg, "class",
		    probs.v[i].unusable ? "input" : "schema"));
out:
	problems_free(&probs);
	git_tree_free(tree);
	git_commit_free(c);
	return err;
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

struct werr *
review_prcheck(struct allowlist_report *r, json_t **lint, git_repository *repo,
    const char *base, const char *head, struct review_prcheck_times *times)
{
	struct review_base b;
	git_object *obj = NULL, *hc = NULL;
	struct timespec t0;
	struct werr *err;
	git_oid hid;

	*lint = json_array();
	if ((err = review_base_open(&b, repo, base)) != NULL)
		return err;
	if (git_revparse_single(&obj, repo, head) < 0 ||
	    git_object_peel(&hc, obj, GIT_OBJECT_COMMIT) < 0) {
		err = werr_new(WEXIT_INPUT, "'%s' is not a commit in this "
		    "repository", head);
		goto out;
	}
	git_oid_cpy(&hid, git_object_id(hc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = allowlist_gate_range(r, repo, &b.commit, &hid,
	    &b.gate)) != NULL)
		goto out;
	if (times != NULL)
		times->gate_s = seconds_since(&t0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = lint_changed(*lint, repo, &hid, r);
	if (times != NULL)
		times->lint_s = seconds_since(&t0);
out:
	git_object_free(hc);
	git_object_free(obj);
	review_base_free(&b);
	return err;
}

