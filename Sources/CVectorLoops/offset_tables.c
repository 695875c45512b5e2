// The offset table of a binary plist read into machine words, eight entries a step in SSE2 (every
// x86-64 processor), the tail and other processors one at a time. A file of up to 64 KiB, what
// every request archive and most resume blobs are, has entries of one or two bytes.

#include "CVectorLoops.h"
#include "vector_choice.h"

#if CVL_SSE2
#include <emmintrin.h>

// Eight entries, widened to 16 bits: stored as eight words; the lanes outside as all ones.
static inline __m128i store_eight(__m128i entries, __m128i limit, int64_t *out) {
  const __m128i zero = _mm_setzero_si128();
  __m128i low = _mm_unpacklo_epi16(entries, zero);
  __m128i high = _mm_unpackhi_epi16(entries, zero);
  _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi32(low, zero));
  _mm_storeu_si128((__m128i *)(out + 2), _mm_unpackhi_epi32(low, zero));
  _mm_storeu_si128((__m128i *)(out + 4), _mm_unpacklo_epi32(high, zero));
  _mm_storeu_si128((__m128i *)(out + 6), _mm_unpackhi_epi32(high, zero));
  // entry - 8 >= limit, unsigned, in 16 bits (the limit capped: see the caller): the saturating
  // difference limit - (entry - 8) is 0.
  __m128i shifted = _mm_sub_epi16(entries, _mm_set1_epi16(8));
  return _mm_cmpeq_epi16(_mm_subs_epu16(limit, shifted), zero);
}
#endif

int cvl_read_offsets(const uint8_t *table, size_t count, size_t width, uint64_t limit,
                     int64_t *out) {
  if (width != 1 && width != 2) return -1;
  size_t index = 0;
  // Unsigned: an entry below 8 wraps around to a huge value and fails the same test.
  uint64_t outside = 0;
#if CVL_SSE2
  // Entries are below 0x10000, so a limit above 0xFFF8 refuses only entries below 8, as 0xFFF8
  // does once they are taken 8 from in 16 bits (to 0xFFF8 or more, where every other entry less
  // 8 is at most 0xFFF7).
  __m128i capped = _mm_set1_epi16((short)(limit < 0xFFF8 ? limit : 0xFFF8));
  __m128i flags = _mm_setzero_si128();
  if (width == 2) {
    for (; count - index >= 8; index += 8) {
      __m128i raw = _mm_loadu_si128((const __m128i *)(table + index * 2));
      __m128i entries = _mm_or_si128(_mm_slli_epi16(raw, 8), _mm_srli_epi16(raw, 8));
      flags = _mm_or_si128(flags, store_eight(entries, capped, out + index));
    }
  } else {
    for (; count - index >= 8; index += 8) {
      __m128i raw = _mm_loadl_epi64((const __m128i *)(table + index));
      __m128i entries = _mm_unpacklo_epi8(raw, _mm_setzero_si128());
      flags = _mm_or_si128(flags, store_eight(entries, capped, out + index));
    }
  }
  outside = _mm_movemask_epi8(flags) != 0;
#endif
  for (; index < count; index++) {
    uint64_t offset = width == 2 ? (uint64_t)table[index * 2] << 8 | table[index * 2 + 1]
                                 : table[index];
    outside |= (uint64_t)(offset - 8 >= limit);
    out[index] = (int64_t)offset;
  }
  return outside != 0;
}
