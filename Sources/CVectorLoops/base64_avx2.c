// The base64 loops of CVectorLoops.h. The technique is the one Wojciech Muła and Daniel Lemire
// describe in "Faster Base64 Encoding and Decoding Using AVX2 Instructions" (ACM Transactions on
// the Web 12(3), 2018): six bits moved into bytes by multiplications, characters made and checked
// by byte shuffles of small tables. No Debian package offers it (libb64 and libbaseencode are
// byte-at-a-time), and Swift cannot ask for AVX2 per function, hence C, with the instructions
// enabled per function and chosen at run time.

#include "CVectorLoops.h"
#include "vector_choice.h"

#if CVL_AVX2

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

static int has_avx2;

// RESUMEDATA_NO_AVX2 (any value) makes a processor with AVX2 look like one without, so that the
// tests can run the SSE2-only case an older x86-64 processor takes.
__attribute__((constructor)) static void cb64v_detect(void) {
  __builtin_cpu_init();
  has_avx2 = __builtin_cpu_supports("avx2") && getenv("RESUMEDATA_NO_AVX2") == NULL ? 1 : 0;
}

int cb64v_available(void) { return has_avx2; }

int cvl_vector_paths(void) { return CVL_SSE2 | (has_avx2 ? 2 : 0); }

// One block: input[0..<24] to out[0..<32].
__attribute__((target("avx2"))) static inline void encode_block(const uint8_t *input,
                                                                uint8_t *out) {
  // Each 128-bit lane takes 12 bytes: the low lane input[0..<12] (loaded from 0), the high lane
  // input[12..<24] (loaded from 8, so that no load reaches past the block), as four groups of
  // three bytes a, b, c each spread over a 32-bit word as the bytes b, a, c, b.
  const __m256i spread = _mm256_setr_epi8(
      1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
      5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14);
  // The word is b | a << 8 | c << 16 | b << 24. Its 6-bit values, each moved to the low bits of
  // its own byte: a >> 2 lies at bits 10-15 and (b & 15) << 2 | c >> 6 at bits 22-27 (a high
  // multiply by 2^6 and 2^10 of each 16-bit half brings them down to bits 0-5 and 16-21);
  // (a & 3) << 4 | b >> 4 lies at bits 4-9 and c & 63 at bits 16-21 (a low multiply by 2^4 and
  // 2^8 takes them up to bits 8-13 and 24-29).
  const __m256i mask_first = _mm256_set1_epi32(0x0FC0FC00);
  const __m256i shift_first = _mm256_set1_epi32(0x04000040);
  const __m256i mask_second = _mm256_set1_epi32(0x003F03F0);
  const __m256i shift_second = _mm256_set1_epi32(0x01000010);
  // A value's character is the value plus an offset that depends on its range: 0-25 'A' - 0,
  // 26-51 'a' - 26, 52-61 '0' - 52, 62 '+' - 62, 63 '/' - 63. The range's index in this table:
  // the saturated value - 51 (0 below 52, then 1-12), and 13 for values below 26.
  const __m256i offsets = _mm256_setr_epi8(
      71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 65, 0, 0,
      71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 65, 0, 0);
  __m128i low = _mm_loadu_si128((const __m128i *)input);
  __m128i high = _mm_loadu_si128((const __m128i *)(input + 8));
  __m256i words = _mm256_shuffle_epi8(
      _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1), spread);
  __m256i first = _mm256_mulhi_epu16(_mm256_and_si256(words, mask_first), shift_first);
  __m256i second = _mm256_mullo_epi16(_mm256_and_si256(words, mask_second), shift_second);
  __m256i values = _mm256_or_si256(first, second);
  __m256i range = _mm256_subs_epu8(values, _mm256_set1_epi8(51));
  __m256i below = _mm256_cmpgt_epi8(_mm256_set1_epi8(26), values);
  range = _mm256_or_si256(range, _mm256_and_si256(below, _mm256_set1_epi8(13)));
  __m256i characters = _mm256_add_epi8(values, _mm256_shuffle_epi8(offsets, range));
  _mm256_storeu_si256((__m256i *)out, characters);
}

