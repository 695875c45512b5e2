import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// Archiving one object of an archive as the root of an archive of its own (a Network.framework
// blob's requests and response, which CFNetwork's blobs keep as archives apart) decodes the object
// to a value tree, has `KeyedArchiveBuilder` lay it out as NSKeyedArchiver would, and has
// `ArchiverFlattener` and the binary writer write that. For the shapes requests and responses are
// made of, this file does the same straight from the bytes of the archive read in place: the
// builder's layout and the flattener's sharing, step for step, and the writer's bytes. Anything
// else (dates, sets, UUIDs, NSNull, non-ASCII strings, containers held inline, cycles) is left to
// the tree: the writer returns nil.
//
// A request is a few dozen objects, and this runs for every Network.framework blob read, so it is
// written for speed:
// - every text (a key, a string, a class name) gets an ID the first time it is met in the archive
//   read, and the builder's and the flattener's sharing look IDs up in arrays;
// - the layout and the sharing tables are plain values in flat buffers, kept in a pool from one
//   archive to the next (`WriterMemory`): no allocation per object, no reference counting;
// - the flattener writes each object's bytes as it flattens it, with one-byte references (what
//   an archive of up to 255 objects takes), and flattens again with wider ones for a larger one.

extension KeyedArchiveView {
  /// Most objects the sub-archive writer visits, counting each reference to a shared object (as
  /// decoding does), before it gives up: an archive whose objects are shared over and over would
  /// otherwise make its work grow exponentially.
  static let subArchiveVisits = 10_000

  /// `KeyedArchive(root: decodeValue(uid)).encoded()` of this archive, written from its bytes;
  /// nil when the object holds anything the writer does not follow, or when decoding it would fail.
  package func archivedAsRoot(_ uid: UInt64, maximumDepth: Int = 64) -> Data? {
    var writer = SubArchiveWriter(view: self)
    return writer.archivedAsRoot(uid, maximumDepth: maximumDepth)
  }

  /// Whether `archivedAsRoot(uid)` would write the object, found without writing it: then
  /// `decodeValue(uid)` succeeds too, under limits of at least 256 levels and 100,000 visits.
  ///
  /// - Parameter written: objects that `archivedAsRoot` has written on their own, which are then
  ///   known to decode and are not followed again.
  package func decodesFromBytes(
    _ uid: UInt64, written: [UInt64] = [], maximumDepth: Int = 64
  ) -> Bool {
    var writer = SubArchiveWriter(view: self)
    return writer.decodesFromBytes(uid, written: written, maximumDepth: maximumDepth)
  }

  /// Whether the most derived class name of a checked class object (`mostDerivedClassName`) has
  /// `prefix` as `String.hasPrefix` reads it, compared as bytes for an ASCII name.
  package func mostDerivedClassName(_ classUID: UInt64, hasPrefix prefix: StaticString) -> Bool {
    let name = ViewReader.mostDerivedName(of: object(classUID), table)
    if let bytes = table.asciiBytes(name) {
      // ASCII against ASCII: no character of the name can join the prefix's last one.
      return bytes.count >= prefix.utf8CodeUnitCount
        && memcmp(bytes.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }
    return table.isKind(name, .string) && table.string(name).hasPrefix(prefix.description)
  }
}

extension KeyedArchiveView {
  /// For an object that `archivedAsRoot` writes, the value of each header field named in `names`
  /// in `URLResponseArchive(decoding: archivedAsRoot(uid)).headerFields` (the first whose name
  /// equals it but for ASCII case, as `HTTPFieldName.equal` compares), read in place: nil for each
  /// when the object is not a response or has no header field. Nil when the object is of a shape
  /// this does not follow (the caller then decodes the archive).
  package func responseHeaderValues(ofWritten uid: UInt64, _ names: [String]) -> [String?]? {
    guard uid != 0, uid < UInt64(count) else { return nil }
    // What is not a response (`URLResponseArchive` refuses it) has no header fields.
    var values = [String?](repeating: nil, count: names.count)
    guard let responseClass = classUID(ofInstance: object(uid)) else {
      // A string, number or data; a dictionary without a class is not written.
      return table.isKind(object(uid), .dictionary) ? nil : values
    }
    switch category(ofClass: responseClass) {
    case .plain: break
    case .array, .mutableArray, .dictionary, .mutableDictionary, .string, .url: return values
    case .refused, .unwritable: return nil
    }
    guard classChainContains(responseClass, "NSURLResponse") else { return values }
    let response = object(uid)
    let (fieldCount, start) = table.contents(response)
    for position in 0..<fieldCount {
      // Keys are ASCII in what `archivedAsRoot` writes.
      guard let key = table.asciiBytes(table.reference(start, position)) else { return nil }
      guard Self.containsHeader(key), Text(key) != Constant.classKey.text else { continue }
      // The first field so named that holds a reference to a dictionary.
      let value = table.reference(start, fieldCount + position)
      guard table.isKind(value, .uid), table.uid(value) != 0 else { continue }
      guard table.uid(value) < UInt64(count) else { return nil }
      let dictionary = object(table.uid(value))
      guard let dictionaryClass = classUID(ofInstance: dictionary) else {
        // A string, number or data; a dictionary without a class is not written.
        if table.isKind(dictionary, .dictionary) { return nil }
        continue
      }
      switch category(ofClass: dictionaryClass) {
      case .dictionary, .mutableDictionary: break
      case .array, .mutableArray, .string, .url, .plain: continue
      case .refused, .unwritable: return nil
      }
      guard let keys = table.value(dictionary, forKey: "NS.keys"),
        let objects = table.value(dictionary, forKey: "NS.objects"),
        table.isKind(keys, .array), table.isKind(objects, .array),
        table.count(keys) == table.count(objects)
      else { return nil }
      for entry in 0..<table.count(keys) {
        // Entries whose name or value is not a string are not header fields.
        let name = headerString(table.element(keys, entry))
        let text = headerString(table.element(objects, entry))
        guard case .string(let name) = name, case .string(let text) = text else {
          if name == .unknown || text == .unknown { return nil }
          continue
        }
        for (index, wanted) in names.enumerated()
        where values[index] == nil && HTTPFieldName.equal(name, wanted) {
          values[index] = text
        }
      }
      return values
    }
    return values
  }

  /// What a reference to a header field's name or value decodes to.
  private enum HeaderString: Equatable {
    case string(String)
    case notString
    /// Something `archivedAsRoot` does not write.
    case unknown
  }

  private func headerString(_ reference: Int) -> HeaderString {
    guard table.isKind(reference, .uid) else { return .unknown }
    let uid = table.uid(reference)
    // UID 0 is nil.
    guard uid != 0 else { return .notString }
    guard uid < UInt64(count) else { return .unknown }
    let object = object(uid)
    if table.isKind(object, .string) { return .string(table.string(object)) }
    guard let objectClass = classUID(ofInstance: object) else {
      // A number or data; a dictionary without a class is not written.
      return table.isKind(object, .dictionary) ? .unknown : .notString
    }
    switch category(ofClass: objectClass) {
    case .string:
      return referencedOrInlineString(object, "NS.string").map { .string($0) } ?? .unknown
    case .array, .mutableArray, .dictionary, .mutableDictionary, .url, .plain: return .notString
    case .refused, .unwritable: return .unknown
    }
  }

  /// What the writer makes of a checked class object.
  private func category(ofClass classUID: UInt64) -> ClassCategory {
    ViewReader.category(ViewReader.mostDerivedName(of: object(classUID), table), table)
  }

