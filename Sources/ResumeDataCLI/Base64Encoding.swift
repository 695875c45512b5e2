import Foundation

/// Base64 as `Data.base64EncodedData()` writes it (RFC 4648's alphabet, padded, on one line),
/// for `batch`, which writes a blob's base64 into every result: Foundation's encoder cost about a
/// tenth of a record's time there. And a strict decoder for the blobs it reads: Foundation's
/// accepts padding in the middle (`QU=D`) or piled up at the end (`QUJD====`), so a damaged
/// record would decode to other bytes instead of being reported.
enum Base64Encoding {
  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  // Every 12-bit value as its two characters, the first in the low byte: half the lookups.
  private static let pairs: [UInt16] = (0..<4096).map { value in
    UInt16(alphabet[value >> 6]) | UInt16(alphabet[value & 0x3F]) << 8
  }

  /// The base64 of `data`.
  static func encode(_ data: Data) -> Data {
    var encoded: [UInt8] = []
    encode(data, appendingTo: &encoded)
    return Data(encoded)
  }

  /// Appends the base64 of `data` to `out`: `batch` writes it straight into a result's line.
  static func encode(_ data: Data, appendingTo out: inout [UInt8]) {
    // Cannot overflow: `data` is in memory.
    let length = (data.count + 2) / 3 * 4
    let start = out.count
    out.append(contentsOf: repeatElement(0, count: length))
    out.withUnsafeMutableBytes { out in
      data.withUnsafeBytes { input in
        alphabet.withUnsafeBufferPointer { table in
          pairs.withUnsafeBufferPointer { pairs in
            encode(
              input, table: table, pairs: pairs,
              into: UnsafeMutableRawBufferPointer(rebasing: out[start...]))
          }
        }
      }
    }
  }

  // The loop, apart from the closures so that its state stays in registers.
  private static func encode(
    _ input: UnsafeRawBufferPointer, table: UnsafeBufferPointer<UInt8>,
    pairs: UnsafeBufferPointer<UInt16>, into out: UnsafeMutableRawBufferPointer
  ) {
    var read = 0
    var written = 0
    // Six bytes to eight characters a step, read as one 8-byte load (its last two bytes unused).
    while input.count &- read >= 8 {
      let word = UInt64(bigEndian: input.loadUnaligned(fromByteOffset: read, as: UInt64.self))
      let first = Int(truncatingIfNeeded: word >> 40)
      let second = Int(truncatingIfNeeded: word >> 16) & 0xFF_FFFF
      let characters =
        UInt64(pairs[first >> 12]) | UInt64(pairs[first & 0xFFF]) << 16
        | UInt64(pairs[second >> 12]) << 32 | UInt64(pairs[second & 0xFFF]) << 48
      out.storeBytes(of: characters.littleEndian, toByteOffset: written, as: UInt64.self)
      read &+= 6
      written &+= 8
    }
    let whole = input.count - input.count % 3
    while read < whole {
      let group =
        Int(input[read]) << 16 | Int(input[read &+ 1]) << 8 | Int(input[read &+ 2])
      let characters = UInt32(pairs[group >> 12]) | UInt32(pairs[group & 0xFFF]) << 16
      out.storeBytes(of: characters.littleEndian, toByteOffset: written, as: UInt32.self)
      read &+= 3
      written &+= 4
    }
    switch input.count - whole {
    case 1:
      let group = Int(input[read]) << 16
      out[written] = table[group >> 18]
      out[written + 1] = table[(group >> 12) & 0x3F]
      out[written + 2] = UInt8(ascii: "=")
      out[written + 3] = UInt8(ascii: "=")
    case 2:
      let group = Int(input[read]) << 16 | Int(input[read + 1]) << 8
      out[written] = table[group >> 18]
      out[written + 1] = table[(group >> 12) & 0x3F]
      out[written + 2] = table[(group >> 6) & 0x3F]
      out[written + 3] = UInt8(ascii: "=")
    default:
      break
    }
  }

  /// Why a text is not base64, and at which character (0-based).
  struct DecodingError: Error, Equatable {
    /// The offset of the first character that is wrong (the text's length when it is cut short).
    var offset: Int
    /// What is wrong.
    var message: String
  }

