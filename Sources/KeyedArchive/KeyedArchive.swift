import PortableFoundation
import PropertyList

/// The two `$top` keys Apple's archives name their root object by.
///
/// Which one a decoder looks up is fixed by how it decodes, not by the archive: CFNetwork reads a
/// resume dictionary and its request archives under the literal string
/// `NSKeyedArchiveRootObjectKey`; a decoder that calls `unarchivedObjectOfClass:fromData:` (secure
/// coding: the response archive, Network.framework's blob) reads Foundation's constant of that
/// name, whose value is the string `root`. An archive under the other key has no root for it.
public enum ArchiveRootKey: String, Sendable, Hashable, CaseIterable {
  /// The literal string `NSKeyedArchiveRootObjectKey`: NSKeyedArchiver's `encodeObject:forKey:`
  /// with that string, as CFNetwork archives its resume dictionary and requests.
  case rootObjectKey = "NSKeyedArchiveRootObjectKey"
  /// `root`: the value of Foundation's `NSKeyedArchiveRootObjectKey` constant, which
  /// `archivedDataWithRootObject:` and secure coding write and read.
  case root
}

/// Which of the two root keys an archive's `$top` holds (either, both or neither).
public struct ArchiveRootKeys: OptionSet, Sendable, Hashable {
  /// The bits: 1 for `NSKeyedArchiveRootObjectKey`, 2 for `root`.
  public let rawValue: UInt8

  /// Creates the set from its bits.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// `$top` holds the literal `NSKeyedArchiveRootObjectKey`.
  public static let rootObjectKey = ArchiveRootKeys(rawValue: 1)
  /// `$top` holds `root`.
  public static let root = ArchiveRootKeys(rawValue: 2)

  /// The set holding just `key`.
  public init(_ key: ArchiveRootKey) {
    self = key == .root ? .root : .rootObjectKey
  }

  /// Whether `$top` holds `key`.
  public func holds(_ key: ArchiveRootKey) -> Bool { contains(ArchiveRootKeys(key)) }
}

/// An NSKeyedArchiver archive: its envelope and its objects, addressed by UID.
///
/// The archive is kept as the property-list values it was read from, so that everything, including
/// keys and classes this library has no model for, survives decode → encode. Reading checks the
/// whole structure once: every UID names an object, every `$class` names a well-formed class
/// object, the root key is present. Typed views (`decodeValue`, ``URLRequestArchive``, …) and the
/// display tree (`resolve`) are built on top.
public struct KeyedArchive: Sendable, Hashable {
  /// The root keys Apple writes: NSKeyedArchiver's default, and the one secure coding and
  /// NSURLSessionResumeResponse use.
  public static let rootKeys = ["root", "NSKeyedArchiveRootObjectKey"]

  /// The top-level dictionary, every key in order, with `$objects` as read; `objects` is written
  /// back in its place when encoding.
  public private(set) var envelope: PropertyListDictionary
  /// `$objects`: index 0 is normally `$null`; a UID is an index into this array.
  public var objects: [PropertyListValue] {
    didSet { objectsAreChecked = false }
  }
  // Whether `validate()` has passed since `objects` last changed (the envelope changes only with
  // them, inside this type): encoding, and archives of the same objects under another root, then
  // need not check every object again. Not part of the archive's value.
  private var objectsAreChecked = false
  /// The container format the archive was read from (binary for new archives).
  public var format: PropertyListFormat
  // The bytes the archive was read from, when binary: the one place that records which equal strings
  // Apple's writer shared (see `ArchiverFlattener`). Not part of the archive's value.
  private var originalBinary: Data?

  /// Reads an archive from the bytes of a property list (binary or XML).
  ///
  /// - Throws: ``KeyedArchiveError`` with a key path, or with code `.propertyList` wrapping the
  ///   container's error (which carries a byte offset or line).
  public init(decoding data: Data, limits: KeyedArchiveLimits = .default) throws {
    let decoded: (value: PropertyListValue, format: PropertyListFormat)
    do {
      decoded = try PropertyListValue.decode(data, limits: limits.propertyList)
    } catch let error as PropertyListError {
      throw KeyedArchiveError(.propertyList, error.message, at: "", propertyListError: error)
    }
    try self.init(propertyList: decoded.value, format: decoded.format)
    if decoded.format == .binary { originalBinary = data }
  }

