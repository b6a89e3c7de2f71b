/*
 * manifest.h - an engine's version manifest: what one environment holds
 * (the engine's own version or commit, the whole dependency closure, the
 * python, pip or brew and toolchain versions, model digests, warden's
 * version), and the difference between two manifests package by package.
 * Triage diffs a broken engine's manifest against its last healthy one
 * with manifest_diff().
 *
 * A manifest is a JSON object (fields and units in doc/update.md "Version
 * manifests"); these functions only read and build JSON: no I/O.
 */
#ifndef WARDEN_UPDATE_MANIFEST_H
#define WARDEN_UPDATE_MANIFEST_H

#include <jansson.h>

#define MANIFEST_SCHEMA 1

/*
 * The packages that differ between two manifests (either may be NULL:
 * no manifest): a new object {name: {"old": V|null, "new": V|null}},
 * names in sorted order; null means absent on that side.
 */
json_t *manifest_diff(const json_t *old_manifest, const json_t *new_manifest);

/* Whether two manifests hold the same version of the engine: the same
 * packages (manifest_diff() is empty) and the same source commit and tag,
 * whatever else (the created time, the toolchain, the models) differs; 0
 * when either is NULL. What `warden update` calls "unchanged". */
int manifest_same_version(const json_t *old_manifest,
    const json_t *new_manifest);

/* Like manifest_diff over two {name: version} package objects. */
json_t *manifest_diff_packages(const json_t *old_packages,
    const json_t *new_packages);

/* sha256 of the canonical JSON (sorted keys, compact) into hex_out (65),
 * without its "created" time: the identity of what ran, the same for
 * the same environment however often it is recorded. */
void manifest_digest(const json_t *manifest, char *hex_out);

/* PEP 503 name: lowercase, runs of '-', '_', '.' as one '-'. Caller frees. */
char *manifest_package_name(const char *name);

/* The version of package name in manifest, or NULL. */
const char *manifest_package_version(const json_t *manifest, const char *name);

#endif
