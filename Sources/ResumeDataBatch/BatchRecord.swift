import PortableFoundation
import PropertyList

/// One input line of `resumedata batch`: `{"id": …, "blob": "<base64>"}`,
/// `{"id": …, "text": "<a blob in any captured form>"}` or `{"id": …, "path": "…"}`.
///
/// The line is read by a strict RFC 8259 scanner of our own rather than `JSONSerialization`, for
/// two things a pipeline needs: the `id` is echoed exactly as written (a round trip through
/// `Double` would change `12345678901234567890` or `1.0`), and an error names the column it is at.
struct BatchRecord {
  /// Where the blob of a record comes from.
  enum Source {
    /// The blob's bytes, still base64 (the string with its JSON escapes undone), and the line's
    /// column (1-based) of its first byte when it has no escapes (then each byte is at its own
    /// column).
    case base64(Data, column: Int?)
    /// The blob's bytes, from base64 read straight out of the line (canonical, and so without
    /// escapes), and where that text is in the line.
    case decoded(DecodedBlob, text: Range<Int>)
    /// A file holding the blob.
    case path(String)
    /// The blob in any form it is captured in (`CapturedBlob.read`): the string's bytes, its JSON
    /// escapes undone.
    case text(Data)
  }

  /// The `id` value's JSON text, as written; nil when the record has none.
  var id: String?
  /// Where the blob comes from.
  var source: Source

  /// A line that is not a record: where (1-based byte column) and what, with the id when it was
  /// read before the problem.
  struct Failure: Error {
    var column: Int
    var message: String
    var id: String?
  }

  /// Deepest nesting accepted inside an `id`, so that `[[[[…` cannot exhaust the stack.
  static let maximumDepth = 64

  /// Reads a record from one line (without its line break).
  init(line: UnsafeBufferPointer<UInt8>) throws(Failure) {
    var scanner = JSONScanner(line)
    var id: String?
    var source: Source?
    do throws(JSONScanner.Failure) {
      scanner.skipWhitespace()
      guard !scanner.atEnd else { throw scanner.failure("empty line; expected a JSON object") }
      // Editors on Windows save one at a file's start; JSON writers add none (RFC 8259 §8.1),
      // and a reader may refuse it: refused, but by name.
      if scanner.startsWithByteOrderMark {
        throw scanner.failure(
          "the line starts with a UTF-8 byte-order mark, which JSON lines do not take "
            + "(save the file without one)")
      }
      try scanner.expect(UInt8(ascii: "{"), "a record must be a JSON object")
      scanner.skipWhitespace()
      if !scanner.consume(UInt8(ascii: "}")) {
        repeat {
          scanner.skipWhitespace()
          let keyStart = scanner.position
          guard scanner.peek == UInt8(ascii: "\"") else {
            throw scanner.failure("expected a member name in double quotes")
          }
          let key = try scanner.scanString()
          scanner.skipWhitespace()
          try scanner.expect(UInt8(ascii: ":"), "expected ':' after a member name")
          scanner.skipWhitespace()
          let valueStart = scanner.position
          let isBlob = scanner.matches(key, "blob")
          let isText = scanner.matches(key, "text")
          if scanner.matches(key, "id") {
            guard id == nil else { throw scanner.failure("duplicate \"id\"", at: keyStart) }
            try scanner.skipValue(depth: Self.maximumDepth)
            id = scanner.compactText(from: valueStart)
          } else if isBlob || isText || scanner.matches(key, "path") {
            guard source == nil else {
              throw scanner.failure(
                "a record has one \"blob\", one \"text\" or one \"path\"", at: keyStart)
            }
            guard scanner.peek == UInt8(ascii: "\"") else {
              throw scanner.failure(
                "\"\(isBlob ? "blob" : isText ? "text" : "path")\" must be a string")
            }
            if isText {
              source = .text(scanner.data(of: try scanner.scanString()))
            } else if isBlob, let (decoded, text) = scanner.canonicalBase64String() {
              // The bytes stay in the decoder's block: the one pass reads them there.
              source = .decoded(decoded, text: text)
            } else if isBlob {
              let blob = try scanner.scanString()
              if case .plain(let range) = blob {
                source = .base64(scanner.data(of: blob), column: range.lowerBound + 1)
              } else {
                source = .base64(scanner.data(of: blob), column: nil)
              }
            } else {
              let value = try scanner.string()
              guard let path = String(validating: value, as: UTF8.self), !path.isEmpty,
                !path.utf8.contains(0)
              else {
                throw scanner.failure("\"path\" must be a non-empty file name", at: valueStart)
              }
              source = .path(path)
            }
          } else {
            // Other members are allowed (a pipeline may carry its own), but must be valid JSON.
            try scanner.skipValue(depth: Self.maximumDepth)
          }
          scanner.skipWhitespace()
        } while scanner.consume(UInt8(ascii: ","))
        try scanner.expect(UInt8(ascii: "}"), "expected ',' or '}' in the record")
      }
      scanner.skipWhitespace()
      guard scanner.atEnd else { throw scanner.failure("text after the record") }
    } catch {
      throw Failure(column: error.offset + 1, message: error.message, id: id)
    }
    guard let source else {
      throw Failure(
        column: 1, message: "a record needs a \"blob\", a \"text\" or a \"path\"", id: id)
    }
    self.id = id
    self.source = source
  }
}

