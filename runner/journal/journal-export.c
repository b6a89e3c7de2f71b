/*
 * journal-export.c - commit the journal to the official branch: a
 * readable journals/CYCLE.md per cycle (regenerated whole) and
 * journals/journal.jsonl, the committed export, extended by the entries
 * not yet in it. The commit goes through official.c, so it carries its
 * own anchor and survives a crash like any move of the branch.
 *
 * It exports only a journal that verifies against the branch's anchors
 * and the export already committed: it must never paper over a rewrite by
 * committing a rewritten journal, never rewrite a committed line, and
 * never write the working tree or the index.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "journal.h"
#include "quote.h"
#include "official.h"
#include "store.h"
#include "util.h"

struct export_state {
	struct buf md;
	struct buf jsonl;
	int entries;
	struct werr *err;
	const char *cycle;	/* the cycle whose Markdown is written */
	int64_t first, last;	/* the seq of its first and last entry */
};

static struct werr *
collect_cycles(void *arg, const struct journal_entry *e)
{
	json_t *set = arg;

	json_object_set_new(set, e->cycle, json_true());
	return NULL;
}

#define MD_VALUE_MAX 80	/* bytes of one value shown */
#define MD_BODY_MAX 400		/* bytes of one entry's summary */

/* One value of a body, short: a string (cut at MD_VALUE_MAX), a number,
 * a list by its length, an object by its fields. */
