import PortableFoundation

/// Reads OpenStep ("old-style", ASCII) property lists and `.strings` files, as CoreFoundation's
/// `CFPropertyListCreateWithData` reads them.
///
/// The syntax has four kinds of value: dictionaries `{ key = value; … }`, arrays `( a, b, )`,
/// strings (quoted with `"` or `'`, or bare runs of `A–Z a–z 0–9 _ $ / : . -`) and data
/// (`<0fbd 7777>`, pairs of hex digits with spaces and line breaks between them). There are no
/// numbers, booleans or dates: `42` is the string "42", as CoreFoundation reads it. Comments
/// (`// …` and `/* … */`) may stand wherever white space may. A top-level string followed by more
/// text is a `.strings` file, a dictionary without its braces; `key;` alone is `key = key;`, and a
/// file of nothing but white space and comments is an empty dictionary.
///
/// Escapes in quoted strings are CoreFoundation's: `\a \b \f \n \r \t \v`, `\"` and any other
/// character standing for itself (`\\`, `\'`), a backslash before a line break for the line
/// break, `\U` with up to four hex digits for a UTF-16 unit (two in a row make a surrogate pair),
/// and octal escapes of one to three digits (`\12`, `\101`) for a byte of the NeXTSTEP encoding
/// (the low eight bits of the number, as swift-foundation's tests expect: `\753` is U+00BA).
/// Where CoreFoundation reads an input into something that would lose data, this reader refuses
/// it with a clear error instead:
/// - octal `\376` and `\377` (and `\776`, `\777`), which the NeXTSTEP encoding leaves undefined
///   (CoreFoundation reads U+0000);
/// - a `\U` escape that leaves half a surrogate pair, which a Swift `String` cannot hold;
/// - text after the entries of a `.strings` file (CoreFoundation ignores everything from the
///   first thing that is not a key);
/// - a character outside ASCII between the brackets of data (CoreFoundation takes its low byte).
///
/// Duplicate keys: the later value replaces the earlier one, in the earlier one's place.
///
/// The input is UTF-8 (a byte-order mark is skipped) or UTF-16 with a byte-order mark.
public struct OpenStepPropertyListReader: Sendable {
  /// The limits applied: every value and key counts toward `maximumObjectCount`, strings count
  /// their UTF-8 bytes and data its bytes toward `maximumValueLength`, and `maximumDepth` counts
  /// nested arrays and dictionaries.
  public let limits: PropertyListLimits

  /// Creates a reader with the given limits.
  public init(limits: PropertyListLimits = .default) {
    self.limits = limits
  }

  /// Reads one OpenStep property list or `.strings` file.
  ///
  /// - Returns: the root value: a dictionary, array, string or data.
  /// - Throws: ``PropertyListError`` located by line and column (`.lineColumn`, 1-based, the column
  ///   counting Unicode scalars): `.truncated` when the input ends inside a value, `.malformed`
  ///   for anything out of place, `.invalidValue` for text that is not UTF-8 or UTF-16 and for the
  ///   escapes refused above, `.limitExceeded` when a limit is hit (the input-size check has no
  ///   location), `.unsupportedFormat` for an empty input.
  public func read(_ bytes: Data) throws -> PropertyListValue {
    guard bytes.count <= limits.maximumInputSize else {
      throw PropertyListError(
        .limitExceeded,
        "input of \(bytes.count) bytes exceeds the limit of \(limits.maximumInputSize) bytes")
    }
    var parser = OpenStepParser(units: try Self.utf16Units(bytes), limits: limits)
    return try parser.parseDocument()
  }

