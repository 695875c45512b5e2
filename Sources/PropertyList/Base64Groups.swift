import CVectorLoops

// A fast path: the AVX2 blocks (CVectorLoops' base64_avx2.c) before the scalar groups here, and
// the groups before a character at a time. The vectors are held to the scalar loops and to
// Foundation by Tests/PropertyListTests/Base64VectorTests.swift; the XML `<data>` decoder built
// on both to one character at a time by `XMLDataDifferential` (XMLBase64Decoder.swift); the
// one-line decoder built on them to its strict decoder by
// Tests/PropertyListTests/Base64LineTests.swift.

/// The inner loops of base64 (RFC 4648's alphabet), shared by the XML property-list reader and
/// writer and by the one-line base64 of batch records (Base64Line.swift): whole groups of three
/// bytes and four characters, eight characters a step, through tables made once; blocks of 24
/// bytes and 32 characters in AVX2 vectors first where the processor has them (CVectorLoops,
/// a fifth to a quarter of the instructions a character). What surrounds the groups (line layout,
/// whitespace, padding rules, error messages) is each caller's own.
package enum Base64Groups {
  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  // Every 12-bit value as its two characters, the first in the low byte: half the lookups.
  private static let pairs: [UInt16] = (0..<4096).map { value in
    UInt16(alphabet[value >> 6]) | UInt16(alphabet[value & 0x3F]) << 8
  }

  /// Each byte's 6-bit value, or 0xFF for a byte outside the alphabet (`=` included).
  package static let values: [UInt8] = (0..<256).map { byte in
    alphabet.firstIndex(of: UInt8(byte)).map { UInt8($0) } ?? 0xFF
  }

  // A group's four characters each have a table: the character's 6 bits already shifted to
  // their place in the group's three bytes (the first byte lowest), or `invalid` for a byte
  // outside the alphabet. OR-ing a group's four entries gives its bytes, and `invalid` if any
  // was wrong.
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

  /// The number of characters `encode` writes for `count` bytes.
  package static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

  /// Writes the base64 of `input` at `out` (which has room for `encodedCount(input.count)`
  /// characters), padded with `=`.
  package static func encode(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
    withEncoder { $0.encode(input, into: out) }
  }

  /// Whether whole blocks are encoded and decoded in vectors (AVX2) on this processor.
  package static var hasVectors: Bool { cb64v_available() != 0 }

  /// `encode`, in vectors or not (for comparing the two).
  package static func encode(
    _ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer, vectors: Bool
  ) {
    alphabet.withUnsafeBufferPointer { table in
      pairs.withUnsafeBufferPointer { pairs in
        encode(input, table: table, pairs: pairs, into: out, vectors: vectors)
      }
    }
  }

  /// `encode`, with its tables found once for many calls (a global's every use costs a check that
  /// it is initialized): for writers of many short lines.
  package struct Encoder {
    fileprivate let table: UnsafeBufferPointer<UInt8>
    fileprivate let pairs: UnsafeBufferPointer<UInt16>

    /// `Base64Groups.encode(input, into: out)`.
    package func encode(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
      Base64Groups.encode(input, table: table, pairs: pairs, into: out)
    }
  }

  /// Runs `body` with an encoder, valid only inside it.
  package static func withEncoder<Result>(_ body: (Encoder) throws -> Result) rethrows -> Result {
    try alphabet.withUnsafeBufferPointer { table in
      try pairs.withUnsafeBufferPointer { pairs in try body(Encoder(table: table, pairs: pairs)) }
    }
  }

  // The loop, apart from the closures so that its state stays in registers.
  private static func encode(
    _ input: UnsafeRawBufferPointer, table: UnsafeBufferPointer<UInt8>,
    pairs: UnsafeBufferPointer<UInt16>, into out: UnsafeMutableRawPointer, vectors: Bool = true
  ) {
    // Whole blocks of 24 bytes in vectors where the processor has them; the rest here.
    var read = 0
    if vectors, let base = input.baseAddress {
      read = cb64v_encode_blocks(
        base.assumingMemoryBound(to: UInt8.self), input.count,
        out.assumingMemoryBound(to: UInt8.self))
    }
    var written = read / 3 &* 4
    // Six bytes to eight characters, read as one 8-byte load (its last two bytes unused), and each
    // pair of characters stored on its own: cheaper than putting the four together in a register.
    // Two such steps a turn, so that the loop's own cost is shared.
    @inline(__always) func six(_ word: UInt64, at offset: Int) {
      // Unsigned shifts: each index is 12 bits, never negative.
      @inline(__always) func pair(_ shift: UInt64) -> UInt16 {
        pairs[Int(truncatingIfNeeded: (word &>> shift) & 0xFFF)].littleEndian
      }
      out.storeBytes(of: pair(52), toByteOffset: offset, as: UInt16.self)
      out.storeBytes(of: pair(40), toByteOffset: offset &+ 2, as: UInt16.self)
      out.storeBytes(of: pair(28), toByteOffset: offset &+ 4, as: UInt16.self)
      out.storeBytes(of: pair(16), toByteOffset: offset &+ 6, as: UInt16.self)
    }
    while input.count &- read >= 14 {
      let first = UInt64(bigEndian: input.loadUnaligned(fromByteOffset: read, as: UInt64.self))
      let second = UInt64(
        bigEndian: input.loadUnaligned(fromByteOffset: read &+ 6, as: UInt64.self))
      six(first, at: written)
      six(second, at: written &+ 8)
      read &+= 12
      written &+= 16
    }
    if input.count &- read >= 8 {
      six(
        UInt64(bigEndian: input.loadUnaligned(fromByteOffset: read, as: UInt64.self)), at: written)
      read &+= 6
      written &+= 8
    }
    let whole = input.count - input.count % 3
    while read < whole {
      let group = Int(input[read]) << 16 | Int(input[read &+ 1]) << 8 | Int(input[read &+ 2])
      let characters = UInt32(pairs[group >> 12]) | UInt32(pairs[group & 0xFFF]) << 16
      out.storeBytes(of: characters.littleEndian, toByteOffset: written, as: UInt32.self)
      read &+= 3
      written &+= 4
    }
    let equals = UInt8(ascii: "=")
    switch input.count - whole {
    case 1:
      let group = Int(input[read]) << 16
      out.storeBytes(of: table[group >> 18], toByteOffset: written, as: UInt8.self)
      out.storeBytes(of: table[(group >> 12) & 0x3F], toByteOffset: written + 1, as: UInt8.self)
      out.storeBytes(of: equals, toByteOffset: written + 2, as: UInt8.self)
      out.storeBytes(of: equals, toByteOffset: written + 3, as: UInt8.self)
    case 2:
      let group = Int(input[read]) << 16 | Int(input[read + 1]) << 8
      out.storeBytes(of: table[group >> 18], toByteOffset: written, as: UInt8.self)
      out.storeBytes(of: table[(group >> 12) & 0x3F], toByteOffset: written + 1, as: UInt8.self)
      out.storeBytes(of: table[(group >> 6) & 0x3F], toByteOffset: written + 2, as: UInt8.self)
      out.storeBytes(of: equals, toByteOffset: written + 3, as: UInt8.self)
    default:
      break
    }
  }

  /// Decodes the groups of four alphabet characters at the start of `text`, up to the first
  /// group holding anything else (padding, whitespace, a wrong byte) or fewer than four
  /// characters, and returns how many characters it read and bytes it wrote.
  ///
  /// `out` must have room for three bytes a group of `text` plus one: each group is stored as four
  /// bytes, the fourth overwritten by the next group.
  package static func decodeWholeGroups(
    _ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer
  ) -> (read: Int, written: Int) {
    withDecoder { $0.decodeWholeGroups(text, into: out) }
  }

  /// `decodeWholeGroups`, in vectors or not (for comparing the two).
  package static func decodeWholeGroups(
    _ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer, vectors: Bool
  ) -> (read: Int, written: Int) {
    guard let base = text.baseAddress else { return (0, 0) }
    return quadruples.withUnsafeBufferPointer { tables in
      groups(
        base, from: 0, to: text.count, tables: tables.baseAddress!, into: out, vectors: vectors)
    }
  }

  /// `decodeWholeGroups`, with its tables found once for many calls: for readers of many lines.
  package struct Decoder {
    fileprivate let tables: UnsafePointer<UInt32>

    /// `Base64Groups.decodeWholeGroups(text, into: out)`.
    package func decodeWholeGroups(
      _ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer
    ) -> (read: Int, written: Int) {
      Base64Groups.decodeWholeGroups(text, tables: tables, into: out)
    }

    /// Decodes whole groups as `decodeWholeGroups` does, and goes on across runs of whitespace
    /// (space, tab, CR, LF) that start and end between groups: base64 in lines, as
    /// CoreFoundation's XML writer and most encoders lay it out, in one call. Stops before a
    /// group holding anything else (padding, a wrong byte, whitespace within the group) or fewer
    /// than four characters, and returns how many characters it read (whitespace included) and
    /// bytes it wrote. Skipping whitespace there is what a decoder that skips it anywhere does.
    ///
    /// `line` carries a guess from call to call: the characters of a line's groups (0 for none).
    /// Each line's groups are then decoded that far without the group loop meeting the line's
    /// end first, which costs it a failed step. The guess only decides where a loop stops, never
    /// what is decoded.
    ///
    /// `out` must have room for three bytes a group of `text` plus one.
    ///
    /// Where the processor has AVX2, the whole loop runs in C (`cb64v_decode_lines`), whole
    /// blocks in vectors. `vectors: false` runs the scalar loops here (for comparing the two).
    package func decodeLines(
      _ text: UnsafeRawBufferPointer, line: inout Int, into out: UnsafeMutableRawPointer,
      vectors: Bool = true
    ) -> (read: Int, written: Int) {
      if vectors, Base64Groups.hasVectors, let base = text.baseAddress {
        var written = 0
        var guess = max(line, 0)
        let read = cb64v_decode_lines(
          base.assumingMemoryBound(to: UInt8.self), text.count,
          out.assumingMemoryBound(to: UInt8.self), &written, &guess)
        line = guess
        return (read, written)
      }
      return Base64Groups.decodeLines(
        text, line: &line, tables: tables, into: out, vectors: vectors)
    }
  }

  /// Runs `body` with a decoder, valid only inside it.
  package static func withDecoder<Result>(_ body: (Decoder) throws -> Result) rethrows -> Result {
    try quadruples.withUnsafeBufferPointer { try body(Decoder(tables: $0.baseAddress!)) }
  }

  private static func decodeWholeGroups(
    _ text: UnsafeRawBufferPointer, tables: UnsafePointer<UInt32>,
    into out: UnsafeMutableRawPointer
  ) -> (read: Int, written: Int) {
    guard let base = text.baseAddress else { return (0, 0) }
    return groups(base, from: 0, to: text.count, tables: tables, into: out)
  }

  private static func decodeLines(
    _ text: UnsafeRawBufferPointer, line: inout Int, tables: UnsafePointer<UInt32>,
    into out: UnsafeMutableRawPointer, vectors: Bool
  ) -> (read: Int, written: Int) {
    guard let base = text.baseAddress else { return (0, 0) }
    let count = text.count
    @inline(__always) func isWhitespace(_ offset: Int) -> Bool {
      let byte = base.load(fromByteOffset: offset, as: UInt8.self)
      return byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }
    var guess = line
    var read = 0
    var written = 0
    while true {
      while read < count, isWhitespace(read) { read &+= 1 }
      let start = read
      if guess > 0, count &- read > guess {
        let end = read &+ guess
        var run = groups(
          base, from: read, to: end, tables: tables, into: out + written, vectors: vectors)
        read = run.read
        written &+= run.written
        // The guess was right: the next line.
        if read == end, isWhitespace(read) { continue }
        // A line longer than the guess, or a guess that is not of whole groups (the loops stopped
        // for want of room, not at a group that is not clean): the rest of it.
        if end &- read < 4 {
          run = groups(
            base, from: read, to: count, tables: tables, into: out + written, vectors: vectors)
          read = run.read
          written &+= run.written
        }
      } else {
        let run = groups(
          base, from: read, to: count, tables: tables, into: out + written, vectors: vectors)
        read = run.read
        written &+= run.written
      }
      // Groups up to whitespace are a line; anything else ends the groups.
      guard read < count, isWhitespace(read) else { break }
      guess = read &- start
    }
    line = guess
    return (read, written)
  }

  // The group loops over `base[from..<to]`: returns where they stopped and the bytes written.
  @inline(__always)
  private static func groups(
    _ base: UnsafeRawPointer, from start: Int, to count: Int, tables t0: UnsafePointer<UInt32>,
    into out: UnsafeMutableRawPointer, vectors: Bool = true
  ) -> (read: Int, written: Int) {
    let t1 = t0 + 256
    let t2 = t0 + 512
    let t3 = t0 + 768
    // Whole blocks of 32 characters in vectors where the processor has them (stopping at the
    // block that holds anything else); the rest, and that block, here.
    var read = start
    if vectors, count &- start >= 32 {
      read &+= cb64v_decode_blocks(
        (base + start).assumingMemoryBound(to: UInt8.self), count &- start,
        out.assumingMemoryBound(to: UInt8.self))
    }
    var written = (read &- start) / 4 &* 3
    // Four groups a step while all are clean; the step that meets anything else is redone a
    // group at a time below, which stops at the group that holds it. Each character is its own
    // byte load: cheaper than taking bytes out of a wider load, which costs a shift and a mask.
    while count &- read >= 16 {
      let p = base + read
      func c(_ offset: Int) -> Int { Int(p.load(fromByteOffset: offset, as: UInt8.self)) }
      let g0 = t0[c(0)] | t1[c(1)] | t2[c(2)] | t3[c(3)]
      let g1 = t0[c(4)] | t1[c(5)] | t2[c(6)] | t3[c(7)]
      let g2 = t0[c(8)] | t1[c(9)] | t2[c(10)] | t3[c(11)]
      let g3 = t0[c(12)] | t1[c(13)] | t2[c(14)] | t3[c(15)]
      guard (g0 | g1 | g2 | g3) & invalid == 0 else { break }
      out.storeBytes(of: g0.littleEndian, toByteOffset: written, as: UInt32.self)
      out.storeBytes(of: g1.littleEndian, toByteOffset: written &+ 3, as: UInt32.self)
      out.storeBytes(of: g2.littleEndian, toByteOffset: written &+ 6, as: UInt32.self)
      out.storeBytes(of: g3.littleEndian, toByteOffset: written &+ 9, as: UInt32.self)
      read &+= 16
      written &+= 12
    }
    while count &- read >= 4 {
      let p = base + read
      func c(_ offset: Int) -> Int { Int(p.load(fromByteOffset: offset, as: UInt8.self)) }
      let group = t0[c(0)] | t1[c(1)] | t2[c(2)] | t3[c(3)]
      guard group & invalid == 0 else { break }
      out.storeBytes(of: group.littleEndian, toByteOffset: written, as: UInt32.self)
      read &+= 4
      written &+= 3
    }
    return (read, written)
  }
}
