/*
 * journal-verify.c - check the journal in one pass over its rows: the
 * hash chain and recorded head, and the evidence outside the database
 * (anchors in official history, the committed export, the entries that
 * record official moves). See journal.h.
 *
 * Linear: each row is hashed once and rendered once, each anchor and
 * export line looked at once. It must never write anything and never skip
 * a line it cannot read: what it cannot read is a break.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "official.h"
#include "sha256.h"
#include "store.h"
#include "util.h"

#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"

struct verify_state {
	const struct journal_evidence *ev;
	struct journal_verdict *v;
	int64_t expect_seq;
	char prev[SHA256_HEX_LEN + 1];
	size_t anchor;		/* next anchor to check */
	const char *line;	/* next export line, or NULL at its end */
	int64_t lineno;
	json_t *unrecorded;	/* records not yet seen */
	json_t *recorded;	/* commit hex -> true: moves entries record */
};

static void
mark(struct verify_state *vs, int64_t seq, char *why)
{
	vs->v->broken_seq = seq;
	vs->v->why = why;
}

/* Mark the break and stop journal_each(). */
static struct werr *
broken(struct verify_state *vs, int64_t seq, char *why)
{
	mark(vs, seq, why);
	return werr_new(WEXIT_PROBLEM, "stop");
}

static struct werr *
check_chain(struct verify_state *vs, const struct journal_entry *e)
{
	char hash[SHA256_HEX_LEN + 1];
	char *canon;

	if (e->seq != vs->expect_seq)
		return broken(vs, vs->expect_seq, xasprintf("seq %lld is "
		    "missing (next entry is seq %lld)",
		    (long long)vs->expect_seq, (long long)e->seq));
	if (strcmp(e->prev_hash, vs->prev) != 0)
		return broken(vs, e->seq, xasprintf("seq %lld does not follow "
		    "seq %lld: its prev_hash is not that entry's hash",
		    (long long)e->seq, (long long)e->seq - 1));
	if ((canon = journal_canonical(e)) == NULL)
		return broken(vs, e->seq, xasprintf("seq %lld was altered: it "
		    "holds text that is not valid UTF-8", (long long)e->seq));
	journal_hash(e->prev_hash, canon, hash);
	free(canon);
	if (strcmp(hash, e->hash) != 0)
		return broken(vs, e->seq, xasprintf("seq %lld was altered: its "
		    "contents do not hash to its recorded hash",
		    (long long)e->seq));
	return NULL;
}

static struct werr *
check_anchors(struct verify_state *vs, const struct journal_entry *e)
{
	const struct journal_evidence *ev = vs->ev;

	while (vs->anchor < ev->nanchors &&
	    ev->anchors[vs->anchor].seq <= e->seq) {
		const struct journal_anchor *a = &ev->anchors[vs->anchor++];

		if (a->seq < e->seq)	/* seq 0 or below: nothing to match */
			return broken(vs, e->seq, xasprintf("official commit "
			    "%.12s anchors seq %lld, which no journal has",
			    a->commit, (long long)a->seq));
		if (strcmp(a->hash, e->hash) != 0)
			return broken(vs, e->seq, xasprintf("seq %lld is not the "
			    "entry official commit %.12s anchored: the journal "
			    "was rewritten", (long long)e->seq, a->commit));
		vs->v->anchors++;
	}
	return NULL;
}

/* The next line of the committed export, NUL-free up to its newline;
 * *len excludes the newline, *torn is set when there is none. */
static const char *
next_line(struct verify_state *vs, size_t *len, int *torn)
{
	const char *end, *l = vs->line, *nl;

	if (l == NULL || vs->ev->export_text == NULL)
		return NULL;
	end = vs->ev->export_text + vs->ev->export_len;
	if (l >= end)
		return NULL;
	nl = memchr(l, '\n', (size_t)(end - l));
	*torn = nl == NULL;
	*len = (size_t)((nl != NULL ? nl : end) - l);
	vs->line = nl != NULL ? nl + 1 : end;
	vs->lineno++;
	return l;
}

/* Is the line a JSON object with an integer seq? (Only asked about a
 * line that differs, to say how.) */
static int
is_entry_line(const char *l, size_t len)
{
	json_t *o = json_loadb(l, len, 0, NULL);
	json_int_t seq;
	int ok = o != NULL && json_unpack(o, "{s:I}", "seq", &seq) == 0;

	json_decref(o);
	return ok;
}