  // Each byte's 6-bit value, or 0xFF for a byte outside the alphabet (`=` included).
  private static let values: [UInt8] = (0..<256).map { byte in
    alphabet.firstIndex(of: UInt8(byte)).map { UInt8($0) } ?? 0xFF
  }

  /// Decodes RFC 4648 base64, strictly: the alphabet only, no line breaks or spaces, a length
  /// that is a multiple of four, `=` only as the last one or two characters, and no bits set that
  /// the padding drops (canonical text, as every encoder writes it).
  static func decode(_ text: Data) -> Result<Data, DecodingError> {
    text.withUnsafeBytes { text in
      // The fast path takes canonical text, which is what arrives; anything else, good or bad,
      // goes to the strict decoder, which also says what is wrong.
      if let decoded = decodeCanonical(text) { return .success(decoded) }
      return decodeStrictly(text)
    }
  }

  // Four tables, one per character of a group: each character's 6 bits already shifted to their
  // place in the group's three bytes (the first byte lowest), or `invalid` for a byte outside the
  // alphabet. OR-ing a group's four entries gives its bytes, and `invalid` if any was wrong.
  private static let invalid: UInt32 = 1 << 24
  private static let quadruples: [UInt32] = (0..<4).flatMap { position in
    (0..<256).map { byte -> UInt32 in
      let value = UInt32(values[byte])
      guard value != 0xFF else { return invalid }
      switch position {
      case 0: return value << 2
      case 1: return value >> 4 | (value & 0xF) << 12
      case 2: return (value >> 2) << 8 | (value & 0x3) << 22
      default: return value << 16
      }
    }
  }

  /// Decodes canonical base64 (what `decodeStrictly` accepts) to the same bytes, or returns nil
  /// for any other text.
  static func decodeCanonical(_ text: UnsafeRawBufferPointer) -> Data? {
    quadruples.withUnsafeBufferPointer { decodeCanonical(text, tables: $0) }
  }

  // Whole groups through `tables`, eight characters a step.
  private static func decodeCanonical(
    _ text: UnsafeRawBufferPointer, tables: UnsafeBufferPointer<UInt32>
  ) -> Data? {
    let count = text.count
    guard count > 0, count % 4 == 0 else { return nil }
    // The last group may hold padding: it is read apart, after the loop.
    let last = count &- 4
    let equals = UInt8(ascii: "=")
    let padding = text[count &- 1] != equals ? 0 : text[count &- 2] != equals ? 1 : 2
    let decodedCount = count / 4 * 3 &- padding
    guard let memory = malloc(decodedCount) else { return nil }
    let out = UnsafeMutableRawBufferPointer(start: memory, count: decodedCount)
    let t0 = tables.baseAddress!
    let t1 = t0 + 256
    let t2 = t0 + 512
    let t3 = t0 + 768
    var wrong: UInt32 = 0
    var read = 0
    var written = 0
    // Each step stores four bytes for three: the fourth is overwritten by the next group, and the
    // last group (at least one byte) is written after the loop, so no store passes the end.
    while last &- read >= 8 {
      let word = UInt64(littleEndian: text.loadUnaligned(fromByteOffset: read, as: UInt64.self))
      let first =
        t0[Int(word & 0xFF)] | t1[Int(word >> 8 & 0xFF)] | t2[Int(word >> 16 & 0xFF)]
        | t3[Int(word >> 24 & 0xFF)]
      let second =
        t0[Int(word >> 32 & 0xFF)] | t1[Int(word >> 40 & 0xFF)] | t2[Int(word >> 48 & 0xFF)]
        | t3[Int(word >> 56)]
      wrong |= first | second
      out.storeBytes(of: first.littleEndian, toByteOffset: written, as: UInt32.self)
      out.storeBytes(of: second.littleEndian, toByteOffset: written &+ 3, as: UInt32.self)
      read &+= 8
      written &+= 6
    }
    while read < last {
      let group =
        t0[Int(text[read])] | t1[Int(text[read &+ 1])] | t2[Int(text[read &+ 2])]
        | t3[Int(text[read &+ 3])]
      wrong |= group
      out.storeBytes(of: group.littleEndian, toByteOffset: written, as: UInt32.self)
      read &+= 4
      written &+= 3
    }
    // The last group: `=` stands for a character of value 0, and a canonical text has no bits set
    // in what the padding drops.
    let group =
      t0[Int(text[read])] | t1[Int(text[read &+ 1])]
      | (padding == 2 ? 0 : t2[Int(text[read &+ 2])])
      | (padding >= 1 ? 0 : t3[Int(text[read &+ 3])])
    let dropped: UInt32 = padding == 2 ? 0xFF_FF00 : padding == 1 ? 0xFF_0000 : 0
    guard (wrong | group) & invalid == 0, group & dropped == 0 else {
      free(memory)
      return nil
    }
    out[written] = UInt8(truncatingIfNeeded: group)
    if padding < 2 { out[written &+ 1] = UInt8(truncatingIfNeeded: group >> 8) }
    if padding < 1 { out[written &+ 2] = UInt8(truncatingIfNeeded: group >> 16) }
    return Data(bytesNoCopy: memory, count: decodedCount, deallocator: .free)
  }

