import PortableFoundation

// A fast path: `decodeCanonical` (the groups of Base64Groups.swift) takes canonical text, and
// anything else goes to its twin, `decodeStrictly`, one character at a time. Held equal by
// Tests/PropertyListTests/Base64LineTests.swift; no fuzz harness compares the two (FuzzBatch,
// Fuzz/Sources/FuzzBatch/main.swift, runs the fast path on every record).

/// Strict one-line base64, as a record of `resumedata batch` carries a blob: Foundation's decoder
/// accepts padding in the middle (`QU=D`) or piled up at the end (`QUJD====`), so a damaged record
/// would decode to other bytes instead of being reported. Built on the same group loops as the XML
/// reader's `<data>`; the other direction is `encode`, which writes what
/// `Data.base64EncodedData()` writes (Foundation's encoder cost a tenth of a record's time).
extension Base64Groups {
  /// Why a text is not base64, and at which character (0-based).
  package struct DecodingError: Error, Equatable {
    /// The offset of the first character that is wrong (the text's length when it is cut short).
    package var offset: Int
    /// What is wrong.
    package var message: String

    /// An error at `offset` saying `message`.
    package init(offset: Int, message: String) {
      self.offset = offset
      self.message = message
    }
  }

  /// Decodes RFC 4648 base64, strictly: the alphabet only, no line breaks or spaces, a length
  /// that is a multiple of four, `=` only as the last one or two characters, and no bits set that
  /// the padding drops (canonical text, as every encoder writes it).
  package static func decode(_ text: Data) -> Result<Data, DecodingError> {
    text.withUnsafeBytes { text in
      // The fast path takes canonical text, which is what arrives; anything else, good or bad,
      // goes to the strict decoder, which also says what is wrong.
      if let decoded = decodeCanonical(text) { return .success(decoded) }
      return decodeStrictly(text)
    }
  }

  /// Decodes canonical base64 (what `decodeStrictly` accepts) to the same bytes, or returns nil
  /// for any other text.
  package static func decodeCanonical(_ text: UnsafeRawBufferPointer) -> Data? {
    let count = text.count
    guard count > 0, count % 4 == 0 else { return nil }
    let equals = UInt8(ascii: "=")
    let padding = text[count &- 1] != equals ? 0 : text[count &- 2] != equals ? 1 : 2
    let decodedCount = count / 4 * 3 &- padding
    // One byte more than the data: the group loop stores four bytes for three. A block the
    // thread reuses (`ReusableBlocks`): a batch decodes a blob per record.
    guard let memory = ReusableBlocks.take(decodedCount &+ 1) else { return nil }
    // Every group but the last, which may hold padding.
    let last = count &- 4
    let (read, written) = decodeWholeGroups(
      UnsafeRawBufferPointer(rebasing: text[..<last]), into: memory)
    // `=` stands for a character of value 0, and a canonical text has no bits set in what the
    // padding drops.
    let values = values
    let sextets = (
      values[Int(text[last])], values[Int(text[last &+ 1])],
      padding == 2 ? 0 : values[Int(text[last &+ 2])],
      padding >= 1 ? 0 : values[Int(text[last &+ 3])]
    )
    let group =
      UInt32(sextets.0) << 18 | UInt32(sextets.1) << 12 | UInt32(sextets.2) << 6
      | UInt32(sextets.3)
    let dropped: UInt32 = padding == 2 ? 0xFFFF : padding == 1 ? 0xFF : 0
    guard read == last, sextets.0 | sextets.1 | sextets.2 | sextets.3 < 64, group & dropped == 0
    else {
      ReusableBlocks.give(memory)
      return nil
    }
    for index in 0..<(3 &- padding) {
      memory.storeBytes(
        of: UInt8(truncatingIfNeeded: group >> (16 &- 8 &* index)), toByteOffset: written &+ index,
        as: UInt8.self)
    }
    return ReusableBlocks.data(adopting: memory, count: decodedCount)
  }

  /// `decodeCanonical` of the text before the first `terminator` in `text` (a byte outside the
  /// alphabet and not `=`, such as the quote that ends a JSON string), found in the same pass as
  /// the decoding: the bytes, in a block of `ReusableBlocks` that is now the caller's to give back,
  /// and where the terminator is. Nil when no terminator follows the groups and their padding, or
  /// the text before it is not canonical (then possibly without having looked for the terminator
  /// any further).
  package static func decodeCanonical(
    _ text: UnsafeRawBufferPointer, upTo terminator: UInt8
  ) -> (block: UnsafeMutableRawPointer, count: Int, end: Int)? {
    let count = text.count
    // Room for the groups of all of `text`, and the one byte more the group loop stores.
    guard count > 0, let memory = ReusableBlocks.take(count / 4 &* 3 &+ 1) else { return nil }
    var (read, written) = decodeWholeGroups(text, into: memory)
    // What stopped the groups: the terminator, or a last group with padding before it.
    let equals = UInt8(ascii: "=")
    if read &+ 4 < count, text[read] != terminator, text[read &+ 3] == equals,
      text[read &+ 4] == terminator
    {
      let padding = text[read &+ 2] == equals ? 2 : 1
      let values = values
      let sextets = (
        values[Int(text[read])], values[Int(text[read &+ 1])],
        padding == 2 ? 0 : values[Int(text[read &+ 2])]
      )
      let group = UInt32(sextets.0) << 18 | UInt32(sextets.1) << 12 | UInt32(sextets.2) << 6
      let dropped: UInt32 = padding == 2 ? 0xFFFF : 0xFF
      guard sextets.0 | sextets.1 | sextets.2 < 64, group & dropped == 0 else {
        ReusableBlocks.give(memory)
        return nil
      }
      for index in 0..<(3 &- padding) {
        memory.storeBytes(
          of: UInt8(truncatingIfNeeded: group >> (16 &- 8 &* index)),
          toByteOffset: written &+ index, as: UInt8.self)
      }
      read &+= 4
      written &+= 3 &- padding
    }
    guard read > 0, read < count, text[read] == terminator else {
      ReusableBlocks.give(memory)
      return nil
    }
    return (memory, written, read)
  }

  /// The strict decoder, character by character: the reference for `decodeCanonical`, and the
  /// one that finds the first wrong character.
  package static func decodeStrictly(_ text: UnsafeRawBufferPointer) -> Result<Data, DecodingError>
  {
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
