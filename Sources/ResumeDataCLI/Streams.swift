import Foundation

/// Where a command reads and writes; the real process streams, or buffers in tests.
public struct Streams: Sendable {
  /// Reads all of standard input.
  public var readStandardInput: @Sendable () throws -> Data
  /// Writes bytes to standard output.
  public var writeStandardOutput: @Sendable (Data) -> Void
  /// Writes bytes to standard error.
  public var writeStandardError: @Sendable (Data) -> Void
  /// Whether standard output is a terminal (binary output is refused there).
  public var standardOutputIsTerminal: Bool

  /// Creates streams from closures.
  public init(
    readStandardInput: @escaping @Sendable () throws -> Data,
    writeStandardOutput: @escaping @Sendable (Data) -> Void,
    writeStandardError: @escaping @Sendable (Data) -> Void,
    standardOutputIsTerminal: Bool
  ) {
    self.readStandardInput = readStandardInput
    self.writeStandardOutput = writeStandardOutput
    self.writeStandardError = writeStandardError
    self.standardOutputIsTerminal = standardOutputIsTerminal
  }

  /// The process's own standard streams.
  public static var process: Streams {
    Streams(
      readStandardInput: { FileHandle.standardInput.readDataToEndOfFile() },
      writeStandardOutput: { FileHandle.standardOutput.write($0) },
      writeStandardError: { FileHandle.standardError.write($0) },
      standardOutputIsTerminal: isatty(STDOUT_FILENO) == 1)
  }

  func print(_ text: String) {
    writeStandardOutput(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
  }

  func printError(_ text: String) {
    writeStandardError(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
  }
}
