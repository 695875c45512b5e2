import Foundation

/// Reading inputs and writing outputs the way every subcommand does.
enum Files {
  /// Largest input read, so a mistaken argument (a disk image, /dev/zero) fails fast instead of
  /// exhausting memory. Resume data and plists are far smaller.
  static let maximumInputSize = 1 << 30

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

  /// Reads a named file of at most `limit` bytes. With `regularFileOnly`, a FIFO or a device is
  /// refused rather than read (it could block, or never end), as a stream of records needs; a
  /// command's own argument may be one (`/dev/stdin`, a shell's `<(...)`).
  static func read(_ path: String, limit: Int, regularFileOnly: Bool = false) throws(CommandError)
    -> Data
  {
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw CommandError(
        .unreadableInput, errno == ENOENT ? "no such file" : String(cString: strerror(errno)),
        file: path)
    }
    switch status.st_mode & S_IFMT {
    case S_IFDIR:
      throw CommandError(.unreadableInput, "is a directory", file: path)
    case S_IFREG:
      break
    default:
      if regularFileOnly { throw CommandError(.unreadableInput, "not a regular file", file: path) }
    }
    let handle: FileHandle
    do {
      handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    } catch {
      throw CommandError(.unreadableInput, "cannot open: \(reason(error))", file: path)
    }
    defer { try? handle.close() }
    do {
      let data = try handle.read(upToCount: limit + 1) ?? Data()
      guard data.count <= limit else {
        throw CommandError(
          .unreadableInput, "larger than the \(limit)-byte input limit", file: path)
      }
      return data
    } catch let error as CommandError {
      throw error
    } catch {
      throw CommandError(.unreadableInput, "cannot read: \(reason(error))", file: path)
    }
  }

  /// Writes an output file atomically (a temporary file in the same directory, then a rename), so a
  /// failure never leaves a half-written file in place; `-` writes to standard output.
  static func write(_ data: Data, to path: String, streams: Streams?) throws(CommandError) {
    if path == "-", let streams {
      streams.writeStandardOutput(data)
      return
    }
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    // A temporary name beside the file, so that the rename stays on one file system; created
    // exclusively, with the permissions a new file gets (the umask applies), or the replaced
    // file's own (Foundation's atomic write would reset them).
    let temporary =
      directory + "/." + url.lastPathComponent + "."
      + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else {
      throw CommandError(.failure, "cannot write: \(String(cString: strerror(errno)))", file: path)
    }
    var failure: Int32 = 0
    var existing = stat()
    if stat(path, &existing) == 0, fchmod(descriptor, existing.st_mode & 0o7777) != 0 {
      failure = errno
    }
    if failure == 0 {
      failure = data.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
          let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
          if written < 0 {
            if errno == EINTR { continue }
            return errno
          }
          offset += written
        }
        return 0
      }
    }
    // Flushed before the rename, so that a crash of the machine cannot leave the new name on
    // an empty file.
    if failure == 0, fsync(descriptor) != 0 { failure = errno }
    close(descriptor)
    if failure == 0, rename(temporary, path) != 0 { failure = errno }
    if failure != 0 {
      unlink(temporary)
      throw CommandError(
        .failure, "cannot write: \(String(cString: strerror(failure)))", file: path)
    }
  }

  /// Replaces a file's contents atomically (a temporary file in the same directory, then a
  /// rename): at any instant the path holds either the old bytes or the new. With `backup`, the
  /// old file is first linked (or, where links are not allowed, copied) to `PATH.bak`; an existing
  /// `PATH.bak` is an error rather than lose the original it may hold, unless it holds the same
  /// bytes as the file (left by a run that stopped before the replace).
  static func replace(_ path: String, with data: Data, backup: Bool) throws(CommandError) {
    if backup {
      let backupPath = path + ".bak"
      if link(path, backupPath) != 0 {
        let linkError = errno
        if linkError == EEXIST {
          // The same bytes in both: a run stopped between its backup and its replace, and this
          // one carries on. Anything else may be an older original, which is not overwritten.
          guard FileManager.default.contentsEqual(atPath: path, andPath: backupPath) else {
            throw CommandError(
              .failure, "\(backupPath) already exists; not replacing it", file: path)
          }
        } else {
          // Copied atomically too, so that a stopped run never leaves half a backup.
          let original = try read(path, limit: maximumInputSize)
          do throws(CommandError) {
            try write(original, to: backupPath, streams: nil)
          } catch {
            throw CommandError(.failure, "cannot back up to \(backupPath)", file: path)
          }
        }
      }
    }
    try write(data, to: path, streams: nil)
  }

  private static func reason(_ error: Error) -> String {
    let nsError = error as NSError
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
      underlying.domain == NSPOSIXErrorDomain,
      let message = strerror(Int32(underlying.code))
    {
      return String(cString: message)
    }
    if nsError.domain == NSPOSIXErrorDomain, let message = strerror(Int32(nsError.code)) {
      return String(cString: message)
    }
    return nsError.localizedDescription
  }
}
