import OutputFiles
import PortableFoundation

/// Reading and replacing files the way `batch` does for its "path" records, and every command of
/// the command-line tool for its own files: bounded reads, atomic writes, backups that never
/// overwrite an original.
package enum FileAccess {
  /// Largest input read, so a mistaken argument (a disk image, /dev/zero) fails fast instead of
  /// exhausting memory. Resume data and plists are far smaller.
  package static let maximumInputSize = 1 << 30

  /// Reads from a file descriptor into a buffer, retrying when a signal interrupts the read
  /// (`DescriptorReads.read`).
  ///
  /// - Returns: the number of bytes read, 0 at the end of the input.
  /// - Throws: `InputReadError` with the system's reason ("Is a directory").
  package static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer)
    throws(InputReadError) -> Int
  {
    do {
      return try DescriptorReads.read(descriptor, into: buffer)
    } catch {
      throw InputReadError(error)
    }
  }

  /// Reads a descriptor to its end (standard input), at most `limit` bytes: more is an error
  /// rather than memory exhausted by a mistaken `cat /dev/zero |` (`DescriptorReads.readAll`).
  package static func readAll(_ descriptor: Int32, limit: Int) throws(InputReadError) -> Data {
    do {
      return try DescriptorReads.readAll(descriptor, limit: limit)
    } catch {
      throw InputReadError(error)
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
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw FileAccessError(
        .unreadable, "cannot open: \(String(cString: strerror(errno)))", file: path)
    }
    defer { close(descriptor) }
    do {
      return try DescriptorReads.readAll(descriptor, limit: limit)
    } catch {
      // A system error is a read that failed; a file over the limit says only that.
      let reason = InputReadError(error).message
      guard case .system = error else { throw FileAccessError(.unreadable, reason, file: path) }
      throw FileAccessError(.unreadable, "cannot read: \(reason)", file: path)
    }
  }

  /// Writes `data` where `path` leads (`OutputTarget.write`): a regular file (or a new one) is
  /// replaced atomically, through any symbolic links to it, so a failure never leaves a
  /// half-written file in place; a FIFO or a character device (`/dev/stdout`, `/dev/null`) is
  /// written into.
  package static func write(_ data: Data, to path: String) throws(FileAccessError) {
    let written = data.withUnsafeBytes { bytes in
      Result { () throws(OutputTargetError) in try OutputTarget.write(bytes, to: path) }
    }
    if case .failure(let error) = written {
      throw FileAccessError(.failure, "cannot write: \(error.message)", file: path)
    }
  }

  /// Replaces a file's contents atomically (a temporary file in the same directory, then a
  /// rename): at any instant the file holds either the old bytes or the new. A symbolic link is
  /// followed to the file it names, and stays a link; anything but a regular file is refused.
  /// With `backup`, the old file is first linked (or, where links are not allowed, copied) to
  /// `PATH.bak`, beside the name given; an existing `PATH.bak` is an error rather than lose the
  /// original it may hold, unless it holds the same bytes as the file (left by a run that stopped
  /// before the replace).
  package static func replace(_ path: String, with data: Data, backup: Bool)
    throws(FileAccessError)
  {
    let target: String
    switch OutputTarget.resolve(path) {
    case .success(.file(let file)): target = file
    case .success(.stream):
      throw FileAccessError(.failure, "not a regular file; not replaced", file: path)
    case .failure(let error):
      throw FileAccessError(.failure, "cannot write: \(error.message)", file: path)
    }
    if backup {
      let backupPath = path + ".bak"
      // The file itself, not a link to it: `link` on a link's name would link the link, and
      // the backup would then show the new bytes.
      if link(target, backupPath) != 0 {
        let linkError = errno
        if linkError == EEXIST {
          // The same bytes in both: a run stopped between its backup and its replace, and this
          // one carries on. Anything else may be an older original, which is not overwritten.
          guard FileManager.default.contentsEqual(atPath: target, andPath: backupPath) else {
            throw FileAccessError(
              .failure, "\(backupPath) already exists; not replacing it", file: path)
          }
        } else {
          // Copied atomically too, so that a stopped run never leaves half a backup.
          let original = try read(target, limit: maximumInputSize)
          do throws(FileAccessError) {
            try write(original, to: backupPath)
          } catch {
            throw FileAccessError(.failure, "cannot back up to \(backupPath)", file: path)
          }
        }
      }
    }
    try write(data, to: target)
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

/// Why a stream could not be read to its end: the system's reason, or the input limit passed.
package struct InputReadError: Error, LocalizedError, Sendable, Equatable {
  /// What went wrong: "Is a directory", "larger than the 1073741824-byte input limit".
  package var message: String

  /// An error with its message.
  package init(_ message: String) { self.message = message }

  /// The error of a failed read.
  package init(errno code: Int32) { message = String(cString: strerror(code)) }

  /// The error of a read that stopped.
  package init(_ failure: DescriptorReads.Failure) {
    switch failure {
    case .system(let code): self.init(errno: code)
    case .longerThan(let limit): self.init("larger than the \(limit)-byte input limit")
    }
  }

  /// The message, which `localizedDescription` gives.
  package var errorDescription: String? { message }
}
