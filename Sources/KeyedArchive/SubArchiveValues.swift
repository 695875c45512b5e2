import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The plain values of the sub-archive writer (see SubArchiveWriter.swift): texts that point at
// bytes which stay put, the texts it writes of its own, and scalars as it writes them.

/// Bytes that stay put while an archive is written: of the archive read in place, of a constant,
/// or of a `ByteArena`.
// Sendable: it only ever points at constants, at a view's bytes or at an arena's, which nothing
// writes while it is used.
struct Text: @unchecked Sendable, BitwiseCopyable {
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
enum Constant: Int {
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
typealias TextID = Int32

/// A string, data, number or boolean, as the writer writes it.
struct Scalar: BitwiseCopyable {
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
