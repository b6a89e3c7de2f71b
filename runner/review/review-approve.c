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
#include "jsonget.h"
#include "official.h"
#include "review.h"
#include "review-private.h"
#include "review-smoke.h"
#include "store.h"
#include "store-review.h"
#include "util.h"

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
	json_t *body = json_pack("{s:I, s:s, s:o*}", "id", (json_int_t)id,
	    "why", why, "gate", r != NULL ? review_report_json(r) : NULL);
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

/* The evidence review id expects (an "expects" entry, review.h) and ev
 * (its evidence) does not have, or NULL. */
static char *
expected_missing(const json_t *ev, int64_t id)
{
	const json_t *x, *y, *body;
	const char *kind;
	char *missing = NULL;
	size_t i, j;
	int have;

	json_array_foreach(ev, i, x) {
		if (strcmp(jsonget_str(x, "kind"), "expects") != 0)
			continue;
		body = json_object_get(x, "body");
		kind = jsonget_str(body, "kind");
		have = 0;
		json_array_foreach(ev, j, y)
			if (strcmp(jsonget_str(y, "kind"), kind) == 0)
				have = 1;
		if (!have && missing == NULL)
			missing = xasprintf("review %lld has no %s evidence, "
			    "which its %s promised when it queued the change "
			    "(the run was interrupted, or its smoke campaign "
			    "was stopped by the post-run guard)",
			    (long long)id, kind, jsonget_str(body, "by"));
	}
	return missing;
}

/*
 * *missing: why review id may not be approved on its evidence, or NULL.
 * Evidence a submitter promised (expected_missing), and a smoke campaign
 * (review smoke, the agent's, triage's) of every engine the change
 * touches as it lands on the tip (r: the gate's result there).
 * *regressed: the cells the newest smoke of those engines measured as
 * regressed (review_smoke_regressed()).
 */
static struct werr *
evidence_missing(char **missing, json_t **regressed, struct store *store,
    git_repository *repo, const struct review_base *b,
    const struct allowlist_report *r, int64_t id)
{
	struct review_smoke_opts so;
	json_t *engines, *ev = NULL;
	char *names;
	struct werr *err;

	*missing = NULL;
	*regressed = NULL;
	if ((err = store_review_evidence(store, id, &ev)) != NULL)
		return err;
	if ((*missing = expected_missing(ev, id)) != NULL) {
		json_decref(ev);
		return NULL;
	}
	memset(&so, 0, sizeof(so));
	so.repo = repo;
	so.policy = b->policy;
	so.base_tree = &b->tree;
	so.change_tree = &r->result_tree;
	so.gate = r;
	engines = review_smoke_engines(&so);
	names = review_smoke_missing(ev, engines);
	*regressed = review_smoke_regressed(ev, engines);
	if (names != NULL)
		*missing = xasprintf("review %lld changes %s and carries no "
		    "smoke evidence of %s (warden review smoke %lld runs it)",
		    (long long)id, names, strchr(names, ',') ? "them" : "it",
		    (long long)id);
	json_decref(engines);
	json_decref(ev);
	free(names);
	return NULL;
}

/* "simfix qwen3-0.6b/chat c=1: 5.02x slower decode: ...; ..." of the
 * regressed cells; caller frees. */
static char *
regressed_text(const json_t *cells)
{
	struct buf b = BUF_INIT;
	const json_t *c;
	size_t i;

	json_array_foreach(cells, i, c)
		buf_printf(&b, "%s%s %s/%s c=%lld: %s", i > 0 ? "; " : "",
		    jsonget_str(c, "engine"), jsonget_str(c, "model"),
		    jsonget_str(c, "split"), (long long)jsonget_int(c,
		    "concurrency"), jsonget_str(c, "text"));
	return buf_detach(&b);
}

struct werr *
review_approve_finish(struct store *store, const char *op, const char *commit,
    json_t *data)
{
	struct store_review_decision d;
	const char *decided = NULL, *by = NULL, *comment = NULL;

	if (json_unpack(data, "{s:s, s:s, s?s}", "decided", &decided, "by", &by,
	    "comment", &comment) != 0)
		return werr_new(WEXIT_ENV, "the approval of review %s was "
		    "recorded without its decision", op);
	memset(&d, 0, sizeof(d));
	d.status = "approved";
	d.decided = decided;
	d.by = by;
	d.comment = comment;
	d.merged_commit = commit;
	return store_review_decide(store, atoll(op), &d);
}

/* The gate against the tip, then the move through official.c. Called
 * with the store held, so the review cannot be decided meanwhile. */
