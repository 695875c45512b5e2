import PortableFoundation
import PropertyList

/// Captured input taken as text: what it starts with, and its decodings as base64, hex and the
/// iOS 13 `NSData` description, each failing with the line and column of what does not fit.
struct CapturedText {
  let bytes: Data
  let array: [UInt8]
  /// Where the text starts and ends without its byte-order mark and surrounding white space.
  let start: Int
  let end: Int

  init(_ bytes: Data) {
    self.bytes = bytes
    array = [UInt8](bytes)
    var start = array.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    var end = array.count
    while start < end, Self.isSpace(array[start]) { start += 1 }
    while end > start, Self.isSpace(array[end - 1]) { end -= 1 }
    self.start = start
    self.end = end
  }

  static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  /// Whether the input is text: UTF-8 without NUL or other control characters than tab and line
  /// breaks (what a log, a JSON string or a pasted value is, and no binary blob).
  var isText: Bool {
    guard String(validating: array, as: UTF8.self) != nil else { return false }
    return !array.contains { ($0 < 0x20 && !Self.isSpace($0)) || $0 == 0x7F }
  }

  /// The first byte of the text proper; nil when there is none.
  var first: UInt8? { start < end ? array[start] : nil }

  var trimmed: ArraySlice<UInt8> { array[start..<end] }

  func startsWith(_ prefix: String) -> Bool { trimmed.starts(with: Array(prefix.utf8)) }

