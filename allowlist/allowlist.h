/*
 * allowlist.h - the write-allowlist gate: warden's security boundary.
 *
 * Decides whether an untrusted change (a patch text, or a commit range)
 * may land on the official branch. Deny by default: every path the change
 * touches, on both sides, must pass one decision function
 * (allowlist_decide), and every refusal carries a stable code, the path
 * and a reason. Patches are applied only in memory, to the trusted base
 * tree, and the resulting tree is diffed against the base and checked
 * again; nothing here ever touches a working tree or an index file.
 *
 * This library knows nothing of the CLI, the store or the journal: it
 * never prints and never reads policy from disk. The caller fills a
 * struct allowlist_policy from the trusted base, never from the change.
 */
#ifndef WARDEN_ALLOWLIST_H
#define WARDEN_ALLOWLIST_H

#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "error.h"

/* Stable violation codes. Their names (allowlist_code_name) are part of
 * warden's output format; append, never renumber or rename. */
enum allowlist_code {
	AL_OUTSIDE_ALLOWLIST,
	AL_BAD_PATH,
	AL_DOTGIT,
	AL_GITFILE,
	AL_CASE_COLLISION,
	AL_UNICODE_COLLISION,
	AL_SYMLINK,
	AL_GITLINK,
	AL_MODE,
	AL_BINARY,
	AL_TOO_LARGE,
	AL_TOO_MANY_FILES,
	AL_COPY_FROM_OUTSIDE,
	AL_PREFIX_NOT_DIR,
	AL_MALFORMED,
	AL_EMPTY_FILE_UNSUPPORTED,
	AL_RESULT_MISMATCH,
	AL_SPECIAL_FILE,
	AL_HARD_LINK,
	AL_UNREADABLE,
	AL_CODE_COUNT
};

/* The policy, filled by the caller from the trusted base. */
struct allowlist_policy {
	const char *const *allow;	/* globs of writable paths */
	size_t nallow;
	const char *const *exec;	/* globs where mode 100755 is allowed */
	size_t nexec;
	int allow_binary;
	size_t max_bytes;		/* patch text size; 0 = no limit */
	size_t max_files;		/* changed paths; 0 = no limit */
};

struct allowlist_violation {
	enum allowlist_code code;
	char *path;
	char *reason;
	char *commit;			/* hex id for range checks, else NULL */
};

/* What kind of change a delta is, for the report's file list. */
struct allowlist_file {
	char status;			/* A, D, M, R, C, T */
	char *old_path;
	char *new_path;
	uint32_t old_mode;		/* from the base tree, 0 if absent */
	uint32_t new_mode;
	size_t added, deleted;		/* line counts */
	size_t first_line;		/* first changed line on the new side
					 * (1 when none: binary, deleted) */
};

struct allowlist_report {
	struct allowlist_violation *v;
	size_t nv, capv;
	struct allowlist_file *files;
	size_t nfiles, capfiles;
	int applied;			/* the in-memory apply succeeded */
	git_oid base_tree;
	git_oid result_tree;		/* valid when applied */
	const char *commit;		/* set by range checks: violations
					 * added now name this commit */
};

/* Fill f's line counts and first changed line from patch (may be NULL:
 * no counts, first line 1). */
void allowlist_file_stats(struct allowlist_file *f, git_patch *patch);

void allowlist_report_init(struct allowlist_report *r);
void allowlist_report_free(struct allowlist_report *r);
/* Add a violation; one per code and path (a range check names the first
 * commit that shows it). */
