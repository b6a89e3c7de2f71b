/*
 * checkout.c - the cycle's first step: measure at the official tip. A
 * maintainer's checkout for the cycle is a detached HEAD at the official
 * branch; every approval, publish and journal export moves that branch
 * ahead of it, so the cycle moves a detached HEAD forward to the tip
 * (a fast-forward, with libgit2's safe checkout: a file with changes of
 * its own is never overwritten) before it measures.
 *
 * It never moves a branch, never goes back or sideways in history, and
 * never touches a tree with changes the move would overwrite; then it
 * says why the results will not be publishable, and the cycle measures
 * what is there. Before any of it, the journal must record every move of
 * the official branch: where no publish of this cycle can adopt a commit
 * made on it outside warden (cycle.publish false), that commit stops the
 * cycle here, naming `warden journal adopt`, not at the export an hour
 * later.
 */
#include "config.h"

#include <string.h>

#include "cycle-private.h"
#include "journal.h"
#include "util.h"

/* Paths that differ from HEAD (untracked included): the first, and how
 * many. */
static struct werr *
dirty(git_repository *repo, char **first, size_t *n)
{
	git_status_options opts;
	git_status_list *list = NULL;
	const git_status_entry *e;

	*first = NULL;
	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	    GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&list, repo, &opts) < 0)
		return werr_git("cannot read the status of the working tree");
	*n = git_status_list_entrycount(list);
	if (*n > 0) {
		e = git_status_byindex(list, 0);
		*first = xstrdup(e->index_to_workdir ?
		    e->index_to_workdir->new_file.path : e->head_to_index ?
		    e->head_to_index->new_file.path : "?");
	}
	git_status_list_free(list);
	return NULL;
}

/* Check out commit tip over HEAD (a fast-forward), then detach HEAD
 * there. A conflict is not an error: *why says what is in the way. */
static struct werr *
fast_forward(char **why, git_repository *repo, const git_oid *tip)
{
	git_checkout_options co;
	git_commit *commit = NULL;
	struct werr *err = NULL;
	int rc;

	*why = NULL;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_SAFE;
	if (git_commit_lookup(&commit, repo, tip) < 0)
		return werr_git("cannot read the official tip");
	rc = git_checkout_tree(repo, (const git_object *)commit, &co);
	if (rc == GIT_ECONFLICT)
		*why = xasprintf("the working tree has changes the official "
		    "tip would overwrite (%s)", git_error_last() ?
		    git_error_last()->message : "conflict");
	else if (rc < 0)
		err = werr_git("cannot check out the official tip");
	else if (git_repository_set_head_detached(repo, tip) < 0)
		err = werr_git("cannot move HEAD to the official tip");
	git_commit_free(commit);
	return err;
}

struct werr *
cycle_checkout_sync(json_t **result, git_repository *repo, const char *branch)
{
	char head_hex[41] = "", tip_hex[41], *refname, *why = NULL;
	char *first = NULL, *what = NULL;
	git_reference *head_ref = NULL;
	git_oid tip, head;
	struct werr *err = NULL;
	int detached, moved = 0, ok = 0;
	size_t n = 0;

	*result = NULL;
	refname = xasprintf("refs/heads/%s", branch);
	if (git_reference_name_to_id(&tip, repo, refname) < 0) {
		free(refname);
		*result = json_pack("{s:b, s:s+}", "at_tip", 0, "what",
		    "there is no official branch ", branch);
		return NULL;
	}
	free(refname);
	git_oid_tostr(tip_hex, sizeof(tip_hex), &tip);
	detached = git_repository_head_detached(repo) == 1;
	if (git_repository_head(&head_ref, repo) == 0) {
		git_oid_cpy(&head, git_reference_target(head_ref));
		git_oid_tostr(head_hex, sizeof(head_hex), &head);
	}
	if (head_hex[0] == '\0') {
		what = xasprintf("HEAD names no commit; the results cannot be "
		    "published");
	} else if (!detached) {
		/* Even at the tip: the cycle's own commits move the official
		 * branch ahead of a branch checked out here. */
		what = xasprintf("HEAD is branch '%s' at %.12s, not a detached "
		    "HEAD at the tip of '%s' (%.12s): the results cannot be "
		    "published; run the cycle on a detached HEAD at it (git "
		    "switch --detach %s)", git_reference_shorthand(head_ref),
		    head_hex, branch, tip_hex, branch);
	} else if (git_oid_equal(&head, &tip)) {
		;
	} else if (git_graph_descendant_of(repo, &tip, &head) != 1) {
		what = xasprintf("the detached HEAD (%.12s) is not behind the "
		    "tip of '%s' (%.12s), so it is not moved: the results "
		    "cannot be published", head_hex, branch, tip_hex);
	} else if ((err = fast_forward(&why, repo, &tip)) != NULL) {
		goto out;
	} else if (why != NULL) {
		what = xasprintf("HEAD (%.12s) stays behind the tip of '%s' "
		    "(%.12s): %s; the results cannot be published", head_hex,
		    branch, tip_hex, why);
	} else
		moved = 1;
	if (what == NULL && (err = dirty(repo, &first, &n)) != NULL)
		goto out;
	if (what == NULL && n > 0)
		what = xasprintf("the working tree is not clean ('%s' and %zu "
		    "path%s in all): the results cannot be published", first, n,
		    n == 1 ? "" : "s");
	if (what == NULL) {
		ok = 1;
		what = moved ? xasprintf("moved the detached HEAD from %.12s to "
		    "%.12s, the tip of '%s'", head_hex, tip_hex, branch) :
		    xasprintf("HEAD is the tip of '%s' (%.12s), clean", branch,
		    tip_hex);
	}
	*result = json_pack("{s:b, s:s, s:s, s:s, s:b}", "at_tip", ok,
	    "what", what, "head",
	    moved ? tip_hex : head_hex, "tip", tip_hex, "moved", moved);
	if (moved)
		json_object_set_new(*result, "from", json_string(head_hex));
out:
	git_reference_free(head_ref);
	free(why);
	free(first);
	free(what);
	return err;
}

char *
cycle_unrecorded_text(const char *commit, const char *branch, int blocks)
{
	if (blocks)
		return xasprintf("official commit %.12s is recorded by no "
		    "journal entry: '%s' was moved outside warden; if the "
		    "commit is a maintainer's, record it with 'warden journal "
		    "adopt %.12s', then run the cycle again", commit, branch,
		    commit);
	return xasprintf("official commit %.12s is recorded by no journal "
	    "entry yet: the next publish adopts it if it changes nothing in "
	    "the allowlist zone; else record it with 'warden journal adopt "
	    "%.12s'", commit, commit);
}

char *
cycle_official_unrecorded(struct store *store, git_repository *repo,
    const char *branch, int blocks)
{
	struct journal_evidence ev;
	struct journal_verdict v;
	struct werr *err;
	char *bad = NULL, *out = NULL;

	memset(&ev, 0, sizeof(ev));
	memset(&v, 0, sizeof(v));
	err = journal_evidence_load(&ev, &bad, repo, branch);
	if (err == NULL)
		err = journal_check(&v, store, &ev);
	if (err == NULL && v.unrecorded[0] != '\0')
		out = cycle_unrecorded_text(v.unrecorded, branch, blocks);
	werr_free(err);		/* journal verify names any other break */
	journal_evidence_free(&ev);
	journal_verdict_free(&v);
	free(bad);
	return out;
}
