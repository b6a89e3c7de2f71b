/*
 * fuzz-profile.c - libFuzzer harness for the model profile loader:
 * whatever bytes adapters/profiles/fuzz.json holds, profile_load_buffer
 * either refuses them with input errors naming the file, or gives a
 * profile that keeps adapter.h's promises (its name is the file's, a
 * digest is 64 lowercase hex digits, an engine either serves a model or
 * says why not), and what it accepts, written back out, is accepted again.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. Must never
 * write a file, keep state from one input to the next, or leak.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "fuzz-common.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char name[] = "adapters/profiles/fuzz.json";

static void
check_profile(const struct profile *p)
{
	size_t i, j;

	fuzz_assert(p->name != NULL && strcmp(p->name, "fuzz") == 0,
	    "name is not the file's");
	for (i = 0; i < p->n_engines; i++) {
		const struct profile_engine *e = &p->engines[i];

		fuzz_assert(e->engine != NULL && e->engine[0] != '\0',
		    "an engine without a name");
		fuzz_assert(profile_engine(p, e->engine) == e,
		    "profile_engine finds another entry");
		fuzz_assert((e->model != NULL) != (e->unsupported != NULL),
		    "an engine that neither serves a model nor says why");
		if (e->sha256 != NULL) {
			fuzz_assert(strlen(e->sha256) == 64, "a short digest");
			for (j = 0; j < 64; j++)
				fuzz_assert(strchr("0123456789abcdef",
				    e->sha256[j]) != NULL,
				    "a digest that is not lowercase hex");
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct problems probs = { NULL, 0, 0 };
	struct profile *p = NULL, *again = NULL;
	struct werr *err;
	char *text;

	err = profile_load_buffer(&p, (const char *)data, size, name, &probs);
	if (err != NULL) {
		fuzz_assert(p == NULL, "a profile and an error");
		fuzz_check_refusal(err, &probs, name);
		werr_free(err);
		problems_free(&probs);
		return 0;
	}
	fuzz_assert(probs.n == 0, "problems but no error");
	check_profile(p);
	text = json_dumps(p->doc, JSON_INDENT(2));
	fuzz_assert(text != NULL, "accepted profile does not dump");
	err = profile_load_buffer(&again, text, strlen(text), name, NULL);
	fuzz_assert(err == NULL, "accepted profile refused when written back");
	fuzz_assert(json_equal(p->doc, again->doc), "round trip changed it");
	free(text);
	profile_free(again);
	profile_free(p);
	problems_free(&probs);
	return 0;
}