  /// The input's text as UTF-16 units, which is what CoreFoundation parses (a `\U` escape gives
  /// one unit, and two in a row a surrogate pair).
  static func utf16Units(_ bytes: Data) throws -> [UInt16] {
    let array = [UInt8](bytes)
    if array.starts(with: [0xFE, 0xFF]) || array.starts(with: [0xFF, 0xFE]) {
      let bigEndian = array[0] == 0xFE
      guard array.count % 2 == 0 else {
        throw PropertyListError(
          .invalidValue, "UTF-16 text of an odd number of bytes (\(array.count))",
          at: .offset(array.count - 1))
      }
      var units = [UInt16]()
      units.reserveCapacity(array.count / 2 - 1)
      var index = 2
      while index < array.count {
        let (first, second) = (UInt16(array[index]), UInt16(array[index + 1]))
        units.append(bigEndian ? first << 8 | second : second << 8 | first)
        index += 2
      }
      return units
    }
    let start = array.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    var units = [UInt16]()
    units.reserveCapacity(array.count - start)
    var iterator = array[start...].makeIterator()
    var parser = Unicode.UTF8.ForwardParser()
    var consumed = start
    while true {
      switch parser.parseScalar(from: &iterator) {
      case .valid(let encoded):
        let scalar = Unicode.UTF8.decode(encoded)
        units.append(contentsOf: scalar.utf16)
        consumed += encoded.count
      case .emptyInput:
        return units
      case .error:
        // Located among the units read so far: the line and column of the bad byte.
        let location = OpenStepParser.location(in: units, at: units.count)
        throw PropertyListError(
          .invalidValue,
          "the text is not UTF-8 (byte 0x\(String(array[consumed], radix: 16)) at offset \(consumed))",
          at: location)
      }
    }
  }
}

/// The parser over the text's UTF-16 units: CoreFoundation's grammar (CFOldStylePList.c), with
/// errors thrown where they are found.
struct OpenStepParser {
  let units: [UInt16]
  let limits: PropertyListLimits
  var position = 0
  var depth = 0
  var objectCount = 0

  init(units: [UInt16], limits: PropertyListLimits) {
    self.units = units
    self.limits = limits
  }

  // MARK: The document

  mutating func parseDocument() throws -> PropertyListValue {
    guard !units.isEmpty else {
      throw PropertyListError(.unsupportedFormat, "input is empty", at: .offset(0))
    }
    guard skipSpace() else { return .dictionary([:]) }
    let value = try parseValue()
    guard skipSpace() else { return value }
    guard case .string = value else {
      throw error(.malformed, "text after the property list")
    }
    // A string followed by more: a .strings file, its entries read from the start again.
    position = 0
    objectCount = 0
    let entries = try parseEntries()
    if skipSpace() {
      throw error(.malformed, "text after the last entry of a .strings file (\(describe(current)))")
    }
    return .dictionary(entries)
  }

  // MARK: Values

  /// A value at the current position (after white space), which must be there.
  mutating func parseValue() throws -> PropertyListValue {
    guard let value = try parseValueIfPresent() else {
      guard position < units.count else {
        throw error(.truncated, "the input ends where a value was expected")
      }
      throw error(.malformed, "unexpected \(describe(current)) where a value was expected")
    }
    return value
  }

  /// A value at the current position, or nil (the position left at the character) when what is
  /// there cannot start one.
  mutating func parseValueIfPresent() throws -> PropertyListValue? {
    guard skipSpace() else { return nil }
    let unit = current
    switch unit {
    case 0x7B:  // {
      try enterContainer()
      position += 1
      let entries = try parseEntries()
      guard skipSpace() else {
        throw error(.truncated, "the input ends inside a dictionary (expected '}')")
      }
      guard current == 0x7D else {
        throw error(.malformed, "expected ';' or '}' in a dictionary, not \(describe(current))")
      }
      position += 1
      depth -= 1
      return .dictionary(entries)
    case 0x28:  // (
      try enterContainer()
      position += 1
      let array = try parseArray()
      depth -= 1
      return .array(array)
    case 0x3C:  // <
      try count()
      position += 1
      return .data(try parseData())
    case 0x22, 0x27:  // " '
      try count()
      return .string(try parseQuoted())
    default:
      guard Self.isUnquoted(unit) else { return nil }
      try count()
      return .string(try parseUnquoted())
    }
  }

  mutating func enterContainer() throws {
    try count()
    guard depth < limits.maximumDepth else {
      throw error(
        .limitExceeded, "arrays and dictionaries nested deeper than \(limits.maximumDepth)")
    }
    depth += 1
  }

