/*
 * search.c - binary search and ddmin over an engine's changes. See
 * search.h. Pure: every test goes through the oracle, and each set is
 * tested at most once.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "util.h"

/* One tested set and its verdict. */
struct seen {
	unsigned char *pinned;
	enum search_verdict v;
};

struct search {
	size_t n;
	size_t budget;		/* 0: none */
	size_t max;		/* the current phase's most runs, for progress */
	const struct search_oracle *o;
	struct seen *seen;
	size_t nseen;
	size_t runs;
	int out_of_budget;
};

const char *
search_purpose_name(enum search_purpose p)
{
	switch (p) {
	case SEARCH_BISECT:
		return "bisect";
	case SEARCH_CONFIRM:
		return "confirm";
	case SEARCH_SUFFICIENCY:
		return "sufficiency";
	case SEARCH_DDMIN:
		return "ddmin";
	case SEARCH_DDMIN_BASE:
		return "ddmin-base";
	case SEARCH_DDMIN_CONFIRM:
		return "ddmin-confirm";
	}
	return "?";
}

const char *
search_kind_name(enum search_kind k)
{
	switch (k) {
	case SEARCH_SINGLE:
		return "single";
	case SEARCH_COMBINATION:
		return "combination";
	case SEARCH_UNEXPLAINED:
		return "unexplained";
	case SEARCH_UNCONFIRMED:
		return "unconfirmed";
	case SEARCH_BUDGET:
		return "budget";
	}
	return "?";
}

size_t
search_bound(size_t n)
{
	size_t b = 0, p = 1;

	while (p < n) {
		p *= 2;
		b++;
	}
	return b + 1;
}

static const struct seen *
lookup(const struct search *s, const unsigned char *pinned)
{
	size_t i;

	for (i = 0; i < s->nseen; i++)
		if (memcmp(s->seen[i].pinned, pinned, s->n) == 0)
			return &s->seen[i];
	return NULL;
}

static void
remember(struct search *s, const unsigned char *pinned, enum search_verdict v)
{
	s->seen = xrealloc(s->seen, (s->nseen + 1) * sizeof(*s->seen));
	s->seen[s->nseen].pinned = xmalloc(s->n);
	memcpy(s->seen[s->nseen].pinned, pinned, s->n);
	s->seen[s->nseen].v = v;
	s->nseen++;
}

/*
 * The verdict with pinned pinned back: remembered, or the oracle's. Out
 * of budget, *out is left alone and *ran 0 (s->out_of_budget set).
 */
static struct werr *
test(struct search *s, const unsigned char *pinned, enum search_purpose p,
    enum search_verdict *out, int *ran)
{
	const struct seen *seen = lookup(s, pinned);
	struct werr *err;
	size_t max;

	*ran = 0;
	if (seen != NULL) {
		*out = seen->v;
		*ran = 1;
		return NULL;
	}
	if (s->budget > 0 && s->runs >= s->budget) {
		s->out_of_budget = 1;
		return NULL;
	}
	max = s->max;
	if (s->budget > 0 && max > s->budget)
		max = s->budget;
	if (max < s->runs + 1)
		max = s->runs + 1;
	if ((err = s->o->test(s->o->arg, pinned, s->n, p, s->runs + 1, max,
	    out)) != NULL)
		return err;
	s->runs++;
	remember(s, pinned, *out);
	*ran = 1;
	return NULL;
}

/* Pin back exactly the listed indexes. */
static void
pin_only(unsigned char *pinned, size_t n, const size_t *idx, size_t k)
{
	size_t i;

	memset(pinned, 0, n);
	for (i = 0; i < k; i++)
		pinned[idx[i]] = 1;
}

/* Pin back everything but the listed indexes (apply only them). */
static void
apply_only(unsigned char *pinned, size_t n, const size_t *idx, size_t k)
{
	size_t i;

	memset(pinned, 1, n);
	for (i = 0; i < k; i++)
		pinned[idx[i]] = 0;
}

/*
 * Binary search; *culprit the one change left when it is confirmed
 * (pinned back alone: healthy; alone applied: failing), else n.
 */
static struct werr *
bisect(struct search *s, size_t *culprit)
{
	size_t *c = xcalloc(s->n, sizeof(*c)), nc = s->n, i, k;
	unsigned char *pinned = xmalloc(s->n);
	enum search_verdict v = SEARCH_FAIL;
	struct werr *err = NULL;
	int ran;

	*culprit = s->n;
	for (i = 0; i < s->n; i++)
		c[i] = i;
	/* halving, then confirming by pinning back, then (from three
	 * changes on) maybe one run to check sufficiency */
	s->max = search_bound(s->n) + (s->n > 2);
	while (nc > 1) {
		k = (nc + 1) / 2;
		pin_only(pinned, s->n, c, k);
		if ((err = test(s, pinned, SEARCH_BISECT, &v, &ran)) != NULL ||
		    !ran)
			goto out;
		if (v == SEARCH_UNRESOLVED)
			goto out;
		if (v == SEARCH_PASS)
			nc = k;
		else {
			memmove(c, c + k, (nc - k) * sizeof(*c));
			nc -= k;
		}
	}
	pin_only(pinned, s->n, c, 1);
	if ((err = test(s, pinned, SEARCH_CONFIRM, &v, &ran)) != NULL || !ran ||
	    v != SEARCH_PASS)
		goto out;
	apply_only(pinned, s->n, c, 1);
	if ((err = test(s, pinned, SEARCH_SUFFICIENCY, &v, &ran)) != NULL ||
	    !ran || v != SEARCH_FAIL)
		goto out;
	*culprit = c[0];
out:
	free(c);
	free(pinned);
	return err;
}

