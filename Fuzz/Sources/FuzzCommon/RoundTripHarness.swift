import Foundation
import PropertyList

/// The check both fuzz targets run: whatever a reader accepts must survive being written in either
/// format and read back.
///
/// A reader is allowed to refuse any input; that is the common case and costs nothing. But once it
/// has produced a value, our own writers must be able to write it and our own readers must read that
/// output back to an equal value. A difference stops the process with `fatalError`, which libFuzzer
/// reports as a crash and saves the input for.
public enum RoundTripHarness {
  /// Runs the check on one fuzzer input.
  ///
  /// - Parameters:
  ///   - input: the bytes libFuzzer generated.
  ///   - format: the reader to feed them to.
  /// - Returns: 0, as libFuzzer requires.
  public static func run(_ input: UnsafeRawBufferPointer, as format: PropertyListFormat) -> CInt {
    let value: PropertyListValue
    do {
      switch format {
      // The raw-buffer entry point reads libFuzzer's own allocation, so AddressSanitizer sees a
      // read one byte past the input exactly.
      case .binary: value = try BinaryPropertyListReader().read(input)
      case .xml: value = try XMLPropertyListReader().read(Data(input))
      }
    } catch {
      // Most generated inputs are malformed; refusing them is the reader's job, not a failure.
      return 0
    }
    check(value, readFrom: format, through: format)
    check(value, readFrom: format, through: format == .binary ? .xml : .binary)
    return 0
  }

  /// Whether the environment variable `FUZZ_WRITE_ONLY_CROSS_FORMAT` is set (to anything): the
  /// other format is then written but not read back, for fuzzing one reader while the other is
  /// unfinished.
  static let skipsCrossFormatReadBack =
    ProcessInfo.processInfo.environment["FUZZ_WRITE_ONLY_CROSS_FORMAT"] != nil

  /// Encodes `value` as `target`, reads it back and compares.
  ///
  /// In the same format the comparison is exact except for what the binary writer deliberately
  /// shares (see `Normalization.numbersByValue`). Across formats, values XML cannot hold are skipped
  /// (the writer says `.unencodable`, or a string holds a character XML 1.0 cannot carry) and the
  /// comparison forgets what XML cannot express.
  static func check(
    _ value: PropertyListValue, readFrom source: PropertyListFormat,
    through target: PropertyListFormat
  ) {
    let crossFormat = source != target
    if crossFormat, target == .xml, !xmlCanCarryEverything(value) { return }
    let encoded: Data
    do {
      encoded = try value.encoded(as: target)
    } catch let error as PropertyListError where crossFormat && error.code == .unencodable {
      // Dates outside years 0001-9999 and the like: a limit of the other format, not a bug.
      return
    } catch {
      fail("writing a value read from \(source) as \(target) threw: \(error)", value, nil)
    }
    if crossFormat, skipsCrossFormatReadBack { return }
    let decoded: PropertyListValue
    do {
      switch target {
      case .binary: decoded = try BinaryPropertyListReader().read(encoded)
      case .xml: decoded = try XMLPropertyListReader().read(encoded)
      }
    } catch {
      fail("reading back our own \(target) output threw: \(error)", value, encoded)
    }
    if decoded == value { return }
    var rules: Normalization = [.nanDates]
    if target == .binary { rules.insert(.numbersByValue) }
    if target == .xml || source == .xml { rules.insert(.xmlPrecision) }
    if normalized(decoded, rules) == normalized(value, rules) { return }
    fail(
      "\(source) -> \(target) -> read gave a different value:\n  got \(clip(decoded))",
      value, encoded)
  }

  /// What a comparison forgets.
  struct Normalization: OptionSet {
    let rawValue: Int

    /// The binary writer shares one object among numbers CoreFoundation considers equal (`1`,
    /// `1.0`, a 32-bit and a 64-bit `1.5`, every NaN), exactly as CFBinaryPList does, so a number
    /// can come back as its equal of another kind or width. Compare numbers by value only.
    static let numbersByValue = Normalization(rawValue: 1)
    /// `Date`'s `==` is IEEE equality, so a value holding a NaN date (binary plists can) is not
    /// equal to itself. Replace such dates by one marker so the rest of the value is still compared.
    static let nanDates = Normalization(rawValue: 4)
    /// XML has no 32-bit reals, dates only to the second, and UIDs only as `{CF$UID: n}`.
    static let xmlPrecision = Normalization(rawValue: 2)
  }

