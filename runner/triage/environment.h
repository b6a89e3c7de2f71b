/*
 * environment.h - what else an engine ran with, besides its packages and
 * the bench's commits: the OS of the machine, the python and toolchain
 * of its environment, the digests of its models' weights. Triage lists
 * what of it changed between the healthy and the failing cycle as
 * suspects it cannot test (no smoke run brings back an OS), so an
 * incident that nothing explains still says what moved.
 *
 * Pure JSON in, JSON out: no I/O.
 */
#ifndef WARDEN_TRIAGE_ENVIRONMENT_H
#define WARDEN_TRIAGE_ENVIRONMENT_H

#include <jansson.h>

#include "buf.h"

/*
 * The environment of a sweep, from its version manifest (manifest: the
 * engine_manifest of its provenance, or NULL) and its run's OS (os: the
 * run provenance's {"name", "release", "version"}, or NULL): {"os":
 * "NAME RELEASE" | null, "python": "..." | null, "toolchain": {program:
 * version}, "models": {model: sha256}}.
 */
json_t *environment_of(const json_t *manifest, const json_t *os);

/*
 * What changed from good to now (environment_of objects; either may be
 * NULL: nothing is compared then): an array of {"what": "os" | "python" |
 * "toolchain" | "model", "name", "from", "to"} ("from" or "to" null for
 * an item added or gone), in that order, names sorted.
 */
json_t *environment_diff(const json_t *good, const json_t *now);

/* "os Linux 6.1 → Linux 6.5; toolchain cc: gcc 12 → gcc 13; model m:
 * sha256 0123abcd → 4567ef01" (digests cut to 8 characters). */
void environment_text(struct buf *out, const json_t *changes);

#endif
