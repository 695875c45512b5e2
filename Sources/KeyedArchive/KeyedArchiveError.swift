import PropertyList

/// An error from reading or writing a keyed archive: what went wrong, and at which key path.
///
/// Key paths start at the archive's top level: `$top.root`, `$objects[12].NS.keys[3]`,
/// `$objects[4].$class`. When the container itself is not a readable property list, the error
/// carries the property-list error's location instead.
public struct KeyedArchiveError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A stable category for an error.
  public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The code's stable name.
    public let rawValue: String
    /// Creates a code from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The container is not a readable property list (see `propertyListError`).
    public static let propertyList = Code(rawValue: "property-list")
    /// The envelope (`$archiver`, `$version`, `$top`, `$objects`) is missing or malformed.
    public static let envelope = Code(rawValue: "envelope")
    /// A UID names no object.
    public static let uidOutOfRange = Code(rawValue: "uid-out-of-range")
    /// A `$class` reference or a class object is malformed.
    public static let badClass = Code(rawValue: "bad-class")
    /// An object does not have the shape its class requires.
    public static let badObject = Code(rawValue: "bad-object")
    /// An object contains itself where that cannot be represented.
    public static let cycle = Code(rawValue: "cycle")
    /// The archive exceeds one of the configured ``KeyedArchiveLimits``.
    public static let limitExceeded = Code(rawValue: "limit-exceeded")

    /// The code's name.
    public var description: String { rawValue }
  }

  /// The category.
  public var code: Code
  /// A human-readable explanation, without the key path.
  public var message: String
  /// Where in the archive the problem is, as a key path (empty for the whole archive).
  public var keyPath: String
  /// The property-list error, when the container itself could not be read.
  public var propertyListError: PropertyListError?

  /// Creates an error.
  public init(
    _ code: Code, _ message: String, at keyPath: String, propertyListError: PropertyListError? = nil
  ) {
    self.code = code
    self.message = message
    self.keyPath = keyPath
    self.propertyListError = propertyListError
  }

  /// `KEYPATH: message`, or the property-list error's own description.
  public var description: String {
    if let propertyListError { return propertyListError.description }
    return keyPath.isEmpty ? message : "\(keyPath): \(message)"
  }
}

/// Bounds on the work done with an archive, each guarding against one kind of hostile input.
public struct KeyedArchiveLimits: Sendable, Hashable {
  /// Limits for reading the property-list container.
  public var propertyList: PropertyListLimits
  /// Deepest chain of object references followed when decoding typed values or resolving the graph
  /// for display. Guards the stack against long reference chains. Default 256; values above
  /// `depthCeiling` act as `depthCeiling`, since decoding recurses once per level.
  public var maximumDepth: Int
  /// Most objects visited when resolving or decoding, counting each visit of a shared object.
  /// Guards time and memory against archives whose objects reference each other exponentially.
  /// Decoding counts a shared object's visits without decoding it again, so the limit bounds the
  /// size of the value it returns as hashing or encoding it walks it, not decoding's own time.
  /// Default 1,000,000.
  public var maximumVisits: Int

  /// Creates limits; every argument defaults to the documented default.
  public init(
    propertyList: PropertyListLimits = .default, maximumDepth: Int = 256,
    maximumVisits: Int = 1_000_000
  ) {
    self.propertyList = propertyList
    self.maximumDepth = maximumDepth
    self.maximumVisits = maximumVisits
  }

  /// The deepest reference chain ever followed, whatever `maximumDepth` says: 400 levels of the
  /// recursive decoder fit in a 512 KiB thread stack, even in a debug build.
  public static let depthCeiling = 400

  /// `maximumDepth`, capped at `depthCeiling`.
  public var effectiveMaximumDepth: Int { min(maximumDepth, Self.depthCeiling) }

  /// The defaults.
  public static let `default` = KeyedArchiveLimits()
}
