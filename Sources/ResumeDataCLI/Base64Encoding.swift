import Foundation

/// Base64 as `Data.base64EncodedData()` writes it (RFC 4648's alphabet, padded, on one line),
/// for `batch`, which writes a blob's base64 into every result: Foundation's encoder cost about a
/// tenth of a record's time there. And a strict decoder for the blobs it reads: Foundation's
/// accepts padding in the middle (`QU=D`) or piled up at the end (`QUJD====`), so a damaged
/// record would decode to other bytes instead of being reported.
enum Base64Encoding {
  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  // Every 12-bit value as its two characters, in the order they are stored: half the lookups.
  private static let pairs: [UInt16] = (0..<4096).map { value in
    (UInt16(alphabet[value >> 6]) | UInt16(alphabet[value & 0x3F]) << 8).littleEndian
  }

  /// The base64 of `data`.
  static func encode(_ data: Data) -> Data {
    let groups = data.count / 3
    let remainder = data.count % 3
    // Cannot overflow: `data` is in memory.
    let length = 4 * (groups + (remainder > 0 ? 1 : 0))
    var encoded = Data(count: length)
    encoded.withUnsafeMutableBytes { out in
      data.withUnsafeBytes { input in
        alphabet.withUnsafeBufferPointer { table in
          pairs.withUnsafeBufferPointer { pairs in
            encode(input, table: table, pairs: pairs, into: out)
          }
        }
      }
    }
    return encoded
  }

  // The loop, apart from the closures so that its state stays in registers.
  private static func encode(
    _ input: UnsafeRawBufferPointer, table: UnsafeBufferPointer<UInt8>,
    pairs: UnsafeBufferPointer<UInt16>, into out: UnsafeMutableRawBufferPointer
  ) {
    var read = 0
    var written = 0
    let whole = input.count - input.count % 3
    while read < whole {
      let group =
        UInt32(input[read]) << 16 | UInt32(input[read &+ 1]) << 8 | UInt32(input[read &+ 2])
      out.storeBytes(of: pairs[Int(group >> 12)], toByteOffset: written, as: UInt16.self)
      out.storeBytes(of: pairs[Int(group & 0xFFF)], toByteOffset: written &+ 2, as: UInt16.self)
      read &+= 3
      written &+= 4
    }
    switch input.count - whole {
    case 1:
      let group = UInt32(input[read]) << 16
      out[written] = table[Int(group >> 18)]
      out[written + 1] = table[Int((group >> 12) & 0x3F)]
      out[written + 2] = UInt8(ascii: "=")
      out[written + 3] = UInt8(ascii: "=")
    case 2:
      let group = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8
      out[written] = table[Int(group >> 18)]
      out[written + 1] = table[Int((group >> 12) & 0x3F)]
      out[written + 2] = table[Int((group >> 6) & 0x3F)]
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
      values.withUnsafeBufferPointer { values in decode(text, values: values) }
    }
  }

  private static func decode(_ text: UnsafeRawBufferPointer, values: UnsafeBufferPointer<UInt8>)
    -> Result<Data, DecodingError>
  {
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
