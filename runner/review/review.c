/*
 * review.c - the review queue: gate, queue, list, show, evidence, reject.
 * See review.h; approval is in review-approve.c, pr-check in
 * review-prcheck.c.
 *
 * Every state change and its journal entry land in one store
 * transaction; refs move only inside that transaction's window and are
 * put back if it fails. Rows are read and written through store-review.c.
 * It must never hold SQL, never write a working tree or an index file,
 * never read policy from the change under review, and never treat a
 * commit trailer as an authorisation. Never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fault.h"
#include "journal.h"
#include "policy.h"
#include "quote.h"
#include "review.h"
#include "review-private.h"
#include "schema.h"
#include "store.h"
#include "store-review.h"
#include "util.h"


struct werr *
review_base_open(struct review_base *b, git_repository *repo, const char *rev)
{
	git_object *obj = NULL;
	git_commit *commit = NULL;
	struct werr *err = NULL;

	memset(b, 0, sizeof(*b));
	b->rev = xstrdup(rev);
	if (git_revparse_single(&obj, repo, rev) < 0 ||
	    git_commit_lookup(&commit, repo, git_object_id(obj)) < 0) {
		git_object_free(obj);
		obj = NULL;
		if (git_revparse_single(&obj, repo, rev) == 0)
			git_object_peel((git_object **)&commit, obj,
			    GIT_OBJECT_COMMIT);
		if (commit == NULL) {
			err = werr_new(WEXIT_INPUT, "'%s' is not a commit in "
			    "this repository", rev);
			goto out;
		}
	}
	git_oid_cpy(&b->commit, git_commit_id(commit));
	git_oid_cpy(&b->tree, git_commit_tree_id(commit));
	if ((err = policy_load_commit(&b->policy, repo, commit, rev)) != NULL)
		goto out;
	b->gate.allow = (const char *const *)b->policy->allowlist.v;
	b->gate.nallow = b->policy->allowlist.n;
	b->gate.exec = (const char *const *)b->policy->executable.v;
	b->gate.nexec = b->policy->executable.n;
	b->gate.allow_binary = b->policy->patch_limits.allow_binary;
	b->gate.max_bytes = b->policy->patch_limits.max_bytes > 0 ?
	    (size_t)b->policy->patch_limits.max_bytes : 0;
	b->gate.max_files = b->policy->patch_limits.max_files > 0 ?
	    (size_t)b->policy->patch_limits.max_files : 0;
out:
	git_commit_free(commit);
	git_object_free(obj);
	if (err != NULL)
		review_base_free(b);
	return err;
}

void
review_base_free(struct review_base *b)
{
	policy_free(b->policy);
	free(b->rev);
	memset(b, 0, sizeof(*b));
}

json_t *
review_report_json(const struct allowlist_report *r)
{
	json_t *o = json_object(), *v = json_array(), *f = json_array();
	char hex[GIT_OID_HEXSZ + 1];
	size_t i;

	for (i = 0; i < r->nv; i++)
		json_array_append_new(v, json_pack("{s:s, s:o, s:o, s:s?}",
		    "code", allowlist_code_name(r->v[i].code),
		    "path", json_text(r->v[i].path),
		    "reason", json_text(r->v[i].reason),
		    "commit", r->v[i].commit));
	for (i = 0; i < r->nfiles; i++) {
		const struct allowlist_file *x = &r->files[i];
		char st[2] = { x->status, '\0' };

		/* Paths come from a patch or a tree: any bytes. */
		json_array_append_new(f, json_pack("{s:s, s:o?, s:o?, s:o?, "
		    "s:o?, s:I, s:I}", "status", st, "old_path",
		    json_text(x->old_path), "new_path", json_text(x->new_path),
		    "old_mode", x->old_mode ? json_sprintf("%06o",
		    (unsigned)x->old_mode) : NULL,
		    "new_mode", x->new_mode ? json_sprintf("%06o",
		    (unsigned)x->new_mode) : NULL,
		    "added", (json_int_t)x->added,
		    "deleted", (json_int_t)x->deleted));
	}
	json_object_set_new(o, "ok", json_boolean(r->nv == 0));
	json_object_set_new(o, "violations", v);
	json_object_set_new(o, "files", f);
	if (r->applied) {
		git_oid_tostr(hex, sizeof(hex), &r->result_tree);
		json_object_set_new(o, "result_tree", json_string(hex));
	}
	return o;
}

