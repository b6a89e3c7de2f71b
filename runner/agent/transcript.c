/*
 * transcript.c - what the agent did, from the program's own transcript
 * in the HOME warden gave it: Claude Code's session
 * (HOME/.claude/projects/PROJECT/SESSION.jsonl) or Codex CLI's
 * (HOME/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl). See
 * agent-private.h.
 *
 * The agent wrote these files, so they are read as hostile: every
 * directory is opened relative to its parent's descriptor with
 * O_NOFOLLOW, only regular files are read, and only up to a cap; what
 * is kept of them is capped too. Never prints.
 */
#include "config.h"

/* The modification time of a struct stat as a timespec: st_mtimespec on
 * macOS (<sys/stat.h> of its SDK), st_mtim elsewhere (POSIX 2008). */
#ifdef __APPLE__
#define ST_MTIME(st) ((st).st_mtimespec)
#else
#define ST_MTIME(st) ((st).st_mtim)
#endif

#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-private.h"
#include "beneath.h"
#include "util.h"

#define TRANSCRIPT_MAX_BYTES	(16u << 20)	/* read at most this much */
#define TRANSCRIPT_MAX_ENTRIES	4096		/* per directory */
#define TRANSCRIPT_MAX_ITEMS	200		/* files, commands kept */
#define TRANSCRIPT_MAX_TEXT	2000		/* bytes of a string kept */

/* Where a program keeps its sessions under HOME, and how deep. */
struct layout {
	const char *program;	/* "claude-code", "codex" */
	const char *dir;	/* under HOME */
	int depth;		/* directories between dir and the file */
	const char *prefix;	/* of the file's name */
};

static const struct layout layouts[] = {
	{ "claude-code", ".claude/projects", 1, "" },
	{ "codex", ".codex/sessions", 3, "rollout-" },
};

struct found {
	int fd;			/* the newest transcript, open; -1 none */
	struct timespec mtime;
	char *name;		/* its path under the layout's dir */
};

static int
newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Open dir's entry name as a directory, never through a link. */
static int
open_dir_at(int dir, const char *name)
{
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

/* Walk dfd (consumed) depth levels down for the newest regular file
 * named PREFIX*.jsonl; keep it open in f. */
static void
walk(struct found *f, int dfd, int depth, const char *prefix,
    const char *path)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	unsigned n = 0;

	if (d == NULL) {
		close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL && n++ < TRANSCRIPT_MAX_ENTRIES) {
		struct stat st;
		char *sub;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), e->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		sub = path[0] ? xasprintf("%s/%s", path, e->d_name) :
		    xstrdup(e->d_name);
		if (depth > 0 && S_ISDIR(st.st_mode)) {
			if ((fd = open_dir_at(dirfd(d), e->d_name)) != -1)
				walk(f, fd, depth - 1, prefix, sub);
		} else if (depth == 0 && S_ISREG(st.st_mode) &&
		    str_startswith(e->d_name, prefix) &&
		    str_endswith(e->d_name, ".jsonl") &&
		    (f->fd == -1 || newer(&ST_MTIME(st), &f->mtime)) &&
		    (fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC)) != -1) {
			struct stat fst;

			/* the file opened must be a regular file */
			if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode)) {
				if (f->fd != -1)
					close(f->fd);
				free(f->name);
				f->fd = fd;
				f->mtime = ST_MTIME(st);
				f->name = sub;
				sub = NULL;
			} else {
				close(fd);
			}
		}
		free(sub);
	}
	closedir(d);
}

/* A string of the transcript, capped, as JSON (never NULL). */
static json_t *
text(const char *s)
{
	json_t *v;
	char *cut;

	if (s == NULL)
		return json_string("");
	if (strlen(s) <= TRANSCRIPT_MAX_TEXT)
		return json_text(s);
	cut = xstrndup(s, TRANSCRIPT_MAX_TEXT);
	v = json_text(cut);
	free(cut);
	return v;
}

/* Append s to the array a (once), up to the cap. */
static void
add_unique(json_t *a, const char *s)
{
	size_t i;
	json_t *x;

	if (s == NULL || json_array_size(a) >= TRANSCRIPT_MAX_ITEMS)
		return;
	json_array_foreach(a, i, x)
		if (strcmp(json_string_value(x), s) == 0)
			return;
	json_array_append_new(a, text(s));
}

struct summary {
	json_t *read, *edited, *commands, *calls;	/* calls: id -> cmd */
	json_t *msg_ids;
	char *final;
	json_int_t in, out;
	double cost;
	int has_cost;
	int turns;
};

/* The exit status "Exit code N" or "Process exited with code N" names. */
static int
exit_code_in(const char *s, int *code)
{
	const char *keys[] = { "exited with code ", "Exit code: ",
	    "Exit code ", NULL };
	const char *p;
	size_t i;

	for (i = 0; s != NULL && keys[i] != NULL; i++)
		if ((p = strstr(s, keys[i])) != NULL) {
			*code = atoi(p + strlen(keys[i]));
			return 1;
		}
	return 0;
}

