/*
 * store-review.h - the review queue's tables: reviews and
 * review_evidence (migration 2 of store-migrations.c). The one place that knows the
 * review queue's SQL.
 *
 * These functions only read and write rows: they never begin, commit or
 * roll back a transaction (review.c does, so a state change and its
 * journal entry land in one transaction), never judge a state change
 * (whether a review may be decided is review.c's call) and never print.
 */
#ifndef WARDEN_STORE_REVIEW_H
#define WARDEN_STORE_REVIEW_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "store.h"

/* A change to queue; strings are not copied. */
struct store_review_new {
	const char *source;		/* agent, community, triage */
	const char *author;		/* "Name <email>" */
	const char *note;		/* "" for none */
	const char *created;		/* UTC ISO time */
	const char *base_commit;	/* hex */
	const char *patch;
	size_t len;			/* of patch */
	const char *gate;		/* the gate result, JSON text */
};

/* Insert a pending review with an empty commit id; *id_out is its id. */
struct werr *store_review_insert(struct store *store,
    const struct store_review_new *r, int64_t *id_out);
/* Record the queued commit of review id. */
struct werr *store_review_set_commit(struct store *store, int64_t id,
    const char *commit);

/* The fields a decision needs; each NULL when the column is. */
struct store_review {
	char *status;			/* pending, approved, rejected */
	char *patch;
	char *commit_id;		/* the queued commit, hex */
	char *source;			/* agent, community, triage */
};

/* Read review id into *out (free with store_review_free); *found is 0
 * and *out empty when there is no such review. */
struct werr *store_review_get(struct store *store, int64_t id, int *found,
    struct store_review *out);
void store_review_free(struct store_review *r);

/* Every review (status NULL) or those of one status, by id, as an array
 * of objects named by their columns (without patch and gate). */
struct werr *store_review_list(struct store *store, const char *status,
    json_t **out);
/* Review id as an array of zero or one object: the list's columns plus
 * patch and gate (gate as stored: JSON text). */
struct werr *store_review_row(struct store *store, int64_t id,
    json_t **out);
/* The evidence of review id, oldest first, as an array of {"time",
 * "kind", "body"} (body parsed; null when it does not parse). */
struct werr *store_review_evidence(struct store *store, int64_t id,
    json_t **out);

/* A decision on a pending review. */
struct store_review_decision {
	const char *status;		/* "approved" or "rejected" */
	const char *decided;		/* UTC ISO time */
	const char *by;
	const char *comment;		/* may be NULL */
	const char *merged_commit;	/* NULL: left as it is */
};

/* Decide review id if it is still pending (else nothing changes). */
struct werr *store_review_decide(struct store *store, int64_t id,
    const struct store_review_decision *d);

/* Attach evidence (body: JSON text) to review id; *found is 0 and nothing
 * is written when there is no such review. */
struct werr *store_review_add_evidence(struct store *store, int64_t id,
    const char *time, const char *kind, const char *body, int *found);

#endif