static void
md_value(struct buf *b, const json_t *v)
{
	const char *s;
	size_t n;

	switch (json_typeof(v)) {
	case JSON_STRING:
		s = json_string_value(v);
		n = strlen(s);
		if (n > MD_VALUE_MAX) {
			n = MD_VALUE_MAX;
			while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
				n--;	/* not inside a UTF-8 sequence */
		}
		buf_add(b, s, n);
		if (n < strlen(s))
			buf_puts(b, "…");
		break;
	case JSON_INTEGER:
		buf_printf(b, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		buf_printf(b, "%g", json_real_value(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		buf_puts(b, json_is_true(v) ? "yes" : "no");
		break;
	case JSON_NULL:
		buf_puts(b, "none");
		break;
	case JSON_ARRAY:
		buf_printf(b, "%zu item%s", json_array_size(v),
		    json_array_size(v) == 1 ? "" : "s");
		break;
	case JSON_OBJECT:
		buf_printf(b, "%zu field%s", json_object_size(v),
		    json_object_size(v) == 1 ? "" : "s");
		break;
	}
}

char *
journal_body_short(const json_t *body)
{
	struct buf b = BUF_INIT;
	const char **keys;
	const char *key;
	json_t *v;
	size_t n = 0, i;

	if (!json_is_object(body)) {
		md_value(&b, body);
		return buf_detach(&b);
	}
	keys = xcalloc(json_object_size(body) + 1, sizeof(*keys));
	json_object_foreach((json_t *)body, key, v)
		keys[n++] = key;
	qsort(keys, n, sizeof(*keys), strcmp_ptr);
	for (i = 0; i < n && b.len < MD_BODY_MAX; i++) {
		buf_printf(&b, "%s%s ", i ? "; " : "", keys[i]);
		md_value(&b, json_object_get(body, keys[i]));
	}
	if (i < n)
		buf_printf(&b, "; … %zu more", n - i);
	free(keys);
	return buf_detach(&b);
}

static struct werr *
md_entry(void *arg, const struct journal_entry *e)
{
	struct export_state *x = arg;
	char *body = strcmp(e->kind, "cycle.journal") == 0 ?
	    xstrdup("(the cycle journal, rendered above)") : journal_body_short(e->body);

	buf_printf(&x->md, "| %lld | %s | `%s` | ", (long long)e->seq,
	    e->time, e->kind);
	quote_md(&x->md, e->subject[0] != '\0' ? e->subject : "-");
	buf_puts(&x->md, " | ");
	quote_md(&x->md, body != NULL ? body : "");
	buf_printf(&x->md, " | `%.12s` |\n", e->hash);
	free(body);
	return NULL;
}

/* The first and last seq of a cycle's entries. */
static struct werr *
span_entry(void *arg, const struct journal_entry *e)
{
	struct export_state *x = arg;

	if (x->first == 0)
		x->first = e->seq;
	x->last = e->seq;
	return NULL;
}

/* A cycle's entries, and those a maintainer made by hand while it ran or
 * waited between its rounds (an approval, an acknowledgement: recorded
 * under a manual-DATE cycle), which are part of its story. */
static struct werr *
md_cycle_entry(void *arg, const struct journal_entry *e)
{
	struct export_state *x = arg;

	if (strcmp(e->cycle, x->cycle) == 0 || (e->seq < x->last &&
	    strncmp(e->cycle, "manual-", 7) == 0 &&
	    strncmp(x->cycle, "manual-", 7) != 0))
		return md_entry(arg, e);
	return NULL;
}

static struct werr *
jsonl_entry(void *arg, const struct journal_entry *e)
{
	struct export_state *x = arg;
	char *s = journal_entry_line(e);

	if (s == NULL)
		return werr_new(WEXIT_PROBLEM, "journal seq %lld cannot be "
		    "exported: it holds text that is not UTF-8", (long long)e->seq);
	buf_puts(&x->jsonl, s);
	buf_addch(&x->jsonl, '\n');
	free(s);
	x->entries++;
	return NULL;
}

/* A blob of text, and the update that puts it at path. */
static struct werr *
add_file(git_tree_update *u, git_oid *ids, size_t *n, git_repository *repo,
    const char *path, const struct buf *text)
{
	git_error_clear();
	errno = 0;
	if (git_blob_create_from_buffer(&ids[*n], repo, text->data != NULL ?
	    text->data : "", text->len) < 0) {
		/* libgit2 sets no message when write(2) fails (EFBIG, ENOSPC) */
		if (git_error_last() == NULL && errno != 0)
			return werr_errno("write the object of", path);
		return werr_git("cannot write '%s'", path);
	}
	u[*n].action = GIT_TREE_UPDATE_UPSERT;
	u[*n].id = ids[*n];
	u[*n].filemode = GIT_FILEMODE_BLOB;
	u[*n].path = path;
	(*n)++;
	return NULL;
}

/* Keep the body of the newest `cycle.journal` entry. */
static struct werr *
last_cycle_journal(void *arg, const struct journal_entry *e)
{
	json_t **body = arg;

	json_decref(*body);
	*body = json_incref(e->body);
	return NULL;
}

/*
 * The head of journals/CYCLE.md: a cycle that `warden cycle` ran has a
 * structured journal (its newest `cycle.journal` entry), rendered by
 * render_cycle (in SiliconBench's journal shape); the entries of every
 * cycle follow.
 */
static struct werr *
md_header(struct buf *md, struct store *store, const char *cycle,
    journal_render_fn render_cycle)
{
	struct journal_filter f = { NULL, cycle, "cycle.journal", 0 };
	json_t *journal = NULL;
	struct werr *err;

	if ((err = journal_each(store, &f, last_cycle_journal,
	    &journal)) != NULL)
		return err;
	if (journal != NULL && render_cycle != NULL) {
		render_cycle(md, journal);
		buf_puts(md, "## Journal entries\n\n");
	} else
		buf_printf(md, "# Maintenance journal: cycle %s\n\n"
		    "Exported by `warden journal export` from the hash-chained "
		    "journal;\n`warden journal verify` checks it. Do not "
		    "edit.\n\n", cycle);
	buf_puts(md, "Each entry in short; `journals/journal.jsonl` beside this "
	    "file holds every entry whole, as the hash chain covers it.\n\n"
	    "| seq | time (UTC) | kind | subject | what | hash |\n"
	    "|---:|---|---|---|---|---|\n");
	json_decref(journal);
	return NULL;
}

/*
 * The tree of the export: the tip's tree with journal.jsonl (the
 * committed lines, then the new ones) and the cycles' Markdown.
 */
static struct werr *
build_tree(git_oid *out, int *entries, struct store *store,
    git_repository *repo, git_tree *base, const struct journal_evidence *ev,
    int64_t exported, const char *cycle, journal_render_fn render_cycle)
{
	struct journal_filter f;
	struct export_state x;
	json_t *cycles = json_object();
	git_tree_update *u = NULL;
	git_oid *ids = NULL;
	char **paths = NULL;
	const char *key;
	struct werr *err;
	size_t n = 0, cap, i;
	json_t *v;

	memset(&x, 0, sizeof(x));
	if (cycle != NULL)
		json_object_set_new(cycles, cycle, json_true());
	else if ((err = journal_each(store, NULL, collect_cycles, cycles)) != NULL)
		goto out;
	cap = json_object_size(cycles) + 1;
	u = xcalloc(cap, sizeof(*u));
	ids = xcalloc(cap, sizeof(*ids));
	paths = xcalloc(cap, sizeof(*paths));
	if (ev->export_text != NULL)
		buf_add(&x.jsonl, ev->export_text, ev->export_len);
	memset(&f, 0, sizeof(f));
	f.after_seq = exported;
	if ((err = journal_each(store, &f, jsonl_entry, &x)) != NULL ||
	    (err = add_file(u, ids, &n, repo, JOURNAL_EXPORT_PATH,
	    &x.jsonl)) != NULL)
		goto out;
	json_object_foreach(cycles, key, v) {
		struct journal_filter cf = { NULL, key, NULL, 0 };

		if (!store_cycle_ok(key)) {
			err = werr_new(WEXIT_INPUT, "cycle id '%s' cannot name a "
			    "file", key);
			goto out;
		}
		buf_reset(&x.md);
		paths[n] = xasprintf("journals/%s.md", key);
		x.cycle = key;
		x.first = x.last = 0;
		if ((err = md_header(&x.md, store, key, render_cycle)) != NULL ||
		    (err = journal_each(store, &cf, span_entry, &x)) != NULL)
			goto out;
		cf.cycle = NULL;
		cf.after_seq = x.first > 0 ? x.first - 1 : 0;
		if ((err = journal_each(store, &cf, md_cycle_entry, &x)) != NULL)
			goto out;
		quote_md_doc(&x.md);	/* no byte a terminal acts on */
		if ((err = add_file(u, ids, &n, repo, paths[n], &x.md)) != NULL)
			goto out;
	}
	if (git_tree_create_updated(out, repo, base, n, u) < 0)
		err = werr_git("cannot write the journals/ tree");
	*entries = x.entries;
out:
	for (i = 0; paths != NULL && i < cap; i++)
		free(paths[i]);
	free(paths);
	free(ids);
	free(u);
	buf_free(&x.md);
	buf_free(&x.jsonl);
	json_decref(cycles);
	return err;
}

/* Refuse to export a journal that does not verify; where the break is an
 * official commit no entry records, that commit in unrecorded (41). */
static struct werr *
check_journal(int64_t *exported, char *unrecorded, struct store *store,
    const struct journal_evidence *ev, const char *bad)
{
	struct journal_verdict v;
	struct werr *err;

	if (bad != NULL)
		return werr_new(WEXIT_PROBLEM, "%s; not exporting (see 'warden "
		    "journal verify')", bad);
	if ((err = journal_check(&v, store, ev)) != NULL)
		return err;
	if (v.broken_seq != 0)
		err = werr_new(WEXIT_PROBLEM, "the journal does not verify (seq "
		    "%lld: %s); not exporting", (long long)v.broken_seq, v.why);
	memcpy(unrecorded, v.unrecorded, sizeof(v.unrecorded));
	*exported = v.exported;
	journal_verdict_free(&v);
	return err;
}

static struct werr *
export_held(int *entries_out, char *commit_out, char *unrecorded,
    struct store *store, git_repository *repo, const char *branch,
    const char *cycle, journal_render_fn render_cycle)
{
	struct journal_evidence ev;
	struct official_change c;
	git_reference *ref = NULL;
	git_commit *tip = NULL;
	git_tree *base = NULL;
	char hash[65], *bad = NULL, *op = NULL, *msg = NULL;
	int64_t exported = 0, head;
	struct werr *err;
	git_oid tree;

	memset(&ev, 0, sizeof(ev));
	if ((err = official_recover(store, repo, NULL)) != NULL ||
	    (err = official_check_free(repo, branch)) != NULL ||
	    (err = journal_evidence_load(&ev, &bad, repo, branch)) != NULL ||
	    (err = check_journal(&exported, unrecorded, store, &ev, bad)) !=
	    NULL)
		goto out;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) < 0 ||
	    git_commit_lookup(&tip, repo, git_reference_target(ref)) < 0 ||
	    git_commit_tree(&base, tip) < 0) {
		err = werr_git("cannot read the tip of '%s'", branch);
		goto out;
	}
	if ((err = build_tree(&tree, entries_out, store, repo, base, &ev,
	    exported, cycle, render_cycle)) != NULL ||
	    (err = journal_head(store, &head, hash)) != NULL)
		goto out;
	if (git_oid_equal(&tree, git_tree_id(base)))
		goto out;	/* nothing new: idempotent */
	op = xasprintf("%lld", (long long)head);
	msg = xasprintf("journal: export through seq %lld\n\n"
	    "%d new entr%s of the maintenance journal, written by\n"
	    "'warden journal export'.\n", (long long)head, *entries_out,
	    *entries_out == 1 ? "y" : "ies");
	memset(&c, 0, sizeof(c));
	c.kind = "journal.export";
	c.op = op;
	c.tree = &tree;
	c.expected_tip = git_commit_id(tip);
	c.message = msg;
	err = official_commit(commit_out, store, repo, branch, &c);
out:
	journal_evidence_free(&ev);
	git_tree_free(base);
	git_commit_free(tip);
	git_reference_free(ref);
	free(bad);
	free(op);
	free(msg);
	return err;
}

struct werr *
journal_export(int *entries_out, char *commit_out, char *unrecorded_out,
    struct store *store, git_repository *repo, const char *branch,
    const char *cycle, journal_render_fn render_cycle)
{
	char unrecorded[41] = "";
	struct werr *err;

	*entries_out = 0;
	commit_out[0] = '\0';
	if (unrecorded_out != NULL)
		unrecorded_out[0] = '\0';
	if ((err = store_hold(store)) != NULL)
		return err;
	err = export_held(entries_out, commit_out, unrecorded, store, repo,
	    branch, cycle, render_cycle);
	if (unrecorded_out != NULL)
		memcpy(unrecorded_out, unrecorded, sizeof(unrecorded));
	store_unhold(store);
	return err;
}
