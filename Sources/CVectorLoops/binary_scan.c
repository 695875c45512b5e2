// The binary property-list view's one-pass scan (PropertyList's BinaryLinearScan.swift says what
// it decides and why), in C: the scan is most of what checking a request archive costs, and this
// one is about a tenth cheaper than the Swift one it replaces (strings checked sixteen bytes a
// step, only the strings that are keys fingerprinted, the common kinds tested first). Every check
// is the Swift reference scan's, made in the same terms (signed limits, wrapping visit counts), so
// that the two accept the same files and record the same contents;
// `BinaryViewDifferential.scanDifference` compares them.

#include <string.h>

#include "CVectorLoops.h"
#include "vector_choice.h"

#if CVL_SSE2
#include <emmintrin.h>
#endif

// A big-endian unsigned integer of 1 to 8 bytes.
static inline uint64_t read_sized(const uint8_t *at, int64_t size) {
  switch (size) {
  case 1: return at[0];
  case 2: return (uint64_t)at[0] << 8 | at[1];
  default: {
    uint64_t value = 0;
    for (int64_t index = 0; index < size; index++) value = value << 8 | at[index];
    return value;
  }
  }
}

static inline uint64_t load64(const uint8_t *at) {
  uint64_t word;
  memcpy(&word, at, 8);
  return word;
}

static inline uint32_t load32(const uint8_t *at) {
  uint32_t word;
  memcpy(&word, at, 4);
  return word;
}

// Whether every byte is below 0x80: sixteen bytes a step in SSE2, the last step overlapping; short
// strings in two overlapping words.
static inline int is_ascii(const uint8_t *text, int64_t count) {
#if CVL_SSE2
  if (count >= 16) {
    // Up to 32 bytes (most keys and class names) in two overlapping loads.
    __m128i high = _mm_or_si128(_mm_loadu_si128((const __m128i *)text),
                                _mm_loadu_si128((const __m128i *)(text + count - 16)));
    for (int64_t index = 16; count - index > 16; index += 16) {
      high = _mm_or_si128(high, _mm_loadu_si128((const __m128i *)(text + index)));
    }
    return _mm_movemask_epi8(high) == 0;
  }
#else
  if (count >= 16) {
    uint64_t high = load64(text + count - 8);
    for (int64_t index = 0; count - index > 8; index += 8) high |= load64(text + index);
    return (high & 0x8080808080808080ULL) == 0;
  }
#endif
  uint64_t high;
  if (count >= 8) {
    high = load64(text) | load64(text + count - 8);
  } else if (count >= 4) {
    high = load32(text) | load32(text + count - 4);
  } else {
    high = 0;
    for (int64_t index = 0; index < count; index++) high |= text[index];
  }
  return (high & 0x8080808080808080ULL) == 0;
}

// After PropertyList's `keyFingerprint`: the length, and the first and last eight bytes (a shorter
// text's bytes in overlapping loads); odd, never 0. Only ever compared with fingerprints made here,
// so it need only give equal bytes equal fingerprints.
static uint64_t fingerprint(const uint8_t *text, int64_t count) {
  uint64_t first = 0, last = 0;
  if (count >= 8) {
    first = load64(text);
    last = load64(text + count - 8);
  } else if (count >= 4) {
    first = (uint64_t)load32(text) << 32 | load32(text + count - 4);
  } else if (count > 0) {
    first = (uint64_t)text[0] << 16 | (uint64_t)text[count / 2] << 8 | text[count - 1];
  }
  uint64_t mixed = ((uint64_t)count * 0x9E3779B97F4A7C15ULL) ^ first;
  return ((mixed * 0xBF58476D1CE4E5B9ULL) ^ (last * 0x94D049BB133111EBULL)) | 1;
}

static int utf16_pairs(const uint8_t *text, int64_t count) {
  int64_t index = 0;
  while (index < count) {
    unsigned unit = (unsigned)text[2 * index] << 8 | text[2 * index + 1];
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      if (index + 1 >= count) return 0;
      unsigned next = (unsigned)text[2 * index + 2] << 8 | text[2 * index + 3];
      if (next < 0xDC00 || next > 0xDFFF) return 0;
      index += 2;
    } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return 0;
    } else {
      index += 1;
    }
  }
  return 1;
}

