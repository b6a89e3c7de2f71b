/*
 * official-kinds.c - every kind of move of the official branch, with the
 * journal entry that records it and the store change that completes it
 * (see struct official_kind in official.h). Adding a kind (publish, the
 * cycle) is one line here. Nothing else belongs in this file.
 */
#include "config.h"

#include <stddef.h>

#include "official.h"
#include "review.h"
#include "results/publish.h"

const struct official_kind official_kinds[] = {
	{ "review.approve", "review.approved", review_approve_finish },
	{ "journal.export", NULL, NULL },
	{ "publish", "results.published", publish_finish },
	{ NULL, NULL, NULL },
};
