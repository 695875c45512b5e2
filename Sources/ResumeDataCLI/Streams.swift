import Foundation

/// Where a command reads and writes; the real process streams, or buffers in tests.
public struct Streams: Sendable {
  /// Reads all of standard input.
  public var readStandardInput: @Sendable () throws -> Data
  /// Writes bytes to standard output.
  public var writeStandardOutput: @Sendable (Data) -> Void
  /// Writes bytes to standard error.
  public var writeStandardError: @Sendable (Data) -> Void
  /// Whether standard output is a terminal (binary output is refused there; colour is used there).
  public var standardOutputIsTerminal: Bool
  /// Whether standard error is a terminal (a progress bar and colour are used there).
  public var standardErrorIsTerminal: Bool
  /// Looks up an environment variable (`NO_COLOR`); tests inject their own.
  public var environment: @Sendable (String) -> String?

  /// Creates streams from closures.
  ///
  /// - Parameters:
  ///   - readStandardInput: reads all of standard input.
  ///   - writeStandardOutput: writes bytes to standard output.
  ///   - writeStandardError: writes bytes to standard error.
  ///   - standardOutputIsTerminal: whether standard output is a terminal.
  ///   - standardErrorIsTerminal: whether standard error is a terminal.
  ///   - environment: looks up an environment variable; by default none is set.
  public init(
    readStandardInput: @escaping @Sendable () throws -> Data,
    writeStandardOutput: @escaping @Sendable (Data) -> Void,
    writeStandardError: @escaping @Sendable (Data) -> Void,
    standardOutputIsTerminal: Bool,
    standardErrorIsTerminal: Bool = false,
    environment: @escaping @Sendable (String) -> String? = { _ in nil }
  ) {
    self.readStandardInput = readStandardInput
    self.writeStandardOutput = writeStandardOutput
    self.writeStandardError = writeStandardError
    self.standardOutputIsTerminal = standardOutputIsTerminal
    self.standardErrorIsTerminal = standardErrorIsTerminal
    self.environment = environment
  }

  /// The process's own standard streams and environment.
  public static var process: Streams {
    Streams(
      readStandardInput: { FileHandle.standardInput.readDataToEndOfFile() },
      writeStandardOutput: { FileHandle.standardOutput.write($0) },
      writeStandardError: { FileHandle.standardError.write($0) },
      standardOutputIsTerminal: isatty(STDOUT_FILENO) == 1,
      standardErrorIsTerminal: isatty(STDERR_FILENO) == 1,
      environment: { ProcessInfo.processInfo.environment[$0] })
  }

  /// How text for standard output is styled: in colour only on a terminal, without `NO_COLOR`.
  var outputStyle: TextStyle { TextStyle(enabled: standardOutputIsTerminal && !noColor) }

  /// How text for standard error is styled: in colour only on a terminal, without `NO_COLOR`.
  var errorStyle: TextStyle { TextStyle(enabled: standardErrorIsTerminal && !noColor) }

  /// Whether the user asked for no colour: `NO_COLOR` set and not empty (https://no-color.org).
  private var noColor: Bool { !(environment("NO_COLOR") ?? "").isEmpty }

  func print(_ text: String) {
    writeStandardOutput(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
  }

  func printError(_ text: String) {
    writeStandardError(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
  }
}
