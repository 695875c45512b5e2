import Foundation

/// Reading and replacing files the way `batch` does for its "path" records, and every command of
/// the command-line tool for its own files: bounded reads, atomic writes, backups that never
/// overwrite an original.
package enum FileAccess {
  /// Largest input read, so a mistaken argument (a disk image, /dev/zero) fails fast instead of
  /// exhausting memory. Resume data and plists are far smaller.
  package static let maximumInputSize = 1 << 30

  /// Reads from a file descriptor into a buffer, retrying when a signal interrupts the read.
  ///
  /// - Returns: the number of bytes read, 0 at the end of the input.
  package static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws
    -> Int
  {
    while true {
      let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
      if count >= 0 { return count }
      guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
  }

  /// Reads a named file of at most `limit` bytes. With `regularFileOnly`, a FIFO or a device is
  /// refused rather than read (it could block, or never end), as a stream of records needs; a
  /// command's own argument may be one (`/dev/stdin`, a shell's `<(...)`).
  package static func read(_ path: String, limit: Int, regularFileOnly: Bool = false)
    throws(FileAccessError) -> Data
  {
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw FileAccessError(
        .unreadable, errno == ENOENT ? "no such file" : String(cString: strerror(errno)),
        file: path)
    }
    switch status.st_mode & S_IFMT {
    case S_IFDIR:
      throw FileAccessError(.unreadable, "is a directory", file: path)
    case S_IFREG:
      break
    default:
      if regularFileOnly { throw FileAccessError(.unreadable, "not a regular file", file: path) }
    }
    let handle: FileHandle
    do {
      handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    } catch {
      throw FileAccessError(.unreadable, "cannot open: \(reason(error))", file: path)
    }
    defer { try? handle.close() }
    do {
      let data = try handle.read(upToCount: limit + 1) ?? Data()
      guard data.count <= limit else {
        throw FileAccessError(
          .unreadable, "larger than the \(limit)-byte input limit", file: path)
      }
      return data
    } catch let error as FileAccessError {
      throw error
    } catch {
      throw FileAccessError(.unreadable, "cannot read: \(reason(error))", file: path)
    }
  }

  /// Writes a file atomically (a temporary file in the same directory, then a rename), so a
  /// failure never leaves a half-written file in place.
  package static func write(_ data: Data, to path: String) throws(FileAccessError) {
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
      throw FileAccessError(
        .failure, "cannot write: \(String(cString: strerror(errno)))", file: path)
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
      throw FileAccessError(
        .failure, "cannot write: \(String(cString: strerror(failure)))", file: path)
    }
  }

  /// Replaces a file's contents atomically (a temporary file in the same directory, then a
  /// rename): at any instant the path holds either the old bytes or the new. With `backup`, the
  /// old file is first linked (or, where links are not allowed, copied) to `PATH.bak`; an existing
  /// `PATH.bak` is an error rather than lose the original it may hold, unless it holds the same
  /// bytes as the file (left by a run that stopped before the replace).
  package static func replace(_ path: String, with data: Data, backup: Bool)
    throws(FileAccessError)
  {
    if backup {
      let backupPath = path + ".bak"
      if link(path, backupPath) != 0 {
        let linkError = errno
        if linkError == EEXIST {
          // The same bytes in both: a run stopped between its backup and its replace, and this
          // one carries on. Anything else may be an older original, which is not overwritten.
          guard FileManager.default.contentsEqual(atPath: path, andPath: backupPath) else {
            throw FileAccessError(
              .failure, "\(backupPath) already exists; not replacing it", file: path)
          }
        } else {
          // Copied atomically too, so that a stopped run never leaves half a backup.
          let original = try read(path, limit: maximumInputSize)
          do throws(FileAccessError) {
            try write(original, to: backupPath)
          } catch {
            throw FileAccessError(.failure, "cannot back up to \(backupPath)", file: path)
          }
        }
      }
    }
    try write(data, to: path)
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

/// Why a file could not be read or written, and which file.
package struct FileAccessError: Error, Sendable, Equatable {
  /// Whether reading failed (the input is missing or unreadable) or writing did.
  package enum Kind: Sendable, Equatable {
    /// The file cannot be read: missing, a directory, too large, not a regular file.
    case unreadable
    /// The file cannot be written, or its backup made.
    case failure
  }

  /// What failed.
  package var kind: Kind
  /// What went wrong, without the file's name.
  package var message: String
  /// The file.
  package var file: String

  /// An error of `kind` in `file`.
  package init(_ kind: Kind, _ message: String, file: String) {
    self.kind = kind
    self.message = message
    self.file = file
  }
}
