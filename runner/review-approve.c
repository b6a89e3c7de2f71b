/*
 * review-approve.c - approve a queued change: re-run the gate against the
 * current official tip with the tip's policy and, when clean, commit the
 * change there with a Reviewed-by trailer. See review.h.
 *
 * It must never read policy from the change, never write a working tree
 * or an index file, and never move the official branch while it is
 * checked out. Never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "journal.h"
#include "review.h"
#include "review-private.h"
#include "store.h"
#include "store-review.h"
#include "util.h"

static struct werr *
check_not_checked_out(git_repository *repo, const char *refname)
{
	git_reference *head = NULL;
	struct werr *err = NULL;

	if (git_repository_is_bare(repo))
		return NULL;
	if (git_reference_lookup(&head, repo, "HEAD") == 0 &&
	    git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
	    strcmp(git_reference_symbolic_target(head), refname) == 0)
		err = werr_new(WEXIT_ENV, "'%s' is checked out here; switch to "
		    "another branch before approving", refname + 11);
	git_reference_free(head);
	return err;
}

static char *
approve_message(git_commit *queued, const char *as)
{
	struct buf b = BUF_INIT;
	const char *msg = git_commit_message(queued);

	buf_puts(&b, msg);
	if (b.len > 0 && b.data[b.len - 1] != '\n')
		buf_addch(&b, '\n');
	buf_printf(&b, "Reviewed-by: %s\n", as);
	return buf_detach(&b);
}

static struct werr *
journal_approve_failed(struct store *store, int64_t id,
    const struct allowlist_report *r, const char *why)
{
	json_t *body = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)id,
	    "why", why, "gate", review_report_json(r));
	char *subject = xasprintf("review/%lld", (long long)id);
	struct werr *err;

	if ((err = store_begin(store)) == NULL) {
		if ((err = journal_append(store, "review.approve-failed",
		    subject, body, NULL)) != NULL)
			store_rollback(store);
		else
			err = store_commit(store);
	}
	json_decref(body);
	free(subject);
	return err;
}

struct werr *
review_approve(char *commit_out, struct allowlist_report *r,
    struct store *store, git_repository *repo, const char *official_branch,
    int64_t id, const char *as, const char *comment)
{
	struct review_base b;
	git_signature *approver = NULL;
	git_commit *queued = NULL;
	git_reference *ref = NULL;
	struct store_review_decision d;
	json_t *body = NULL;
	char now[32], hex[GIT_OID_HEXSZ + 1], tip[GIT_OID_HEXSZ + 1];
	char *patch = NULL, *commit = NULL, *msg = NULL, *who = NULL;
	char *refname = xasprintf("refs/heads/%s", official_branch);
	char *subject = xasprintf("review/%lld", (long long)id);
	struct werr *err;
	int in_tx = 0, moved = 0;
	git_oid qid, nid;

	memset(&b, 0, sizeof(b));
	if ((err = review_person(&approver, repo, as)) != NULL ||
	    (err = check_not_checked_out(repo, refname)) != NULL ||
	    (err = review_load_pending(store, id, &patch, &commit)) != NULL ||
	    (err = review_base_open(&b, repo, refname)) != NULL)
		goto out;
	if (git_oid_fromstr(&qid, commit) < 0 ||
	    git_commit_lookup(&queued, repo, &qid) < 0) {
		err = werr_git("cannot read the queued commit of review %lld",
		    (long long)id);
		goto out;
	}
	git_oid_tostr(tip, sizeof(tip), &b.commit);
	if ((err = allowlist_gate_patch(r, repo, &b.tree, patch, strlen(patch),
	    &b.gate, ALLOWLIST_WRITE)) != NULL)
		goto out;
	if (r->nv > 0 || !r->applied) {
		err = journal_approve_failed(store, id, r, "gate");
		werr_free(err);
		err = werr_new(WEXIT_PROBLEM, "review %lld does not pass the "
		    "gate against '%s' (%.12s) any more; it stays pending",
		    (long long)id, official_branch, tip);
		goto out;
	}
	who = review_person_string(approver);
	msg = approve_message(queued, who);
	if ((err = review_create_commit(&nid, repo, &r->result_tree, &b.commit,
	    git_commit_author(queued), approver, msg)) != NULL)
		goto out;
	git_oid_tostr(hex, sizeof(hex), &nid);
	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		goto out;
	in_tx = 1;
	d.status = "approved";
	d.decided = now;
	d.by = who;
	d.comment = comment;
	d.merged_commit = hex;
	if ((err = store_review_decide(store, id, &d)) != NULL)
		goto out;
	body = json_pack("{s:I, s:s, s:s?, s:s, s:s, s:s}", "id",
	    (json_int_t)id, "by", who, "comment", comment, "commit", hex,
	    "branch", official_branch, "previous_tip", tip);
	if ((err = journal_append(store, "review.approved", subject, body,
	    NULL)) != NULL)
		goto out;
	/* Moves only if the tip is still the one the gate ran against. */
	if (git_reference_create_matching(&ref, repo, refname, &nid, 1,
	    &b.commit, "warden: review approved") < 0) {
		err = werr_git("cannot move '%s'", official_branch);
		goto out;
	}
	moved = 1;
	if ((err = store_commit(store)) != NULL)
		goto out;
	in_tx = 0;
	memcpy(commit_out, hex, sizeof(hex));
out:
	if (in_tx) {
		store_rollback(store);
		if (moved) {
			git_reference *back = NULL;

			git_reference_create(&back, repo, refname, &b.commit, 1,
			    "warden: approval rolled back");
			git_reference_free(back);
		}
	}
	review_base_free(&b);
	git_reference_free(ref);
	git_commit_free(queued);
	git_signature_free(approver);
	json_decref(body);
	free(patch);
	free(commit);
	free(msg);
	free(who);
	free(refname);
	free(subject);
	return err;
}

