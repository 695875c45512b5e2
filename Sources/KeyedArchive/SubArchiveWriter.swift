import Foundation
@_spi(InPlace) @_spi(Writing) import PropertyList

// Archiving one object of an archive as the root of an archive of its own (a Network.framework
// blob's requests and response, which CFNetwork's blobs keep as archives apart) decodes the object
// to a value tree, has `KeyedArchiveBuilder` lay it out as NSKeyedArchiver would, and has
// `ArchiverFlattener` and the binary writer write that. For the shapes requests and responses are
// made of, this file does the same straight from the bytes of the archive read in place: the
// builder's layout and the flattener's sharing, step for step, and the writer's bytes. Anything
// else (dates, sets, UUIDs, NSNull, non-ASCII strings, containers held inline, cycles) is left to
// the tree: the writer returns nil.

extension KeyedArchiveView {
  /// `KeyedArchive(root: decodeValue(uid)).encoded()` of this archive, written from its bytes;
  /// nil when the object holds anything the writer does not follow, or when decoding it would fail.
  package func archivedAsRoot(_ uid: UInt64, maximumDepth: Int = 64) -> Data? {
    var builder = SubArchiveBuilder(view: self, maximumDepth: maximumDepth)
    guard let root = builder.encode(uid) else { return nil }
    var flattener = SubArchiveFlattener(objects: builder.objects, view: self)
    return flattener.encoded(rootUID: root, rootKey: "NSKeyedArchiveRootObjectKey")
  }

  /// Whether `archivedAsRoot(uid)` would write the object, found without writing it: then
  /// `decodeValue(uid)` succeeds too, under limits of at least 256 levels and 100,000 visits.
  ///
  /// - Parameter written: objects that `archivedAsRoot` has written on their own, which are then
  ///   known to decode and are not followed again.
  package func decodesFromBytes(
    _ uid: UInt64, written: [UInt64] = [], maximumDepth: Int = 64
  ) -> Bool {
    var builder = SubArchiveBuilder(view: self, maximumDepth: maximumDepth)
    builder.known = written
    return builder.encode(uid) != nil
  }
}

extension KeyedArchive {
  /// `KeyedArchive(root: .dictionary(pairs, mutable: mutable), rootKey: rootKey).encoded(as:
  /// .binary)`, written straight, for a dictionary of ASCII string keys and plain values (ASCII
  /// strings, numbers, booleans, data, null), as a resume blob's root is; nil for anything else.
  package static func encodedDictionary(
    _ pairs: [ArchivedDictionaryEntry], mutable: Bool, rootKey: String
  ) -> Data? {
    let rootKeyText: StaticString
    switch rootKey {
    case "NSKeyedArchiveRootObjectKey": rootKeyText = "NSKeyedArchiveRootObjectKey"
    case "root": rootKeyText = "root"
    default: return nil
    }
    var texts = TextArena(pairs)
    defer { texts.free() }
    var builder = SubArchiveBuilder()
    let uid = builder.append(.null)
    var keys: [UInt64] = []
    var values: [UInt64] = []
    keys.reserveCapacity(pairs.count)
    values.reserveCapacity(pairs.count)
    // Every key, then every value, as NSDictionary encodes them.
    for pair in pairs {
      guard case .string = pair.key, let key = builder.encodeOwned(pair.key, &texts) else {
        return nil
      }
      keys.append(key)
    }
    for pair in pairs {
      guard let value = builder.encodeOwned(pair.value, &texts) else { return nil }
      values.append(value)
    }
    let chains = SubArchiveBuilder.dictionaryChains
    let classUID = builder.classObject(mutable ? chains.mutable : chains.plain)
    builder.objects[Int(uid)] = .dictionary([
      (Text("NS.keys"), .uids(keys)), (Text("NS.objects"), .uids(values)),
      (Text("$class"), .uid(classUID)),
    ])
    var flattener = SubArchiveFlattener(objects: builder.objects, view: nil)
    return flattener.encoded(rootUID: uid, rootKey: rootKeyText)
  }
}

