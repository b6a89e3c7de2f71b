/*
 * fuzz-policy.c - libFuzzer harness for the policy loader: whatever bytes
 * policy/warden.json holds, policy_load_buffer either refuses them with
 * input errors that name the file, or gives a policy whose fields keep
 * the promises policy.h makes; and a policy it accepts, written back out
 * by jansson, is accepted again with the same fields.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. Must never
 * write a file, keep state from one input to the next, or leak.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "policy.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char name[] = "policy/warden.json";

static void
check_policy(const struct policy *p)
{
	size_t i;

	fuzz_assert(p->doc != NULL && json_is_object(p->doc), "no document");
	fuzz_assert(policy_roster(p, p->default_roster) != NULL,
	    "default_roster names no roster");
	fuzz_assert(p->gates.completion_min <= p->gates.completion_of,
	    "completion_min above completion_of");
	fuzz_assert(p->campaign.n_concurrency >= 1, "no concurrency level");
	for (i = 0; i < p->campaign.n_concurrency; i++)
		fuzz_assert(p->campaign.concurrency[i] >= 1,
		    "a concurrency level below 1");
	fuzz_assert(p->campaign.splits.n >= 1, "no split");
	for (i = 0; i < p->gates.required_models.n; i++)
		fuzz_assert(strlist_contains(&p->models,
		    p->gates.required_models.v[i]), "a required model unlisted");
	fuzz_assert(p->caps.max_event_bytes >= 1024, "max_event_bytes < 1 KiB");
	fuzz_assert(p->official_branch != NULL &&
	    p->official_branch[0] != '\0', "empty official_branch");
	fuzz_assert(p->allowlist.n >= 1 && p->allowlist.v[p->allowlist.n] ==
	    NULL, "allowlist not NULL-terminated");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct problems probs = { NULL, 0, 0 };
	struct policy *p = NULL, *again = NULL;
	struct werr *err;
	char *text;

	err = policy_load_buffer(&p, (const char *)data, size, name, &probs);
	if (err != NULL) {
		fuzz_assert(p == NULL, "a policy and an error");
		fuzz_check_refusal(err, &probs, name);
		werr_free(err);
		problems_free(&probs);
		return 0;
	}
	fuzz_assert(probs.n == 0, "problems but no error");
	check_policy(p);
	/* What was accepted is accepted again, written out by jansson. */
	text = json_dumps(p->doc, JSON_INDENT(2));
	fuzz_assert(text != NULL, "accepted policy does not dump");
	err = policy_load_buffer(&again, text, strlen(text), name, NULL);
	fuzz_assert(err == NULL, "accepted policy refused when written back");
	fuzz_assert(json_equal(p->doc, again->doc), "round trip changed it");
	fuzz_assert(strcmp(p->default_roster, again->default_roster) == 0 &&
	    p->caps.max_event_bytes == again->caps.max_event_bytes &&
	    p->n_rosters == again->n_rosters, "round trip changed a field");
	free(text);
	policy_free(again);
	policy_free(p);
	problems_free(&probs);
	return 0;
}
