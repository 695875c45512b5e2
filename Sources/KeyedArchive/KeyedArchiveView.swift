import PortableFoundation
@_spi(InPlace) import PropertyList

// The in-place read of a keyed archive. Its tree twin: `KeyedArchive(decoding:limits:)`
// (KeyedArchive.swift, whose `validate()` this view's checks follow) and the typed views over
// the decoded archive. Held equal, through the views built on it, by the differentials
// `RequestDifferential` (Tests/KeyedArchiveTests/RequestFastPathTests.swift) and
// `ResumeDifferential.difference` (Tests/ResumeDataTests/ResumeFastPathTests.swift), and by the
// fuzz harnesses Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift (check 0) and
// Fuzz/Sources/FuzzResumeData/main.swift.

/// A binary keyed archive read in place: the fast path of the typed views (``URLRequestArchive``,
/// `ResumeData`), which read only the objects their fields need, straight from the bytes.
///
/// It exists only for archives that `KeyedArchive(decoding:)` accepts and whose dictionaries are
/// plain (see `BinaryPropertyListView.dictionariesArePlain`); for anything else the initializer
/// returns nil, and callers take the eager path, which reports the exact error. Its checks are
/// `KeyedArchive.validate()`'s, read from the bytes.
package struct KeyedArchiveView {
  /// The property list, checked.
  package let plist: BinaryPropertyListView
  /// The plist's objects, read in place (valid while `plist` lives, which this view keeps).
  package let table: BinaryObjects
  // The `$top` dictionary, as an object of the plist.
  private let top: Int
  // Where the `$objects` array's references start (`BinaryObjects.contents`), read once: every
  // UID read goes through them.
  private let objectsStart: Int
  /// The `$top` dictionary, as an object of the plist.
  package var topDictionary: Int { top }
  /// The number of objects in `$objects`.
  package let count: Int
  private let rootName: RootName
  /// ``KeyedArchive/rootUID``.
  package let rootUID: UInt64
  /// Whether the envelope has an `$archiver` key (a string: the initializer checked it).
  package let hasArchiver: Bool
  /// Whether the envelope holds no key beside `$archiver`, `$version`, `$top` and `$objects`
  /// (``KeyedArchive/extraTopLevelKeys`` is empty), each once.
  package let hasNoExtraTopLevelKeys: Bool

  /// Checks an archive the way `KeyedArchive(decoding:limits:)` does, or returns nil when it would
  /// fail, when it is not binary, or when it holds anything this view does not read in place.
  package init?(_ data: Data, limits: PropertyListLimits) {
    guard let plist = data.withUnsafeBytes({ Self.checkedPlist($0, limits: limits) }) else {
      return nil
    }
    self.init(plist: plist)
  }

  /// `init(_:limits:)` of bytes in memory the caller keeps while the view is made (an archive
  /// held as data inside another's view): the view keeps a copy of its own.
  package init?(bytes: UnsafeRawBufferPointer, limits: PropertyListLimits) {
    guard let plist = Self.checkedPlist(bytes, limits: limits) else { return nil }
    self.init(plist: plist)
  }

  /// `init(bytes:limits:)` without the copy: the view reads `bytes` where they are, so the caller
  /// must keep them alive and unchanged for as long as the view lives
  /// (`BinaryPropertyListView(borrowingBytes:limits:)`).
  package init?(borrowing bytes: UnsafeRawBufferPointer, limits: PropertyListLimits) {
    guard let plist = Self.checkedPlist(bytes, limits: limits, borrowing: true) else { return nil }
    self.init(plist: plist)
  }

  // The plist checked, or nil. Anything without the `bplist0` header is refused, as format
  // detection does, before the view would build its error.
  private static func checkedPlist(
    _ bytes: UnsafeRawBufferPointer, limits: PropertyListLimits, borrowing: Bool = false
  ) -> BinaryPropertyListView? {
    guard BinaryPropertyListView.mayBeBinary(bytes) else { return nil }
    return borrowing
      ? try? BinaryPropertyListView(borrowingBytes: bytes, limits: limits)
      : try? BinaryPropertyListView(validatingBytes: bytes, limits: limits)
  }

  /// Checks an archive whose plist is checked already, as `init(_:limits:)` does the rest.
  @inline(__always)
  package init?(plist: BinaryPropertyListView) {
    guard plist.dictionariesArePlain else { return nil }
    let table = plist.objects
    let envelope = plist.topObject
    guard table.isKind(envelope, .dictionary),
      let objects = table.value(envelope, forKey: "$objects"), table.isKind(objects, .array)
    else { return nil }
    let count = table.count(objects)
    let archiver = table.value(envelope, forKey: "$archiver")
    if let archiver, !table.isKind(archiver, .string) { return nil }
    let version = table.value(envelope, forKey: "$version")
    if let version, !table.isKind(version, .integer) || table.integer(version).int64Value == nil {
      return nil
    }
    // `$objects` and `$top` (looked up below), and the two that may be absent.
    let envelopeKeys = 2 + (archiver != nil ? 1 : 0) + (version != nil ? 1 : 0)
    guard let top = table.value(envelope, forKey: "$top"), table.isKind(top, .dictionary),
      table.count(top) > 0
    else { return nil }
    for position in 0..<table.count(top) {
      let value = table.value(top, position)
      guard table.isKind(value, .uid), table.uid(value) < UInt64(count) else { return nil }
    }
    // Read once: every typed view starts from the root.
    if let value = table.value(top, forKey: "root") {
      (rootName, rootUID) = (.root, table.uid(value))
    } else if let value = table.value(top, forKey: "NSKeyedArchiveRootObjectKey") {
      (rootName, rootUID) = (.rootObjectKey, table.uid(value))
    } else {
      (rootName, rootUID) = (.firstKey, table.uid(table.value(top, 0)))
    }
    // Every UID in `$objects` must name an object. When no UID anywhere in the plist is out of
    // range, none in `$objects` is; otherwise the eager path finds which (or, when the UID lies
    // outside `$objects`, accepts the archive).
    if let maximum = plist.maximumUID, maximum >= UInt64(count) { return nil }
    // Class objects are shared by their instances: each is checked once. (On the stack: at most
    // one class per object.)
    let classesAreValid = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count) {
      checked in
      var checkedCount = 0
      // Where the references start, read once: the loop's stores (to `checked`) could otherwise
      // be taken to change it.
      let references = table.contents(objects).start
      for index in 0..<count {
        let object = table.reference(references, index)
        guard table.isKind(object, .dictionary),
          let classField = table.value(object, forKey: "$class", fromLast: true)
        else { continue }
        guard table.isKind(classField, .uid) else { return false }
        let classUID = table.uid(classField)
        if checked[..<checkedCount].contains(classUID) { continue }
        guard Self.isClassObject(classUID, objects: objects, count: count, in: table) else {
          return false
        }
        checked[checkedCount] = classUID
        checkedCount += 1
      }
      return true
    }
    guard classesAreValid else { return nil }
    self.plist = plist
    self.table = table
    hasArchiver = archiver != nil
    hasNoExtraTopLevelKeys = table.count(envelope) == envelopeKeys
    objectsStart = table.contents(objects).start
    self.top = top
    self.count = count
  }

  /// What `KeyedArchive.classObject` accepts: a UID naming a dictionary with a string
  /// `$classname`, and, when present, `$classes` an array of strings.
  private static func isClassObject(
    _ uid: UInt64, objects: Int, count: Int, in table: BinaryObjects
  ) -> Bool {
    guard uid < UInt64(count) else { return false }
    let object = table.element(objects, Int(uid))
    guard table.isKind(object, .dictionary),
      let name = table.value(object, forKey: "$classname"), table.isKind(name, .string)
    else { return false }
    guard let classes = table.value(object, forKey: "$classes") else { return true }
    guard table.isKind(classes, .array) else { return false }
    for position in 0..<table.count(classes)
    where !table.isKind(table.element(classes, position), .string) {
      return false
    }
    return true
  }

  // MARK: Envelope

  /// ``KeyedArchive/rootKey``: `root` or `NSKeyedArchiveRootObjectKey` when present, else the first
  /// key.
  package var rootKey: String {
    switch rootName {
    case .root: "root"
    case .rootObjectKey: "NSKeyedArchiveRootObjectKey"
    case .firstKey: table.string(table.key(top, 0))
    }
  }

  /// Whether `rootKey` is `NSKeyedArchiveRootObjectKey`, found without making the string.
  package var rootKeyIsRootObjectKey: Bool { rootName == .rootObjectKey }

  /// `KeyedArchive.rootKeys`: which of Apple's two root keys `$top` holds.
  package var rootKeys: ArchiveRootKeys {
    switch rootName {
    // `root` is looked up first: the literal may be there too.
    case .root:
      table.value(top, forKey: "NSKeyedArchiveRootObjectKey") != nil
        ? [.root, .rootObjectKey] : .root
    case .rootObjectKey: .rootObjectKey
    case .firstKey: []
    }
  }

  /// Which key of `$top` names the root, as ``KeyedArchive/rootKey`` picks it.
  private enum RootName {
    case root, rootObjectKey, firstKey
  }

  // MARK: Objects

  /// The plist object a UID names; `uid` must be below `count`.
  @inline(__always)
  package func object(_ uid: UInt64) -> Int {
    table.reference(objectsStart, Int(uid))
  }

  /// `KeyedArchive.isNull`.
  package func isNull(_ uid: UInt64) -> Bool {
    uid < UInt64(count) && table.isString(object(uid), equalTo: "$null")
  }

  /// The UID in an instance's `$class` field (checked to name a class object), or nil when the
  /// object is not a dictionary with one.
  package func classUID(ofInstance object: Int) -> UInt64? {
    guard table.isKind(object, .dictionary),
      let field = table.value(object, forKey: "$class", fromLast: true)
    else {
      return nil
    }
    return table.uid(field)
  }

  // The `$classes` array of a checked class object, when present and not empty, and its `$classname`.
  private func classNames(_ classUID: UInt64) -> (name: Int, classes: Int?) {
    let classObject = object(classUID)
    // Checked by the initializer: both are present where they must be.
    let name = table.value(classObject, forKey: "$classname") ?? classObject
    guard let classes = table.value(classObject, forKey: "$classes"), table.count(classes) > 0
    else { return (name, nil) }
    return (name, classes)
  }

  /// Whether the most derived class name of a checked class object (`mostDerivedClassName`) is
  /// `name`.
  package func mostDerivedClassIs(_ classUID: UInt64, _ name: StaticString) -> Bool {
    let (className, classes) = classNames(classUID)
    return table.isString(classes.map { table.element($0, 0) } ?? className, equalTo: name)
  }

  /// The most derived class name of a checked class object.
  package func mostDerivedClassName(_ classUID: UInt64) -> String {
    let (className, classes) = classNames(classUID)
    let name = classes.map { table.element($0, 0) } ?? className
    // The request classes, as constants: no string to build for the usual archive.
    if table.isString(name, equalTo: "NSMutableURLRequest") { return "NSMutableURLRequest" }
    if table.isString(name, equalTo: "NSURLRequest") { return "NSURLRequest" }
    return table.string(name)
  }

  /// Whether the class chain of a checked class object contains `className`, as
  /// `KeyedArchive.isInstance` reads it.
  package func classChainContains(_ classUID: UInt64, _ className: StaticString) -> Bool {
    let (name, classes) = classNames(classUID)
    guard let classes else { return table.isString(name, equalTo: className) }
    for position in 0..<table.count(classes)
    where table.isString(table.element(classes, position), equalTo: className) {
      return true
    }
    return false
  }

  /// A field of an instance decoded as `ArchiveDecoder.optionalReferenceOrInline` reads it, when
  /// it is a string: UID 0 and absent fields are nil, another UID names the object, anything else
  /// is the value inline. Nil when that is not a string (the decoder then fails).
  package func referencedOrInlineString(_ fields: Int, _ key: StaticString) -> String? {
    guard var value = table.value(fields, forKey: key) else { return nil }
    if table.isKind(value, .uid) {
      let uid = table.uid(value)
      guard uid != 0 else { return nil }
      value = object(uid)
    }
    return table.isKind(value, .string) ? table.string(value) : nil
  }

  /// What `decodeRoot(limits:)` returns when the root is an NSDictionary or NSMutableDictionary
  /// whose keys all name plain strings and whose values all name plain strings, numbers, booleans
  /// or data: its entries in order, as property-list values (what those decode to), and whether it
  /// is mutable. Nil for any other root, or when decoding would fail.
  ///
  /// - Parameter knownKeys: strings to return for keys spelled as one of them, rather than a new
  ///   string read from the bytes (the caller's constants cost no allocation).
  /// - Returns: also whether every key is one of `knownKeys`, and whether, besides, no key is
  ///   there twice (found from which known key each is, when there are at most 64 known keys; else
  ///   false, which only means unknown).
  package func plainRootDictionary(limits: KeyedArchiveLimits, knownKeys: KnownKeys = .none) -> (
    entries: [PropertyListDictionary.Element], mutable: Bool, keysAreKnown: Bool,
    knownAndDistinct: Bool
  )? {
    guard let root = plainRootArrays(limits: limits) else { return nil }
    var entries = [PropertyListDictionary.Element]()
    entries.reserveCapacity(root.count)
    var keysAreKnown = true
    // One bit per known key met, so that a key met twice shows without comparing strings.
    var met: UInt64 = 0
    var distinct = knownKeys.strings.count <= 64
    for position in 0..<root.count {
      guard let (keyObject, valueObject) = plainRootEntry(root, position),
        let value = plainValue(valueObject)
      else { return nil }
      let (key, known) = key(keyObject, knownKeys)
      if let known {
        if known < 64 {
          distinct = distinct && met & 1 << known == 0
          met |= 1 << known
        }
      } else {
        keysAreKnown = false
      }
      entries.append((key, value))
    }
    return (entries, root.mutable, keysAreKnown, keysAreKnown && distinct)
  }

  /// The root dictionary `plainRootDictionary` reads, before its entries: its `NS.keys` and
  /// `NS.objects` arrays (of `count` references each) and whether it is mutable. Nil for any other
  /// root, or when decoding would fail on the dictionary itself.
  package func plainRootArrays(limits: KeyedArchiveLimits) -> PlainRootArrays? {
    let root = rootUID
    guard root != 0, let classUID = classUID(ofInstance: object(root)) else { return nil }
    let mutable = mostDerivedClassIs(classUID, "NSMutableDictionary")
    guard mutable || mostDerivedClassIs(classUID, "NSDictionary") else { return nil }
    let fields = object(root)
    guard let keys = table.value(fields, forKey: "NS.keys"), table.isKind(keys, .array),
      let values = table.value(fields, forKey: "NS.objects"), table.isKind(values, .array),
      table.count(keys) == table.count(values),
      // The visits decoding makes (the dictionary, each key, each value) and its depth (one).
      1 + 2 * table.count(keys) <= limits.maximumVisits, limits.effectiveMaximumDepth >= 1
    else { return nil }
    return PlainRootArrays(
      keys: keys, values: values, count: table.count(keys), mutable: mutable,
      keysStart: table.contents(keys).start, valuesStart: table.contents(values).start)
  }

  /// The key and the value of entry `position` of `root`, as the plain objects they name: nil when
  /// either reference is not a UID other than 0, the key is not a string, or the value is not a
  /// string, number, boolean or data object (what `plainRootDictionary` refuses).
  package func plainRootEntry(_ root: PlainRootArrays, _ position: Int) -> (key: Int, value: Int)? {
    guard let key = plainObject(table.reference(root.keysStart, position)),
      table.isKind(key, .string),
      let value = plainObject(table.reference(root.valuesStart, position))
    else { return nil }
    switch table.kind(value) {
    case .string, .integer, .real, .boolean, .data: return (key, value)
    default: return nil
    }
  }

  /// A root dictionary's arrays of keys and values (`plainRootArrays`).
  package struct PlainRootArrays {
    /// The `NS.keys` and `NS.objects` arrays, as objects of the plist.
    package let keys: Int
    package let values: Int
    /// The entries: the count of either array.
    package let count: Int
    /// Whether the root is an NSMutableDictionary.
    package let mutable: Bool
    // Where the two arrays' references start (`BinaryObjects.contents`).
    let keysStart: Int
    let valuesStart: Int
  }

  // The object a reference to a plain object names: nil for anything but a UID other than 0.
  @inline(__always)
  private func plainObject(_ reference: Int) -> Int? {
    guard table.isKind(reference, .uid) else { return nil }
    let uid = table.uid(reference)
    return uid == 0 ? nil : object(uid)
  }

  // A string object as a key: one of `knownKeys` when it is spelled so (and which one it is).
  private func key(_ object: Int, _ knownKeys: KnownKeys) -> (String, known: Int?) {
    if let bytes = table.asciiBytes(object), let known = knownKeys.index(of: bytes) {
      return (knownKeys.strings[known], known)
    }
    return (table.string(object), nil)
  }

  // A plain string, number, boolean or data object, decoded as the decoder does
  // (a plain string object decodes to an immutable string, plain data to immutable data).
  private func plainValue(_ object: Int) -> PropertyListValue? {
    switch table.kind(object) {
    case .string: return .string(table.string(object))
    case .integer: return .integer(table.integer(object))
    case .real: return .real(table.real(object))
    case .boolean: return .boolean(table.boolean(object))
    case .data: return .data(table.data(object))
    default: return nil
    }
  }
}

