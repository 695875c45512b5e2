import Foundation
import OutputFiles
import ResumeDataBatch

/// Reading inputs and writing outputs the way every subcommand does: `FileAccess` (which `batch`
/// shares), with standard input and output for `-` and errors as the CLI reports them.
enum Files {
  /// Largest input read, so a mistaken argument (a disk image, /dev/zero) fails fast instead of
  /// exhausting memory. Resume data and plists are far smaller.
  static let maximumInputSize = FileAccess.maximumInputSize

  /// Reads a named file, or standard input for `-`.
  static func read(_ path: String, streams: Streams) throws(CommandError) -> Data {
    if path == "-" {
      do {
        return try streams.readStandardInput()
      } catch {
        throw CommandError(
          .unreadableInput, "cannot read standard input: \(error.localizedDescription)", file: "-")
      }
    }
    return try read(path, limit: maximumInputSize)
  }

  /// Reads a named file of at most `limit` bytes (`FileAccess.read`); with `regularFileOnly`, a
  /// FIFO or a device is refused unread.
  static func read(_ path: String, limit: Int, regularFileOnly: Bool = false) throws(CommandError)
    -> Data
  {
    do {
      return try FileAccess.read(path, limit: limit, regularFileOnly: regularFileOnly)
    } catch {
      throw CommandError(error)
    }
  }

  /// Writes an output file atomically (`FileAccess.write`); `-`, or a name for the file standard
  /// output is (`/dev/stdout`), writes to standard output.
  static func write(_ data: Data, to path: String, streams: Streams) throws(CommandError) {
    if streams.writesToStandardOutput(path) {
      streams.writeStandardOutput(data)
      return
    }
    do {
      try FileAccess.write(data, to: path)
    } catch {
      throw CommandError(error)
    }
  }

  /// Whether `path` names a directory (following links): nil when nothing is there.
  static func isDirectory(_ path: String) -> Bool? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    return status.st_mode & S_IFMT == S_IFDIR
  }

  /// Fails (exit 1) when `path` names something that is not a directory (following links); a
  /// path with nothing there yet is fine, as commands make their directories.
  static func requireDirectory(_ path: String, option: String) throws(CommandError) {
    guard isDirectory(path) != false else {
      throw CommandError(.failure, "not a directory (\(option))", file: path)
    }
  }

  /// Where writing to `path` leads (`OutputTarget.resolve`); a name that can take no file (a
  /// directory, a block device, a loop of links) fails (exit 1), before any work is done for it.
  static func outputTarget(_ path: String) throws(CommandError) -> OutputTarget {
    switch OutputTarget.resolve(path) {
    case .success(let target): return target
    case .failure(let error):
      throw CommandError(.failure, "cannot write: \(error.message)", file: path)
    }
  }

  /// `outputTarget`, for a file written only once a download completes: the directory it goes
  /// into must be there already (as curl and wget want it), so that a mistyped path fails before
  /// any request, rather than making directories and leaving the download's state in them.
  static func downloadTarget(_ path: String) throws(CommandError) -> OutputTarget {
    let target = try outputTarget(path)
    guard case .file(let file) = target else { return target }
    // By hand: NSString's deletingLastPathComponent traps on a bare name ("x") in Swift 6.3.1's
    // Foundation on Linux.
    let slash = file.lastIndex(of: "/")
    let parent = slash.map { String(file[..<$0]) } ?? ""
    let directory = parent.isEmpty ? (slash == nil ? "." : "/") : parent
    var status = stat()
    guard stat(directory, &status) == 0 else {
      let reason =
        errno == ENOENT ? "no such directory" : String(cString: strerror(errno))
      throw CommandError(
        .failure, "cannot write: \(directory): \(reason) (downloads make no directories for -o)",
        file: path)
    }
    guard status.st_mode & S_IFMT == S_IFDIR else {
      throw CommandError(.failure, "cannot write: \(directory) is not a directory", file: path)
    }
    return target
  }

  /// Replaces a file's contents atomically, with an optional backup (`FileAccess.replace`).
  static func replace(_ path: String, with data: Data, backup: Bool) throws(CommandError) {
    do {
      try FileAccess.replace(path, with: data, backup: backup)
    } catch {
      throw CommandError(error)
    }
  }
}

extension CommandError {
  /// A file that cannot be read (exit 66) or written (exit 1).
  init(_ error: FileAccessError) {
    self.init(
      error.kind == .unreadable ? .unreadableInput : .failure, error.message, file: error.file)
  }
}