struct werr *
review_check(struct allowlist_report *r, git_repository *repo,
    const struct review_base *b, const char *text, size_t len)
{
	return allowlist_gate_patch(r, repo, &b->tree, text, len, &b->gate, 0);
}

/* "Name <email>" (or git's configured identity when who is NULL). */
struct werr *
review_person(git_signature **out, git_repository *repo, const char *who)
{
	const char *lt, *gt;
	char *name, *email;
	size_t n;
	int rc;

	if (who == NULL) {
		if (git_signature_default(out, repo) == 0 ||
		    git_signature_now(out, "warden", "warden@localhost") == 0)
			return NULL;
		return werr_git("cannot make a signature");
	}
	lt = strchr(who, '<');
	gt = lt ? strchr(lt, '>') : NULL;
	for (n = lt ? (size_t)(lt - who) : 0; n > 0 && who[n - 1] == ' '; n--)
		;
	if (lt == NULL || gt == NULL || gt[1] != '\0' || n == 0 ||
	    gt == lt + 1)
		return werr_usage("'%s' is not of the form \"Name <email>\"",
		    who);
	name = xstrndup(who, n);
	email = xstrndup(lt + 1, (size_t)(gt - lt - 1));
	rc = git_signature_now(out, name, email);
	free(name);
	free(email);
	return rc == 0 ? NULL : werr_git("invalid identity '%s'", who);
}

char *
review_person_string(const git_signature *sig)
{
	return xasprintf("%s <%s>", sig->name, sig->email);
}

static char *
submit_message(const struct review_submission *s, int64_t id)
{
	struct buf b = BUF_INIT;

	if (s->note != NULL && s->note[0] != '\0')
		buf_printf(&b, "%s\n", s->note);
	else
		buf_printf(&b, "warden: change from %s\n", s->source);
	buf_printf(&b, "\nWarden-Source: %s\nWarden-Review: %lld\n",
	    s->source, (long long)id);
	return buf_detach(&b);
}

struct werr *
review_create_commit(git_oid *out, git_repository *repo,
    const git_oid *tree_id, const git_oid *parent_id,
    const git_signature *author, const git_signature *committer,
    const char *msg)
{
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	struct werr *err = NULL;

	if (git_tree_lookup(&tree, repo, tree_id) < 0 ||
	    git_commit_lookup(&parent, repo, parent_id) < 0 ||
	    git_commit_create(out, repo, NULL, author, committer, NULL, msg,
	    tree, 1, (const git_commit **)&parent) < 0)
		err = werr_git("cannot create the commit");
	git_commit_free(parent);
	git_tree_free(tree);
	return err;
}

static struct werr *
journal_refused(struct store *store, const struct review_submission *s,
    json_t *gate)
{
	json_t *body = json_pack("{s:s, s:s?, s:s?, s:O}", "source", s->source,
	    "author", s->author, "note", s->note, "gate", gate);
	struct werr *err;

	if ((err = store_begin(store)) != NULL)
		goto out;
	if ((err = journal_append(store, "review.refused", "patch", body,
	    NULL)) != NULL) {
		store_rollback(store);
		goto out;
	}
	err = store_commit(store);
out:
	json_decref(body);
	return err;
}

/* The "expects" evidence of a submission that names one (review.h). */
static struct werr *
expects_evidence(struct store *store, int64_t id, const char *now,
    const struct review_submission *s)
{
	json_t *b;
	char *text;
	struct werr *err;
	int found;

	if (s->expects == NULL)
		return NULL;
	b = json_pack("{s:s, s:s}", "kind", s->expects, "by", s->source);
	text = json_dumps(b, JSON_COMPACT);
	err = store_review_add_evidence(store, id, now, "expects", text,
	    &found);
	free(text);
	json_decref(b);
	return err;
}