  /// Reads an archive from an already decoded property list.
  ///
  /// - Throws: ``KeyedArchiveError`` with the key path of the first problem.
  public init(propertyList: PropertyListValue, format: PropertyListFormat = .binary) throws {
    guard case .dictionary(let envelope) = propertyList else {
      throw KeyedArchiveError(
        .envelope, "top level is a \(propertyList.typeName), not a dictionary", at: "")
    }
    guard case .array(let objects)? = envelope["$objects"] else {
      throw KeyedArchiveError(
        .envelope, envelope["$objects"] == nil ? "missing" : "is not an array", at: "$objects")
    }
    self.envelope = envelope
    self.objects = objects
    self.format = format
    try validate()
    objectsAreChecked = true
  }

  /// Creates an archive from objects, with Apple's envelope: `$version` 100000, `$archiver`
  /// NSKeyedArchiver, and `$top` holding `rootKey` → UID 1.
  ///
  /// - Throws: ``KeyedArchiveError`` if the objects are not a well-formed graph.
  public init(
    objects: [PropertyListValue], rootKey: String = "NSKeyedArchiveRootObjectKey",
    rootUID: UInt64 = 1
  )
    throws
  {
    envelope = Self.envelope(rootKey: rootKey, rootUID: rootUID)
    self.objects = objects
    format = .binary
    try validate()
    objectsAreChecked = true
  }

  /// The objects of `archive` under another root: a Network.framework blob keeps each request
  /// and the response as objects of its own archive, each the root of an archive of its own.
  /// Objects `archive` has checked are not checked again; only the new root is.
  ///
  /// - Throws: ``KeyedArchiveError`` if `rootUID` names no object, or if the objects are not a
  ///   well-formed graph.
  package init(objectsOf archive: KeyedArchive, rootKey: String, rootUID: UInt64) throws {
    envelope = Self.envelope(rootKey: rootKey, rootUID: rootUID)
    objects = archive.objects
    format = .binary
    if archive.objectsAreChecked {
      try checkUID(rootUID, at: "$top.\(rootKey)")
    } else {
      try validate()
    }
    objectsAreChecked = true
  }

  /// Apple's envelope around `$objects`, which is written in the place it holds.
  private static func envelope(rootKey: String, rootUID: UInt64) -> PropertyListDictionary {
    // Apple's NSDictionary orders these four keys this way (their hash order), in every archive
    // seen. Entries rather than a literal: a literal sets each key in turn, looking for it first.
    PropertyListDictionary(uniqueKeys: [
      ("$version", .integer(PropertyListInteger(100_000))),
      ("$objects", .array([])),
      ("$archiver", .string("NSKeyedArchiver")),
      ("$top", .dictionary(PropertyListDictionary(uniqueKeys: [(rootKey, .uid(rootUID))]))),
    ])
  }

  /// `$archiver`, normally `NSKeyedArchiver`.
  public var archiver: String? { envelope["$archiver"]?.stringValue }

  /// The key under `$top` that names the root object: `root` or `NSKeyedArchiveRootObjectKey` when
  /// present, otherwise the first key (archives made with `encodeObject:forKey:` at the top level).
  public var rootKey: String {
    let top = envelope["$top"]?.dictionaryValue
    return Self.rootKeys.first { top?[$0] != nil } ?? top?.first?.key ?? Self.rootKeys[0]
  }

  /// Which of Apple's two root keys `$top` holds: what tells which of Apple's decoders find the
  /// root (see ``ArchiveRootKey``).
  public var rootKeys: ArchiveRootKeys {
    guard let top = envelope["$top"]?.dictionaryValue else { return [] }
    var keys: ArchiveRootKeys = []
    if top[ArchiveRootKey.rootObjectKey.rawValue] != nil { keys.insert(.rootObjectKey) }
    if top[ArchiveRootKey.root.rawValue] != nil { keys.insert(.root) }
    return keys
  }

  /// Whether `$top` holds `key`: whether the Apple decoders that look it up find a root.
  public func hasRootKey(_ key: ArchiveRootKey) -> Bool { rootKeys.holds(key) }

  /// The UID of the root object.
  public var rootUID: UInt64 {
    envelope["$top"]?[rootKey]?.uidValue ?? 0
  }

  /// Top-level keys beside the four of the envelope (modern WebKit adds some); kept verbatim.
  public var extraTopLevelKeys: [String] {
    envelope.keys.filter { !["$archiver", "$version", "$top", "$objects"].contains($0) }
  }

  /// The archive as the property list it is written as.
  public var propertyList: PropertyListValue {
    var envelope = envelope
    envelope["$objects"] = .array(objects)
    return .dictionary(envelope)
  }

