/*
 * journal.h - the append-only, hash-chained maintenance journal.
 *
 * Each entry: seq, UTC time, cycle id, kind, subject, JSON body, prev_hash
 * and hash = sha256(prev_hash || canonical JSON of the entry), where the
 * canonical JSON is {"body","cycle","kind","seq","subject","time"} with
 * keys sorted and no whitespace (jansson JSON_COMPACT|JSON_SORT_KEYS).
 * journal_append() must be called inside store_begin()/store_commit() so an
 * entry lands together with the state change it records.
 */
#ifndef WARDEN_JOURNAL_H
#define WARDEN_JOURNAL_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct buf;
struct store;
struct git_repository;

struct journal_entry {
	int64_t seq;
	char *time;
	char *cycle;
	char *kind;
	char *subject;
	json_t *body;
	char *prev_hash;
	char *hash;
};

struct journal_filter {
	const char *since;	/* UTC time prefix compare, inclusive; NULL any */
	const char *cycle;	/* NULL any */
	const char *kind;	/* exact, or prefix ending in '.'; NULL any */
	int64_t after_seq;	/* entries with seq > after_seq */
};

/* Append an entry; body is borrowed. seq_out may be NULL. An entry that
 * cannot be built (text that is not UTF-8, a NULL body: what json_pack
 * gives for such text) is an input error, exit 2; nothing is written. */
struct werr *journal_append(struct store *store, const char *kind,
    const char *subject, json_t *body, int64_t *seq_out);

/* Call fn for each matching entry in seq order; fn returns non-NULL to stop. */
struct werr *journal_each(struct store *store, const struct journal_filter *f,
    struct werr *(*fn)(void *arg, const struct journal_entry *e), void *arg);

/* NULL when an entry of these fields can be recorded, else the input
 * error journal_append() would give. Check before changing any state. */
struct werr *journal_check_entry(const char *kind, const char *subject,
    json_t *body);
/* The last entry's seq and hash (0 and 64 zeros when empty). */
struct werr *journal_head(struct store *store, int64_t *seq,
    char *hash_out /* 65 */);

/* The canonical JSON of an entry (without hashes); caller frees. NULL when
 * the entry holds text that is not UTF-8 (a row edited outside warden). */
char *journal_canonical(const struct journal_entry *e);
/* hash_out: 65 bytes. */
void journal_hash(const char *prev_hash, const char *canonical, char *hash_out);
/* The entry as a JSON object (with hashes); new reference. */
json_t *journal_entry_json(const struct journal_entry *e);
/* The entry as one line of journals/journal.jsonl, without the newline;
 * caller frees; NULL as for journal_canonical(). */
char *journal_entry_line(const struct journal_entry *e);
/* The head the last append recorded beside the rows (meta journal_head):
 * *seq is -1 when none was recorded. hash_out: 65 bytes. */
struct werr *journal_recorded_head(struct store *store, int64_t *seq,
    char *hash_out);

/*
 * What lies outside the database that the journal must agree with: the
 * anchors (Warden-Journal trailers) of the official branch's history, the
 * official commits whose move the journal must record, and the committed
 * export. journal-anchor.c reads them from the repository.
 */
struct journal_anchor {
	int64_t seq;
	char hash[65];
	char commit[41];	/* the official commit carrying it */
};

/*
 * A commit of the official branch's first-parent history from its first
 * anchored commit on (what came before is the history warden found: `warden
 * init`'s layout commit or a repository's own past): each is a move of
 * official the journal must record.
 */
struct journal_move {
	char commit[41];
	char *subject;		/* its first line, at most 72 bytes */
	int64_t after_seq;	/* the newest anchor at or before it */
	int is_export;		/* a journal.export commit with an anchor that
				   changes nothing outside journals/: the
				   commit itself is the record */
};

struct journal_evidence {
	int have_branch;		/* the official branch exists */
	struct journal_anchor *anchors;	/* sorted by seq */
	size_t nanchors;
	json_t *records;		/* commit hex -> "KIND OP": moves the
					 * journal must record (an entry whose
					 * body's "commit" is that commit) */
	json_t *record_seq;		/* commit hex -> the seq it anchors */
	char *export_text;		/* the committed journal.jsonl, or NULL */
	size_t export_len;
	int64_t export_through;		/* the highest seq an export commit
					 * anchored: the export must reach it */
	char export_commit[41];		/* that commit */
	struct journal_move *moves;	/* first-parent history, oldest first */
	size_t nmoves;
};

