/*
 * journal-anchor.c - read what the official branch says about the
 * journal: the Warden-Journal anchors and Warden-Operation records of
 * every commit in its history, its first-parent history from the first
 * anchor on (every move the journal must record), and the committed
 * export in its tip's tree. See journal.h (struct journal_evidence) and official.h.
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

/* Does c change nothing outside journals/ against its one parent? */
static int
only_journals(const git_commit *c)
{
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	const git_tree_entry *e, *f;
	const char *name;
	size_t i;
	int ok = 0;

	if (git_commit_parentcount(c) != 1 ||
	    git_commit_parent(&parent, c, 0) < 0 ||
	    git_commit_tree(&a, parent) < 0 || git_commit_tree(&b, c) < 0) {
		git_error_clear();
		goto out;
	}
	ok = 1;
	for (i = 0; ok && i < git_tree_entrycount(a); i++) {
		e = git_tree_entry_byindex(a, i);
		if (strcmp((name = git_tree_entry_name(e)), "journals") == 0)
			continue;
		f = git_tree_entry_byname(b, name);
		ok = f != NULL && git_oid_equal(git_tree_entry_id(e),
		    git_tree_entry_id(f)) && git_tree_entry_filemode(e) ==
		    git_tree_entry_filemode(f);
	}
	for (i = 0; ok && i < git_tree_entrycount(b); i++) {
		name = git_tree_entry_name(git_tree_entry_byindex(b, i));
		ok = strcmp(name, "journals") == 0 ||
		    git_tree_entry_byname(a, name) != NULL;
	}
out:
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return ok;
}

/* c's last well-formed anchor (*seq 0: none), whether its operation is
 * journal.export, and whether it has a malformed anchor. */
static void
commit_marks(const git_commit *c, int64_t *seq, int *is_export,
    int *malformed)
{
	git_message_trailer_array tr = { 0 };
	struct journal_anchor a;
	size_t i;

	*seq = 0;
	*is_export = 0;
	*malformed = 0;
	if (git_message_trailers(&tr, git_commit_message(c)) < 0) {
		git_error_clear();
		return;
	}
	for (i = 0; i < tr.count; i++) {
		if (strcmp(tr.trailers[i].key, OFFICIAL_TRAILER_OPERATION) == 0)
			*is_export = strncmp(tr.trailers[i].value,
			    "journal.export ", 15) == 0;
		else if (strcmp(tr.trailers[i].key,
		    OFFICIAL_TRAILER_JOURNAL) != 0)
			continue;
		else if (parse_anchor(&a, tr.trailers[i].value))
			*seq = a.seq;
		else
			*malformed = 1;
	}
	git_message_trailer_array_free(&tr);
}

/* The first-parent history from the first anchored commit: ev->moves. */
static struct werr *
read_moves(struct journal_evidence *ev, git_repository *repo,
    const git_oid *tip)
{
	git_revwalk *walk = NULL;
	struct werr *err = NULL;
	struct journal_move *m;
	int64_t seq, last = 0;
	size_t cap = 0, len;
	int is_export, malformed;
	git_oid oid;

	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL |
	    GIT_SORT_REVERSE) < 0 ||
	    git_revwalk_simplify_first_parent(walk) < 0 ||
	    git_revwalk_push(walk, tip) < 0) {
		git_revwalk_free(walk);
		return werr_git("cannot walk the official branch");
	}
	while (err == NULL && git_revwalk_next(&oid, walk) == 0) {
		git_commit *c = NULL;

		if (git_commit_lookup(&c, repo, &oid) < 0) {
			err = werr_git("cannot read official commit %.12s",
			    git_oid_tostr_s(&oid));
			break;
		}
		commit_marks(c, &seq, &is_export, &malformed);
		if (seq > 0)
			last = seq;
		/* From the first anchor on; a malformed anchor is a break of
		 * its own (journal_evidence_load's *bad). */
		if (last > 0 && !malformed) {
			if (ev->nmoves == cap) {
				cap = cap ? cap * 2 : 16;
				ev->moves = xrealloc(ev->moves,
				    cap * sizeof(*ev->moves));
			}
			m = &ev->moves[ev->nmoves++];
			git_oid_tostr(m->commit, sizeof(m->commit), &oid);
			len = strcspn(git_commit_summary(c) ?
			    git_commit_summary(c) : "", "\n");
			m->subject = xstrndup(git_commit_summary(c) ?
			    git_commit_summary(c) : "", len > 72 ? 72 : len);
			m->after_seq = last;
			m->is_export = is_export && seq > 0 && only_journals(c);
		}
		git_commit_free(c);
	}
	git_revwalk_free(walk);
	return err;
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
	if (git_tree_entry_bypath(&te, tree, JOURNAL_EXPORT_PATH) < 0) {
		git_error_clear();	/* not an error: never exported, or
					 * removed (verify judges) */
		goto out;
	}
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
	char *refname = xasprintf("refs/heads/%s", branch);
	struct werr *err = NULL;
	size_t cap = 0;
	git_oid oid, tip;

	memset(ev, 0, sizeof(*ev));
	*bad = NULL;
	ev->records = json_object();
	ev->record_seq = json_object();
	if (git_reference_name_to_id(&tip, repo, refname) < 0) {
		git_error_clear();
		goto out;	/* no official branch: nothing anchored yet */
	}
	ev->have_branch = 1;
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_push(walk, &tip) < 0) {
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
	if (ev->nanchors > 1)
		qsort(ev->anchors, ev->nanchors, sizeof(*ev->anchors),
		    anchor_cmp);
	if ((err = read_moves(ev, repo, &tip)) == NULL)
		err = read_export(ev, repo, &tip);
out:
	git_revwalk_free(walk);
	free(refname);
	if (err != NULL)
		journal_evidence_free(ev);
	return err;
}

void
journal_evidence_free(struct journal_evidence *ev)
{
	size_t i;

	for (i = 0; i < ev->nmoves; i++)
		free(ev->moves[i].subject);
	free(ev->moves);
	free(ev->anchors);
	json_decref(ev->records);
	json_decref(ev->record_seq);
	free(ev->export_text);
	memset(ev, 0, sizeof(*ev));
}