__attribute__((target("avx2"))) static size_t encode_avx2(const uint8_t *input, size_t count,
                                                          uint8_t *out) {
  size_t read = 0;
  for (; count - read >= 24; read += 24) encode_block(input + read, out + read / 3 * 4);
  return read;
}

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The groups of fewer than 24 bytes, the last padded with '='; returns the characters written.
static size_t encode_tail(const uint8_t *input, size_t count, uint8_t *out) {
  size_t written = 0;
  // At most seven groups: not worth the vector loop the compiler would otherwise make of it.
#pragma clang loop vectorize(disable) unroll(disable)
  for (; count >= 3; count -= 3, input += 3, written += 4) {
    uint32_t group = (uint32_t)input[0] << 16 | (uint32_t)input[1] << 8 | input[2];
    out[written] = alphabet[group >> 18];
    out[written + 1] = alphabet[group >> 12 & 63];
    out[written + 2] = alphabet[group >> 6 & 63];
    out[written + 3] = alphabet[group & 63];
  }
  if (count > 0) {
    uint32_t group = (uint32_t)input[0] << 16 | (count == 2 ? (uint32_t)input[1] << 8 : 0);
    out[written] = alphabet[group >> 18];
    out[written + 1] = alphabet[group >> 12 & 63];
    out[written + 2] = count == 2 ? alphabet[group >> 6 & 63] : '=';
    out[written + 3] = '=';
    written += 4;
  }
  return written;
}

__attribute__((target("avx2"))) static void encode_lines_avx2(const uint8_t *input, size_t count,
                                                              size_t line_bytes, size_t indent,
                                                              uint8_t *out, uint8_t *end) {
  const uint64_t tabs = 0x0909090909090909u;
  while (count > 0) {
    size_t take = count < line_bytes ? count : line_bytes;
    // The tabs (at most 8) as one word where the text has room for it, the characters after
    // them written over the rest: a call to fill them costs more than the line.
    if (end - out >= 8) {
      memcpy(out, &tabs, 8);
    } else {
      for (size_t tab = 0; tab < indent; tab++) out[tab] = '\t';
    }
    out += indent;
    size_t read = 0;
    for (; take - read >= 24; read += 24, out += 32) encode_block(input + read, out);
    out += encode_tail(input + read, take - read, out);
    *out++ = '\n';
    input += take;
    count -= take;
  }
}

// The decoding constants, made once per call (a handful of loads).
struct decode_constants {
  __m256i by_low, by_high, offsets, nibble, slash, pair_up, join, pack, lanes;
};

__attribute__((target("avx2"))) static inline struct decode_constants decode_constants(void) {
  struct decode_constants k;
  // A byte is in the alphabet when the classes its low nibble rules out (`by_low`) and the class
  // of its high nibble (`by_high`) share no bit. Classes: 0x01 for 0x2_ ('+' and '/' only), 0x02
  // for 0x3_ (digits 0-9 only), 0x04 for 0x4_ and 0x6_ (all but 0x_0), 0x08 for 0x5_ and 0x7_
  // (0x_0 to 0x_A only), 0x10 for every other high nibble (none).
  k.by_low = _mm256_setr_epi8(
      0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1A, 0x1B, 0x1B, 0x1B,
      0x1A, 0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1A, 0x1B, 0x1B,
      0x1B, 0x1A);
  k.by_high = _mm256_setr_epi8(
      0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10,
      0x10, 0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10,
      0x10, 0x10);
  // A character's value is the character plus an offset found by its high nibble, less one for
  // '/' (which shares 0x2_ with '+'): index 1 '/' (63 - 47), 2 '+' (62 - 43), 3 digits (52 - 48),
  // 4 and 5 capitals (-65), 6 and 7 small letters (26 - 97).
  k.offsets = _mm256_setr_epi8(
      0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0,
      0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
  k.nibble = _mm256_set1_epi8(0x0F);
  k.slash = _mm256_set1_epi8('/');
  // Four 6-bit values v0..v3 (in text order) to one 24-bit value: v0 << 6 | v1 and v2 << 6 | v3
  // in 16-bit halves, then the first << 12 | the second in the 32-bit word, whose three low
  // bytes, highest first, are the group's bytes.
  k.pair_up = _mm256_set1_epi32(0x01400140);
  k.join = _mm256_set1_epi32(0x00011000);
  k.pack = _mm256_setr_epi8(
      2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
      2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
  k.lanes = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
  return k;
}

// One block: text[0..<32] to out[0..<24] (exactly: nothing past them is written); 0 when the
// block holds a byte outside the alphabet, having written nothing.
__attribute__((target("avx2"))) static inline int decode_block(
    const struct decode_constants *k, const uint8_t *text, uint8_t *out) {
  __m256i characters = _mm256_loadu_si256((const __m256i *)text);
  __m256i high = _mm256_and_si256(_mm256_srli_epi32(characters, 4), k->nibble);
  __m256i low = _mm256_and_si256(characters, k->nibble);
  __m256i classes = _mm256_and_si256(
      _mm256_shuffle_epi8(k->by_low, low), _mm256_shuffle_epi8(k->by_high, high));
  if (!_mm256_testz_si256(classes, classes)) return 0;
  __m256i index = _mm256_add_epi8(high, _mm256_cmpeq_epi8(characters, k->slash));
  __m256i values = _mm256_add_epi8(characters, _mm256_shuffle_epi8(k->offsets, index));
  __m256i words = _mm256_madd_epi16(_mm256_maddubs_epi16(values, k->pair_up), k->join);
  __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(words, k->pack), k->lanes);
  _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(bytes));
  _mm_storel_epi64((__m128i *)(out + 16), _mm256_extracti128_si256(bytes, 1));
  return 1;
}

