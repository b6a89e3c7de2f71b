/*
 * fuzz-common.c - see fuzz-common.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fuzz-common.h"

void
fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "fuzz: %s:%d: %s\n", file, line, what);
	abort();
}

void
fuzz_check_refusal(const struct werr *err, const struct problems *probs,
    const char *name)
{
	struct buf b = BUF_INIT;
	size_t i;

	fuzz_assert(err->exit == WEXIT_INPUT, "a refusal that is not exit 2");
	fuzz_assert(err->msg != NULL &&
	    strncmp(err->msg, name, strlen(name)) == 0,
	    "a refusal that does not start with the file's name");
	if (probs == NULL)
		return;
	fuzz_assert(probs->n > 0, "an error without a problem");
	for (i = 0; i < probs->n; i++) {
		const struct problem *p = &probs->v[i];

		fuzz_assert(p->file != NULL && strcmp(p->file, name) == 0,
		    "a problem naming another file");
		fuzz_assert(p->msg != NULL && p->msg[0] != '\0',
		    "a problem without a message");
		fuzz_assert(p->line >= 0 && p->col >= 0,
		    "a problem at a negative position");
		buf_reset(&b);
		problem_format(p, &b);
		fuzz_assert(strncmp(buf_cstr(&b), name, strlen(name)) == 0,
		    "a formatted problem without the file's name");
	}
	buf_free(&b);
}
