/*
 * proposal.c - triage's fixes as patches: pins set in (or lifted from)
 * the affected adapters of the official tip, or the revert of a commit
 * that broke an engine, queued through the allowlist gate into the
 * review queue with source triage, exactly as a maintainer's `warden
 * patch submit` would be. See triage-private.h
 * (triage_propose).
 *
 * The patch is made from the official tip's adapter files with libgit2
 * (never from a working tree), and checked by the gate with the official
 * tip's policy like any other change. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "allowlist.h"
#include "manifest.h"
#include "repo.h"
#include "review.h"
#include "store-review.h"
#include "triage-private.h"
#include "util.h"

/* The package name of a pin "pkg==version", normalised; caller frees. */
static char *
pin_package(const char *spec)
{
	const char *eq = strstr(spec, "==");
	char *raw = xstrndup(spec, eq ? (size_t)(eq - spec) : strlen(spec));
	char *name = manifest_package_name(raw);

	free(raw);
	return name;
}

/*
 * Set or drop one pin in an adapter document: package pinned by spec
 * ("pkg==version"), or every pin of package dropped (spec NULL);
 * source.pin for the engine's own package, source.pins for any other.
 */
static void
pin_edit(json_t *src, const char *package, const char *spec)
{
	const char *own_raw = json_string_value(json_object_get(src, "package"));
	char *own = own_raw != NULL ? manifest_package_name(own_raw) : NULL;
	json_t *kept, *v;
	char *name;
	size_t i;

	if (own != NULL && strcmp(own, package) == 0) {
		if (spec != NULL)
			json_object_set_new(src, "pin", json_string(
			    strstr(spec, "==") + 2));
		else
			json_object_del(src, "pin");
		free(own);
		return;
	}
	free(own);
	kept = json_array();
	json_array_foreach(json_object_get(src, "pins"), i, v) {
		name = json_is_string(v) ? pin_package(json_string_value(v)) :
		    NULL;
		if (name == NULL || strcmp(name, package) != 0)
			json_array_append(kept, v);
		free(name);
	}
	if (spec != NULL)
		json_array_append_new(kept, json_string(spec));
	if (json_array_size(kept) > 0)
		json_object_set_new(src, "pins", kept);
	else {
		json_decref(kept);
		json_object_del(src, "pins");
	}
}

/* The adapter text with edits ({package: spec or null}) made, as
 * warden writes JSON (two-space indent, a final newline); NULL when the
 * document is not an adapter with a source. */
static char *
adapter_edit(const char *text, const json_t *edits)
{
	json_t *doc = json_loads(text, 0, NULL), *src, *spec;
	const char *package;
	char *out = NULL, *dumped;

	src = json_object_get(doc, "source");
	if (json_is_object(src)) {
		json_object_foreach((json_t *)edits, package, spec)
			pin_edit(src, package, json_string_value(spec));
		if ((dumped = json_dumps(doc, JSON_INDENT(2))) != NULL) {
			out = xasprintf("%s\n", dumped);
			free(dumped);
		}
	}
	json_decref(doc);
	return out;
}

/* The patch of every engine's adapter edits, as unified diffs. */
static struct werr *
make_patch(struct buf *patch, json_t *skipped, git_repository *repo,
    const git_oid *tree, const json_t *pins)
{
	git_patch *gp = NULL;
	git_buf text = { NULL, 0, 0 };
	const char *engine;
	struct werr *err = NULL;
	char *path, *old, *new;
	json_t *edits;

	json_object_foreach((json_t *)pins, engine, edits) {
		path = xasprintf("adapters/engines/%s.json", engine);
		old = repo_tree_text(repo, tree, path);
		new = old != NULL ? adapter_edit(old, edits) : NULL;
		if (old == NULL || new == NULL)
			json_array_append_new(skipped, json_pack("{s:s, s:s}",
			    "engine", engine, "why", old == NULL ? "no adapter "
			    "file on the official tip" : "its adapter has no "
			    "source to pin"));
		else if (strcmp(old, new) != 0) {
			if (git_patch_from_buffers(&gp, old, strlen(old), path,
			    new, strlen(new), path, NULL) < 0 ||
			    git_patch_to_buf(&text, gp) < 0)
				err = werr_git("diff of '%s'", path);
			else
				buf_add(patch, text.ptr, text.size);
			git_buf_dispose(&text);
			git_patch_free(gp);
			gp = NULL;
		}
		free(path);
		free(old);
		free(new);
		if (err != NULL)
			break;
	}
	return err;
}

/* A review already queued with this note (a run killed after it
 * submitted): its id, or 0. */
static struct werr *
already_queued(int64_t *id, struct store *store, const char *note)
{
	json_t *rows = NULL, *r;
	struct werr *err;
	const char *s;
	size_t i;

	*id = 0;
	if ((err = store_review_list(store, NULL, &rows)) != NULL)
		return err;
	json_array_foreach(rows, i, r) {
		s = json_string_value(json_object_get(r, "source"));
		if (s == NULL || strcmp(s, "triage") != 0)
			continue;
		s = json_string_value(json_object_get(r, "note"));
		if (s != NULL && strcmp(s, note) == 0)
			*id = json_integer_value(json_object_get(r, "id"));
	}
	json_decref(rows);
	return NULL;
}