// The words kept per object in `scratch` while the pass runs.
enum {
  // An ASCII string not fingerprinted yet (a fingerprint is odd too; one that is exactly 1 is
  // only made again).
  UNPRINTED_ASCII = 1,
  UTF16_STRING = 2,
};

// What the Swift scan's `contentCount` reads: the count after a marker, and where the contents
// start (never past `end`). 0 where the count does not read.
static inline int content_count(const uint8_t *base, int64_t end, int64_t offset, uint8_t marker,
                                int64_t *count, int64_t *start) {
  int64_t nibble = marker & 0x0F;
  if (nibble != 0x0F) {
    *count = nibble;
    *start = offset + 1;
    return 1;
  }
  // A one-byte length integer, as every key of 15 to 255 bytes has.
  if (offset + 2 < end && base[offset + 1] == 0x10) {
    *count = base[offset + 2];
    *start = offset + 3;
    return 1;
  }
  if (offset + 2 > end) return 0;
  uint8_t int_marker = base[offset + 1];
  if (int_marker >> 4 != 0x1) return 0;
  int64_t exponent = int_marker & 0x0F;
  if (exponent > 3) return 0;
  int64_t size = (int64_t)1 << exponent;
  if (size > end - (offset + 2)) return 0;
  uint64_t raw = read_sized(base + offset + 2, size);
  if (raw > (uint64_t)end) return 0;
  *count = (int64_t)raw;
  *start = offset + 2 + size;
  return 1;
}

// `count` bytes from `start` lie in the object area (`start` is never past `end`).
static inline int fits(int64_t end, int64_t start, int64_t count) { return count <= end - start; }

static inline void record(int64_t *spans, int64_t *sizes, int64_t index, int64_t start,
                          int64_t count) {
  spans[2 * index] = start;
  spans[2 * index + 1] = count;
  sizes[index] = 1;
}

// The Swift scan's `checkKeys`: every key a string; `plain` cleared by a UTF-16 key or a key
// there twice. `size` is the file's reference size, given as a constant where it is 1.
static inline __attribute__((always_inline)) int check_keys_sized(const cvl_bplist_scan *scan,
                                                                  int64_t count, int64_t start,
                                                                  int *plain, int64_t size) {
  const uint8_t *base = scan->bytes;
  uint64_t *prints = scan->scratch;
  // One bit per fingerprint's top 8 bits: keys are compared only on a shared bit.
  uint64_t seen[4] = {0, 0, 0, 0};
  for (int64_t entry = 0; entry < count; entry++) {
    int64_t key = (int64_t)read_sized(base + start + entry * size, size);
    uint64_t print = prints[key];
    if ((print & 1) == 0) {
      if (print != UTF16_STRING) return 0;
      *plain = 0;
      continue;
    }
    if (!*plain) continue;
    if (print == UNPRINTED_ASCII) {
      print = fingerprint(base + scan->spans[2 * key], scan->spans[2 * key + 1]);
      prints[key] = print;
    }
    uint64_t bit = (uint64_t)1 << (print >> 56 & 63);
    uint64_t *word = &seen[print >> 62];
    int was_seen = (*word & bit) != 0;
    *word |= bit;
    if (!was_seen) continue;
    // Earlier keys of this dictionary were fingerprinted while it was still plain.
    int64_t key_start = scan->spans[2 * key], key_count = scan->spans[2 * key + 1];
    for (int64_t earlier_entry = 0; earlier_entry < entry; earlier_entry++) {
      int64_t earlier = (int64_t)read_sized(base + start + earlier_entry * size, size);
      if (prints[earlier] != print) continue;
      if (scan->spans[2 * earlier + 1] == key_count &&
          memcmp(base + scan->spans[2 * earlier], base + key_start, (size_t)key_count) == 0) {
        *plain = 0;
        break;
      }
    }
  }
  return 1;
}

