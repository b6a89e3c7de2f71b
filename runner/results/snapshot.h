/*
 * snapshot.h - a results snapshot: the results tree of a result set
 * (every run document, comparison.json, gate.json, fidelity.json,
 * REPORT.md, the SVG figures under plots/) with manifest.json, which holds the sha256 of
 * every input (policy, adapters, profiles, workloads, warden's version,
 * engine manifests, model digests) and of every output, optionally
 * signed with an SSH key (manifest.json.sig, `ssh-keygen -Y sign -n
 * warden-snapshot`), packed into ID.tar.gz with libarchive.
 *
 * Reproducible, as the reproducible-builds convention asks: members in
 * path order, owner 0:0, mode 0644, every mtime the source date
 * (SOURCE_DATE_EPOCH, else the commit's time), no host names, a gzip
 * header without a time stamp. The same inputs give the same bytes. The
 * ID is the first 16 hex digits of the manifest's sha256.
 * Never prints.
 */
#ifndef WARDEN_SNAPSHOT_H
#define WARDEN_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "buf.h"
#include "error.h"
#include "policy.h"
#include "results/resultset.h"

#define SNAPSHOT_NAMESPACE "warden-snapshot"
#define SNAPSHOT_MANIFEST "results/manifest.json"
#define SNAPSHOT_SIGNATURE "results/manifest.json.sig"

struct snapshot_member {
	char *path;		/* "results/..." */
	struct buf data;
};

struct snapshot {
	struct snapshot_member *m;	/* in path order once built or read */
	size_t n;
	char id[17];
	json_t *manifest;		/* parsed; NULL until built or read */
	struct buf archive;		/* read: the archive's bytes, as read */
	char *disorder;			/* read: the first two members out of
					   path order ("B before A"), or NULL */
};

/*
 * What warden reads of an archive handed to it, before memory is spent:
 * the archive file, and the members' contents together, at most
 * SNAPSHOT_TOTAL_MAX (lowered, never raised, by $WARDEN_SNAPSHOT_MAX_MIB),
 * each member at most SNAPSHOT_MEMBER_MAX, at most SNAPSHOT_MEMBERS_MAX
 * members; each tar header counts 512 bytes. A member is refused by the
 * size its header declares, before its data is read.
 */
#define SNAPSHOT_MEMBER_MAX	((size_t)128 << 20)
#define SNAPSHOT_TOTAL_MAX	((size_t)256 << 20)
#define SNAPSHOT_MEMBERS_MAX	10000

struct snapshot_params {
	const char *repo_root;		/* where inputs are hashed from */
	const struct policy *policy;
	const char *commit;		/* 40 hex: what the results measured */
	int64_t source_date;		/* every mtime, and in the manifest */
	const char *sign_key;		/* an SSH private key, or NULL */
	json_t *merged_from;		/* merge: [{"id", "sha256"}], or NULL */
	const json_t *inputs;		/* merge: the parts' common inputs
					   instead of hashing repo_root */
	struct store *store;		/* the runs' requests, to judge what
					   moved since the results on the
					   official branch; NULL: ratios */
	const char *cycle;		/* the cycle measured, or NULL */
};

/* The signing key: arg, else $WARDEN_SIGNING_KEY, else the repository's
 * git config warden.signingKey (a path relative to repo_root, as `warden
 * init --sign` sets it), else none; an input error when policy requires
 * signatures and there is none. */
struct werr *snapshot_sign_key(const char **key, const struct policy *pol,
    const char *arg, const char *repo_root);
/* git config warden.signingKey of repo_root, made absolute; NULL when
 * unset. Valid until the next call. */
const char *snapshot_configured_key(const char *repo_root);

/* The source date: $SOURCE_DATE_EPOCH when set (it must be a number of
 * seconds), else the time of commit (HEAD when NULL); commit_out gets
 * the commit's 40 hex digits. */
struct werr *snapshot_source_date(int64_t *out, char commit_out[41],
    const char *repo_root, const char *commit);

/* Build the tree of rs, its manifest and (with a key) its signature. */
struct werr *snapshot_build(struct snapshot *s, const struct resultset *rs,
    const struct snapshot_params *p);
void snapshot_free(struct snapshot *s);

/* Add a member (data copied); snapshot_sort() puts members in path
 * order, as every written snapshot has them. */
void snapshot_add(struct snapshot *s, const char *path, const char *data,
    size_t len);
void snapshot_sort(struct snapshot *s);
/* The member at path, or NULL. */
const struct snapshot_member *snapshot_member(const struct snapshot *s,
    const char *path);

/* The archive's bytes as warden writes them: members in s's order, ustar
 * headers (owner 0:0, mode 0644, mtime), one gzip member without a time
 * stamp. */
struct werr *snapshot_archive(struct buf *out, const struct snapshot *s,
    int64_t mtime);
/* Write the archive (atomically: a temporary file renamed); *sha256_out
 * (65 bytes, may be NULL) is the archive's digest. */
struct werr *snapshot_write(const struct snapshot *s, const char *path,
    char *sha256_out);
/*
 * Write the archive to output, or to REPO/snapshots/ID.tar.gz when output
 * is NULL; *summary is {"id", "path", "sha256", "members", "signed",
 * "results_sha256", "passed"} for printing.
 */
struct werr *snapshot_save(json_t **summary, const struct snapshot *s,
    const char *repo_root, const char *output);

/* Write the members under dir (dir/results/...), replacing dir/results. */
struct werr *snapshot_write_tree(const struct snapshot *s, const char *dir);

/* Read every member of an archive within the bounds above (refused
 * naming the member and the bound), keeping its bytes in s->archive: no
 * check beyond its format, regular files with safe names, each once (see
 * verify.h for the checks). */
struct werr *snapshot_read(struct snapshot *s, const char *path);
/* The run documents of a snapshot as a result set (checked). */
struct werr *snapshot_resultset(struct resultset *rs, const struct snapshot *s,
    const char *src);
/* Read an archive handed to gate or publish, verify it (verify.h) with the
 * signers and requirement of the trusted policy of the repository at
 * repo_root (verify_trusted_signers) and return its result set. */
struct werr *snapshot_read_resultset(struct resultset *rs, const char *path,
    const char *repo_root);

/* The canonical bytes of a manifest: sorted keys, two-space indent, a
 * final newline; "manifest_sha256" is the sha256 of these bytes of the
 * manifest without that field. */
char *snapshot_manifest_text(const json_t *manifest);
void snapshot_manifest_seal(json_t *manifest);

#endif