  /// The value with the distinctions in `rules` erased, so two values that differ only there
  /// compare equal.
  static func normalized(_ value: PropertyListValue, _ rules: Normalization) -> PropertyListValue {
    switch value {
    case .dictionary(let dictionary):
      return .dictionary(
        PropertyListDictionary(dictionary.entries.map { ($0.key, normalized($0.value, rules)) }))
    case .array(let elements):
      return .array(elements.map { normalized($0, rules) })
    case .real(let real):
      if rules.contains(.numbersByValue), real.value == real.value.rounded(.towardZero) {
        if let exact = Int64(exactly: real.value) { return .integer(PropertyListInteger(exact)) }
        if let exact = UInt64(exactly: real.value) { return .integer(PropertyListInteger(exact)) }
      }
      if rules.contains(.numbersByValue) || rules.contains(.xmlPrecision) {
        return .real(PropertyListReal(real.value))
      }
      return value
    case .date(let date)
    where rules.contains(.nanDates) && date.timeIntervalSinceReferenceDate.isNaN:
      return .string("<NaN date>")
    case .date(let date) where rules.contains(.xmlPrecision):
      let seconds = date.timeIntervalSinceReferenceDate.rounded(.down)
      return .date(Date(timeIntervalSinceReferenceDate: seconds))
    case .uid(let uid) where rules.contains(.xmlPrecision):
      return .dictionary(["CF$UID": .integer(PropertyListInteger(uid))])
    default:
      return value
    }
  }

  /// Whether XML can carry every string, key and UID of `value` unchanged.
  ///
  /// The XML writer, like CoreFoundation's, writes strings as they are; a C0 control character
  /// (other than tab and line feed) or U+FFFE/U+FFFF makes the document unreadable, and a carriage
  /// return comes back as a line feed after XML's line-end normalisation. A UID above
  /// `UInt32.max` (which the binary reader accepts from 8-byte UID objects) is written as
  /// `{CF$UID: n}`, which the XML reader refuses.
  static func xmlCanCarryEverything(_ value: PropertyListValue) -> Bool {
    switch value {
    case .string(let string):
      return xmlCanCarry(string)
    case .uid(let uid):
      return uid <= UInt32.max
    case .dictionary(let dictionary):
      return dictionary.entries.allSatisfy {
        xmlCanCarry($0.key) && xmlCanCarryEverything($0.value)
      }
    case .array(let elements):
      return elements.allSatisfy(xmlCanCarryEverything)
    default:
      return true
    }
  }

  private static func xmlCanCarry(_ string: String) -> Bool {
    string.unicodeScalars.allSatisfy { scalar in
      switch scalar.value {
      case 0x09, 0x0A: return true
      case 0x00..<0x20, 0xFFFE, 0xFFFF: return false
      default: return true
      }
    }
  }

  /// A bounded description of a value for a failure message. Dates are printed as their number of
  /// seconds: `Date.description` traps on a NaN date, which binary plists can hold.
  static func clip(_ value: PropertyListValue) -> String {
    var text = ""
    render(value, into: &text)
    return text.count > 2000 ? String(text.prefix(2000)) + "…" : text
  }

  private static func render(_ value: PropertyListValue, into text: inout String) {
    guard text.utf8.count <= 2000 else { return }
    switch value {
    case .dictionary(let dictionary):
      text += "{"
      for (offset, entry) in dictionary.entries.enumerated() {
        text += (offset == 0 ? "" : ", ") + String(reflecting: entry.key) + ": "
        render(entry.value, into: &text)
      }
      text += "}"
    case .array(let elements):
      text += "["
      for (offset, element) in elements.enumerated() {
        text += offset == 0 ? "" : ", "
        render(element, into: &text)
      }
      text += "]"
    case .string(let string): text += String(reflecting: string)
    case .data(let data): text += "<\(data.map { String(format: "%02x", $0) }.joined())>"
    case .date(let date): text += "date(\(date.timeIntervalSinceReferenceDate))"
    case .integer(let integer): text += "\(integer)"
    case .real(let real): text += "\(real.isSinglePrecision ? "real32" : "real")(\(real.value))"
    case .boolean(let flag): text += "\(flag)"
    case .uid(let uid): text += "uid(\(uid))"
    }
  }

  private static func fail(_ message: String, _ value: PropertyListValue, _ encoded: Data?) -> Never
  {
    var report = "round trip failed: \(message)\n  read \(clip(value))"
    if let encoded {
      let hex = encoded.prefix(512).map { String(format: "%02x", $0) }.joined()
      report += "\n  encoded (\(encoded.count) bytes) \(hex)"
    }
    fatalError(report)
  }
}
