/*
 * fidelity-score.c - the parse rule and the scores. See fidelity-score.h.
 * Pure: no I/O.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "util.h"
#include "results/fidelity-score.h"

static const char *const parse_names[FIDELITY_PARSE_COUNT] = {
	"exact", "contained", "ambiguous", "no_label", "failed",
};

const char *
fidelity_parse_name(enum fidelity_parse p)
{
	return (unsigned)p < FIDELITY_PARSE_COUNT ? parse_names[p] : "unknown";
}

int
fidelity_parse_from_name(const char *name)
{
	int i;

	for (i = 0; i < FIDELITY_PARSE_COUNT; i++)
		if (strcmp(parse_names[i], name) == 0)
			return i;
	return -1;
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	    c == '\v';
}

static int
is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* Step 1 of the rule, without the stripping of the ends. */
static void
fold(struct buf *out, const char *s, size_t len)
{
	size_t i;
	int space = 0;
	char c;

	buf_reset(out);
	for (i = 0; i < len; i++) {
		c = s[i];
		if (is_space(c)) {
			space = 1;
			continue;
		}
		if (space && out->len > 0)
			buf_addch(out, ' ');
		space = 0;
		buf_addch(out, c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c);
	}
	buf_puts(out, "");
}

static int
is_strip(char c)
{
	return c == ' ' || strchr("\"'`*.:;!", c) != NULL;
}

int
fidelity_parse_answer(enum fidelity_parse *how, const char *const *labels,
    size_t nlabels, const char *answer, size_t len)
{
	struct buf a = BUF_INIT, l = BUF_INIT;
	size_t i, j, k, start, end, found = 0;
	size_t *pos, *plen;
	int *who, label = -1;
	const char *p, *hit;

	fold(&a, answer, len);
	start = 0;
	end = a.len;
	while (start < end && is_strip(a.data[start]))
		start++;
	while (end > start && is_strip(a.data[end - 1]))
		end--;
	for (i = 0; i < nlabels; i++) {
		fold(&l, labels[i], strlen(labels[i]));
		if (l.len == end - start && l.len > 0 &&
		    memcmp(a.data + start, l.data, l.len) == 0) {
			*how = FIDELITY_EXACT;
			buf_free(&a);
			buf_free(&l);
			return (int)i;
		}
	}
	/* Every word-bounded occurrence of every label. */
	pos = xcalloc(1, sizeof(*pos));
	plen = xcalloc(1, sizeof(*plen));
	who = xcalloc(1, sizeof(*who));
	for (i = 0; i < nlabels; i++) {
		fold(&l, labels[i], strlen(labels[i]));
		if (l.len == 0)
			continue;
		for (p = a.data; (hit = strstr(p, l.data)) != NULL;
		    p = hit + 1) {
			k = (size_t)(hit - a.data);
			if ((k > 0 && is_word(a.data[k - 1])) ||
			    is_word(a.data[k + l.len]))
				continue;
			pos = xrealloc(pos, (found + 1) * sizeof(*pos));
			plen = xrealloc(plen, (found + 1) * sizeof(*plen));
			who = xrealloc(who, (found + 1) * sizeof(*who));
			pos[found] = k;
			plen[found] = l.len;
			who[found] = (int)i;
			found++;
		}
	}
	*how = FIDELITY_NO_LABEL;
	for (i = 0; i < found; i++) {
		/* inside a longer occurrence of another label: not counted */
		for (j = 0; j < found; j++)
			if (j != i && plen[j] > plen[i] && pos[j] <= pos[i] &&
			    pos[i] + plen[i] <= pos[j] + plen[j])
				break;
		if (j < found)
			continue;
		if (label == -1) {
			label = who[i];
			*how = FIDELITY_CONTAINED;
		} else if (label != who[i]) {
			*how = FIDELITY_AMBIGUOUS;
		}
	}
	if (*how == FIDELITY_AMBIGUOUS)
		label = -1;
	free(pos);
	free(plen);
	free(who);
	buf_free(&a);
	buf_free(&l);
	return label;
}