/* Split c (nc) into the k-th of gran near-equal parts: [*from, *to). */
static void
part(size_t nc, size_t gran, size_t k, size_t *from, size_t *to)
{
	*from = nc * k / gran;
	*to = nc * (k + 1) / gran;
}

/*
 * ddmin over the applied changes. *set (caller frees) is the result's
 * indexes, *nset of them; *kind says what they are.
 */
static struct werr *
ddmin(struct search *s, size_t **set, size_t *nset, enum search_kind *kind)
{
	size_t *c = xcalloc(s->n, sizeof(*c)), nc = s->n, gran = 2;
	size_t *t = xcalloc(s->n, sizeof(*t)), nt, i, k, from, to;
	unsigned char *pinned = xmalloc(s->n);
	enum search_verdict v;
	struct werr *err = NULL;
	int ran, found;

	for (i = 0; i < s->n; i++)
		c[i] = i;
	*kind = SEARCH_BUDGET;
	s->max = s->budget > 0 ? s->budget : s->runs + 2 * s->n * s->n;
	memset(pinned, 1, s->n);
	if ((err = test(s, pinned, SEARCH_DDMIN_BASE, &v, &ran)) != NULL ||
	    !ran)
		goto out;
	if (v != SEARCH_PASS) {
		*kind = SEARCH_UNEXPLAINED;
		goto out;
	}
	while (nc > 1) {
		if (gran > nc)
			gran = nc;
		found = 0;
		/* a part alone */
		for (k = 0; k < gran && !found; k++) {
			part(nc, gran, k, &from, &to);
			apply_only(pinned, s->n, c + from, to - from);
			if ((err = test(s, pinned, SEARCH_DDMIN, &v, &ran)) != NULL ||
			    !ran)
				goto out;
			if (v == SEARCH_FAIL) {
				memmove(c, c + from, (to - from) * sizeof(*c));
				nc = to - from;
				gran = 2;
				found = 1;
			}
		}
		/* a complement (with two parts, the other part: done above) */
		for (k = 0; k < gran && !found && gran > 2; k++) {
			part(nc, gran, k, &from, &to);
			nt = 0;
			for (i = 0; i < nc; i++)
				if (i < from || i >= to)
					t[nt++] = c[i];
			apply_only(pinned, s->n, t, nt);
			if ((err = test(s, pinned, SEARCH_DDMIN, &v, &ran)) != NULL ||
			    !ran)
				goto out;
			if (v == SEARCH_FAIL) {
				memcpy(c, t, nt * sizeof(*c));
				nc = nt;
				gran = gran - 1 > 2 ? gran - 1 : 2;
				found = 1;
			}
		}
		if (found)
			continue;
		if (gran >= nc)
			break;
		gran = 2 * gran < nc ? 2 * gran : nc;
	}
	/* 1-minimal: confirm that pinning back exactly c heals */
	pin_only(pinned, s->n, c, nc);
	if ((err = test(s, pinned, SEARCH_DDMIN_CONFIRM, &v, &ran)) != NULL ||
	    !ran)
		goto out;
	*kind = v != SEARCH_PASS ? SEARCH_UNCONFIRMED : nc == 1 ?
	    SEARCH_SINGLE : SEARCH_COMBINATION;
out:
	*set = c;
	*nset = nc;
	free(t);
	free(pinned);
	return err;
}

struct werr *
search_run(struct search_result *res, size_t n, size_t budget,
    const struct search_oracle *oracle)
{
	struct search s;
	unsigned char *none;
	struct werr *err;
	size_t culprit, *set = NULL, nset = 0, i;
	enum search_kind kind;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	s.n = n;
	s.budget = budget;
	s.o = oracle;
	res->culprits = xcalloc(n > 0 ? n : 1, 1);
	if (n == 0) {
		res->kind = SEARCH_UNEXPLAINED;
		return NULL;
	}
	/* nothing pinned back: the broken environment, known to fail */
	none = xcalloc(n, 1);
	remember(&s, none, SEARCH_FAIL);
	free(none);
	if ((err = bisect(&s, &culprit)) != NULL)
		goto out;
	res->bisect_runs = s.runs;
	if (culprit < n) {
		res->kind = SEARCH_SINGLE;
		res->culprits[culprit] = 1;
		goto out;
	}
	if (s.out_of_budget) {
		res->kind = SEARCH_BUDGET;
		goto out;
	}
	res->used_ddmin = 1;
	if ((err = ddmin(&s, &set, &nset, &kind)) != NULL)
		goto out;
	res->kind = kind;
	if (kind != SEARCH_UNEXPLAINED)
		for (i = 0; i < nset; i++)
			res->culprits[set[i]] = 1;
out:
	res->runs = s.runs;
	for (i = 0; i < s.nseen; i++)
		free(s.seen[i].pinned);
	free(s.seen);
	free(set);
	return err;
}

void
search_result_free(struct search_result *res)
{
	free(res->culprits);
	memset(res, 0, sizeof(*res));
}