  /// Encodes the archive in a container format, sharing objects the way NSKeyedArchiver does, so
  /// that an unmodified Apple-made binary archive comes back byte for byte.
  ///
  /// - Parameter format: the container; defaults to the format the archive was read from.
  /// - Throws: ``KeyedArchiveError`` if the objects no longer form a valid archive, or if the
  ///   container cannot hold a value.
  public func encoded(as format: PropertyListFormat? = nil) throws -> Data {
    if !objectsAreChecked { try validate() }
    do {
      switch format ?? self.format {
      case .binary:
        let sharing = originalBinary.map(ArchiverFlattener.classNameSharing(in:)) ?? [:]
        return ArchiverFlattener.table(for: propertyList, classNameSharing: sharing).encoded()
      case .xml: return try propertyList.encoded(as: .xml)
      }
    } catch let error as PropertyListError {
      throw KeyedArchiveError(.propertyList, error.message, at: "", propertyListError: error)
    }
  }

  /// Equality of the archives' content (envelope, objects, format).
  public static func == (lhs: KeyedArchive, rhs: KeyedArchive) -> Bool {
    lhs.envelope == rhs.envelope && lhs.objects == rhs.objects && lhs.format == rhs.format
  }

  /// Hashes consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(envelope)
    hasher.combine(objects)
    hasher.combine(format)
  }

  // MARK: Validation

  /// Checks the envelope and every object once, so later lookups need not.
  func validate() throws {
    if let archiver = envelope["$archiver"], archiver.stringValue == nil {
      throw KeyedArchiveError(.envelope, "is a \(archiver.typeName), not a string", at: "$archiver")
    }
    if let version = envelope["$version"], version.int64Value == nil {
      throw KeyedArchiveError(.envelope, "is a \(version.typeName), not an integer", at: "$version")
    }
    guard case .dictionary(let top)? = envelope["$top"] else {
      throw KeyedArchiveError(
        .envelope, envelope["$top"] == nil ? "missing" : "is not a dictionary", at: "$top")
    }
    guard !top.isEmpty else {
      throw KeyedArchiveError(.envelope, "is empty: the archive names no root object", at: "$top")
    }
    for (name, value) in top {
      guard case .uid(let uid) = value else {
        throw KeyedArchiveError(.envelope, "is a \(value.typeName), not a UID", at: "$top.\(name)")
      }
      try checkUID(uid, at: "$top.\(name)")
    }
    // Key paths are built only on failure: validation runs on every decode and must stay cheap.
    let count = UInt64(objects.count)
    for index in objects.indices {
      guard Self.allUIDsBelow(count, in: objects[index]) else {
        let (uid, path) = Self.firstBadUID(in: objects[index], below: count) ?? (0, "")
        throw KeyedArchiveError(
          .uidOutOfRange, "UID \(uid) names no object ($objects has \(objects.count))",
          at: "$objects[\(index)]" + path)
      }
      guard case .dictionary(let fields) = objects[index],
        let position = fields.position(of: "$class")
      else {
        continue
      }
      guard case .uid(let classUID) = fields[position].value else {
        throw KeyedArchiveError(
          .badClass, "is a \(fields[position].value.typeName), not a UID",
          at: "$objects[\(index)].$class")
      }
      _ = try classObject(classUID, at: "$objects[\(index)].$class")
    }
  }

  // Elements are mostly UIDs and scalars, checked where they lie; only containers are passed on.
  private static func leafUIDsBelow(_ count: UInt64, in value: UnsafePointer<PropertyListValue>)
    -> Bool
  {
    switch value.pointee {
    case .uid(let uid): uid < count
    case .array, .dictionary: allUIDsBelow(count, in: value.pointee)
    default: true
    }
  }

  /// Whether every UID at or below `value` is below `count`; reads the values in place, so that the
  /// common, valid case neither copies entries nor builds paths.
  private static func allUIDsBelow(_ count: UInt64, in value: borrowing PropertyListValue) -> Bool {
    switch value {
    case .uid(let uid):
      return uid < count
    case .array(let elements):
      return elements.withUnsafeBufferPointer { elements in
        elements.indices.allSatisfy { leafUIDsBelow(count, in: elements.baseAddress! + $0) }
      }
    case .dictionary(let fields):
      return fields.entriesSatisfy { _, value in
        switch value {
        case .uid(let uid): uid < count
        case .array, .dictionary: allUIDsBelow(count, in: value)
        default: true
        }
      }
    default:
      break
    }
    return true
  }

  private func checkUID(_ uid: UInt64, at path: @autoclosure () -> String) throws {
    guard uid < UInt64(objects.count) else {
      throw KeyedArchiveError(
        .uidOutOfRange, "UID \(uid) names no object ($objects has \(objects.count))", at: path())
    }
  }

  /// The first UID at or below `value` that is not below `count`, with its key path relative to
  /// `value`.
  private static func firstBadUID(in value: PropertyListValue, below count: UInt64) -> (
    UInt64, String
  )? {
    switch value {
    case .uid(let uid):
      return uid < count ? nil : (uid, "")
    case .array(let elements):
      for (index, element) in elements.enumerated() {
        if let (uid, path) = firstBadUID(in: element, below: count) {
          return (uid, "[\(index)]" + path)
        }
      }
    case .dictionary(let fields):
      for (key, element) in fields {
        if let (uid, path) = firstBadUID(in: element, below: count) {
          return (uid, ".\(key)" + path)
        }
      }
    default:
      break
    }
    return nil
  }

  /// The class names of a class object, most derived first (`$classes`, or just `$classname`).
  ///
  /// - Throws: ``KeyedArchiveError`` with code `.badClass` if the UID does not name a class object.
  public func classChain(_ classUID: UInt64, at path: @autoclosure () -> String) throws -> [String]
  {
    let (name, classes) = try classObject(classUID, at: path())
    guard let classes else { return [name] }
    let chain = classes.map { $0.stringValue ?? "" }
    return chain.isEmpty ? [name] : chain
  }

  /// The most derived class name of a class object (the first of `classChain`), without building
  /// the chain.
  ///
  /// - Throws: ``KeyedArchiveError`` with code `.badClass`, as `classChain` does.
  func mostDerivedClassName(_ classUID: UInt64, at path: @autoclosure () -> String) throws
    -> String
  {
    let (name, classes) = try classObject(classUID, at: path())
    return classes?.first?.stringValue ?? name
  }

  /// Checks that a UID names a class object, and returns its `$classname` and its `$classes` (nil
  /// when absent; every element is a string).
  ///
  /// - Throws: ``KeyedArchiveError`` with code `.badClass`, as `classChain` documents.
  private func classObject(_ classUID: UInt64, at path: @autoclosure () -> String) throws -> (
    name: String, classes: [PropertyListValue]?
  ) {
    try checkUID(classUID, at: path())
    guard case .dictionary(let classObject) = objects[Int(classUID)] else {
      throw KeyedArchiveError(
        .badClass,
        "names object \(classUID), a \(objects[Int(classUID)].typeName), not a class object",
        at: path())
    }
    guard case .string(let name)? = classObject["$classname"] else {
      throw KeyedArchiveError(
        .badClass,
        classObject["$class"] != nil
          ? "names object \(classUID), an instance, not a class object"
          : "names object \(classUID), which has no string $classname",
        at: path())
    }
    guard let classes = classObject["$classes"] else { return (name, nil) }
    guard case .array(let names) = classes,
      names.allSatisfy({ if case .string = $0 { true } else { false } })
    else {
      throw KeyedArchiveError(
        .badClass, "$classes of class object \(classUID) is not an array of strings", at: path())
    }
    return (name, names)
  }

  /// Whether the object a UID names is an instance whose class chain (as `classChain(ofObject:)`
  /// gives it) contains `className`; builds no chain.
  func isInstance(_ uid: UInt64, of className: String) -> Bool {
    guard uid < UInt64(objects.count), case .dictionary(let fields) = objects[Int(uid)],
      case .uid(let classUID)? = fields["$class"],
      let (name, classes) = try? classObject(classUID, at: "")
    else { return false }
    guard let classes, !classes.isEmpty else { return name == className }
    return classes.contains { $0.stringValue == className }
  }

  // MARK: Lookup

  /// The object a UID names.
  ///
  /// - Throws: ``KeyedArchiveError`` with code `.uidOutOfRange`.
  public func object(_ uid: UInt64, at path: @autoclosure () -> String = "") throws
    -> PropertyListValue
  {
    try checkUID(uid, at: path())
    return objects[Int(uid)]
  }

  /// Whether a UID names the `$null` object (UID 0 when object 0 is the string `$null`).
  public func isNull(_ uid: UInt64) -> Bool {
    uid < UInt64(objects.count) && objects[Int(uid)] == .string("$null")
  }

  /// The class names of the object a UID names, when it is an instance (a dictionary with
  /// `$class`).
  public func classChain(ofObject uid: UInt64) -> [String]? {
    guard uid < UInt64(objects.count), case .dictionary(let fields) = objects[Int(uid)],
      case .uid(let classUID)? = fields["$class"]
    else { return nil }
    return try? classChain(classUID, at: "")
  }
}
