#ifndef CBASE64_VECTOR_H
#define CBASE64_VECTOR_H

#include <stddef.h>
#include <stdint.h>

// Base64 (RFC 4648's alphabet) in 256-bit vectors, for the inner loops of PropertyList's
// Base64Groups: whole blocks only, the rest left to the caller's scalar loops. Each function runs
// only where the processor has AVX2 (checked once, at load time), and otherwise does nothing and
// returns 0, so callers need no check of their own.

/// Whether the vector loops run on this processor.
int cb64v_available(void);

/// Encodes the whole blocks of 24 bytes at the start of `input` (`count` bytes) into 32
/// characters each at `out`, and returns how many bytes it read (a multiple of 24). Reads only
/// `input[0..<count]`; writes only the characters of the blocks it read.
size_t cb64v_encode_blocks(const uint8_t *input, size_t count, uint8_t *out);

/// Decodes the blocks of 32 alphabet characters at the start of `text` (`count` bytes) into 24
/// bytes each at `out`, up to the first block holding any other byte (padding, whitespace, a wrong
/// byte) or fewer than 32 characters, and returns how many characters it read (a multiple of 32).
/// Reads only `text[0..<count]`; writes only the bytes of the blocks it read.
size_t cb64v_decode_blocks(const uint8_t *text, size_t count, uint8_t *out);

#endif