static struct werr *
approve_held(char *commit_out, struct allowlist_report *r,
    struct store *store, git_repository *repo, const char *official_branch,
    int64_t id, const git_signature *approver, const char *comment,
    unsigned flags)
{
	struct official_change c;
	struct review_base b;
	git_commit *queued = NULL;
	json_t *body = NULL, *data = NULL;
	char now[32], tip[GIT_OID_HEXSZ + 1];
	char *patch = NULL, *commit = NULL, *msg = NULL, *who = NULL;
	char *missing = NULL, *slower = NULL;
	json_t *regressed = NULL;
	char *refname = xasprintf("refs/heads/%s", official_branch);
	char *subject = xasprintf("review/%lld", (long long)id);
	char *op = xasprintf("%lld", (long long)id);
	struct werr *err;
	git_oid qid;

	memset(&b, 0, sizeof(b));
	if ((err = official_check_free(repo, official_branch)) != NULL ||
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
		werr_free(journal_approve_failed(store, id, r, "gate"));
		err = werr_new(WEXIT_PROBLEM, "review %lld does not pass the "
		    "gate against '%s' (%.12s) any more; it stays pending",
		    (long long)id, official_branch, tip);
		goto out;
	}
	if ((err = evidence_missing(&missing, &regressed, store, repo, &b, r,
	    id)) != NULL)
		goto out;
	if (missing != NULL && !(flags & REVIEW_WITHOUT_EVIDENCE)) {
		werr_free(journal_approve_failed(store, id, r, missing));
		err = werr_new(WEXIT_PROBLEM, "%s; it stays pending (review "
		    "approve --without-evidence takes it without, and the "
		    "journal says so)", missing);
		goto out;
	}
	if (json_array_size(regressed) > 0) {
		slower = regressed_text(regressed);
		if (!(flags & REVIEW_ACCEPT_REGRESSION)) {
			char *why = xasprintf("review %lld was measured as a "
			    "regression by its smoke: %s", (long long)id,
			    slower);

			werr_free(journal_approve_failed(store, id, r, why));
			err = werr_new(WEXIT_PROBLEM, "%s; it stays pending "
			    "(review approve --accept-regression takes it, "
			    "and the journal says so)", why);
			free(why);
			goto out;
		}
	}
	who = review_person_string(approver);
	msg = approve_message(queued, who);
	utc_now_iso(now, sizeof(now));
	body = json_pack("{s:I, s:s, s:s?, s:s?}", "id", (json_int_t)id, "by",
	    who, "comment", comment, "without_evidence", missing);
	if (slower != NULL)
		json_object_set_new(body, "accepted_regression", json_pack(
		    "{s:s, s:O}", "text", slower, "cells", regressed));
	data = json_pack("{s:s, s:s, s:s*}", "decided", now, "by", who,
	    "comment", comment);
	memset(&c, 0, sizeof(c));
	c.kind = "review.approve";
	c.op = op;
	c.tree = &r->result_tree;
	c.expected_tip = &b.commit;
	c.message = msg;
	c.author = git_commit_author(queued);
	c.committer = approver;
	c.journal_subject = subject;
	c.journal_body = body;
	c.data = data;
	if (data == NULL)
		err = werr_new(WEXIT_INPUT, "the approval of review %lld cannot "
		    "be recorded (text that is not valid UTF-8?)", (long long)id);
	else
		err = official_commit(commit_out, store, repo, official_branch,
		    &c);
out:
	review_base_free(&b);
	git_commit_free(queued);
	json_decref(body);
	json_decref(data);
	free(patch);
	free(commit);
	free(missing);
	free(slower);
	json_decref(regressed);
	free(msg);
	free(who);
	free(refname);
	free(subject);
	free(op);
	return err;
}

struct werr *
review_approve(char *commit_out, struct allowlist_report *r,
    struct store *store, git_repository *repo, const char *official_branch,
    int64_t id, const char *as, const char *comment, unsigned flags)
{
	git_signature *approver = NULL;
	struct werr *err;

	commit_out[0] = '\0';
	if ((err = text_check("--as", as)) != NULL ||
	    (err = text_check("--comment", comment)) != NULL ||
	    (err = review_person(&approver, repo, as)) != NULL)
		return err;
	if ((err = store_hold(store)) == NULL) {
		err = approve_held(commit_out, r, store, repo, official_branch,
		    id, approver, comment, flags);
		store_unhold(store);
	}
	git_signature_free(approver);
	return err;
}
