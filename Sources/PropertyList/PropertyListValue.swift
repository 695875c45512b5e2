import PortableFoundation

/// One property-list value of any of the types Apple's formats can carry.
///
/// Dictionaries keep their keys in the order they were read, integers cover all of `Int64` plus the
/// unsigned 64-bit values that binary plists store as 16-byte integers, reals remember whether they
/// were stored in 32 or 64 bits, and UIDs (the references NSKeyedArchiver uses) are a type of their own.
public enum PropertyListValue: Sendable, Hashable {
  /// A dictionary with string keys, in the order they were read or inserted.
  case dictionary(PropertyListDictionary)
  /// An ordered array.
  case array([PropertyListValue])
  /// A Unicode string.
  case string(String)
  /// Raw bytes.
  case data(Data)
  /// A point in time, stored as seconds since 2001-01-01T00:00:00Z.
  case date(Date)
  /// An integer in `Int64.min ... UInt64.max`.
  case integer(PropertyListInteger)
  /// A floating-point number, remembering its stored width.
  case real(PropertyListReal)
  /// `true` or `false`.
  case boolean(Bool)
  /// A keyed-archive object reference (binary plists only; XML spells it `{CF$UID: n}`).
  case uid(UInt64)
}

extension PropertyListValue {
  /// Structural equality. Strings compare by their exact characters, as CoreFoundation compares
  /// them (not by canonical equivalence, as `String` does). Dates compare like reals here: every NaN
  /// date equals every other (binary plists can hold one), so equality stays reflexive and round
  /// trips compare equal.
  public static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
    switch (lhs, rhs) {
    case (.dictionary(let a), .dictionary(let b)): return a == b
    case (.array(let a), .array(let b)): return a == b
    case (.string(let a), .string(let b)): return PropertyListDictionary.sameBytes(a, b)
    case (.data(let a), .data(let b)): return a == b
    case (.date(let a), .date(let b)):
      let (x, y) = (a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
      return x == y || (x.isNaN && y.isNaN)
    case (.integer(let a), .integer(let b)): return a == b
    case (.real(let a), .real(let b)): return a == b
    case (.boolean(let a), .boolean(let b)): return a == b
    case (.uid(let a), .uid(let b)): return a == b
    default: return false
    }
  }

  /// Hashes consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(typeName)
    switch self {
    case .dictionary(let value): hasher.combine(value)
    case .array(let value): hasher.combine(value)
    case .string(let value): hasher.combine(value)
    case .data(let value): hasher.combine(value)
    case .date(let value):
      let seconds = value.timeIntervalSinceReferenceDate
      hasher.combine(
        seconds.isNaN ? Double.nan.bitPattern : (seconds == 0 ? 0 : seconds.bitPattern))
    case .integer(let value): hasher.combine(value)
    case .real(let value): hasher.combine(value)
    case .boolean(let value): hasher.combine(value)
    case .uid(let value): hasher.combine(value)
    }
  }

  /// A short name of the value's type, as used in error messages and the typed JSON form.
  public var typeName: String {
    switch self {
    case .dictionary: return "dict"
    case .array: return "array"
    case .string: return "string"
    case .data: return "data"
    case .date: return "date"
    case .integer: return "integer"
    case .real: return "real"
    case .boolean: return "bool"
    case .uid: return "uid"
    }
  }

  /// The dictionary, if this value is one.
  public var dictionaryValue: PropertyListDictionary? {
    if case .dictionary(let value) = self { return value }
    return nil
  }

  /// The array, if this value is one.
  public var arrayValue: [PropertyListValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// The string, if this value is one.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The bytes, if this value is data.
  public var dataValue: Data? {
    if case .data(let value) = self { return value }
    return nil
  }

  /// The integer as `Int64`, if this value is an integer that fits.
  public var int64Value: Int64? {
    if case .integer(let value) = self { return value.int64Value }
    return nil
  }

  /// The boolean, if this value is one.
  public var boolValue: Bool? {
    if case .boolean(let value) = self { return value }
    return nil
  }

  /// The UID, if this value is one.
  public var uidValue: UInt64? {
    if case .uid(let value) = self { return value }
    return nil
  }

  /// Looks a key up when this value is a dictionary.
  public subscript(key: String) -> PropertyListValue? {
    dictionaryValue?[key]
  }
}

