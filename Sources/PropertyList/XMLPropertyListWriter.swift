import CVectorLoops
import PortableFoundation

/// Writes XML property lists in CoreFoundation's exact layout.
///
/// The XML declaration and Apple DOCTYPE, `<plist version="1.0">`, one tab per nesting level, keys
/// sorted by UTF-16 code unit, `<data>` in base64 lines that shrink by 8 columns a level (CF's
/// 76-column budget counts each tab as 8), `<real>` as `%.17g`, dates to the second, UIDs as
/// `{CF$UID: n}` dictionaries, and a trailing newline.
public struct XMLPropertyListWriter: Sendable {
  /// Deepest nesting written; deeper values are refused rather than risking the stack.
  public var maximumDepth: Int

  /// Creates a writer.
  public init(maximumDepth: Int = PropertyListLimits.default.maximumDepth) {
    self.maximumDepth = maximumDepth
  }

  /// Writes a value.
  ///
  /// - Returns: the UTF-8 bytes of the XML plist.
  /// - Throws: ``PropertyListError`` with code `.unencodable` for a date outside years 0001–9999 or
  ///   a value nested deeper than `maximumDepth`.
  public func write(_ value: PropertyListValue) throws -> Data {
    var out = XMLOutput(capacity: 1024)
    out.put(Self.header)
    try append(value, depth: 0, to: &out)
    out.put("</plist>\n")
    return out.finish()
  }

  static let header: StaticString = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">

