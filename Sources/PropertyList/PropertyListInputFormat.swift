import PortableFoundation

/// Every property-list format this library reads: the two it writes as Apple does (`xml`,
/// `binary`), and OpenStep text, which CoreFoundation reads and does not write.
public enum PropertyListInputFormat: String, Sendable, Hashable, CaseIterable {
  /// Apple's XML property list.
  case xml
  /// Apple's binary property list.
  case binary
  /// OpenStep ("old-style") text, `.strings` files among them (``OpenStepPropertyListReader``).
  case openStep = "openstep"

  /// Decides an input's format from its first bytes: a binary plist by its magic, XML by its
  /// `<?xml`, `<!DOCTYPE` or element, OpenStep by a first character that starts an OpenStep value
  /// or comment (`{ ( " ' < /`, or a bare string's), where `<` followed by hex digits and white
  /// space up to `>` is OpenStep data rather than an XML element (`<abcd>`, as CoreFoundation
  /// also reads it when its XML parse fails).
  ///
  /// Anything else is taken for OpenStep, whose reader says where it fails.
  public static func detect(_ bytes: Data) -> PropertyListInputFormat {
    if bytes.starts(with: Array("bplist".utf8)) { return .binary }
    if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
      // UTF-16: XML when its first character (after the mark) is `<` and more than data.
      let units = (try? OpenStepPropertyListReader.utf16Units(bytes.prefix(4096))) ?? []
      let text = String(decoding: units.prefix(2048), as: UTF16.self)
      return looksLikeXML(Array(text.utf8)) ? .xml : .openStep
    }
    return looksLikeXML([UInt8](bytes.prefix(4096))) ? .xml : .openStep
  }

  private static func significant(_ head: [UInt8]) -> ArraySlice<UInt8> {
    var start = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    while start < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[start]) { start += 1 }
    return head[start...]
  }

  /// Whether the text opens with `<` that is not OpenStep data.
  private static func looksLikeXML(_ head: [UInt8]) -> Bool {
    let text = significant(head)
    guard text.first == UInt8(ascii: "<") else { return false }
    for byte in text.dropFirst() {
      switch byte {
      case UInt8(ascii: ">"): return false
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
        UInt8(ascii: "A")...UInt8(ascii: "F"), 0x20, 0x09, 0x0A, 0x0D:
        continue
      default: return true
      }
    }
    // Only hex digits to the end of what was looked at: data, or a truncated input either way.
    return false
  }
}

extension PropertyListValue {
  /// Reads a property list in any format this library reads: XML, binary or OpenStep.
  ///
  /// - Returns: the value and the format it was read from.
  /// - Throws: ``PropertyListError``, located by byte offset (binary), line (XML) or line and
  ///   column (OpenStep).
  public static func decodeAnyFormat(
    _ bytes: Data, limits: PropertyListLimits = .default
  ) throws -> (value: PropertyListValue, format: PropertyListInputFormat) {
    switch PropertyListInputFormat.detect(bytes) {
    case .binary:
      let (value, _) = try decode(bytes, limits: limits)
      return (value, .binary)
    case .xml:
      return (try XMLPropertyListReader(limits: limits).read(bytes), .xml)
    case .openStep:
      // Bytes that are no text (a masked archive, an image) are said to be no property list at
      // all, rather than text that does not read.
      // (Control characters are fine in OpenStep text, and so is a bad byte deep in it, which
      // the reader locates: binary is both, early.)
      if !bytes.starts(with: [0xFE, 0xFF]), !bytes.starts(with: [0xFF, 0xFE]),
        bytes.prefix(16).contains(where: { $0 < 0x20 && ![0x09, 0x0A, 0x0D].contains($0) }),
        String(validating: bytes, as: UTF8.self) == nil
      {
        throw PropertyListError(
          .unsupportedFormat, "input is neither an XML nor a binary property list", at: .offset(0))
      }
      do {
        return (try OpenStepPropertyListReader(limits: limits).read(bytes), .openStep)
      } catch {
        // JSON is named, but only once OpenStep has refused it: `{a:b = c;}` is OpenStep.
        if let json = jsonLikeness(bytes) { throw json }
        throw error
      }
    }
  }

  /// The error for an input that is JSON rather than OpenStep text, or nil: a first `[`, or a
  /// first `{` whose first separator after a key is `:` rather than `=` or `;`.
  private static func jsonLikeness(_ bytes: Data) -> PropertyListError? {
    var start = bytes.startIndex
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
    let head = bytes[start...].prefix(4096)
    guard let first = head.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
      return nil
    }
    let json = PropertyListError(
      .unsupportedFormat,
      "input looks like JSON, which is not a property-list format this tool reads",
      at: .offset(0))
    if first == UInt8(ascii: "[") { return json }
    guard first == UInt8(ascii: "{") else { return nil }
    let separator = head.first {
      $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ";")
    }
    return separator == UInt8(ascii: ":") ? json : nil
  }
}
