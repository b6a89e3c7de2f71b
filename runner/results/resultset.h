/*
 * resultset.h - a result set: the per-run documents a snapshot publishes,
 * each named by the path it gets in the results tree, built from the
 * store (campaign and fidelity runs) or read back from a snapshot.
 *
 *   results/MODEL/SPLIT/ENGINE_RUNID.json          a campaign run's sweeps
 *       of one engine, model and split ("concurrency_results", memory
 *       traces, provenance)
 *   results/fidelity/MODEL/ENGINE_RUNID.json       a fidelity run's cells
 *       of one engine and model (scores and every prediction)
 *   results/fidelity/reference/MODEL/ENGINE_RUNID.json   the same, of
 *       the reference
 *
 * Files are named by run id, never by file times. A document's bytes are
 * resultset_doc_text(): sorted keys, two-space indent, reals to 10
 * significant digits, so reading a document back and writing it again
 * gives the same bytes. The set's digest covers every document, so the
 * gate's record and a publish can name exactly what was judged.
 * Never prints.
 */
#ifndef WARDEN_RESULTSET_H
#define WARDEN_RESULTSET_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "sha256.h"
#include "store.h"

struct resultset {
	json_t *docs;		/* path -> document */
};

void resultset_init(struct resultset *rs);
void resultset_free(struct resultset *rs);

/* Add the documents of a finished campaign run; each concurrency result
 * carries its status (campaign_level_status, by pol's completion line)
 * beside its outcome. */
struct werr *resultset_add_campaign(struct resultset *rs, struct store *store,
    const struct policy *pol, const char *repo_root, const char *run_id);
/* Add the documents of a finished fidelity run; as the reference when
 * ref_engine is set, then only that engine's cells. */
struct werr *resultset_add_fidelity(struct resultset *rs, struct store *store,
    const char *run_id, const char *ref_engine);
/* Add a document read from a snapshot: its path must be one of the forms
 * above and agree with the document; src names the snapshot in errors.
 * A campaign document's memory figures are renamed to the glossary's
 * names (campaign_sweep_names), so a snapshot made before the names were
 * one is read, judged and merged under the names warden writes now. */
struct werr *resultset_add_doc(struct resultset *rs, const char *path,
    json_t *doc, const char *src);

/*
 * Check that no cell is measured twice: a campaign cell is (machine,
 * engine, model, split, concurrency), a fidelity cell (machine, engine,
 * model, shots); a reference has at most one cell per (model, shots).
 * The error (WEXIT_INPUT) names the cell and both documents.
 */
struct werr *resultset_check(const struct resultset *rs);

/* The bytes of a document as published (caller frees). */
char *resultset_doc_text(const json_t *doc);
/* sha256 of "PATH SHA256\n" for every document, in path order. */
void resultset_digest(const struct resultset *rs, char out[SHA256_HEX_LEN + 1]);
/* {"campaign": [run ids], "fidelity": [...], "reference": [...]}. */
json_t *resultset_runs(const struct resultset *rs);
/* The documents of one kind ("campaign", "fidelity", "reference") in
 * path order, borrowed into a new array. */
json_t *resultset_docs(const struct resultset *rs, const char *kind);

#endif
