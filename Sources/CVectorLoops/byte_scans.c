// The byte scans of CVectorLoops.h: sixteen bytes a step in SSE2 (in every x86-64 processor),
// the tail and other processors a byte at a time. Most text holds none of the bytes looked for,
// so the scan is most of what writing it costs.

#include <string.h>

#include "CVectorLoops.h"
#include "vector_choice.h"

#if CVL_SSE2
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

// Whether a word holds a byte `json_wanted` takes (the tests of "Bit Twiddling Hacks": a byte
// below n, for n up to 128, and a zero byte, each exact as a yes or no for the whole word).
static inline int json_wanted_in_word(uint64_t word) {
  const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  uint64_t quote = word ^ (ones * '"'), backslash = word ^ (ones * '\\');
  uint64_t below = (word - ones * 0x20) & ~word;
  uint64_t quotes = (quote - ones) & ~quote;
  uint64_t backslashes = (backslash - ones) & ~backslash;
  return ((below | quotes | backslashes) & highs) != 0;
}

int cvl_json_needs_escapes(const uint8_t *text, size_t count) {
  size_t position = 0;
#if CVL_SSE2
  for (; count - position >= 16; position += 16) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)(text + position));
    __m128i wanted =
        _mm_or_si128(below_space(bytes), _mm_or_si128(equal(bytes, '"'), equal(bytes, '\\')));
    if (_mm_movemask_epi8(wanted)) return 1;
  }
#else
  // Without vectors, a word at a time up to the last eight bytes or fewer.
  for (; count - position > 8; position += 8) {
    uint64_t word;
    memcpy(&word, text + position, 8);
    if (json_wanted_in_word(word)) return 1;
  }
#endif
  // What is left (most strings of a result line are short): in two words that overlap where it
  // is shorter than sixteen bytes, or, under eight, in four-byte words made words.
  size_t rest = count - position;
  const uint8_t *tail = text + position;
  if (rest >= 8) {
    uint64_t first, last;
    memcpy(&first, tail, 8);
    memcpy(&last, tail + rest - 8, 8);
    return json_wanted_in_word(first) || json_wanted_in_word(last);
  }
  if (rest >= 4) {
    uint32_t first, last;
    memcpy(&first, tail, 4);
    memcpy(&last, tail + rest - 4, 4);
    return json_wanted_in_word((uint64_t)first << 32 | last);
  }
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
#if CVL_SSE2
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
#if CVL_SSE2
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

#if CVL_SSE2
static inline int breaks_or_nul(const uint8_t *text) {
  __m128i bytes = _mm_loadu_si128((const __m128i *)text);
  __m128i wanted =
      _mm_or_si128(equal(bytes, 0x00), _mm_or_si128(equal(bytes, 0x0A), equal(bytes, 0x0D)));
  return _mm_movemask_epi8(wanted) != 0;
}
#endif

int cvl_holds_line_break_or_nul(const uint8_t *text, size_t count) {
  size_t position = 0;
#if CVL_SSE2
  if (count >= 16) {
    for (; count - position >= 16; position += 16) {
      if (breaks_or_nul(text + position)) return 1;
    }
    // The last sixteen bytes, some of them looked at already: no byte at a time.
    return position < count && breaks_or_nul(text + count - 16);
  }
#endif
  for (; position < count; position++) {
    uint8_t byte = text[position];
    if (byte == 0x00 || byte == 0x0A || byte == 0x0D) return 1;
  }
  return 0;
}

// 1 for the bytes of a token, by byte value (a table: a name costs a load and a test a byte).
// Ten consecutive byte values from `first`.
#define TEN_FROM(first) \
  [first] = 1, [first + 1] = 1, [first + 2] = 1, [first + 3] = 1, [first + 4] = 1, \
  [first + 5] = 1, [first + 6] = 1, [first + 7] = 1, [first + 8] = 1, [first + 9] = 1
static const uint8_t token_bytes[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1,
    ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
    TEN_FROM('0'), TEN_FROM('A'), TEN_FROM('A' + 10), ['A' + 20] = 1,
    ['A' + 21] = 1, ['A' + 22] = 1, ['A' + 23] = 1, ['A' + 24] = 1, ['A' + 25] = 1,
    TEN_FROM('a'), TEN_FROM('a' + 10), ['a' + 20] = 1, ['a' + 21] = 1,
    ['a' + 22] = 1, ['a' + 23] = 1, ['a' + 24] = 1, ['a' + 25] = 1,
};
#undef TEN_FROM

int cvl_is_http_token(const uint8_t *text, size_t count) {
  if (count == 0) return 0;
  for (size_t position = 0; position < count; position++) {
    if (!token_bytes[text[position]]) return 0;
  }
  return 1;
}

int cvl_is_sendable_header_field(const uint8_t *name, size_t name_count, const uint8_t *value,
                                 size_t value_count) {
  return cvl_is_http_token(name, name_count) && !cvl_holds_line_break_or_nul(value, value_count);
}
