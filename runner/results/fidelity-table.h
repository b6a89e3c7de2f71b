/*
 * fidelity-table.h - the fidelity table of a result set: per (engine,
 * model, shots) cell its scores, and against the reference cell of the
 * same (model, shots) the F1 difference in percentage points and the
 * per-item agreement, both over the items the two have in common. The
 * gate, the report and `warden fidelity` all read this one table.
 * Pure: documents in, JSON out.
 */
#ifndef WARDEN_FIDELITY_TABLE_H
#define WARDEN_FIDELITY_TABLE_H

#include <jansson.h>

/*
 * Rows for the fidelity documents docs, compared with the reference
 * documents refs (either may be empty arrays): each {"engine", "model",
 * "shots", "machine", "run_id", "outcome", "items", "weighted_f1",
 * "macro_f1", "accuracy", "parse_failures", "request_failures",
 * "reference"} where reference is null when there is no reference cell,
 * else {"run_id", "engine", "compared", "weighted_f1", "this_f1",
 * "delta_pp", "agreement", "agree"} or {"run_id", "engine", "error"} when
 * the two were measured on different tasks. A cell whose run did not
 * complete (the engine crashed, hung, hit its cap) has null scores and
 * reference {"run_id", "engine", "weighted_f1", "this_f1": null,
 * "delta_pp": null, "agreement": null, "not_measured": its outcome}: no
 * success is not a score of zero, nor a distance from the reference.
 * New reference.
 */
json_t *fidelity_table(const json_t *docs, const json_t *refs);

#endif
