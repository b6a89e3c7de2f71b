/*
 * update-private.h - what the files of runner/update/ share: running a
 * program to its end under a deadline with its output in the engine's
 * update log, the shims, release dates from the package index, git
 * sources, model weights. Internal: nothing outside runner/update/ and
 * the update commands may include it; the contract is update.h.
 */
#ifndef WARDEN_UPDATE_PRIVATE_H
#define WARDEN_UPDATE_PRIVATE_H

#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "adapter.h"
#include "buf.h"
#include "error.h"
#include "policy.h"
#include "sandbox/sandbox.h"
#include "spawn.h"
#include "update.h"

/* ---- run.c ---- */

/*
 * Run argv (cwd may be NULL) to its end within timeout_s, its output
 * appended to log_path, stdout alone to stdout_path when that is not
 * NULL; in ctx->box, the sandbox of an untrusted build, when there is
 * one (ctx may be NULL: no box). A program that cannot start, exits
 * non-zero or overruns (its group is stopped) is an error
 * (WEXIT_PROBLEM) naming what (a short name like "pip shim") and how,
 * with the log's last lines.
 */
struct werr *update_exec(const struct update_ctx *ctx, const char *what,
    char *const *argv, const char *cwd, const char *log_path,
    const char *stdout_path, double timeout_s);
/* update_exec() with env_add ("NAME=VALUE", NULL-terminated; may be NULL)
 * set in the program's environment. On a failure the message quotes the
 * first line of the program's output that reads as a compiler's or a
 * build tool's error (": error", "fatal error", "CMake Error", ...) and
 * what follows it, then the output's last lines; else the last lines. */
struct werr *update_exec_env(const struct update_ctx *ctx, const char *what,
    char *const *argv, const char *cwd, const char *log_path,
    const char *stdout_path, double timeout_s, char *const *env_add);