  /// The strict decoder, character by character: the reference for `decodeCanonical`, and the
  /// one that finds the first wrong character.
  static func decodeStrictly(_ text: UnsafeRawBufferPointer) -> Result<Data, DecodingError> {
    values.withUnsafeBufferPointer { values in decodeStrictly(text, values: values) }
  }

  private static func decodeStrictly(
    _ text: UnsafeRawBufferPointer, values: UnsafeBufferPointer<UInt8>
  ) -> Result<Data, DecodingError> {
    // The first character outside the alphabet ends the data: padding, or an error.
    var end = 0
    while end < text.count, values[Int(text[end])] != 0xFF { end &+= 1 }
    var padding = 0
    while end &+ padding < text.count, text[end &+ padding] == UInt8(ascii: "=") { padding &+= 1 }
    let stop = end &+ padding
    if stop < text.count {
      return .failure(
        padding > 0
          ? DecodingError(offset: end, message: "'=' before the end")
          : DecodingError(offset: stop, message: describe(text[stop])))
    }
    guard text.count % 4 == 0 else {
      return .failure(
        DecodingError(
          offset: text.count, message: "\(text.count) characters: not a multiple of four"))
    }
    // Padding fills the last group only, with one or two `=`.
    guard padding <= 2 else {
      return .failure(DecodingError(offset: end, message: "more than two '='"))
    }
    guard padding == 0 || end % 4 == 4 - padding else {
      return .failure(DecodingError(offset: end, message: "'=' where data should be"))
    }
    let tail = end % 4
    var decoded = Data(count: end / 4 * 3 + (tail == 0 ? 0 : tail - 1))
    var unusedBits: UInt32 = 0
    decoded.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Void in
      var read = 0
      var written = 0
      let whole = end - tail
      while read < whole {
        let group =
          UInt32(values[Int(text[read])]) << 18 | UInt32(values[Int(text[read &+ 1])]) << 12
          | UInt32(values[Int(text[read &+ 2])]) << 6 | UInt32(values[Int(text[read &+ 3])])
        out[written] = UInt8(truncatingIfNeeded: group >> 16)
        out[written &+ 1] = UInt8(truncatingIfNeeded: group >> 8)
        out[written &+ 2] = UInt8(truncatingIfNeeded: group)
        read &+= 4
        written &+= 3
      }
      guard tail > 0 else { return }
      var group: UInt32 = 0
      for index in 0..<tail {
        group |= UInt32(values[Int(text[read &+ index])]) << (18 - 6 * index)
      }
      out[written] = UInt8(truncatingIfNeeded: group >> 16)
      if tail == 3 { out[written &+ 1] = UInt8(truncatingIfNeeded: group >> 8) }
      unusedBits = tail == 2 ? group & 0xFFFF : group & 0xFF
    }
    guard unusedBits == 0 else {
      return .failure(
        DecodingError(
          offset: end - 1, message: "the last character has bits set that the padding drops"))
    }
    return .success(decoded)
  }

  private static func describe(_ byte: UInt8) -> String {
    switch byte {
    case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
      "a line break: a record's base64 is one line (base64 -w 0)"
    case UInt8(ascii: " "), UInt8(ascii: "\t"): "a space"
    case UInt8(ascii: "-"), UInt8(ascii: "_"): "'\(Character(Unicode.Scalar(byte)))' (base64url?)"
    case 0x21...0x7E: "'\(Character(Unicode.Scalar(byte)))', not a base64 character"
    default: "the byte \(String(byte, radix: 16, uppercase: true)), not a base64 character"
    }
  }
}
