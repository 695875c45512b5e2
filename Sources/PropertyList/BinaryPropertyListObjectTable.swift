import PortableFoundation

/// A binary property list as its object table: every object in file order, with containers holding
/// references (indexes into the table) rather than values.
///
/// Values alone cannot say which references in a file pointed at the same object, and Apple's
/// writers differ here: CoreFoundation's `CFPropertyListCreateData` shares equal strings, numbers,
/// dates and data, while NSKeyedArchiver shares only what was the same object in memory (so an
/// archive can hold two equal strings, or a UID object that nothing references). The table keeps
/// exactly what the file said, so reading a table and encoding it again reproduces any file written
/// in CoreFoundation's canonical layout, whichever writer decided the sharing. Writers of higher
/// layers (keyed archives) build tables to decide sharing themselves.
public struct BinaryPropertyListObjectTable: Sendable, Hashable {
  /// One object of the table.
  public enum Object: Sendable, Hashable {
    /// A value that is not a container (never `.array` or `.dictionary`).
    case scalar(PropertyListValue)
    /// An array, as references to its elements.
    case array([Int])
    /// A dictionary, as references to its keys (which must be strings) and to its values.
    case dictionary(keys: [Int], values: [Int])
  }

  /// The objects, in the order they are written.
  public var objects: [Object]
  /// The index of the top-level object.
  public var topObject: Int

  /// Creates a table from objects.
  public init(objects: [Object], topObject: Int) {
    self.objects = objects
    self.topObject = topObject
  }

  /// Flattens a value the way CoreFoundation's binary writer does (see
  /// ``BinaryPropertyListWriter``).
  ///
  /// - Throws: ``PropertyListError`` with code `.unencodable` if the value nests deeper than
  ///   `maximumDepth`.
  public init(
    flattening value: PropertyListValue, maximumDepth: Int = PropertyListLimits.default.maximumDepth
  )
    throws
  {
    var flattener = Flattener(maximumDepth: maximumDepth)
    let top = try flattener.flatten(value, depth: 0)
    self.init(objects: flattener.objects, topObject: top)
  }

  /// Reads the object table of a binary plist, every object included (also those nothing
  /// references).
  ///
  /// The plist is first read as a value, so everything ``BinaryPropertyListReader`` checks holds
  /// here too.
  /// - Throws: ``PropertyListError`` with the byte offset of the problem.
  public init(reading bytes: Data, limits: PropertyListLimits = .default) throws {
    guard bytes.count <= limits.maximumInputSize else {
      throw PropertyListError(
        .limitExceeded,
        "input of \(bytes.count) bytes exceeds the limit of \(limits.maximumInputSize)")
    }
    self = try bytes.withUnsafeBytes { buffer in
      var parser = try BinaryParser<ValueBuilder>(buffer, limits: limits)
      _ = try parser.readTop()
      return try parser.readTable()
    }
  }

  /// Resolves the table into a value, starting from the top object.
  ///
  /// - Throws: ``PropertyListError`` if a reference is out of range, a dictionary key is not a
  ///   string, or an object contains itself.
  public func value() throws -> PropertyListValue {
    try Data(encoded()).withUnsafeBytes { buffer in
      var parser = try BinaryParser<ValueBuilder>(buffer, limits: .default)
      return try parser.readTop()
    }
  }

  /// Encodes the table in CoreFoundation's layout: objects in table order, the fewest bytes for
  /// references and offsets, and scalars in CoreFoundation's encodings.
  public func encoded() -> Data {
    Emitter.encode(objects, topObject: topObject)
  }
}
