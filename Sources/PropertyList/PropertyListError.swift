/// Where in the input a problem was found.
public enum PropertyListLocation: Sendable, Hashable, CustomStringConvertible {
  /// A byte offset from the start of a binary input.
  case offset(Int)
  /// A 1-based line of an XML input.
  case line(Int)
  /// A 1-based line and column of a text input (OpenStep, JSON, captured text); the column counts
  /// Unicode scalars.
  case lineColumn(line: Int, column: Int)
  /// No position applies (for example, a writer error or an input that is too large).
  case none

  /// `@OFFSET`, `LINE`, `LINE:COLUMN` or the empty string, as the CLI prints after the file name.
  public var description: String {
    switch self {
    case .offset(let offset): return "@\(offset)"
    case .line(let line): return "\(line)"
    case .lineColumn(let line, let column): return "\(line):\(column)"
    case .none: return ""
    }
  }
}

/// An error from reading or writing a property list: what went wrong, and where.
///
/// A struct rather than an enum so that codes can be added without breaking callers.
public struct PropertyListError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A stable category for an error.
  public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The code's stable name.
    public let rawValue: String
    /// Creates a code from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The input is in no property-list format the reader reads (JSON, or anything else).
    public static let unsupportedFormat = Code(rawValue: "unsupported-format")
    /// The input ends before a structure it announces.
    public static let truncated = Code(rawValue: "truncated")
    /// The input's structure is wrong (bad trailer, bad marker, bad tag, bad reference).
    public static let malformed = Code(rawValue: "malformed")
    /// An object contains itself.
    public static let cycle = Code(rawValue: "cycle")
    /// A value cannot be represented (bad UTF-8 or UTF-16, an integer out of range, a bad date).
    public static let invalidValue = Code(rawValue: "invalid-value")
    /// The input exceeds one of the configured ``PropertyListLimits``.
    public static let limitExceeded = Code(rawValue: "limit-exceeded")
    /// The XML asks for something we refuse for safety (entities, DTD subsets, external resources).
    public static let forbidden = Code(rawValue: "forbidden")
    /// The value cannot be written in the requested format.
    public static let unencodable = Code(rawValue: "unencodable")

    /// The code's name.
    public var description: String { rawValue }
  }

  /// The category.
  public var code: Code
  /// A human-readable explanation, without the location.
  public var message: String
  /// Where the problem is.
  public var location: PropertyListLocation

  /// Creates an error.
  public init(_ code: Code, _ message: String, at location: PropertyListLocation = .none) {
    self.code = code
    self.message = message
    self.location = location
  }

  /// `LOCATION: message`, or just the message when there is no location.
  public var description: String {
    switch location {
    case .none: return message
    default: return "\(location): \(message)"
    }
  }
}