  mutating func count() throws {
    objectCount += 1
    guard objectCount <= limits.maximumObjectCount else {
      throw error(.limitExceeded, "more than \(limits.maximumObjectCount) values and keys")
    }
  }

  /// `key = value;` entries up to the first thing that cannot start a key (left unread).
  mutating func parseEntries() throws -> PropertyListDictionary {
    var entries = PropertyListDictionary()
    while skipSpace() {
      let unit = current
      let key: String
      if unit == 0x22 || unit == 0x27 {
        key = try parseQuoted()
      } else if Self.isUnquoted(unit) {
        key = try parseUnquoted()
      } else {
        break
      }
      try count()
      guard skipSpace() else {
        throw error(.truncated, "the input ends after the key \"\(key)\" (expected '=' or ';')")
      }
      let value: PropertyListValue
      switch current {
      case 0x3B:  // ;  (a .strings file's shortcut: the key is its own value)
        value = .string(key)
      case 0x3D:  // =
        position += 1
        value = try parseValue()
      default:
        throw error(
          .malformed, "expected '=' or ';' after the key \"\(key)\", not \(describe(current))")
      }
      entries[key] = value
      guard skipSpace() else {
        throw error(.truncated, "the input ends after the value of \"\(key)\" (expected ';')")
      }
      guard current == 0x3B else {
        throw error(
          .malformed, "expected ';' after the value of \"\(key)\", not \(describe(current))")
      }
      position += 1
    }
    return entries
  }

  /// The elements of an array after its `(`, and the `)`; a comma may follow the last one.
  mutating func parseArray() throws -> [PropertyListValue] {
    var elements = [PropertyListValue]()
    while let element = try parseValueIfPresent() {
      elements.append(element)
      guard skipSpace() else {
        throw error(.truncated, "the input ends inside an array (expected ',' or ')')")
      }
      guard current == 0x2C else { break }
      position += 1
    }
    guard skipSpace() else {
      throw error(.truncated, "the input ends inside an array (expected ')')")
    }
    guard current == 0x29 else {
      throw error(.malformed, "expected ',' or ')' in an array, not \(describe(current))")
    }
    position += 1
    return elements
  }

  /// The bytes of `<…>` after its `<`, and the `>`.
  mutating func parseData() throws -> Data {
    var bytes = [UInt8]()
    while true {
      guard position < units.count else {
        throw error(.truncated, "the input ends inside data (expected '>')")
      }
      let unit = current
      if unit == 0x3E {
        position += 1
        return Data(bytes)
      }
      if let high = Self.hexValue(unit) {
        guard position + 1 < units.count else {
          position += 1
          throw error(.truncated, "the input ends inside data, after half a byte")
        }
        guard let low = Self.hexValue(units[position + 1]) else {
          position += 1
          throw error(
            .malformed, "data of an odd number of hex digits (\(describe(current)) after one)")
        }
        bytes.append(high << 4 | low)
        position += 2
        guard bytes.count <= limits.maximumValueLength else {
          throw error(.limitExceeded, "data longer than \(limits.maximumValueLength) bytes")
        }
      } else if unit == 0x20 || unit == 0x0A || unit == 0x09 || unit == 0x0D || unit == 0x2028
        || unit == 0x2029
      {
        position += 1
      } else {
        throw error(.malformed, "\(describe(unit)) in data, which holds only hex digits and spaces")
      }
    }
  }

  /// A run of the characters a string may have unquoted.
  mutating func parseUnquoted() throws -> String {
    let start = position
    while position < units.count, Self.isUnquoted(units[position]) { position += 1 }
    // ASCII only: each unit is a byte.
    let string = String(decoding: units[start..<position].lazy.map { UInt8($0) }, as: UTF8.self)
    try checkLength(string, from: start)
    return string
  }

