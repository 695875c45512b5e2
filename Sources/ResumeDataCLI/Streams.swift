import Foundation
import Synchronization

/// Where a command reads and writes; the real process streams, or buffers in tests.
public struct Streams: Sendable {
  /// Reads all of standard input.
  public var readStandardInput: @Sendable () throws -> Data
  /// Writes bytes to standard output.
  public var writeStandardOutput: @Sendable (Data) -> Void
  /// Writes bytes to standard error.
  public var writeStandardError: @Sendable (Data) -> Void
  /// Reads the next part of standard input into a buffer, at most its size; returns the number of
  /// bytes read, 0 at the end. For commands that stream their input (`batch`) instead of holding it.
  public var readStandardInputPart: @Sendable (UnsafeMutableRawBufferPointer) throws -> Int
  /// Whether standard output is a terminal (binary output is refused there).
  public var standardOutputIsTerminal: Bool

  /// Creates streams from closures. Without `readStandardInputPart`, standard input is read whole
  /// by `readStandardInput` on the first call and then handed out a part at a time.
  public init(
    readStandardInput: @escaping @Sendable () throws -> Data,
    readStandardInputPart: (@Sendable (UnsafeMutableRawBufferPointer) throws -> Int)? = nil,
    writeStandardOutput: @escaping @Sendable (Data) -> Void,
    writeStandardError: @escaping @Sendable (Data) -> Void,
    standardOutputIsTerminal: Bool
  ) {
    self.readStandardInput = readStandardInput
    self.readStandardInputPart =
      readStandardInputPart ?? WholeInput(readStandardInput).readPart
    self.writeStandardOutput = writeStandardOutput
    self.writeStandardError = writeStandardError
    self.standardOutputIsTerminal = standardOutputIsTerminal
  }

  /// The process's own standard streams.
  public static var process: Streams {
    Streams(
      readStandardInput: { FileHandle.standardInput.readDataToEndOfFile() },
      readStandardInputPart: { buffer in try readDescriptor(STDIN_FILENO, into: buffer) },
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

/// Reads from a file descriptor into a buffer, retrying when a signal interrupts the read.
///
/// - Returns: the number of bytes read, 0 at the end of the input.
func readDescriptor(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
  while true {
    let count = read(descriptor, buffer.baseAddress, buffer.count)
    if count >= 0 { return count }
    guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
  }
}

/// Standard input read whole once, then handed out in parts: the streaming view of streams made
/// from a `Data` (tests).
private final class WholeInput: Sendable {
  private let state: Mutex<(data: Data?, offset: Int)>
  private let readAll: @Sendable () throws -> Data

  init(_ readAll: @escaping @Sendable () throws -> Data) {
    self.readAll = readAll
    state = Mutex((nil, 0))
  }

  @Sendable func readPart(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    try state.withLock { state in
      if state.data == nil { state.data = try readAll() }
      guard let data = state.data else { return 0 }
      let count = min(buffer.count, data.count - state.offset)
      guard count > 0 else { return 0 }
      let start = data.startIndex + state.offset
      data.copyBytes(
        to: buffer.bindMemory(to: UInt8.self).baseAddress!, from: start..<(start + count))
      state.offset += count
      return count
    }
  }
}