  /// Whether an ASCII key contains `header` in any case (`lowercased().contains("header")`).
  private static func containsHeader(_ key: UnsafeRawBufferPointer) -> Bool {
    let header: StaticString = "header"
    let length = header.utf8CodeUnitCount
    guard key.count >= length else { return false }
    for start in 0...(key.count - length) {
      var matches = true
      // ASCII letters lowercased; nothing else ORed with 0x20 gives a letter of `header`.
      for offset in 0..<length where key[start + offset] | 0x20 != header.utf8Start[offset] {
        matches = false
        break
      }
      if matches { return true }
    }
    return false
  }
}

/// `KeyedArchiveView.archivedAsRoot` and `decodesFromBytes` for several objects of one archive
/// (a Network.framework blob's requests, response and root), with the memory of one writer.
package struct SubArchiveWriter: ~Copyable {
  private var reader: ViewReader
  private let memory: WriterMemory

  /// A writer for objects of `view`.
  package init(view: KeyedArchiveView) {
    memory = WriterMemory.take()
    memory.layout.pointee.interner.reset(objectCount: view.plist.objectCount)
    reader = ViewReader(view: view, memory.reader)
  }

  deinit { WriterMemory.give(memory) }

  /// `KeyedArchiveView.archivedAsRoot(uid)`.
  package mutating func archivedAsRoot(_ uid: UInt64, maximumDepth: Int = 64) -> Data? {
    reader.start(maximumDepth: maximumDepth, known: [])
    let layout = memory.layout
    layout.pointee.reset()
    guard let root = reader.encode(uid, &layout.pointee) else { return nil }
    return memory.flattener.pointee.encoded(&layout.pointee, rootUID: root, rootKey: .rootObjectKey)
  }

  /// `archivedAsRoot(uid)`, with a view of the bytes made from what the writer knows of them
  /// (`BinaryPropertyListView(written:_:limits:)`) instead of checking them again: nil when they lie
  /// beyond `limits`.
  ///
  /// - Parameter verifying: as `BinaryPropertyListView(written:_:limits:verifying:)` takes it.
  package mutating func archivedAsRootWithView(
    _ uid: UInt64, limits: PropertyListLimits, maximumDepth: Int = 64, verifying: Bool = true
  ) -> (bytes: Data, view: BinaryPropertyListView?)? {
    guard let bytes = archivedAsRoot(uid, maximumDepth: maximumDepth) else { return nil }
    let view = BinaryPropertyListView(
      written: bytes, memory.flattener.pointee.writtenFacts, limits: limits, verifying: verifying)
    return (bytes, view)
  }

  /// `KeyedArchiveView.decodesFromBytes(uid, written:)`.
  package mutating func decodesFromBytes(
    _ uid: UInt64, written: [UInt64] = [], maximumDepth: Int = 64
  ) -> Bool {
    reader.start(maximumDepth: maximumDepth, known: written)
    memory.layout.pointee.reset()
    return reader.encode(uid, &memory.layout.pointee) != nil
  }
}

/// The flat buffers of one writer: a writer takes a set from the pool and gives it back when done,
/// so that writing an archive allocates little more than its bytes.
// @unchecked Sendable: the pool hands a set to one writer at a time, and only that writer touches
// the buffers until it gives the set back.
private final class WriterMemory: @unchecked Sendable {
  let reader = UnsafeMutablePointer<ReaderMemory>.allocate(capacity: 1)
  let layout = UnsafeMutablePointer<Layout>.allocate(capacity: 1)
  let flattener = UnsafeMutablePointer<Flattener>.allocate(capacity: 1)

  init() {
    reader.initialize(to: ReaderMemory())
    layout.initialize(to: Layout())
    flattener.initialize(to: Flattener())
  }

  deinit {
    reader.deinitialize(count: 1)
    reader.deallocate()
    layout.deinitialize(count: 1)
    layout.deallocate()
    flattener.deinitialize(count: 1)
    flattener.deallocate()
  }

  // A few sets: as many as threads write at once, as a rule.
  private static let pool = Locked<[WriterMemory]>([])
  private static let pooledSets = 8
  // A set grown past this many laid-out objects or texts is let go rather than kept.
  private static let pooledObjects = 4096

  static func take() -> WriterMemory {
    pool.withLock { $0.popLast() } ?? WriterMemory()
  }

  static func give(_ memory: WriterMemory) {
    guard memory.layout.pointee.objects.capacity <= pooledObjects,
      memory.layout.pointee.interner.count <= pooledObjects
    else { return }
    pool.withLock { sets in
      if sets.count < pooledSets { sets.append(memory) }
    }
  }
}

extension KeyedArchive {
  /// `KeyedArchive(root: .dictionary(pairs, mutable: mutable), rootKey: rootKey).encoded(as:
  /// .binary)`, written straight, for a dictionary of ASCII string keys and plain values (ASCII
  /// strings, numbers, booleans, data, null), as a resume blob's root is; nil for anything else.
  package static func encodedDictionary(
    _ pairs: [ArchivedDictionaryEntry], mutable: Bool, rootKey: String
  ) -> Data? {
    let rootKeyText: Constant
    switch rootKey {
    case "NSKeyedArchiveRootObjectKey": rootKeyText = .rootObjectKey
    case "root": rootKeyText = .root
    default: return nil
    }
    var arena = ByteArena(pairs)
    let memory = WriterMemory.take()
    defer { WriterMemory.give(memory) }
    let layout = memory.layout
    layout.pointee.interner.reset(objectCount: 0)
    layout.pointee.reset()
    guard let uid = encodedDictionary(pairs, mutable: mutable, &layout.pointee, &arena) else {
      return nil
    }
    return memory.flattener.pointee.encoded(&layout.pointee, rootUID: uid, rootKey: rootKeyText)
  }

  /// Lays out the root dictionary of `encodedDictionary`; its UID.
  private static func encodedDictionary(
    _ pairs: [ArchivedDictionaryEntry], mutable: Bool, _ layout: inout Layout,
    _ arena: inout ByteArena
  ) -> UInt64? {
    let uid = layout.placeholder()
    let count = pairs.count
    let keys = layout.uidLists.reserve(count)
    let values = layout.uidLists.reserve(count)
    // Every key, then every value, as NSDictionary encodes them. Read in place by index: the
    // pairs of `enumerated()` are copies, each value retained and released.
    for position in pairs.indices {
      guard case .string = pairs[position].key,
        let key = layout.encodeOwned(pairs[position].key, &arena)
      else {
        return nil
      }
      layout.uidLists[keys + position] = key
    }
    for position in pairs.indices {
      guard let value = layout.encodeOwned(pairs[position].value, &arena) else { return nil }
      layout.uidLists[values + position] = value
    }
    let classUID = layout.fixedClass(mutable ? .mutableDictionary : .dictionary)
    let fields = layout.fields.append(.uids(layout.id(.keys), keys, count))
    layout.fields.append(.uids(layout.id(.objects), values, count))
    layout.fields.append(.uid(layout.id(.classKey), classUID))
    layout.objects[Int(uid)] = .instance(fields, 3)
    return uid
  }
}

/// The sub-archive writer for tests and fuzzing outside the package.
@_spi(Differential)
public enum SubArchiveDifferential {
  /// `KeyedArchiveView.archivedAsRoot` of each of the first `limit` objects of the archive `data`
  /// read in place, by UID (those it writes); nil when the archive is not read in place.
  public static func archivedAsRoot(
    _ data: Data, firstObjects limit: Int, limits: PropertyListLimits = .default
  ) -> [UInt64: Data]? {
    guard let view = KeyedArchiveView(data, limits: limits) else { return nil }
    var archives: [UInt64: Data] = [:]
    // One writer for all, as a Network.framework blob's objects are written: what one object
    // leaves in the reused memory must not change the next one's bytes.
    var writer = SubArchiveWriter(view: view)
    for uid in 1..<UInt64(max(1, min(view.count, limit))) {
      if let bytes = writer.archivedAsRoot(uid) { archives[uid] = bytes }
    }
    return archives
  }

  /// For the first `limit` objects of the archive `data` read in place that `archivedAsRoot`
  /// writes, the views of their bytes made from what the writer knows of them, against the views
  /// checking the bytes makes: how many were made (none for an object beyond `limits`), and how
  /// each that differs does; nil when the archive is not read in place. The written archives are
  /// read under `writtenLimits` (by default `limits`).
  public static func writtenViews(
    _ data: Data, firstObjects limit: Int, limits: PropertyListLimits = .default,
    writtenLimits: PropertyListLimits? = nil
  ) -> (made: Int, differences: [UInt64: String])? {
    let writtenLimits = writtenLimits ?? limits
    guard let view = KeyedArchiveView(data, limits: limits) else { return nil }
    var writer = SubArchiveWriter(view: view)
    var made = 0
    var differences: [UInt64: String] = [:]
    for uid in 1..<UInt64(max(1, min(view.count, limit))) {
      guard
        let written = writer.archivedAsRootWithView(uid, limits: writtenLimits, verifying: false),
        let writtenView = written.view
      else { continue }
      made += 1
      if let difference = BinaryViewDifferential.difference(
        written: writtenView, written.bytes, limits: writtenLimits)
      {
        differences[uid] = difference
      }
    }
    return (made, differences)
  }

  /// The first of the first `limit` objects of the archive `data` read in place for which
  /// `KeyedArchiveView.decodesFromBytes` and `archivedAsRoot` disagree (one accepts, the other
  /// does not), or nil.
  public static func checkDisagreement(
    _ data: Data, firstObjects limit: Int, limits: PropertyListLimits = .default
  ) -> UInt64? {
    guard let view = KeyedArchiveView(data, limits: limits) else { return nil }
    for uid in 1..<UInt64(max(1, min(view.count, limit)))
    where view.decodesFromBytes(uid) != (view.archivedAsRoot(uid) != nil) {
      return uid
    }
    return nil
  }
}

// MARK: - Plain values

/// Bytes that stay put while an archive is written: of the archive read in place, of a constant,
/// or of a `ByteArena`.
// Sendable: it only ever points at constants, at a view's bytes or at an arena's, which nothing
// writes while it is used.
private struct Text: @unchecked Sendable, BitwiseCopyable {
  let start: UnsafeRawPointer
  let count: Int

  init(_ bytes: UnsafeRawBufferPointer) {
    // An empty string may have no address: any valid pointer serves for no bytes.
    start = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
    count = bytes.count
  }

  init(_ constant: StaticString) {
    start = UnsafeRawPointer(constant.utf8Start)
    count = constant.utf8CodeUnitCount
  }

  private init(start: UnsafeRawPointer, count: Int) {
    self.start = start
    self.count = count
  }

  /// No bytes. (Computed: a stored constant would be a lazily initialized global, checked at each
  /// use.)
  static var empty: Text { Text(start: UnsafeRawPointer(bitPattern: 1)!, count: 0) }

