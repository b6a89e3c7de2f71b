/*
 * fuzz-workload.c - libFuzzer harness for the workload loader: whatever
 * bytes workloads/agent.jsonl holds, workload_parse either refuses them
 * with an input error naming the file (and the line), or gives timed and
 * warmup prompts that are objects with 'messages'; and every request body
 * built from them is one JSON object carrying the model, the line's
 * messages (and tools, on the agent split), streaming with usage.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. Must never
 * write a file, keep state from one input to the next, or leak.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "campaign-input.h"
#include "fuzz-common.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char name[] = "workloads/agent.jsonl";
static const char profile_text[] =
    "{\"schema\": 1, \"name\": \"fuzz\", \"hf_id\": \"org/fuzz\", "
    "\"context_length\": 4096, \"thinking\": {\"supported\": true, "
    "\"switch\": \"enable_thinking\"}, \"engines\": {}}";
static struct profile *profile;

static void
check_body(const struct loadgen_body *body, const json_t *item)
{
	json_error_t jerr;
	json_t *o = json_loadb(body->data, body->len, 0, &jerr);

	fuzz_assert(o != NULL && json_is_object(o), "a body that is not JSON");
	fuzz_assert(json_equal(json_object_get(o, "messages"),
	    json_object_get(item, "messages")), "a body lost its messages");
	fuzz_assert(json_is_true(json_object_get(o, "stream")),
	    "a body that does not stream");
	fuzz_assert(strcmp(json_string_value(json_object_get(o, "model")) ?
	    json_string_value(json_object_get(o, "model")) : "", "m") == 0,
	    "a body for another model");
	fuzz_assert(json_object_get(item, "tools") == NULL ?
	    json_object_get(o, "tools") == NULL :
	    json_equal(json_object_get(o, "tools"),
	    json_object_get(item, "tools")), "a body lost its tools");
	fuzz_assert(json_is_integer(json_object_get(o, "max_tokens")),
	    "a body without max_tokens");
	json_decref(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workload w;
	struct bodies b;
	struct werr *err;
	size_t i;

	if (profile == NULL && profile_load_buffer(&profile, profile_text,
	    strlen(profile_text), "adapters/profiles/fuzz.json", NULL) != NULL)
		fuzz_fail(__FILE__, __LINE__, "the harness's profile");
	memset(&w, 0, sizeof(w));
	w.split = xstrdup("agent");
	err = workload_parse(&w, (const char *)data, size, name);
	if (err != NULL) {
		fuzz_check_refusal(err, NULL, name);
		werr_free(err);
		workload_free(&w);
		return 0;
	}
	fuzz_assert(w.ntimed >= 1, "accepted without a timed prompt");
	for (i = 0; i < w.ntimed; i++)
		fuzz_assert(json_is_array(json_object_get(w.timed[i],
		    "messages")), "a timed prompt without messages");
	bodies_build(&b, &w, 0, 3, "m", profile, 1);
	fuzz_assert(b.ntimed == w.ntimed && b.nwarm <= 3 && b.nwarm <= w.nwarm,
	    "bodies for other prompts");
	for (i = 0; i < b.ntimed; i++)
		check_body(&b.timed[i], w.timed[i]);
	for (i = 0; i < b.nwarm; i++)
		check_body(&b.warm[i], w.warm[i]);
	bodies_free(&b);
	workload_free(&w);
	return 0;
}
