import PortableFoundation
import PropertyList

/// Flattens an archive's property list into a binary object table the way NSKeyedArchiver does.
///
/// NSKeyedArchiver hands CoreFoundation's binary writer live objects, and the writer shares what is
/// the same object in memory, not what is equal. Read off Apple-made archives, that gives these rules:
/// - strings in keys are constants and appear once each; so are the strings of class names and the
///   `$archiver` value, but apart from keys (a key `NSString` and a class name `NSString` are two
///   objects), and except that a class object's `$classname` is the same object as the first name in its `$classes`
///   only for some classes (`sharesClassName`);
/// - each string that is itself an element of `$objects` is an object of its own, even when equal to
///   another;
/// - numbers (tagged pointers on 64-bit Apple platforms) appear once per value and kind;
/// - data is never shared;
/// - booleans and UIDs are cached singletons: every occurrence takes a slot, but references resolve
///   to the first slot with the same value;
/// - arrays and dictionaries are never shared; the traversal is CoreFoundation's (depth first, a
///   dictionary's keys before its values).
enum ArchiverFlattener {
  /// Classes whose `$classname` and first `$classes` entry Apple writes as one object, as observed in
  /// Apple-made archives (Foundation's class clusters and a few singletons); every other observed
  /// class (formatters, index sets, measurements, units, regular expressions) had two objects.
  /// Unobserved classes, NSURLRequest and NSHTTPURLResponse among them, are assumed not to share.
  static let sharedClassNames = Set(sharedClassNameTexts.map { "\($0)" })

  /// `sharedClassNames`, as constants (for writers that compare bytes, and the set is made of them).
  static let sharedClassNameTexts: [StaticString] = [
    "NSArray", "NSMutableArray", "NSDictionary", "NSMutableDictionary", "NSSet", "NSMutableSet",
    "NSString", "NSMutableString", "NSData", "NSMutableData", "NSDate", "NSNumber", "NSLocale",
    "NSNull", "NSURL", "NSUUID", "NSUnit", "NSValue",
  ]

  /// Reads, from an Apple-made binary archive, whether each class's name objects were shared, so that
  /// re-encoding follows the archive rather than the defaults.
  static func classNameSharing(in binary: Data) -> [String: Bool] {
    guard let table = try? BinaryPropertyListObjectTable(reading: binary) else { return [:] }
    func string(_ index: Int) -> String? {
      guard index < table.objects.count, case .scalar(.string(let text)) = table.objects[index]
      else { return nil }
      return text
    }
    var sharing = [String: Bool]()
    for object in table.objects {
      guard case .dictionary(let keys, let values) = object,
        let nameIndex = keys.firstIndex(where: { string($0) == "$classname" }),
        let classesIndex = keys.firstIndex(where: { string($0) == "$classes" }),
        let name = string(values[nameIndex]), values[classesIndex] < table.objects.count,
        case .array(let chain) = table.objects[values[classesIndex]], let first = chain.first
      else { continue }
      sharing[name] = first == values[nameIndex]
    }
    return sharing
  }

  static func table(
    for propertyList: PropertyListValue, classNameSharing: [String: Bool] = [:]
  ) -> BinaryPropertyListObjectTable {
    var state = State()
    state.classNameSharing = classNameSharing
    // Growing a table hashes every key again: room for as many as the archive can have (every
    // dictionary's keys may be distinct, and an instance has more keys than `$objects` has entries
    // as a rule).
    if case .dictionary(let envelope) = propertyList,
      case .array(let objects)? = envelope["$objects"]
    {
      var keys = envelope.count
      for case .dictionary(let dictionary) in objects { keys += dictionary.count }
      state.reserveCapacity(objects: objects.count + envelope.count, keys: keys)
    }
    let top = state.flatten(propertyList, isObjectsEntry: false, isObjectsArray: false)
    return BinaryPropertyListObjectTable(objects: state.objects, topObject: top)
  }

  private enum NumberKey: Hashable {
    case integer(UInt64, unsigned: Bool)
    case real(UInt64)
  }

  private struct State {
    var objects: [BinaryPropertyListObjectTable.Object] = []
    // By exact characters, as NSKeyedArchiver uniques strings (canonically equivalent ones stay two).
    var keyConstants: [ExactString: Int] = [:]
    var valueConstants: [ExactString: Int] = [:]
    var numbers: [NumberKey: Int] = [:]
    var dates: [UInt64: Int] = [:]
    var uids: [UInt64: Int] = [:]
    var firstTrue: Int?
    var firstFalse: Int?
    var classNameSharing: [String: Bool] = [:]

