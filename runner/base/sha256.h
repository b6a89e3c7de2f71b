/*
 * sha256.h - SHA-256 over memory and files (OpenSSL's libcrypto; on macOS
 * CommonCrypto), as lowercase hex.
 */
#ifndef WARDEN_SHA256_H
#define WARDEN_SHA256_H

#include <stddef.h>

#include "error.h"

#define SHA256_HEX_LEN 64

struct sha256_ctx;

struct sha256_ctx *sha256_new(void);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
/* Writes 65 bytes (hex + NUL) and frees c. */
void sha256_final_hex(struct sha256_ctx *c, char *hex_out);
void sha256_hex(const void *data, size_t len, char *hex_out);
struct werr *sha256_file_hex(const char *path, char *hex_out);

#endif
