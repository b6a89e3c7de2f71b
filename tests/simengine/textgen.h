/*
 * textgen.h - what warden-simengine says: deterministic replies, the
 * prompt-token rule, tool calls and fidelity-task answers.
 *
 * Everything here is a pure function of (seed, prompt, options): the same
 * request to an engine with the same seed gets the same bytes, and tests
 * can compute in advance what the engine will answer. No HTTP, no clock.
 *
 * Prompt tokens: the number of whitespace-separated words over the text
 * content of all messages, in order (tool definitions are not counted).
 */
#ifndef SIM_TEXTGEN_H
#define SIM_TEXTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum textgen_kind {
	TEXTGEN_REASONING,
	TEXTGEN_CONTENT,
	TEXTGEN_TOOL_ARGS,
};

enum textgen_finish {
	TEXTGEN_STOP,
	TEXTGEN_LENGTH,
	TEXTGEN_TOOL_CALLS,
};

/* A planned reply: n tokens, the first n_reasoning of them reasoning. */
struct textgen_reply {
	uint64_t hash;			/* of seed and prompt */
	int n;
	int n_reasoning;
	enum textgen_kind body_kind;
	enum textgen_finish finish;
	char **words;			/* fixed body tokens, or NULL = generated */
	int nwords;
	char *tool_name;		/* for TEXTGEN_TOOL_ARGS */
	char *huge;			/* replaces the first body token if set */
};

struct textgen_opts {
	uint64_t seed;
	int natural_tokens;		/* length of a free-text answer */
	int max_tokens;			/* request's cap; < 0 = none */
	int reasoning_tokens;
	const char *answer;		/* classification answer, or NULL */
	const char *tool_name;		/* answer with a tool call, or NULL */
	size_t huge_bytes;		/* one very large first body token */
};

/* 64-bit FNV-1a over data, mixed with seed. */
uint64_t textgen_hash(uint64_t seed, const void *data, size_t len);
/* splitmix64 step: a well-mixed value from x. */
uint64_t textgen_mix(uint64_t x);
/* A deterministic number in [0, 1) from (seed, salt, n). */
double textgen_unit(uint64_t seed, uint64_t salt, uint64_t n);
/* The prompt-token rule: whitespace-separated words in s. */
int textgen_count_words(const char *s);

void textgen_plan(struct textgen_reply *r, const char *prompt,
    const struct textgen_opts *o);
void textgen_reply_free(struct textgen_reply *r);
/* Text of token i (0 <= i < r->n) and its kind. Never NULL; valid until
 * the reply is freed. */
const char *textgen_token(const struct textgen_reply *r, int i,
    enum textgen_kind *kind);
/* The whole text of one kind, concatenated (caller frees). */
char *textgen_join(const struct textgen_reply *r, enum textgen_kind kind);

/* The gold labels of the fidelity task, from --labels (JSONL). */
struct textgen_labels {
	char **ids;			/* sorted */
	int *label_of;			/* index into labels, parallel to ids */
	size_t nids;
	char **labels;			/* distinct, sorted */
	size_t nlabels;
};

struct werr *textgen_labels_load(struct textgen_labels *l, const char *path);
void textgen_labels_free(struct textgen_labels *l);
/* The gold label of id, or NULL if unknown. */
const char *textgen_labels_gold(const struct textgen_labels *l,
    const char *id);
/*
 * The engine's answer for id: the gold label with probability accuracy
 * (decided by a hash of seed and id), else another label of the set.
 * NULL if id is unknown.
 */
const char *textgen_labels_answer(const struct textgen_labels *l,
    const char *id, uint64_t seed, double accuracy);
/* Find "CLASSIFY id=<id>" in text; returns the id (caller frees) or NULL. */
char *textgen_classify_id(const char *text);
/* The reply of an engine with the chat-template bug: no label in it. */
const char *textgen_template_bug_text(void);

#endif
