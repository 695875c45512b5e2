@_spi(Writing) import PropertyList

/// Something a diagnosis found in a resume blob: a stable code, how much it matters, what it means,
/// and where.
public struct Finding: Sendable, Hashable, CustomStringConvertible {
  /// How much a finding matters.
  public enum Severity: String, Sendable, Hashable, Comparable, CaseIterable {
    /// Worth knowing; nothing is wrong.
    case info
    /// The blob may not resume as expected on some systems.
    case warning
    /// The blob cannot be resumed as it is.
    case error

    /// Orders by importance: info < warning < error.
    public static func < (lhs: Severity, rhs: Severity) -> Bool {
      lhs.rank < rhs.rank
    }

    private var rank: Int {
      switch self {
      case .info: 0
      case .warning: 1
      case .error: 2
      }
    }
  }

  /// The stable code (see docs/findings.md).
  public var code: String
  /// How much it matters.
  public var severity: Severity
  /// A sentence saying what was found and what it means.
  public var message: String
  /// The key path it concerns (a resume key, or a key inside a request archive), or empty.
  public var path: String

  /// Creates a finding.
  public init(_ code: String, _ severity: Severity, _ message: String, path: String = "") {
    self.code = code
    self.severity = severity
    self.message = message
    self.path = path
  }

  /// The parts one after another, written into one string at once: an interpolation or a run of
  /// `+` grows the string part by part, which cost a repair's finding as much as the rest of it,
  /// and appending each part to a string of reserved capacity still cost about three times this.
  static func message(_ parts: [String]) -> String {
    var count = 0
    for part in parts { count += part.utf8.count }
    return String(unsafeUninitializedCapacity: count) { buffer in
      var written = 0
      for part in parts {
        part.withUTF8InPlace { utf8 in
          guard let source = utf8.baseAddress, !utf8.isEmpty else { return }
          (buffer.baseAddress! + written).update(from: source, count: utf8.count)
          written += utf8.count
        }
      }
      return written
    }
  }

  /// `severity code: message (path)`.
  public var description: String {
    "\(severity.rawValue) \(code): \(message)" + (path.isEmpty ? "" : " (\(path))")
  }
}