static double
ratio(size_t a, size_t b)
{
	return b == 0 ? 0.0 : (double)a / (double)b;
}

void
fidelity_score(struct fidelity_scores *s, const int *gold, const int *pred,
    size_t n, size_t nlabels)
{
	struct fidelity_class_score *c;
	size_t i, counted = 0;
	double wsum = 0, msum = 0;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->nlabels = nlabels;
	s->cls = xcalloc(nlabels + 1, sizeof(*s->cls));
	for (i = 0; i < n; i++) {
		if (gold[i] >= 0 && (size_t)gold[i] < nlabels)
			s->cls[gold[i]].support++;
		if (pred[i] >= 0 && (size_t)pred[i] < nlabels)
			s->cls[pred[i]].predicted++;
		else
			s->none++;
		if (pred[i] >= 0 && pred[i] == gold[i]) {
			s->cls[pred[i]].tp++;
			s->correct++;
		}
	}
	for (i = 0; i < nlabels; i++) {
		c = &s->cls[i];
		c->precision = ratio(c->tp, c->predicted);
		c->recall = ratio(c->tp, c->support);
		c->f1 = c->precision + c->recall > 0 ? 2 * c->precision *
		    c->recall / (c->precision + c->recall) : 0.0;
		wsum += (double)c->support * c->f1;
		if (c->support > 0 || c->predicted > 0) {
			msum += c->f1;
			counted++;
		}
	}
	s->accuracy = ratio(s->correct, n);
	s->weighted_f1 = n > 0 ? wsum / (double)n : 0.0;
	s->macro_f1 = counted > 0 ? msum / (double)counted : 0.0;
}

void
fidelity_scores_free(struct fidelity_scores *s)
{
	free(s->cls);
	s->cls = NULL;
}

json_t *
fidelity_scores_json(const struct fidelity_scores *s,
    const char *const *labels)
{
	json_t *per = json_object();
	size_t i;

	for (i = 0; i < s->nlabels; i++)
		json_object_set_new(per, labels[i], json_pack("{s:I, s:I, s:f, "
		    "s:f, s:f}", "support", (json_int_t)s->cls[i].support,
		    "predicted", (json_int_t)s->cls[i].predicted,
		    "precision", s->cls[i].precision,
		    "recall", s->cls[i].recall, "f1", s->cls[i].f1));
	return json_pack("{s:I, s:I, s:f, s:f, s:f, s:I, s:o}",
	    "items", (json_int_t)s->n, "correct", (json_int_t)s->correct,
	    "accuracy", s->accuracy, "weighted_f1", s->weighted_f1,
	    "macro_f1", s->macro_f1, "none", (json_int_t)s->none,
	    "per_class", per);
}

double
fidelity_agreement(const int *a, const int *b, size_t n, size_t *agree)
{
	size_t i;

	*agree = 0;
	for (i = 0; i < n; i++)
		if (a[i] >= 0 && a[i] == b[i])
			(*agree)++;
	return ratio(*agree, n);
}

json_t *
fidelity_cell_scores(const char *const *labels, size_t nlabels,
    const int *gold, const int *pred, const enum fidelity_parse *how,
    size_t n)
{
	size_t counts[FIDELITY_PARSE_COUNT] = { 0 };
	struct fidelity_scores s;
	json_t *o, *parse = json_object();
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned)how[i] < FIDELITY_PARSE_COUNT)
			counts[how[i]]++;
	for (i = 0; i < FIDELITY_PARSE_COUNT; i++)
		json_object_set_new(parse, parse_names[i],
		    json_integer((json_int_t)counts[i]));
	fidelity_score(&s, gold, pred, n, nlabels);
	o = fidelity_scores_json(&s, labels);
	fidelity_scores_free(&s);
	json_object_set_new(o, "parse", parse);
	json_object_set_new(o, "parse_failures", json_integer((json_int_t)
	    (counts[FIDELITY_AMBIGUOUS] + counts[FIDELITY_NO_LABEL])));
	json_object_set_new(o, "request_failures",
	    json_integer((json_int_t)counts[FIDELITY_FAILED]));
	return o;
}
