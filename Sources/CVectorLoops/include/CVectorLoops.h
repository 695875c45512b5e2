#ifndef CVECTOR_LOOPS_H
#define CVECTOR_LOOPS_H

#include <stddef.h>
#include <stdint.h>

// Loops over bytes in vectors, for PropertyList's hottest scans.
//
// Base64 (RFC 4648's alphabet) in 256-bit vectors, for the inner loops of Base64Groups: whole
// blocks only, the rest left to the caller's scalar loops. Each `cb64v_` function runs only where
// the processor has AVX2 (checked once, at load time), and otherwise does nothing and returns 0,
// so callers need no check of their own.

/// Whether the vector loops run on this processor.
int cb64v_available(void);

/// Which vector paths this build runs: 1 where the SSE2 scans were compiled in (x86-64 without
/// CVL_SCALAR_ONLY), plus 2 where the AVX2 base64 loops run (compiled in, the processor has AVX2,
/// and RESUMEDATA_NO_AVX2 is unset); 0 where only the scalar paths run.
int cvl_vector_paths(void);

/// Encodes the whole blocks of 24 bytes at the start of `input` (`count` bytes) into 32
/// characters each at `out`, and returns how many bytes it read (a multiple of 24). Reads only
/// `input[0..<count]`; writes only the characters of the blocks it read.
size_t cb64v_encode_blocks(const uint8_t *input, size_t count, uint8_t *out);

/// Decodes the blocks of 32 alphabet characters at the start of `text` (`count` bytes) into 24
/// bytes each at `out`, up to the first block holding any other byte (padding, whitespace, a wrong
/// byte) or fewer than 32 characters, and returns how many characters it read (a multiple of 32).
/// Reads only `text[0..<count]`; writes only the bytes of the blocks it read.
size_t cb64v_decode_blocks(const uint8_t *text, size_t count, uint8_t *out);

/// Decodes lines of base64 at the start of `text` (`count` bytes) into `out`, as
/// `Base64Groups.Decoder.decodeLines` does: whitespace (space, tab, LF, CR) skipped, then whole
/// groups of four alphabet characters, three bytes each, for as long as the groups up to
/// whitespace are lines; stops before the first group that is not whole and clean (padding, a
/// wrong byte, a group cut by whitespace or by the end of `text`), or at the end. Returns how many
/// characters it read and sets `written` to how many bytes it wrote. `out` must have room for
/// three bytes a group of `text`. Reads only `text[0..<count]`. `line` carries the guess
/// `decodeLines` carries (the characters of a line's groups, 0 for none), which decides only where
/// a loop stops, never what is decoded.
size_t cb64v_decode_lines(const uint8_t *text, size_t count, uint8_t *out, size_t *written,
                          size_t *line);

/// Writes the base64 of `input` (`count` bytes) at `out` in lines of `line_bytes` bytes each (a
/// multiple of 3; the last line holds the rest, padded with `=`), each line `indent` tabs, its
/// characters and an LF; returns 1. Returns 0, having written nothing, where the processor lacks
/// AVX2, `line_bytes` is not a positive multiple of 3, or `indent` is above 8.
int cb64v_encode_lines(const uint8_t *input, size_t count, size_t line_bytes, size_t indent,
                       uint8_t *out);

// The writers' byte scans: sixteen bytes a step in SSE2 on every x86-64 processor, a byte at a
// time elsewhere; each gives the same answer either way.

/// Whether `text` holds a byte a JSON string must escape: below 0x20, a quote or a backslash.
int cvl_json_needs_escapes(const uint8_t *text, size_t count);

/// Whether `text` holds a byte the XML writer must look at: `<`, `>`, `&`, CR, a control
/// character other than tab and LF, or 0xEF (the lead byte of U+FFFE and U+FFFF).
int cvl_xml_needs_escaping(const uint8_t *text, size_t count);

/// Whether `text` is printable ASCII (0x20 to 0x7E), tabs, LFs and CRs only.
int cvl_xml_is_plain_text(const uint8_t *text, size_t count);

/// Whether `text` holds a line feed, a carriage return or NUL: what ends an HTTP header field early.
int cvl_holds_line_break_or_nul(const uint8_t *text, size_t count);

