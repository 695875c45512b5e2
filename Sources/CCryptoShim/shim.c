#include "CCryptoShim.h"

#include <openssl/evp.h>

struct rd_digest {
  EVP_MD_CTX *context;
};

static const EVP_MD *rd_digest_type(rd_digest_algorithm algorithm) {
  switch (algorithm) {
    case RD_DIGEST_SHA256: return EVP_sha256();
    case RD_DIGEST_SHA1: return EVP_sha1();
    case RD_DIGEST_MD5: return EVP_md5();
  }
  return NULL;
}

rd_digest *rd_digest_new(rd_digest_algorithm algorithm) {
  const EVP_MD *type = rd_digest_type(algorithm);
  if (type == NULL) return NULL;
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  if (context == NULL) return NULL;
  if (EVP_DigestInit_ex(context, type, NULL) != 1) {
    EVP_MD_CTX_free(context);
    return NULL;
  }
  rd_digest *digest = (rd_digest *)OPENSSL_malloc(sizeof(rd_digest));
  if (digest == NULL) {
    EVP_MD_CTX_free(context);
    return NULL;
  }
  digest->context = context;
  return digest;
}

int rd_digest_update(rd_digest *digest, const void *bytes, size_t count) {
  if (digest == NULL) return 0;
  if (count == 0) return 1;
  return EVP_DigestUpdate(digest->context, bytes, count);
}

int rd_digest_final(rd_digest *digest, unsigned char *out, unsigned int *length) {
  if (digest == NULL) return 0;
  return EVP_DigestFinal_ex(digest->context, out, length);
}

rd_digest *rd_digest_copy(const rd_digest *digest) {
  if (digest == NULL) return NULL;
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  if (context == NULL) return NULL;
  if (EVP_MD_CTX_copy_ex(context, digest->context) != 1) {
    EVP_MD_CTX_free(context);
    return NULL;
  }
  rd_digest *copy = (rd_digest *)OPENSSL_malloc(sizeof(rd_digest));
  if (copy == NULL) {
    EVP_MD_CTX_free(context);
    return NULL;
  }
  copy->context = context;
  return copy;
}

void rd_digest_free(rd_digest *digest) {
  if (digest == NULL) return;
  EVP_MD_CTX_free(digest->context);
  OPENSSL_free(digest);
}