static struct werr *
check_export(struct verify_state *vs, const struct journal_entry *e)
{
	const char *l;
	char *mine;
	size_t len;
	int torn = 0, same;

	if ((l = next_line(vs, &len, &torn)) == NULL)
		return NULL;
	if (torn)
		return broken(vs, e->seq, xasprintf("%s line %lld is torn (no "
		    "newline at the end of the file)", JOURNAL_EXPORT_PATH,
		    (long long)vs->lineno));
	mine = journal_entry_line(e);
	same = mine != NULL && strlen(mine) == len && memcmp(mine, l, len) == 0;
	free(mine);
	if (same) {
		vs->v->exported++;
		return NULL;
	}
	if (!is_entry_line(l, len))
		return broken(vs, e->seq, xasprintf("%s line %lld is not a "
		    "journal entry line", JOURNAL_EXPORT_PATH,
		    (long long)vs->lineno));
	return broken(vs, e->seq, xasprintf("%s line %lld is not seq %lld as "
	    "the database holds it (the line or the row was edited, or lines "
	    "were removed or reordered)", JOURNAL_EXPORT_PATH,
	    (long long)vs->lineno, (long long)e->seq));
}

/* Does an entry of this kind record a move of official? The journal
 * entry of each kind of move (official_kinds[]), `warden init`'s, and a
 * maintainer's adoption of a commit (journal adopt). */
static int
records_moves(const char *kind)
{
	size_t i;

	if (strcmp(kind, "repo.init") == 0 ||
	    strcmp(kind, "official.adopted") == 0)
		return 1;
	for (i = 0; official_kinds[i].name != NULL; i++)
		if (official_kinds[i].journal_kind != NULL &&
		    strcmp(official_kinds[i].journal_kind, kind) == 0)
			return 1;
	return 0;
}

int
journal_entry_records(const struct journal_entry *e, const char *commit)
{
	const json_t *v;
	size_t i;

	if (!records_moves(e->kind) || !json_is_object(e->body))
		return 0;
	if ((v = json_object_get(e->body, "commit")) != NULL &&
	    json_is_string(v) && strcmp(json_string_value(v), commit) == 0)
		return 1;
	json_array_foreach(json_object_get(e->body, "adopted"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v),
		    commit) == 0)
			return 1;
	return 0;
}

/* The commits e records as moves of official: its "commit", and the
 * maintainer's commits a publish took up ("adopted"). */
static void
note_moves(struct verify_state *vs, const struct journal_entry *e)
{
	const json_t *v;
	const char *c;
	size_t i;

	if (!records_moves(e->kind))
		return;
	if ((c = json_string_value(json_object_get(e->body, "commit"))) != NULL)
		json_object_set_new(vs->recorded, c, json_true());
	json_array_foreach(json_object_get(e->body, "adopted"), i, v)
		if (json_is_string(v))
			json_object_set_new(vs->recorded,
			    json_string_value(v), json_true());
}

static void
check_record(struct verify_state *vs, const struct journal_entry *e)
{
	const char *c;

	if (vs->unrecorded == NULL || !json_is_object(e->body))
		return;
	note_moves(vs, e);
	c = json_string_value(json_object_get(e->body, "commit"));
	if (c != NULL && json_object_get(vs->unrecorded, c) != NULL) {
		json_object_del(vs->unrecorded, c);
		vs->v->records++;
	}
}

static struct werr *
verify_one(void *arg, const struct journal_entry *e)
{
	struct verify_state *vs = arg;
	struct werr *err;

	vs->v->entries++;
	if ((err = check_chain(vs, e)) != NULL)
		return err;
	if (vs->ev != NULL) {
		if ((err = check_anchors(vs, e)) != NULL ||
		    (err = check_export(vs, e)) != NULL)
			return err;
		check_record(vs, e);
	}
	memcpy(vs->prev, e->hash, sizeof(vs->prev));
	vs->expect_seq++;
	return NULL;
}

/* What the rows did not settle: the recorded head, anchors and export
 * lines past the last row, and moves with no entry. */
static void
check_after(struct verify_state *vs, struct store *store,
    struct werr **err)
{
	const struct journal_evidence *ev = vs->ev;
	int64_t last = vs->expect_seq - 1, head;
	char hash[SHA256_HEX_LEN + 1];
	const char *key, *l;
	json_t *val;
	size_t len, i;
	int torn;