  /// Whether the bytes are the same, compared in place eight at a time (the texts are short:
  /// calling `memcmp` cost more than comparing).
  @inline(__always)
  static func == (lhs: Text, rhs: Text) -> Bool {
    guard lhs.count == rhs.count else { return false }
    if lhs.start == rhs.start { return true }
    var position = 0
    while position + 8 <= lhs.count {
      guard
        lhs.start.loadUnaligned(fromByteOffset: position, as: UInt64.self)
          == rhs.start.loadUnaligned(fromByteOffset: position, as: UInt64.self)
      else { return false }
      position += 8
    }
    while position < lhs.count {
      guard
        lhs.start.load(fromByteOffset: position, as: UInt8.self)
          == rhs.start.load(fromByteOffset: position, as: UInt8.self)
      else { return false }
      position += 1
    }
    return true
  }

  @inline(__always)
  static func != (lhs: Text, rhs: Text) -> Bool { !(lhs == rhs) }

  /// A hash of the bytes for the sharing tables: the length and the first and last eight bytes
  /// (the keys of one archive differ there: `__nsurlrequest_proto_prop_obj_12`), mixed.
  var hash: UInt64 {
    var hash = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
    if count >= 8 {
      hash ^= start.loadUnaligned(as: UInt64.self)
      hash = (hash ^ (hash >> 29)) &* 0xBF58_476D_1CE4_E5B9
      hash ^= start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    } else {
      for index in 0..<count {
        hash = hash << 8 | UInt64(start.load(fromByteOffset: index, as: UInt8.self))
      }
    }
    hash = (hash ^ (hash >> 31)) &* 0x94D0_49BB_1331_11EB
    return hash ^ (hash >> 32)
  }
}

/// The texts the writer writes of its own.
private enum Constant: Int {
  case version, objectsArray, archiver, top, rootObjectKey, root, keyedArchiver, null
  case classKey, className, classes, keys, objects, base, relative
  case array, mutableArray, dictionary, mutableDictionary, url, object

  /// The number of constants (`allCases` would build an array at each use).
  static let count = Constant.object.rawValue + 1

  var text: Text {
    switch self {
    case .version: Text("$version")
    case .objectsArray: Text("$objects")
    case .archiver: Text("$archiver")
    case .top: Text("$top")
    case .rootObjectKey: Text("NSKeyedArchiveRootObjectKey")
    case .root: Text("root")
    case .keyedArchiver: Text("NSKeyedArchiver")
    case .null: Text("$null")
    case .classKey: Text("$class")
    case .className: Text("$classname")
    case .classes: Text("$classes")
    case .keys: Text("NS.keys")
    case .objects: Text("NS.objects")
    case .base: Text("NS.base")
    case .relative: Text("NS.relative")
    case .array: Text("NSArray")
    case .mutableArray: Text("NSMutableArray")
    case .dictionary: Text("NSDictionary")
    case .mutableDictionary: Text("NSMutableDictionary")
    case .url: Text("NSURL")
    case .object: Text("NSObject")
    }
  }
}

/// The ID of a text: the same for the same bytes, within one archive read (or one dictionary of
/// the caller's).
private typealias TextID = Int32

/// A string, data, number or boolean, as the writer writes it.
private struct Scalar: BitwiseCopyable {
  enum Kind: UInt8 {
    case string, data, integer, real, boolean
  }
  let kind: Kind
  /// An integer's need for unsigned storage (above `Int64.max`), a real's single precision.
  let flag: Bool
  /// A string's text ID.
  let id: TextID
  /// An integer's bit pattern, a real's `Double` bits, a boolean's value (0 or 1).
  let bits: UInt64
  /// A string's ASCII text, data's bytes.
  let text: Text

  static func string(_ text: Text, _ id: TextID) -> Scalar {
    Scalar(kind: .string, flag: false, id: id, bits: 0, text: text)
  }
  static func data(_ bytes: Text) -> Scalar {
    Scalar(kind: .data, flag: false, id: -1, bits: 0, text: bytes)
  }
  static func integer(_ integer: PropertyListInteger) -> Scalar {
    Scalar(
      kind: .integer, flag: integer.needsUnsignedStorage, id: -1, bits: integer.bitPattern,
      text: .empty)
  }
  /// An integer that fits in 64 bits (signed), by its bit pattern.
  static func integer(bits: UInt64) -> Scalar {
    Scalar(kind: .integer, flag: false, id: -1, bits: bits, text: .empty)
  }
  static func real(_ real: PropertyListReal) -> Scalar {
    Scalar(
      kind: .real, flag: real.isSinglePrecision, id: -1, bits: real.value.bitPattern,
      text: .empty)
  }
  static func boolean(_ flag: Bool) -> Scalar {
    Scalar(kind: .boolean, flag: false, id: -1, bits: flag ? 1 : 0, text: .empty)
  }

  /// The bits numbers compare by: every NaN one value, and the two zeros one (as
  /// `PropertyListReal`'s equality and the flattener's sharing read them).
  var comparedBits: UInt64 {
    guard kind == .real else { return bits }
    let value = Double(bitPattern: bits)
    return value.isNaN ? Double.nan.bitPattern : value == 0 ? 0 : bits
  }

  /// Whether `ArchiverFlattener` makes one object of two numbers: integers by bit pattern and
  /// storage, reals by value whatever their width.
  func isSameNumber(_ other: Scalar) -> Bool {
    guard kind == other.kind, comparedBits == other.comparedBits else { return false }
    return kind == .real || flag == other.flag
  }
}

/// A growable array of plain values in memory of its own: appending and reading check bounds, but
/// never uniqueness, and no value is retained or released.
private struct FlatBuffer<Element: BitwiseCopyable>: ~Copyable {
  private(set) var base: UnsafeMutablePointer<Element>
  private(set) var count = 0
  private(set) var capacity: Int

  init(capacity: Int) {
    self.capacity = max(capacity, 4)
    base = .allocate(capacity: self.capacity)
  }

  deinit { base.deallocate() }

  @inline(__always)
  subscript(position: Int) -> Element {
    get {
      precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "index out of range")
      return base[position]
    }
    set {
      precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "index out of range")
      base[position] = newValue
    }
  }

  /// Appends an element; its position.
  @inline(__always) @discardableResult
  mutating func append(_ element: Element) -> Int {
    if count == capacity { grow(to: count + 1) }
    (base + count).initialize(to: element)
    count += 1
    return count - 1
  }

  /// Room for `more` elements after the last, to be set before they are read; the first's position.
  @inline(__always)
  mutating func reserve(_ more: Int) -> Int {
    let first = count
    if capacity - count < more { grow(to: count + more) }
    count += more
    return first
  }

  /// `more` elements after the last, each `element`.
  mutating func append(repeating element: Element, count more: Int) {
    let first = reserve(more)
    (base + first).initialize(repeating: element, count: more)
  }

  mutating func removeAll() { count = 0 }

  mutating func removeLast() {
    precondition(count > 0)
    count -= 1
  }

  private mutating func grow(to needed: Int) {
    let newCapacity = max(capacity * 2, needed)
    let grown = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
    grown.moveInitialize(from: base, count: count)
    base.deallocate()
    base = grown
    capacity = newCapacity
  }
}

/// First occurrences of texts: open addressing on the texts' hashes (no allocation per text, and
/// no `Hasher`).
private struct TextTable: ~Copyable {
  private struct Entry: BitwiseCopyable {
    let text: Text
    let hash: UInt64
    let value: Int
  }
  private var slots = FlatBuffer<Int32>(capacity: 128)
  private var entries = FlatBuffer<Entry>(capacity: 64)

  init() {
    slots.append(repeating: -1, count: 128)
  }

  mutating func removeAll() {
    entries.removeAll()
    let count = slots.count
    slots.removeAll()
    slots.append(repeating: -1, count: count)
  }

  /// The value of the first text equal to `text`, or nil after recording `value` for it.
  mutating func firstOrInsert(_ text: Text, _ value: Int) -> Int? {
    let hash = text.hash
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    // Unchecked within the loop: the mask keeps every slot in range, and every filled slot names
    // an entry.
    let slotBase = slots.base
    while slotBase[slot] >= 0 {
      let entry = entries.base[Int(slotBase[slot])]
      if entry.hash == hash, entry.text == text { return entry.value }
      slot = (slot + 1) & mask
    }
    slotBase[slot] = Int32(entries.append(Entry(text: text, hash: hash, value: value)))
    // At most half full, so that probes stay short.
    if entries.count * 2 > slots.count { grow() }
    return nil
  }

  private mutating func grow() {
    let count = slots.count * 2
    slots.removeAll()
    slots.append(repeating: -1, count: count)
    let mask = count - 1
    for position in 0..<entries.count {
      var slot = Int(truncatingIfNeeded: entries[position].hash) & mask
      while slots[slot] >= 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(position)
    }
  }
}

/// The texts of one archive read (or one dictionary of the caller's), each with an ID.
private struct Interner: ~Copyable {
  private var texts = FlatBuffer<Text>(capacity: 64)
  private var table = TextTable()
  // The IDs of the constants, or -1 until first asked for.
  private var constants = FlatBuffer<TextID>(capacity: Constant.count)
  // The ID of each string object of the plist read, or -1: by object index, for plists of up to
  // `cachedObjects` objects.
  private var objects = FlatBuffer<TextID>(capacity: 256)
  private static let cachedObjects = 1 << 16

