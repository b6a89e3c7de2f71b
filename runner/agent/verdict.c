/*
 * verdict.c - what a run says about the agent: why it failed (its exit
 * status or the time limit, and the end of its log), what its settings
 * will not let it do (a model API on a port the network rule does not
 * reach), and its change in brief. See agent-private.h. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent-private.h"
#include "allowlist.h"
#include "spawn.h"
#include "util.h"

#define AGENT_LOG_TAIL_BYTES 4096
#define AGENT_LOG_TAIL_LINES 8

json_t *
agent_failure_json(const struct policy *pol, const char *log,
    const struct agent_exec *ex)
{
	struct buf d = BUF_INIT, tail = BUF_INIT;
	const char *s;
	size_t i, lines = 0;
	json_t *o;

	if (ex->timed_out)
		buf_printf(&d, "ran past its time limit of %.0f s",
		    pol->agent.time_limit_s);
	else
		spawn_status_describe(&d, ex->status);
	/* the log is warden's file (the agent's output went into it) */
	werr_free(file_read_tail(&tail, log, AGENT_LOG_TAIL_BYTES));
	/* its last AGENT_LOG_TAIL_LINES lines, a last one without '\n' too */
	s = buf_cstr(&tail);
	for (i = tail.len; i > 0; i--)
		if (s[i - 1] == '\n' && i < tail.len &&
		    ++lines > AGENT_LOG_TAIL_LINES)
			break;
	o = json_pack("{s:s, s:o}", "reason", buf_cstr(&d), "log_tail",
	    json_text(s + i));
	buf_free(&d);
	buf_free(&tail);
	return o;
}

json_t *
agent_network_warnings(const struct policy *pol, char *const *env)
{
	static const char *const names[] = { "ANTHROPIC_BASE_URL",
	    "OPENAI_BASE_URL", NULL };
	json_t *w = NULL;
	size_t i, j;

	if (strcmp(pol->agent.network, "https") != 0)
		return NULL;
	for (i = 0; env[i] != NULL; i++)
		for (j = 0; names[j] != NULL; j++) {
			size_t n = strlen(names[j]);
			long port;

			if (strncmp(env[i], names[j], n) != 0 ||
			    env[i][n] != '=' ||
			    (port = policy_agent_url_port(env[i] + n + 1)) == 443)
				continue;
			if (w == NULL)
				w = json_array();
			json_array_append_new(w, json_sprintf("%s is on port "
			    "%ld, which the network rule \"https\" does not "
			    "reach: the agent will not reach its model (set "
			    "'agent.network' to \"host\")", names[j], port));
		}
	return w;
}

json_t *
agent_diffstat_json(const struct allowlist_report *g)
{
	json_t *files = json_array();
	size_t i, added = 0, deleted = 0;

	for (i = 0; i < g->nfiles; i++) {
		const struct allowlist_file *f = &g->files[i];
		char st[2] = { f->status, '\0' };

		added += f->added;
		deleted += f->deleted;
		/* a path that is not UTF-8 is listed too (U+FFFD for its
		 * bad bytes), not dropped by json_pack */
		json_array_append_new(files, json_pack("{s:s, s:o, s:I, s:I}",
		    "status", st, "path", json_text(f->new_path ? f->new_path :
		    f->old_path), "added", (json_int_t)f->added,
		    "deleted", (json_int_t)f->deleted));
	}
	return json_pack("{s:I, s:I, s:I, s:o}", "files", (json_int_t)g->nfiles,
	    "added", (json_int_t)added, "deleted", (json_int_t)deleted,
	    "paths", files);
}
