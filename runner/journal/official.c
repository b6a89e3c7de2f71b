/*
 * official.c - move the official branch: intent, ref update with an
 * expected old value, outcome; and recovery of whatever a crash left in
 * between. See official.h for the protocol.
 *
 * Rows go through store-official.c, entries through journal.c. It must
 * never move the branch without an intent committed first, never move it
 * from a tip other than the expected one, never touch a working tree or an
 * index, and never print.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "journal.h"
#include "official.h"
#include "store.h"
#include "store-official.h"
#include "util.h"

const struct official_kind *
official_kind_find(const char *name)
{
	size_t i;

	for (i = 0; official_kinds[i].name != NULL; i++)
		if (strcmp(official_kinds[i].name, name) == 0)
			return &official_kinds[i];
	return NULL;
}

/* Is refname what the HEAD of repo (a repository or a worktree) names? */
static int
head_is(git_repository *repo, const char *refname)
{
	git_reference *head = NULL;
	int is;

	if (git_reference_lookup(&head, repo, "HEAD") < 0)
		return 0;
	is = git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
	    strcmp(git_reference_symbolic_target(head), refname) == 0;
	git_reference_free(head);
	return is;
}

struct werr *
official_check_free(git_repository *repo, const char *branch)
{
	char *refname = xasprintf("refs/heads/%s", branch);
	git_strarray names = { NULL, 0 };
	const char *where = NULL;
	char *path = NULL;
	struct werr *err = NULL;
	size_t i;

	if (!git_repository_is_bare(repo) && head_is(repo, refname))
		where = git_repository_workdir(repo);
	if (where == NULL && git_worktree_list(&names, repo) < 0) {
		err = werr_git("cannot list the worktrees");
		goto out;
	}
	for (i = 0; where == NULL && i < names.count; i++) {
		git_worktree *wt = NULL;
		git_repository *wr = NULL;

		if (git_worktree_lookup(&wt, repo, names.strings[i]) == 0 &&
		    git_worktree_validate(wt) == 0 &&
		    git_repository_open_from_worktree(&wr, wt) == 0 &&
		    head_is(wr, refname))
			where = path = xstrdup(git_worktree_path(wt));
		git_repository_free(wr);
		git_worktree_free(wt);
	}
	if (where != NULL)
		err = werr_new(WEXIT_ENV, "'%s' is checked out in the worktree "
		    "'%.*s'; switch it to another branch (or detach it: git "
		    "switch --detach) before warden moves '%s'", branch,
		    (int)(strlen(where) - (str_endswith(where, "/") ? 1 : 0)),
		    where, branch);
out:
	git_strarray_dispose(&names);
	free(path);
	free(refname);
	return err;
}

/* c->message with the operation and journal-head trailers appended to
 * its trailer block (a new one when it has none). */
static char *
message_with_trailers(const char *message, const char *kind, const char *op,
    int64_t seq, const char *hash)
{
	git_message_trailer_array tr = { 0 };
	struct buf b = BUF_INIT;

	buf_puts(&b, message);
	while (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	if (git_message_trailers(&tr, message) < 0 || tr.count == 0)
		buf_puts(&b, "\n");
	git_message_trailer_array_free(&tr);
	buf_printf(&b, "\n%s: %s %s\n", OFFICIAL_TRAILER_OPERATION, kind, op);
	if (seq > 0)
		buf_printf(&b, "%s: %lld %s\n", OFFICIAL_TRAILER_JOURNAL,
		    (long long)seq, hash);
	return buf_detach(&b);
}

static struct werr *
default_signature(git_signature **out, git_repository *repo)
{
	if (git_signature_default(out, repo) == 0 ||
	    git_signature_now(out, "warden", "warden@localhost") == 0)
		return NULL;
	return werr_git("cannot make a signature");
}

/* What settling an intent records, as stored with it. */
static json_t *
outcome_json(const struct official_change *c, const char *branch,
    const char *commit, const char *tip)
{
	json_t *body = NULL;

	if (c->journal_body != NULL) {
		body = json_deep_copy(c->journal_body);
		json_object_set_new(body, "commit", json_string(commit));
		json_object_set_new(body, "branch", json_string(branch));
		json_object_set_new(body, "previous_tip", json_string(tip));
	}
	return json_pack("{s:s?, s:o?, s:O?}", "subject", c->journal_subject,
	    "body", body, "data", c->data);
}

/*
 * The outcome transaction of a landed move: the kind's store change, its
 * journal entry, an official.recovered entry when recovery does it, and
 * the intent marked done.
 */
static struct werr *
settle_done(struct store *store, json_t *row, int recovered)
{
	const char *kind = json_string_value(json_object_get(row, "kind"));
	const char *op = json_string_value(json_object_get(row, "op"));
	const char *commit = json_string_value(json_object_get(row, "new_tip"));
	const struct official_kind *k = official_kind_find(kind);
	json_t *outcome = json_loads(json_string_value(json_object_get(row,
	    "outcome")), 0, NULL);
	json_t *note = NULL;
	struct werr *err;
	char now[32];

	if (k == NULL || outcome == NULL) {
		json_decref(outcome);
		return werr_new(WEXIT_ENV, "cannot settle the move of the "
		    "official branch to %.12s: unknown kind '%s' or unreadable "
		    "outcome", commit, kind);
	}
	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		goto out;
	if (k->finish != NULL && (err = k->finish(store, op, commit,
	    json_object_get(outcome, "data"))) != NULL)
		goto fail;
	if (k->journal_kind != NULL && (err = journal_append(store,
	    k->journal_kind, json_string_value(json_object_get(outcome,
	    "subject")), json_object_get(outcome, "body"), NULL)) != NULL)
		goto fail;
	if (recovered) {
		note = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind", kind,
		    "op", op, "commit", commit, "ref",
		    json_string_value(json_object_get(row, "ref")),
		    "outcome", "completed");
		if ((err = journal_append(store, "official.recovered", kind,
		    note, NULL)) != NULL)
			goto fail;
	}
	if ((err = store_official_settle(store, json_integer_value(
	    json_object_get(row, "id")), "done", now)) != NULL)
		goto fail;
	err = store_commit(store);
	goto out;
fail:
	store_rollback(store);
out:
	json_decref(note);
	json_decref(outcome);
	return err;
}

