import KeyedArchive
import PropertyList

/// An error from reading or writing resume data: what went wrong, and where (a key path, or the
/// byte offset or line of the container).
public struct ResumeDataError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A stable category for an error.
  public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The code's stable name.
    public let rawValue: String
    /// Creates a code from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The blob is not a property list (see `propertyListError`).
    public static let propertyList = Code(rawValue: "property-list")
    /// A keyed archive inside the blob is malformed (see `keyedArchiveError`).
    public static let keyedArchive = Code(rawValue: "keyed-archive")
    /// The blob is a property list but not resume data of any known form.
    public static let notResumeData = Code(rawValue: "not-resume-data")
    /// A key holds a value of the wrong type.
    public static let wrongType = Code(rawValue: "wrong-type")
    /// The operation cannot be done on this blob or toward this target (the message says why).
    public static let unsupported = Code(rawValue: "unsupported")
    /// A key holds a value of the right type whose text does not read (a segment map that is not
    /// one).
    public static let invalidValue = Code(rawValue: "invalid-value")
    /// An edit's argument is invalid (a URL that does not parse, a header name with a colon, …).
    public static let invalidEdit = Code(rawValue: "invalid-edit")

    /// The code's name.
    public var description: String { rawValue }
  }

  /// The category.
  public var code: Code
  /// A human-readable explanation, without the location.
  public var message: String
  /// The key path of the problem in the resume dictionary or its archives (empty when it is the
  /// container's, then see `propertyListError`).
  public var keyPath: String
  /// The container's error, when the blob is not a readable property list.
  public var propertyListError: PropertyListError?
  /// The archive's error, when a keyed archive inside the blob is malformed.
  public var keyedArchiveError: KeyedArchiveError?

  /// Creates an error.
  public init(
    _ code: Code, _ message: String, at keyPath: String,
    propertyListError: PropertyListError? = nil,
    keyedArchiveError: KeyedArchiveError? = nil
  ) {
    self.code = code
    self.message = message
    self.keyPath = keyPath
    self.propertyListError = propertyListError
    self.keyedArchiveError = keyedArchiveError
  }

  /// `KEYPATH: message`, or the container's own description.
  public var description: String {
    if let propertyListError { return propertyListError.description }
    return keyPath.isEmpty ? message : "\(keyPath): \(message)"
  }
}

extension ResumeDataError {
  /// Runs `body`, turning the lower layers' errors into ``ResumeDataError``s that keep them, with
  /// `keyPath` in front of an archive's own key path.
  static func wrapping<T>(at keyPath: String = "", _ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as PropertyListError {
      throw ResumeDataError(.propertyList, error.message, at: keyPath, propertyListError: error)
    } catch let error as KeyedArchiveError {
      if let plist = error.propertyListError {
        throw ResumeDataError(.propertyList, plist.message, at: keyPath, propertyListError: plist)
      }
      let path = [keyPath, error.keyPath].filter { !$0.isEmpty }.joined(separator: ".")
      throw ResumeDataError(.keyedArchive, error.message, at: path, keyedArchiveError: error)
    }
  }
}
