/*
 * initrepo-workload.c - the small workload `warden init` writes, so that
 * `warden campaign` runs on a new repository at once: per split 3 warmup
 * and 16 timed prompts in the format of workloads/README.md (keys sorted,
 * one JSON object a line), synthetic text from a fixed seed, so the same
 * warden always writes the same bytes. The real splits (100 prompts each,
 * SiliconBench's lengths and output targets) are made by
 * workloads/make-workloads.py of warden's own repository.
 *
 * Never prints; writes nothing itself (initrepo.c writes the text).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "initrepo.h"
#include "util.h"

#define INIT_WARMUPS 3
#define INIT_TIMED 16
#define INIT_MAX_TOKENS 16	/* short replies: the example grid runs in
				   seconds on the simulated engine */

static const char *const words[] = {
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with",
	"be", "by", "on", "not", "this", "are", "or", "from", "at", "which",
	"have", "an", "they", "one", "all", "we", "their", "has", "would",
	"when", "if", "more", "can", "out", "up", "about", "what", "into",
	"kernel", "buffer", "cache", "request", "server", "token", "batch",
	"memory", "queue", "thread", "socket", "engine", "model", "prompt",
	"latency", "throughput", "stream", "decode", "prefill", "context",
	"window", "layer", "weight",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

static const char *const chat_tasks[] = {
	"Summarise the following notes in plain language.",
	"Explain what the following passage says about the system.",
	"Rewrite the following text as a short list of facts.",
};

/* A small deterministic generator (an LCG; the high bits are used). */
static unsigned
next(uint64_t *state, unsigned n)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((*state >> 33) % n);
}

/* nwords synthetic words, a full stop every 17. */
static void
filler(struct buf *b, uint64_t *state, unsigned nwords)
{
	unsigned i;

	for (i = 0; i < nwords; i++)
		buf_printf(b, "%s%s%s", i > 0 ? " " : "",
		    words[next(state, NWORDS)], i % 17 == 16 ? "." : "");
}

static json_t *
agent_tools(void)
{
	return json_pack("[{s:s, s:{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}},"
	    " {s:s, s:{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}}]",
	    "type", "function", "function", "name", "read_file",
	    "description", "Read a file of the repository.",
	    "parameters", "type", "object", "properties", "path", "type",
	    "string", "required", "path",
	    "type", "function", "function", "name", "run_command",
	    "description", "Run a shell command in the repository.",
	    "parameters", "type", "object", "properties", "command", "type",
	    "string", "required", "command");
}

static json_t *
item(uint64_t *state, const char *split, const char *id, int warmup,
    int index)
{
	struct buf text = BUF_INIT;
	unsigned nwords = 15 + next(state, 90);
	int tool_call = index % 4 != 3;	/* three of four agent prompts */
	json_t *o;

	if (strcmp(split, "agent") == 0) {
		buf_puts(&text, "Context:\n");
		filler(&text, state, nwords);
		buf_puts(&text, tool_call ? "\n\nFind where the request queue is "
		    "drained and fix the off-by-one. TOOL_CALL" :
		    "\n\nExplain in two sentences what this module does.");
		o = json_pack("{s:s, s:s, s:[{s:s, s:s}, {s:s, s:s}], s:o, "
		    "s:i, s:b, s:i}", "id", id, "set", warmup ? "warmup" :
		    "timed", "messages", "role", "system", "content",
		    "You are a coding agent working in a repository. Use the "
		    "tools when an action on files or commands is needed; "
		    "otherwise answer directly.", "role", "user", "content",
		    buf_cstr(&text), "tools", agent_tools(), "max_tokens",
		    INIT_MAX_TOKENS, "expect_tool_call", tool_call,
		    "prompt_tokens_approx", (int)(nwords * 13 / 10) + 60);
	} else {
		buf_printf(&text, "%s\n\n", chat_tasks[next(state, 3)]);
		filler(&text, state, nwords);
		o = json_pack("{s:s, s:s, s:[{s:s, s:s}], s:i, s:i}", "id", id,
		    "set", warmup ? "warmup" : "timed", "messages", "role",
		    "user", "content", buf_cstr(&text), "max_tokens",
		    INIT_MAX_TOKENS, "prompt_tokens_approx",
		    (int)(nwords * 13 / 10) + 12);
	}
	buf_free(&text);
	return o;
}

char *
initrepo_workload_text(const char *split)
{
	uint64_t state = 20261203u ^ (uint64_t)strlen(split);
	struct buf out = BUF_INIT;
	char id[64], *line;
	json_t *o;
	int i;

	for (i = 0; i < INIT_WARMUPS + INIT_TIMED; i++) {
		if (i < INIT_WARMUPS)
			snprintf(id, sizeof(id), "%s-w%d", split, i);
		else
			snprintf(id, sizeof(id), "%s-%03d", split,
			    i - INIT_WARMUPS);
		o = item(&state, split, id, i < INIT_WARMUPS,
		    i < INIT_WARMUPS ? i : i - INIT_WARMUPS);
		if (o == NULL || (line = json_dumps(o, JSON_COMPACT |
		    JSON_SORT_KEYS)) == NULL)
			fatal("cannot build the example workload");
		buf_printf(&out, "%s\n", line);
		free(line);
		json_decref(o);
	}
	return buf_detach(&out);
}
