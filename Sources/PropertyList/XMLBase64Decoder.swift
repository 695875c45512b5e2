import PortableFoundation

// The XML reader's `<data>` decoder (see XMLPropertyListReader.swift): whole lines of groups at a
// time (Base64Groups.swift), with a guess at a line's length. Its twin: a decoder of one character
// at a time (`XMLDataDifferential.reference`, below). Held equal by `XMLDataDifferential` in
// Tests/PropertyListTests/XMLReaderPathTests.swift and by the fuzz harness
// Fuzz/Sources/FuzzXMLPlist/main.swift.

/// A base64 decoder fed in chunks, as libxml2 delivers text, so that a `<data>` element's size is
/// bounded while it is read rather than after its whole text has been collected. CoreFoundation's
/// reader skips whitespace anywhere in the text, and so does this one.
///
/// The decoded bytes go straight into a block (`ReusableBlocks`) that becomes the `Data`, with no
/// copy.
struct Base64Decoder {
  /// Why decoding failed, for the error message.
  private(set) var problem = ""
  /// How many bytes have been decoded.
  private(set) var count = 0
  private var memory: UnsafeMutableRawPointer?
  private var capacity = 0
  private var accumulator: UInt32 = 0
  private var sextets = 0
  private var padding = 0
  // The group loop's guess at the length of a line (`Base64Groups.Decoder.decodeLines`), kept
  // from chunk to chunk and from one element to the next.
  private var lineLength = 0

  private static let whitespace: UInt8 = 0x40
  private static let pad: UInt8 = 0x41

  /// Sextet values for the base64 alphabet, `whitespace` for space/tab/CR/LF, `pad` for `=`, and
  /// 0xFF for everything else.
  private static let table: [UInt8] = {
    var table = Base64Groups.values
    for byte in [0x20, 0x09, 0x0A, 0x0D] { table[byte] = whitespace }
    table[Int(UInt8(ascii: "="))] = pad
    return table
  }()

  /// Starts a new `<data>` element (keeping the memory of an earlier one that was not handed out).
  mutating func reset() {
    count = 0
    accumulator = 0
    sextets = 0
    padding = 0
  }

  /// Frees the memory, if it was not handed out.
  func release() {
    if let memory { ReusableBlocks.give(memory) }
  }

  /// Decodes one chunk; returns false (and sets `problem`) at the first invalid character.
  mutating func decode(_ chunk: UnsafeBufferPointer<UInt8>) -> Bool {
    // Up to three sextets carry over from the last chunk, every four sextets make three bytes,
    // the group loop stores a fourth byte past each group, and `finish` adds up to two.
    reserve((chunk.count + 3) / 4 * 3 + 4)
    var state = (accumulator: accumulator, sextets: sextets, padding: padding, line: lineLength)
    let output = memory.unsafelyUnwrapped + count
    let (written, failure) = Self.table.withUnsafeBufferPointer { table in
      Base64Groups.withDecoder { groups in
        Self.decode(chunk, table: table, groups: groups, into: output, state: &state)
      }
    }
    (accumulator, sextets, padding, lineLength) = state
    count += written
    guard let failure else { return true }
    problem = failure
    return false
  }

  private mutating func reserve(_ more: Int) {
    let needed = count + more
    guard needed > capacity else { return }
    let larger = Swift.max(needed, capacity * 2)
    guard
      let grown = memory.map({ ReusableBlocks.resize($0, keeping: count, to: larger) })
        ?? ReusableBlocks.take(larger)
    else { fatalError("out of memory") }
    memory = grown
    capacity = larger
  }

  // The loop, apart from `self` and its closures so that its state stays in registers.
  private static func decode(
    _ chunk: UnsafeBufferPointer<UInt8>, table: UnsafeBufferPointer<UInt8>,
    groups: Base64Groups.Decoder, into decoded: UnsafeMutableRawPointer,
    state: inout (accumulator: UInt32, sextets: Int, padding: Int, line: Int)
  ) -> (written: Int, failure: String?) {
    var (accumulator, sextets, padding, line) = state
    defer { state = (accumulator, sextets, padding, line) }
    let text = UnsafeRawBufferPointer(chunk)
    var written = 0
    var index = 0
    let count = chunk.count
    while index < count {
      // Whole groups of alphabet characters before any padding, and the whitespace between them
      // (the body of every line, and the line breaks): three bytes a group, exactly what the code
      // below makes of them one by one. The memory has room for the extra byte the group loop
      // stores.
      if sextets == 0, padding == 0 {
        let (read, decodedBytes) = groups.decodeLines(
          UnsafeRawBufferPointer(rebasing: text[index...]), line: &line, into: decoded + written)
        // Both bounded by the chunk's length, which is in memory.
        index &+= read
        written &+= decodedBytes
        if index == count { break }
      }
      let byte = chunk[index]
      index &+= 1
      let value = table[Int(byte)]
      if value < 64 {
        if padding > 0 { return (written, "characters after '=' padding") }
        accumulator = accumulator << 6 | UInt32(value)
        sextets += 1
        if sextets == 4 {
          decoded.storeBytes(
            of: UInt8(truncatingIfNeeded: accumulator >> 16), toByteOffset: written, as: UInt8.self)
          decoded.storeBytes(
            of: UInt8(truncatingIfNeeded: accumulator >> 8), toByteOffset: written + 1,
            as: UInt8.self)
          decoded.storeBytes(
            of: UInt8(truncatingIfNeeded: accumulator), toByteOffset: written + 2, as: UInt8.self)
          written += 3
          sextets = 0
          accumulator = 0
        }
      } else if value == Self.whitespace {
        // The rest of the run too (a line break and the next line's tabs): each byte of it would
        // otherwise be a failed start of the group loop above.
        while index < count, table[Int(chunk[index])] == Self.whitespace { index &+= 1 }
      } else if value == Self.pad {
        // '=' may only complete a group that has at least two sextets.
        guard sextets >= 2 || padding > 0, sextets + padding < 4 else {
          return (written, "misplaced '=' padding")
        }
        padding += 1
      } else {
        return (
          written,
          byte < 0x80
            ? "invalid character '\(Unicode.Scalar(byte))'"
            : "invalid byte 0x\(String(byte, radix: 16, uppercase: true))"
        )
      }
    }
    return (written, nil)
  }

