/*
 * fidelity-score.h - how an answer becomes a prediction, and how
 * predictions are scored against gold: weighted and macro F1, accuracy,
 * and agreement with a reference. Pure functions: no I/O, no store.
 *
 * The parse rule (doc/results.md "Fidelity", warden-fidelity(1)):
 *  1. fold the answer: ASCII letters to lower case, every run of white
 *     space to one space, then strip white space and the characters
 *     " ' ` * . : ; ! at both ends;
 *  2. exact: the folded answer equals a folded label;
 *  3. contained: otherwise, the folded labels found inside the folded
 *     answer at word boundaries (the bytes either side are not ASCII
 *     letters or digits), an occurrence lying inside an occurrence of a
 *     longer label not counted. One distinct label found: that label.
 *     Two or more distinct labels: ambiguous. None: no_label.
 *  A failed request is `failed`. ambiguous, no_label and failed all
 *  predict the extra class `none`, which is wrong for every item and is
 *  never dropped from the score.
 */
#ifndef WARDEN_FIDELITY_SCORE_H
#define WARDEN_FIDELITY_SCORE_H

#include <stddef.h>

#include <jansson.h>

enum fidelity_parse {
	FIDELITY_EXACT = 0,	/* "exact" */
	FIDELITY_CONTAINED,	/* "contained" */
	FIDELITY_AMBIGUOUS,	/* "ambiguous": several labels */
	FIDELITY_NO_LABEL,	/* "no_label": an answer without a label */
	FIDELITY_FAILED,	/* "failed": the request failed, no answer */
	FIDELITY_PARSE_COUNT
};

const char *fidelity_parse_name(enum fidelity_parse p);
/* The enum of a name, or -1. */
int fidelity_parse_from_name(const char *name);

/* The label index answer names by the rule above, or -1 (none); *how
 * says which step decided. */
int fidelity_parse_answer(enum fidelity_parse *how, const char *const *labels,
    size_t nlabels, const char *answer, size_t len);

struct fidelity_class_score {
	size_t support;		/* gold items of the class */
	size_t predicted;	/* items predicted as the class */
	size_t tp;
	double precision, recall, f1;
};

struct fidelity_scores {
	size_t n;		/* items scored */
	size_t correct;
	size_t none;		/* predicted none */
	double accuracy;	/* correct / n */
	double weighted_f1;	/* sum of support x F1 over gold items */
	double macro_f1;	/* mean F1 over labels with support or
				   predictions ("none" excluded) */
	size_t nlabels;
	struct fidelity_class_score *cls;	/* nlabels entries */
};

/*
 * Score n predictions: gold[i] in 0..nlabels-1, pred[i] in
 * 0..nlabels-1 or -1 (none). Precision, recall or F1 whose denominator
 * is 0 is 0. Free with fidelity_scores_free().
 */
void fidelity_score(struct fidelity_scores *s, const int *gold,
    const int *pred, size_t n, size_t nlabels);
void fidelity_scores_free(struct fidelity_scores *s);

/* {"items", "correct", "accuracy", "weighted_f1", "macro_f1", "none",
 * "per_class": {label: {support, predicted, precision, recall, f1}}} */
json_t *fidelity_scores_json(const struct fidelity_scores *s,
    const char *const *labels);

/*
 * The scores of one cell as stored and published: fidelity_scores_json()
 * plus "parse": {exact, contained, ambiguous, no_label, failed} counts,
 * "parse_failures" (ambiguous + no_label) and "request_failures"
 * (failed). New reference.
 */
json_t *fidelity_cell_scores(const char *const *labels, size_t nlabels,
    const int *gold, const int *pred, const enum fidelity_parse *how,
    size_t n);

/* Items on which a and b predict the same label (both none does not
 * count as agreeing); *compared is n. Returns the fraction, 0 for n 0. */
double fidelity_agreement(const int *a, const int *b, size_t n,
    size_t *agree);

#endif
