/*
 * proctree.c - what both halves of proctree.h share: the walk from a set
 * of processes to their descendants. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "proctree.h"
#include "util.h"

struct by_parent {
	pid_t ppid;
	size_t idx;
};

static int
by_parent_cmp(const void *a, const void *b)
{
	const struct by_parent *x = a, *y = b;

	return x->ppid < y->ppid ? -1 : x->ppid > y->ppid;
}

void
proctree_mark_descendants(const struct proc_info *v, size_t n, char *marked)
{
	struct by_parent *kids = xcalloc(n + 1, sizeof(*kids));
	size_t *queue = xcalloc(n + 1, sizeof(*queue));
	size_t i, head = 0, tail = 0, lo, hi, mid;

	/* Children found by their parent's pid in a sorted index, so the
	 * walk is a breadth-first search from the marked processes. */
	for (i = 0; i < n; i++) {
		kids[i].ppid = v[i].ppid;
		kids[i].idx = i;
		if (marked[i])
			queue[tail++] = i;
	}
	qsort(kids, n, sizeof(*kids), by_parent_cmp);
	while (head < tail) {
		pid_t parent = v[queue[head++]].pid;

		lo = 0;
		hi = n;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (kids[mid].ppid < parent)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && kids[lo].ppid == parent; lo++) {
			i = kids[lo].idx;
			if (!marked[i] && v[i].pid != parent) {
				marked[i] = 1;
				queue[tail++] = i;
			}
		}
	}
	free(queue);
	free(kids);
}

struct werr *
proctree_program(struct proc_info **out, size_t *nout, pid_t leader,
    const pid_t *others, size_t nothers, int port)
{
	struct proc_info *v = NULL;
	pid_t self = getpid(), *held = NULL;
	size_t n = 0, nheld = 0, i, j, k = 0;
	struct werr *err;
	char *marked;

	*out = NULL;
	*nout = 0;
	if ((err = proctree_list(&v, &n)) != NULL)
		return err;
	if ((err = proctree_port_listeners(&held, &nheld, port)) != NULL) {
		free(v);
		return err;
	}
	marked = xcalloc(n + 1, 1);
	for (i = 0; i < n; i++) {
		int other = 0;

		if (v[i].pid == self)
			continue;
		for (j = 0; j < nothers; j++)
			if (v[i].pid == others[j] || v[i].pgid == others[j])
				other = 1;
		if (other)
			continue;
		/* Its group and leader; an orphan that came back to this
		 * subreaper; a listener on its port. */
		if (v[i].pid == leader || v[i].pgid == leader ||
		    v[i].ppid == self)
			marked[i] = 1;
		for (j = 0; j < nheld; j++)
			if (v[i].pid == held[j])
				marked[i] = 1;
	}
	proctree_mark_descendants(v, n, marked);
	for (i = 0; i < n; i++)
		if (marked[i] && v[i].pid != self)
			v[k++] = v[i];
	free(marked);
	free(held);
	*out = v;
	*nout = k;
	return NULL;
}