  /// The number of IDs given.
  var count: Int { texts.count }

  /// No text yet, for a plist of `objectCount` objects.
  mutating func reset(objectCount: Int) {
    texts.removeAll()
    table.removeAll()
    constants.removeAll()
    constants.append(repeating: -1, count: Constant.count)
    objects.removeAll()
    if objectCount <= Self.cachedObjects { objects.append(repeating: -1, count: objectCount) }
  }

  /// The ID of a text.
  mutating func id(_ text: Text) -> TextID {
    let next = texts.count
    if let found = table.firstOrInsert(text, next) { return TextID(found) }
    texts.append(text)
    return TextID(next)
  }

  @inline(__always)
  mutating func id(_ constant: Constant) -> TextID {
    let cached = constants[constant.rawValue]
    if cached >= 0 { return cached }
    let id = id(constant.text)
    constants[constant.rawValue] = id
    return id
  }

  /// The ID of a string object of the plist read, when it has one.
  @inline(__always)
  func cachedID(object: Int) -> TextID? {
    guard UInt(bitPattern: object) < UInt(bitPattern: objects.count) else { return nil }
    let id = objects.base[object]
    return id >= 0 ? id : nil
  }

  /// The ID of the ASCII text of a string object of the plist read.
  mutating func id(object: Int, _ text: Text) -> TextID {
    let id = id(text)
    if UInt(bitPattern: object) < UInt(bitPattern: objects.count) { objects.base[object] = id }
    return id
  }

  @inline(__always)
  func text(_ id: TextID) -> Text { texts[Int(id)] }
}

/// A value for each text ID, valid in one pass only: nothing to clear between passes.
private struct IDTable: ~Copyable {
  private struct Entry: BitwiseCopyable {
    var value: Int
    var pass: Int
  }
  private var entries = FlatBuffer<Entry>(capacity: 64)

  @inline(__always)
  func value(_ id: TextID, pass: Int) -> Int? {
    guard Int(id) < entries.count else { return nil }
    let entry = entries.base[Int(id)]
    return entry.pass == pass ? entry.value : nil
  }

  @inline(__always)
  mutating func set(_ id: TextID, pass: Int, _ value: Int) {
    if Int(id) >= entries.count {
      entries.append(repeating: Entry(value: 0, pass: -1), count: Int(id) + 1 - entries.count)
    }
    entries[Int(id)] = Entry(value: value, pass: pass)
  }
}

/// The caller's strings and data copied into one block that stays put while the archive is written
/// (`Text` points into it).
private struct ByteArena: ~Copyable {
  private let block: UnsafeMutableRawBufferPointer
  private var used = 0

  init(_ pairs: [ArchivedDictionaryEntry]) {
    func size(_ value: ArchivedValue) -> Int {
      switch value {
      case .string(let string, _): string.utf8.count
      case .data(let data, _): data.count
      default: 0
      }
    }
    var total = 0
    for pair in pairs { total += size(pair.key) + size(pair.value) }
    block = .allocate(byteCount: max(total, 1), alignment: 1)
  }

  deinit { block.deallocate() }

  /// The string's text in the block; nil when it is not ASCII (or would not fit).
  mutating func text(_ string: String) -> Text? {
    return string.withUTF8InPlace { utf8 -> Text? in
      guard Self.isASCII(UnsafeRawBufferPointer(utf8)) else { return nil }
      return copy(UnsafeRawBufferPointer(utf8))
    }
  }

  /// The data's bytes in the block; nil when they would not fit.
  mutating func bytes(_ data: Data) -> Text? {
    data.withUnsafeBytes { copy($0) }
  }

  private mutating func copy(_ bytes: UnsafeRawBufferPointer) -> Text? {
    guard used + bytes.count <= block.count else { return nil }
    let start = block.baseAddress! + used
    if let base = bytes.baseAddress { start.copyMemory(from: base, byteCount: bytes.count) }
    used += bytes.count
    return Text(UnsafeRawBufferPointer(start: start, count: bytes.count))
  }

  /// Whether every byte is below 0x80, eight at a time.
  static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var position = 0
    var bits: UInt64 = 0
    while position + 8 <= bytes.count {
      bits |= base.loadUnaligned(fromByteOffset: position, as: UInt64.self)
      position += 8
    }
    while position < bytes.count {
      bits |= UInt64(base.load(fromByteOffset: position, as: UInt8.self))
      position += 1
    }
    return bits & 0x8080_8080_8080_8080 == 0
  }
}

// MARK: - The layout

/// An object as `KeyedArchiveBuilder` lays it out in `$objects`.
private struct BuiltObject: BitwiseCopyable {
  enum Kind: UInt8 {
    /// `$null`, or the slot of an instance whose fields are not laid out yet.
    case null
    case scalar
    /// An instance: `count` fields of `Layout.fields` from `start`.
    case instance
    /// A class object: `count` names of `Layout.chains` from `start`, most derived first.
    case classObject
  }
  let kind: Kind
  let scalar: Scalar
  let start: Int
  let count: Int

  static var null: BuiltObject {
    BuiltObject(kind: .null, scalar: .boolean(false), start: 0, count: 0)
  }
  static func scalar(_ scalar: Scalar) -> BuiltObject {
    BuiltObject(kind: .scalar, scalar: scalar, start: 0, count: 0)
  }
  static func instance(_ start: Int, _ count: Int) -> BuiltObject {
    BuiltObject(kind: .instance, scalar: .boolean(false), start: start, count: count)
  }
}

/// A field of a laid-out instance.
private struct BuiltField: BitwiseCopyable {
  enum Kind: UInt8 {
    /// A reference: the UID `value`.
    case uid
    /// An array of references: `count` UIDs of `Layout.uidLists` from `value`.
    case uids
    /// A plain value held inline.
    case inline
    /// An empty array held inline.
    case emptyArray
  }
  let key: TextID
  let kind: Kind
  let value: UInt64
  let count: Int
  let scalar: Scalar

  static func uid(_ key: TextID, _ uid: UInt64) -> BuiltField {
    BuiltField(key: key, kind: .uid, value: uid, count: 0, scalar: .boolean(false))
  }
  static func uids(_ key: TextID, _ start: Int, _ count: Int) -> BuiltField {
    BuiltField(key: key, kind: .uids, value: UInt64(start), count: count, scalar: .boolean(false))
  }
  static func inline(_ key: TextID, _ scalar: Scalar) -> BuiltField {
    BuiltField(key: key, kind: .inline, value: 0, count: 0, scalar: scalar)
  }
  static func emptyArray(_ key: TextID) -> BuiltField {
    BuiltField(key: key, kind: .emptyArray, value: 0, count: 0, scalar: .boolean(false))
  }
}

/// The class chains the builder writes for Foundation's own classes.
private enum FixedChain: Int8 {
  case array, mutableArray, dictionary, mutableDictionary, url
}

/// `KeyedArchiveBuilder`'s objects, and its sharing: strings by their characters, numbers by value,
/// classes by chain.
private struct Layout: ~Copyable {
  var interner = Interner()
  var objects = FlatBuffer<BuiltObject>(capacity: 64)
  var fields = FlatBuffer<BuiltField>(capacity: 96)
  var uidLists = FlatBuffer<UInt64>(capacity: 64)
  var chains = FlatBuffer<TextID>(capacity: 16)
  /// The bytes of the strings and data laid out: what sizes the output.
  private(set) var textBytes = 0
  private struct BuiltClass: BitwiseCopyable {
    /// The `FixedChain`, or -1.
    let fixed: Int8
    let chainStart: Int
    let chainCount: Int
    let uid: UInt64
  }
  private var classes = FlatBuffer<BuiltClass>(capacity: 8)
  // The UID of the string object of each text, in this pass.
  private var strings = IDTable()
  private var pass = 0
  private struct NumberEntry: BitwiseCopyable {
    let kind: Scalar.Kind
    let flag: Bool
    let comparedBits: UInt64
    let uid: UInt64
  }
  private var numbers = FlatBuffer<NumberEntry>(capacity: 16)

  /// Empty but for `$null` at UID 0 (the texts' IDs are kept).
  mutating func reset() {
    objects.removeAll()
    fields.removeAll()
    uidLists.removeAll()
    chains.removeAll()
    classes.removeAll()
    numbers.removeAll()
    textBytes = 0
    pass += 1
    objects.append(.null)
  }

  @inline(__always)
  mutating func id(_ constant: Constant) -> TextID { interner.id(constant) }

  @inline(__always)
  mutating func append(_ object: BuiltObject) -> UInt64 {
    UInt64(objects.append(object))
  }

  /// The slot of an instance, taken before its fields are laid out.
  @inline(__always)
  mutating func placeholder() -> UInt64 { append(.null) }

  /// Notes the bytes of a string or data value held inline.
  @inline(__always)
  mutating func noteInline(_ scalar: Scalar) { textBytes += scalar.text.count }

  mutating func string(_ id: TextID) -> UInt64 {
    if let uid = strings.value(id, pass: pass) { return UInt64(uid) }
    let text = interner.text(id)
    textBytes += text.count
    let uid = append(.scalar(.string(text, id)))
    strings.set(id, pass: pass, Int(uid))
    return uid
  }

