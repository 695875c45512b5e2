import Foundation
@_spi(Differential) import PropertyList

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
    // The in-place view's one-pass check must agree with the reader's walk, accepted or not.
    if format == .binary, let difference = BinaryViewDifferential.difference(Data(input)) {
      fatalError("the binary view's scan and walk differ: \(difference)")
    }
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
  /// shares (see `Normalization.realWidths`). Across formats, values XML cannot hold are skipped
  /// (the writer says `.unencodable`, or a UID is too large) and the comparison forgets what XML
  /// cannot express.
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
    var rules: Normalization = []
    if target == .binary { rules.insert(.realWidths) }
    if target == .xml || source == .xml { rules.insert(.xmlPrecision) }
    if normalized(decoded, rules) == normalized(value, rules) { return }
    fail(
      "\(source) -> \(target) -> read gave a different value:\n  got \(clip(decoded))",
      value, encoded)
  }

  /// What a comparison forgets (public for the keyed-archive target, which shares these rules).
  public struct Normalization: OptionSet, Sendable {
    /// The rules as bits.
    public let rawValue: Int
    /// Rules from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The binary writer shares one object among reals CoreFoundation considers equal (a 32-bit
    /// and a 64-bit `1.5`, every NaN), exactly as CFBinaryPList does, so a real can come back in
    /// the other width. Compare reals by value only.
    public static let realWidths = Normalization(rawValue: 1)
    /// XML has no 32-bit reals, dates only to the second, and UIDs only as `{CF$UID: n}`.
    public static let xmlPrecision = Normalization(rawValue: 2)
  }

  /// The value with the distinctions in `rules` erased, so two values that differ only there
  /// compare equal.
  public static func normalized(_ value: PropertyListValue, _ rules: Normalization)
    -> PropertyListValue
  {
    switch value {
    case .dictionary(let dictionary):
      return .dictionary(
        PropertyListDictionary(dictionary.entries.map { ($0.key, normalized($0.value, rules)) }))
    case .array(let elements):
      return .array(elements.map { normalized($0, rules) })
    case .real(let real):
      if rules.contains(.realWidths) || rules.contains(.xmlPrecision) {
        return .real(PropertyListReal(real.value))
      }
      return value
    case .date(let date) where rules.contains(.xmlPrecision):
      let seconds = date.timeIntervalSinceReferenceDate.rounded(.down)
      return .date(Date(timeIntervalSinceReferenceDate: seconds))
    case .uid(let uid) where rules.contains(.xmlPrecision):
      return .dictionary(["CF$UID": .integer(PropertyListInteger(uid))])
    default:
      return value
    }
  }

  /// Whether XML can carry every UID in `value`.
  ///
  /// The binary reader accepts UIDs above `UInt32.max` (from 8-byte UID objects), which the XML
  /// writer writes as `{CF$UID: n}` and the XML reader refuses. (Strings need no such check: the XML
  /// writer refuses characters XML cannot carry with `.unencodable` and escapes a carriage return.)
  static func xmlCanCarryEverything(_ value: PropertyListValue) -> Bool {
    switch value {
    case .uid(let uid):
      return uid <= UInt32.max
    case .dictionary(let dictionary):
      return dictionary.entries.allSatisfy { xmlCanCarryEverything($0.value) }
    case .array(let elements):
      return elements.allSatisfy(xmlCanCarryEverything)
    default:
      return true
    }
  }

  /// A bounded description of a value for a failure message. Dates are printed as their number of
  /// seconds: `Date.description` traps on a NaN date, which binary plists can hold.
  public static func clip(_ value: PropertyListValue) -> String {
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

extension Data {
  /// libFuzzer's input as `Data` without a copy, so that the readers see libFuzzer's own allocation
  /// and AddressSanitizer catches a read one byte past it. Nothing built from it may outlive the
  /// fuzzer's call.
  public init(fuzzerInput input: UnsafeRawBufferPointer) {
    if let base = input.baseAddress {
      self.init(
        bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: input.count, deallocator: .none
      )
    } else {
      self.init()
    }
  }
}
