/*
 * publish.c - publish official results: check every condition
 * (publish-check.c), build the snapshot, commit its tree on the official
 * branch through official.c and tag it. See publish.h.
 *
 * It must never move the official branch but through official_commit(),
 * never read policy from the working tree, and never touch the working
 * tree or the index. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "official.h"
#include "util.h"
#include "results/gate.h"
#include "results/publish.h"
#include "results/snapshot.h"
#include "results/store-results.h"

#define TAG_PREFIX "snapshot/"

/* ---- the results tree as git objects ---- */

/* Put blob id at path (relative to results/) into the nested object. */
static void
tree_put(json_t *root, const char *path, const git_oid *id)
{
	const char *slash = strchr(path, '/');
	char *dir;
	json_t *sub;

	if (slash == NULL) {
		json_object_set_new(root, path, json_string(git_oid_tostr_s(id)));
		return;
	}
	dir = xstrndup(path, (size_t)(slash - path));
	if ((sub = json_object_get(root, dir)) == NULL) {
		sub = json_object();
		json_object_set_new(root, dir, sub);
	}
	tree_put(sub, slash + 1, id);
	free(dir);
}

static struct werr *
tree_write(git_oid *out, git_repository *repo, const json_t *node)
{
	git_treebuilder *bld = NULL;
	struct werr *err = NULL;
	const char *name;
	json_t *v;
	git_oid id;

	if (git_treebuilder_new(&bld, repo, NULL) < 0)
		return werr_git("cannot build the results tree");
	json_object_foreach((json_t *)node, name, v) {
		if (json_is_object(v)) {
			if ((err = tree_write(&id, repo, v)) != NULL)
				break;
			if (git_treebuilder_insert(NULL, bld, name, &id,
			    GIT_FILEMODE_TREE) < 0)
				err = werr_git("cannot add '%s'", name);
		} else if (git_oid_fromstr(&id, json_string_value(v)) < 0 ||
		    git_treebuilder_insert(NULL, bld, name, &id,
		    GIT_FILEMODE_BLOB) < 0)
			err = werr_git("cannot add '%s'", name);
		if (err != NULL)
			break;
	}
	if (err == NULL && git_treebuilder_write(out, bld) < 0)
		err = werr_git("cannot write the results tree");
	git_treebuilder_free(bld);
	return err;
}

/* The tip's tree with results/ replaced by the snapshot's members. */
static struct werr *
publish_tree(git_oid *out, struct publish_state *st, const struct snapshot *s)
{
	git_commit *tip = NULL;
	git_tree *base = NULL;
	git_treebuilder *bld = NULL;
	json_t *root = json_object();
	struct werr *err = NULL;
	git_oid blob, results;
	size_t i;

	for (i = 0; i < s->n && err == NULL; i++) {
		if (git_blob_create_from_buffer(&blob, st->repo,
		    s->m[i].data.data, s->m[i].data.len) < 0)
			err = werr_git("cannot write '%s'", s->m[i].path);
		else
			tree_put(root, s->m[i].path + strlen("results/"), &blob);
	}
	if (err != NULL || (err = tree_write(&results, st->repo, root)) != NULL)
		goto out;
	if (git_commit_lookup(&tip, st->repo, &st->tip_oid) < 0 ||
	    git_commit_tree(&base, tip) < 0 ||
	    git_treebuilder_new(&bld, st->repo, base) < 0 ||
	    git_treebuilder_insert(NULL, bld, "results", &results,
	    GIT_FILEMODE_TREE) < 0 || git_treebuilder_write(out, bld) < 0)
		err = werr_git("cannot write the published tree");
out:
	git_treebuilder_free(bld);
	git_tree_free(base);
	git_commit_free(tip);
	json_decref(root);
	return err;
}

/* ---- the kind's finish: record and tag ---- */

struct werr *
publish_finish(struct store *store, const char *op, const char *commit,
    json_t *data)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	struct werr *err;
	char *refname;
	git_oid id;

	(void)op;
	if ((err = store_publish_record(store, commit, data)) != NULL)
		return err;
	if (git_repository_open(&repo, jsonget_str(data, "repo")) < 0)
		return werr_git("cannot open '%s' to tag the publish",
		    jsonget_str(data, "repo"));
	refname = xasprintf("refs/tags/%s", jsonget_str(data, "tag"));
	if (git_oid_fromstr(&id, commit) < 0)
		err = werr_new(WEXIT_ENV, "bad published commit '%s'", commit);
	else if (git_reference_lookup(&ref, repo, refname) == 0) {
		/* made before a crash: it must name this commit */
		if (!git_oid_equal(git_reference_target(ref), &id))
			err = werr_new(WEXIT_ENV, "tag '%s' exists and names "
			    "another commit", jsonget_str(data, "tag"));
	} else if (git_reference_create(&ref, repo, refname, &id, 0,
	    "warden: publish") < 0)
		err = werr_git("cannot tag the publish as '%s'",
		    jsonget_str(data, "tag"));
	git_reference_free(ref);
	git_repository_free(repo);
	free(refname);
	return err;
}

/* ---- publish ---- */

