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