/* The official tip as a review's base. */
static struct werr *
official_base(struct review_base *base, struct triage_ctx *c)
{
	char *ref = xasprintf("refs/heads/%s", c->o->policy->official_branch);
	struct werr *err = review_base_open(base, c->o->repo, ref);

	free(ref);
	return err;
}

/* Queue patch (against base) as triage's change, through the gate:
 * *gate says what the gate found, *review is 0 when it refused. */
static struct werr *
submit(int64_t *review, json_t **gate, struct triage_ctx *c,
    struct review_base *base, const struct buf *patch, const char *note)
{
	struct review_submission sub;
	struct allowlist_report rep;
	struct werr *err;

	allowlist_report_init(&rep);
	memset(&sub, 0, sizeof(sub));
	sub.source = "triage";
	sub.author = TRIAGE_AUTHOR;
	sub.note = note;
	sub.patch = buf_cstr(patch);
	sub.len = patch->len;
	err = review_submit(review, &rep, c->o->store, c->o->repo, base, &sub);
	if (err == NULL)
		*gate = review_report_json(&rep);
	allowlist_report_free(&rep);
	return err;
}

/* The patch that reverts commit on base's tree (git revert, in memory):
 * empty when it would change nothing; *conflict when it does not apply
 * cleanly. */
static struct werr *
revert_patch(struct buf *patch, int *conflict, git_repository *repo,
    const struct review_base *base, const git_oid *commit_id)
{
	git_commit *culprit = NULL, *tip = NULL;
	git_index *index = NULL;
	git_tree *old = NULL, *new = NULL;
	git_diff *diff = NULL;
	git_buf text = { NULL, 0, 0 };
	struct werr *err = NULL;
	git_oid tree_id;

	*conflict = 0;
	if (git_commit_lookup(&culprit, repo, commit_id) < 0 ||
	    git_commit_lookup(&tip, repo, &base->commit) < 0 ||
	    git_revert_commit(&index, repo, culprit, tip, 0, NULL) < 0) {
		err = werr_git("cannot revert commit %s on %s",
		    git_oid_tostr_s(commit_id), base->rev);
		goto out;
	}
	if (git_index_has_conflicts(index)) {
		*conflict = 1;
		goto out;
	}
	if (git_index_write_tree_to(&tree_id, index, repo) < 0 ||
	    git_tree_lookup(&old, repo, &base->tree) < 0 ||
	    git_tree_lookup(&new, repo, &tree_id) < 0 ||
	    git_diff_tree_to_tree(&diff, repo, old, new, NULL) < 0 ||
	    git_diff_to_buf(&text, diff, GIT_DIFF_FORMAT_PATCH) < 0)
		err = werr_git("cannot make the revert of %s as a patch",
		    git_oid_tostr_s(commit_id));
	else
		buf_add(patch, text.ptr, text.size);
out:
	git_buf_dispose(&text);
	git_diff_free(diff);
	git_tree_free(old);
	git_tree_free(new);
	git_index_free(index);
	git_commit_free(tip);
	git_commit_free(culprit);
	return err;
}

struct werr *
triage_propose_revert(int64_t *review, json_t **gate, struct triage_ctx *c,
    const char *commit, const char *note)
{
	struct review_base base;
	struct buf patch = BUF_INIT;
	struct werr *err;
	git_oid id;
	int conflict;

	*review = 0;
	*gate = NULL;
	if (git_oid_fromstr(&id, commit) < 0)
		return werr_new(WEXIT_INPUT, "'%s' is not a commit id", commit);
	if ((err = already_queued(review, c->o->store, note)) != NULL ||
	    *review != 0)
		return err;
	if ((err = official_base(&base, c)) != NULL)
		return err;
	if ((err = revert_patch(&patch, &conflict, c->o->repo, &base, &id))
	    != NULL)
		goto out;
	if (conflict || patch.len == 0)
		*gate = json_pack("{s:b, s:s}", "ok", 0, "why", conflict ?
		    "its revert does not apply cleanly to the official tip: "
		    "later commits changed the same lines" : "nothing to "
		    "change: the official tip no longer has what it changed");
	else
		err = submit(review, gate, c, &base, &patch, note);
out:
	review_base_free(&base);
	buf_free(&patch);
	return err;
}

struct werr *
triage_propose(int64_t *review, json_t **gate, struct triage_ctx *c,
    const json_t *pins, const char *note)
{
	struct review_base base;
	struct buf patch = BUF_INIT;
	json_t *skipped = json_array();
	struct werr *err;

	*review = 0;
	*gate = NULL;
	if ((err = already_queued(review, c->o->store, note)) != NULL ||
	    *review != 0) {
		json_decref(skipped);
		return err;
	}
	if ((err = official_base(&base, c)) != NULL) {
		json_decref(skipped);
		return err;
	}
	if ((err = make_patch(&patch, skipped, c->o->repo, &base.tree,
	    pins)) != NULL)
		goto out;
	if (patch.len == 0) {
		*gate = json_pack("{s:b, s:s, s:O}", "ok", 0, "why", "nothing "
		    "to change: the official tip's adapters already say so",
		    "skipped", skipped);
		goto out;
	}
	err = submit(review, gate, c, &base, &patch, note);
	if (err == NULL && json_array_size(skipped) > 0)
		json_object_set(*gate, "skipped", skipped);
out:
	review_base_free(&base);
	buf_free(&patch);
	json_decref(skipped);
	return err;
}
