/*
 * textgen.c - deterministic replies and fidelity answers. See textgen.h.
 *
 * Pure functions of their inputs. Must never read the clock, use rand(3)
 * or keep hidden state: determinism is the point of the simulated engine.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "textgen.h"
#include "util.h"

/* Words of generated text. Some are multi-byte UTF-8 so that clients meet
 * characters split across writes. None needs JSON escaping. */
static const char *const vocab[] = {
	"the", "engine", "serves", "tokens", "quickly", "and", "memory",
	"stays", "bounded", "while", "requests", "queue", "for", "a", "slot",
	"café", "naïve", "Straße", "東京", "déjà", "vu", "über", "señal",
	"prefill", "decode", "batch", "cache", "latency", "is", "measured",
	"on", "Apple", "Silicon", "π", "≈", "3.14", "résumé", "ünïcödé",
	"🚀", "of", "to", "in", "model", "answer", "stream", "done", "🙂",
	"λ", "—", "ok",
};
#define NVOCAB (sizeof(vocab) / sizeof(vocab[0]))

static const char *const vocab_sp[] = {
	" the", " engine", " serves", " tokens", " quickly", " and", " memory",
	" stays", " bounded", " while", " requests", " queue", " for", " a",
	" slot", " café", " naïve", " Straße", " 東京", " déjà", " vu",
	" über", " señal", " prefill", " decode", " batch", " cache",
	" latency", " is", " measured", " on", " Apple", " Silicon", " π",
	" ≈", " 3.14", " résumé", " ünïcödé", " 🚀", " of", " to", " in",
	" model", " answer", " stream", " done", " 🙂", " λ", " —", " ok",
};

uint64_t
textgen_hash(uint64_t seed, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ textgen_mix(seed);
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return textgen_mix(h);
}

uint64_t
textgen_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

double
textgen_unit(uint64_t seed, uint64_t salt, uint64_t n)
{
	uint64_t x = textgen_mix(seed ^ textgen_mix(salt ^ textgen_mix(n)));

	return (double)(x >> 11) / 9007199254740992.0;
}

int
textgen_count_words(const char *s)
{
	int n = 0, in = 0;

	for (; *s != '\0'; s++) {
		if (isspace((unsigned char)*s))
			in = 0;
		else if (!in) {
			in = 1;
			n++;
		}
	}
	return n;
}

/* Split text into word tokens, each but the first with a leading space. */
static void
split_words(struct textgen_reply *r, const char *text)
{
	const char *p = text, *start;
	struct buf b = BUF_INIT;

	r->nwords = 0;
	r->words = xcalloc((size_t)textgen_count_words(text) + 1,
	    sizeof(char *));
	for (;;) {
		while (*p != '\0' && isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p != '\0' && !isspace((unsigned char)*p))
			p++;
		buf_reset(&b);
		if (r->nwords > 0)
			buf_addch(&b, ' ');
		buf_add(&b, start, (size_t)(p - start));
		r->words[r->nwords++] = buf_detach(&b);
	}
	buf_free(&b);
}

static const char *
gen_word(uint64_t hash, int i, int first)
{
	size_t k = (size_t)(textgen_mix(hash ^ (uint64_t)i) % NVOCAB);

	return first ? vocab[k] : vocab_sp[k];
}

/* Tool arguments: {"query": "w w w"} in n pieces (n >= 2). */
static void
plan_tool(struct textgen_reply *r, int n)
{
	int i;

	if (n < 2)
		n = 2;
	r->words = xcalloc((size_t)n, sizeof(char *));
	r->nwords = n;
	r->words[0] = xstrdup("{\"query\": \"");
	for (i = 1; i < n - 1; i++)
		r->words[i] = xstrdup(gen_word(r->hash, i, i == 1));
	r->words[n - 1] = xstrdup("\"}");
}

static char *
make_huge(size_t bytes)
{
	struct buf b = BUF_INIT;
	size_t i = 0;

	while (b.len < bytes)
		buf_puts(&b, vocab_sp[i++ % NVOCAB]);
	return buf_detach(&b);
}

