/*
 * journal-adopt.c - record a move of the official branch warden did not
 * make: a maintainer's own commit (a policy change, a README), which
 * journal verify otherwise names as recorded by no entry. The entry
 * (official.adopted) names the commit; it is the maintainer's word,
 * written with the store, as an approval is.
 *
 * It never moves a branch or writes to the repository; it refuses a
 * commit that is not on the official branch's first-parent history, and
 * one an entry already records (a second record would say nothing new).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "journal.h"
#include "store.h"
#include "util.h"

/* Is id on the first-parent history of branch's tip? */
static struct werr *
on_first_parent(int *found, git_repository *repo, const char *branch,
    const git_oid *id)
{
	git_revwalk *walk = NULL;
	char *refname = xasprintf("refs/heads/%s", branch);
	struct werr *err = NULL;
	git_oid oid;

	*found = 0;
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_simplify_first_parent(walk) < 0 ||
	    git_revwalk_push_ref(walk, refname) < 0) {
		err = werr_new(WEXIT_ENV, "no official branch '%s' to adopt "
		    "commits of", branch);
		git_error_clear();
		goto out;
	}
	while (!*found && git_revwalk_next(&oid, walk) == 0)
		*found = git_oid_equal(&oid, id);
out:
	git_revwalk_free(walk);
	free(refname);
	return err;
}

struct recorded {
	const char *commit;
	int64_t seq;
	char kind[64];
};

static struct werr *
find_record(void *arg, const struct journal_entry *e)
{
	struct recorded *r = arg;

	if (r->seq == 0 && journal_entry_records(e, r->commit)) {
		r->seq = e->seq;
		snprintf(r->kind, sizeof(r->kind), "%s", e->kind);
	}
	return NULL;
}

struct werr *
journal_adopt(int64_t *seq, char *commit_out, struct store *store,
    git_repository *repo, const char *branch, const char *rev)
{
	git_object *obj = NULL;
	git_commit *c = NULL;
	struct werr *err = NULL;
	json_t *body = NULL;
	struct recorded rec = { NULL, 0, "" };
	const char *summary;
	int found;
	size_t n;

	if (git_revparse_single(&obj, repo, rev) < 0 ||
	    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0) {
		git_error_clear();
		err = werr_new(WEXIT_INPUT, "'%s' names no commit", rev);
		goto out;
	}
	git_oid_tostr(commit_out, 41, git_commit_id(c));
	if ((err = on_first_parent(&found, repo, branch,
	    git_commit_id(c))) != NULL)
		goto out;
	if (!found) {
		err = werr_new(WEXIT_INPUT, "commit %.12s is not on the "
		    "first-parent history of '%s': only a move of official "
		    "can be adopted", commit_out, branch);
		goto out;
	}
	rec.commit = commit_out;
	if ((err = journal_each(store, NULL, find_record, &rec)) != NULL)
		goto out;
	if (rec.seq != 0) {
		err = werr_new(WEXIT_INPUT, "commit %.12s is already recorded "
		    "by journal seq %lld (%s): nothing to adopt", commit_out,
		    (long long)rec.seq, rec.kind);
		goto out;
	}
	summary = git_commit_summary(c) ? git_commit_summary(c) : "";
	n = strcspn(summary, "\n");
	body = json_pack("{s:s, s:s, s:s%}", "commit", commit_out, "branch",
	    branch, "subject", summary, n > 200 ? (size_t)200 : n);
	if ((err = journal_check_entry("official.adopted", commit_out,
	    body)) != NULL || (err = store_begin(store)) != NULL)
		goto out;
	if ((err = journal_append(store, "official.adopted", commit_out, body,
	    seq)) == NULL)
		err = store_commit(store);
	else
		store_rollback(store);
out:
	json_decref(body);
	git_commit_free(c);
	git_object_free(obj);
	return err;
}