static int check_keys(const cvl_bplist_scan *scan, int64_t count, int64_t start, int *plain) {
  // Files of up to 256 objects (an archive's) have one-byte references: their loop of its own.
  if (scan->reference_size == 1) return check_keys_sized(scan, count, start, plain, 1);
  return check_keys_sized(scan, count, start, plain, scan->reference_size);
}

// The objects of the kinds archives rarely hold (everything but ASCII strings, UIDs and
// containers), out of the main loop so that its own values stay in registers: 0 where the scan
// refuses the object.
static __attribute__((noinline)) int scan_rare_object(const cvl_bplist_scan *scan, int64_t index,
                                                      int64_t offset, uint8_t marker) {
  const uint8_t *base = scan->bytes;
  const int64_t end = scan->object_area_end;
  int64_t count, start;
  switch (marker >> 4) {
  case 0x0:
    return marker == 0x08 || marker == 0x09;
  case 0x1:
    if (marker <= 0x13) return fits(end, offset + 1, (int64_t)1 << (marker & 0x0F));
    // Sixteen bytes must hold a 64-bit value: a zero high half, or all ones over a negative low
    // half.
    if (marker != 0x14 || !fits(end, offset + 1, 16)) return 0;
    {
      uint64_t high = 0, low = 0;
      for (int byte = 0; byte < 8; byte++) {
        high = high << 8 | base[offset + 1 + byte];
        low = low << 8 | base[offset + 9 + byte];
      }
      return high == 0 || (high == UINT64_MAX && low >= (uint64_t)1 << 63);
    }
  case 0x2:
    if (marker == 0x22) return fits(end, offset + 1, 4);
    if (marker == 0x23) return fits(end, offset + 1, 8);
    return 0;
  case 0x3:
    return marker == 0x33 && fits(end, offset + 1, 8);
  case 0x4:
    if (!content_count(base, end, offset, marker, &count, &start)) return 0;
    if (count > scan->maximum_length || !fits(end, start, count)) return 0;
    record(scan->spans, scan->sizes, index, start, count);
    return 1;
  case 0x6: {
    if (!content_count(base, end, offset, marker, &count, &start)) return 0;
    int64_t byte_count;
    if (__builtin_mul_overflow(count, (int64_t)2, &byte_count)) return 0;
    if (byte_count > scan->maximum_length || !fits(end, start, byte_count)) return 0;
    if (!utf16_pairs(base + start, count)) return 0;
    scan->scratch[index] = UTF16_STRING;
    record(scan->spans, scan->sizes, index, start, count);
    return 1;
  }
  default:
    return 0;
  }
}

// A UID of more than one byte (legal, but not what archivers write for their first 256
// objects): its value, or -1 where the scan refuses it (longer UIDs are legal but never written;
// the walk checks them).
static __attribute__((noinline)) int64_t wide_uid(const uint8_t *base, int64_t end, int64_t offset,
                                                  uint8_t marker) {
  int64_t size = (marker & 0x0F) + 1;
  if (size > 8 || !fits(end, offset + 1, size)) return -1;
  uint64_t uid = read_sized(base + offset + 1, size);
  return uid > UINT32_MAX ? -1 : (int64_t)uid;
}