// The classes `decode_block` tests of one block's characters (all zero: all alphabet), and the
// block's 24 bytes in the low 24 of a vector.
__attribute__((target("avx2"))) static inline __m256i block_classes(
    const struct decode_constants *k, __m256i characters) {
  __m256i high = _mm256_and_si256(_mm256_srli_epi32(characters, 4), k->nibble);
  __m256i low = _mm256_and_si256(characters, k->nibble);
  return _mm256_and_si256(
      _mm256_shuffle_epi8(k->by_low, low), _mm256_shuffle_epi8(k->by_high, high));
}

__attribute__((target("avx2"))) static inline __m256i block_bytes(
    const struct decode_constants *k, __m256i characters) {
  __m256i high = _mm256_and_si256(_mm256_srli_epi32(characters, 4), k->nibble);
  __m256i index = _mm256_add_epi8(high, _mm256_cmpeq_epi8(characters, k->slash));
  __m256i values = _mm256_add_epi8(characters, _mm256_shuffle_epi8(k->offsets, index));
  __m256i words = _mm256_madd_epi16(_mm256_maddubs_epi16(values, k->pair_up), k->join);
  return _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(words, k->pack), k->lanes);
}

// Whole blocks of text[read..<to], up to the first that is not all alphabet: where they stop;
// `written` grows by the bytes they write.
__attribute__((target("avx2"))) static inline size_t decode_blocks_run(
    const struct decode_constants *k, const uint8_t *text, size_t read, size_t to, uint8_t *out,
    size_t *written) {
  // Four blocks a step, then two, one test for all; each but the last stored whole (32 bytes,
  // the last 8 of them garbage that the next one's bytes then cover), the last exactly: nothing
  // is written past them.
  while (to - read >= 128) {
    __m256i first = _mm256_loadu_si256((const __m256i *)(text + read));
    __m256i second = _mm256_loadu_si256((const __m256i *)(text + read + 32));
    __m256i third = _mm256_loadu_si256((const __m256i *)(text + read + 64));
    __m256i fourth = _mm256_loadu_si256((const __m256i *)(text + read + 96));
    __m256i classes = _mm256_or_si256(
        _mm256_or_si256(block_classes(k, first), block_classes(k, second)),
        _mm256_or_si256(block_classes(k, third), block_classes(k, fourth)));
    if (!_mm256_testz_si256(classes, classes)) break;
    _mm256_storeu_si256((__m256i *)(out + *written), block_bytes(k, first));
    _mm256_storeu_si256((__m256i *)(out + *written + 24), block_bytes(k, second));
    _mm256_storeu_si256((__m256i *)(out + *written + 48), block_bytes(k, third));
    __m256i bytes = block_bytes(k, fourth);
    _mm_storeu_si128((__m128i *)(out + *written + 72), _mm256_castsi256_si128(bytes));
    _mm_storel_epi64((__m128i *)(out + *written + 88), _mm256_extracti128_si256(bytes, 1));
    read += 128;
    *written += 96;
  }
  while (to - read >= 64) {
    __m256i first = _mm256_loadu_si256((const __m256i *)(text + read));
    __m256i second = _mm256_loadu_si256((const __m256i *)(text + read + 32));
    __m256i classes = _mm256_or_si256(block_classes(k, first), block_classes(k, second));
    if (!_mm256_testz_si256(classes, classes)) break;
    _mm256_storeu_si256((__m256i *)(out + *written), block_bytes(k, first));
    __m256i bytes = block_bytes(k, second);
    _mm_storeu_si128((__m128i *)(out + *written + 24), _mm256_castsi256_si128(bytes));
    _mm_storel_epi64((__m128i *)(out + *written + 40), _mm256_extracti128_si256(bytes, 1));
    read += 64;
    *written += 48;
  }
  while (to - read >= 32 && decode_block(k, text + read, out + *written)) {
    read += 32;
    *written += 24;
  }
  return read;
}

__attribute__((target("avx2"))) static size_t decode_avx2(const uint8_t *text, size_t count,
                                                          uint8_t *out) {
  const struct decode_constants k = decode_constants();
  size_t written = 0;
  return decode_blocks_run(&k, text, 0, count, out, &written);
}

// Each byte's 6-bit value in the alphabet, or 0x80 for any other byte.
static const uint8_t sextets[256] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x3E, 0x80, 0x80, 0x80, 0x3F,
    0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3B, 0x3C, 0x3D, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E,
    0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
    0x29, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F, 0x30, 0x31, 0x32, 0x33, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

