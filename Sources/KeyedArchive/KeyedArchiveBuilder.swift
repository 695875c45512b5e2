import PortableFoundation
import PropertyList

/// Builds an archive the way NSKeyedArchiver lays one out: `$null` at UID 0, each object given the
/// next UID when first encoded (its slot taken before its fields are encoded, depth first), a class
/// object appended after the first instance of its class, and Foundation classes with the keys and
/// key order Apple's archives show.
public struct KeyedArchiveBuilder: Sendable {
  /// The objects so far; index 0 is `$null`.
  public private(set) var objects: [PropertyListValue] = [.string("$null")]
  private var classUIDs: [ExactChain: UInt64] = [:]
  // By exact characters: NSKeyedArchiver never makes one object of two strings that differ,
  // however canonically equivalent.
  private var stringUIDs: [ExactString: UInt64] = [:]
  private var numberUIDs: [PropertyListValue: UInt64] = [:]

  /// Creates an empty builder.
  public init() {
    // Room for a request or response archive's strings and classes: growing a table hashes every
    // key in it again.
    stringUIDs.reserveCapacity(64)
    classUIDs.reserveCapacity(16)
  }

  /// Encodes a value and returns its UID (0 for `.null`). Equal plain strings and equal numbers are
  /// stored once (NSKeyedArchiver stores an object once, and equal small numbers are one object).
  public mutating func encode(_ value: ArchivedValue) -> UInt64 {
    switch value {
    case .null:
      return 0
    case .string(let string, let mutable):
      if mutable {
        return instance(["NSMutableString", "NSString", "NSObject"]) { _ in
          [("NS.string", .string(string))]
        }
      }
      let next = UInt64(objects.count)
      if let existing = firstOrInsert(&stringUIDs[ExactString(string)], next) { return existing }
      return append(.string(string))
    case .integer(let integer):
      return number(.integer(integer))
    case .real(let real):
      return number(.real(real))
    case .boolean(let flag):
      return number(.boolean(flag))
    case .data(let data, let mutable):
      if mutable {
        return instance(["NSMutableData", "NSData", "NSObject"], classFirst: false) { _ in
          [("NS.data", .data(data))]
        }
      }
      return append(.data(data))
    case .date(let date):
      return instance(["NSDate", "NSObject"], classFirst: false) { _ in
        [("NS.time", .real(PropertyListReal(date.timeIntervalSinceReferenceDate)))]
      }
    case .array(let elements, let mutable):
      let chain = mutable ? ["NSMutableArray", "NSArray", "NSObject"] : ["NSArray", "NSObject"]
      return instance(chain, classFirst: false) { builder in
        [("NS.objects", .array(elements.map { .uid(builder.encode($0)) }))]
      }
    case .set(let elements, let mutable):
      let chain = mutable ? ["NSMutableSet", "NSSet", "NSObject"] : ["NSSet", "NSObject"]
      return instance(chain, classFirst: false) { builder in
        [("NS.objects", .array(elements.map { .uid(builder.encode($0)) }))]
      }
    case .dictionary(let entries, let mutable):
      let chain =
        mutable
        ? ["NSMutableDictionary", "NSDictionary", "NSObject"] : ["NSDictionary", "NSObject"]
      return instance(chain, classFirst: false) { builder in
        // NSDictionary encodes every key, then every value.
        let keys = entries.map { PropertyListValue.uid(builder.encode($0.key)) }
        let values = entries.map { PropertyListValue.uid(builder.encode($0.value)) }
        return [("NS.keys", .array(keys)), ("NS.objects", .array(values))]
      }
    case .url(let url):
      return instance(["NSURL", "NSObject"], classFirst: false) { builder in
        let base = PropertyListValue.uid(url.base.map { builder.encode($0) } ?? 0)
        let relative = PropertyListValue.uid(builder.encode(.string(url.relative)))
        return [("NS.base", base), ("$class", .uid(0)), ("NS.relative", relative)]
      }
    case .uuid(let uuid):
      return instance(["NSUUID", "NSObject"], classFirst: false) { _ in
        [("NS.uuidbytes", .data(withUnsafeBytes(of: uuid.uuid) { Data($0) }))]
      }
    case .nsNull:
      return instance(["NSNull", "NSObject"]) { _ in [] }
    case .object(let object):
      return instance(object.classChain, classFirst: false) { builder in
        object.fields.map { field in
          switch field.value {
          case .inline(let value): return (field.key, value)
          case .reference(let value): return (field.key, .uid(builder.encode(value)))
          case .references(let values):
            return (field.key, .array(values.map { .uid(builder.encode($0)) }))
          }
        }
      }
    }
  }