  /// `{` whose first separator after a key is `:` (`=` and `;` are OpenStep's), or `[`.
  var looksLikeJSON: Bool {
    if first == UInt8(ascii: "[") { return true }
    guard first == UInt8(ascii: "{") else { return false }
    let separator = trimmed.first {
      $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ";")
    }
    return separator == UInt8(ascii: ":")
  }

  /// Whether every character is of the hex or base64 alphabets (or padding, white space).
  var couldBeEncoded: Bool {
    trimmed.allSatisfy {
      Self.base64Value($0) != nil || $0 == UInt8(ascii: "=") || Self.isSpace($0)
    }
  }

  // MARK: Locations and errors

  /// The 1-based line and column (in Unicode scalars) of `offset`.
  func location(_ offset: Int) -> PropertyListLocation {
    var line = 1
    var lineStart = 0
    for index in 0..<min(offset, array.count) where array[index] == 0x0A {
      line += 1
      lineStart = index + 1
    }
    var column = 1
    for index in lineStart..<min(offset, array.count) where array[index] & 0xC0 != 0x80 {
      column += 1
    }
    return .lineColumn(line: line, column: column)
  }

  func failure(_ message: String, at offset: Int) -> ResumeDataError {
    ResumeDataError(
      .capturedText, message, at: "",
      propertyListError: PropertyListError(.malformed, message, at: location(offset)))
  }

  // MARK: Not a blob

  /// The error for text that is no blob, saying what it looks like.
  func notABlob(_ message: String? = nil) -> ResumeDataError {
    ResumeDataError(.notABlob, message ?? notABlobIfRecognized()?.message ?? unrecognized, at: "")
  }

  private var unrecognized: String {
    if couldBeEncoded {
      var decodings = [String]()
      if let hex = try? hex() {
        decodings.append("as hex, \(hex.bytes.count) bytes starting \(Self.hexPrefix(hex.bytes))")
      }
      if let base64 = try? base64() {
        decodings.append(
          "as base64, \(base64.bytes.count) bytes starting \(Self.hexPrefix(base64.bytes))")
      }
      if !decodings.isEmpty {
        return
          "text that decodes (\(decodings.joined(separator: "; "))) to no resume blob: a blob starts with bplist00, <?xml or a Network.framework archive's masked magic"
      }
    }
    return
      "text that is not a resume blob in any form this tool reads (base64, hex, or a description Foundation prints); "
      + Self.captureAdvice
  }

  static let captureAdvice =
    "capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:)"

  static func hexPrefix(_ bytes: Data) -> String {
    bytes.isEmpty ? "(nothing)" : "0x" + bytes.prefix(8).map(twoHexDigits).joined()
  }

  /// The error for text recognized as something other than a blob: JSON (Android's resume
  /// state among it), a number, a file path.
  func notABlobIfRecognized() -> ResumeDataError? {
    let text = String(decoding: trimmed, as: UTF8.self)
    if looksLikeJSON {
      if text.contains("\"tempFilePath\"")
        || text.contains("\"eTag\"") && !text.contains("\"data\"")
      {
        return ResumeDataError(
          .notABlob,
          "JSON of Android's resume state ({tempFilePath, eTag}: a partial file and its validator), not an Apple resume blob; it resumes with a Range request of its own, not with URLSession",
          at: "")
      }
      return ResumeDataError(
        .notABlob,
        "a JSON document, not a blob: `resumedata inspect` lists the blobs inside one, and --at KEYPATH picks one",
        at: "")
    }
    if !text.isEmpty,
      text.allSatisfy(\.isNumber)
        || (text.first == "-" && text.dropFirst().allSatisfy(\.isNumber) && text.count > 1)
    {
      return ResumeDataError(
        .notABlob,
        "the number \(text.prefix(40)), not a blob (a byte count such as NSURLSessionResumeBytesReceived, or a task's identifier, is no resume data); "
          + Self.captureAdvice, at: "")
    }
    if !text.contains("\n"),
      text.hasPrefix("/") || text.hasPrefix("file://") || text.hasPrefix("~/")
    {
      return ResumeDataError(
        .notABlob,
        "a file path (\(text.prefix(80))), not a blob: give the file itself"
          + (text.contains("CFNetworkDownload_")
            ? "; a CFNetworkDownload_*.tmp file is a partial download, not its resume data" : ""),
        at: "")
    }
    return nil
  }

  /// The error for `po data`'s `9955 bytes`, which is the size alone.
  func debuggerSize() -> ResumeDataError? {
    let text = String(decoding: trimmed, as: UTF8.self)
    guard text.hasSuffix(" bytes"), text.dropLast(6).allSatisfy(\.isNumber), text.count > 6 else {
      return nil
    }
    return ResumeDataError(
      .notABlob,
      "\"\(text)\" is how the debugger prints Data (po resumeData): only its size; "
        + Self.captureAdvice + " (in the debugger: po resumeData.base64EncodedString())", at: "")
  }

  /// The error for a description that leaves bytes out: iOS 13's `{length = N, bytes = 0x…
  /// … }` of a blob, or of a request inside a resume dictionary's description.
  func elidedDescription() -> ResumeDataError? {
    // Only where a description stands: the whole text, or a value of a resume dictionary's.
    let whole = startsWith("{length = ")
    guard whole || (first == UInt8(ascii: "{") && range(of: "NSURLSession") != nil),
      let description = range(of: whole ? "{length = " : "= {length = "),
      range(of: "bytes = 0x") != nil
    else {
      return nil
    }
    guard
      let dots = range(of: "...", from: description.lowerBound)
        ?? range(of: "…", from: description.lowerBound)
    else {
      return nil
    }
    let length = Int(
      String(
        decoding: array[description.upperBound...].prefix { (0x30...0x39).contains($0) },
        as: UTF8.self))
    let what =
      whole
      ? "the description iOS 13 and later print of Data (\"{length = \(length.map(String.init) ?? "N"), bytes = 0x… … }\"), which shows only the first 24 and the last 8 bytes"
      : "a description whose data is elided (\"{length = \(length.map(String.init) ?? "N"), bytes = 0x… … }\", as iOS 13 and later print Data: only its first 24 and last 8 bytes)"
    let message =
      "\(what): the blob cannot be recovered from it; "
      + Self.captureAdvice + " (in the debugger: po resumeData.base64EncodedString())"
    return ResumeDataError(
      .elidedDescription, message, at: "",
      propertyListError: PropertyListError(.malformed, message, at: location(dots.lowerBound)))
  }

  func range(of needle: String, from offset: Int = 0) -> Range<Int>? {
    let pattern = Array(needle.utf8)
    guard !pattern.isEmpty, array.count >= pattern.count else { return nil }
    var index = max(offset, 0)
    while index + pattern.count <= array.count {
      if array[index] == pattern[0], array[index..<(index + pattern.count)].elementsEqual(pattern) {
        return index..<(index + pattern.count)
      }
      index += 1
    }
    return nil
  }

  // MARK: Decodings

  /// The base64 digit of a character of either alphabet.
  static func base64Value(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
    case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
    case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
    default: nil
    }
  }

  /// The text as base64: either alphabet (not both), white space anywhere, padding or none, after
  /// an optional `data:…;base64,` prefix.
  func base64() throws(ResumeDataError) -> (bytes: Data, detail: String) {
    var index = start
    var qualities = [String]()
    if trimmed.prefix(5).map({ $0 | 0x20 }) == Array("data:".utf8) {
      guard let comma = trimmed.firstIndex(of: UInt8(ascii: ",")),
        String(decoding: array[start..<comma], as: UTF8.self).lowercased().hasSuffix(";base64")
      else {
        throw failure("a data: URI that is not base64 (no ;base64, before its data)", at: start)
      }
      index = comma + 1
      qualities.append("after a data: URI prefix")
    }
    var output = [UInt8]()
    output.reserveCapacity((end - index) * 3 / 4)
    var accumulator: UInt32 = 0
    var digits = 0
    var padding = 0
    var standard = false
    var urlSafe = false
    var lines = 1
    var sawDigit = false
    while index < end {
      let byte = array[index]
      defer { index += 1 }
      if Self.isSpace(byte) {
        if byte == 0x0A && sawDigit { lines += 1 }
        continue
      }
      if byte == UInt8(ascii: "=") {
        guard digits % 4 >= 2, padding < 2 else {
          throw failure("'=' where base64 has no padding", at: index)
        }
        padding += 1
        continue
      }
      guard let value = Self.base64Value(byte) else {
        throw failure("\(Self.describe(byte)), which is not base64", at: index)
      }
      guard padding == 0 else { throw failure("base64 after its padding", at: index) }
      if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") { standard = true }
      if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") { urlSafe = true }
      if standard && urlSafe {
        throw failure("base64 of both alphabets ('+' or '/' and '-' or '_')", at: index)
      }
      sawDigit = true
      accumulator = accumulator << 6 | UInt32(value)
      digits += 1
      if digits % 4 == 0 {
        output.append(UInt8(accumulator >> 16 & 0xFF))
        output.append(UInt8(accumulator >> 8 & 0xFF))
        output.append(UInt8(accumulator & 0xFF))
        accumulator = 0
      }
    }
    switch digits % 4 {
    case 0:
      guard padding == 0 else { throw failure("base64 padding after whole groups", at: end) }
    case 1:
      throw failure(
        "base64 of \(digits) digits, one more than whole bytes take (the text is cut short?)",
        at: end)
    case 2:
      output.append(UInt8(accumulator >> 4 & 0xFF))
      if padding == 1 {
        throw failure("base64 with one '=' where a group of two digits takes two", at: end)
      }
    default:
      output.append(UInt8(accumulator >> 10 & 0xFF))
      output.append(UInt8(accumulator >> 2 & 0xFF))
      if padding == 2 {
        throw failure("base64 with two '=' where a group of three digits takes one", at: end)
      }
    }
    guard digits > 0 else { throw failure("no base64 digits", at: start) }
    if urlSafe { qualities.insert("URL-safe", at: 0) }
    if digits % 4 != 0 && padding == 0 { qualities.append("without padding") }
    if lines > 1 { qualities.append("on \(lines) lines") }
    return (
      Data(output),
      "base64 text" + (qualities.isEmpty ? "" : " (\(qualities.joined(separator: ", ")))")
    )
  }

  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// The text as hex: an optional `0x`, then pairs of digits, with white space between bytes
  /// (never inside one).
  func hex() throws(ResumeDataError) -> (bytes: Data, detail: String) {
    var index = start
    var qualities = [String]()
    if trimmed.starts(with: Array("0x".utf8)) || trimmed.starts(with: Array("0X".utf8)) {
      index += 2
      qualities.append("after 0x")
    }
    var output = [UInt8]()
    output.reserveCapacity((end - index) / 2)
    var high: UInt8?
    var highAt = 0
    var spaced = false
    var lines = 1
    while index < end {
      let byte = array[index]
      defer { index += 1 }
      if Self.isSpace(byte) {
        if high != nil { throw failure("white space inside a byte of hex", at: index) }
        if byte == 0x0A { lines += 1 } else if !output.isEmpty { spaced = true }
        continue
      }
      guard let value = Self.hexValue(byte) else {
        throw failure("\(Self.describe(byte)), which is not a hex digit", at: index)
      }
      if let first = high {
        output.append(first << 4 | value)
        high = nil
      } else {
        high = value
        highAt = index
      }
    }
    if high != nil {
      throw failure("an odd number of hex digits: the last byte has one", at: highAt)
    }
    guard !output.isEmpty else { throw failure("no hex digits", at: start) }
    if spaced { qualities.append("spaced") }
    if lines > 1 { qualities.append("on \(lines) lines") }
    return (
      Data(output),
      "hex text" + (qualities.isEmpty ? "" : " (\(qualities.joined(separator: ", ")))")
    )
  }

  /// iOS 13's `{length = N, bytes = 0x…}` of Data short enough to show every byte.
  func modernDataDescription() throws(ResumeDataError) -> (bytes: Data, detail: String) {
    let text = String(decoding: trimmed, as: UTF8.self)
    let prefix = text.hasPrefix("{length = ") ? "{length = " : "{length="
    let afterLength = text.dropFirst(prefix.count)
    let lengthText = afterLength.prefix { $0.isNumber }
    guard let length = Int(lengthText), let bytesAt = range(of: "bytes = 0x"),
      array[start..<end].last == UInt8(ascii: "}")
    else {
      throw failure(
        "not the description of Data ({length = N, bytes = 0x…})", at: start + prefix.utf8.count)
    }
    var digits = [UInt8]()
    var index = bytesAt.upperBound
    while index < end - 1 {
      let byte = array[index]
      if let value = Self.hexValue(byte) {
        digits.append(value)
      } else if !Self.isSpace(byte) {
        throw failure("\(Self.describe(byte)), which is not a hex digit", at: index)
      }
      index += 1
    }
    guard digits.count % 2 == 0 else {
      throw failure("an odd number of hex digits: the last byte has one", at: end - 1)
    }
    var output = [UInt8]()
    for pair in stride(from: 0, to: digits.count, by: 2) {
      output.append(digits[pair] << 4 | digits[pair + 1])
    }
    guard output.count == length else {
      throw failure(
        "the description says \(length) bytes and shows \(output.count): the blob cannot be recovered from it",
        at: bytesAt.upperBound)
    }
    return (
      Data(output),
      "the description of Data as iOS 13 and later print it, whole ({length = \(length), bytes = 0x…})"
    )
  }

  static func twoHexDigits(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
  }

  static func describe(_ byte: UInt8) -> String {
    (0x21...0x7E).contains(byte)
      ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + twoHexDigits(byte)
  }
}