static inline int is_line_space(uint8_t byte) {
  return byte == ' ' || byte == '\n' || byte == '\t' || byte == '\r';
}

// Whole blocks, then whole groups, of text[read..<to]: where they stop; `written` grows by the
// bytes they write. Inlined always: called once a line of XML data (76 characters), where a call
// and the loops' setup cost as much as the line (without it, 2,600 instructions more a v2 XML
// record once the four-block loop was added).
__attribute__((target("avx2"), always_inline)) static inline size_t decode_run(
    const struct decode_constants *k, const uint8_t *text, size_t read, size_t to, uint8_t *out,
    size_t *written) {
  read = decode_blocks_run(k, text, read, to, out, written);
  // The line's last groups, and the groups of the block that held its end, one at a time.
  while (to - read >= 4) {
    uint32_t a = sextets[text[read]], b = sextets[text[read + 1]];
    uint32_t c = sextets[text[read + 2]], d = sextets[text[read + 3]];
    if ((a | b | c | d) & 0x80) break;
    uint32_t group = a << 18 | b << 12 | c << 6 | d;
    out[*written] = (uint8_t)(group >> 16);
    out[*written + 1] = (uint8_t)(group >> 8);
    out[*written + 2] = (uint8_t)group;
    read += 4;
    *written += 3;
  }
  return read;
}

__attribute__((target("avx2"))) static size_t decode_lines_avx2(const uint8_t *text, size_t count,
                                                                uint8_t *out, size_t *written_out,
                                                                size_t *line) {
  const struct decode_constants k = decode_constants();
  // Groups start at a line's start: a guess of whole groups ends between two of them.
  size_t guess = *line / 4 * 4;
  size_t read = 0;
  size_t written = 0;
  for (;;) {
    while (read < count && is_line_space(text[read])) read++;
    size_t start = read;
    if (guess > 0 && count - read > guess) {
      // The line's groups as far as the guess, without a failed step at its end.
      size_t end = read + guess;
      read = decode_run(&k, text, read, end, out, &written);
      if (read == end && !is_line_space(text[read])) {
        // A line longer than the guess: the rest of it.
        read = decode_run(&k, text, read, count, out, &written);
      }
    } else {
      read = decode_run(&k, text, read, count, out, &written);
    }
    // Groups up to whitespace are a line; anything else ends the groups.
    if (read == count || !is_line_space(text[read])) break;
    guess = read - start;
  }
  *line = guess;
  *written_out = written;
  return read;
}

size_t cb64v_encode_blocks(const uint8_t *input, size_t count, uint8_t *out) {
  return has_avx2 && count >= 24 ? encode_avx2(input, count, out) : 0;
}

size_t cb64v_decode_blocks(const uint8_t *text, size_t count, uint8_t *out) {
  return has_avx2 && count >= 32 ? decode_avx2(text, count, out) : 0;
}

size_t cb64v_decode_lines(const uint8_t *text, size_t count, uint8_t *out, size_t *written,
                          size_t *line) {
  *written = 0;
  return has_avx2 ? decode_lines_avx2(text, count, out, written, line) : 0;
}

int cb64v_encode_lines(const uint8_t *input, size_t count, size_t line_bytes, size_t indent,
                       uint8_t *out) {
  if (!has_avx2 || line_bytes == 0 || line_bytes % 3 != 0 || indent > 8) return 0;
  size_t line = indent + line_bytes / 3 * 4 + 1;
  size_t rest = count % line_bytes;
  size_t length = count / line_bytes * line + (rest > 0 ? indent + (rest + 2) / 3 * 4 + 1 : 0);
  encode_lines_avx2(input, count, line_bytes, indent, out, out + length);
  return 1;
}

#else

int cb64v_available(void) { return 0; }

int cvl_vector_paths(void) { return CVL_SSE2; }

size_t cb64v_encode_blocks(const uint8_t *input, size_t count, uint8_t *out) {
  (void)input;
  (void)count;
  (void)out;
  return 0;
}

size_t cb64v_decode_blocks(const uint8_t *text, size_t count, uint8_t *out) {
  (void)text;
  (void)count;
  (void)out;
  return 0;
}

size_t cb64v_decode_lines(const uint8_t *text, size_t count, uint8_t *out, size_t *written,
                          size_t *line) {
  (void)text;
  (void)count;
  (void)out;
  (void)line;
  *written = 0;
  return 0;
}

int cb64v_encode_lines(const uint8_t *input, size_t count, size_t line_bytes, size_t indent,
                       uint8_t *out) {
  (void)input;
  (void)count;
  (void)line_bytes;
  (void)indent;
  (void)out;
  return 0;
}

#endif
