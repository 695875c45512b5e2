// The byte scans of CVectorLoops.h: sixteen bytes a step in SSE2 (in every x86-64 processor),
// the tail and other processors a byte at a time. Most text holds none of the bytes looked for,
// so the scan is most of what writing it costs.

#include "CVectorLoops.h"

#if defined(__x86_64__)
#include <emmintrin.h>

// Bytes below 0x20 (unsigned: the minimum with 0x1F is the byte itself).
static inline __m128i below_space(__m128i bytes) {
  return _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1F)), bytes);
}

static inline __m128i equal(__m128i bytes, char byte) {
  return _mm_cmpeq_epi8(bytes, _mm_set1_epi8(byte));
}
#endif

static inline int json_wanted(uint8_t byte) { return byte < 0x20 || byte == '"' || byte == '\\'; }

int cvl_json_needs_escapes(const uint8_t *text, size_t count) {
  size_t position = 0;
#if defined(__x86_64__)
  for (; count - position >= 16; position += 16) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)(text + position));
    __m128i wanted =
        _mm_or_si128(below_space(bytes), _mm_or_si128(equal(bytes, '"'), equal(bytes, '\\')));
    if (_mm_movemask_epi8(wanted)) return 1;
  }
#endif
  for (; position < count; position++) {
    if (json_wanted(text[position])) return 1;
  }
  return 0;
}

static inline int xml_wanted(uint8_t byte) {
  switch (byte) {
  case '<': case '>': case '&': case 0x0D: case 0xEF: return 1;
  case 0x09: case 0x0A: return 0;
  default: return byte < 0x20;
  }
}

int cvl_xml_needs_escaping(const uint8_t *text, size_t count) {
  size_t position = 0;
#if defined(__x86_64__)
  for (; count - position >= 16; position += 16) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)(text + position));
    // Control characters but tab and LF (CR is among them).
    __m128i control = _mm_andnot_si128(
        _mm_or_si128(equal(bytes, 0x09), equal(bytes, 0x0A)), below_space(bytes));
    __m128i markup =
        _mm_or_si128(equal(bytes, '<'), _mm_or_si128(equal(bytes, '>'), equal(bytes, '&')));
    __m128i wanted = _mm_or_si128(control, _mm_or_si128(markup, equal(bytes, (char)0xEF)));
    if (_mm_movemask_epi8(wanted)) return 1;
  }
#endif
  for (; position < count; position++) {
    if (xml_wanted(text[position])) return 1;
  }
  return 0;
}

static inline int plain(uint8_t byte) {
  return (byte >= 0x20 && byte < 0x7F) || byte == 0x09 || byte == 0x0A || byte == 0x0D;
}

int cvl_xml_is_plain_text(const uint8_t *text, size_t count) {
  size_t position = 0;
#if defined(__x86_64__)
  for (; count - position >= 16; position += 16) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)(text + position));
    // 0x7F and above (unsigned: the maximum with 0x7F is the byte itself).
    __m128i high = _mm_cmpeq_epi8(_mm_max_epu8(bytes, _mm_set1_epi8(0x7F)), bytes);
    __m128i breaks =
        _mm_or_si128(equal(bytes, 0x09), _mm_or_si128(equal(bytes, 0x0A), equal(bytes, 0x0D)));
    __m128i control = _mm_andnot_si128(breaks, below_space(bytes));
    if (_mm_movemask_epi8(_mm_or_si128(high, control))) return 0;
  }
#endif
  for (; position < count; position++) {
    if (!plain(text[position])) return 0;
  }
  return 1;
}

int cvl_holds_line_break_or_nul(const uint8_t *text, size_t count) {
  size_t position = 0;
#if defined(__x86_64__)
  for (; count - position >= 16; position += 16) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)(text + position));
    __m128i wanted =
        _mm_or_si128(equal(bytes, 0x00), _mm_or_si128(equal(bytes, 0x0A), equal(bytes, 0x0D)));
    if (_mm_movemask_epi8(wanted)) return 1;
  }
#endif
  for (; position < count; position++) {
    uint8_t byte = text[position];
    if (byte == 0x00 || byte == 0x0A || byte == 0x0D) return 1;
  }
  return 0;
}

// The token bytes, a bit each: 0x00-0x3F in the first word, 0x40-0x7F in the second.
static const uint64_t token_bytes[2] = {
    // ! # $ % & ' * + - . and the digits
    (1ULL << '!') | (1ULL << '#') | (1ULL << '$') | (1ULL << '%') | (1ULL << '&') |
        (1ULL << '\'') | (1ULL << '*') | (1ULL << '+') | (1ULL << '-') | (1ULL << '.') |
        (0x3FFULL << '0'),
    // the letters, ^ _ ` | ~
    (0x3FFFFFFULL << ('A' - 64)) | (0x3FFFFFFULL << ('a' - 64)) | (1ULL << ('^' - 64)) |
        (1ULL << ('_' - 64)) | (1ULL << ('`' - 64)) | (1ULL << ('|' - 64)) |
        (1ULL << ('~' - 64)),
};

int cvl_is_http_token(const uint8_t *text, size_t count) {
  if (count == 0) return 0;
  for (size_t position = 0; position < count; position++) {
    uint8_t byte = text[position];
    if (byte >= 0x80 || !((token_bytes[byte >> 6] >> (byte & 63)) & 1)) return 0;
  }
  return 1;
}
