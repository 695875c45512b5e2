import PortableFoundation

/// Where bytes written to a path land, as a shell's `>` would put them there, for every command
/// that writes a file it is given (`-o`, `--in-place`, `download -o`, `--resume-data`).
///
/// A regular file is replaced atomically (a temporary file beside it, then a rename), so that it
/// holds the old bytes or the new, never half of them. Renaming over a name that is not a regular
/// file would put a file in its place: a symbolic link would stop being one, a FIFO's reader
/// would wait forever, and run by root, `-o /dev/null` would replace the device. So a chain of
/// symbolic links is followed to the file it names (the links stay as they are), and a FIFO, a
/// terminal or another character device is written into as it is.
package enum OutputTarget: Equatable, Sendable {
  /// A regular file, or a name nothing has yet (a new file): replace it atomically.
  case file(path: String)
  /// A FIFO, a terminal or another character device, or whatever an open descriptor's link
  /// (`/dev/stdout`) leads to: open it and write into it.
  case stream(path: String)

  /// Symbolic links followed at most, as the kernel's own limit (`MAXSYMLINKS` on Linux).
  package static let maximumLinks = 40

  /// What `path` leads to.
  ///
  /// - Returns: the target, or why nothing is written there (a directory, a block device, a
  ///   socket, a loop of links), as a message without the path.
  package static func resolve(_ path: String) -> Result<OutputTarget, OutputTargetError> {
    // What the name leads to, through every link, as `open` would reach it: a descriptor's link
    // under /proc (`/dev/stdout` is one) names a pipe or a terminal by a text that is no path.
    var status = stat()
    if stat(path, &status) == 0 {
      switch status.st_mode & S_IFMT {
      case S_IFREG:
        break
      case S_IFCHR, S_IFIFO:
        return .success(.stream(path: path))
      case S_IFDIR:
        return .failure(OutputTargetError("is a directory"))
      case S_IFBLK:
        // A disk: writing a blob over its first blocks is never what was meant.
        return .failure(OutputTargetError("is a block device; not written to"))
      default:
        return .failure(OutputTargetError("is a socket; not written to"))
      }
    } else if errno != ENOENT {
      return .failure(OutputTargetError(errno: errno))
    }
    // A regular file, or nothing yet: the file to replace is at the end of the links.
    var current = path
    for _ in 0...maximumLinks {
      guard lstat(current, &status) == 0 else {
        // Not there yet: a new file, where the last link points if there were any. Anything
        // else (a parent that is not a directory, no permission) fails where it is created.
        return errno == ENOENT
          ? .success(.file(path: current)) : .failure(OutputTargetError(errno: errno))
      }
      guard status.st_mode & S_IFMT == S_IFLNK else { return .success(.file(path: current)) }
      // A descriptor's link (`/proc/self/fd/1`, `/dev/fd/1`) whose file is open in this
      // process or another: it is written through, as a shell's `>` does, not replaced.
      if isProcessLink(current) { return .success(.stream(path: path)) }
      guard let target = linkTarget(current) else {
        return .failure(OutputTargetError(errno: errno))
      }
      current = target.hasPrefix("/") ? target : directory(of: current) + target
    }
    return .failure(OutputTargetError(errno: ELOOP))
  }

  /// Whether a link lies in /proc, where links name open descriptors, not paths: its directory
  /// is there once every link to it is followed (`/dev/fd` is `/proc/self/fd`).
  private static func isProcessLink(_ path: String) -> Bool {
    let directory = directory(of: path)
    guard let resolved = realpath(directory.isEmpty ? "." : directory, nil) else { return false }
    defer { free(resolved) }
    return String(cString: resolved).hasPrefix("/proc/")
  }

  /// Writes `bytes` where `path` leads: a regular file (or a new one) is replaced atomically, so
  /// that at any instant it holds the old bytes or the new; a `.stream` is written into.
  ///
  /// The new file is written beside the old, under a temporary name (so that the rename stays on
  /// one file system), created exclusively with the permissions a new file gets (the umask
  /// applies) or the replaced file's own, and its owner where this process may give it
  /// (Foundation's atomic write resets both), and flushed before the rename, so that a crash of
  /// the machine cannot leave the name on an empty file.
  package static func write(_ bytes: UnsafeRawBufferPointer, to path: String)
    throws(OutputTargetError)
  {
    let target: String
    switch resolve(path) {
    case .failure(let error):
      throw error
    case .success(.stream(let device)):
      let failure = writeStream(device, bytes)
      guard failure == 0 else { throw OutputTargetError(errno: failure) }
      return
    case .success(.file(let file)):
      target = file
    }
    try replaceFile(bytes, target)
  }

  /// `write`, for a file that must be read back (a download's state): a regular file (or a new
  /// one) is replaced atomically, through any links; a FIFO or a device, whose reader would take
  /// the bytes away, is refused ("not a regular file") and left as it is.
  package static func writeRegularFile(_ bytes: UnsafeRawBufferPointer, to path: String)
    throws(OutputTargetError)
  {
    switch resolve(path) {
    case .failure(let error): throw error
    case .success(.stream): throw OutputTargetError("not a regular file")
    case .success(.file(let file)): try replaceFile(bytes, file)
    }
  }

  /// Replaces the regular file `target` (the end of any links) atomically.
  private static func replaceFile(_ bytes: UnsafeRawBufferPointer, _ target: String)
    throws(OutputTargetError)
  {
    let slash = target.lastIndex(of: "/")
    let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
    let temporary =
      directory(of: target) + "." + name + "."
      + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else { throw OutputTargetError(errno: errno) }
    var failure: Int32 = 0
    var existing = stat()
    if stat(target, &existing) == 0 {
      // Only root may give a file away; anyone else keeps the file as theirs. Before the mode,
      // since a change of owner clears the set-user-ID bits.
      _ = fchown(descriptor, existing.st_uid, existing.st_gid)
      if fchmod(descriptor, existing.st_mode & 0o7777) != 0 { failure = errno }
    }
    if failure == 0 { failure = writeAll(descriptor, bytes) }
    if failure == 0, fsync(descriptor) != 0 { failure = errno }
    close(descriptor)
    if failure == 0, rename(temporary, target) != 0 { failure = errno }
    if failure != 0 {
      unlink(temporary)
      throw OutputTargetError(errno: failure)
    }
  }

  /// The path's directory, with its trailing slash: where a relative link's target starts.
  private static func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[...slash])
  }

  /// The text of a symbolic link, or nil with `errno` set.
  private static func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count >= 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Writes all of `bytes` to a descriptor, going on after short writes and interrupted ones.
  ///
  /// - Returns: 0, or the `errno` of the write that failed.
  package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
    writeAll(descriptor, pieces: [bytes])
  }

  /// Writes all of `pieces`, one after another, to a descriptor, with as few `writev` calls as
  /// the system's limit on pieces a call allows, going on after short writes and interrupted ones.
  ///
  /// - Parameter writeVectors: the system's `writev` (tests give one that writes less).
  /// - Returns: 0, or the `errno` of the write that failed.
  package static func writeAll(
    _ descriptor: Int32, pieces: [UnsafeRawBufferPointer],
    writeVectors: (Int32, UnsafePointer<iovec>, Int32) -> Int = systemWritev
  ) -> Int32 {
    var vectors = pieces.compactMap { piece in
      piece.isEmpty
        ? nil
        : iovec(
          iov_base: UnsafeMutableRawPointer(mutating: piece.baseAddress), iov_len: piece.count)
    }
    var first = 0
    while first < vectors.count {
      let count = Int32(min(vectors.count - first, piecesPerWrite))
      var written = vectors.withUnsafeBufferPointer {
        writeVectors(descriptor, $0.baseAddress! + first, count)
      }
      if written < 0 {
        if errno == EINTR { continue }
        return errno
      }
      // Past the pieces written whole, into the one written in part.
      while first < vectors.count, written >= vectors[first].iov_len {
        written -= vectors[first].iov_len
        first += 1
      }
      if written > 0 {
        vectors[first].iov_base += written
        vectors[first].iov_len -= written
      }
    }
    return 0
  }

  /// Pieces a `writev` takes at most: `IOV_MAX`, 1,024 on Linux and macOS alike.
  static let piecesPerWrite = 1024

  /// Opens a `.stream` target and writes all of `bytes` into it. A FIFO's open waits for its
  /// reader, as a shell's redirection does.
  ///
  /// - Returns: 0, or the `errno` of the open or write that failed.
  package static func writeStream(_ path: String, _ bytes: UnsafeRawBufferPointer) -> Int32 {
    withStream(path) { writeAll($0, bytes) }
  }

  /// Opens a `.stream` target and copies the file at `source` into it, a megabyte at a time.
  ///
  /// - Returns: 0, or the `errno` of the open, read or write that failed.
  package static func copyToStream(from source: String, _ path: String) -> Int32 {
    let input = open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { return errno }
    defer { close(input) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    defer { buffer.deallocate() }
    return withStream(path) { output in
      while true {
        let count: Int
        do throws(DescriptorReads.Failure) {
          count = try DescriptorReads.read(input, into: buffer)
        } catch {
          return error.code
        }
        if count == 0 { return 0 }
        let failure = writeAll(output, UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        if failure != 0 { return failure }
      }
    }
  }

  /// Opens `path` for writing, hands its descriptor to `body`, and closes it.
  private static func withStream(_ path: String, _ body: (Int32) -> Int32) -> Int32 {
    var descriptor: Int32
    repeat {
      // Truncating, as `>` does, matters only for a file behind a descriptor's link: Linux
      // ignores it for FIFOs and devices.
      descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
    } while descriptor < 0 && errno == EINTR
    guard descriptor >= 0 else { return errno }
    var failure = body(descriptor)
    // A close that fails can be the first report of a failed write (NFS, some devices).
    if close(descriptor) != 0, failure == 0, errno != EINTR { failure = errno }
    return failure
  }
}

/// The system's `writev`.
private func systemWritev(_ descriptor: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int32)
  -> Int
{
  writev(descriptor, vectors, count)
}

/// Why nothing is written where a path leads.
package struct OutputTargetError: Error, Equatable, Sendable {
  /// What is wrong, without the path: "is a directory", "Too many levels of symbolic links".
  package var message: String

  /// An error with its message.
  package init(_ message: String) { self.message = message }

  /// An error from a failed system call.
  package init(errno code: Int32) { message = String(cString: strerror(code)) }
}