  mutating func data(_ scalar: Scalar) -> UInt64 {
    textBytes += scalar.text.count
    return append(.scalar(scalar))
  }

  /// The UID of a number or boolean the builder shares by value, appended for the first.
  mutating func number(_ number: Scalar) -> UInt64 {
    // The same `PropertyListValue`: kind, width or storage, and value.
    let bits = number.comparedBits
    for position in 0..<numbers.count {
      let entry = numbers[position]
      if entry.comparedBits == bits, entry.kind == number.kind, entry.flag == number.flag {
        return entry.uid
      }
    }
    let uid = append(.scalar(number))
    numbers.append(
      NumberEntry(kind: number.kind, flag: number.flag, comparedBits: bits, uid: uid))
    return uid
  }

  mutating func fixedClass(_ chain: FixedChain) -> UInt64 {
    for position in 0..<classes.count where classes[position].fixed == chain.rawValue {
      return classes[position].uid
    }
    let start = chains.count
    switch chain {
    case .array: chains.append(id(.array))
    case .mutableArray:
      chains.append(id(.mutableArray))
      chains.append(id(.array))
    case .dictionary: chains.append(id(.dictionary))
    case .mutableDictionary:
      chains.append(id(.mutableDictionary))
      chains.append(id(.dictionary))
    case .url: chains.append(id(.url))
    }
    chains.append(id(.object))
    return appendClass(fixed: chain.rawValue, start: start)
  }

  /// The class object of a chain read from the archive (never one of the fixed chains, whose most
  /// derived names the builder models).
  mutating func plainClass(_ chain: UnsafeBufferPointer<TextID>) -> UInt64 {
    for position in 0..<classes.count {
      let entry = classes[position]
      guard entry.fixed < 0, entry.chainCount == chain.count else { continue }
      var same = true
      for index in 0..<chain.count where chains[entry.chainStart + index] != chain[index] {
        same = false
        break
      }
      if same { return entry.uid }
    }
    let start = chains.count
    for id in chain { chains.append(id) }
    return appendClass(fixed: -1, start: start)
  }

  private mutating func appendClass(fixed: Int8, start: Int) -> UInt64 {
    let count = chains.count - start
    let uid = append(
      BuiltObject(kind: .classObject, scalar: .boolean(false), start: start, count: count))
    classes.append(BuiltClass(fixed: fixed, chainStart: start, chainCount: count, uid: uid))
    return uid
  }

  /// `encode` of a value of the caller's: a plain string (its text in `arena`), number, boolean,
  /// data or null; nil for anything else.
  mutating func encodeOwned(_ value: ArchivedValue, _ arena: inout ByteArena) -> UInt64? {
    switch value {
    case .null: return 0
    case .string(let string, mutable: false):
      guard let text = arena.text(string) else { return nil }
      return self.string(interner.id(text))
    case .integer(let integer): return number(.integer(integer))
    case .real(let real): return number(.real(real))
    case .boolean(let flag): return number(.boolean(flag))
    case .data(let data, mutable: false):
      guard let bytes = arena.bytes(data) else { return nil }
      return self.data(.data(bytes))
    default: return nil
    }
  }
}

// MARK: - Reading the archive

/// What the writer makes of a class: Foundation's classes it models, those it leaves to the tree,
/// and the rest, archived by their chain.
private enum ClassCategory: UInt8 {
  case array, mutableArray, dictionary, mutableDictionary, string, url, refused, plain
  /// A class of no model whose chain is not all ASCII.
  case unwritable
}

/// A class object met in the archive read.
private struct InputClass: BitwiseCopyable {
  let uid: UInt64
  let category: ClassCategory
  /// The chain of a `.plain` class: `chainCount` IDs of `ReaderMemory.chains` from `chainStart`.
  let chainStart: Int
  let chainCount: Int
  /// The class object laid out for it, valid in the layout of pass `builtPass`.
  var builtUID: UInt64
  var builtPass: Int
}

/// The buffers of a `ViewReader`, kept in `WriterMemory`.
private struct ReaderMemory: ~Copyable {
  // Classes met so far, by class UID (an archive has a handful), and their chains: kept from one
  // object of an archive to the next, forgotten for the next archive.
  var classes = FlatBuffer<InputClass>(capacity: 8)
  var chains = FlatBuffer<TextID>(capacity: 16)
  var inProgress = FlatBuffer<UInt64>(capacity: 16)
}

/// `KeyedArchiveBuilder.encode(ArchiveDecoder.decode(uid))`, read from the view into a `Layout`.
private struct ViewReader: ~Copyable {
  // The view is kept for its bytes, which `table` and `bytes` point into.
  let view: KeyedArchiveView
  let table: BinaryObjects
  let bytes: UnsafeRawPointer
  let objectCount: UInt64
  private let memory: UnsafeMutablePointer<ReaderMemory>
  private var pass = 0
  // Objects known to decode, laid out as null: only for checking, whose layout is thrown away.
  private var known: [UInt64] = []
  private var maximumDepth = 64
  // Objects visited, at most `KeyedArchiveView.subArchiveVisits`.
  private var visits = 0

  init(view: KeyedArchiveView, _ memory: UnsafeMutablePointer<ReaderMemory>) {
    self.view = view
    table = view.table
    bytes = view.plist.rawBytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
    objectCount = UInt64(view.count)
    self.memory = memory
    memory.pointee.classes.removeAll()
    memory.pointee.chains.removeAll()
  }

  // Every method is `mutating`, even those that only read: a noncopyable value's non-mutating
  // method, called from a mutating one, is given a copy of the whole reader.

  /// Ready for the next object.
  mutating func start(maximumDepth: Int, known: [UInt64]) {
    self.maximumDepth = maximumDepth
    self.known = known
    visits = 0
    memory.pointee.inProgress.removeAll()
    pass += 1
  }

  /// The UID the builder gives the object `uid` names; nil to leave it to the tree.
  mutating func encode(_ uid: UInt64, _ layout: inout Layout) -> UInt64? {
    if uid == 0 || (!known.isEmpty && known.contains(uid)) { return 0 }
    visits += 1
    guard uid < objectCount, visits <= KeyedArchiveView.subArchiveVisits else { return nil }
    let object = view.object(uid)
    switch table.kind(object) {
    case .string:
      guard let id = stringID(object, &layout) else { return nil }
      return layout.string(id)
    case .integer, .real, .boolean:
      return layout.number(scalar(object))
    case .data:
      return layout.data(scalar(object))
    case .dictionary:
      guard let classUID = view.classUID(ofInstance: object), !isInProgress(uid),
        memory.pointee.inProgress.count < maximumDepth
      else { return nil }
      memory.pointee.inProgress.append(uid)
      defer { memory.pointee.inProgress.removeLast() }
      return instance(object, classUID: classUID, &layout)
    default:
      return nil
    }
  }

  /// Whether an object is being laid out (a reference to it is a cycle).
  mutating func isInProgress(_ uid: UInt64) -> Bool {
    let inProgress = memory.pointee.inProgress.base
    for position in 0..<memory.pointee.inProgress.count where inProgress[position] == uid {
      return true
    }
    return false
  }

  /// ASCII text of a string object; nil for any other object, or a UTF-16 string.
  @inline(__always)
  mutating func text(_ object: Int) -> Text? {
    guard let bytes = table.asciiBytes(object) else { return nil }
    return Text(bytes)
  }

  /// The text ID of an ASCII string object; nil for any other object, or a UTF-16 string.
  @inline(__always)
  mutating func stringID(_ object: Int, _ layout: inout Layout) -> TextID? {
    if let id = layout.interner.cachedID(object: object) { return id }
    guard let text = text(object) else { return nil }
    return layout.interner.id(object: object, text)
  }