/// An integer as property lists store it: any `Int64`, or an unsigned value above `Int64.max`.
public struct PropertyListInteger: Sendable, Hashable, Comparable, CustomStringConvertible {
  // Non-negative values that fit in Int64 are always held as `.signed`, so equal numbers compare equal.
  private enum Storage: Sendable, Hashable {
    case signed(Int64)
    case unsigned(UInt64)
  }

  private let storage: Storage

  /// Creates an integer from a signed 64-bit value.
  public init(_ value: Int64) {
    storage = .signed(value)
  }

  /// Creates an integer from an unsigned 64-bit value.
  public init(_ value: UInt64) {
    storage = value > UInt64(Int64.max) ? .unsigned(value) : .signed(Int64(value))
  }

  /// Creates an integer from an `Int`.
  public init(_ value: Int) {
    storage = .signed(Int64(value))
  }

  /// The value as `Int64`, or nil when it is above `Int64.max`.
  public var int64Value: Int64? {
    if case .signed(let value) = storage { return value }
    return nil
  }

  /// The value as `UInt64`, or nil when it is negative.
  public var uint64Value: UInt64? {
    switch storage {
    case .signed(let value): return value >= 0 ? UInt64(value) : nil
    case .unsigned(let value): return value
    }
  }

  /// Whether the value is below zero.
  public var isNegative: Bool {
    if case .signed(let value) = storage { return value < 0 }
    return false
  }

  /// Whether the value is above `Int64.max` (binary plists store these as 16-byte integers).
  public var needsUnsignedStorage: Bool {
    if case .unsigned = storage { return true }
    return false
  }

  /// The value's two's-complement bit pattern in 64 bits.
  public var bitPattern: UInt64 {
    switch storage {
    case .signed(let value): return UInt64(bitPattern: value)
    case .unsigned(let value): return value
    }
  }

  /// The value in decimal.
  public var description: String {
    switch storage {
    case .signed(let value): return String(value)
    case .unsigned(let value): return String(value)
    }
  }

  /// Orders integers by numeric value.
  public static func < (lhs: PropertyListInteger, rhs: PropertyListInteger) -> Bool {
    switch (lhs.storage, rhs.storage) {
    case (.signed(let a), .signed(let b)): return a < b
    case (.signed, .unsigned): return true
    case (.unsigned, .signed): return false
    case (.unsigned(let a), .unsigned(let b)): return a < b
    }
  }
}

/// A floating-point number and the width it was (or is to be) stored in.
///
/// Two reals are equal when their values are equal (all NaNs equal each other) and their widths match.
public struct PropertyListReal: Sendable, Hashable, CustomStringConvertible {
  /// The value, widened to `Double` when it was stored in 32 bits.
  public let value: Double
  /// Whether the value is stored as a 32-bit float (binary plists only; XML has no such distinction).
  public let isSinglePrecision: Bool

  /// Creates a 64-bit real.
  public init(_ value: Double) {
    self.value = value
    isSinglePrecision = false
  }

  /// Creates a 32-bit real.
  public init(_ value: Float) {
    self.value = Double(value)
    isSinglePrecision = true
  }

  /// Compares values, treating every NaN as equal to every other NaN so that round trips compare equal.
  public static func == (lhs: PropertyListReal, rhs: PropertyListReal) -> Bool {
    guard lhs.isSinglePrecision == rhs.isSinglePrecision else { return false }
    if lhs.value.isNaN || rhs.value.isNaN { return lhs.value.isNaN && rhs.value.isNaN }
    return lhs.value == rhs.value
  }

  /// Hashes consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(isSinglePrecision)
    if value.isNaN {
      hasher.combine(Double.nan.bitPattern)
    } else if value == 0 {
      hasher.combine(0.0)
    } else {
      hasher.combine(value)
    }
  }

  /// The value as CoreFoundation writes it in XML (`%.17g`, `+infinity`, `-infinity`, `nan`).
  public var description: String {
    PropertyListReal.xmlText(value)
  }

  static func xmlText(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-infinity" : "+infinity" }
    let text = formatG17(value)
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

// `%.17g` through the C library, so the digits are exactly CoreFoundation's.
private func formatG17(_ value: Double) -> [CChar] {
  var buffer = [CChar](repeating: 0, count: 40)
  _ = withVaList([value]) { args in
    buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, 40, "%.17g", args) }
  }
  return buffer
}
