/*
 * sign.h - SSH signatures over a snapshot's manifest, made and checked
 * by `ssh-keygen -Y` (as git signs with SSH keys) under the namespace
 * "warden-snapshot", checked against an allowed_signers file (format of
 * ssh-keygen(1), ALLOWED SIGNERS). warden runs ssh-keygen; it never
 * parses or computes a signature itself. Never prints.
 */
#ifndef WARDEN_SIGN_H
#define WARDEN_SIGN_H

#include <stddef.h>

#include "buf.h"
#include "error.h"

/* Sign text with the private key at key_path; the armored signature
 * goes to sig. A key that cannot sign is an error naming ssh-keygen's
 * message (WEXIT_ENV). */
struct werr *sign_manifest(struct buf *sig, const char *key_path,
    const char *text, size_t len);

/* Make an ed25519 key pair without a passphrase at key_path (and
 * key_path.pub) for principal; signer_line gets the allowed_signers line
 * that lets it sign snapshots. WEXIT_ENV when ssh-keygen cannot. */
struct werr *sign_keygen(struct buf *signer_line, const char *key_path,
    const char *principal);

/*
 * An allowed_signers file: its bytes, and the name messages give it (the
 * file's path, or "BRANCH:PATH" when read from the official tree).
 */
struct signers {
	char *name;
	struct buf text;
};

/* Read the allowed_signers file at path (at most FILE_MAX_CONFIG). */
struct werr *signers_read_file(struct signers *s, const char *path);
void signers_free(struct signers *s);

/*
 * Check sig over text against signers: *ok 1 and *detail the principal
 * that signed, or *ok 0 and *detail why not (ssh-keygen's words). An
 * error only when ssh-keygen cannot be run. Caller frees *detail.
 */
struct werr *sign_verify(int *ok, char **detail, const struct signers *signers,
    const char *text, size_t len, const char *sig, size_t siglen);

#endif