    mutating func reserveCapacity(objects count: Int, keys: Int) {
      objects.reserveCapacity(count)
      keyConstants.reserveCapacity(keys)
      valueConstants.reserveCapacity(count)
      // A UID names an object, so there are no more distinct ones than objects; fewer distinct
      // numbers, as a rule (a table that fills grows).
      numbers.reserveCapacity(count / 4)
      uids.reserveCapacity(count)
    }

    mutating func append(_ object: BinaryPropertyListObjectTable.Object) -> Int {
      objects.append(object)
      return objects.count - 1
    }

    /// - Parameters:
    ///   - isObjectsEntry: the value is an element of `$objects`.
    ///   - isObjectsArray: the value is the `$objects` array itself.
    mutating func flatten(_ value: PropertyListValue, isObjectsEntry: Bool, isObjectsArray: Bool)
      -> Int
    {
      switch value {
      case .string(let string):
        if isObjectsEntry { return append(.scalar(value)) }
        return constant(string, isKey: false)
      case .integer(let integer):
        return number(.integer(integer.bitPattern, unsigned: integer.needsUnsignedStorage), value)
      case .real(let real):
        let bits =
          real.value.isNaN ? Double.nan.bitPattern : real.value == 0 ? 0 : real.value.bitPattern
        return number(.real(bits), value)
      case .date(let date):
        let bits = date.timeIntervalSinceReferenceDate.bitPattern
        if let found = firstOrInsert(&dates[bits], objects.count) { return found }
        return append(.scalar(value))
      case .data:
        return append(.scalar(value))
      case .boolean(let flag):
        let index = append(.scalar(value))
        if flag {
          if firstTrue == nil { firstTrue = index }
          return firstTrue!
        }
        if firstFalse == nil { firstFalse = index }
        return firstFalse!
      case .uid(let uid):
        // Every occurrence takes a slot; references resolve to the first.
        let index = append(.scalar(value))
        return firstOrInsert(&uids[uid], index) ?? index
      case .array(let elements):
        let index = append(.array([]))
        var references = [Int]()
        references.reserveCapacity(elements.count)
        for element in elements {
          references.append(
            flatten(element, isObjectsEntry: isObjectsArray, isObjectsArray: false))
        }
        objects[index] = .array(references)
        return index
      case .dictionary(let dictionary):
        let index = append(.array([]))
        // The envelope is the first object flattened.
        let isTopLevel = index == 0
        var keys = [Int]()
        keys.reserveCapacity(dictionary.count)
        for entry in dictionary.entries { keys.append(constant(entry.key, isKey: true)) }
        var values = [Int]()
        values.reserveCapacity(dictionary.count)
        let unsharedClassName: String? =
          if isObjectsEntry, case .string(let name)? = dictionary["$classname"],
            dictionary["$classes"] != nil,
            !(classNameSharing[name] ?? ArchiverFlattener.sharedClassNames.contains(name))
          {
            name
          } else {
            nil
          }
        for entry in dictionary.entries {
          if let unsharedClassName, entry.key == "$classname" {
            values.append(append(.scalar(.string(unsharedClassName))))
            continue
          }
          values.append(
            flatten(
              entry.value, isObjectsEntry: false,
              isObjectsArray: isTopLevel && entry.key == "$objects"))
        }
        objects[index] = .dictionary(keys: keys, values: values)
        return index
      }
    }

    mutating func constant(_ string: String, isKey: Bool) -> Int {
      // One lookup finds the slot and fills it when empty (a lookup, then an insert, hashed the
      // string twice).
      let next = objects.count
      let found =
        isKey
        ? firstOrInsert(&keyConstants[ExactString(string)], next)
        : firstOrInsert(&valueConstants[ExactString(string)], next)
      if let found { return found }
      return append(.scalar(.string(string)))
    }

    mutating func number(_ key: NumberKey, _ value: PropertyListValue) -> Int {
      if let found = firstOrInsert(&numbers[key], objects.count) { return found }
      return append(.scalar(value))
    }
  }
}

/// The value in a table's slot, or nil after putting `value` in the empty slot: one lookup, where a
/// lookup and then an insert hashed the key twice. Called as `firstOrInsert(&table[key], value)`.
func firstOrInsert<Value>(_ slot: inout Value?, _ value: Value) -> Value? {
  if let found = slot { return found }
  slot = value
  return nil
}