/* Read the evidence from refs/heads/BRANCH of repo: every commit in its
 * history and the tip's tree. A malformed Warden-Journal trailer is
 * reported through *bad (caller frees), naming the commit. */
struct werr *journal_evidence_load(struct journal_evidence *ev, char **bad,
    struct git_repository *repo, const char *branch);
void journal_evidence_free(struct journal_evidence *ev);

/* Where the committed export lives, in the official branch's tree. */
#define JOURNAL_EXPORT_PATH "journals/journal.jsonl"

struct journal_verdict {
	int64_t entries;	/* rows read */
	int64_t anchors;	/* anchors checked */
	int64_t exported;	/* lines of the committed export checked */
	int64_t records;	/* official moves found recorded */
	int64_t broken_seq;	/* 0 when intact, else the first bad seq */
	char *why;		/* how, when broken */
	char unrecorded[41];	/* when broken by an official commit no
				   entry records (moved outside warden):
				   that commit, else "" */
};

/*
 * Verify in one pass over the rows: the hash chain (seq, prev_hash, hash),
 * the recorded head, and, when ev is not NULL, every anchor, every line of
 * the committed export (a malformed or torn line is a break, never
 * skipped) and every official move's entry. Linear in entries plus
 * anchors. The first problem found is reported; an error is returned only
 * when the database cannot be read.
 */
struct werr *journal_check(struct journal_verdict *v, struct store *store,
    const struct journal_evidence *ev);
/* The chain and recorded head only (journal_check without evidence):
 * *broken_seq 0 when intact, else the first bad seq and *why (caller
 * frees); *count entries read. */
struct werr *journal_verify(struct store *store, int64_t *broken_seq,
    char **why, int64_t *count);
void journal_verdict_free(struct journal_verdict *v);

/* Does e record commit (hex) as a move of official: an entry of a move's
 * kind naming it as its "commit" or among the "adopted"? */
int journal_entry_records(const struct journal_entry *e, const char *commit);

/*
 * Record a maintainer's move of the official branch that warden did not
 * make (official.adopted: commit, branch, subject), so journal verify finds
 * it recorded: rev must name a commit on the first-parent history of
 * branch (else an input error) that no entry records yet (else an input
 * error naming the entry). *seq the entry; commit_out (41) the commit.
 * Takes its own store transaction.
 */
struct werr *journal_adopt(int64_t *seq, char *commit_out,
    struct store *store, struct git_repository *repo, const char *branch,
    const char *rev);

/* An entry's body as a person reads it: "field value; field value", a
 * string cut at 80 bytes, a list by its length, an object by its number
 * of fields, the whole at about 400 bytes (CYCLE.md's entries, `journal
 * show`). Caller frees. */
char *journal_body_short(const json_t *body);

/* Renders a cycle's structured journal (the body of its newest
 * `cycle.journal` entry) as Markdown: cycle_render_markdown(). */
typedef void (*journal_render_fn)(struct buf *md, const json_t *cycle_journal);

/*
 * Write the journal to the official branch: a commit (through
 * official.c, with its own anchor) whose tree is the tip's tree plus
 * journals/journal.jsonl extended by the entries not yet in it and
 * journals/CYCLE.md for each cycle (or just cycle), headed by what
 * render_cycle makes of the cycle's structured journal when it has one
 * (NULL: a plain heading). Refuses (exit 1) when the journal does not
 * verify; where what breaks it is an official commit no entry records,
 * unrecorded_out (41, or NULL) gets that commit, else "". *entries_out
 * counts new lines; 0 and no commit when there is nothing new
 * (idempotent). commit_out (41) gets the commit, "" when none.
 */
struct werr *journal_export(int *entries_out, char *commit_out,
    char *unrecorded_out, struct store *store, struct git_repository *repo,
    const char *branch, const char *cycle, journal_render_fn render_cycle);

#endif