	if ((*err = journal_recorded_head(store, &head, hash)) != NULL)
		return;
	if (head < 0 && last > 0) {
		mark(vs, last, xasprintf("the journal's recorded head is gone "
		    "(deleted from table meta)"));
		return;
	}
	if (head >= 0 && head != last) {
		mark(vs, last + 1, xasprintf("the journal ends at seq %lld but "
		    "its recorded head is seq %lld: entries were deleted from "
		    "the end", (long long)last, (long long)head));
		return;
	}
	if (head >= 0 && strcmp(hash, vs->prev) != 0) {
		mark(vs, last, xasprintf("seq %lld does not match the "
		    "recorded head hash", (long long)last));
		return;
	}
	if (ev == NULL)
		return;
	if (vs->anchor < ev->nanchors) {
		const struct journal_anchor *a = &ev->anchors[vs->anchor];

		mark(vs, last + 1, xasprintf("the journal ends at seq %lld but "
		    "official commit %.12s anchors seq %lld: entries were "
		    "deleted from the end", (long long)last, a->commit,
		    (long long)a->seq));
		return;
	}
	if ((l = next_line(vs, &len, &torn)) != NULL) {
		if (!is_entry_line(l, len))
			mark(vs, last + 1, xasprintf("%s line %lld is not a "
			    "journal entry line", JOURNAL_EXPORT_PATH,
			    (long long)vs->lineno));
		else
			mark(vs, last + 1, xasprintf("%s line %lld is an entry "
			    "the database does not have (seq %lld and later "
			    "were deleted)", JOURNAL_EXPORT_PATH,
			    (long long)vs->lineno, (long long)last + 1));
		return;
	}
	if (ev->export_through > vs->v->exported) {
		mark(vs, vs->v->exported + 1, xasprintf("official commit %.12s "
		    "exported the journal through seq %lld but %s %s: the "
		    "export was truncated or removed", ev->export_commit,
		    (long long)ev->export_through, JOURNAL_EXPORT_PATH,
		    ev->export_text == NULL ? "is gone" : "ends before it"));
		return;
	}
	json_object_foreach(vs->unrecorded, key, val) {
		int64_t at = json_integer_value(json_object_get(ev->record_seq,
		    key));

		mark(vs, at + 1, xasprintf("official commit %.12s (%s) has no "
		    "journal entry recording it: the entry was deleted", key,
		    json_string_value(val)));
		return;
	}
	for (i = 0; i < ev->nmoves; i++) {
		const struct journal_move *m = &ev->moves[i];

		if (m->is_export || json_object_get(vs->recorded,
		    m->commit) != NULL)
			continue;
		mark(vs, m->after_seq + 1, xasprintf("official commit %s "
		    "(\"%s\") is recorded by no journal entry: official was "
		    "moved outside warden", m->commit, m->subject));
		memcpy(vs->v->unrecorded, m->commit, 41);
		return;
	}
}

struct werr *
journal_check(struct journal_verdict *v, struct store *store,
    const struct journal_evidence *ev)
{
	struct verify_state vs;
	struct werr *err;

	memset(v, 0, sizeof(*v));
	memset(&vs, 0, sizeof(vs));
	vs.ev = ev;
	vs.v = v;
	vs.expect_seq = 1;
	memcpy(vs.prev, ZERO_HASH, sizeof(vs.prev));
	if (ev != NULL) {
		vs.line = ev->export_text;
		vs.unrecorded = ev->records != NULL ?
		    json_deep_copy(ev->records) : NULL;
		vs.recorded = json_object();
	}
	err = journal_each(store, NULL, verify_one, &vs);
	if (err != NULL && v->broken_seq != 0) {
		werr_free(err);
		err = NULL;
	} else if (err == NULL)
		check_after(&vs, store, &err);
	json_decref(vs.unrecorded);
	json_decref(vs.recorded);
	return err;
}

struct werr *
journal_verify(struct store *store, int64_t *broken_seq, char **why,
    int64_t *count)
{
	struct journal_verdict v;
	struct werr *err;

	err = journal_check(&v, store, NULL);
	*broken_seq = v.broken_seq;
	*why = v.why;
	*count = v.entries;
	return err;
}

void
journal_verdict_free(struct journal_verdict *v)
{
	free(v->why);
	memset(v, 0, sizeof(*v));
}