struct werr *
review_submit(int64_t *id_out, struct allowlist_report *r, struct store *store,
    git_repository *repo, const struct review_base *b,
    const struct review_submission *s)
{
	git_signature *author = NULL, *committer = NULL;
	git_reference *ref = NULL;
	struct store_review_new row;
	json_t *gate = NULL, *body = NULL;
	char now[32], hex[GIT_OID_HEXSZ + 1], base_hex[GIT_OID_HEXSZ + 1];
	char *msg = NULL, *refname = NULL, *gate_text = NULL, *who = NULL;
	struct werr *err;
	int in_tx = 0;
	git_oid cid;
	int64_t id;

	*id_out = 0;
	if ((err = text_check("--author", s->author)) != NULL ||
	    (err = text_check("--note", s->note)) != NULL)
		return err;
	if (memchr(s->patch, '\0', s->len) != NULL || !text_is_utf8(s->patch))
		return werr_new(WEXIT_INPUT, "the patch is not valid UTF-8 "
		    "text; only text patches can be queued");
	if ((err = review_person(&author, repo, s->author)) != NULL ||
	    (err = review_person(&committer, repo, NULL)) != NULL)
		goto out;
	if ((err = allowlist_gate_patch(r, repo, &b->tree, s->patch, s->len,
	    &b->gate, ALLOWLIST_WRITE)) != NULL)
		goto out;
	gate = review_report_json(r);
	if (r->nv > 0 || !r->applied) {
		err = journal_refused(store, s, gate);
		goto out;
	}
	utc_now_iso(now, sizeof(now));
	git_oid_tostr(base_hex, sizeof(base_hex), &b->commit);
	gate_text = json_dumps(gate, JSON_COMPACT);
	who = review_person_string(author);
	if ((err = store_begin(store)) != NULL)
		goto out;
	in_tx = 1;
	row.source = s->source;
	row.author = who;
	row.note = s->note ? s->note : "";
	row.created = now;
	row.base_commit = base_hex;
	row.patch = s->patch;
	row.len = s->len;
	row.gate = gate_text;
	if ((err = store_review_insert(store, &row, &id)) != NULL)
		goto out;
	msg = submit_message(s, id);
	if ((err = review_create_commit(&cid, repo, &r->result_tree, &b->commit,
	    author, committer, msg)) != NULL)
		goto out;
	git_oid_tostr(hex, sizeof(hex), &cid);
	refname = xasprintf("refs/warden/review/%lld", (long long)id);
	/*
	 * Forced: id is fresh under the writer lock, so a ref already there
	 * was left by a submit killed before its transaction committed (a
	 * row of that id was never recorded); it is replaced.
	 */
	if (git_reference_create(&ref, repo, refname, &cid, 1,
	    "warden: review queued") < 0) {
		err = werr_git("cannot create '%s'", refname);
		goto out;
	}
	fault_point("review.ref");
	if ((err = store_review_set_commit(store, id, hex)) != NULL ||
	    (err = expects_evidence(store, id, now, s)) != NULL)
		goto out;
	body = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:I, s:s?}", "id",
	    (json_int_t)id, "source", s->source, "author", who, "commit", hex,
	    "base", base_hex, "ref", refname, "files", (json_int_t)r->nfiles,
	    "expects", s->expects);
	if ((err = journal_append(store, "review.submitted", refname + 12,
	    body, NULL)) != NULL)
		goto out;
	if ((err = store_commit(store)) == NULL) {
		in_tx = 0;
		*id_out = id;
	}
out:
	if (in_tx) {
		store_rollback(store);
		if (ref != NULL)
			git_reference_delete(ref);
	}
	git_reference_free(ref);
	git_signature_free(author);
	git_signature_free(committer);
	json_decref(gate);
	json_decref(body);
	free(gate_text);
	free(msg);
	free(refname);
	free(who);
	return err;
}

struct werr *
review_list(json_t **out, struct store *store, const char *status)
{
	return store_review_list(store, status, out);
}

struct werr *
review_show(json_t **out, struct store *store, int64_t id)
{
	json_t *rows = NULL, *ev = NULL, *o, *gate;
	struct werr *err;

	*out = NULL;
	if ((err = store_review_row(store, id, &rows)) != NULL)
		return err;
	if (json_array_size(rows) == 0) {
		json_decref(rows);
		return werr_new(WEXIT_INPUT, "no review %lld", (long long)id);
	}
	o = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	gate = json_loads(json_string_value(json_object_get(o, "gate")), 0,
	    NULL);
	json_object_set_new(o, "gate", gate ? gate : json_null());
	if ((err = store_review_evidence(store, id, &ev)) != NULL) {
		json_decref(o);
		return err;
	}
	json_object_set_new(o, "evidence", ev);
	*out = o;
	return NULL;
}

