import Foundation

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
  /// - Throws: `PropertyListError` with code `.unencodable` for a date outside years 0001–9999 or a
  ///   value nested deeper than `maximumDepth`.
  public func write(_ value: PropertyListValue) throws -> Data {
    var out = [UInt8]()
    out.reserveCapacity(256)
    out.append(contentsOf: Self.header.utf8)
    try append(value, depth: 0, to: &out)
    out.append(contentsOf: "</plist>\n".utf8)
    return Data(out)
  }

  static let header = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">

    """

  private func append(_ value: PropertyListValue, depth: Int, to out: inout [UInt8]) throws {
    switch value {
    case .string(let string):
      out.append(contentsOf: "<string>".utf8)
      try appendEscaped(string, to: &out)
      out.append(contentsOf: "</string>\n".utf8)
    case .integer(let integer):
      out.append(contentsOf: "<integer>\(integer)</integer>\n".utf8)
    case .real(let real):
      out.append(contentsOf: "<real>\(PropertyListReal.xmlText(real.value))</real>\n".utf8)
    case .boolean(let flag):
      out.append(contentsOf: (flag ? "<true/>\n" : "<false/>\n").utf8)
    case .date(let date):
      guard let text = XMLDate.text(date.timeIntervalSinceReferenceDate) else {
        throw PropertyListError(
          .unencodable,
          "date \(date.timeIntervalSinceReferenceDate) s after 2001 is outside years 0001-9999, which XML cannot hold"
        )
      }
      out.append(contentsOf: "<date>\(text)</date>\n".utf8)
    case .data(let data):
      out.append(contentsOf: "<data>\n".utf8)
      appendBase64(data, indent: depth, to: &out)
      appendIndent(depth, to: &out)
      out.append(contentsOf: "</data>\n".utf8)
    case .uid(let uid):
      guard uid <= UInt64(UInt32.max) else {
        throw PropertyListError(
          .unencodable, "UID \(uid) is above 4294967295, which no reader accepts")
      }
      out.append(contentsOf: "<dict>\n".utf8)
      appendIndent(depth + 1, to: &out)
      out.append(contentsOf: "<key>CF$UID</key>\n".utf8)
      appendIndent(depth + 1, to: &out)
      out.append(contentsOf: "<integer>\(uid)</integer>\n".utf8)
      appendIndent(depth, to: &out)
      out.append(contentsOf: "</dict>\n".utf8)
    case .array(let elements):
      try checkDepth(depth)
      if elements.isEmpty {
        out.append(contentsOf: "<array/>\n".utf8)
        return
      }
      out.append(contentsOf: "<array>\n".utf8)
      for element in elements {
        appendIndent(depth + 1, to: &out)
        try append(element, depth: depth + 1, to: &out)
      }
      appendIndent(depth, to: &out)
      out.append(contentsOf: "</array>\n".utf8)
    case .dictionary(let dictionary):
      try checkDepth(depth)
      if dictionary.isEmpty {
        out.append(contentsOf: "<dict/>\n".utf8)
        return
      }
      out.append(contentsOf: "<dict>\n".utf8)
      for (key, element) in dictionary.sortedEntries {
        appendIndent(depth + 1, to: &out)
        out.append(contentsOf: "<key>".utf8)
        try appendEscaped(key, to: &out)
        out.append(contentsOf: "</key>\n".utf8)
        appendIndent(depth + 1, to: &out)
        try append(element, depth: depth + 1, to: &out)
      }
      appendIndent(depth, to: &out)
      out.append(contentsOf: "</dict>\n".utf8)
    }
  }

  private func checkDepth(_ depth: Int) throws {
    guard depth < maximumDepth else {
      throw PropertyListError(.unencodable, "value nests deeper than the limit of \(maximumDepth)")
    }
  }

  private func appendIndent(_ depth: Int, to out: inout [UInt8]) {
    for _ in 0..<depth { out.append(0x09) }
  }

  // CoreFoundation escapes only these three; quotes and apostrophes are written as they are.
  // Characters XML 1.0 cannot carry at all (controls other than tab, LF and CR; U+FFFE; U+FFFF) are
  // refused: CoreFoundation writes them raw, giving a file that no conforming parser, ours included,
  // reads back.
  private func appendEscaped(_ string: String, to out: inout [UInt8]) throws {
    // Most text needs no escaping and holds nothing suspicious: then it is its own bytes, appended
    // at once rather than byte by byte.
    var text = string
    let plain = text.withUTF8 { utf8 in
      let needsWork = utf8.contains { byte in
        switch byte {
        case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), 0x0D, 0xEF: true
        case 0x09, 0x0A: false
        case 0..<0x20: true
        default: false
        }
      }
      if !needsWork { out.append(contentsOf: utf8) }
      return !needsWork
    }
    if plain { return }
    var suspicious = false
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
      case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
      case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
      // A raw CR would come back as LF (XML parsers normalise line ends), so unlike CoreFoundation
      // it is written as a character reference, which every parser keeps.
      case 0x0D: out.append(contentsOf: "&#13;".utf8)
      case 0x09, 0x0A: out.append(byte)
      case 0..<0x20, 0xEF:
        suspicious = true
        out.append(byte)
      default: out.append(byte)
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

  /// Base64 in CoreFoundation's line layout: a line is flushed once it reaches 76 − 8·indent
  /// characters, checked after each input byte; the indent counts at most 8 levels. That length
  /// is a multiple of four, so every line but the last holds whole groups: (76 − 8·indent) / 4 of
  /// them, three bytes each.
  private func appendBase64(_ data: Data, indent: Int, to out: inout [UInt8]) {
    // CF clamps the indent to 8 for the base64 lines only; `</data>` keeps the real depth.
    let indent = min(indent, 8)
    let bytesPerLine = (76 - 8 * indent) / 4 * 3
    let count = data.count
    let (fullLines, rest) = count.quotientAndRemainder(dividingBy: bytesPerLine)
    let fullLine = indent + Base64Groups.encodedCount(bytesPerLine) + 1
    // Cannot overflow: `data` is in memory, and its text is at most three times its size.
    let length =
      fullLines * fullLine + (rest > 0 ? indent + Base64Groups.encodedCount(rest) + 1 : 0)
    let start = out.count
    // Filled with tabs: each line's indent is then in place, and the loop writes the rest.
    out.append(contentsOf: repeatElement(0x09, count: length))
    out.withUnsafeMutableBytes { out in
      data.withUnsafeBytes { bytes in
        var position = start
        var read = 0
        while read < count {
          let take = min(bytesPerLine, count - read)
          position += indent
          Base64Groups.encode(
            UnsafeRawBufferPointer(rebasing: bytes[read..<(read + take)]),
            into: out.baseAddress! + position)
          position += Base64Groups.encodedCount(take)
          out[position] = 0x0A
          position += 1
          read += take
        }
      }
    }
  }
}