/// Whether `text` is an HTTP token (RFC 9110 §5.6.2: one or more of `!#$%&'*+-.^_`|~`, digits and
/// ASCII letters), a byte at a time (names are short).
int cvl_is_http_token(const uint8_t *text, size_t count);

/// Whether a header field can be sent as it is: `name` an HTTP token (`cvl_is_http_token`) and
/// `value` without a line break or NUL (`cvl_holds_line_break_or_nul`), in one call.
int cvl_is_sendable_header_field(const uint8_t *name, size_t name_count, const uint8_t *value,
                                 size_t value_count);

// Binary plists' offset tables.

/// Reads the `count` big-endian entries of `width` bytes (1 or 2, what files of up to 64 KiB use)
/// at `table` into `out`, and returns 1 when any entry minus 8 is `limit` or more (unsigned: an
/// entry below 8 counts), else 0; -1 (having read nothing) for any other width. Every entry is
/// stored either way.
int cvl_read_offsets(const uint8_t *table, size_t count, size_t width, uint64_t limit,
                     int64_t *out);

// Binary plists' objects.

/// What the binary property-list view's one-pass scan reads and where it records (see
/// `cvl_bplist_scan_objects`).
typedef struct {
  /// The file's bytes.
  const uint8_t *bytes;
  /// Where the offset table starts: the end of the object area.
  int64_t object_area_end;
  /// Each object's offset, every one inside the object area (checked when the table was read).
  const int64_t *offsets;
  /// How many objects the offset table holds.
  int64_t object_count;
  /// The trailer's reference size, 1 to 8.
  int64_t reference_size;
  /// The limits: the longest string or data, the deepest nesting, the most values visited.
  int64_t maximum_length;
  int64_t maximum_depth;
  int64_t maximum_visits;
  /// A dictionary of more entries is not plain.
  int64_t plain_entry_limit;
  /// Per object, all zero on entry: 1 once the object's contents are recorded in `spans`.
  int64_t *sizes;
  /// Per object, two words: where its contents start and their count.
  int64_t *spans;
  /// Per object, one word for the scan's own use.
  uint64_t *scratch;
} cvl_bplist_scan;

/// What the scan found, where it accepted the file.
typedef struct {
  /// Whether every dictionary has at most `plain_entry_limit` entries, ASCII keys only, and no
  /// key twice.
  int plain;
  /// Whether the file holds a UID, and the largest.
  int has_uid;
  uint64_t maximum_uid;
} cvl_bplist_scan_result;

/// Checks every object of a binary plist once, in index order, as PropertyList's reference scan
/// (`BinaryLinearScan.swift`) does, and returns 1 where the walk from the top would accept the
/// file (contents recorded, `result` set), else 0 (`sizes`, `spans` and `scratch` then hold
/// whatever the scan had written; the caller clears `sizes`).
int cvl_bplist_scan_objects(const cvl_bplist_scan *scan, cvl_bplist_scan_result *result);

// Blocks of memory each thread keeps for reuse: PropertyList's `ReusableBlocks`, which documents
// them.

/// The size classes: blocks of 1 KiB << class.
#define CVL_BLOCK_CLASSES 7

/// A block of at least `count` bytes, 16-byte aligned, or NULL when there is no memory for it.
/// It goes back through `cvl_block_give`, never `free`.
void *cvl_block_take(size_t count);

/// Gives back a block `cvl_block_take` returned, for the calling thread to reuse (or frees it).
void cvl_block_give(void *block);

/// A block of at least `count` bytes holding the first `kept` bytes of `block` (from
/// `cvl_block_take`, and no longer to be used), or NULL when there is no memory for it (`block`
/// is then unchanged).
void *cvl_block_resize(void *block, size_t kept, size_t count);

/// Whether blocks are kept at all: not in a build with AddressSanitizer, where each block is an
/// allocation of its own, of the size asked for.
int cvl_blocks_pooled(void);

/// The blocks the calling thread keeps, by class.
void cvl_blocks_kept(int counts[CVL_BLOCK_CLASSES]);

#endif
