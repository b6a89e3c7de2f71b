/*
 * journal-anchor.c - read what the official branch says about the
 * journal: the Warden-Journal anchors and Warden-Operation records of
 * every commit in its history, and the committed export in its tip's
 * tree. See journal.h (struct journal_evidence) and official.h.
 *
 * It only reads the repository. A trailer is evidence to check the
 * journal against, never an authorisation.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "journal.h"
#include "official.h"
#include "util.h"

static int
is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

/* "SEQ HASH" into a; 0 when malformed. */
static int
parse_anchor(struct journal_anchor *a, const char *value)
{
	char *end;
	long long seq;

	if (value[0] < '0' || value[0] > '9')
		return 0;
	seq = strtoll(value, &end, 10);
	if (*end != ' ' || seq < 1 || !is_hex64(end + 1))
		return 0;
	a->seq = seq;
	memcpy(a->hash, end + 1, 65);
	return 1;
}

static int
anchor_cmp(const void *x, const void *y)
{
	const struct journal_anchor *a = x, *b = y;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return strcmp(a->commit, b->commit);
}

/* One commit's trailers into ev; *bad on a malformed anchor. */
static void
read_commit(struct journal_evidence *ev, char **bad, size_t *cap,
    const git_commit *c)
{
	git_message_trailer_array tr = { 0 };
	struct journal_anchor a;
	const char *op = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	int anchored = 0;
	size_t i;

	git_oid_tostr(hex, sizeof(hex), git_commit_id(c));
	if (git_message_trailers(&tr, git_commit_message(c)) < 0)
		return;
	memset(&a, 0, sizeof(a));
	for (i = 0; i < tr.count; i++) {
		if (strcmp(tr.trailers[i].key, OFFICIAL_TRAILER_OPERATION) == 0)
			op = tr.trailers[i].value;
		if (strcmp(tr.trailers[i].key, OFFICIAL_TRAILER_JOURNAL) != 0)
			continue;
		if (!parse_anchor(&a, tr.trailers[i].value)) {
			if (*bad == NULL)
				*bad = xasprintf("official commit %.12s has a "
				    "malformed %s trailer '%s'", hex,
				    OFFICIAL_TRAILER_JOURNAL, tr.trailers[i].value);
			continue;
		}
		memcpy(a.commit, hex, sizeof(hex));
		if (ev->nanchors == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			ev->anchors = xrealloc(ev->anchors,
			    *cap * sizeof(*ev->anchors));
		}
		ev->anchors[ev->nanchors++] = a;
		anchored = 1;
	}
	if (op != NULL) {
		const struct official_kind *k;
		size_t n = strcspn(op, " ");
		char *kind = xstrndup(op, n);

		k = official_kind_find(kind);
		if (strcmp(kind, "journal.export") == 0) {
			if (anchored && a.seq > ev->export_through) {
				ev->export_through = a.seq;
				memcpy(ev->export_commit, hex, sizeof(hex));
			}
		} else if (k == NULL || k->journal_kind != NULL) {
			/* A kind this warden does not know is held to the
			 * stricter rule: it must be recorded. */
			json_object_set_new(ev->records, hex, json_string(op));
			json_object_set_new(ev->record_seq, hex,
			    json_integer(anchored ? a.seq : 0));
		}
		free(kind);
	}
	git_message_trailer_array_free(&tr);
}

static struct werr *
read_export(struct journal_evidence *ev, git_repository *repo,
    const git_oid *tip)
{
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	struct werr *err = NULL;

	if (git_commit_lookup(&c, repo, tip) < 0 ||
	    git_commit_tree(&tree, c) < 0) {
		err = werr_git("cannot read the official tip's tree");
		goto out;
	}
	if (git_tree_entry_bypath(&te, tree, JOURNAL_EXPORT_PATH) < 0)
		goto out;	/* never exported, or removed: verify judges */
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0) {
		ev->export_text = xstrdup("");	/* not a file: no lines */
		goto out;
	}
	ev->export_len = (size_t)git_blob_rawsize(blob);
	ev->export_text = xmalloc(ev->export_len + 1);
	memcpy(ev->export_text, git_blob_rawcontent(blob), ev->export_len);
	ev->export_text[ev->export_len] = '\0';
out:
	git_blob_free(blob);
	git_tree_entry_free(te);
	git_tree_free(tree);
	git_commit_free(c);
	return err;
}

struct werr *
journal_evidence_load(struct journal_evidence *ev, char **bad,
    git_repository *repo, const char *branch)
{
	git_revwalk *walk = NULL;
	git_reference *named = NULL, *ref = NULL;
	char *refname = xasprintf("refs/heads/%s", branch);
	struct werr *err = NULL;
	size_t cap = 0;
	git_oid oid;

	memset(ev, 0, sizeof(*ev));
	*bad = NULL;
	ev->records = json_object();
	ev->record_seq = json_object();
	if (git_reference_lookup(&named, repo, refname) < 0 ||
	    git_reference_resolve(&ref, named) < 0) {
		git_reference_free(named);
		goto out;	/* no official branch: nothing anchored yet */
	}
	git_reference_free(named);
	ev->have_branch = 1;
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_push(walk, git_reference_target(ref)) < 0) {
		err = werr_git("cannot walk '%s'", branch);
		goto out;
	}
	while (git_revwalk_next(&oid, walk) == 0) {
		git_commit *c = NULL;

		if (git_commit_lookup(&c, repo, &oid) < 0) {
			err = werr_git("cannot read commit of '%s'", branch);
			goto out;
		}
		read_commit(ev, bad, &cap, c);
		git_commit_free(c);
	}
	if (ev->nanchors > 0)	/* qsort's base may not be NULL */
		qsort(ev->anchors, ev->nanchors, sizeof(*ev->anchors), anchor_cmp);
	err = read_export(ev, repo, git_reference_target(ref));
out:
	git_revwalk_free(walk);
	git_reference_free(ref);
	free(refname);
	if (err != NULL)
		journal_evidence_free(ev);
	return err;
}

void
journal_evidence_free(struct journal_evidence *ev)
{
	free(ev->anchors);
	json_decref(ev->records);
	json_decref(ev->record_seq);
	free(ev->export_text);
	memset(ev, 0, sizeof(*ev));
}
