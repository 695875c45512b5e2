import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The partial file of a download: appended to as bytes arrive, digested on the way, truncated when
/// the download starts over.
///
/// Bytes arrive in small chunks (libcurl's 16 KiB) on the URLSession delegate queue, which
/// URLSession fills without backpressure on Linux: the delegate must keep up. So chunks are only
/// gathered there (by reference, not copied) until they make 1 MiB, and each such block is written
/// (one `writev`) and digested on an I/O queue of its own, on the other core. At most a few blocks wait for it; the delegate waits beyond that.
/// `length` counts every byte handed in; `synchronize()` writes everything handed in before it and
/// flushes the file, so a length read before it is on disk after it.
final class PartialFile: @unchecked Sendable {
  /// The file.
  let url: URL
  private let handle: FileHandle
  private let algorithm: DigestAlgorithm?
  private let lengthStorage = Atomic<Int64>(0)
  // Guards `staging` and `failure`: appends come from the delegate queue while the download's
  // watchdog flushes for the state file.
  private let lock = NSLock()
  private var staging = [Data]()
  private var stagedBytes = 0
  private var failure: DownloadError?
  // The file descriptor's position and the digest are used on `ioQueue` only; `slots` bounds the
  // blocks waiting for it.
  private let ioQueue = DispatchQueue(label: "resumedata.partial-file.io")
  private let slots = DispatchSemaphore(value: 8)
  private var digest: DigestBox?
  private static let blockSize = 1 << 20

  /// Bytes handed in, on disk or about to be.
  var length: Int64 { lengthStorage.load(ordering: .acquiring) }

  /// Opens (creating it when missing) the partial file for appending, and digests what it holds.
  ///
  /// - Throws: `DownloadError` with code `.io`.
  init(url: URL, algorithm: DigestAlgorithm?) throws(DownloadError) {
    self.url = url
    self.algorithm = algorithm
    do {
      if !FileManager.default.fileExists(atPath: url.path) {
        try FileManager.default.createDirectory(
          at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
          throw DownloadError(.io, "cannot create \(url.path)")
        }
      }
      handle = try FileHandle(forUpdating: url)
      if let algorithm {
        digest = try DigestBox(algorithm)
        // The prefix already on disk is part of the file's digest.
        while let chunk = try handle.read(upToCount: Self.blockSize), !chunk.isEmpty {
          digest?.digest.update(chunk)
        }
      }
      let end = try handle.seekToEnd()
      lengthStorage.store(Int64(end), ordering: .releasing)
    } catch let error as DownloadError {
      throw error
    } catch {
      throw DownloadError(.io, "cannot open \(url.path): \(error.localizedDescription)")
    }
  }

  deinit {
    ioQueue.sync {}
    try? handle.close()
  }

  /// Appends bytes.
  ///
  /// - Throws: the error of an earlier write, if one failed.
  func append(_ data: Data) throws(DownloadError) {
    lock.lock()
    defer { lock.unlock() }
    if let failure { throw failure }
    staging.append(data)
    stagedBytes += data.count
    lengthStorage.add(Int64(data.count), ordering: .releasing)
    if stagedBytes >= Self.blockSize { sendStaged() }
  }

  /// Hands the gathered bytes to the I/O queue; the lock is held.
  private func sendStaged() {
    guard !staging.isEmpty else { return }
    let block = staging
    staging = []
    stagedBytes = 0
    slots.wait()
    ioQueue.async { [self] in
      defer { slots.signal() }
      if let error = writeAll(block) {
        lock.withLock { if failure == nil { failure = error } }
        return
      }
      for chunk in block { digest?.digest.update(chunk) }
    }
  }

  /// Writes chunks at the file's position (on the I/O queue).
  private func writeAll(_ chunks: [Data]) -> DownloadError? {
    for chunk in chunks {
      let failed = chunk.withUnsafeBytes { bytes -> Int32? in
        var offset = 0
        while offset < bytes.count {
          let written = write(
            handle.fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
          if written < 0 {
            if errno == EINTR { continue }
            return errno
          }
          offset += written
        }
        return nil
      }
      if let failed {
        return DownloadError(.io, "cannot write \(url.path): \(String(cString: strerror(failed)))")
      }
    }
    return nil
  }

  /// Empties the file, to start over.
  func truncate() throws(DownloadError) {
    lock.lock()
    defer { lock.unlock() }
    staging.removeAll()
    stagedBytes = 0
    let fresh: DigestBox?
    do {
      fresh = try algorithm.map { try DigestBox($0) }
    } catch {
      throw DownloadError(.io, "cannot start a digest: \(error)")
    }
    let result = ioQueue.sync { () -> DownloadError? in
      digest = fresh
      guard ftruncate(handle.fileDescriptor, 0) == 0, lseek(handle.fileDescriptor, 0, SEEK_SET) == 0
      else {
        return DownloadError(
          .io, "cannot truncate \(url.path): \(String(cString: strerror(errno)))")
      }
      return nil
    }
    if let result { throw result }
    failure = nil
    lengthStorage.store(0, ordering: .releasing)
  }

  /// Writes everything handed in and forces it to disk, so that a length read before is on disk.
  func synchronize() throws(DownloadError) {
    lock.lock()
    sendStaged()
    lock.unlock()
    let result = ioQueue.sync { () -> DownloadError? in
      fsync(handle.fileDescriptor) == 0
        ? nil : DownloadError(.io, "cannot flush \(url.path): \(String(cString: strerror(errno)))")
    }
    if let error = lock.withLock({ failure }) ?? result { throw error }
  }

  /// The digest of every byte handed in, in lowercase hex.
  func currentDigest() -> String? {
    lock.lock()
    sendStaged()
    lock.unlock()
    return ioQueue.sync { digest?.digest.current().hexString }
  }
}

/// A digest in a box, so that a class can replace it.
private final class DigestBox {
  var digest: StreamingDigest

  init(_ algorithm: DigestAlgorithm) throws {
    digest = try StreamingDigest(algorithm)
  }
}
