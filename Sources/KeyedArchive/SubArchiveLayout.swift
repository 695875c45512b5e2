import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The sub-archive writer's layout (see SubArchiveWriter.swift): the objects as
// `KeyedArchiveBuilder` lays them out in `$objects`, and its sharing of strings, numbers and
// classes.

/// An object as ``KeyedArchiveBuilder`` lays it out in `$objects`.
struct BuiltObject: BitwiseCopyable {
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
struct BuiltField: BitwiseCopyable {
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
enum FixedChain: Int8 {
  case array, mutableArray, dictionary, mutableDictionary, url
}

/// ``KeyedArchiveBuilder``'s objects, and its sharing: strings by their characters, numbers by
/// value, classes by chain.
struct Layout: ~Copyable {
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
