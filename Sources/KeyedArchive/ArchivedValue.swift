import Foundation
import PropertyList

/// A decoded archived object of one of the Foundation classes that occur in resume data and in common
/// archives, or any other object with its fields.
public enum ArchivedValue: Sendable, Hashable {
  /// `nil` (UID pointing at `$null`).
  case null
  /// NSString (a plain string object), or NSMutableString (an instance with `NS.string`) when `mutable`.
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

  /// The field with a key, if present.
  public subscript(key: String) -> ArchivedField.Value? {
    fields.first { $0.key == key }?.value
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
}
