import PortableFoundation

/// The two property-list formats this library reads and writes as Apple does (OpenStep text, which
/// it only reads, is ``PropertyListInputFormat/openStep``).
public enum PropertyListFormat: String, Sendable, Hashable, CaseIterable {
  /// Apple's XML property list (`<plist version="1.0">`).
  case xml
  /// Apple's binary property list (`bplist00`).
  case binary

  /// Decides an input's format from its first bytes.
  ///
  /// - Throws: ``PropertyListError`` with code `.unsupportedFormat` for JSON, OpenStep, other
  ///   binary plist versions, and anything else, saying which it looks like.
  public static func detect(_ bytes: some Collection<UInt8>) throws -> PropertyListFormat {
    // What nearly every XML plist starts with (`<?xml`), known before the tests below, each of
    // which makes an array of its bytes.
    if bytes.first == UInt8(ascii: "<") { return .xml }
    if bytes.starts(with: binaryMagic) { return .binary }
    if bytes.starts(with: binaryMagic.prefix(6)) {
      throw PropertyListError(
        .unsupportedFormat,
        "binary property list of an unsupported version (only bplist0x is read)",
        at: .offset(6))
    }
    // UTF-16 and UTF-32 byte-order marks: XML in another encoding, which libxml2 converts.
    if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return .xml }
    var start = bytes.startIndex
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = bytes.index(start, offsetBy: 3) }
    let significant = bytes[start...].first {
      !(($0 == 0x20) || ($0 == 0x09) || ($0 == 0x0A) || ($0 == 0x0D))
    }
    switch significant {
    case UInt8(ascii: "<"):
      return .xml
    case UInt8(ascii: "["):
      throw PropertyListError(
        .unsupportedFormat,
        "input looks like JSON, which is not a property-list format this tool reads",
        at: .offset(0))
    case UInt8(ascii: "{"):
      // `{` opens both a JSON object and an OpenStep dictionary; the separator after the first key tells.
      let looksLikeJSON =
        bytes.lazy.filter { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "=") }.first
        != UInt8(ascii: "=")
      throw PropertyListError(
        .unsupportedFormat,
        looksLikeJSON
          ? "input looks like JSON, which is not a property-list format this tool reads"
          : "input looks like an OpenStep (old-style text) property list, not an XML or binary one",
        at: .offset(0))
    case UInt8(ascii: "("), UInt8(ascii: "\""), UInt8(ascii: "/"):
      throw PropertyListError(
        .unsupportedFormat,
        "input looks like an OpenStep (old-style text) property list, not an XML or binary one",
        at: .offset(0))
    case .some(let byte) where (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte):
      throw PropertyListError(
        .unsupportedFormat,
        "input looks like an OpenStep (old-style text) property list or .strings file, not an XML or binary property list",
        at: .offset(0))
    case nil:
      throw PropertyListError(.unsupportedFormat, "input is empty", at: .offset(0))
    default:
      throw PropertyListError(
        .unsupportedFormat, "input is neither an XML nor a binary property list", at: .offset(0))
    }
  }
}

private let binaryMagic: [UInt8] = Array("bplist0".utf8)

extension PropertyListValue {
  /// Reads a property list in either format, detecting which.
  ///
  /// - Parameters:
  ///   - bytes: the whole input.
  ///   - limits: bounds on what is accepted.
  /// - Returns: the value and the format it was read from.
  /// - Throws: ``PropertyListError`` saying what is wrong and where (byte offset or line).
  public static func decode(
    _ bytes: Data, limits: PropertyListLimits = .default
  ) throws -> (value: PropertyListValue, format: PropertyListFormat) {
    let format = try PropertyListFormat.detect(bytes.prefix(256))
    switch format {
    case .binary:
      return (try BinaryPropertyListReader(limits: limits).read(bytes), .binary)
    case .xml:
      return (try XMLPropertyListReader(limits: limits).read(bytes), .xml)
    }
  }

  /// Writes the value in a format, the way CoreFoundation writes it.
  ///
  /// - Throws: ``PropertyListError`` with code `.unencodable` when the value cannot be written in
  ///   that format (for example, a UID in XML is written as `{CF$UID: n}`, but an XML date outside
  ///   years 0001–9999 cannot be).
  public func encoded(as format: PropertyListFormat) throws -> Data {
    switch format {
    case .binary: return try BinaryPropertyListWriter().write(self)
    case .xml: return try XMLPropertyListWriter().write(self)
    }
  }
}
