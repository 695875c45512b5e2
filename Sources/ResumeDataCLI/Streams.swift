import Foundation
import OutputFiles
import PortableFoundation
import ResumeDataBatch

/// Where a command reads and writes; the real process streams, or buffers in tests.
public struct Streams: Sendable {
  /// Reads all of standard input.
  public var readStandardInput: @Sendable () throws -> Data
  /// Writes bytes to standard output.
  public var writeStandardOutput: @Sendable (Data) -> Void
  /// Writes pieces of bytes to standard output, one after another (`batch`'s result lines, as
  /// the pieces of memory they lie in); valid only during the call.
  public var writeStandardOutputPieces: @Sendable ([UnsafeRawBufferPointer]) -> Void
  /// Writes bytes to standard error.
  public var writeStandardError: @Sendable (Data) -> Void
  /// Reads the next part of standard input into a buffer, at most its size; returns the number of
  /// bytes read, 0 at the end. For commands that stream their input (`batch`) instead of holding it.
  public var readStandardInputPart: @Sendable (UnsafeMutableRawBufferPointer) throws -> Int
  /// Whether standard output is a terminal (binary output is refused there; colour is used there).
  public var standardOutputIsTerminal: Bool
  /// Whether standard error is a terminal (a progress bar and colour are used there).
  public var standardErrorIsTerminal: Bool
  /// Looks up an environment variable (`NO_COLOR`); tests inject their own.
  public var environment: @Sendable (String) -> String?
  /// Whether a path names the file standard output already is (`-o /dev/stdout`, or `-o out`
  /// with standard output redirected to `out`): output for it goes to standard output, as for `-`,
  /// rather than through a second descriptor that would write over it from its start.
  public var isStandardOutput: @Sendable (String) -> Bool

  /// Whether output named `path` goes to standard output: `-`, or a name for the file it is.
  func writesToStandardOutput(_ path: String) -> Bool {
    path == "-" || isStandardOutput(path)
  }

  /// Creates streams from closures.
  ///
  /// - Parameters:
  ///   - readStandardInput: reads all of standard input.
  ///   - readStandardInputPart: reads the next part of standard input; by default standard input
  ///     is read whole by `readStandardInput` on the first call and handed out a part at a time.
  ///   - writeStandardOutput: writes bytes to standard output.
  ///   - writeStandardOutputPieces: writes pieces of bytes to standard output; by default they
  ///     are copied together and written by `writeStandardOutput`.
  ///   - writeStandardError: writes bytes to standard error.
  ///   - standardOutputIsTerminal: whether standard output is a terminal.
  ///   - standardErrorIsTerminal: whether standard error is a terminal.
  ///   - environment: looks up an environment variable; by default none is set.
  ///   - isStandardOutput: whether a path names the file standard output is; by default none does.
  public init(
    readStandardInput: @escaping @Sendable () throws -> Data,
    readStandardInputPart: (@Sendable (UnsafeMutableRawBufferPointer) throws -> Int)? = nil,
    writeStandardOutput: @escaping @Sendable (Data) -> Void,
    writeStandardOutputPieces: (@Sendable ([UnsafeRawBufferPointer]) -> Void)? = nil,
    writeStandardError: @escaping @Sendable (Data) -> Void,
    standardOutputIsTerminal: Bool,
    standardErrorIsTerminal: Bool = false,
    environment: @escaping @Sendable (String) -> String? = { _ in nil },
    isStandardOutput: @escaping @Sendable (String) -> Bool = { _ in false }
  ) {
    self.readStandardInput = readStandardInput
    self.readStandardInputPart =
      readStandardInputPart ?? WholeInput(readStandardInput).readPart
    self.writeStandardOutput = writeStandardOutput
    self.writeStandardOutputPieces =
      writeStandardOutputPieces ?? { pieces in
        var data = Data(capacity: pieces.reduce(0) { $0 + $1.count })
        for piece in pieces { data.append(contentsOf: piece) }
        writeStandardOutput(data)
      }
    self.writeStandardError = writeStandardError
    self.standardOutputIsTerminal = standardOutputIsTerminal
    self.standardErrorIsTerminal = standardErrorIsTerminal
    self.environment = environment
    self.isStandardOutput = isStandardOutput
  }

