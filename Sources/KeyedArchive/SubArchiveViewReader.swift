import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The sub-archive writer's reading of the archive (see SubArchiveWriter.swift): an object of a
// `KeyedArchiveView`, read from its bytes as `ArchiveDecoder` decodes it, laid out into a `Layout`
// as `KeyedArchiveBuilder` encodes the decoded value; nil for what it leaves to the tree.

/// What the writer makes of a class: Foundation's classes it models, those it leaves to the tree,
/// and the rest, archived by their chain.
enum ClassCategory: UInt8 {
  case array, mutableArray, dictionary, mutableDictionary, string, url, refused, plain
  /// A class of no model whose chain is not all ASCII.
  case unwritable
}

/// A class object met in the archive read.
struct InputClass: BitwiseCopyable {
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
struct ReaderMemory: ~Copyable {
  // Classes met so far, by class UID (an archive has a handful), and their chains: kept from one
  // object of an archive to the next, forgotten for the next archive.
  var classes = FlatBuffer<InputClass>(capacity: 8)
  var chains = FlatBuffer<TextID>(capacity: 16)
  var inProgress = FlatBuffer<UInt64>(capacity: 16)
}

/// `KeyedArchiveBuilder.encode(ArchiveDecoder.decode(uid))`, read from the view into a `Layout`.
struct ViewReader: ~Copyable {
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
