import KeyedArchive
import PropertyList
import ResumeData

/// The exit statuses of `resumedata`, as documented in README.md (sysexits.h numbering).
public enum ExitCode: Int32, Sendable {
  /// Success.
  case success = 0
  /// Any failure not covered below (for example, an output that cannot be written).
  case failure = 1
  /// The command line is wrong.
  case usage = 64
  /// The input is not well formed.
  case malformedInput = 65
  /// The input cannot be read (missing, unreadable, too large to read).
  case unreadableInput = 66
  /// A download was paused by Ctrl-C (128 + SIGINT, as shells report it).
  case interrupted = 130
}

/// A failure that ends a command, with what the CLI prints and the status it exits with.
public struct CommandError: Error, Sendable, Equatable {
  /// The exit status.
  public var exitCode: ExitCode
  /// The file the problem is in, if any (`-` for standard input).
  public var file: String?
  /// Where in that file, if known.
  public var location: PropertyListLocation
  /// What went wrong.
  public var message: String
  /// Whether to add a pointer to `--help` (for usage errors).
  public var showsUsageHint: Bool

  /// Creates an error.
  public init(
    _ exitCode: ExitCode, _ message: String, file: String? = nil,
    location: PropertyListLocation = .none,
    showsUsageHint: Bool = false
  ) {
    self.exitCode = exitCode
    self.message = message
    self.file = file
    self.location = location
    self.showsUsageHint = showsUsageHint
  }

  /// A usage error, which exits 64 and points at `--help`.
  public static func usage(_ message: String) -> CommandError {
    CommandError(.usage, message, showsUsageHint: true)
  }

  /// A property-list error in a named input, which exits 65.
  public static func malformed(_ error: PropertyListError, file: String) -> CommandError {
    let status: ExitCode = error.code == .unencodable ? .failure : .malformedInput
    return CommandError(status, error.message, file: file, location: error.location)
  }

  /// The line printed to standard error: `Error: FILE:LOCATION: message`. Control characters
  /// (from keys or text quoted out of the input) are escaped, so an error is always one line.
  public var rendered: String {
    var prefix = "Error: "
    if let file {
      prefix += file
      switch location {
      case .none: prefix += ": "
      default: prefix += ":\(location): "
      }
    }
    return Self.oneLine(prefix + message)
  }

  /// `text` on one line, with nothing a terminal acts on: line breaks, tabs and the other
  /// control characters (C0, DEL, and C1, whose U+009B some terminals take for an escape
  /// sequence's start), and the bidirectional controls, which reorder what follows them on the
  /// line as shown (U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), written as Swift
  /// escapes (`\n`, `\u{1b}`, `\u{202e}`).
  static func oneLine(_ text: String) -> String {
    func isControl(_ scalar: Unicode.Scalar) -> Bool {
      switch scalar.value {
      case 0..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
      default: false
      }
    }
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if isControl(scalar) {
          out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }
}

extension CommandError {
  /// A keyed-archive error in a named input, which exits 65: at the container's offset or line, or
  /// at the key path inside the archive.
  static func archive(_ error: KeyedArchiveError, file: String) -> CommandError {
    if let plist = error.propertyListError { return .malformed(plist, file: file) }
    return .malformed(keyPath: error.keyPath, error.message, file: file)
  }

  /// Malformed input at a key path.
  static func malformed(keyPath: String, _ message: String, file: String) -> CommandError {
    CommandError(.malformedInput, keyPath.isEmpty ? message : "\(keyPath): \(message)", file: file)
  }
}