/* The move did not happen: mark the intent rolled back (and journal it
 * when recovery finds it). */
static struct werr *
settle_rolled_back(struct store *store, json_t *row, int recovered,
    const char *why)
{
	json_t *note = NULL;
	struct werr *err;
	char now[32];

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		return err;
	if (recovered) {
		note = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kind",
		    json_string_value(json_object_get(row, "kind")), "op",
		    json_string_value(json_object_get(row, "op")),
		    "abandoned_commit",
		    json_string_value(json_object_get(row, "new_tip")),
		    "ref", json_string_value(json_object_get(row, "ref")),
		    "outcome", "rolled back", "why", why);
		err = journal_append(store, "official.recovered",
		    json_string_value(json_object_get(row, "kind")), note, NULL);
	}
	if (err == NULL)
		err = store_official_settle(store, json_integer_value(
		    json_object_get(row, "id")), "rolled-back", now);
	json_decref(note);
	if (err != NULL) {
		store_rollback(store);
		return err;
	}
	return store_commit(store);
}

/* Did the move of row land? The ref holds its commit or a descendant. */
static struct werr *
move_landed(int *landed, const char **why, git_repository *repo, json_t *row)
{
	const char *ref = json_string_value(json_object_get(row, "ref"));
	git_oid want, tip;

	*landed = 0;
	if (git_oid_fromstr(&want, json_string_value(json_object_get(row,
	    "new_tip"))) < 0)
		return werr_new(WEXIT_ENV, "official_ops row %lld is unreadable",
		    (long long)json_integer_value(json_object_get(row, "id")));
	if (git_reference_name_to_id(&tip, repo, ref) < 0) {
		git_error_clear();
		*why = "the branch is gone";
		return NULL;
	}
	if (git_oid_equal(&tip, &want) ||
	    git_graph_descendant_of(repo, &tip, &want) > 0)
		*landed = 1;
	else
		*why = "the branch does not hold the commit";
	return NULL;
}

struct werr *
official_recover(struct store *store, git_repository *repo, int *settled_out)
{
	json_t *ops = NULL, *row;
	struct werr *err;
	size_t i;

	if (settled_out != NULL)
		*settled_out = 0;
	if ((err = store_hold(store)) != NULL)
		return err;
	if ((err = store_official_open_ops(store, &ops)) != NULL)
		goto out;
	json_array_foreach(ops, i, row) {
		const char *why = NULL;
		int landed;

		if ((err = move_landed(&landed, &why, repo, row)) != NULL)
			goto out;
		err = landed ? settle_done(store, row, 1) :
		    settle_rolled_back(store, row, 1, why);
		if (err != NULL)
			goto out;
		if (settled_out != NULL)
			(*settled_out)++;
	}
out:
	json_decref(ops);
	store_unhold(store);
	return err;
}

struct werr *
official_recover_at(struct store *store, const char *repo_root,
    int *settled_out)
{
	git_repository *repo = NULL;
	json_t *ops = NULL;
	struct werr *err;

	if (settled_out != NULL)
		*settled_out = 0;
	if ((err = store_official_open_ops(store, &ops)) != NULL)
		return err;
	if (json_array_size(ops) > 0) {
		if (git_repository_open(&repo, repo_root) < 0)
			err = werr_git("cannot open '%s'", repo_root);
		else
			err = official_recover(store, repo, settled_out);
	}
	git_repository_free(repo);
	json_decref(ops);
	return err;
}

