/*
 * guard.h - the post-run guard: what a sandboxed step (the maintainer
 * agent, a smoke campaign of an unreviewed change) must leave as it was,
 * recorded before the step and compared after it.
 *
 * Recorded: every ref of the repository and every file under the
 * repository root (the maintainer's checkout, .git with its hooks and
 * config, .warden/) by type, mode, size, inode, change and modification
 * times and, for symlinks, target and, for small files under .git,
 * content. Left out: the paths the caller excludes (a run's own
 * directories, the store while warden writes it), loose and packed
 * objects (content-addressed: a new object changes nothing), and the
 * files warden's own stdout and stderr go to (the maintainer's
 * `warden agent run >log 2>&1` in the checkout). Never prints.
 */
#ifndef WARDEN_SANDBOX_GUARD_H
#define WARDEN_SANDBOX_GUARD_H

#include <git2.h>
#include <jansson.h>

#include "error.h"

struct sandbox_guard;

/* Record the state now. gitfile: a worktree's .git file to record too,
 * or NULL; exclude: absolute paths left out, NULL-terminated. */
struct werr *sandbox_guard_snapshot(struct sandbox_guard **out,
    git_repository *repo, const char *repo_root, const char *gitfile,
    char *const *exclude);
/* Record again and add one reason (a string) per difference to
 * reasons. */
struct werr *sandbox_guard_compare(json_t *reasons,
    const struct sandbox_guard *before, git_repository *repo);
/*
 * After a quarantine: put the git directory back as the snapshot found
 * it, as far as it can (every ref, hooks, config, and other small
 * files: rewritten; files and directories the step added: removed).
 * The maintainer's checkout is reported, never rewritten. One string per
 * action goes to out.
 */
struct werr *sandbox_guard_restore(json_t *out,
    const struct sandbox_guard *before);
void sandbox_guard_free(struct sandbox_guard *g);

/*
 * Record the repository before a campaign of unreviewed engines: all but
 * repo_root/.warden (the store and logs warden writes meanwhile; the
 * sandbox hides it from the engines).
 */
struct werr *sandbox_guard_campaign(struct sandbox_guard **out,
    git_repository *repo, const char *repo_root);
/*
 * After a sandboxed step: compare with before and, on any difference,
 * put the git directory back. One string per difference goes to
 * reasons, one per action to back (both empty: nothing changed).
 */
struct werr *sandbox_guard_settle(json_t *reasons, json_t *back,
    const struct sandbox_guard *before, git_repository *repo);
/*
 * After such a step: NULL when nothing changed; else the git directory is
 * put back and the error (WEXIT_ENV) names the step, what changed and
 * what was put back.
 */
struct werr *sandbox_guard_check(const struct sandbox_guard *before,
    git_repository *repo, const char *step);

#endif