/// A record's blob decoded from its base64, in the decoder's block (`ReusableBlocks`), which it
/// gives back when the last reference goes: read in place by the one pass over healthy blobs,
/// and made a `Data` (sharing the block) only for the full path.
final class DecodedBlob: @unchecked Sendable {
  // Never written after `init`: the class only owns the block.
  private let block: UnsafeMutableRawPointer
  private let count: Int

  init(adopting block: UnsafeMutableRawPointer, count: Int) {
    self.block = block
    self.count = count
  }

  deinit { ReusableBlocks.give(block) }

  /// The bytes, valid while this object lives.
  var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: block, count: count) }

  /// The bytes as a `Data`, which keeps this object (and so the block) alive.
  var data: Data {
    Data(bytesNoCopy: block, count: count, deallocator: .custom { _, _ in _ = self })
  }
}

/// A cursor over the bytes of one JSON text, checking RFC 8259's grammar as it goes.
private struct JSONScanner {
  struct Failure: Error {
    var offset: Int
    var message: String
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private(set) var position = 0

  init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  var atEnd: Bool { position >= bytes.count }
  var peek: UInt8? { atEnd ? nil : bytes[position] }

  /// Whether the bytes from the cursor are U+FEFF in UTF-8.
  var startsWithByteOrderMark: Bool {
    bytes.count - position >= 3 && bytes[position] == 0xEF && bytes[position + 1] == 0xBB
      && bytes[position + 2] == 0xBF
  }

  func failure(_ message: String, at offset: Int? = nil) -> Failure {
    Failure(offset: offset ?? position, message: message)
  }