int cvl_bplist_scan_objects(const cvl_bplist_scan *scan, cvl_bplist_scan_result *result) {
  const uint8_t *base = scan->bytes;
  const int64_t end = scan->object_area_end;
  const int64_t object_count = scan->object_count;
  const int64_t reference_size = scan->reference_size;
  const int64_t maximum_length = scan->maximum_length;
  const int64_t maximum_depth = scan->maximum_depth;
  const int64_t maximum_visits = scan->maximum_visits;
  const int64_t *offsets = scan->offsets;
  int64_t *sizes = scan->sizes;
  int64_t *spans = scan->spans;
  uint64_t *prints = scan->scratch;
  memset(prints, 0, (size_t)object_count * sizeof(uint64_t));
  int64_t last_dictionary = -1;
  int plain = 1;
  // The largest UID + 1, or 0 when there is none (one value, where two would take a register
  // more in the loop).
  uint64_t uid_bound = 0;
  // One visit for the top, one per reference; wrapping as the Swift scan's `&+=`.
  uint64_t visits = 1;

  // Bit k set: marker kind k is an array (0xA) or a dictionary (0xD).
  const unsigned containers = 1u << 0xA | 1u << 0xD;
  for (int64_t index = 0; index < object_count; index++) {
    const int64_t offset = offsets[index];
    const uint8_t marker = base[offset];
    const unsigned kind = marker >> 4;
    int64_t count, start;
    // The kinds archives are made of first: strings, UIDs, then containers.
    if (kind == 0x5) {
      if (!content_count(base, end, offset, marker, &count, &start)) return 0;
      if (count > maximum_length || !fits(end, start, count)) return 0;
      if (!is_ascii(base + start, count)) return 0;
      prints[index] = UNPRINTED_ASCII;
      record(spans, sizes, index, start, count);
      continue;
    }
    if (kind == 0x8) {
      uint64_t uid;
      if (marker == 0x80) {
        if (offset + 1 >= end) return 0;
        uid = base[offset + 1];
      } else {
        const int64_t wide = wide_uid(base, end, offset, marker);
        if (wide < 0) return 0;
        uid = (uint64_t)wide;
      }
      // At most 2^32 - 1 (wider ones are refused): the bound does not wrap.
      uid_bound = uid + 1 > uid_bound ? uid + 1 : uid_bound;
      continue;
    }
    if (containers >> kind & 1) {
      const int is_dictionary = kind == 0xD;
      if (!content_count(base, end, offset, marker, &count, &start)) return 0;
      int64_t references, byte_count;
      if (__builtin_mul_overflow(count, (int64_t)(is_dictionary ? 2 : 1), &references) ||
          __builtin_mul_overflow(references, reference_size, &byte_count) ||
          !fits(end, start, byte_count))
        return 0;
      const int64_t depth = sizes[index] < 0 ? -sizes[index] : 1;
      if (depth > maximum_depth) return 0;
      visits += (uint64_t)references;
      if ((int64_t)visits > maximum_visits) return 0;
      record(spans, sizes, index, start, count);
      // Each reference names an object; a container it names lies above and is named once: no
      // cycle and nothing that expands.
      const uint8_t *reference = base + start;
      const uint8_t *const references_end = reference + byte_count;
      if (reference_size == 1) {
        // What files of up to 256 objects use, in a loop of its own.
        for (; reference < references_end; reference++) {
          const int64_t target = *reference;
          if (target >= object_count) return 0;
          if (containers >> (base[offsets[target]] >> 4) & 1) {
            if (target <= index || sizes[target] != 0) return 0;
            sizes[target] = -(depth + 1);
          }
        }
      } else {
        for (; reference < references_end; reference += reference_size) {
          const uint64_t target = read_sized(reference, reference_size);
          if (target >= (uint64_t)object_count) return 0;
          if (containers >> (base[offsets[target]] >> 4) & 1) {
            if ((int64_t)target <= index || sizes[target] != 0) return 0;
            sizes[target] = -(depth + 1);
          }
        }
      }
      if (is_dictionary) {
        if (count > scan->plain_entry_limit) plain = 0;
        prints[index] = (uint64_t)(last_dictionary + 1) << 2;
        last_dictionary = index;
      }
      continue;
    }
    if (!scan_rare_object(scan, index, offset, marker)) return 0;
  }
  // Keys once every string is known: a dictionary may come before its keys.
  for (int64_t dictionary = last_dictionary; dictionary >= 0;
       dictionary = (int64_t)(prints[dictionary] >> 2) - 1) {
    if (!check_keys(scan, scan->spans[2 * dictionary + 1], scan->spans[2 * dictionary], &plain))
      return 0;
  }
  result->plain = plain;
  result->has_uid = uid_bound > 0;
  result->maximum_uid = uid_bound > 0 ? uid_bound - 1 : 0;
  return 1;
}