/* A line "== TIME what: argv" into the log, so its sections are findable. */
void update_log_note(const char *log_path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The first line of `PROGRAM --version` (30 s, through update_exec()),
 * or NULL. Caller frees. */
char *update_program_version(const struct update_ctx *ctx,
    const char *program, const char *log_path);
/* Where program is: itself when it holds a '/', else the first
 * executable of that name in a folder of warden's PATH; NULL when
 * nowhere. Caller frees. */
char *update_program_find(const char *program);
/* Expand an adapter argv template with the update step's variables
 * ({model*} from pe, {hf_id} from prof; either may be NULL). */
struct werr *update_expand_argv(char ***out, const struct strlist *tmpl,
    const struct adapter *a, const char *repo_root, const char *env_dir,
    const struct profile *prof, const struct profile_engine *pe);
/* A profile's weight file or directory: absolute as given, else under
 * REPO/.warden/models ({models_dir}); NULL for NULL. Caller frees. */
char *update_weights_path(const char *repo_root, const char *rel);
void update_argv_free(char **argv);

/* ---- shim.c ---- */

/*
 * Call the pip or brew shim: VERB --env ENV_DIR [index options from
 * policy, pip only] ARGS... and read the JSON it prints. Its output must
 * be {"tool", "tool_version", "python", "packages"}; anything else, a
 * non-zero exit or a timeout is an error (WEXIT_PROBLEM) saying so.
 */
struct werr *update_shim_call(json_t **out, const struct update_ctx *ctx,
    enum adapter_source_kind kind, const char *verb, const char *env_dir,
    char *const *args, const char *log_path);
/* The path of the installed shim name ("pip", "brew"): WARDEN_SHIM_DIR,
 * else found relative to warden's executable (shim.c). Caller frees. */
char *update_shim_path(const char *name);

/* ---- scratchbox.c ---- */

/*
 * The sandbox of an untrusted build (ctx->untrusted): what its programs
 * see, prepared once per update_env_build(), and the environment they
 * get. Without a sandbox (ctx->sandbox NULL) programs run as `warden
 * update` runs them and the box only says so in the log.
 */
struct update_box {
	const char *kind;	/* "bubblewrap", "sandbox-exec"; NULL: none */
	char *note;		/* what the log says beside each program */
	struct sandbox sb;	/* the prefix (kind set) */
	char **env;		/* the programs' environment (kind set) */
	size_t nenv;
	char *cwd;		/* where a program without a cwd starts */
	char *tmp;		/* its TMPDIR, emptied when the box closes */
	char *run_dir;		/* the sandbox's profile folder (not
				   shown to the programs); removed */
};

/* Open the box of build b (made in b->env_dir: HOME b->env_dir/home,
 * TMPDIR b->env_dir/tmp). Close with update_box_close(). */
struct werr *update_box_open(struct update_box **out,
    const struct update_ctx *ctx, const struct update_build *b);
void update_box_close(struct update_box *box);
/*
 * The spawn options of argv in box: *argv_full (the sandbox's prefix and
 * argv) and *env_full (the box's environment with env_add over it),
 * which the caller frees with free() (the strings are the box's, argv's
 * and env_add's); a program without cwd starts in the environment's
 * directory. Without a box, or a box without a sandbox, the options
 * run argv as given (both NULL).
 */
void update_box_spawn(struct spawn_opts *so, char ***argv_full,
    char ***env_full, const struct update_box *box, char *const *argv,
    char *const *env_add, const char *cwd);

/*
 * What the sandbox of a build shows, built from paths warden chose:
 * the folders of readable (NULL-terminated) read-only; repo_root
 * hidden, its checkout shown read-only but .git and .warden hidden
 * again; log_dir read-only (warden writes the log, the program reads
 * its constraints there); env_dir writable (HOME and TMPDIR are under
 * it) but the folders of kept in it (NULL-terminated: what warden
 * writes itself, a git source's repository) read-only; the host's
 * network. Free with sandbox_spec_free().
 */
void update_box_spec(struct sandbox_spec *spec, const char *repo_root,
    const char *env_dir, const char *log_dir, char *const *readable,
    char *const *kept);
/*
 * The folders warden names for a build to read (NULL-terminated; free
 * with sandbox_strv_free()): the shims' folder (or the folder of the
 * policy's substitute shim), the installation of the Python that makes
 * the venvs (update.python) and of the python3 the pip shim runs on,
 * and the local paths of the policy's package index: each find_links
 * directory (a relative one is the repository's) and a file:// index_url.
 * A folder that is or holds a hidden place or a home is left out: it
 * would show them back.
 */
char **update_box_readable(const struct update_ctx *ctx);

/* ---- index.c ---- */

/*
 * Release dates of a pip package from the index's JSON API
 * (policy update.index.json_url with {package}): a new object
 * {version: seconds since the epoch} of each release's first upload, and
 * in *latest the newest release's version (caller frees; may be NULL).
 */
struct werr *update_index_releases(json_t **out, char **latest,
    const struct policy *policy, const char *package);

/* ---- gitenv.c ---- */

struct werr *update_git_build(struct update_build_result *res,
    const struct update_ctx *ctx, const struct update_build *b);
/* Newest commit or matching tag time of the upstream (after a fetch into
 * the engine's repository), in seconds since the epoch. */
struct werr *update_git_activity(time_t *when, char **what,
    const struct update_ctx *ctx, const struct adapter *a, const char *env_dir,
    const char *log_path);

/* The policy's mirror of a source url (update.mirrors), or NULL. */
char *update_git_mirror(const struct policy *p, const char *url);

/* ---- gitfetch.c ---- */

struct git_repository;
/* Which refs a fetch brings: the adapter's (its tags matching `ref`, or
 * its branch, and the tag pin names), or every branch and tag. */
enum update_git_refs {
	UPDATE_GIT_TRACKED,
	UPDATE_GIT_ALL
};
/*
 * Open env_dir/git (made bare when missing) and fetch the refs of which
 * from the adapter's url or the policy's mirror of it; only the objects
 * the repository lacks are copied from a mirror on this machine. *out is
 * the repository (caller frees).
 */
struct werr *update_git_fetch(struct git_repository **out,
    const struct update_ctx *ctx, const struct adapter *a, const char *pin,
    const char *env_dir, const char *log_path, enum update_git_refs which);

/* ---- gitbuild.c ---- */

struct git_oid;
/* The build job count: policy update.build_jobs, else the cores online. */
int update_build_jobs(const struct policy *p);
/*
 * Check oid out in the work tree of b->env_dir/builds not in use and run
 * the build steps there; *slot gets the tree's name under builds/ when
 * every step succeeded (caller frees). The toolchain gets each build
 * program's and the compilers' versions.
 */
struct werr *update_git_slot_build(char **slot, const struct update_ctx *ctx,
    const struct update_build *b, struct git_repository *repo,
    const struct git_oid *oid, json_t *toolchain);
/* Remove what env_dir/builds holds beside the two work trees. */
void update_git_prune(const char *env_dir);
/* When commit (hex) as version failed to build in env_dir, or NULL when
 * it did not (caller frees); record such a failure; forget it. */
char *update_git_failed_before(const char *env_dir, const char *commit,
    const char *version);
void update_git_failed_record(const char *env_dir, const char *commit,
    const char *version);
void update_git_failed_clear(const char *env_dir);

/* ---- models.c ---- */

/*
 * Make each model of the policy present for adapter a (its fetch_model
 * argv, once per model) and hash its weights: a new object {model:
 * {"file", "bytes", "sha256"}}. A digest that differs from the profile
 * is an error naming the file and both digests (*mismatch set).
 */
struct werr *update_models(json_t **out, int *mismatch,
    const struct update_ctx *ctx, const struct adapter *a,
    const char *env_dir, const char *log_path);

/*
 * The digest of a directory of weights (the definition atop models.c)
 * into hex_out (65 bytes), with how many files and bytes it covers.
 */
struct werr *update_dir_digest(char *hex_out, size_t *n_files,
    uint64_t *bytes, const char *dir);

/* ---- join.c ---- */

/* An engine of a run, as the group rule sees it. */
struct update_member {
	const char *name;
	const json_t *current;	/* its current manifest, or NULL */
	const json_t *plan;	/* its planned manifest, or NULL */
};

/*
 * Append to rep->joined each engine of the policy's rosters outside the
 * run (the n members) whose current manifest in store holds a package of
 * a policy group that a member holds now or in its plan; each once.
 */
struct werr *update_group_joins(struct update_report *rep,
    const struct update_ctx *ctx, struct store *store,
    const struct update_member *m, size_t n);

/* ---- stash.c ---- */

/*
 * Keep env_dir/venv aside (env_dir/venv.prev, hard links) before it moves
 * with its policy group; env_dir/stash.json names previous_id, the
 * engine's current manifest id then.
 */
struct werr *update_stash_keep(const char *env_dir, int64_t previous_id);
/* Whether env_dir holds a stash, and the manifest id it names. */
int update_stash_pending(const char *env_dir, int64_t *previous_id);
/*
 * Settle env_dir's stash against current_id, the engine's current
 * manifest id in the store now: the same id as the stash names means the
 * move was not committed and the kept venv goes back (*restored set; may
 * be NULL); another id means it was, and the kept venv goes. No stash:
 * nothing to do.
 */
struct werr *update_stash_settle(int *restored, const char *env_dir,
    int64_t current_id);

/* One engine of an update run (update.c), shared with group.c. */
struct engine_job {
	const char *name;
	struct adapter *adapter;
	char *env_dir;
	char *log_path;
	json_t *current;	/* current manifest or NULL */
	struct strlist pins;	/* group pins for this engine */
	json_t *plan;		/* groups: the dry run's manifest */
	int plan_failed;
	char *holds;		/* per policy group: holds one of its packages */
	char *moves;		/* per policy group: its venv moves one of them */
	int stashed;		/* the old venv is kept aside (stash.c) */
	int failed;		/* its update failed in this run */
	json_t *waiting;	/* the manifest waiting for its group's commit */
	size_t report_i;	/* its entry in the report */
};

/* Pin each group package of jobs to one version (group.c). */
void update_group_pins(const struct update_ctx *ctx, struct engine_job *jobs,
    size_t n);
/* The commit point of the run's group moves (group.c). */
struct werr *update_groups_finish(struct update_report *rep,
    const struct update_ctx *ctx, struct store *store,
    struct engine_job *jobs, size_t n);

#endif