  /// The process's own standard streams and environment.
  public static var process: Streams {
    Streams(
      // Not `FileHandle.readDataToEndOfFile`, which stops the process when the read fails (a
      // closed descriptor, a directory) and has no limit.
      readStandardInput: {
        try FileAccess.readAll(STDIN_FILENO, limit: FileAccess.maximumInputSize)
      },
      readStandardInputPart: { buffer in
        standardInputPipeEnlarged
        return try FileAccess.read(STDIN_FILENO, into: buffer)
      },
      writeStandardOutput: { data in
        writeProcessOutput { data.withUnsafeBytes { OutputTarget.writeAll(STDOUT_FILENO, $0) } }
      },
      writeStandardOutputPieces: { pieces in
        writeProcessOutput { OutputTarget.writeAll(STDOUT_FILENO, pieces: pieces) }
      },
      writeStandardError: { data in
        // Nowhere is left to say that standard error failed.
        _ = data.withUnsafeBytes { OutputTarget.writeAll(STDERR_FILENO, $0) }
      },
      standardOutputIsTerminal: isatty(STDOUT_FILENO) == 1,
      standardErrorIsTerminal: isatty(STDERR_FILENO) == 1,
      environment: { ProcessInfo.processInfo.environment[$0] },
      isStandardOutput: { path in
        var output = stat()
        var named = stat()
        return fstat(STDOUT_FILENO, &output) == 0 && stat(path, &named) == 0
          && output.st_dev == named.st_dev && output.st_ino == named.st_ino
      })
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

/// Writes to the process's standard output with `write` (which returns 0, or the `errno` of the
/// write that failed). When that fails (a full disk, a closed descriptor, a reader gone with
/// SIGPIPE ignored), what follows would be lost as well, and a consumer must not take the output
/// for whole: the process says so on standard error and ends with status 1 at once, from
/// whichever thread wrote, as coreutils' tools do. (Foundation's `FileHandle.write` stops the
/// process with a crash report instead.)
private func writeProcessOutput(_ write: () -> Int32) {
  let failure = write()
  guard failure != 0 else { return }
  let message = "Error: -: cannot write standard output: \(String(cString: strerror(failure)))\n"
  _ = message.utf8CString.withUnsafeBytes { bytes in
    OutputTarget.writeAll(STDERR_FILENO, UnsafeRawBufferPointer(rebasing: bytes.dropLast()))
  }
  _exit(ExitCode.failure.rawValue)
}

/// Standard input, when it is a pipe, holding 1 MiB instead of the kernel's default 64 KiB, once,
/// before it is first streamed: `batch` reads records of several kilobytes from it while its
/// threads keep the cores busy, and a 64 KiB pipe holds a few records only, so reader and writer
/// would wait on each other every few records. Unprivileged processes may grow a pipe to
/// `/proc/sys/fs/pipe-max-size` (1 MiB by default); when that fails, the pipe stays as it was.
private let standardInputPipeEnlarged: Void = {
  #if os(Linux)
    var status = stat()
    guard fstat(STDIN_FILENO, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return }
    // F_SETPIPE_SZ (F_LINUX_SPECIFIC_BASE + 7), which Glibc's module does not export.
    _ = fcntl(STDIN_FILENO, 1031, Int32(1 << 20))
  #endif
}()

/// Standard input read whole once, then handed out in parts: the streaming view of streams made
/// from a `Data` (tests).
private final class WholeInput: Sendable {
  private let state: Locked<(data: Data?, offset: Int)>
  private let readAll: @Sendable () throws -> Data

  init(_ readAll: @escaping @Sendable () throws -> Data) {
    self.readAll = readAll
    state = Locked((nil, 0))
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
