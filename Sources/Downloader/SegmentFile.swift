import Foundation
import PortableFoundation

#if canImport(Glibc)
  import Glibc
#endif

/// The partial file of a segmented download: allocated to the complete length, written at each
/// segment's offsets as bytes arrive, and digested in file order.
///
/// Writes go straight to the file (`pwrite`, one per chunk) from the delegate queue: segments
/// arrive interleaved, so there is no single run of bytes to gather into blocks, and the page
/// cache already does that. The digest follows the contiguous prefix as it is written (a chunk
/// that lands where the digest has got to is fed at once); whatever was written out of order is
/// read back when the file is complete.
final class SegmentFile: @unchecked Sendable {
  /// The file.
  let url: URL
  private let descriptor: Int32
  private let algorithm: DigestAlgorithm?
  // The digest and how far into the file it has got; written from the delegate queue, read when
  // the file is complete.
  private let digestState: Locked<DigestCursor>

  /// Opens (creating it when missing) the partial file.
  ///
  /// - Throws: `DownloadError` with code `.io`.
  init(url: URL, algorithm: DigestAlgorithm?) throws(DownloadError) {
    self.url = url
    self.algorithm = algorithm
    do {
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    } catch {
      throw DownloadError(.io, "cannot create \(url.deletingLastPathComponent().path): \(error)")
    }
    descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw DownloadError(.io, "cannot open \(url.path): \(String(cString: strerror(errno)))")
    }
    do {
      digestState = Locked(try DigestCursor(algorithm))
    } catch {
      close(descriptor)
      throw error
    }
  }

  deinit {
    close(descriptor)
  }

  /// The file's size now.
  func size() throws(DownloadError) -> Int64 {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw failure("cannot read the size of") }
    return Int64(status.st_size)
  }

  /// Reserves the blocks of a file growing from `current` to `length` bytes and makes it that
  /// long: 0, or the error number (`EOPNOTSUPP` or `EINVAL` where the file system cannot reserve).
  /// The one platform choice of this file: Darwin has no `posix_fallocate`, and reserves with
  /// `F_PREALLOCATE` (not built here: no Apple SDK; see docs/apple.md).
  private static func reserve(_ descriptor: Int32, from current: Int64, to length: Int64) -> Int32 {
    #if canImport(Darwin)
      var store = fstore_t(
        fst_flags: UInt32(F_ALLOCATEALL), fst_posmode: F_PEOFPOSMODE, fst_offset: 0,
        fst_length: off_t(length - current), fst_bytesalloc: 0)
      if fcntl(descriptor, F_PREALLOCATE, &store) == -1 {
        return errno == ENOTSUP || errno == EOPNOTSUPP ? EOPNOTSUPP : errno
      }
      return ftruncate(descriptor, off_t(length)) == 0 ? 0 : errno
    #else
      return posix_fallocate(descriptor, 0, off_t(length))
    #endif
  }

  /// Makes the file `length` bytes long, reserving its blocks where the file system can (so that
  /// a full disk shows now, not in the middle of a segment); what was there is kept.
  func allocate(_ length: Int64) throws(DownloadError) {
    let current = try size()
    if current >= length { return }
    let result = Self.reserve(descriptor, from: current, to: length)
    // Some file systems cannot reserve blocks (EOPNOTSUPP): a sparse file of that size will do.
    if result != 0 {
      guard result == EOPNOTSUPP || result == EINVAL, ftruncate(descriptor, off_t(length)) == 0
      else {
        errno = result == 0 ? errno : result
        throw failure("cannot allocate \(length) bytes for")
      }
    }
  }

  /// Empties the file, to start over.
  func truncate() throws(DownloadError) {
    guard ftruncate(descriptor, 0) == 0 else { throw failure("cannot truncate") }
    let algorithm = algorithm
    try digestState.withLock { (cursor: inout DigestCursor) throws(DownloadError) in
      cursor = try DigestCursor(algorithm)
    }
  }

  /// Writes `bytes` at `offset`; a chunk that continues the digested prefix is digested too.
  func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(DownloadError) {
    var done = 0
    while done < bytes.count {
      let written = pwrite(
        descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
      if written < 0 {
        if errno == EINTR { continue }
        throw failure("cannot write")
      }
      done += written
    }
    digestState.withLock { cursor in
      if cursor.position == offset { cursor.feed(bytes) }
    }
  }

  /// Forces everything written so far to disk.
  func synchronize() throws(DownloadError) {
    guard fsync(descriptor) == 0 else { throw failure("cannot flush") }
  }

  /// Shortens the file to `length` bytes (a complete file allocated longer than it turned out).
  func trim(to length: Int64) throws(DownloadError) {
    guard ftruncate(descriptor, off_t(length)) == 0 else { throw failure("cannot truncate") }
  }

  /// The digest of the first `length` bytes of the file, in lowercase hex: what was digested as
  /// it arrived, then the rest read back in order.
  func digest(of length: Int64) throws(DownloadError) -> String? {
    guard algorithm != nil else { return nil }
    let blockSize = 1 << 20
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 4096)
    defer { buffer.deallocate() }
    return try digestState.withLock { cursor throws(DownloadError) -> String? in
      while cursor.position < length {
        let count = Int(min(Int64(blockSize), length - cursor.position))
        let read = pread(descriptor, buffer.baseAddress!, count, off_t(cursor.position))
        if read < 0, errno == EINTR { continue }
        guard read > 0 else { throw failure("cannot read back") }
        cursor.feed(UnsafeRawBufferPointer(rebasing: buffer[..<read]))
      }
      return cursor.digest?.current().hexString
    }
  }

  private func failure(_ what: String) -> DownloadError {
    DownloadError(.io, "\(what) \(url.path): \(String(cString: strerror(errno)))")
  }
}

/// A digest and the file offset it has reached.
private struct DigestCursor: ~Copyable {
  var digest: StreamingDigest?
  var position: Int64 = 0

  init(_ algorithm: DigestAlgorithm?) throws(DownloadError) {
    guard let algorithm else {
      // Nothing to digest: the cursor never matches a write.
      position = -1
      return
    }
    do {
      digest = try StreamingDigest(algorithm)
    } catch {
      throw DownloadError(.io, "cannot start a digest: \(error)")
    }
  }

  mutating func feed(_ bytes: UnsafeRawBufferPointer) {
    digest?.update(bytes)
    position += Int64(bytes.count)
  }
}
