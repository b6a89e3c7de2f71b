/*
 * publish-check.c - the conditions official results must meet before
 * they are published (see publish.h), each refusing with what failed.
 * Policy is read from the official tip's tree, never the working tree.
 * Never prints; never writes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "journal.h"
#include "jsonget.h"
#include "official.h"
#include "review.h"
#include "util.h"
#include "results/publish.h"
#include "results/store-results.h"

#define REFUSE "cannot publish: "

struct werr *
publish_state_open(struct publish_state *st, const char *repo_root)
{
	struct review_base b;
	struct werr *err;
	char *refname;

	memset(st, 0, sizeof(*st));
	st->repo_root = repo_root;
	if (git_repository_open(&st->repo, repo_root) < 0)
		return werr_git("cannot open repository '%s'", repo_root);
	if (git_repository_is_bare(st->repo))
		return werr_new(WEXIT_ENV, "'%s' is bare: publish needs a "
		    "checkout of the official branch", repo_root);
	/* The official branch is the trusted one (git config
	 * warden.officialBranch, never a checkout's policy); the policy that
	 * judges is its tip's own, loaded below. */
	st->branch = policy_official_branch(st->repo);
	refname = xasprintf("refs/heads/%s", st->branch);
	if (git_reference_name_to_id(&st->tip_oid, st->repo, refname) < 0)
		err = werr_new(WEXIT_PROBLEM, REFUSE "there is no official "
		    "branch '%s'", st->branch);
	else if ((err = review_base_open(&b, st->repo, refname)) == NULL) {
		st->policy = b.policy;
		b.policy = NULL;
		review_base_free(&b);
		git_oid_tostr(st->tip, sizeof(st->tip), &st->tip_oid);
	}
	free(refname);
	return err;
}

void
publish_state_free(struct publish_state *st)
{
	policy_free(st->policy);
	git_repository_free(st->repo);
	free((char *)st->branch);
	memset(st, 0, sizeof(*st));
}

struct werr *
publish_check_head(struct publish_state *st)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid head;

	if (git_reference_name_to_id(&head, st->repo, "HEAD") < 0)
		return werr_new(WEXIT_PROBLEM, REFUSE "HEAD names no commit");
	if (git_oid_equal(&head, &st->tip_oid))
		return NULL;
	git_oid_tostr(hex, sizeof(hex), &head);
	return werr_new(WEXIT_PROBLEM, REFUSE "HEAD (%.12s) is not the tip of "
	    "'%s' (%.12s); publish from a clean checkout of it (git switch "
	    "--detach %s)", hex, st->branch, st->tip, st->branch);
}

struct werr *
publish_check_clean(struct publish_state *st)
{
	git_status_list *list = NULL;
	git_status_options opts;
	const git_status_entry *e;
	const char *path;
	struct werr *err = NULL;
	size_t n;

	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	    GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&list, st->repo, &opts) < 0)
		return werr_git("cannot read the status of '%s'", st->repo_root);
	if ((n = git_status_list_entrycount(list)) > 0) {
		e = git_status_byindex(list, 0);
		path = e->index_to_workdir ? e->index_to_workdir->new_file.path :
		    e->head_to_index ? e->head_to_index->new_file.path : "?";
		err = werr_new(WEXIT_PROBLEM, REFUSE "the working tree is not "
		    "clean: '%s' is %s (%zu path%s in all); commit or remove "
		    "them", path, e->status & GIT_STATUS_WT_NEW ?
		    "untracked" : "changed", n, n == 1 ? "" : "s");
	}
	git_status_list_free(list);
	return err;
}

struct werr *
publish_check_measured(struct publish_state *st, const struct resultset *rs)
{
	const json_t *doc, *prov;
	const char *path, *commit;

	json_object_foreach(rs->docs, path, doc) {
		if (json_is_true(json_object_get(doc, "reference")))
			continue;	/* an input of the comparison */
		prov = json_object_get(doc, "provenance");
		commit = jsonget_str(prov, "repo_commit");
		if (strcmp(commit, st->tip) != 0)
			return werr_new(WEXIT_PROBLEM,
			    REFUSE "'%s' (run %s) was "
			    "measured at commit %.12s, not at the official tip "
			    "%.12s", path, jsonget_str(doc, "run_id"),
			    commit[0] ? commit : "(unknown)", st->tip);
		if (!json_is_false(json_object_get(prov, "repo_dirty")))
			return werr_new(WEXIT_PROBLEM,
			    REFUSE "'%s' (run %s) was "
			    "measured with uncommitted changes in the tree",
			    path, jsonget_str(doc, "run_id"));
	}
	return NULL;
}

/* The newest publish recorded in the store that the tip contains, or
 * *found 0. */
static struct werr *
last_publish(git_oid *out, int *found, struct publish_state *st,
    struct store *store)
{
	json_t *rows = NULL, *r;
	struct werr *err;
	size_t i;

	*found = 0;
	if ((err = store_publishes(store, &rows)) != NULL)
		return err;
	json_array_foreach(rows, i, r) {
		if (git_oid_fromstr(out, jsonget_str(r, "commit_id")) < 0)
			continue;
		if (git_oid_equal(out, &st->tip_oid) ||
		    git_graph_descendant_of(st->repo, &st->tip_oid, out) > 0) {
			*found = 1;
			break;
		}
	}
	json_decref(rows);
	return NULL;
}

/* The first path of c (against its first parent) in the allowlist
 * zone, or NULL (caller frees). */
