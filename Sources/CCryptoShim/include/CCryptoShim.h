// The one place that includes OpenSSL's headers: streaming message digests through libcrypto's EVP
// interface, as a handful of plain C functions that Swift calls.
#ifndef CCRYPTOSHIM_H
#define CCRYPTOSHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The digests the downloader offers.
typedef enum {
  RD_DIGEST_SHA256 = 0,
  RD_DIGEST_SHA1 = 1,
  RD_DIGEST_MD5 = 2,
} rd_digest_algorithm;

/// An opaque digest in progress.
typedef struct rd_digest rd_digest;

/// A new digest, or NULL when libcrypto cannot provide the algorithm (or memory runs out).
rd_digest *rd_digest_new(rd_digest_algorithm algorithm);

/// Feeds bytes; returns 1 on success, 0 on failure.
int rd_digest_update(rd_digest *digest, const void *bytes, size_t count);

/// Writes the digest (at most 64 bytes) to `out` and its length to `length`; returns 1 on success.
/// The digest cannot be updated afterwards.
int rd_digest_final(rd_digest *digest, unsigned char *out, unsigned int *length);

/// A copy of a digest in progress (to read an intermediate value), or NULL.
rd_digest *rd_digest_copy(const rd_digest *digest);

/// Frees a digest; NULL is ignored.
void rd_digest_free(rd_digest *digest);

#ifdef __cplusplus
}
#endif

#endif
