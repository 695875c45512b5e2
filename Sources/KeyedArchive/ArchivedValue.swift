import PortableFoundation
import PropertyList

/// A decoded archived object of one of the Foundation classes that occur in resume data and in
/// common archives, or any other object with its fields.
public enum ArchivedValue: Sendable, Hashable {
  /// `nil` (UID pointing at `$null`).
  case null
  /// NSString (a plain string object), or NSMutableString (an instance with `NS.string`) when
  /// `mutable`.
  case string(String, mutable: Bool = false)
  /// NSNumber holding an integer.
  case integer(PropertyListInteger)
  /// NSNumber holding a floating-point value.
  case real(PropertyListReal)
  /// NSNumber holding a boolean.
  case boolean(Bool)
  /// NSData (a plain data object), or NSMutableData (an instance with `NS.data`) when `mutable`.
  case data(Data, mutable: Bool = false)
  /// NSDate (`NS.time`, seconds since 2001-01-01).
  case date(Date)
  /// NSArray or NSMutableArray (`NS.objects`).
  case array([ArchivedValue], mutable: Bool = false)
  /// NSSet or NSMutableSet (`NS.objects`), in archived order.
  case set([ArchivedValue], mutable: Bool = false)
  /// NSDictionary or NSMutableDictionary (`NS.keys`, `NS.objects`), in archived order.
  case dictionary([ArchivedDictionaryEntry], mutable: Bool = false)
  /// NSURL (`NS.base`, `NS.relative`).
  indirect case url(ArchivedURL)
  /// NSUUID (`NS.uuidbytes`).
  case uuid(UUID)
  /// NSNull (an instance, unlike `null`).
  case nsNull
  /// An instance of any other class, with its fields.
  case object(ArchivedObject)
}

extension ArchivedValue {
  /// Structural equality. Strings and dates compare as `PropertyListValue`'s do: strings by their
  /// exact characters (as NSString's literal comparison does), and every NaN date equals every
  /// other (an archive can hold one), so that equality stays reflexive.
  public static func == (lhs: ArchivedValue, rhs: ArchivedValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null), (.nsNull, .nsNull): return true
    case (.string(let a, let aMutable), .string(let b, let bMutable)):
      return aMutable == bMutable && PropertyListDictionary.sameBytes(a, b)
    case (.integer(let a), .integer(let b)): return a == b
    case (.real(let a), .real(let b)): return a == b
    case (.boolean(let a), .boolean(let b)): return a == b
    case (.data(let a, let aMutable), .data(let b, let bMutable)):
      return aMutable == bMutable && a == b
    case (.date(let a), .date(let b)): return PropertyListValue.date(a) == .date(b)
    case (.array(let a, let aMutable), .array(let b, let bMutable)),
      (.set(let a, let aMutable), .set(let b, let bMutable)):
      return aMutable == bMutable && a == b
    case (.dictionary(let a, let aMutable), .dictionary(let b, let bMutable)):
      return aMutable == bMutable && a == b
    case (.url(let a), .url(let b)): return a == b
    case (.uuid(let a), .uuid(let b)): return a == b
    case (.object(let a), .object(let b)): return a == b
    default: return false
    }
  }

  /// Hashes consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .string(let value, let mutable):
      hasher.combine(1)
      hasher.combine(value)
      hasher.combine(mutable)
    case .integer(let value):
      hasher.combine(2)
      hasher.combine(value)
    case .real(let value):
      hasher.combine(3)
      hasher.combine(value)
    case .boolean(let value):
      hasher.combine(4)
      hasher.combine(value)
    case .data(let value, let mutable):
      hasher.combine(5)
      hasher.combine(value)
      hasher.combine(mutable)
    case .date(let value):
      hasher.combine(6)
      PropertyListValue.date(value).hash(into: &hasher)
    case .array(let values, let mutable):
      hasher.combine(7)
      hasher.combine(values)
      hasher.combine(mutable)
    case .set(let values, let mutable):
      hasher.combine(8)
      hasher.combine(values)
      hasher.combine(mutable)
    case .dictionary(let entries, let mutable):
      hasher.combine(9)
      hasher.combine(entries)
      hasher.combine(mutable)
    case .url(let url):
      hasher.combine(10)
      hasher.combine(url)
    case .uuid(let uuid):
      hasher.combine(11)
      hasher.combine(uuid)
    case .nsNull: hasher.combine(12)
    case .object(let object):
      hasher.combine(13)
      hasher.combine(object)
    }
  }
}

