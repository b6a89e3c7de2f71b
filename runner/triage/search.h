/*
 * search.h - which of an engine's changed packages broke it: binary
 * search for one culprit, Zeller's ddmin for the smallest set of changes
 * when no single package explains the failure, over an oracle that
 * rebuilds the engine with some changes pinned back and runs a smoke
 * sweep.
 *
 * The search knows nothing of pip, campaigns or the store: a test is a
 * set of changes pinned back to their old version (every other change
 * at its new one) and the oracle's verdict. Results of tests are cached,
 * so no set is ever run twice; the test with nothing pinned back (the
 * broken environment itself) is known to fail from the stored campaign
 * and is never run. Pure: no I/O but through the oracle.
 *
 * Bisection (one culprit among n changes, the changes ordered most
 * suspicious first): pin back the first ceil(|C|/2) of the candidates C;
 * healthy: the culprit is among them, else among the rest; after
 * ceil(log2 n) tests one candidate c is left. The culprit is confirmed
 * by a test with c alone pinned back (made only when the halving did not
 * already run it): at most ceil(log2 n) + 1 runs. Then, unless a test
 * already showed it (n = 1, or n = 2), one more run checks that c alone
 * breaks the engine (every change but c pinned back), so a change that
 * breaks only together with another is not blamed alone: when it does
 * not, or the confirmation fails, ddmin takes over.
 *
 * ddmin (Zeller and Hildebrandt 2002) over the changes applied: first
 * pinning back every change must make the engine healthy (else nothing
 * in the versions explains it); then the failing set is reduced, by
 * subsets and complements at growing granularity, to a 1-minimal set
 * (removing any one of its changes makes the engine healthy), which is
 * finally confirmed by pinning back exactly that set. Every run counts
 * against the budget; a search that runs out reports the smallest
 * failing set it found, unconfirmed.
 */
#ifndef WARDEN_TRIAGE_SEARCH_H
#define WARDEN_TRIAGE_SEARCH_H

#include <stddef.h>

#include "error.h"

enum search_verdict {
	SEARCH_PASS,		/* the engine was healthy */
	SEARCH_FAIL,		/* the engine failed */
	SEARCH_UNRESOLVED,	/* no verdict: the environment did not build */
};

/* What a test is for (recorded with it, shown as progress). */
enum search_purpose {
	SEARCH_BISECT,		/* a halving step */
	SEARCH_CONFIRM,		/* the culprit alone pinned back */
	SEARCH_SUFFICIENCY,	/* everything but the culprit pinned back */
	SEARCH_DDMIN,		/* a step of ddmin */
	SEARCH_DDMIN_BASE,	/* every change pinned back */
	SEARCH_DDMIN_CONFIRM,	/* ddmin's set pinned back */
};

const char *search_purpose_name(enum search_purpose p);

struct search_oracle {
	/*
	 * Test the engine with pinned[i] != 0 changes pinned back. k is the
	 * run's number (1-based), max the most runs the current phase may
	 * take (for progress). An error stops the search (and is returned
	 * by search_run); an engine that does not build is a verdict
	 * (SEARCH_UNRESOLVED), not an error.
	 */
	struct werr *(*test)(void *arg, const unsigned char *pinned, size_t n,
	    enum search_purpose purpose, size_t k, size_t max,
	    enum search_verdict *out);
	void *arg;
};

enum search_kind {
	SEARCH_SINGLE,		/* one change, confirmed */
	SEARCH_COMBINATION,	/* a 1-minimal set of 2 or more, confirmed */
	SEARCH_UNEXPLAINED,	/* pinning back every change does not heal */
	SEARCH_UNCONFIRMED,	/* a set found, but pinning it back failed */
	SEARCH_BUDGET,		/* out of runs; culprits: the best so far */
};

const char *search_kind_name(enum search_kind k);

struct search_result {
	enum search_kind kind;
	unsigned char *culprits;	/* n flags; caller frees */
	size_t runs;			/* oracle calls made */
	size_t bisect_runs;		/* of which before ddmin */
	int used_ddmin;
};

/* ceil(log2 n) + 1: the bound of bisection for one culprit among n. */
size_t search_bound(size_t n);

/*
 * Search n changes (n >= 1, most suspicious first) with at most budget
 * oracle runs (0: no limit). Fills res; an error is the oracle's.
 */
struct werr *search_run(struct search_result *res, size_t n, size_t budget,
    const struct search_oracle *oracle);
void search_result_free(struct search_result *res);

#endif
