/*
 * publish.c - the cycle's publish step, through runner/results/'s
 * publish_run(), when policy's cycle.publish allows: the round's
 * campaign and fidelity runs, gated by the round's gate step.
 *
 * In the first round, when policy waits for review and the cycle queued
 * fixes still pending, it does not publish: the cycle then stops
 * 'waiting', and its second round, measured at the official tip the
 * approvals moved, publishes. A refusal of publish (a condition that
 * does not hold: a checkout off the official tip, a change no review
 * approved) is the step's outcome, recorded with its reason; only an
 * error of warden's own stops the cycle.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cycle-private.h"
#include "review.h"
#include "util.h"
#include "results/publish.h"
#include "results/snapshot.h"

static int
id_cmp(const void *a, const void *b)
{
	json_int_t x = json_integer_value(*(json_t *const *)a);
	json_int_t y = json_integer_value(*(json_t *const *)b);

	return x < y ? -1 : x > y;
}

/* The review items of this cycle still pending, oldest first; new
 * array. */
static struct werr *
pending_reviews(json_t **out, struct cyc *c)
{
	json_t *ids = cycle_queued_reviews(c), *v, *r;
	struct werr *err = NULL;
	size_t i;

	*out = json_array();
	json_array_foreach(ids, i, v) {
		if ((err = review_show(&r, c->store, json_integer_value(v))) != NULL)
			break;
		if (strcmp(json_string_value(json_object_get(r, "status")),
		    "pending") == 0)
			json_array_append(*out, v);
		json_decref(r);
	}
	json_decref(ids);
	if (err == NULL && json_array_size(*out) > 1) {
		size_t n = json_array_size(*out);
		json_t **all = xcalloc(n, sizeof(*all)), *sorted = json_array();

		for (i = 0; i < n; i++)
			all[i] = json_array_get(*out, i);
		qsort(all, n, sizeof(*all), id_cmp);
		for (i = 0; i < n; i++)
			json_array_append(sorted, all[i]);
		free(all);
		json_decref(*out);
		*out = sorted;
	}
	return err;
}

struct werr *
cycle_step_publish(struct cyc *c, json_t **result, const char **state)
{
	const json_t *camp = cycle_step_result(c, c->round, "campaign");
	const json_t *fid = cycle_step_result(c, c->round, "fidelity");
	const char *runs[2] = { NULL, NULL }, *fruns[2] = { NULL, NULL };
	struct publish_opts po;
	json_t *pending = NULL, *res = NULL;
	struct buf ids = BUF_INIT;
	struct werr *err;
	const char *key = NULL;
	json_t *v;
	size_t i;

	*state = "skipped";
	if (!c->policy->cycle.publish) {
		*result = json_pack("{s:s}", "why", "policy 'cycle.publish' is "
		    "false");
		return NULL;
	}
	if (c->round == 1 && c->policy->cycle.wait_for_review) {
		if ((err = pending_reviews(&pending, c)) != NULL)
			return err;
		if (json_array_size(pending) > 0) {
			json_array_foreach(pending, i, v)
				buf_printf(&ids, "%s%lld", i ? ", " : "",
				    (long long)json_integer_value(v));
			*result = json_pack("{s:s+, s:b, s:o}", "why",
			    "waiting for the review of the cycle's fixes: ",
			    buf_cstr(&ids), "waiting", 1, "reviews", pending);
			buf_free(&ids);
			c->waiting = 1;
			cycle_say(c, CYCLE_DONE, "waiting for review (%zu item%s)",
			    json_array_size(pending), json_array_size(pending) ==
			    1 ? "" : "s");
			return NULL;
		}
		json_decref(pending);
	}
	memset(&po, 0, sizeof(po));
	po.repo_root = c->o->repo_root;
	po.store = c->store;
	po.cycle = c->id;
	runs[0] = json_string_value(json_object_get(camp, "run"));
	fruns[0] = json_string_value(json_object_get(fid, "run"));
	po.campaigns = runs;
	po.ncampaigns = runs[0] != NULL;
	po.fidelity = fruns;
	po.nfidelity = fruns[0] != NULL;
	po.no_fidelity = fruns[0] == NULL;
	if ((err = snapshot_sign_key(&key, c->policy, NULL,
	    c->o->repo_root)) != NULL)
		return err;
	po.sign_key = key;
	cycle_say(c, CYCLE_LIVE, "publishing");
	err = publish_run(&res, &po);
	if (err != NULL && err->exit == WEXIT_PROBLEM) {
		*result = json_pack("{s:s, s:b}", "why", err->msg, "refused", 1);
		cycle_say(c, CYCLE_DONE, "not published: %s", err->msg);
		werr_free(err);
		return NULL;
	}
	if (err != NULL)
		return err;
	*result = res;
	*state = "done";
	cycle_say(c, CYCLE_DONE, "published snapshot %s (tag %s)",
	    json_string_value(json_object_get(res, "snapshot")),
	    json_string_value(json_object_get(res, "tag")));
	return NULL;
}