  /// A number, boolean or data object.
  mutating func scalar(_ object: Int) -> Scalar {
    switch table.kind(object) {
    case .integer:
      // The widths archivers write, read in place (`table.integer` reads any width, and 16 bytes).
      let offset = table.offset(object)
      let value = bytes + offset + 1
      switch bytes.load(fromByteOffset: offset, as: UInt8.self) {
      case 0x10: return .integer(bits: UInt64(value.load(as: UInt8.self)))
      case 0x11:
        return .integer(bits: UInt64(UInt16(bigEndian: value.loadUnaligned(as: UInt16.self))))
      case 0x12:
        return .integer(bits: UInt64(UInt32(bigEndian: value.loadUnaligned(as: UInt32.self))))
      case 0x13: return .integer(bits: UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)))
      default: return .integer(table.integer(object))
      }
    case .real: return .real(table.real(object))
    case .boolean: return .boolean(table.boolean(object))
    default:
      let (count, start) = table.contents(object)
      return .data(Text(UnsafeRawBufferPointer(start: bytes + start, count: count)))
    }
  }

  /// The object naming a checked class object's most derived class: the first of `$classes` when
  /// not empty, else `$classname` (as `KeyedArchiveView.mostDerivedClassName` reads it).
  static func mostDerivedName(of classObject: Int, _ table: BinaryObjects) -> Int {
    if let classes = table.value(classObject, forKey: "$classes"), table.count(classes) > 0 {
      return table.element(classes, 0)
    }
    return table.value(classObject, forKey: "$classname") ?? classObject
  }

  /// The position in `memory.classes` of a checked class object, read the first time it is met.
  mutating func classEntry(_ classUID: UInt64, _ layout: inout Layout) -> Int {
    let classes = memory.pointee.classes.base
    for position in 0..<memory.pointee.classes.count where classes[position].uid == classUID {
      return position
    }
    let classObject = view.object(classUID)
    let name = Self.mostDerivedName(of: classObject, table)
    var category = Self.category(name, table)
    let chainStart = memory.pointee.chains.count
    if category == .plain {
      // `$classes` when not empty, else `$classname`, all ASCII.
      if let classes = table.value(classObject, forKey: "$classes"), table.count(classes) > 0 {
        for position in 0..<table.count(classes) {
          guard let id = stringID(table.element(classes, position), &layout) else {
            category = .unwritable
            break
          }
          memory.pointee.chains.append(id)
        }
      } else if let name = table.value(classObject, forKey: "$classname"),
        let id = stringID(name, &layout)
      {
        memory.pointee.chains.append(id)
      } else {
        category = .unwritable
      }
    }
    return memory.pointee.classes.append(
      InputClass(
        uid: classUID, category: category, chainStart: chainStart,
        chainCount: memory.pointee.chains.count - chainStart, builtUID: 0, builtPass: 0))
  }

  /// The category of a class by its most derived name, compared as `String`s compare.
  static func category(_ name: Int, _ table: BinaryObjects) -> ClassCategory {
    guard let bytes = table.asciiBytes(name) else {
      // A UTF-16 name may still equal one of these as a `String` (canonically): compared so.
      guard table.isKind(name, .string) else { return .unwritable }
      let string = table.string(name)
      for (candidate, category) in namedCategories where string == candidate.description {
        return category
      }
      return .plain
    }
    // Every name modelled starts `NS`: most classes are told apart by that.
    guard bytes.count > 2, bytes[0] == UInt8(ascii: "N"), bytes[1] == UInt8(ascii: "S") else {
      return .plain
    }
    for (candidate, category) in namedCategories
    where candidate.utf8CodeUnitCount == bytes.count
      && memcmp(candidate.utf8Start, bytes.baseAddress!, bytes.count) == 0
    {
      return category
    }
    return .plain
  }

  static let namedCategories: [(StaticString, ClassCategory)] = [
    ("NSArray", .array), ("NSMutableArray", .mutableArray), ("NSDictionary", .dictionary),
    ("NSMutableDictionary", .mutableDictionary), ("NSString", .string), ("NSURL", .url),
    ("NSMutableString", .refused), ("NSData", .refused), ("NSMutableData", .refused),
    ("NSDate", .refused), ("NSUUID", .refused), ("NSNull", .refused), ("NSSet", .refused),
    ("NSMutableSet", .refused),
  ]

  /// Whether every element of an array object is a UID.
  mutating func holdsOnlyUIDs(_ array: Int) -> Bool {
    let (count, start) = table.contents(array)
    for position in 0..<count where !table.isKind(table.reference(start, position), .uid) {
      return false
    }
    return true
  }

  /// An array field of UIDs (`NS.keys`, `NS.objects`), or nil when it is not one.
  mutating func uidArray(_ object: Int, _ key: StaticString) -> Int? {
    guard let array = table.value(object, forKey: key), table.isKind(array, .array),
      holdsOnlyUIDs(array)
    else { return nil }
    return array
  }

  /// The objects the UIDs of `array` name, encoded in order into `layout.uidLists` from `first`.
  mutating func encodeElements(_ array: Int, into first: Int, _ layout: inout Layout) -> Bool {
    let (count, start) = table.contents(array)
    for position in 0..<count {
      guard let encoded = encode(table.uid(table.reference(start, position)), &layout) else {
        return false
      }
      layout.uidLists[first + position] = encoded
    }
    return true
  }

  /// A field as `optionalReferenceOrInline` reads it, when it is an ASCII string: the object a UID
  /// names, or the value inline; its text ID.
  mutating func referencedOrInlineText(_ object: Int, _ key: StaticString, _ layout: inout Layout)
    -> TextID?
  {
    guard var value = table.value(object, forKey: key) else { return nil }
    if table.isKind(value, .uid) {
      let uid = table.uid(value)
      guard uid != 0, uid < objectCount else { return nil }
      value = view.object(uid)
    }
    return stringID(value, &layout)
  }

  /// `decodeInstance`, then the builder's `instance` for what it decodes to.
  mutating func instance(_ object: Int, classUID: UInt64, _ layout: inout Layout) -> UInt64? {
    let entry = classEntry(classUID, &layout)
    let category = memory.pointee.classes[entry].category
    switch category {
    case .array, .mutableArray:
      guard let elements = uidArray(object, "NS.objects") else { return nil }
      let uid = layout.placeholder()
      let count = table.count(elements)
      let start = layout.uidLists.reserve(count)
      guard encodeElements(elements, into: start, &layout) else { return nil }
      let classUID = layout.fixedClass(category == .mutableArray ? .mutableArray : .array)
      let fields = layout.fields.append(.uids(layout.id(.objects), start, count))
      layout.fields.append(.uid(layout.id(.classKey), classUID))
      layout.objects[Int(uid)] = .instance(fields, 2)
      return uid
    case .dictionary, .mutableDictionary:
      guard let keys = uidArray(object, "NS.keys"), let values = uidArray(object, "NS.objects"),
        table.count(keys) == table.count(values)
      else { return nil }
      let uid = layout.placeholder()
      let count = table.count(keys)
      let keyStart = layout.uidLists.reserve(count)
      let valueStart = layout.uidLists.reserve(count)
      // Every key, then every value, as NSDictionary encodes them.
      guard encodeElements(keys, into: keyStart, &layout),
        encodeElements(values, into: valueStart, &layout)
      else { return nil }
      let classUID = layout.fixedClass(
        category == .mutableDictionary ? .mutableDictionary : .dictionary)
      let fields = layout.fields.append(.uids(layout.id(.keys), keyStart, count))
      layout.fields.append(.uids(layout.id(.objects), valueStart, count))
      layout.fields.append(.uid(layout.id(.classKey), classUID))
      layout.objects[Int(uid)] = .instance(fields, 3)
      return uid
    case .string:
      // An immutable string instance decodes to the string, which the builder shares.
      guard let id = referencedOrInlineText(object, "NS.string", &layout) else { return nil }
      return layout.string(id)
    case .url:
      return url(object, &layout)
    case .refused, .unwritable:
      return nil
    case .plain:
      return plainInstance(object, classEntry: entry, &layout)
    }
  }

  mutating func url(_ object: Int, _ layout: inout Layout) -> UInt64? {
    guard let relative = referencedOrInlineText(object, "NS.relative", &layout) else {
      return nil
    }
    var baseUID: UInt64?
    if let base = table.value(object, forKey: "NS.base"), table.isKind(base, .uid),
      !view.isNull(table.uid(base))
    {
      // Decoding refuses a base that is not a URL, and UID 0 decodes to nil whatever object 0
      // is (a base of UID 0 naming anything but `$null` is refused).
      let uid = table.uid(base)
      guard uid != 0, uid < objectCount,
        let baseClass = view.classUID(ofInstance: view.object(uid)),
        memory.pointee.classes[classEntry(baseClass, &layout)].category == .url
      else { return nil }
      baseUID = uid
    }
    let uid = layout.placeholder()
    var encodedBase: UInt64 = 0
    if let baseUID {
      guard let encoded = encode(baseUID, &layout) else { return nil }
      encodedBase = encoded
    }
    let relativeUID = layout.string(relative)
    let classUID = layout.fixedClass(.url)
    let fields = layout.fields.append(.uid(layout.id(.base), encodedBase))
    layout.fields.append(.uid(layout.id(.classKey), classUID))
    layout.fields.append(.uid(layout.id(.relative), relativeUID))
    layout.objects[Int(uid)] = .instance(fields, 3)
    return uid
  }

  /// An instance of a class without a model of its own: its fields in order, `$class` last.
  mutating func plainInstance(_ object: Int, classEntry entry: Int, _ layout: inout Layout)
    -> UInt64?
  {
    let uid = layout.placeholder()
    let (count, start) = table.contents(object)
    // The fields' room, taken before the objects they reference lay out theirs: every key but
    // `$class`, then `$class`.
    let fields = layout.fields.reserve(count + 1)
    var laidOut = 0
    let classKey = layout.id(.classKey)
    for position in 0..<count {
      guard let key = stringID(table.reference(start, position), &layout) else { return nil }
      if key == classKey { continue }
      let keyText = layout.interner.text(key)
      // Fields the flattener would take for a class object's: left to the tree.
      if keyText.count >= 8, keyText.start.load(as: UInt8.self) == UInt8(ascii: "$"),
        keyText == Text("$classname") || keyText == Text("$classes")
      {
        return nil
      }
      let value = table.reference(start, count + position)
      let field: BuiltField
      switch table.kind(value) {
      case .uid:
        guard let encoded = encode(table.uid(value), &layout) else { return nil }
        field = .uid(key, encoded)
      case .array:
        let elements = table.count(value)
        if elements == 0 {
          field = .emptyArray(key)
        } else {
          // An array holding anything but UIDs is a value inline, which this writer leaves.
          guard holdsOnlyUIDs(value) else { return nil }
          let first = layout.uidLists.reserve(elements)
          guard encodeElements(value, into: first, &layout) else { return nil }
          field = .uids(key, first, elements)
        }
      case .integer, .real, .boolean, .data:
        let scalar = scalar(value)
        layout.noteInline(scalar)
        field = .inline(key, scalar)
      case .string:
        guard let id = stringID(value, &layout) else { return nil }
        let scalar = Scalar.string(layout.interner.text(id), id)
        layout.noteInline(scalar)
        field = .inline(key, scalar)
      default:
        return nil
      }
      layout.fields[fields + laidOut] = field
      laidOut += 1
    }
    let input = memory.pointee.classes[entry]
    guard input.category == .plain, input.chainCount > 0 else { return nil }
    let classUID: UInt64
    if input.builtPass == pass {
      classUID = input.builtUID
    } else {
      classUID = layout.plainClass(
        UnsafeBufferPointer(
          start: memory.pointee.chains.base + input.chainStart, count: input.chainCount))
      memory.pointee.classes[entry].builtUID = classUID
      memory.pointee.classes[entry].builtPass = pass
    }
    layout.fields[fields + laidOut] = .uid(classKey, classUID)
    layout.objects[Int(uid)] = .instance(fields, laidOut + 1)
    return uid
  }
}

