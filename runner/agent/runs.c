/*
 * runs.c - the recorded agent runs as `warden agent list` and `agent
 * show` read them: a row left running by a process that is gone reads
 * interrupted. See agent.h. Never prints.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "agent.h"
#include "store-agent.h"

/* A row left 'running' by a process that is gone reads 'interrupted'
 * (the next `agent run` records it so). */
static void
show_interrupted(json_t *row)
{
	pid_t pid = (pid_t)json_integer_value(json_object_get(row, "pid"));

	if (strcmp(json_string_value(json_object_get(row, "state")),
	    "running") == 0 && (pid <= 0 || (kill(pid, 0) == -1 &&
	    errno == ESRCH)))
		json_object_set_new(row, "state", json_string("interrupted"));
}

struct werr *
agent_list(json_t **out, struct store *store)
{
	struct werr *err;
	json_t *row;
	size_t i;

	if ((err = store_agent_list(store, out)) != NULL)
		return err;
	json_array_foreach(*out, i, row)
		show_interrupted(row);
	return NULL;
}

struct werr *
agent_show(json_t **out, struct store *store, int64_t id)
{
	struct werr *err;

	if ((err = store_agent_get(store, id, out)) != NULL)
		return err;
	if (*out == NULL)
		return werr_new(WEXIT_INPUT, "no agent run %lld",
		    (long long)id);
	show_interrupted(*out);
	return NULL;
}