  /// A string in quotes (the position at the opening one), with its escapes undone.
  mutating func parseQuoted() throws -> String {
    let start = position
    let quote = units[position]
    position += 1
    var text = [UInt16]()
    while true {
      guard position < units.count else {
        position = start
        throw error(.truncated, "a quoted string that does not end (it starts here)")
      }
      let unit = units[position]
      if unit == quote {
        position += 1
        break
      }
      position += 1
      guard unit == 0x5C else {
        text.append(unit)
        continue
      }
      guard position < units.count else {
        throw error(.truncated, "the input ends after a backslash in a quoted string")
      }
      text.append(try escaped())
    }
    guard let string = String(validating: text, as: UTF16.self) else {
      position = start
      throw error(
        .invalidValue,
        "the quoted string starting here holds half a surrogate pair (a \\U escape of D800–DFFF without its other half)"
      )
    }
    try checkLength(string, from: start)
    return string
  }

  /// The unit an escape stands for, the position after the backslash.
  mutating func escaped() throws -> UInt16 {
    let escapeStart = position - 1
    let unit = units[position]
    position += 1
    switch unit {
    case 0x30...0x37:  // octal
      var value = Int(unit - 0x30)
      var digits = 1
      while digits < 3, position < units.count, (0x30...0x37).contains(units[position]) {
        value = value << 3 | Int(units[position] - 0x30)
        position += 1
        digits += 1
      }
      // CoreFoundation keeps one byte of it.
      value &= 0xFF
      if value < 0x80 { return UInt16(value) }
      let mapped = Self.nextStepHighHalf[value - 0x80]
      guard mapped != 0 else {
        let written = String(decoding: units[escapeStart..<position], as: UTF16.self)
        position = escapeStart
        throw error(
          .invalidValue,
          "the octal escape \(written) names no character of the NeXTSTEP encoding (byte 0x\(String(value, radix: 16)))"
        )
      }
      return mapped
    case 0x55:  // U: up to four hex digits
      var value: UInt16 = 0
      var digits = 0
      while digits < 4, position < units.count, let digit = Self.hexValue(units[position]) {
        value = value << 4 | UInt16(digit)
        position += 1
        digits += 1
      }
      return value
    case 0x61: return 0x07  // a
    case 0x62: return 0x08  // b
    case 0x66: return 0x0C  // f
    case 0x6E: return 0x0A  // n
    case 0x72: return 0x0D  // r
    case 0x74: return 0x09  // t
    case 0x76: return 0x0B  // v
    default: return unit  // ", \, ', a line break, and anything else: itself
    }
  }

  func checkLength(_ string: String, from start: Int) throws {
    guard string.utf8.count <= limits.maximumValueLength else {
      var at = self
      at.position = start
      throw at.error(.limitExceeded, "string longer than \(limits.maximumValueLength) bytes")
    }
  }

  // MARK: White space and comments

  /// Moves past white space and comments; whether anything follows.
  mutating func skipSpace() -> Bool {
    while position < units.count {
      let unit = units[position]
      if (0x09...0x0D).contains(unit) || unit == 0x20 || unit == 0x2028 || unit == 0x2029 {
        position += 1
        continue
      }
      guard unit == 0x2F, position + 1 < units.count else { return true }
      let next = units[position + 1]
      if next == 0x2F {
        position += 2
        while position < units.count {
          let unit = units[position]
          if unit == 0x0A || unit == 0x0D || unit == 0x2028 || unit == 0x2029 { break }
          position += 1
        }
      } else if next == 0x2A {
        // An unended comment runs to the end of the input, as in CoreFoundation.
        position += 2
        while position < units.count {
          if units[position] == 0x2A, position + 1 < units.count, units[position + 1] == 0x2F {
            position += 2
            break
          }
          position += 1
        }
      } else {
        return true
      }
    }
    return false
  }

  // MARK: Characters

  var current: UInt16 { units[position] }

  /// The characters a string may have without quotes.
  static func isUnquoted(_ unit: UInt16) -> Bool {
    switch unit {
    case 0x61...0x7A, 0x41...0x5A, 0x30...0x39: true
    case 0x5F, 0x24, 0x2F, 0x3A, 0x2E, 0x2D: true  // _ $ / : . -
    default: false
    }
  }

  static func hexValue(_ unit: UInt16) -> UInt8? {
    switch unit {
    case 0x30...0x39: UInt8(unit - 0x30)
    case 0x61...0x66: UInt8(unit - 0x61 + 10)
    case 0x41...0x46: UInt8(unit - 0x41 + 10)
    default: nil
    }
  }