void
textgen_plan(struct textgen_reply *r, const char *prompt,
    const struct textgen_opts *o)
{
	int body, total;

	memset(r, 0, sizeof(*r));
	r->hash = textgen_hash(o->seed, prompt, strlen(prompt));
	r->n_reasoning = o->reasoning_tokens > 0 ? o->reasoning_tokens : 0;
	r->finish = TEXTGEN_STOP;
	r->body_kind = TEXTGEN_CONTENT;
	if (o->tool_name != NULL) {
		r->body_kind = TEXTGEN_TOOL_ARGS;
		r->finish = TEXTGEN_TOOL_CALLS;
		r->tool_name = xstrdup(o->tool_name);
		plan_tool(r, o->natural_tokens);
		body = r->nwords;
	} else if (o->answer != NULL) {
		split_words(r, o->answer);
		body = r->nwords;
	} else
		body = o->natural_tokens > 0 ? o->natural_tokens : 0;
	total = r->n_reasoning + body;
	if (o->max_tokens >= 0 && total > o->max_tokens) {
		total = o->max_tokens;
		r->finish = TEXTGEN_LENGTH;
		if (r->n_reasoning > total)
			r->n_reasoning = total;
	}
	r->n = total;
	if (o->huge_bytes > 0 && r->body_kind == TEXTGEN_CONTENT &&
	    r->words == NULL)
		r->huge = make_huge(o->huge_bytes);
}

void
textgen_reply_free(struct textgen_reply *r)
{
	int i;

	for (i = 0; i < r->nwords; i++)
		free(r->words[i]);
	free(r->words);
	free(r->tool_name);
	free(r->huge);
	memset(r, 0, sizeof(*r));
}

const char *
textgen_token(const struct textgen_reply *r, int i, enum textgen_kind *kind)
{
	int j;

	if (i < r->n_reasoning) {
		*kind = TEXTGEN_REASONING;
		return gen_word(r->hash ^ 0x5245415345ULL, i, i == 0);
	}
	*kind = r->body_kind;
	j = i - r->n_reasoning;
	if (r->words != NULL)
		return j < r->nwords ? r->words[j] : "";
	if (j == 0 && r->huge != NULL)
		return r->huge;
	return gen_word(r->hash, j, j == 0);
}

char *
textgen_join(const struct textgen_reply *r, enum textgen_kind kind)
{
	struct buf b = BUF_INIT;
	enum textgen_kind k;
	const char *t;
	int i;

	for (i = 0; i < r->n; i++) {
		t = textgen_token(r, i, &k);
		if (k == kind)
			buf_puts(&b, t);
	}
	if (b.len == 0) {
		buf_free(&b);
		return xstrdup("");
	}
	return buf_detach(&b);
}

char *
textgen_classify_id(const char *text)
{
	const char *p = strstr(text, "CLASSIFY id="), *q;

	if (p == NULL)
		return NULL;
	p += strlen("CLASSIFY id=");
	for (q = p; *q != '\0' && !isspace((unsigned char)*q); q++)
		;
	if (q == p)
		return NULL;
	return xstrndup(p, (size_t)(q - p));
}

const char *
textgen_template_bug_text(void)
{
	return "<|im_end|> <|im_start|>user <|im_end|> <|im_start|>assistant";
}

struct label_entry {
	char *id;
	char *label;
};