/// Strings that keys spelled like them are read as (`KeyedArchiveView.plainRootDictionary`), so
/// that reading such a key makes no string; a key is looked up among the one or two of its length,
/// compared as bytes, rather than hashed (hashing a 35-byte key costs more than that).
package struct KnownKeys: Sendable {
  /// The strings, in the order that numbers them.
  package let strings: [String]
  // Each string's UTF-8 bytes, one after another, and where each starts.
  private let bytes: [UInt8]
  private let starts: [Int]
  // For each length in UTF-8 bytes, the numbers of the strings of that length.
  private let byLength: [[Int]]

  /// No known keys: every key is read from the bytes.
  package static let none = KnownKeys([])

  package init(_ strings: [String]) {
    self.strings = strings
    var bytes: [UInt8] = []
    var starts: [Int] = []
    var byLength: [[Int]] = []
    for (index, string) in strings.enumerated() {
      let length = string.utf8.count
      if byLength.count <= length {
        byLength += Array(repeating: [], count: length + 1 - byLength.count)
      }
      byLength[length].append(index)
      starts.append(bytes.count)
      bytes.append(contentsOf: string.utf8)
    }
    self.bytes = bytes
    self.starts = starts
    self.byLength = byLength
  }

  /// The number of the string spelled as `key`, if any.
  @inline(__always)
  package func index(of key: UnsafeRawBufferPointer) -> Int? {
    guard key.count < byLength.count else { return nil }
    return bytes.withUnsafeBytes { bytes in
      for index in byLength[key.count]
      where key.isEmpty
        || memcmp(bytes.baseAddress! + starts[index], key.baseAddress!, key.count) == 0
      {
        return index
      }
      return nil
    }
  }

  /// Whether `key` is spelled as one of the strings.
  package func contains(_ key: String) -> Bool {
    key.utf8.withContiguousStorageIfAvailable { index(of: UnsafeRawBufferPointer($0)) != nil }
      ?? strings.contains(key)
  }
}
