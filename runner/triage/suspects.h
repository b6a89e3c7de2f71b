/*
 * suspects.h - the changed packages of broken engines, scored across
 * engines: a change (a package moving to a new version) counts once for
 * every broken engine that took it, and against it once for every
 * healthy engine that took the same release and stayed healthy. The
 * MLX 0.31.1 -> 0.31.2 case: three broken engines took it, none stayed
 * healthy with it, so it leads every one of their lists.
 *
 * Pure JSON in, JSON out: no I/O.
 */
#ifndef WARDEN_TRIAGE_SUSPECTS_H
#define WARDEN_TRIAGE_SUSPECTS_H

#include <jansson.h>

/*
 * engines: {ENGINE: {"status": "broken"|"healthy", "changes":
 * manifest_diff(good, now) (may be absent: nothing to compare), "own":
 * the engine's own package key}}. Returns a new object {ENGINE:
 * [suspect...]} for every broken engine with changes, each list most
 * suspicious first: {"package", "from", "to", "score", "broken_with":
 * [engines], "healthy_with": [engines], "own": bool, "bisectable":
 * bool}. Ties: the engine's own package first, then the change more
 * broken engines took, then by name. A change is bisectable when both
 * versions exist (an added or removed package cannot be pinned back).
 */
json_t *suspects_rank(const json_t *engines);

/* Is the engine's only change its own package? (suspects: its list) */
int suspects_own_release_only(const json_t *suspects);

#endif