/* Write the commit object of c (no ref moves). */
static struct werr *
write_commit(git_oid *out, struct store *store, git_repository *repo,
    const struct official_change *c)
{
	git_signature *own = NULL;
	const git_signature *committer = c->committer;
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	char hash[65], *msg = NULL;
	struct werr *err;
	int64_t seq;

	if ((err = journal_head(store, &seq, hash)) != NULL)
		return err;
	if (committer == NULL) {
		if ((err = default_signature(&own, repo)) != NULL)
			return err;
		committer = own;
	}
	msg = message_with_trailers(c->message, c->kind, c->op, seq, hash);
	if (git_tree_lookup(&tree, repo, c->tree) < 0 ||
	    git_commit_lookup(&parent, repo, c->expected_tip) < 0 ||
	    git_commit_create(out, repo, NULL, c->author != NULL ? c->author :
	    committer, committer, NULL, msg, tree, 1,
	    (const git_commit **)&parent) < 0)
		err = werr_git("cannot write the %s commit", c->kind);
	git_commit_free(parent);
	git_tree_free(tree);
	git_signature_free(own);
	free(msg);
	return err;
}

/* The branch's tip must still be expected: a friendlier error than the
 * ref update's, before anything is written. */
static struct werr *
check_tip(git_repository *repo, const char *refname, const char *branch,
    const git_oid *expected)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid tip;

	if (git_reference_name_to_id(&tip, repo, refname) < 0)
		return werr_new(WEXIT_ENV, "there is no branch '%s' in this "
		    "repository", branch);
	if (git_oid_equal(&tip, expected))
		return NULL;
	git_oid_tostr(hex, sizeof(hex), expected);
	return werr_new(WEXIT_PROBLEM, "'%s' moved away from %.12s while warden "
	    "worked; nothing was changed, run the command again", branch, hex);
}

/* Steps 2-4 of official.h for the commit nid. */
static struct werr *
move(struct store *store, git_repository *repo, const char *branch,
    const char *refname, const struct official_change *c, const git_oid *nid)
{
	struct store_official_op op;
	char hex[GIT_OID_HEXSZ + 1], tip[GIT_OID_HEXSZ + 1], now[32];
	git_reference *ref = NULL;
	json_t *outcome, *row = NULL;
	char *outcome_text;
	struct werr *err;
	int64_t id;

	git_oid_tostr(hex, sizeof(hex), nid);
	git_oid_tostr(tip, sizeof(tip), c->expected_tip);
	utc_now_iso(now, sizeof(now));
	outcome = outcome_json(c, branch, hex, tip);
	outcome_text = outcome != NULL ? json_dumps(outcome, JSON_COMPACT) : NULL;
	json_decref(outcome);
	if (outcome_text == NULL)
		return werr_new(WEXIT_INPUT, "the record of the %s cannot be "
		    "built (text that is not valid UTF-8?)", c->kind);
	memset(&op, 0, sizeof(op));
	op.kind = c->kind;
	op.op = c->op;
	op.ref = refname;
	op.old_tip = tip;
	op.new_tip = hex;
	op.created = now;
	op.outcome = outcome_text;
	if ((err = store_begin(store)) != NULL)
		goto out;
	if ((err = store_official_intent(store, &op, &id)) != NULL) {
		store_rollback(store);
		goto out;
	}
	if ((err = store_commit(store)) != NULL)
		goto out;
	row = json_pack("{s:I, s:s, s:s, s:s, s:s}", "id", (json_int_t)id,
	    "kind", c->kind, "op", c->op, "ref", refname, "new_tip", hex);
	json_object_set_new(row, "outcome", json_string(outcome_text));
	fault_point("official.ref");
	if (git_reference_create_matching(&ref, repo, refname, nid, 1,
	    c->expected_tip, c->kind) < 0) {
		err = werr_git("cannot move '%s' from %.12s", branch, tip);
		werr_free(settle_rolled_back(store, row, 0, NULL));
		goto out;
	}
	fault_point("official.moved");
	if ((err = settle_done(store, row, 0)) != NULL)
		err = werr_wrap(err, "'%s' moved to %.12s but the outcome was not "
		    "recorded (the next warden command records it)", branch, hex);
out:
	git_reference_free(ref);
	json_decref(row);
	free(outcome_text);
	return err;
}

struct werr *
official_commit(char *commit_out, struct store *store, git_repository *repo,
    const char *branch, const struct official_change *c)
{
	const struct official_kind *k = official_kind_find(c->kind);
	char *refname = xasprintf("refs/heads/%s", branch);
	struct werr *err;
	git_oid nid;

	commit_out[0] = '\0';
	if (k == NULL)
		fatal("official_commit: kind '%s' is not in official_kinds[]",
		    c->kind);
	if (k->journal_kind != NULL && (err = journal_check_entry(
	    k->journal_kind, c->journal_subject, c->journal_body)) != NULL) {
		free(refname);
		return err;
	}
	if ((err = store_hold(store)) != NULL) {
		free(refname);
		return err;
	}
	if ((err = official_recover(store, repo, NULL)) != NULL ||
	    (err = official_check_free(repo, branch)) != NULL ||
	    (err = check_tip(repo, refname, branch, c->expected_tip)) != NULL ||
	    (err = write_commit(&nid, store, repo, c)) != NULL)
		goto out;
	if ((err = move(store, repo, branch, refname, c, &nid)) == NULL)
		git_oid_tostr(commit_out, GIT_OID_HEXSZ + 1, &nid);
out:
	store_unhold(store);
	free(refname);
	return err;
}