static struct werr *
zone_path(char **out, struct publish_state *st, const git_commit *c)
{
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	const git_diff_delta *d;
	struct werr *err = NULL;
	size_t i;

	*out = NULL;
	if (git_commit_parent(&parent, c, 0) < 0 ||
	    git_commit_tree(&a, parent) < 0 || git_commit_tree(&b, c) < 0 ||
	    git_diff_tree_to_tree(&diff, st->repo, a, b, NULL) < 0) {
		err = werr_git("cannot diff commit %.12s", git_oid_tostr_s(
		    git_commit_id(c)));
		goto out;
	}
	for (i = 0; i < git_diff_num_deltas(diff) && *out == NULL; i++) {
		d = git_diff_get_delta(diff, i);
		if (allowlist_match_any((const char *const *)
		    st->policy->allowlist.v, st->policy->allowlist.n,
		    d->new_file.path))
			*out = xstrdup(d->new_file.path);
		else if (allowlist_match_any((const char *const *)
		    st->policy->allowlist.v, st->policy->allowlist.n,
		    d->old_file.path))
			*out = xstrdup(d->old_file.path);
	}
out:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return err;
}

static int
approved(const json_t *reviews, const git_oid *id)
{
	const json_t *r;
	size_t i;

	json_array_foreach(reviews, i, r)
		if (strcmp(jsonget_str(r, "merged_commit"),
		    git_oid_tostr_s(id)) == 0)
			return 1;
	return 0;
}

/* Each commit an official.adopted entry records, as a key of the object
 * arg: the maintainer's word, given with `warden journal adopt`. */
static struct werr *
add_adopted(void *arg, const struct journal_entry *e)
{
	const char *c = jsonget_str(e->body, "commit");

	if (c[0] != '\0')
		json_object_set_new(arg, c, json_true());
	return NULL;
}

/* Does c carry a Warden-Operation trailer (warden's own move, which its
 * own entry records)? */
static int
is_operation(const git_commit *c)
{
	git_message_trailer_array tr = { 0 };
	size_t i;
	int found = 0;

	if (git_message_trailers(&tr, git_commit_message(c)) < 0) {
		git_error_clear();
		return 0;
	}
	for (i = 0; i < tr.count && !found; i++)
		found = strcmp(tr.trailers[i].key, OFFICIAL_TRAILER_OPERATION) == 0;
	git_message_trailer_array_free(&tr);
	return found;
}

/*
 * Every commit since the last publish (the store's record, not a trailer
 * anyone could write) is an approved review's, or one a maintainer
 * adopted (`warden journal adopt`: an official.adopted entry, the
 * maintainer's word as an approval is), or changes nothing in the
 * allowlist zone. The repository's first commit, its layout, is exempt.
 * The maintainer's commits it accepts unrecorded (none of those, nor
 * warden's own) are appended to adopted, for the publish's journal entry
 * to record.
 */
struct werr *
publish_check_reviews(struct publish_state *st, struct store *store,
    json_t *adopted)
{
	struct journal_filter f = { NULL, NULL, "official.adopted", 0 };
	git_revwalk *walk = NULL;
	git_commit *c = NULL;
	json_t *reviews = NULL, *adoptions = json_object();
	struct werr *err;
	char *path = NULL;
	git_oid id, last;
	int found, ok;
	size_t nl;

	if ((err = review_list(&reviews, store, "approved")) != NULL ||
	    (err = journal_each(store, &f, add_adopted, adoptions)) != NULL ||
	    (err = last_publish(&last, &found, st, store)) != NULL)
		goto out;
	if (git_revwalk_new(&walk, st->repo) < 0 ||
	    git_revwalk_push(walk, &st->tip_oid) < 0 ||
	    (found && git_revwalk_hide(walk, &last) < 0)) {
		err = werr_git("cannot walk '%s'", st->branch);
		goto out;
	}
	while (err == NULL && git_revwalk_next(&id, walk) == 0) {
		if (git_commit_lookup(&c, st->repo, &id) < 0) {
			err = werr_git("cannot read commit %.12s",
			    git_oid_tostr_s(&id));
			break;
		}
		ok = approved(reviews, &id) || json_object_get(adoptions,
		    git_oid_tostr_s(&id)) != NULL;
		if (git_commit_parentcount(c) > 0 && !ok &&
		    (err = zone_path(&path, st, c)) == NULL && path != NULL) {
			nl = strcspn(git_commit_summary(c), "\n");
			err = werr_new(WEXIT_PROBLEM, REFUSE "commit %.12s "
			    "(\"%.*s\") changes '%s', in the allowlist zone, "
			    "and is not an approved review's; such changes go "
			    "through 'warden patch submit' and 'warden review "
			    "approve' (or, for a maintainer's own commit "
			    "reviewed by hand, 'warden journal adopt %.12s')",
			    git_oid_tostr_s(&id), (int)(nl > 60 ? 60 : nl),
			    git_commit_summary(c), path, git_oid_tostr_s(&id));
		} else if (err == NULL && git_commit_parentcount(c) > 0 &&
		    !ok && !is_operation(c))
			json_array_append_new(adopted,
			    json_string(git_oid_tostr_s(&id)));
		free(path);
		path = NULL;
		git_commit_free(c);
		c = NULL;
	}
out:
	git_revwalk_free(walk);
	json_decref(reviews);
	json_decref(adoptions);
	return err;
}

struct werr *
publish_check_gate(struct store *store, const struct resultset *rs)
{
	char digest[SHA256_HEX_LEN + 1];
	struct werr *err;
	json_t *row = NULL;

	resultset_digest(rs, digest);
	if ((err = store_gate_find(store, digest, &row)) != NULL)
		return err;
	if (row == NULL)
		return werr_new(WEXIT_PROBLEM, REFUSE "the gate has not run on "
		    "these results (result set %.16s); run 'warden gate' with "
		    "the same runs first", digest);
	json_decref(row);
	return NULL;
}
