import PortableFoundation

/// Writes a value as an OpenStep property list, laid out as Foundation's `-description` of a
/// dictionary or array lays it out (what `NSLog` and the debugger print): four spaces a level,
/// `key = value;`, arrays one element a line, data as `<0fbd7777 1c2735ae>` (groups of four
/// bytes).
///
/// OpenStep text has only strings, data, arrays and dictionaries. Integers, reals and booleans
/// are written bare as `-description` writes them (`42`, `0.25`, `1`), dates quoted
/// (`"2026-12-07 11:48:04 +0000"`), and a UID as `{CF$UID = 7;}`; every one of them reads back as
/// a string (CoreFoundation's reader has no other scalar), so only a value of strings, data,
/// arrays and dictionaries comes back equal. A string is quoted unless it is a non-empty run of
/// `A–Z a–z 0–9 _ $ / : . -` that does not start as a comment does (`//`, `/*`); in quotes, `"` and `\` are escaped, and so are line breaks, tabs and
/// the other control characters (`\n`, `\t`, `\U001b`). Characters beyond ASCII are written as
/// they are (UTF-8), or as `\U` escapes with `escapingNonASCII`, as `-description` writes them.
public struct OpenStepPropertyListWriter: Sendable {
  /// Whether characters beyond ASCII are written as `\Uxxxx` escapes (UTF-16 units), as
  /// Foundation's `-description` writes them, rather than as UTF-8.
  public var escapingNonASCII: Bool

  /// Creates a writer.
  public init(escapingNonASCII: Bool = false) {
    self.escapingNonASCII = escapingNonASCII
  }

  /// The text, UTF-8, ending in a line break.
  public func write(_ value: PropertyListValue) -> Data {
    var out = ""
    append(value, level: 0, to: &out)
    out += "\n"
    return Data(out.utf8)
  }

  private func append(_ value: PropertyListValue, level: Int, to out: inout String) {
    let indent = String(repeating: "    ", count: level + 1)
    switch value {
    case .dictionary(let dictionary):
      out += "{\n"
      for (key, value) in dictionary {
        out += indent + quoted(key) + " = "
        append(value, level: level + 1, to: &out)
        out += ";\n"
      }
      out += String(repeating: "    ", count: level) + "}"
    case .array(let array):
      out += "(\n"
      for (index, element) in array.enumerated() {
        out += indent
        append(element, level: level + 1, to: &out)
        out += index == array.count - 1 ? "\n" : ",\n"
      }
      out += String(repeating: "    ", count: level) + ")"
    case .string(let string):
      out += quoted(string)
    case .data(let data):
      out += "<"
      let digits = Array("0123456789abcdef".utf8)
      var text = [UInt8]()
      text.reserveCapacity(data.count * 2 + data.count / 4)
      for (index, byte) in data.enumerated() {
        if index > 0, index % 4 == 0 { text.append(0x20) }
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0xF)])
      }
      out += String(decoding: text, as: UTF8.self) + ">"
    case .integer(let integer):
      out += quoted(integer.description)
    case .real(let real):
      out += quoted(Self.shortest(real.value))
    case .boolean(let boolean):
      out += boolean ? "1" : "0"
    case .date(let date):
      out += quoted(Self.describe(date))
    case .uid(let uid):
      out += "{CF$UID = \(uid);}"
    }
  }

  /// `string`, bare when it may be, else in double quotes with its escapes.
  func quoted(_ string: String) -> String {
    // Bare unless it would start a comment (`//x` read back would be a comment, not a string).
    if !string.isEmpty, string.utf16.allSatisfy(OpenStepParser.isUnquoted),
      !string.hasPrefix("//"), !string.hasPrefix("/*")
    {
      return string
    }
    var out = "\""
    for scalar in string.unicodeScalars {
      switch scalar.value {
      case 0x22: out += "\\\""
      case 0x5C: out += "\\\\"
      case 0x0A: out += "\\n"
      case 0x09: out += "\\t"
      case 0x0D: out += "\\r"
      case 0x00..<0x20, 0x7F:
        out += "\\U" + OpenStepParser.hex(UInt16(scalar.value)).lowercased()
      case 0x80... where escapingNonASCII:
        for unit in scalar.utf16 { out += "\\U" + OpenStepParser.hex(unit).lowercased() }
      default:
        out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// A real as `-description` of an NSNumber writes it: the shortest text that reads back.
  static func shortest(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-inf" : "inf" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return "\(value)"
  }

  /// `2026-12-07 11:48:04 +0000`, as `-description` of an NSDate writes it.
  static func describe(_ date: Date) -> String {
    let seconds = date.timeIntervalSince1970.rounded(.down)
    guard seconds.isFinite, abs(seconds) < 1e15 else {
      return "\(date.timeIntervalSinceReferenceDate)"
    }
    var days = Int64(seconds) / 86_400
    var rest = Int64(seconds) % 86_400
    if rest < 0 {
      rest += 86_400
      days -= 1
    }
    // Civil from days (Howard Hinnant's algorithm).
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let yearText = String(year)
    return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + "-"
      + two(month) + "-" + two(day) + " " + two(rest / 3600) + ":" + two(rest / 60 % 60) + ":"
      + two(rest % 60) + " +0000"
  }
}
