import Foundation
import PropertyList
import TestSupport

/// Bytes from a hex string; spaces, newlines and `#` comments to the end of a line are ignored.
func hexBytes(_ text: String) -> Data {
  var bytes = [UInt8]()
  var pending: UInt8?
  for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
    for character in line.prefix(while: { $0 != "#" }) {
      guard let nibble = character.hexDigitValue else { continue }
      if let high = pending {
        bytes.append(high << 4 | UInt8(nibble))
        pending = nil
      } else {
        pending = UInt8(nibble)
      }
    }
  }
  return Data(bytes)
}

/// Random property-list trees of every type Foundation can also represent (no UIDs).
struct TreeGenerator {
  var random: SeededGenerator
  /// Whether dates get whole seconds (XML keeps only seconds).
  var wholeSecondDates: Bool
  var includeSinglePrecision = false
  /// Makes every string, integer and data value distinct. Foundation on Linux does not unique equal
  /// scalars the way Apple's CoreFoundation does (its uniquing set misses Swift-bridged objects),
  /// so byte-for-byte comparisons with it need trees without repeated scalars.
  var distinctScalars = false
  private var counter = 0

  init(seed: UInt64, wholeSecondDates: Bool) {
    random = SeededGenerator(seed: seed)
    self.wholeSecondDates = wholeSecondDates
  }

  mutating func string() -> String {
    let pools: [[Character]] = [
      Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-./:"),
      Array("<>&\"' \t\n"),
      Array("éüßñ中文日本語한국어🙂🚀"),
    ]
    let length = Int.random(in: 0...24, using: &random)
    var result = ""
    for _ in 0..<length {
      let pool = pools[Int.random(in: 0..<(Bool.random(using: &random) ? 1 : 3), using: &random)]
      result.append(pool[Int.random(in: 0..<pool.count, using: &random)])
    }
    return result
  }

  mutating func scalar() -> PropertyListValue {
    let value = anyScalar()
    guard distinctScalars else { return value }
    counter += 1
    switch value {
    case .string(let string): return .string(string + "#\(counter)")
    case .integer(let integer):
      if integer.needsUnsignedStorage {
        return .integer(PropertyListInteger(UInt64.max - UInt64(counter)))
      }
      return .integer(PropertyListInteger(Int64(counter) * (integer.isNegative ? -7919 : 104_729)))
    case .data(let data): return .data(Data(String(counter).utf8) + data)
    default: return value
    }
  }

  mutating func anyScalar() -> PropertyListValue {
    switch Int.random(in: 0..<9, using: &random) {
    case 0: return .string(string())
    case 1: return .integer(PropertyListInteger(Int64.random(in: -1000...1000, using: &random)))
    case 2:
      return .integer(PropertyListInteger(Int64.random(in: Int64.min...Int64.max, using: &random)))
    case 3:
      return .integer(
        PropertyListInteger(UInt64.random(in: UInt64(Int64.max)...UInt64.max, using: &random)))
    case 4:
      if includeSinglePrecision, Bool.random(using: &random) {
        return .real(PropertyListReal(Float.random(in: -1e6...1e6, using: &random)))
      }
      return .real(PropertyListReal(Double.random(in: -1e12...1e12, using: &random)))
    case 5: return .boolean(Bool.random(using: &random))
    case 6:
      var seconds = Double.random(in: -3e9...3e9, using: &random)
      if wholeSecondDates { seconds.round(.down) }
      return .date(Date(timeIntervalSinceReferenceDate: seconds))
    case 7:
      let count = Int.random(in: 0...300, using: &random)
      return .data(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }))
    default: return .string(string())
    }
  }

  mutating func tree(depth: Int = 0) -> PropertyListValue {
    let roll = Int.random(in: 0..<10, using: &random)
    if depth < 5, roll < 2 {
      return .array((0..<Int.random(in: 0...8, using: &random)).map { _ in tree(depth: depth + 1) })
    }
    if depth == 0 || (depth < 5 && roll < 4) {
      var dictionary = PropertyListDictionary()
      for _ in 0..<Int.random(in: 0...10, using: &random) {
        var key = string()
        if distinctScalars {
          counter += 1
          key += "#\(counter)"
        }
        dictionary[key] = tree(depth: depth + 1)
      }
      return .dictionary(dictionary)
    }
    return scalar()
  }
}

/// Converts our value to the objects Foundation's PropertyListSerialization takes.
func foundationObject(_ value: PropertyListValue) -> Any {
  switch value {
  case .dictionary(let dictionary):
    var result = [String: Any]()
    for (key, element) in dictionary { result[key] = foundationObject(element) }
    return result
  case .array(let elements): return elements.map(foundationObject)
  case .string(let string): return string
  case .data(let data): return data
  case .date(let date): return date
  case .integer(let integer):
    if let signed = integer.int64Value { return NSNumber(value: signed) }
    return NSNumber(value: integer.uint64Value!)
  case .real(let real):
    return real.isSinglePrecision ? NSNumber(value: Float(real.value)) : NSNumber(value: real.value)
  case .boolean(let flag): return flag
  case .uid: fatalError("Foundation has no public UID type")
  }
}

/// Converts what Foundation's PropertyListSerialization returns to our value.
func propertyListValue(fromFoundation object: Any) -> PropertyListValue {
  switch object {
  case let flag as Bool where type(of: object) == Bool.self: return .boolean(flag)
  case let string as String: return .string(string)
  case let data as Data: return .data(data)
  case let date as Date: return .date(date)
  case let dictionary as [String: Any]:
    var result = PropertyListDictionary()
    for (key, element) in dictionary { result[key] = propertyListValue(fromFoundation: element) }
    return .dictionary(result)
  case let array as [Any]: return .array(array.map(propertyListValue(fromFoundation:)))
  case let number as NSNumber:
    switch String(cString: number.objCType) {
    case "c", "B": return .boolean(number.boolValue)
    case "f": return .real(PropertyListReal(number.floatValue))
    case "d": return .real(PropertyListReal(number.doubleValue))
    case "Q": return .integer(PropertyListInteger(number.uint64Value))
    default: return .integer(PropertyListInteger(number.int64Value))
    }
  default: fatalError("unexpected Foundation object \(type(of: object))")
  }
}