void allowlist_report_add(struct allowlist_report *r, enum allowlist_code code,
    const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int allowlist_report_has(const struct allowlist_report *r,
    enum allowlist_code code);
/* 0 clean, 2 if the input was malformed, else 1 (as warden's exit codes). */
int allowlist_report_exit(const struct allowlist_report *r);
const char *allowlist_code_name(enum allowlist_code code);
/* A delta's status as A, D, M, R, C or T; anything else is '?', which
 * callers must refuse (deny by default; libgit2's git_diff_status_char
 * maps unmodified and unknown states to other letters). */
char allowlist_status_char(git_delta_t status);

/*
 * Path rules, usable on their own.
 * allowlist_glob_match: '*' and '?' stay within a segment; a segment that
 * is exactly two stars matches zero or more segments, except that a
 * trailing "**" segment needs at least one. Character classes as fnmatch(3).
 */
int allowlist_glob_match(const char *glob, const char *path);
int allowlist_match_any(const char *const *globs, size_t n, const char *path);
/*
 * The collision key of a path (utf8proc): compatibility decomposition,
 * Unicode case folding, default-ignorable code points (HFS+/APFS's among
 * them) and every combining mark removed, recomposed. So Λάμδα, λαμδα and
 * the NFD form share a key, as do café and cafe, ß and ss, ｑｗｅｎ and
 * qwen. Coarser than the file system's own folding, so it can only
 * over-report. Returns NULL when the path holds a code point the gate does
 * not accept (see allowlist_check_path). Caller frees.
 */
char *allowlist_fold(const char *path);
/* Do a and b differ only in case (Unicode case folding, no
 * normalisation)? Tells a case-collision from a unicode-collision. */
int allowlist_case_equal(const char *a, const char *b);
/* Path-only rules (bad-path, dotgit, gitfile) for one path; appends to r.
 * Returns the number of violations added. */
int allowlist_check_path(struct allowlist_report *r, const char *path);

/* One change to decide on, as seen by the gate. */
struct allowlist_change {
	char status;			/* A, D, M, R, C, T */
	const char *old_path;		/* NULL for additions */
	const char *new_path;		/* NULL for deletions */
	uint32_t new_mode;		/* 0 for deletions */
	int binary;
};

/* Context of a decision: the trusted base tree, its collision index. */
struct allowlist_base;
struct werr *allowlist_base_load(struct allowlist_base **out,
    git_repository *repo, const git_tree *tree);
void allowlist_base_free(struct allowlist_base *b);
/* Forget the paths added by the changes decided so far: the next
 * change starts a new change set. */
void allowlist_base_forget_added(struct allowlist_base *b);
/* Mode of PATH in the base tree (0 if absent). */
uint32_t allowlist_base_mode(const struct allowlist_base *b, const char *path);

/*
 * The one decision function: every rule for one change, against the base.
 * Appends every violation it finds to r. Remembers the paths it adds in
 * base, so collisions among the paths of one change are found too.
 */
void allowlist_decide(struct allowlist_report *r,
    const struct allowlist_policy *p, struct allowlist_base *base,
    const struct allowlist_change *c);
/* An added blob with the content of a file outside the zone is a copy
 * from outside, whatever the patch says (copy-from-outside). */
void allowlist_decide_blob(struct allowlist_report *r,
    const struct allowlist_policy *p, const struct allowlist_base *base,
    const char *path, const git_oid *id);

/* Flags for allowlist_gate_patch. */
#define ALLOWLIST_WRITE	0x1	/* keep the result objects in repo's odb */

/*
 * Gate a patch text against the tree BASE_TREE of repo: parse, decide on
 * every delta, apply in memory, diff the result against the base and
 * decide again. Without ALLOWLIST_WRITE nothing is written to the
 * repository (objects go to an in-memory backend). Violations go to r;
 * an error return means the environment failed (unreadable repository).
 */
struct werr *allowlist_gate_patch(struct allowlist_report *r,
    git_repository *repo, const git_oid *base_tree, const char *patch,
    size_t len, const struct allowlist_policy *p, unsigned flags);

/*
 * Gate the commit range merge-base(BASE, HEAD)..HEAD: the combined change,
 * every commit of the range against each parent, and every tree entry
 * name of every commit. Policy must come from BASE, never from HEAD.
 */
struct werr *allowlist_gate_range(struct allowlist_report *r,
    git_repository *repo, const git_oid *base, const git_oid *head,
    const struct allowlist_policy *p);

/*
 * The change a worktree holds against base_tree (a tree of repo), as a
 * patch text to be gated with allowlist_gate_patch like any other. The
 * worktree is untrusted: it is read with lstat first and never through a
 * symlink; a file is read only when its size is within the caps (below),
 * through a descriptor checked to be the file lstat saw, and refused if
 * it changed while read. Every refusal goes to r with its code and path:
 *
 *   too-large       a file over p->max_bytes (a tracked file may keep the
 *                   size it has in the base tree), or the changed files
 *                   together over ALLOWLIST_WT_TOTAL_FACTOR times it
 *   too-many-files  more entries than the base tree's plus
 *                   ALLOWLIST_WT_ENTRY_FACTOR times p->max_files
 *                   (the walk stops there: out stays empty)
 *   symlink         a symbolic link (a directory replaced by one too)
 *   special-file    a FIFO, socket or device
 *   hard-link       a file with more than one link
 *   unreadable      cannot be opened or read, or changed while read
 *   bad-path, dotgit  a new name no tree may hold, or nested deeper than
 *                   ALLOWLIST_WT_DEPTH_MAX directories
 *
 * What a refused entry would change is left out of the patch (a tracked
 * path keeps its base content). The top-level .git entry is not part of
 * the change. Untracked files that the base tree's ignore rules (its
 * .gitignore files, written under scratch: an empty directory the caller
 * made, removed here; plus the repository's info/exclude) ignore are left out
 * unread; the worktree's own .gitignore files are never read. A zero
 * limit in p falls back to ALLOWLIST_WT_FILE_DEFAULT and
 * ALLOWLIST_WT_FILES_DEFAULT. A worktree that cannot be opened is an
 * unreadable violation; an error return means the environment failed
 * (repository, scratch directory).
 */
#define ALLOWLIST_WT_TOTAL_FACTOR	8
#define ALLOWLIST_WT_ENTRY_FACTOR	10
#define ALLOWLIST_WT_DEPTH_MAX		64
#define ALLOWLIST_WT_FILE_DEFAULT	((size_t)1 << 20)
#define ALLOWLIST_WT_FILES_DEFAULT	200
struct buf;
struct werr *allowlist_worktree_patch(struct allowlist_report *r,
    struct buf *out, git_repository *repo, const git_oid *base_tree,
    const char *dir, const char *scratch, const struct allowlist_policy *p);

#endif