// MARK: - Flattening and writing

/// `ArchiverFlattener.table(for:)` of the envelope around the laid-out objects, written as the
/// binary writer writes it while it is flattened.
///
/// The flattener's order is the writer's: each object is written when it gets its index, a
/// container with room for its references, which are filled in as its contents get theirs.
private struct Flattener: ~Copyable {
  // The bytes, in a block of `ReusableBlocks` (handed to `Data` when done), and where the next
  // object goes.
  private var out: UnsafeMutableRawPointer?
  private var capacity = 0
  private var at = 0
  // Where each object starts, by index.
  private var offsets = FlatBuffer<Int>(capacity: 160)
  // The width of references in this pass: 1 at first, wider when the objects turn out to need it
  // (the references that did not fit are then written again).
  private var referenceSize = 1
  // The first index of each text as a key, and as a value, in this pass.
  private var keys = IDTable()
  private var values = IDTable()
  private var pass = 0
  private struct NumberEntry: BitwiseCopyable {
    let number: Scalar
    let index: Int
  }
  // Numbers by `ArchiverFlattener`'s rules: the first object's index.
  private var numbers = FlatBuffer<NumberEntry>(capacity: 16)
  // By UID (each below the number of laid-out objects): the first slot, or -1.
  private var uidSlots = FlatBuffer<Int>(capacity: 64)
  private var firstTrue = -1
  private var firstFalse = -1
  // What the one-pass scan of the bytes would find, counted as they are written (see
  // `WrittenPlistFacts`): the contents of each string, data and container, the references, the
  // largest UID plus one (0 for none), the longest string or data, and whether every dictionary
  // is plain. A dictionary is plain when it has at most 64 entries whose keys are ASCII and
  // distinct: every text written is ASCII, and an object's keys are those of the plain dictionary
  // it was read from (`ViewReader` reads only views whose dictionaries are plain, and lays out
  // `$class` once), or the builder's own distinct constants. (Only `archivedAsRootWithView` hands
  // these on: `encodedDictionary`'s root has its caller's keys, and is never read this way.)
  private var contents = FlatBuffer<WrittenContents>(capacity: 160)
  private var references = 0
  private var uidCeiling: UInt64 = 0
  private var longestValue = 0
  private var dictionariesArePlain = true

  deinit { if let out { ReusableBlocks.give(out) } }

  /// What the one-pass scan would find in the bytes `encoded` returned last; valid until the
  /// flattener is used again.
  var writtenFacts: WrittenPlistFacts {
    WrittenPlistFacts(
      contents: UnsafeBufferPointer(start: contents.base, count: contents.count),
      dictionariesArePlain: dictionariesArePlain,
      maximumUID: uidCeiling == 0 ? nil : uidCeiling - 1,
      // The envelope, `$objects`, an object, and an array in an object's field.
      depth: 4, visits: 1 &+ references, longestValue: longestValue)
  }

  /// The archive's bytes: the envelope NSKeyedArchiver writes, `$objects` the laid-out objects.
  mutating func encoded(_ layout: inout Layout, rootUID: UInt64, rootKey: Constant) -> Data {
    flatten(&layout, rootUID: rootUID, rootKey: rootKey, referenceSize: 1)
    let referenceSize = Self.byteCount(UInt64(offsets.count))
    if referenceSize != 1 {
      // More than 255 objects: flattened again with references as wide as their count needs
      // (the same objects, in the same order).
      flatten(&layout, rootUID: rootUID, rootKey: rootKey, referenceSize: referenceSize)
    }
    return finish()
  }

  private mutating func flatten(
    _ layout: inout Layout, rootUID: UInt64, rootKey: Constant, referenceSize: Int
  ) {
    pass += 1
    self.referenceSize = referenceSize
    offsets.removeAll()
    contents.removeAll()
    references = 0
    uidCeiling = 0
    longestValue = 0
    dictionariesArePlain = true
    numbers.removeAll()
    uidSlots.removeAll()
    uidSlots.append(repeating: -1, count: layout.objects.count)
    firstTrue = -1
    firstFalse = -1
    // Room for the usual archive: its strings and data, and a few bytes for each object and
    // reference.
    if let out { ReusableBlocks.give(out) }
    capacity = 256 + layout.textBytes + 48 * (layout.objects.count + layout.fields.count)
    out = ReusableBlocks.take(capacity)!
    // `bplist00`.
    Self.store(0x6270_6C69_7374_3030, 8, out!)
    at = 8

    let envelope = container(0xD0, 4)
    setReference(envelope, 0, constant(layout.id(.version), isKey: true, &layout))
    setReference(envelope, 1, constant(layout.id(.objectsArray), isKey: true, &layout))
    setReference(envelope, 2, constant(layout.id(.archiver), isKey: true, &layout))
    setReference(envelope, 3, constant(layout.id(.top), isKey: true, &layout))
    // 100000, as the only number so far.
    setReference(envelope, 4, number(.integer(bits: 100_000)))
    let array = container(0xA0, layout.objects.count)
    for position in 0..<layout.objects.count {
      setReference(array, position, object(layout.objects[position], &layout))
    }
    setReference(envelope, 5, array.index)
    setReference(envelope, 6, constant(layout.id(.keyedArchiver), isKey: false, &layout))
    let top = container(0xD0, 1)
    setReference(top, 0, constant(layout.id(rootKey), isKey: true, &layout))
    setReference(top, 1, uid(rootUID))
    setReference(envelope, 7, top.index)
  }

  /// An element of `$objects`.
  private mutating func object(_ object: BuiltObject, _ layout: inout Layout) -> Int {
    switch object.kind {
    case .null: return string(Constant.null.text)
    case .scalar: return scalar(object.scalar)
    case .instance:
      let dictionary = container(0xD0, object.count)
      if object.count > BinaryPropertyListView.plainDictionaryLimit {
        dictionariesArePlain = false
      }
      for position in 0..<object.count {
        setReference(
          dictionary, position,
          constant(layout.fields[object.start + position].key, isKey: true, &layout))
      }
      for position in 0..<object.count {
        setReference(
          dictionary, object.count + position,
          value(layout.fields[object.start + position], &layout)
        )
      }
      return dictionary.index
    case .classObject:
      let dictionary = container(0xD0, 2)
      setReference(dictionary, 0, constant(layout.id(.className), isKey: true, &layout))
      setReference(dictionary, 1, constant(layout.id(.classes), isKey: true, &layout))
      let name = layout.chains[object.start]
      let nameText = layout.interner.text(name)
      // A class object's name is an object of its own unless Apple shares it with `$classes`.
      setReference(
        dictionary, 2,
        Self.isSharedClassName(nameText)
          ? constant(name, isKey: false, &layout) : string(nameText))
      let chain = container(0xA0, object.count)
      for position in 0..<object.count {
        setReference(
          chain, position, constant(layout.chains[object.start + position], isKey: false, &layout))
      }
      setReference(dictionary, 3, chain.index)
      return dictionary.index
    }
  }

  /// A field's value.
  @inline(__always)
  private mutating func value(_ field: BuiltField, _ layout: inout Layout) -> Int {
    switch field.kind {
    case .uid: return uid(field.value)
    case .uids:
      let array = container(0xA0, field.count)
      let first = Int(field.value)
      for position in 0..<field.count {
        setReference(array, position, uid(layout.uidLists[first + position]))
      }
      return array.index
    case .emptyArray: return container(0xA0, 0).index
    case .inline:
      if field.scalar.kind == .string { return constant(field.scalar.id, isKey: false, &layout) }
      return scalar(field.scalar)
    }
  }

  /// A string, data, number or boolean: strings and data objects of their own, numbers shared by
  /// value, booleans a slot for each and references to the first of their value.
  @inline(__always)
  private mutating func scalar(_ scalar: Scalar) -> Int {
    switch scalar.kind {
    case .string: return bytes(0x50, scalar.text)
    case .data: return bytes(0x40, scalar.text)
    case .integer, .real: return number(scalar)
    case .boolean: return boolean(scalar.bits != 0)
    }
  }