    """

  private func append(_ value: PropertyListValue, depth: Int, to out: inout XMLOutput) throws {
    switch value {
    case .string(let string):
      out.put("<string>")
      try appendEscaped(string, to: &out)
      out.put("</string>\n")
    case .integer(let integer):
      out.put("<integer>")
      out.putDecimal(
        negative: integer.isNegative,
        magnitude: integer.isNegative ? 0 &- integer.bitPattern : integer.bitPattern)
      out.put("</integer>\n")
    case .real(let real):
      out.put("<real>")
      out.put(PropertyListReal.xmlText(real.value))
      out.put("</real>\n")
    case .boolean(let flag):
      out.put(flag ? "<true/>\n" : "<false/>\n")
    case .date(let date):
      guard let text = XMLDate.text(date.timeIntervalSinceReferenceDate) else {
        throw PropertyListError(
          .unencodable,
          "date \(date.timeIntervalSinceReferenceDate) s after 2001 is outside years 0001-9999, which XML cannot hold"
        )
      }
      out.put("<date>")
      out.put(text)
      out.put("</date>\n")
    case .data(let data):
      out.put("<data>\n")
      appendBase64(data, indent: depth, to: &out)
      out.putTabs(depth)
      out.put("</data>\n")
    case .uid(let uid):
      guard uid <= UInt64(UInt32.max) else {
        throw PropertyListError(
          .unencodable, "UID \(uid) is above 4294967295, which no reader accepts")
      }
      out.put("<dict>\n")
      out.putTabs(depth + 1)
      out.put("<key>CF$UID</key>\n")
      out.putTabs(depth + 1)
      out.put("<integer>")
      out.putDecimal(negative: false, magnitude: uid)
      out.put("</integer>\n")
      out.putTabs(depth)
      out.put("</dict>\n")
    case .array(let elements):
      try checkDepth(depth)
      if elements.isEmpty {
        out.put("<array/>\n")
        return
      }
      out.put("<array>\n")
      for element in elements {
        out.putTabs(depth + 1)
        try append(element, depth: depth + 1, to: &out)
      }
      out.putTabs(depth)
      out.put("</array>\n")
    case .dictionary(let dictionary):
      try checkDepth(depth)
      if dictionary.isEmpty {
        out.put("<dict/>\n")
        return
      }
      out.put("<dict>\n")
      for (key, element) in dictionary.sortedEntries {
        out.putTabs(depth + 1)
        out.put("<key>")
        try appendEscaped(key, to: &out)
        out.put("</key>\n")
        out.putTabs(depth + 1)
        try append(element, depth: depth + 1, to: &out)
      }
      out.putTabs(depth)
      out.put("</dict>\n")
    }
  }

  private func checkDepth(_ depth: Int) throws {
    guard depth < maximumDepth else {
      throw PropertyListError(.unencodable, "value nests deeper than the limit of \(maximumDepth)")
    }
  }

  // CoreFoundation escapes only these three; quotes and apostrophes are written as they are.
  // Characters XML 1.0 cannot carry at all (controls other than tab, LF and CR; U+FFFE; U+FFFF) are
  // refused: CoreFoundation writes them raw, giving a file that no conforming parser, ours included,
  // reads back.
  private func appendEscaped(_ string: String, to out: inout XMLOutput) throws {
    // Most text needs no escaping and holds nothing suspicious: then it is its own bytes, appended
    // at once rather than byte by byte.
    let plain = string.withUTF8InPlace { utf8 in
      let needsWork = Self.needsEscaping(UnsafeRawBufferPointer(utf8))
      if !needsWork { out.put(UnsafeRawBufferPointer(utf8)) }
      return !needsWork
    }
    if plain { return }
    var suspicious = false
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "<"): out.put("&lt;")
      case UInt8(ascii: ">"): out.put("&gt;")
      case UInt8(ascii: "&"): out.put("&amp;")
      // A raw CR would come back as LF (XML parsers normalise line ends), so unlike CoreFoundation
      // it is written as a character reference, which every parser keeps.
      case 0x0D: out.put("&#13;")
      case 0x09, 0x0A: out.put(byte)
      case 0..<0x20, 0xEF:
        suspicious = true
        out.put(byte)
      default: out.put(byte)
      }
    }
    if suspicious,
      let bad = string.unicodeScalars.first(where: {
        ($0.value < 0x20 && ![0x09, 0x0A, 0x0D].contains($0.value)) || $0.value == 0xFFFE
          || $0.value == 0xFFFF
      })
    {
      let hex = String(bad.value, radix: 16, uppercase: true)
      throw PropertyListError(
        .unencodable,
        "string holds U+\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex), which XML cannot carry; write binary instead"
      )
    }
  }

  /// Whether text holds `<`, `>`, `&`, a CR, a control character other than tab and LF, or 0xEF
  /// (the lead byte of U+FFFE and U+FFFF): what `appendEscaped` must look at byte by byte.
  static func needsEscaping(_ text: UnsafeRawBufferPointer) -> Bool {
    cvl_xml_needs_escaping(text.baseAddress?.assumingMemoryBound(to: UInt8.self), text.count) != 0
  }

  /// Whether text is printable ASCII, tabs and line breaks only: text the writer writes as it is
  /// (a CR as a character reference) and every reader reads back as it was.
  package static func isPlainText(_ text: UnsafeRawBufferPointer) -> Bool {
    cvl_xml_is_plain_text(text.baseAddress?.assumingMemoryBound(to: UInt8.self), text.count) != 0
  }

  /// Base64 in CoreFoundation's line layout: a line is flushed once it reaches 76 − 8·indent
  /// characters, checked after each input byte; the indent counts at most 8 levels. That length
  /// is a multiple of four, so every line but the last holds whole groups: (76 − 8·indent) / 4 of
  /// them, three bytes each.
  private func appendBase64(_ data: Data, indent: Int, to out: inout XMLOutput) {
    // CF clamps the indent to 8 for the base64 lines only; `</data>` keeps the real depth.
    let indent = min(indent, 8)
    let length = Self.base64LinesLength(data.count, indent: indent)
    out.append(length) { text in
      data.withUnsafeBytes { Self.writeBase64Lines($0, indent: indent, length: length, to: text) }
    }
  }

  /// The length of `count` bytes in base64 lines at an indent of 0 to 8.
  package static func base64LinesLength(_ count: Int, indent: Int) -> Int {
    let bytesPerLine = (76 - 8 * indent) / 4 * 3
    let (fullLines, rest) = count.quotientAndRemainder(dividingBy: bytesPerLine)
    let fullLine = indent + Base64Groups.encodedCount(bytesPerLine) + 1
    // Cannot overflow: the bytes are in memory, and their text is at most three times their size.
    return fullLines * fullLine + (rest > 0 ? indent + Base64Groups.encodedCount(rest) + 1 : 0)
  }

  /// Writes `bytes` in base64 lines at an indent of 0 to 8 (`length` characters, as
  /// `base64LinesLength` gives): in one call to the vector loops where the processor has AVX2
  /// and `vectors` allows, else a line at a time.
  package static func writeBase64Lines(
    _ bytes: UnsafeRawBufferPointer, indent: Int, length: Int, to text: UnsafeMutableRawPointer,
    vectors: Bool = true
  ) {
    let count = bytes.count
    let bytesPerLine = (76 - 8 * indent) / 4 * 3
    if vectors, let base = bytes.baseAddress,
      cb64v_encode_lines(
        base.assumingMemoryBound(to: UInt8.self), count, bytesPerLine, indent,
        text.assumingMemoryBound(to: UInt8.self)) != 0
    {
      return
    }
    Base64Groups.withEncoder { encoder in
      var position = 0
      var read = 0
      while read < count {
        let take = min(bytesPerLine, count - read)
        // A line's few tabs (at most 8): a word of tabs where the text has room for it, the
        // characters after them written over the rest; a call to fill them cost more.
        if length &- position >= 8 {
          text.storeBytes(
            of: 0x0909_0909_0909_0909 as UInt64, toByteOffset: position, as: UInt64.self)
          position &+= indent
        } else {
          for _ in 0..<indent {
            text.storeBytes(of: 0x09, toByteOffset: position, as: UInt8.self)
            position &+= 1
          }
        }
        encoder.encode(
          UnsafeRawBufferPointer(rebasing: bytes[read..<(read + take)]), into: text + position)
        position += Base64Groups.encodedCount(take)
        text.storeBytes(of: 0x0A, toByteOffset: position, as: UInt8.self)
        position += 1
        read += take
      }
    }
  }
}

/// The XML being written: `OutputBytes`, each write making its own room.
private struct XMLOutput: ~Copyable {
  private var bytes: OutputBytes

  init(capacity: Int) { bytes = OutputBytes(capacity: capacity) }

  /// The text, in the memory it was written in.
  consuming func finish() -> Data { bytes.finish() }

  mutating func put(_ text: StaticString) {
    put(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
  }

  mutating func put(_ text: String) {
    text.withUTF8InPlace { put(UnsafeRawBufferPointer($0)) }
  }

  mutating func put(_ text: UnsafeRawBufferPointer) {
    bytes.reserve(text.count)
    bytes.put(text)
  }

  mutating func put(_ byte: UInt8) {
    bytes.reserve(1)
    bytes.put(byte)
  }

  mutating func putDecimal(negative: Bool, magnitude: UInt64) {
    bytes.putDecimal(negative: negative, magnitude: magnitude)
  }

  /// `depth` tabs: one per nesting level.
  mutating func putTabs(_ depth: Int) {
    bytes.reserve(depth)
    bytes.put(repeating: 0x09, count: depth)
  }

  /// `length` bytes, which `write` fills in all.
  mutating func append(_ length: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
    bytes.append(length, write)
  }
}
