/*
 * sha256.c - SHA-256 as hex: OpenSSL's EVP on Linux, CommonCrypto on macOS
 * (<CommonCrypto/CommonDigest.h>: CC_SHA256_Init, CC_SHA256_Update,
 * CC_SHA256_Final, each returning 1; the length a CC_LONG, uint32_t, so
 * longer buffers are given in parts).
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef __APPLE__
#include <CommonCrypto/CommonDigest.h>
#else
#include <openssl/evp.h>
#endif

#include "sha256.h"
#include "util.h"

struct sha256_ctx {
#ifdef __APPLE__
	CC_SHA256_CTX cc;
#else
	EVP_MD_CTX *md;
#endif
};

struct sha256_ctx *
sha256_new(void)
{
	struct sha256_ctx *c = xcalloc(1, sizeof(*c));

#ifdef __APPLE__
	CC_SHA256_Init(&c->cc);
#else
	c->md = EVP_MD_CTX_new();
	if (c->md == NULL || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1)
		fatal("sha256 init failed");
#endif
	return c;
}

void
sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
#ifdef __APPLE__
	const unsigned char *p = data;
	CC_LONG part;

	while (len > 0) {
		part = len > UINT32_MAX ? UINT32_MAX : (CC_LONG)len;
		CC_SHA256_Update(&c->cc, p, part);
		p += part;
		len -= part;
	}
#else
	if (EVP_DigestUpdate(c->md, data, len) != 1)
		fatal("sha256 update failed");
#endif
}

void
sha256_final_hex(struct sha256_ctx *c, char *hex_out)
{
	unsigned char d[32];
	size_t i;

#ifdef __APPLE__
	CC_SHA256_Final(d, &c->cc);
#else
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(c->md, d, &n) != 1 || n != 32)
		fatal("sha256 final failed");
	EVP_MD_CTX_free(c->md);
#endif
	for (i = 0; i < 32; i++) {
		static const char hex[] = "0123456789abcdef";

		hex_out[2 * i] = hex[d[i] >> 4];
		hex_out[2 * i + 1] = hex[d[i] & 15];
	}
	hex_out[64] = '\0';
	free(c);
}

void
sha256_hex(const void *data, size_t len, char *hex_out)
{
	struct sha256_ctx *c = sha256_new();

	sha256_update(c, data, len);
	sha256_final_hex(c, hex_out);
}

struct werr *
sha256_file_hex(const char *path, char *hex_out)
{
	struct sha256_ctx *c;
	struct werr *err;
	char chunk[65536];
	ssize_t n;
	int fd;

	if ((err = file_open_regular(&fd, path, NULL)) != NULL)
		return err;
	c = sha256_new();
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		sha256_update(c, chunk, (size_t)n);
	close(fd);
	sha256_final_hex(c, hex_out);
	if (n < 0)
		return werr_errno("read", path);
	return NULL;
}