static void
command_done(struct summary *sm, const char *id, int code)
{
	json_t *c = json_object_get(sm->calls, id);

	if (c != NULL)
		json_object_set_new(c, "exit_code", json_integer(code));
}

static void
command_add(struct summary *sm, const char *id, const char *cmd)
{
	json_t *c;

	if (cmd == NULL || json_array_size(sm->commands) >= TRANSCRIPT_MAX_ITEMS)
		return;
	c = json_pack("{s:o}", "command", text(cmd));
	json_array_append(sm->commands, c);
	if (id != NULL)
		json_object_set(sm->calls, id, c);
	json_decref(c);
}

static void
set_final(struct summary *sm, const char *s)
{
	if (s == NULL || s[0] == '\0')
		return;
	free(sm->final);
	sm->final = xstrndup(s, TRANSCRIPT_MAX_TEXT);
}

/* One line of Claude Code's session. */
static void
claude_line(struct summary *sm, json_t *o)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	json_t *m = json_object_get(o, "message"), *c, *u;
	const char *id = json_string_value(json_object_get(m, "id"));
	size_t i;

	if (type == NULL)
		return;
	if (strcmp(type, "cost-state") == 0 && json_is_number(
	    json_object_get(o, "totalCostUSD"))) {
		sm->cost = json_number_value(json_object_get(o,
		    "totalCostUSD"));
		sm->has_cost = 1;
	}
	if (strcmp(type, "assistant") == 0) {
		/* a message comes a content block a line, with its usage */
		if (id != NULL && json_object_get(sm->msg_ids, id) == NULL &&
		    json_object_size(sm->msg_ids) < 100000) {
			json_object_set_new(sm->msg_ids, id, json_true());
			u = json_object_get(m, "usage");
			sm->in += json_integer_value(json_object_get(u,
			    "input_tokens")) + json_integer_value(
			    json_object_get(u, "cache_read_input_tokens")) +
			    json_integer_value(json_object_get(u,
			    "cache_creation_input_tokens"));
			sm->out += json_integer_value(json_object_get(u,
			    "output_tokens"));
			sm->turns++;
		}
		json_array_foreach(json_object_get(m, "content"), i, c) {
			const char *ct = json_string_value(json_object_get(c,
			    "type"));
			const char *name = json_string_value(json_object_get(c,
			    "name"));
			json_t *in = json_object_get(c, "input");
			const char *file = json_string_value(json_object_get(in,
			    "file_path"));

			if (ct != NULL && strcmp(ct, "text") == 0)
				set_final(sm, json_string_value(
				    json_object_get(c, "text")));
			if (ct == NULL || strcmp(ct, "tool_use") != 0 ||
			    name == NULL)
				continue;
			if (strcmp(name, "Read") == 0)
				add_unique(sm->read, file);
			else if (strcmp(name, "Edit") == 0 ||
			    strcmp(name, "Write") == 0 ||
			    strcmp(name, "MultiEdit") == 0 ||
			    strcmp(name, "NotebookEdit") == 0)
				add_unique(sm->edited, file);
			else if (strcmp(name, "Bash") == 0)
				command_add(sm, json_string_value(
				    json_object_get(c, "id")),
				    json_string_value(json_object_get(in,
				    "command")));
		}
	}
	if (strcmp(type, "user") == 0)
		json_array_foreach(json_object_get(m, "content"), i, c) {
			const char *tid = json_string_value(json_object_get(c,
			    "tool_use_id"));
			json_t *r = json_object_get(c, "content");
			int code = 0;

			if (tid == NULL)
				continue;
			if (json_is_true(json_object_get(c, "is_error")) &&
			    (!json_is_string(r) || !exit_code_in(
			    json_string_value(r), &code)))
				code = 1;
			command_done(sm, tid, code);
		}
}

/* The paths an apply_patch input names. */
static void
patch_files(struct summary *sm, const char *patch)
{
	const char *keys[] = { "*** Update File: ", "*** Add File: ",
	    "*** Delete File: ", NULL };
	const char *p;
	size_t i;

	for (i = 0; patch != NULL && keys[i] != NULL; i++)
		for (p = strstr(patch, keys[i]); p != NULL;
		    p = strstr(p, keys[i])) {
			char *f;

			p += strlen(keys[i]);
			f = xstrndup(p, strcspn(p, "\n"));
			add_unique(sm->edited, f);
			free(f);
		}
}