/// The ASCII text of a dictionary's strings, copied into one block that stays put while the
/// archive is written (`Text` points into it).
private struct TextArena {
  private let block: UnsafeMutableRawBufferPointer
  private var used = 0

  init(_ pairs: [ArchivedDictionaryEntry]) {
    var total = 0
    for pair in pairs {
      for case .string(let string, _) in [pair.key, pair.value] { total += string.utf8.count }
    }
    block = .allocate(byteCount: max(total, 1), alignment: 1)
  }

  func free() { block.deallocate() }

  /// The string's text in the block; nil when it is not ASCII (or would not fit).
  mutating func text(_ string: String) -> Text? {
    var string = string
    return string.withUTF8 { utf8 -> Text? in
      guard utf8.allSatisfy({ $0 < 0x80 }), used + utf8.count <= block.count else { return nil }
      let start = block.baseAddress! + used
      if let base = utf8.baseAddress { start.copyMemory(from: base, byteCount: utf8.count) }
      used += utf8.count
      return Text(UnsafeRawBufferPointer(start: start, count: utf8.count))
    }
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
    for uid in 1..<UInt64(max(1, min(view.count, limit))) {
      if let bytes = view.archivedAsRoot(uid) { archives[uid] = bytes }
    }
    return archives
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

/// ASCII text: bytes of the archive read in place, or of a constant.
// Sendable: it only ever points at constants (the static tables) or at a view's bytes, which
// nothing writes.
private struct Text: @unchecked Sendable {
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

  static func == (lhs: Text, rhs: Text) -> Bool {
    lhs.count == rhs.count && (lhs.count == 0 || memcmp(lhs.start, rhs.start, lhs.count) == 0)
  }

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

/// A value of a laid-out object: what `KeyedArchiveBuilder` puts in an instance or class object.
private enum BuiltValue {
  case uid(UInt64)
  case uids([UInt64])
  /// A plain value copied from the input (a number, a string, data, or an empty array).
  case inline(Int)
  case text(Text)
  case texts([Text])
}

/// An object as `KeyedArchiveBuilder` lays it out in `$objects`.
private enum BuiltObject {
  case null
  case string(Text)
  /// A number, boolean or data object of the input.
  case scalar(Int)
  /// A number, boolean or data value of the caller's.
  case value(PropertyListValue)
  case dictionary([(key: Text, value: BuiltValue)])
}

/// `KeyedArchiveBuilder.encode(ArchiveDecoder.decode(uid))`, read from the view.
private struct SubArchiveBuilder {
  // Absent only for a dictionary of the caller's values (`init()`), which never reads them.
  let view: KeyedArchiveView!
  let table: BinaryObjects!
  let maximumDepth: Int
  var objects: [BuiltObject] = [.null]
  // The builder's sharing: strings by their characters, numbers by value, classes by chain.
  var strings: [(text: Text, uid: UInt64)] = []
  var numbers: [(value: PropertyListValue, uid: UInt64)] = []
  var classes: [(chain: [Text], uid: UInt64)] = []
  var inProgress: [UInt64] = []
  // Objects known to decode, laid out as null: only for checking, whose layout is thrown away.
  var known: [UInt64] = []
  // Objects visited: decoding expands a shared object at each reference, as this does, so an
  // archive of objects shared over and over could make the work grow exponentially.
  var visits = 0
  static let maximumVisits = 10_000

  init(view: KeyedArchiveView, maximumDepth: Int) {
    self.view = view
    table = view.table
    self.maximumDepth = maximumDepth
    objects.reserveCapacity(64)
    strings.reserveCapacity(32)
  }

  /// A builder for the caller's values.
  init() {
    view = nil
    table = nil
    maximumDepth = 1
    objects.reserveCapacity(32)
    strings.reserveCapacity(16)
  }

  /// The UID of a number the builder shares by value, appending `object` for the first.
  mutating func number(_ value: PropertyListValue, _ object: BuiltObject) -> UInt64 {
    for entry in numbers where entry.value == value { return entry.uid }
    let uid = append(object)
    numbers.append((value, uid))
    return uid
  }

  /// `encode` of a value of the caller's: a plain string (its text in `texts`), number, boolean,
  /// data or null; nil for anything else.
  mutating func encodeOwned(_ value: ArchivedValue, _ texts: inout TextArena) -> UInt64? {
    switch value {
    case .null: return 0
    case .string(let string, mutable: false):
      return texts.text(string).map { self.string($0) }
    case .integer(let integer): return number(.integer(integer), .value(.integer(integer)))
    case .real(let real): return number(.real(real), .value(.real(real)))
    case .boolean(let flag): return number(.boolean(flag), .value(.boolean(flag)))
    case .data(let data, mutable: false): return append(.value(.data(data)))
    default: return nil
    }
  }

  mutating func append(_ object: BuiltObject) -> UInt64 {
    objects.append(object)
    return UInt64(objects.count - 1)
  }

  /// ASCII text of a string object; nil for any other object, or a UTF-16 string.
  func text(_ object: Int) -> Text? {
    guard table.isKind(object, .string), let bytes = table.asciiBytes(object) else { return nil }
    return Text(bytes)
  }

  mutating func string(_ text: Text) -> UInt64 {
    for entry in strings where entry.text == text { return entry.uid }
    let uid = append(.string(text))
    strings.append((text, uid))
    return uid
  }

  /// The UID the builder gives the object `uid` names; nil to leave it to the tree.
  mutating func encode(_ uid: UInt64) -> UInt64? {
    if uid == 0 || known.contains(uid) { return 0 }
    visits += 1
    guard uid < UInt64(view.count), visits <= Self.maximumVisits else { return nil }
    let object = view.object(uid)
    switch table.kind(object) {
    case .string:
      return text(object).map { string($0) }
    case .integer, .real, .boolean:
      let value: PropertyListValue =
        switch table.kind(object) {
        case .integer: .integer(table.integer(object))
        case .real: .real(table.real(object))
        default: .boolean(table.boolean(object))
        }
      return number(value, .scalar(object))
    case .data:
      return append(.scalar(object))
    case .dictionary:
      guard let classUID = view.classUID(ofInstance: object), !inProgress.contains(uid),
        inProgress.count < maximumDepth
      else { return nil }
      inProgress.append(uid)
      defer { inProgress.removeLast() }
      return instance(object, classUID: classUID)
    default:
      return nil
    }
  }

  /// The class chain (`$classes`, else `$classname`) of a class object, as text.
  func chain(_ classUID: UInt64) -> [Text]? {
    let classObject = view.object(classUID)
    if let classes = table.value(classObject, forKey: "$classes"), table.count(classes) > 0 {
      var chain: [Text] = []
      chain.reserveCapacity(table.count(classes))
      for position in 0..<table.count(classes) {
        guard let name = text(table.element(classes, position)) else { return nil }
        chain.append(name)
      }
      return chain
    }
    guard let name = table.value(classObject, forKey: "$classname").flatMap(text) else {
      return nil
    }
    return [name]
  }

  mutating func classObject(_ chain: [Text]) -> UInt64 {
    for entry in classes
    where entry.chain.count == chain.count && zip(entry.chain, chain).allSatisfy({ $0 == $1 }) {
      return entry.uid
    }
    let uid = append(
      .dictionary([(Text("$classname"), .text(chain[0])), (Text("$classes"), .texts(chain))]))
    classes.append((chain, uid))
    return uid
  }

  /// The UIDs of an array field of UIDs (`NS.keys`, `NS.objects`), unencoded; nil when it is not
  /// one.
  func uidArray(_ object: Int, _ key: StaticString) -> [UInt64]? {
    guard let array = table.value(object, forKey: key), table.isKind(array, .array) else {
      return nil
    }
    var uids: [UInt64] = []
    uids.reserveCapacity(table.count(array))
    for position in 0..<table.count(array) {
      let element = table.element(array, position)
      guard table.isKind(element, .uid) else { return nil }
      uids.append(table.uid(element))
    }
    return uids
  }

  mutating func encodeAll(_ uids: [UInt64]) -> [UInt64]? {
    var encoded: [UInt64] = []
    encoded.reserveCapacity(uids.count)
    for uid in uids {
      guard let new = encode(uid) else { return nil }
      encoded.append(new)
    }
    return encoded
  }

  /// A field as `optionalReferenceOrInline` reads it, when it is a string: the object a UID names,
  /// or the value inline.
  func referencedOrInlineText(_ object: Int, _ key: StaticString) -> Text? {
    guard var value = table.value(object, forKey: key) else { return nil }
    if table.isKind(value, .uid) {
      let uid = table.uid(value)
      guard uid != 0, uid < UInt64(view.count) else { return nil }
      value = view.object(uid)
    }
    return text(value)
  }

  static let arrayChains: (plain: [Text], mutable: [Text]) = (
    [Text("NSArray"), Text("NSObject")],
    [Text("NSMutableArray"), Text("NSArray"), Text("NSObject")]
  )
  static let dictionaryChains: (plain: [Text], mutable: [Text]) = (
    [Text("NSDictionary"), Text("NSObject")],
    [Text("NSMutableDictionary"), Text("NSDictionary"), Text("NSObject")]
  )

  /// `decodeInstance`, then the builder's `instance` for what it decodes to.
  mutating func instance(_ object: Int, classUID: UInt64) -> UInt64? {
    let className = view.mostDerivedClassName(classUID)
    switch className {
    case "NSArray", "NSMutableArray":
      guard let elements = uidArray(object, "NS.objects") else { return nil }
      let uid = append(.null)
      guard let encoded = encodeAll(elements) else { return nil }
      let chains = Self.arrayChains
      let classUID = classObject(className == "NSMutableArray" ? chains.mutable : chains.plain)
      objects[Int(uid)] = .dictionary([
        (Text("NS.objects"), .uids(encoded)), (Text("$class"), .uid(classUID)),
      ])
      return uid
    case "NSDictionary", "NSMutableDictionary":
      guard let keys = uidArray(object, "NS.keys"), let values = uidArray(object, "NS.objects"),
        keys.count == values.count
      else { return nil }
      let uid = append(.null)
      // Every key, then every value, as NSDictionary encodes them.
      guard let encodedKeys = encodeAll(keys), let encodedValues = encodeAll(values) else {
        return nil
      }
      let chains = Self.dictionaryChains
      let classUID = classObject(
        className == "NSMutableDictionary" ? chains.mutable : chains.plain)
      objects[Int(uid)] = .dictionary([
        (Text("NS.keys"), .uids(encodedKeys)), (Text("NS.objects"), .uids(encodedValues)),
        (Text("$class"), .uid(classUID)),
      ])
      return uid
    case "NSString":
      // An immutable string instance decodes to the string, which the builder shares.
      return referencedOrInlineText(object, "NS.string").map { string($0) }
    case "NSURL":
      guard let relative = referencedOrInlineText(object, "NS.relative") else { return nil }
      var baseUID: UInt64?
      if let base = table.value(object, forKey: "NS.base"), table.isKind(base, .uid),
        !view.isNull(table.uid(base))
      {
        // Decoding refuses a base that is not a URL, and UID 0 decodes to nil whatever object 0
        // is (a base of UID 0 naming anything but `$null` is refused).
        let uid = table.uid(base)
        guard uid != 0, uid < UInt64(view.count),
          let baseClass = view.classUID(ofInstance: view.object(uid)),
          view.mostDerivedClassIs(baseClass, "NSURL")
        else { return nil }
        baseUID = uid
      }
      let uid = append(.null)
      var encodedBase: UInt64 = 0
      if let baseUID {
        guard let encoded = encode(baseUID) else { return nil }
        encodedBase = encoded
      }
      let relativeUID = string(relative)
      let classUID = classObject([Text("NSURL"), Text("NSObject")])
      objects[Int(uid)] = .dictionary([
        (Text("NS.base"), .uid(encodedBase)), (Text("$class"), .uid(classUID)),
        (Text("NS.relative"), .uid(relativeUID)),
      ])
      return uid
    case "NSMutableString", "NSData", "NSMutableData", "NSDate", "NSUUID", "NSNull", "NSSet",
      "NSMutableSet":
      return nil
    default:
      return plainInstance(object, classUID: classUID)
    }
  }

  /// An instance of a class without a model of its own: its fields in order, `$class` last.
  mutating func plainInstance(_ object: Int, classUID: UInt64) -> UInt64? {
    guard let chain = chain(classUID) else { return nil }
    let uid = append(.null)
    let (count, _) = table.contents(object)
    var fields: [(key: Text, value: BuiltValue)] = []
    fields.reserveCapacity(count)
    for position in 0..<count {
      guard let key = text(table.key(object, position)) else { return nil }
      if key == Text("$class") { continue }
      // Fields the flattener would take for a class object's: left to the tree.
      if key == Text("$classname") || key == Text("$classes") { return nil }
      let value = table.value(object, position)
      switch table.kind(value) {
      case .uid:
        guard let encoded = encode(table.uid(value)) else { return nil }
        fields.append((key, .uid(encoded)))
      case .array:
        let elements = table.count(value)
        if elements == 0 {
          fields.append((key, .inline(value)))
          continue
        }
        var uids: [UInt64] = []
        uids.reserveCapacity(elements)
        for index in 0..<elements {
          let element = table.element(value, index)
          // An array holding anything but UIDs is a value inline, which this writer leaves.
          guard table.isKind(element, .uid) else { return nil }
          uids.append(table.uid(element))
        }
        guard let encoded = encodeAll(uids) else { return nil }
        fields.append((key, .uids(encoded)))
      case .integer, .real, .boolean, .data:
        fields.append((key, .inline(value)))
      case .string:
        guard text(value) != nil else { return nil }
        fields.append((key, .inline(value)))
      default:
        return nil
      }
    }
    let classUID = classObject(chain)
    fields.append((Text("$class"), .uid(classUID)))
    objects[Int(uid)] = .dictionary(fields)
    return uid
  }
}

/// `ArchiverFlattener.table(for:)` of the envelope around the built objects, then the binary
/// writer's bytes.
private struct SubArchiveFlattener {
  let built: [BuiltObject]
  // The archive the built objects were read from (absent for the caller's values: no `.scalar`
  // or `.inline` object then).
  let table: BinaryObjects!
  let bytes: UnsafeRawBufferPointer
  /// The flattened objects, in the writer's order.
  var objects: [Flat] = []
  var keyConstants = TextTable()
  var valueConstants = TextTable()
  // Numbers by `NumberKey`'s rules, UIDs and booleans by value: each the first object's index.
  var numbers: [(key: NumberKey, index: Int)] = []
  // By UID (each below the number of built objects): the first slot, or -1.
  var uids: [Int]
  var firstTrue: Int?
  var firstFalse: Int?

  init(objects: [BuiltObject], view: KeyedArchiveView?) {
    built = objects
    table = view?.table
    bytes = view?.plist.rawBytes ?? UnsafeRawBufferPointer(start: nil, count: 0)
    self.objects.reserveCapacity(objects.count * 3)
    uids = [Int](repeating: -1, count: objects.count)
    references.reserveCapacity(objects.count * 6)
    scratch.reserveCapacity(64)
  }

  enum NumberKey: Equatable {
    case integer(UInt64, unsigned: Bool)
    case real(UInt64)
  }

  enum Flat {
    case text(Text)
    /// A number or data object of the input, written as the writer writes its value.
    case scalar(Int)
    /// A number or data value of the caller's.
    case value(PropertyListValue)
    case integer(UInt64)
    case uid(UInt64)
    case boolean(Bool)
    /// References `start..<start + count` of `references`: an array's elements, a
    /// dictionary's keys then values.
    case container(dictionary: Bool, start: Int, count: Int)
  }

  /// The references of every container, each container's in one run.
  var references: [Int] = []
  // A dictionary's references while its values are flattened (the arrays among them put their
  // own in `references` meanwhile), reused from one dictionary to the next.
  var scratch: [Int] = []

  /// A container whose references are `list`, at `index` (taken before its contents were).
  mutating func finish(_ index: Int, dictionary: Bool, _ list: some Collection<Int>) {
    objects[index] = .container(dictionary: dictionary, start: references.count, count: list.count)
    references.append(contentsOf: list)
  }

  /// A placeholder for a container, filled by `finish`.
  mutating func reserveContainer() -> Int {
    append(.container(dictionary: false, start: 0, count: 0))
  }

  mutating func append(_ object: Flat) -> Int {
    objects.append(object)
    return objects.count - 1
  }

  mutating func constant(_ text: Text, isKey: Bool) -> Int {
    let next = objects.count
    let found =
      isKey ? keyConstants.firstOrInsert(text, next) : valueConstants.firstOrInsert(text, next)
    if let found { return found }
    return append(.text(text))
  }

  mutating func uid(_ value: UInt64) -> Int {
    // Every occurrence takes a slot; references resolve to the first.
    let index = append(.uid(value))
    if uids[Int(value)] >= 0 { return uids[Int(value)] }
    uids[Int(value)] = index
    return index
  }

  /// A number, boolean or data object of the input.
  mutating func scalar(_ object: Int) -> Int {
    switch table.kind(object) {
    case .integer:
      let integer = table.integer(object)
      return number(.integer(integer.bitPattern, unsigned: integer.needsUnsignedStorage), object)
    case .real:
      return number(.real(Self.realBits(table.real(object).value)), object)
    case .boolean:
      return boolean(table.boolean(object))
    default:
      return append(.scalar(object))
    }
  }

  mutating func number(_ key: NumberKey, _ object: Int) -> Int {
    number(key) { .scalar(object) }
  }

  mutating func number(_ key: NumberKey, _ value: PropertyListValue) -> Int {
    number(key) { .value(value) }
  }

  mutating func number(_ key: NumberKey, _ make: () -> Flat) -> Int {
    for entry in numbers where entry.key == key { return entry.index }
    let index = append(make())
    numbers.append((key, index))
    return index
  }

  /// The flattener's key for a real: NaNs are one, and so are the two zeros.
  static func realBits(_ value: Double) -> UInt64 {
    value.isNaN ? Double.nan.bitPattern : value == 0 ? 0 : value.bitPattern
  }

  /// A boolean: a slot for each, references to the first of its value.
  mutating func boolean(_ flag: Bool) -> Int {
    let index = append(.boolean(flag))
    if flag {
      if firstTrue == nil { firstTrue = index }
      return firstTrue!
    }
    if firstFalse == nil { firstFalse = index }
    return firstFalse!
  }

  /// The archive's bytes: the envelope NSKeyedArchiver writes, `$objects` the built objects.
  mutating func encoded(rootUID: UInt64, rootKey: StaticString) -> Data {
    let envelope = reserveContainer()
    var entries = [
      constant(Text("$version"), isKey: true), constant(Text("$objects"), isKey: true),
      constant(Text("$archiver"), isKey: true), constant(Text("$top"), isKey: true),
    ]
    // 100000, as the only number so far.
    entries.append(append(.integer(100_000)))
    numbers.append((.integer(100_000, unsigned: false), entries[4]))
    let array = reserveContainer()
    var elements: [Int] = []
    elements.reserveCapacity(built.count)
    for object in built { elements.append(flatten(object)) }
    finish(array, dictionary: false, elements)
    entries.append(array)
    entries.append(constant(Text("NSKeyedArchiver"), isKey: false))
    let top = reserveContainer()
    let topKey = constant(Text(rootKey), isKey: true)
    let rootSlot = uid(rootUID)
    finish(top, dictionary: true, [topKey, rootSlot])
    entries.append(top)
    finish(envelope, dictionary: true, entries)
    return write()
  }

  /// An element of `$objects`.
  mutating func flatten(_ object: BuiltObject) -> Int {
    switch object {
    case .null: return append(.text(Text("$null")))
    case .string(let text): return append(.text(text))
    case .scalar(let scalar): return self.scalar(scalar)
    case .value(let value):
      switch value {
      case .integer(let integer):
        return number(.integer(integer.bitPattern, unsigned: integer.needsUnsignedStorage), value)
      case .real(let real):
        return number(.real(Self.realBits(real.value)), value)
      case .boolean(let flag): return boolean(flag)
      default: return append(.value(value))
      }
    case .dictionary(let fields):
      let index = reserveContainer()
      // Taken out while this dictionary fills it: the arrays among its values fill their own.
      var list = scratch
      scratch = []
      list.removeAll(keepingCapacity: true)
      for field in fields { list.append(constant(field.key, isKey: true)) }
      // A class object's name is an object of its own unless Apple shares it with `$classes`.
      var unsharedName = false
      if case .text(let name)? = fields.first(where: { $0.key == Text("$classname") })?.value,
        fields.contains(where: { $0.key == Text("$classes") })
      {
        unsharedName = !Self.sharedClassNames.contains { $0 == name }
      }
      for field in fields {
        if unsharedName, field.key == Text("$classname"), case .text(let name) = field.value {
          list.append(append(.text(name)))
          continue
        }
        switch field.value {
        case .uid(let value): list.append(uid(value))
        case .uids(let values):
          let array = reserveContainer()
          let start = references.count
          for value in values { references.append(uid(value)) }
          objects[array] = .container(dictionary: false, start: start, count: values.count)
          list.append(array)
        case .inline(let value):
          if table.isKind(value, .string), let text = table.asciiBytes(value) {
            list.append(constant(Text(text), isKey: false))
          } else if table.isKind(value, .array) {
            let array = reserveContainer()
            finish(array, dictionary: false, EmptyCollection())
            list.append(array)
          } else {
            list.append(scalar(value))
          }
        case .text(let text): list.append(constant(text, isKey: false))
        case .texts(let texts):
          let array = reserveContainer()
          let start = references.count
          for text in texts { references.append(constant(text, isKey: false)) }
          objects[array] = .container(dictionary: false, start: start, count: texts.count)
          list.append(array)
        }
      }
      finish(index, dictionary: true, list)
      scratch = list
      return index
    }
  }

  static let sharedClassNames: [Text] = ArchiverFlattener.sharedClassNameTexts.map { Text($0) }

  // MARK: Writing

  /// The objects as `Emitter.encode` writes them.
  func write() -> Data {
    let referenceSize = BinaryObjectEncoding.byteCount(UInt64(objects.count))
    var out = OutputBytes(capacity: bytes.count * 2 + 64)
    out.reserve(8)
    for byte in "bplist00".utf8 { out.put(byte) }
    var offsets: [Int] = []
    offsets.reserveCapacity(objects.count)
    for object in objects {
      offsets.append(out.written)
      switch object {
      case .text(let text):
        Self.marker(0x50, count: text.count, &out)
        out.reserve(text.count)
        out.put(text.start, text.count)
      case .integer(let bits): Self.integer(bits, &out)
      case .boolean(let flag):
        out.reserve(1)
        out.put(flag ? 0x09 : 0x08)
      case .uid(let value):
        let size = value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
        out.reserve(1 + size)
        out.put(0x80 | UInt8(size - 1))
        Self.sized(value, size, &out)
      case .scalar(let scalar):
        switch table.kind(scalar) {
        case .integer: Self.number(table.integer(scalar), &out)
        case .real: Self.number(table.real(scalar), &out)
        default:
          let (count, start) = table.contents(scalar)
          Self.marker(0x40, count: count, &out)
          out.reserve(count)
          out.put(bytes.baseAddress! + start, count)
        }
      case .value(let value):
        switch value {
        case .integer(let integer): Self.number(integer, &out)
        case .real(let real): Self.number(real, &out)
        case .data(let data):
          Self.marker(0x40, count: data.count, &out)
          out.reserve(data.count)
          data.withUnsafeBytes { out.put($0) }
        default: preconditionFailure("only numbers and data are held as values")
        }
      case .container(let isDictionary, let start, let count):
        Self.marker(isDictionary ? 0xD0 : 0xA0, count: isDictionary ? count / 2 : count, &out)
        out.reserve(count * referenceSize)
        for position in start..<(start + count) {
          Self.sized(UInt64(references[position]), referenceSize, &out)
        }
      }
    }
    let tableOffset = out.written
    let offsetSize = BinaryObjectEncoding.byteCount(UInt64(tableOffset))
    out.reserve(offsets.count * offsetSize + 32)
    for offset in offsets { Self.sized(UInt64(offset), offsetSize, &out) }
    for _ in 0..<6 { out.put(0) }
    out.put(UInt8(offsetSize))
    out.put(UInt8(referenceSize))
    Self.sized(UInt64(objects.count), 8, &out)
    Self.sized(0, 8, &out)
    Self.sized(UInt64(tableOffset), 8, &out)
    return out.finish()
  }

  /// An integer as the writer writes it: 16 bytes for those that need unsigned storage.
  static func number(_ integer: PropertyListInteger, _ out: inout OutputBytes) {
    if integer.needsUnsignedStorage {
      out.reserve(17)
      out.put(0x14)
      sized(0, 8, &out)
      sized(integer.bitPattern, 8, &out)
    } else {
      self.integer(integer.bitPattern, &out)
    }
  }

  /// A real as the writer writes it, in its own width.
  static func number(_ real: PropertyListReal, _ out: inout OutputBytes) {
    out.reserve(9)
    if real.isSinglePrecision {
      out.put(0x22)
      sized(UInt64(Float(real.value).bitPattern), 4, &out)
    } else {
      out.put(0x23)
      sized(real.value.bitPattern, 8, &out)
    }
  }

  /// `size` (1, 2, 4 or 8) big-endian bytes of `value`, in room reserved.
  @inline(__always)
  static func sized(_ value: UInt64, _ size: Int, _ out: inout OutputBytes) {
    switch size {
    case 1: out.put(UInt8(truncatingIfNeeded: value))
    case 2: withUnsafeBytes(of: UInt16(truncatingIfNeeded: value).bigEndian) { out.put($0) }
    case 4: withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian) { out.put($0) }
    default: withUnsafeBytes(of: value.bigEndian) { out.put($0) }
    }
  }

  /// An integer object of the fewest bytes that hold `bits`.
  static func integer(_ bits: UInt64, _ out: inout OutputBytes) {
    let size = BinaryObjectEncoding.byteCount(bits)
    out.reserve(1 + size)
    out.put(0x10 | UInt8(size.trailingZeroBitCount))
    sized(bits, size, &out)
  }

  /// A marker with its count, the count as an integer object after it from 15 on.
  static func marker(_ marker: UInt8, count: Int, _ out: inout OutputBytes) {
    out.reserve(1)
    if count < 15 {
      out.put(marker | UInt8(count))
    } else {
      out.put(marker | 0x0F)
      integer(UInt64(count), &out)
    }
  }
}

/// First occurrences of texts, for the flattener's constants: open addressing on the texts'
/// hashes, in two flat arrays (no allocation per text, and no `Hasher`).
private struct TextTable {
  private var slots = [Int32](repeating: -1, count: 256)
  private var entries: [(text: Text, hash: UInt64, index: Int)] = []

  init() { entries.reserveCapacity(128) }

  mutating func firstOrInsert(_ text: Text, _ index: Int) -> Int? {
    let hash = text.hash
    var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
    while slots[slot] >= 0 {
      let entry = entries[Int(slots[slot])]
      if entry.hash == hash, entry.text == text { return entry.index }
      slot = (slot + 1) & (slots.count - 1)
    }
    slots[slot] = Int32(entries.count)
    entries.append((text, hash, index))
    // At most half full, so that probes stay short.
    if entries.count * 2 > slots.count { grow() }
    return nil
  }

  private mutating func grow() {
    slots = [Int32](repeating: -1, count: slots.count * 2)
    for (position, entry) in entries.enumerated() {
      var slot = Int(truncatingIfNeeded: entry.hash) & (slots.count - 1)
      while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
      slots[slot] = Int32(position)
    }
  }
}