static char *
message(const struct snapshot *s, const char *tip, const char *sha256)
{
	const json_t *m = s->manifest, *v;
	struct buf b = BUF_INIT;
	size_t i;

	buf_printf(&b, "warden: publish results snapshot %s\n\nResults "
	    "measured at %.12s, result set %.16s.\nPassed the audit gates:",
	    s->id, tip, jsonget_str(m, "results_sha256"));
	if (json_array_size(json_object_get(m, "passed")) == 0)
		buf_puts(&b, " none");
	json_array_foreach(json_object_get(m, "passed"), i, v)
		buf_printf(&b, "%s %s", i ? "," : "", json_string_value(v));
	buf_printf(&b, ".\n\nWarden-Snapshot: %s sha256:%s\n", s->id, sha256);
	return buf_detach(&b);
}

/* Everything after the checks: snapshot, tree, the move, the tag. */
static struct werr *
publish_results(json_t **out, struct publish_state *st,
    const struct publish_opts *o, const struct resultset *rs,
    json_t *adopted)
{
	struct snapshot_params sp;
	struct official_change c;
	struct snapshot s;
	json_t *sum = NULL, *body = NULL, *data = NULL;
	char commit[41], measured[41], *msg = NULL, *tag = NULL;
	struct werr *err;
	git_oid tree;

	memset(&sp, 0, sizeof(sp));
	sp.repo_root = st->repo_root;
	sp.policy = st->policy;
	sp.commit = measured;
	sp.sign_key = o->sign_key;
	sp.store = o->store;
	sp.cycle = o->cycle;
	if ((err = snapshot_source_date(&sp.source_date, measured,
	    st->repo_root, st->tip)) != NULL ||
	    (err = snapshot_build(&s, rs, &sp)) != NULL)
		return err;
	if ((err = snapshot_save(&sum, &s, st->repo_root, NULL)) != NULL ||
	    (err = publish_tree(&tree, st, &s)) != NULL)
		goto out;
	tag = xasprintf(TAG_PREFIX "%s", s.id);
	msg = message(&s, st->tip, jsonget_str(sum, "sha256"));
	body = json_pack("{s:s, s:s, s:s, s:s, s:s, s:O}", "snapshot", s.id,
	    "sha256", jsonget_str(sum, "sha256"), "results_sha256",
	    jsonget_str(s.manifest, "results_sha256"), "measured_commit",
	    st->tip, "tag", tag, "passed", json_object_get(s.manifest,
	    "passed"));
	if (json_array_size(adopted) > 0)
		json_object_set(body, "adopted", adopted);
	data = json_deep_copy(body);
	json_object_set_new(data, "repo", json_string(st->repo_root));
	memset(&c, 0, sizeof(c));
	c.kind = "publish";
	c.op = s.id;
	c.tree = &tree;
	c.expected_tip = &st->tip_oid;
	c.message = msg;
	c.journal_subject = s.id;
	c.journal_body = body;
	c.data = data;
	if ((err = official_commit(commit, o->store, st->repo, st->branch,
	    &c)) != NULL)
		goto out;
	*out = json_pack("{s:s, s:O, s:O, s:s, s:s, s:s, s:O, s:O, s:s}",
	    "snapshot", s.id, "path", json_object_get(sum, "path"),
	    "sha256", json_object_get(sum, "sha256"), "commit", commit,
	    "tag", tag, "measured_commit", st->tip, "results_sha256",
	    json_object_get(s.manifest, "results_sha256"), "passed",
	    json_object_get(s.manifest, "passed"), "branch", st->branch);
out:
	snapshot_free(&s);
	json_decref(sum);
	json_decref(body);
	json_decref(data);
	free(msg);
	free(tag);
	return err;
}

struct werr *
publish_run(json_t **out, const struct publish_opts *o)
{
	struct publish_state st;
	struct gate_input in;
	struct resultset rs;
	json_t *adopted = json_array();
	struct werr *err;
	int have_rs = 0;

	*out = NULL;
	if ((err = publish_state_open(&st, o->repo_root)) != NULL) {
		publish_state_free(&st);
		json_decref(adopted);
		return err;
	}
	if ((err = store_hold(o->store)) != NULL) {
		publish_state_free(&st);
		json_decref(adopted);
		return err;
	}
	if ((err = official_check_free(st.repo, st.branch)) != NULL ||
	    (err = publish_check_head(&st)) != NULL ||
	    (err = publish_check_clean(&st)) != NULL)
		goto out;
	memset(&in, 0, sizeof(in));
	in.repo_root = o->repo_root;
	in.policy = st.policy;
	in.store = o->store;
	in.campaigns = o->campaigns;
	in.ncampaigns = o->ncampaigns;
	in.fidelity = o->fidelity;
	in.nfidelity = o->nfidelity;
	in.no_fidelity = o->no_fidelity;
	err = o->snapshot != NULL ? snapshot_read_resultset(&rs, o->snapshot,
	    o->repo_root) :
	    gate_resultset(&rs, &in);
	if (err != NULL)
		goto out;
	have_rs = 1;
	if ((err = publish_check_measured(&st, &rs)) != NULL ||
	    (err = publish_check_reviews(&st, o->store, adopted)) != NULL ||
	    (err = publish_check_gate(o->store, &rs)) != NULL)
		goto out;
	if (o->sign_key == NULL && st.policy->publish.require_signature) {
		err = werr_new(WEXIT_INPUT, "cannot publish: policy requires "
		    "signed snapshots (publish.require_signature); give "
		    "--sign-key FILE, WARDEN_SIGNING_KEY or git config "
		    "warden.signingKey");
		goto out;
	}
	err = publish_results(out, &st, o, &rs, adopted);
out:
	json_decref(adopted);
	if (have_rs)
		resultset_free(&rs);
	store_unhold(o->store);
	publish_state_free(&st);
	return err;
}