  /// The checked JSON text from `start` to the cursor without its insignificant whitespace: the
  /// value as written, but on one line and free of tabs (which Hadoop Streaming reads as a key's
  /// end).
  func compactText(from start: Int) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(position - start)
    var inString = false
    var escaped = false
    for byte in bytes[start..<position] {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
      } else if byte == UInt8(ascii: "\"") {
        inString = true
      } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
        || byte == UInt8(ascii: "\r")
        || byte == UInt8(ascii: "\n")
      {
        continue
      }
      out.append(byte)
    }
    return String(decoding: out, as: UTF8.self)
  }

  mutating func skipWhitespace() {
    while let byte = peek,
      byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
        || byte == UInt8(ascii: "\n")
    {
      position += 1
    }
  }

  mutating func consume(_ byte: UInt8) -> Bool {
    guard peek == byte else { return false }
    position += 1
    return true
  }

  mutating func expect(_ byte: UInt8, _ message: String) throws(Failure) {
    guard consume(byte) else { throw failure(message) }
  }

  /// Checks any JSON value, nested at most `depth` deep.
  mutating func skipValue(depth: Int) throws(Failure) {
    guard depth > 0 else { throw failure("nested deeper than \(BatchRecord.maximumDepth) levels") }
    guard let byte = peek else { throw failure("expected a value") }
    switch byte {
    case UInt8(ascii: "\""):
      _ = try scanString()
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      let isObject = byte == UInt8(ascii: "{")
      let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
      position += 1
      skipWhitespace()
      if consume(close) { return }
      repeat {
        skipWhitespace()
        if isObject {
          guard peek == UInt8(ascii: "\"") else {
            throw failure("expected a member name in double quotes")
          }
          _ = try scanString()
          skipWhitespace()
          try expect(UInt8(ascii: ":"), "expected ':' after a member name")
          skipWhitespace()
        }
        try skipValue(depth: depth - 1)
        skipWhitespace()
      } while consume(UInt8(ascii: ","))
      try expect(close, isObject ? "expected ',' or '}'" : "expected ',' or ']'")
    case UInt8(ascii: "t"): try literal("true")
    case UInt8(ascii: "f"): try literal("false")
    case UInt8(ascii: "n"): try literal("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      try number()
    default:
      throw failure("expected a value")
    }
  }

  private mutating func literal(_ word: StaticString) throws(Failure) {
    let start = position
    for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
      guard consume(expected) else { throw failure("expected a value", at: start) }
    }
  }

  private mutating func digits() -> Int {
    let start = position
    while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
    return position - start
  }

  private mutating func number() throws(Failure) {
    _ = consume(UInt8(ascii: "-"))
    if consume(UInt8(ascii: "0")) {
      if let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
        throw failure("a number has no leading zeros")
      }
    } else if digits() == 0 {
      throw failure("expected a digit")
    }
    if consume(UInt8(ascii: ".")), digits() == 0 { throw failure("expected a digit after '.'") }
    if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
      if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
      guard digits() > 0 else { throw failure("expected a digit in the exponent") }
    }
  }

  /// Reads a string at the cursor (which is at its opening quote) that is canonical base64 (as
  /// `Base64Groups.decodeCanonical` takes it), and returns its bytes and where its text is; or
  /// returns nil and stays put.
  ///
  /// The common case in one pass over the string instead of two: no byte of base64 needs an
  /// escape, so the string ends at the first quote, and the decoder refuses everything else (a
  /// backslash, a control character, a byte above 0x7F), which is then read the long way.
  ///
  /// The decoder's block has room for the rest of the line (three quarters of its bytes at most,
  /// and the record limit bounds the line), not only the string: the string's end is found as it
  /// is decoded.
  mutating func canonicalBase64String() -> (DecodedBlob, Range<Int>)? {
    let start = position + 1
    guard start < bytes.count,
      let (block, count, length) = Base64Groups.decodeCanonical(
        UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...]),
        upTo: UInt8(ascii: "\""))
    else { return nil }
    let end = start + length
    position = end + 1
    return (DecodedBlob(adopting: block, count: count), start..<end)
  }

  /// Reads a string at the cursor (which is at its opening quote): its bytes with the escapes
  /// undone. The text must be UTF-8 (a blob's base64 is ASCII, a path is checked by its reader).
  mutating func string() throws(Failure) -> [UInt8] {
    switch try scanString() {
    case .plain(let range): Array(bytes[range])
    case .unescaped(let unescaped): unescaped
    }
  }

  /// A string read by `scanString`.
  enum ScannedString {
    /// Where its text is in the line: it has no escapes.
    case plain(Range<Int>)
    /// Its bytes with the escapes undone.
    case unescaped([UInt8])
  }

  /// Reads a string at the cursor (which is at its opening quote) without copying it when it has
  /// no escapes (a base64 blob): its place in the line, else its bytes with the escapes undone.
  /// The text must be UTF-8.
  mutating func scanString() throws(Failure) -> ScannedString {
    let opening = position
    position += 1
    let start = position
    let sawNonASCII = skipPlainStringBytes()
    if peek == UInt8(ascii: "\"") {
      let range = start..<position
      position += 1
      let text = UnsafeBufferPointer(rebasing: bytes[range])
      guard !sawNonASCII || String(validating: text, as: UTF8.self) != nil
      else { throw failure("a string is not valid UTF-8", at: opening) }
      return .plain(range)
    }
    var out = Array(bytes[start..<position])
    while true {
      guard let byte = peek else { throw failure("unterminated string", at: opening) }
      position += 1
      switch byte {
      case UInt8(ascii: "\""):
        guard !out.contains(where: { $0 >= 0x80 }) || String(validating: out, as: UTF8.self) != nil
        else {
          throw failure("a string is not valid UTF-8", at: opening)
        }
        return .unescaped(out)
      case UInt8(ascii: "\\"):
        try escape(into: &out)
      case 0..<0x20:
        throw failure("a control character must be escaped in a string", at: position - 1)
      default:
        out.append(byte)
      }
    }
  }

  /// Whether a string read by `scanString` is `word` (compared in place, without a copy).
  func matches(_ string: ScannedString, _ word: StaticString) -> Bool {
    let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    switch string {
    case .plain(let range): return bytes[range].elementsEqual(expected)
    case .unescaped(let unescaped): return unescaped.elementsEqual(expected)
    }
  }

  /// The bytes of a string read by `scanString`, as `Data`.
  func data(of string: ScannedString) -> Data {
    switch string {
    case .plain(let range): Data(UnsafeBufferPointer(rebasing: bytes[range]))
    case .unescaped(let unescaped): Data(unescaped)
    }
  }

  /// Moves the cursor past the bytes that stand for themselves in a string (not `"`, `\\` or a
  /// control character): eight at a time while none of the eight is special.
  ///
  /// - Returns: whether any of them is not ASCII (then the string must be checked to be UTF-8).
  private mutating func skipPlainStringBytes() -> Bool {
    var high: UInt64 = 0
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let base = UnsafeRawPointer(bytes.baseAddress)
    while let base, bytes.count - position >= 8 {
      let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
      // A byte below 0x20, or equal to `"` or `\`, sets its high bit in one of these (a match
      // can also flag the bytes above it, which the byte-by-byte loop below then sorts out).
      let control = (word &- ones &* 0x20) & ~word & highs
      let quote = word ^ (ones &* 0x22)
      let backslash = word ^ (ones &* 0x5C)
      let special =
        control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs)
      guard special == 0 else { break }
      high |= word & highs
      position += 8
    }
    while let byte = peek, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 {
      high |= UInt64(byte & 0x80)
      position += 1
    }
    return high != 0
  }

  private mutating func escape(into out: inout [UInt8]) throws(Failure) {
    let start = position - 1
    guard let byte = peek else { throw failure("unterminated escape", at: start) }
    position += 1
    let simple: UInt8? =
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
      case UInt8(ascii: "b"): 0x08
      case UInt8(ascii: "f"): 0x0C
      case UInt8(ascii: "n"): 0x0A
      case UInt8(ascii: "r"): 0x0D
      case UInt8(ascii: "t"): 0x09
      default: nil
      }
    if let simple {
      out.append(simple)
      return
    }
    guard byte == UInt8(ascii: "u") else { throw failure("unknown escape", at: start) }
    var scalar = try hex4(at: start)
    if (0xD800..<0xDC00).contains(scalar) {
      // A high surrogate must be followed by the escaped low one; together they are one scalar.
      guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")) else {
        throw failure("an unpaired surrogate in a \\u escape", at: start)
      }
      let low = try hex4(at: start)
      guard (0xDC00..<0xE000).contains(low) else {
        throw failure("an unpaired surrogate in a \\u escape", at: start)
      }
      scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
    } else if (0xDC00..<0xE000).contains(scalar) {
      throw failure("an unpaired surrogate in a \\u escape", at: start)
    }
    // Every value left is a valid scalar: surrogates were handled above.
    out.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
  }

  private mutating func hex4(at start: Int) throws(Failure) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = peek, let digit = Self.hexValue(byte) else {
        throw failure("a \\u escape needs four hex digits", at: start)
      }
      value = value << 4 | digit
      position += 1
    }
    return value
  }

  private static func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }
}