/// One key and value of an archived dictionary.
public struct ArchivedDictionaryEntry: Sendable, Hashable {
  /// The key (usually a string).
  public var key: ArchivedValue
  /// The value.
  public var value: ArchivedValue

  /// Creates an entry.
  public init(_ key: ArchivedValue, _ value: ArchivedValue) {
    self.key = key
    self.value = value
  }
}

/// An archived NSURL: a relative string, resolved against an optional base URL.
public struct ArchivedURL: Sendable, Hashable {
  /// `NS.base`, itself an archived URL, or nil.
  public var base: ArchivedValue?
  /// `NS.relative`: the URL string (absolute when there is no base).
  public var relative: String

  /// Creates an archived URL.
  public init(relative: String, base: ArchivedValue? = nil) {
    self.relative = relative
    self.base = base
  }

  /// The absolute URL string: the relative string, or it resolved against the base.
  public var absoluteString: String {
    guard case .url(let base)? = base else { return relative }
    return URL(string: relative, relativeTo: URL(string: base.absoluteString))?.absoluteString
      ?? relative
  }

  /// Equal when the relative strings have the same characters (compared as ``ArchivedValue``'s
  /// strings are) and the bases are equal.
  public static func == (lhs: ArchivedURL, rhs: ArchivedURL) -> Bool {
    PropertyListDictionary.sameBytes(lhs.relative, rhs.relative) && lhs.base == rhs.base
  }
}

/// An instance of a class without its own model: its class chain and every field.
public struct ArchivedObject: Sendable, Hashable {
  /// The class names, most derived first (`$classes`).
  public var classChain: [String]
  /// The fields in archived order, `$class` excluded.
  public var fields: [ArchivedField]

  /// Creates an object.
  public init(classChain: [String], fields: [ArchivedField]) {
    self.classChain = classChain
    self.fields = fields
  }

  /// The most derived class name.
  public var className: String { classChain.first ?? "" }

  /// The field with a key (with exactly these characters), if present.
  public subscript(key: String) -> ArchivedField.Value? {
    fields.first { PropertyListDictionary.sameBytes($0.key, key) }?.value
  }

  /// Equal when the class names have the same characters (compared as ``ArchivedValue``'s strings
  /// are) and the fields are equal, in order.
  public static func == (lhs: ArchivedObject, rhs: ArchivedObject) -> Bool {
    lhs.classChain.count == rhs.classChain.count
      && zip(lhs.classChain, rhs.classChain).allSatisfy(PropertyListDictionary.sameBytes)
      && lhs.fields == rhs.fields
  }
}

/// One field of an archived instance.
public struct ArchivedField: Sendable, Hashable {
  /// How a field holds its value.
  public enum Value: Sendable, Hashable {
    /// A value stored in the instance itself (`encodeInt:forKey:` and friends); holds no UIDs.
    case inline(PropertyListValue)
    /// A reference to another object (`encodeObject:forKey:`).
    case reference(ArchivedValue)
    /// An inline array of references (how collections store their elements).
    case references([ArchivedValue])
  }

  /// The key.
  public var key: String
  /// The value.
  public var value: Value

  /// Creates a field.
  public init(_ key: String, _ value: Value) {
    self.key = key
    self.value = value
  }

  /// Equal when the keys have the same characters (compared as ``ArchivedValue``'s strings are) and
  /// the values are equal.
  public static func == (lhs: ArchivedField, rhs: ArchivedField) -> Bool {
    PropertyListDictionary.sameBytes(lhs.key, rhs.key) && lhs.value == rhs.value
  }
}
