/*
 * fuzz-common.h - what the loaders' libFuzzer harnesses share: an
 * assertion that names the broken promise before aborting (libFuzzer then
 * keeps the input), and the check every refusal must pass.
 */
#ifndef WARDEN_FUZZ_COMMON_H
#define WARDEN_FUZZ_COMMON_H

#include "error.h"
#include "schema.h"

/* Abort with "fuzz: WHAT" when cond is false. */
#define fuzz_assert(cond, what) \
	((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, (what)))

void fuzz_fail(const char *file, int line, const char *what)
    __attribute__((noreturn));

/* A loader's refusal: an input error (exit 2) whose message starts with
 * the file's name, and (probs not NULL) problems that each name it, with
 * a message, at a line and column not below 0. */
void fuzz_check_refusal(const struct werr *err, const struct problems *probs,
    const char *name);

#endif