  /// A string or data object of its own: its marker and its bytes.
  @inline(__always)
  private mutating func bytes(_ marker: UInt8, _ text: Text) -> Int {
    let count = text.count
    // Room for the longest marker, with its count.
    let index = begin(count &+ 10)
    let out = self.out.unsafelyUnwrapped
    if count < 15 {
      out.storeBytes(
        of: marker | UInt8(truncatingIfNeeded: count), toByteOffset: at, as: UInt8.self)
      at &+= 1
    } else {
      writeMarker(marker, count)
    }
    contents.append(WrittenContents(object: index, start: at, count: count))
    if count > longestValue { longestValue = count }
    Self.copy(text.start, to: out + at, count)
    at &+= count
    return index
  }

  /// `count` bytes: short runs (keys, names, header fields) by words in place, where calling
  /// `memcpy` cost more than the copy.
  @inline(__always)
  private static func copy(
    _ source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, _ count: Int
  ) {
    guard count <= 64 else {
      destination.copyMemory(from: source, byteCount: count)
      return
    }
    guard count >= 8 else {
      for position in 0..<count {
        destination.storeBytes(
          of: source.load(fromByteOffset: position, as: UInt8.self), toByteOffset: position,
          as: UInt8.self)
      }
      return
    }
    var position = 0
    while position &+ 8 <= count {
      destination.storeBytes(
        of: source.loadUnaligned(fromByteOffset: position, as: UInt64.self),
        toByteOffset: position, as: UInt64.self)
      position &+= 8
    }
    // The last bytes as the last eight, overlapping what is copied already.
    if position < count {
      destination.storeBytes(
        of: source.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self),
        toByteOffset: count &- 8, as: UInt64.self)
    }
  }

  /// A boolean: a slot for each, references to the first of its value.
  @inline(__always)
  private mutating func boolean(_ flag: Bool) -> Int {
    let index = begin(1)
    put(flag ? 0x09 : 0x08)
    if flag {
      if firstTrue < 0 { firstTrue = index }
      return firstTrue
    }
    if firstFalse < 0 { firstFalse = index }
    return firstFalse
  }

  /// A string object of its own.
  @inline(__always)
  private mutating func string(_ text: Text) -> Int {
    bytes(0x50, text)
  }

  static func isSharedClassName(_ name: Text) -> Bool {
    ArchiverFlattener.sharedClassNameTexts.contains { name == Text($0) }
  }

  @inline(__always)
  private mutating func constant(_ id: TextID, isKey: Bool, _ layout: inout Layout) -> Int {
    if let found = isKey ? keys.value(id, pass: pass) : values.value(id, pass: pass) {
      return found
    }
    let index = string(layout.interner.text(id))
    if isKey { keys.set(id, pass: pass, index) } else { values.set(id, pass: pass, index) }
    return index
  }

  @inline(__always)
  private mutating func uid(_ value: UInt64) -> Int {
    // Every occurrence takes a slot; references resolve to the first.
    let index = begin(9)
    if value <= 0xFF {
      self.out.unsafelyUnwrapped.storeBytes(
        of: (0x80 | UInt16(value) << 8).littleEndian, toByteOffset: at, as: UInt16.self)
      at &+= 2
    } else {
      let size = Self.byteCount(value)
      put(0x80 | UInt8(size - 1))
      putSized(value, size)
    }
    if value >= uidCeiling { uidCeiling = value &+ 1 }
    let first = uidSlots[Int(value)]
    if first >= 0 { return first }
    uidSlots[Int(value)] = index
    return index
  }

  private mutating func number(_ number: Scalar) -> Int {
    for position in 0..<numbers.count where numbers[position].number.isSameNumber(number) {
      return numbers[position].index
    }
    let index: Int
    if number.kind == .integer {
      if number.flag {
        index = begin(17)
        put(0x14)
        putSized(0, 8)
        putSized(number.bits, 8)
      } else {
        index = begin(1 + Self.byteCount(number.bits))
        writeInteger(number.bits)
      }
    } else if number.flag {
      index = begin(5)
      put(0x22)
      putSized(UInt64(Float(Double(bitPattern: number.bits)).bitPattern), 4)
    } else {
      index = begin(9)
      put(0x23)
      putSized(number.bits, 8)
    }
    numbers.append(NumberEntry(number: number, index: index))
    return index
  }

  // MARK: Writing

  /// A container object of `count` entries (elements, or keys and values), with room for its
  /// references: its index, and where the references go.
  private mutating func container(_ marker: UInt8, _ count: Int) -> (index: Int, start: Int) {
    let references = marker == 0xD0 ? 2 * count : count
    let index = begin(10 + references * referenceSize)
    if count < 15 {
      put(marker | UInt8(count))
    } else {
      writeMarker(marker, count)
    }
    let start = at
    at &+= references &* referenceSize
    contents.append(WrittenContents(object: index, start: start, count: count))
    self.references &+= references
    return (index, start)
  }

  /// A container's reference at `position`.
  @inline(__always)
  private mutating func setReference(
    _ container: (index: Int, start: Int), _ position: Int, _ index: Int
  ) {
    let address = self.out.unsafelyUnwrapped + (container.start &+ position &* referenceSize)
    if referenceSize == 1 {
      address.storeBytes(of: UInt8(truncatingIfNeeded: index), as: UInt8.self)
    } else {
      Self.store(UInt64(index), referenceSize, address)
    }
  }

  /// The next object's index, with room for its `size` bytes.
  @inline(__always)
  private mutating func begin(_ size: Int) -> Int {
    if capacity &- at < size { grow(size) }
    return offsets.append(at)
  }

  private mutating func grow(_ size: Int) {
    capacity = max(capacity * 2, at + size + 64)
    out = ReusableBlocks.resize(out.unsafelyUnwrapped, keeping: at, to: capacity)!
  }

  @inline(__always)
  private mutating func put(_ byte: UInt8) {
    out.unsafelyUnwrapped.storeBytes(of: byte, toByteOffset: at, as: UInt8.self)
    at &+= 1
  }

  @inline(__always)
  private mutating func putSized(_ value: UInt64, _ size: Int) {
    Self.store(value, size, out.unsafelyUnwrapped + at)
    at &+= size
  }

  /// An integer object of the fewest bytes that hold `bits`.
  private mutating func writeInteger(_ bits: UInt64) {
    let size = Self.byteCount(bits)
    put(0x10 | UInt8(size.trailingZeroBitCount))
    putSized(bits, size)
  }

  /// A marker with its count, the count as an integer object after it from 15 on.
  private mutating func writeMarker(_ marker: UInt8, _ count: Int) {
    if count < 15 {
      put(marker | UInt8(count))
    } else {
      put(marker | 0x0F)
      writeInteger(UInt64(count))
    }
  }

  /// The offset table and the trailer after the objects; the bytes.
  private mutating func finish() -> Data {
    let count = offsets.count
    let tableOffset = at
    let offsetSize = Self.byteCount(UInt64(tableOffset))
    if capacity - at < count * offsetSize + 32 { grow(count * offsetSize + 32) }
    let table = out! + tableOffset
    switch offsetSize {
    case 1:
      for position in 0..<count {
        table.storeBytes(
          of: UInt8(truncatingIfNeeded: offsets.base[position]), toByteOffset: position,
          as: UInt8.self)
      }
    case 2:
      for position in 0..<count {
        table.storeBytes(
          of: UInt16(truncatingIfNeeded: offsets.base[position]).bigEndian,
          toByteOffset: 2 * position, as: UInt16.self)
      }
    default:
      for position in 0..<count {
        Self.store(UInt64(offsets.base[position]), offsetSize, table + offsetSize * position)
      }
    }
    at += count * offsetSize
    let trailer = out! + at
    trailer.initializeMemory(as: UInt8.self, repeating: 0, count: 6)
    trailer.storeBytes(of: UInt8(offsetSize), toByteOffset: 6, as: UInt8.self)
    trailer.storeBytes(of: UInt8(referenceSize), toByteOffset: 7, as: UInt8.self)
    Self.store(UInt64(count), 8, trailer + 8)
    Self.store(0, 8, trailer + 16)
    Self.store(UInt64(tableOffset), 8, trailer + 24)
    at += 32
    let data = ReusableBlocks.data(adopting: out!, count: at)
    out = nil
    capacity = 0
    return data
  }

  /// The fewest of 1, 2, 4 or 8 bytes that hold `value` (a count, an offset, a UID).
  @inline(__always)
  static func byteCount(_ value: UInt64) -> Int {
    value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
  }

  /// `size` (1, 2, 4 or 8) big-endian bytes of `value` at `address`.
  @inline(__always)
  static func store(_ value: UInt64, _ size: Int, _ address: UnsafeMutableRawPointer) {
    switch size {
    case 1: address.storeBytes(of: UInt8(truncatingIfNeeded: value), as: UInt8.self)
    case 2:
      address.storeBytes(of: UInt16(truncatingIfNeeded: value).bigEndian, as: UInt16.self)
    case 4:
      address.storeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian, as: UInt32.self)
    default: address.storeBytes(of: value.bigEndian, as: UInt64.self)
    }
  }
}