static int
cmp_entry(const void *a, const void *b)
{
	const struct label_entry *x = a, *y = b;

	return strcmp(x->id, y->id);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Parse one JSONL line into e; returns an error naming path:line. */
static struct werr *
parse_label_line(struct label_entry *e, const char *line, const char *path,
    int lineno)
{
	json_error_t jerr;
	json_t *o, *id, *label;
	struct werr *err = NULL;

	o = json_loads(line, 0, &jerr);
	if (o == NULL)
		return werr_at(path, lineno, jerr.column, NULL, "%s", jerr.text);
	id = json_object_get(o, "id");
	label = json_object_get(o, "label");
	if (json_is_string(id))
		e->id = xstrdup(json_string_value(id));
	else if (json_is_integer(id))
		e->id = xasprintf("%lld", (long long)json_integer_value(id));
	else
		err = werr_at(path, lineno, 0, "id",
		    "'id' must be a string or an integer");
	if (err == NULL && !json_is_string(label))
		err = werr_at(path, lineno, 0, "label",
		    "'label' must be a string");
	if (err == NULL)
		e->label = xstrdup(json_string_value(label));
	json_decref(o);
	return err;
}

static void
index_labels(struct textgen_labels *l, struct label_entry *e, size_t n)
{
	size_t i, j;

	qsort(e, n, sizeof(*e), cmp_entry);
	l->ids = xcalloc(n + 1, sizeof(char *));
	l->label_of = xcalloc(n + 1, sizeof(int));
	l->labels = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		for (j = 0; j < l->nlabels; j++)
			if (strcmp(l->labels[j], e[i].label) == 0)
				break;
		if (j == l->nlabels)
			l->labels[l->nlabels++] = xstrdup(e[i].label);
	}
	qsort(l->labels, l->nlabels, sizeof(char *), cmp_str);
	for (i = 0; i < n; i++) {
		for (j = 0; strcmp(l->labels[j], e[i].label) != 0; j++)
			;
		l->ids[i] = e[i].id;
		l->label_of[i] = (int)j;
		free(e[i].label);
	}
	l->nids = n;
}

struct werr *
textgen_labels_load(struct textgen_labels *l, const char *path)
{
	struct buf text = BUF_INIT;
	struct label_entry *e = NULL;
	struct werr *err;
	size_t n = 0, cap = 0, i;
	char *line, *next;
	int lineno = 0;

	memset(l, 0, sizeof(*l));
	if ((err = file_read(&text, path)) != NULL)
		return err;
	for (line = text.data; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		lineno++;
		if (textgen_count_words(line) == 0)
			continue;
		if (n == cap) {
			cap = cap != 0 ? cap * 2 : 64;
			e = xrealloc(e, cap * sizeof(*e));
		}
		memset(&e[n], 0, sizeof(e[n]));
		if ((err = parse_label_line(&e[n], line, path, lineno)) != NULL)
			break;
		n++;
	}
	if (err == NULL && n > 0) {
		index_labels(l, e, n);
		for (i = 1; i < n && err == NULL; i++)
			if (strcmp(l->ids[i - 1], l->ids[i]) == 0)
				err = werr_at(path, 0, 0, "id",
				    "duplicate id '%s'", l->ids[i]);
	} else if (err != NULL) {
		free(e[n].id);
		for (i = 0; i < n; i++) {
			free(e[i].id);
			free(e[i].label);
		}
	} else
		err = werr_at(path, 0, 0, NULL, "no labels");
	free(e);
	buf_free(&text);
	if (err != NULL)
		textgen_labels_free(l);
	return err;
}

void
textgen_labels_free(struct textgen_labels *l)
{
	size_t i;

	for (i = 0; i < l->nids; i++)
		free(l->ids[i]);
	for (i = 0; i < l->nlabels; i++)
		free(l->labels[i]);
	free(l->ids);
	free(l->labels);
	free(l->label_of);
	memset(l, 0, sizeof(*l));
}

static int
find_id(const struct textgen_labels *l, const char *id)
{
	size_t lo = 0, hi = l->nids, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(id, l->ids[mid]);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

const char *
textgen_labels_gold(const struct textgen_labels *l, const char *id)
{
	int i = find_id(l, id);

	return i < 0 ? NULL : l->labels[l->label_of[i]];
}

const char *
textgen_labels_answer(const struct textgen_labels *l, const char *id,
    uint64_t seed, double accuracy)
{
	uint64_t h;
	size_t other;
	int i = find_id(l, id), gold;

	if (i < 0)
		return NULL;
	gold = l->label_of[i];
	h = textgen_hash(seed, id, strlen(id));
	if (l->nlabels < 2 || textgen_unit(h, 0x616363, 0) < accuracy)
		return l->labels[gold];
	other = (size_t)gold + 1 + (size_t)(textgen_mix(h) % (l->nlabels - 1));
	return l->labels[other % l->nlabels];
}