  /// Flushes a final group of two or three sextets; returns false for a lone trailing sextet.
  mutating func finish() -> Bool {
    switch sextets {
    case 0:
      return true
    case 2:
      // `decode` left room for the bytes of the group it could not complete.
      memory.unsafelyUnwrapped.storeBytes(
        of: UInt8(truncatingIfNeeded: accumulator >> 4), toByteOffset: count, as: UInt8.self)
      count += 1
    case 3:
      memory.unsafelyUnwrapped.storeBytes(
        of: UInt8(truncatingIfNeeded: accumulator >> 10), toByteOffset: count, as: UInt8.self)
      memory.unsafelyUnwrapped.storeBytes(
        of: UInt8(truncatingIfNeeded: accumulator >> 2), toByteOffset: count + 1, as: UInt8.self)
      count += 2
    default:
      problem = "a lone final character"
      return false
    }
    sextets = 0
    return true
  }

  /// The decoded bytes as `Data`. Large ones take the memory along (the next element allocates
  /// anew); small ones are copied, and the memory is kept for the next element.
  mutating func takeData() -> Data {
    guard let memory, count > 0 else { return Data() }
    guard count > 64 else { return Data(bytes: memory, count: count) }
    let data = ReusableBlocks.data(adopting: memory, count: count)
    self.memory = nil
    capacity = 0
    count = 0
    return data
  }
}

/// The `<data>` decoder (its group loops, its line-length guess, text cut anywhere) against a
/// decoder of one character at a time, for tests and fuzzing.
@_spi(Differential)
public enum XMLDataDifferential {
  /// Nil when decoding `text` cut at `cuts` (offsets into it, ascending) gives, with the reader's
  /// decoder after it has decoded `earlier` (whose layout leaves a line-length guess), what
  /// `reference` gives: the same bytes, or the same failure; else what differs.
  public static func difference(_ text: [UInt8], cuts: [Int], earlier: [UInt8]) -> String? {
    var decoder = Base64Decoder()
    defer { decoder.release() }
    _ = decode(earlier, cuts: [], with: &decoder)
    let ours = decode(text, cuts: cuts, with: &decoder)
    let theirs = reference(text)
    return ours == theirs ? nil : "the decoder gives \(ours), the reference \(theirs)"
  }

  /// What decoding gives: the bytes, or why it failed.
  public enum Outcome: Equatable, Sendable {
    case bytes([UInt8])
    case failure(String)
  }

  private static func decode(_ text: [UInt8], cuts: [Int], with decoder: inout Base64Decoder)
    -> Outcome
  {
    decoder.reset()
    var start = 0
    for end in cuts + [text.count] where end >= start && end <= text.count {
      let accepted = text[start..<end].withUnsafeBufferPointer { decoder.decode($0) }
      guard accepted else { return .failure(decoder.problem) }
      start = end
    }
    guard decoder.finish() else { return .failure(decoder.problem) }
    return .bytes(Array(decoder.takeData()))
  }

  /// The decoder as it was first written, one character at a time: whitespace skipped anywhere,
  /// `=` only after two sextets of a group and only to complete it, nothing after padding, and a
  /// final group of two or three sextets decoded.
  public static func reference(_ text: [UInt8]) -> Outcome {
    var output: [UInt8] = []
    var accumulator: UInt32 = 0
    var sextets = 0
    var padding = 0
    for byte in text {
      let value = Base64Groups.values[Int(byte)]
      if value < 64 {
        if padding > 0 { return .failure("characters after '=' padding") }
        accumulator = accumulator << 6 | UInt32(value)
        sextets += 1
        if sextets == 4 {
          output += [
            UInt8(truncatingIfNeeded: accumulator >> 16),
            UInt8(truncatingIfNeeded: accumulator >> 8), UInt8(truncatingIfNeeded: accumulator),
          ]
          sextets = 0
          accumulator = 0
        }
      } else if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D {
        continue
      } else if byte == UInt8(ascii: "=") {
        guard sextets >= 2 || padding > 0, sextets + padding < 4 else {
          return .failure("misplaced '=' padding")
        }
        padding += 1
      } else {
        return .failure(
          byte < 0x80
            ? "invalid character '\(Unicode.Scalar(byte))'"
            : "invalid byte 0x\(String(byte, radix: 16, uppercase: true))")
      }
    }
    switch sextets {
    case 0: break
    case 2: output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
    case 3:
      output += [
        UInt8(truncatingIfNeeded: accumulator >> 10), UInt8(truncatingIfNeeded: accumulator >> 2),
      ]
    default: return .failure("a lone final character")
    }
    return .bytes(output)
  }
}
