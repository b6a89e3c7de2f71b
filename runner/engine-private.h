/*
 * engine-private.h - what engine.c and engine-launch.c share: the command
 * line, environment and variables of one server start, built from the
 * adapter and the profile. Internal to the engine module: nothing outside
 * runner/engine*.c may include it; the public contract is engine.h.
 */
#ifndef WARDEN_ENGINE_PRIVATE_H
#define WARDEN_ENGINE_PRIVATE_H

#include "engine.h"

struct launch {
	struct buf vals[5];	/* port, ctx, concurrency, home, log_dir */
	char *adapter_dir;
	struct engine_vars vars;
	char **argv;
	char **env;
	size_t nargv, nenv;
};

/* Expand the adapter's argv (and the split's argv_extra) and environment
 * for one start of e; l is freed by engine_launch_free() even on error. */
struct werr *engine_launch_build(struct launch *l, const struct engine_params *p,
    const struct engine *e);
void engine_launch_free(struct launch *l);
/* argv joined by spaces, for records (caller frees). */
char *engine_join_argv(char **argv);
/* The directory part of path ("." when none; caller frees). */
char *engine_dir_of(const char *path);

#endif