struct werr *
review_add_evidence(struct store *store, int64_t id, const char *kind,
    json_t *body)
{
	char now[32], *text = json_dumps(body, JSON_COMPACT);
	json_t *jb = json_pack("{s:I, s:s}", "id", (json_int_t)id, "kind", kind);
	char *subject = xasprintf("review/%lld", (long long)id);
	struct werr *err;
	int found;

	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		goto out;
	if ((err = store_review_add_evidence(store, id, now, kind, text,
	    &found)) != NULL)
		goto fail;
	if (!found) {
		err = werr_new(WEXIT_INPUT, "no review %lld", (long long)id);
		goto fail;
	}
	if ((err = journal_append(store, "review.evidence", subject, jb,
	    NULL)) != NULL)
		goto fail;
	err = store_commit(store);
	goto out;
fail:
	store_rollback(store);
out:
	json_decref(jb);
	free(subject);
	free(text);
	return err;
}

/* Status, patch and commit of a review; pending only. */
struct werr *
review_load_pending(struct store *store, int64_t id, char **patch,
    char **commit)
{
	struct store_review row;
	struct werr *err;
	int found;

	*patch = *commit = NULL;
	if ((err = store_review_get(store, id, &found, &row)) != NULL)
		return err;
	if (!found)
		return werr_new(WEXIT_INPUT, "no review %lld", (long long)id);
	if (strcmp(row.status, "pending") != 0) {
		err = werr_new(WEXIT_INPUT, "review %lld is %s, not pending",
		    (long long)id, row.status);
		store_review_free(&row);
		return err;
	}
	*patch = row.patch;
	*commit = row.commit_id;
	free(row.status);
	free(row.source);
	return NULL;
}

struct werr *
review_reject(struct store *store, int64_t id, const char *reason,
    const char *by)
{
	struct store_review_decision d;
	char now[32], *patch = NULL, *commit = NULL;
	char *subject = xasprintf("review/%lld", (long long)id);
	json_t *body = json_pack("{s:I, s:s, s:s?}", "id", (json_int_t)id,
	    "reason", reason, "by", by);
	struct werr *err;

	if ((err = text_check("--reason", reason)) != NULL ||
	    (err = text_check("--as", by)) != NULL)
		goto out;
	utc_now_iso(now, sizeof(now));
	if ((err = store_begin(store)) != NULL)
		goto out;
	memset(&d, 0, sizeof(d));
	d.status = "rejected";
	d.decided = now;
	d.by = by;
	d.comment = reason;
	if ((err = review_load_pending(store, id, &patch, &commit)) != NULL ||
	    (err = store_review_decide(store, id, &d)) != NULL ||
	    (err = journal_append(store, "review.rejected", subject, body,
	    NULL)) != NULL)
		goto fail;
	err = store_commit(store);
	goto out;
fail:
	store_rollback(store);
out:
	json_decref(body);
	free(subject);
	free(patch);
	free(commit);
	return err;
}

/* The official branch must not be what the maintainer has checked out:
 * moving it would leave their working tree and index behind. */
struct werr *
review_read_input(struct buf *out, const char *path)
{
	struct werr *err;

	if (strcmp(path, "-") != 0)
		return schema_read_input(out, path, FILE_MAX_DATA);
	if ((err = file_read_fd_max(out, STDIN_FILENO, "standard input",
	    FILE_MAX_DATA)) != NULL)
		err->exit = WEXIT_INPUT;
	return err;
}

void
review_format_files(struct buf *out, const struct allowlist_report *r)
{
	const struct allowlist_file *f;
	size_t i;

	for (i = 0; i < r->nfiles; i++) {
		f = &r->files[i];
		buf_printf(out, "%c ", f->status);
		if (f->old_path != NULL && f->new_path != NULL &&
		    strcmp(f->old_path, f->new_path) != 0)
			buf_printf(out, "%s -> ", quote_str(f->old_path));
		buf_printf(out, "%s +%zu -%zu\n", quote_str(f->new_path != NULL ?
		    f->new_path : f->old_path), f->added, f->deleted);
	}
}

void
review_format_violations(struct buf *out, const struct allowlist_report *r)
{
	size_t i;

	for (i = 0; i < r->nv; i++) {
		const struct allowlist_violation *v = &r->v[i];

		buf_printf(out, "%s", allowlist_code_name(v->code));
		if (v->path[0] != '\0')
			buf_printf(out, " %s", quote_str(v->path));
		buf_printf(out, ": %s", quote_msg(v->reason));
		if (v->commit != NULL)
			buf_printf(out, " (commit %.12s)", v->commit);
		buf_addch(out, '\n');
	}
}
