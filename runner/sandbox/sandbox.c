/*
 * sandbox.c - what the platform sandboxes share: building the prefix,
 * running a probe with a deadline. See sandbox.h. Never prints.
 */
#include "config.h"

#include <sys/wait.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "spawn.h"
#include "util.h"

void
sandbox_push(struct sandbox *sb, const char *s)
{
	sb->prefix = xrealloc(sb->prefix, (sb->nprefix + 2) *
	    sizeof(*sb->prefix));
	sb->prefix[sb->nprefix++] = xstrdup(s);
	sb->prefix[sb->nprefix] = NULL;
}

void
sandbox_free(struct sandbox *sb)
{
	size_t i;

	for (i = 0; i < sb->nprefix; i++)
		free(sb->prefix[i]);
	free(sb->prefix);
	memset(sb, 0, sizeof(*sb));
}

struct werr *
sandbox_try(char *const *argv)
{
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	struct werr *err;
	struct buf why = BUF_INIT;
	uint64_t deadline = mono_ns() + 10000000000ULL;

	o.argv = argv;
	if ((err = spawn_start(&p, &o)) != NULL)
		return err;
	while (!spawn_poll(&p) && mono_ns() < deadline)
		usleep(5000);
	if (!p.exited) {
		werr_free(spawn_stop(&p, 100));
		return werr_new(WEXIT_ENV, "'%s' did not finish a trial run",
		    argv[0]);
	}
	werr_free(spawn_stop(&p, 100));
	if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0)
		return NULL;
	spawn_status_describe(&why, p.status);
	err = werr_new(WEXIT_ENV, "'%s' cannot run here (a trial run ended "
	    "with %s)", argv[0], buf_cstr(&why));
	buf_free(&why);
	return err;
}
