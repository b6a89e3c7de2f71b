/*
 * engine-private.h - what engine.c and engine-launch.c share: the command
 * line, environment and variables of one server start, built from the
 * adapter and the profile. Internal to the engine module: nothing outside
 * runner/engine/engine*.c may include it; the public contract is
 * engine.h.
 */
#ifndef WARDEN_ENGINE_PRIVATE_H
#define WARDEN_ENGINE_PRIVATE_H

#include "engine.h"
#include "sandbox/sandbox.h"

/* A pre_start or stop step, expanded. */
struct launch_step {
	char **argv;
	int may_fail;
	double timeout_s;
};

struct launch {
	struct buf vals[5];	/* port, ctx, concurrency, home, log_dir */
	char *adapter_dir, *models_dir, *model_path, *model_dir, *scratch;
	char *cwd;		/* serve.cwd expanded, else the repository */
	struct engine_vars vars;
	char **argv;		/* the server's */
	char **env;		/* "NAME=VALUE" added to warden's */
	size_t nenv;
	struct launch_step *pre_start, *stop;
	size_t n_pre_start, n_stop;
	int untrusted;		/* an unreviewed run's (own_dir): what its
				   programs write is bounded */
	struct sandbox sb;	/* its prefix; sb.prefix NULL: none */
	char **env_all;		/* a sandboxed program's whole environment */
};

/* Expand the adapter's argv (and the split's argv_extra) and environment
 * for one start of e; l is freed by engine_launch_free() even on error. */
struct werr *engine_launch_build(struct launch *l, const struct engine_params *p,
    const struct engine *e);
void engine_launch_free(struct launch *l);
/*
 * Run the pre_start steps of e's adapter in order, each through spawn.h
 * with its timeout, cwd and environment those of the server, output
 * appended to the server's log. 0 when every step succeeded or may fail;
 * -1 with what failed in why.
 */
int engine_steps_pre_start(const struct engine *e, const struct launch *l,
    struct buf *why);
/* Run the stop steps; a failure is only logged. */
void engine_steps_stop(const struct engine *e, const struct launch *l);
/* Make {scratch} a new empty directory / remove it. */
struct werr *engine_scratch_reset(const struct launch *l);
void engine_scratch_remove(const struct launch *l);
/* engine-sandbox.c: the sandbox of a start whose adapter no maintainer
 * approved (p->sandbox_repo set; see engine.h): l->sb and l->env_all. */
struct werr *engine_sandbox_build(struct launch *l,
    const struct engine_params *p);
void engine_sandbox_free(struct launch *l);
/* The options to spawn argv of l with: in the sandbox when l has one
 * (*full, freed by the caller, holds the prefix and argv). */
void engine_spawn_opts(struct spawn_opts *so, char ***full,
    const struct launch *l, char **argv);

/* argv joined by spaces, for records (caller frees). */
char *engine_join_argv(char **argv);
/* argv joined as engine_join_argv() does, with root (the bench) as "."
 * wherever a path starts with it, and the port, alone or after ':', as
 * "{port}". */
char *engine_argv_provenance(char **argv, const char *root, int port);
/* The directory part of path ("." when none; caller frees). */
char *engine_dir_of(const char *path);

#endif