/* One line of Codex CLI's rollout. */
static void
codex_line(struct summary *sm, json_t *o)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	json_t *p = json_object_get(o, "payload"), *c, *args;
	const char *pt = json_string_value(json_object_get(p, "type"));
	const char *id = json_string_value(json_object_get(p, "call_id"));
	const char *name = json_string_value(json_object_get(p, "name"));
	size_t i;
	int code;

	if (type == NULL || pt == NULL)
		return;
	if (strcmp(type, "event_msg") == 0 && strcmp(pt, "token_count") == 0) {
		json_t *u = json_object_get(json_object_get(p, "info"),
		    "total_token_usage");

		if (u != NULL) {
			sm->in = json_integer_value(json_object_get(u,
			    "input_tokens"));
			sm->out = json_integer_value(json_object_get(u,
			    "output_tokens"));
		}
		sm->turns++;
		return;
	}
	if (strcmp(type, "response_item") != 0)
		return;
	if (strcmp(pt, "function_call") == 0 && name != NULL &&
	    (args = json_loads(json_string_value(json_object_get(p,
	    "arguments")) ? json_string_value(json_object_get(p,
	    "arguments")) : "", 0, NULL)) != NULL) {
		json_t *cmd = json_object_get(args, "cmd");
		const char *line;

		if (cmd == NULL)
			cmd = json_object_get(args, "command");
		/* ["bash", "-lc", "CMD"]: the last one says it */
		line = json_is_array(cmd) ? json_string_value(json_array_get(
		    cmd, json_array_size(cmd) - 1)) : json_string_value(cmd);
		command_add(sm, id, line);
		/* Codex applies an apply_patch command itself: an edit */
		if (line != NULL && str_startswith(line, "apply_patch"))
			patch_files(sm, line);
		json_decref(args);
	} else if (strcmp(pt, "custom_tool_call") == 0 && name != NULL &&
	    strcmp(name, "apply_patch") == 0) {
		patch_files(sm, json_string_value(json_object_get(p, "input")));
	} else if ((strcmp(pt, "function_call_output") == 0 ||
	    strcmp(pt, "custom_tool_call_output") == 0) && id != NULL &&
	    json_is_string(json_object_get(p, "output")) &&
	    exit_code_in(json_string_value(json_object_get(p, "output")),
	    &code)) {
		command_done(sm, id, code);
	} else if (strcmp(pt, "message") == 0 && json_is_string(
	    json_object_get(p, "role")) && strcmp(json_string_value(
	    json_object_get(p, "role")), "assistant") == 0) {
		json_array_foreach(json_object_get(p, "content"), i, c)
			if (json_is_string(json_object_get(c, "text")))
				set_final(sm, json_string_value(
				    json_object_get(c, "text")));
	}
}

json_t *
agent_transcript(const char *home)
{
	struct found f = { -1, { 0, 0 }, NULL };
	struct summary sm;
	const struct layout *l = NULL;
	struct buf b = BUF_INIT;
	struct werr *err;
	json_t *o = NULL;
	const char *s, *nl;
	size_t i;
	struct stat st;
	int fd, too_large;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]) && f.fd == -1;
	    i++) {
		l = &layouts[i];
		if ((err = dir_open_beneath(&fd, home, l->dir)) == NULL)
			walk(&f, fd, l->depth, l->prefix, "");
		werr_free(err);
	}
	if (f.fd == -1)
		return NULL;
	/* one over the cap is named, not read */
	if (fstat(f.fd, &st) == 0 && st.st_size <= TRANSCRIPT_MAX_BYTES) {
		err = file_read_fd_max(&b, f.fd, f.name, TRANSCRIPT_MAX_BYTES);
		too_large = err != NULL;
		werr_free(err);
	} else {
		too_large = 1;
	}
	close(f.fd);
	memset(&sm, 0, sizeof(sm));
	sm.read = json_array();
	sm.edited = json_array();
	sm.commands = json_array();
	sm.calls = json_object();
	sm.msg_ids = json_object();
	for (s = buf_cstr(&b); *s != '\0'; s = nl + (*nl != '\0')) {
		json_t *line;

		nl = s + strcspn(s, "\n");
		line = json_loadb(s, (size_t)(nl - s), 0, NULL);
		if (json_is_object(line)) {
			if (strcmp(l->program, "codex") == 0)
				codex_line(&sm, line);
			else
				claude_line(&sm, line);
		}
		json_decref(line);
	}
	o = json_pack("{s:s, s:o, s:I, s:b, s:o, s:o, s:o, s:o, s:{s:I, s:I}, "
	    "s:i}", "program", l->program, "file", json_text(f.name), "bytes",
	    (json_int_t)b.len, "too_large", too_large, "files_read", sm.read,
	    "files_edited", sm.edited, "commands", sm.commands,
	    "final_message", sm.final ? text(sm.final) : json_null(),
	    "tokens", "input", sm.in, "output", sm.out, "turns", sm.turns);
	json_object_set_new(o, "cost_usd", sm.has_cost ?
	    json_real(sm.cost) : json_null());
	json_decref(sm.calls);
	json_decref(sm.msg_ids);
	free(sm.final);
	free(f.name);
	buf_free(&b);
	return o;
}
