/*
 * official.h - the one way warden moves the official branch.
 *
 * Every commit warden makes on the official branch (an approved review, an
 * exported journal, a publish, a cycle) goes through official_commit(),
 * which makes the move safe the way git makes ref updates safe:
 *
 *  1. the commit is written, carrying two trailers: `Warden-Operation:
 *     KIND OP` and `Warden-Journal: SEQ HASH`, the journal's head at that
 *     moment (the anchor `journal verify` checks the chain against);
 *  2. the intent (kind, op, old tip, new commit, what settling records) is
 *     committed to the store;
 *  3. the ref moves only if it still points at the expected old tip
 *     (git_reference_create_matching);
 *  4. the outcome is committed: the kind's own store change (a review
 *     becomes approved), its journal entry, and the intent marked done.
 *
 * A crash between 2 and 4 leaves an open intent. official_recover(), run
 * when a command opens the store and before every move, settles it: when
 * the ref holds the new commit (or a descendant of it) the move happened
 * and step 4 is done now; otherwise the move did not happen and the intent
 * is rolled back. Either way an `official.recovered` entry records it, so
 * the branch, the store and the journal agree and the operation can be
 * run again. The whole sequence runs under the store's writer lock
 * (store_hold), so two wardens never interleave.
 *
 * Never prints; never touches a working tree or an index.
 */
#ifndef WARDEN_OFFICIAL_H
#define WARDEN_OFFICIAL_H

#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "error.h"

struct store;

/*
 * A kind of move, listed once in official_kinds[] (official-kinds.c).
 * journal_kind is the entry that records a landed move (its body is the
 * caller's, plus "commit", "branch" and "previous_tip"); NULL when the
 * commit itself is the record (journal.export: an entry about the export
 * would make every export leave something new to export). finish makes
 * the kind's own store change, inside the outcome transaction, both in
 * the command that moved the branch and in recovery after a crash; data
 * is what the caller gave in official_change. NULL: nothing to change.
 */
struct official_kind {
	const char *name;
	const char *journal_kind;
	struct werr *(*finish)(struct store *store, const char *op,
	    const char *commit, json_t *data);
};

/* The table, ended by a NULL name. Adding a kind is one line there. */
extern const struct official_kind official_kinds[];
const struct official_kind *official_kind_find(const char *name);

/* One commit on top of the official tip. Everything is borrowed. */
struct official_change {
	const char *kind;		/* a name in official_kinds[] */
	const char *op;			/* its id within the kind: "7", a seq */
	const git_oid *tree;		/* the tree of the new commit */
	const git_oid *expected_tip;	/* the tip the tree was made from: the
					 * commit's parent; the branch moves
					 * only if it still points there */
	const char *message;		/* trailers are appended to it */
	const git_signature *author;	/* NULL: the committer */
	const git_signature *committer;	/* NULL: git's configured identity,
					 * else "warden <warden@localhost>" */
	const char *journal_subject;	/* of the kind's journal entry */
	json_t *journal_body;		/* of the kind's journal entry */
	json_t *data;			/* handed to the kind's finish; may be
					 * NULL */
};

/*
 * Commit c on top of the official branch and move the branch there, as
 * above. Refuses (exit 3) while the branch is checked out in any worktree,
 * and (exit 1) when the tip is no longer expected_tip. The caller should
 * hold the store (store_hold) from before it read the state its change
 * depends on. commit_out gets the new commit's hex id. When the branch
 * moved but the outcome could not be recorded, the error says so and the
 * next warden command records it.
 */
struct werr *official_commit(char *commit_out /* 41 */, struct store *store,
    git_repository *repo, const char *branch, const struct official_change *c);

/* Settle every open intent, as above; *settled_out (may be NULL) counts
 * them. Cheap when there is none. */
struct werr *official_recover(struct store *store, git_repository *repo,
    int *settled_out);
/* The same for a command that has a store but no repository open yet: it
 * opens repo_root only when there is something to settle. */
struct werr *official_recover_at(struct store *store, const char *repo_root,
    int *settled_out);

/* Exit 3 when refs/heads/BRANCH is checked out in the main worktree or a
 * linked one: moving it would leave that worktree and index behind. */
struct werr *official_check_free(git_repository *repo, const char *branch);

/* The trailers official_commit() writes. */
#define OFFICIAL_TRAILER_OPERATION "Warden-Operation"
#define OFFICIAL_TRAILER_JOURNAL "Warden-Journal"

#endif