  /// `'x'`, or `U+XXXX` for a character that would not print.
  func describe(_ unit: UInt16) -> String {
    if (0x21...0x7E).contains(unit) { return "'\(Character(Unicode.Scalar(UInt8(unit))))'" }
    if let scalar = Unicode.Scalar(unit), unit >= 0xA0 {
      return "'\(Character(scalar))' (U+\(Self.hex(unit)))"
    }
    return "U+" + Self.hex(unit)
  }

  static func hex(_ unit: UInt16) -> String {
    let digits = String(unit, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  /// The NeXTSTEP encoding's characters for the bytes 0x80–0xFF (Unicode's NEXTSTEP.TXT); 0 where
  /// it defines none.
  static let nextStepHighHalf: [UInt16] = [
    0x00A0, 0x00C0, 0x00C1, 0x00C2, 0x00C3, 0x00C4, 0x00C5, 0x00C7,
    0x00C8, 0x00C9, 0x00CA, 0x00CB, 0x00CC, 0x00CD, 0x00CE, 0x00CF,
    0x00D0, 0x00D1, 0x00D2, 0x00D3, 0x00D4, 0x00D5, 0x00D6, 0x00D9,
    0x00DA, 0x00DB, 0x00DC, 0x00DD, 0x00DE, 0x00B5, 0x00D7, 0x00F7,
    0x00A9, 0x00A1, 0x00A2, 0x00A3, 0x2044, 0x00A5, 0x0192, 0x00A7,
    0x00A4, 0x2019, 0x201C, 0x00AB, 0x2039, 0x203A, 0xFB01, 0xFB02,
    0x00AE, 0x2013, 0x2020, 0x2021, 0x00B7, 0x00A6, 0x00B6, 0x2022,
    0x201A, 0x201E, 0x201D, 0x00BB, 0x2026, 0x2030, 0x00AC, 0x00BF,
    0x00B9, 0x02CB, 0x00B4, 0x02C6, 0x02DC, 0x00AF, 0x02D8, 0x02D9,
    0x00A8, 0x00B2, 0x02DA, 0x00B8, 0x00B3, 0x02DD, 0x02DB, 0x02C7,
    0x2014, 0x00B1, 0x00BC, 0x00BD, 0x00BE, 0x00E0, 0x00E1, 0x00E2,
    0x00E3, 0x00E4, 0x00E5, 0x00E7, 0x00E8, 0x00E9, 0x00EA, 0x00EB,
    0x00EC, 0x00C6, 0x00ED, 0x00AA, 0x00EE, 0x00EF, 0x00F0, 0x00F1,
    0x0141, 0x00D8, 0x0152, 0x00BA, 0x00F2, 0x00F3, 0x00F4, 0x00F5,
    0x00F6, 0x00E6, 0x00F9, 0x00FA, 0x00FB, 0x0131, 0x00FC, 0x00FD,
    0x0142, 0x00F8, 0x0153, 0x00DF, 0x00FE, 0x00FF, 0x0000, 0x0000,
  ]

  // MARK: Errors

  func error(_ code: PropertyListError.Code, _ message: String) -> PropertyListError {
    PropertyListError(code, message, at: Self.location(in: units, at: position))
  }

  /// The 1-based line and column of `units[index]`: lines end at LF, CR or CRLF, as
  /// CoreFoundation counts them; the column counts Unicode scalars.
  static func location(in units: [UInt16], at index: Int) -> PropertyListLocation {
    var line = 1
    var lineStart = 0
    var cursor = 0
    let end = min(index, units.count)
    while cursor < end {
      let unit = units[cursor]
      if unit == 0x0A || unit == 0x0D {
        if unit == 0x0D, cursor + 1 < end, units[cursor + 1] == 0x0A { cursor += 1 }
        line += 1
        lineStart = cursor + 1
      }
      cursor += 1
    }
    var column = 1
    for offset in lineStart..<end where !(0xDC00...0xDFFF).contains(units[offset]) {
      column += 1
    }
    return .lineColumn(line: line, column: column)
  }
}