  /// Encodes an instance: takes the next UID, lets `fields` encode what the instance references
  /// (through the builder it is given) and return its fields, then adds `$class`.
  ///
  /// - Parameters:
  ///   - classChain: the class names, most derived first.
  ///   - classFirst: whether `$class` comes first among the keys; otherwise it goes last, or where
  ///     `fields` returns a `$class` placeholder.
  ///   - fields: returns the fields in the order they are written.
  /// - Returns: the instance's UID.
  public mutating func instance(
    _ classChain: [String], classFirst: Bool = true,
    fields: (inout KeyedArchiveBuilder) -> [(String, PropertyListValue)]
  ) -> UInt64 {
    let uid = append(.string("$null"))
    let encoded = fields(&self)
    let classUID = classObject(classChain)
    // Appended unchecked, then folded once (a repeated key keeps its first place and last value,
    // as setting each in turn would): setting each searched the keys before it.
    var dictionary = PropertyListDictionary()
    dictionary.reserveCapacity(encoded.count + 1)
    var hasClass = classFirst
    if classFirst { dictionary.appendUnchecked("$class", .uid(classUID)) }
    for (key, value) in encoded {
      if key == "$class" {
        hasClass = true
        dictionary.appendUnchecked(key, .uid(classUID))
      } else {
        dictionary.appendUnchecked(key, value)
      }
    }
    if !hasClass { dictionary.appendUnchecked("$class", .uid(classUID)) }
    dictionary.finishBuilding()
    objects[Int(uid)] = .dictionary(dictionary)
    return uid
  }

  private mutating func classObject(_ chain: [String]) -> UInt64 {
    let next = UInt64(objects.count)
    if let existing = firstOrInsert(&classUIDs[ExactChain(names: chain)], next) { return existing }
    // Two distinct keys: no literal, which would look for each before setting it.
    return append(
      .dictionary(
        PropertyListDictionary(uniqueKeys: [
          ("$classname", .string(chain.first ?? "NSObject")),
          ("$classes", .array(chain.map { .string($0) })),
        ])))
  }

  private mutating func number(_ value: PropertyListValue) -> UInt64 {
    if let existing = firstOrInsert(&numberUIDs[value], UInt64(objects.count)) {
      return existing
    }
    return append(value)
  }

  private mutating func append(_ value: PropertyListValue) -> UInt64 {
    objects.append(value)
    return UInt64(objects.count - 1)
  }

  /// The finished archive, with the object `rootUID` names as its root.
  ///
  /// - Throws: ``KeyedArchiveError`` if the objects do not form a valid archive (they always do
  ///   unless raw fields given to `instance` hold out-of-range UIDs).
  public func archive(rootUID: UInt64 = 1, rootKey: String = "NSKeyedArchiveRootObjectKey") throws
    -> KeyedArchive
  {
    try KeyedArchive(objects: objects, rootKey: rootKey, rootUID: rootUID)
  }
}

extension KeyedArchive {
  /// Archives a typed value as its root, the way NSKeyedArchiver would.
  ///
  /// - Parameters:
  ///   - value: the root object, with everything it refers to.
  ///   - rootKey: `NSKeyedArchiveRootObjectKey` (NSKeyedArchiver's default) or `root` (secure
  ///     coding, and what `NSURLSessionResumeResponse` uses).
  public init(root value: ArchivedValue, rootKey: String = "NSKeyedArchiveRootObjectKey") throws {
    var builder = KeyedArchiveBuilder()
    let uid = builder.encode(value)
    self = try builder.archive(rootUID: uid, rootKey: rootKey)
  }
}

/// A class chain compared and hashed by its names' exact characters (see `ExactString`).
private struct ExactChain: Hashable {
  let names: [String]

  static func == (lhs: ExactChain, rhs: ExactChain) -> Bool {
    lhs.names.count == rhs.names.count
      && zip(lhs.names, rhs.names).allSatisfy { PropertyListDictionary.sameBytes($0, $1) }
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(names.count)
    for name in names {
      // The length first keeps one name's bytes from running into the next's.
      hasher.combine(name.utf8.count)
      ExactString(name).hash(into: &hasher)
    }
  }
}
