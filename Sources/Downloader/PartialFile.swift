import Dispatch
import Foundation
import PortableFoundation

#if canImport(Glibc)
  import Glibc
#endif

/// The partial file of a download: appended to as bytes arrive, digested on the way, truncated when
/// the download starts over.
///
/// Bytes arrive in pieces (libcurl's, up to 256 KiB; URLSession's 16 KiB) on the transport's thread,
/// which must keep up with the network. So each piece is only copied there into a 1 MiB block, and
/// each full block is written (one `write`) on an I/O queue of its own and digested at the same time
/// on another. The
/// blocks come from a fixed pool, allocated once and reused: the chunk itself is freed at once, so
/// memory does not depend on how long the download runs or on how the allocator treats many small
/// buffers freed on another thread. When every block is waiting for the I/O queue, the delegate
/// waits (and so does libcurl: directly, or through URLSession's bounded delegate queue).
/// `length` counts every byte handed in; `synchronize()` writes everything handed in before it and
/// flushes the file, so a length read before it is on disk after it.
final class PartialFile: @unchecked Sendable {
  /// The file.
  let url: URL
  private let handle: FileHandle
  private let algorithm: DigestAlgorithm?
  private let lengthStorage = Locked<Int64>(0)
  // Guards `block` and `filled`: appends come from the delegate queue while the download's
  // watchdog flushes for the state file. Held while waiting for a free block.
  private let lock = NSLock()
  private var block: UnsafeMutableRawBufferPointer?
  private var filled = 0
  // Guards `pool` and `failure`; never held while waiting (the I/O queue takes it).
  private let poolLock = NSLock()
  // The free blocks; `freeBlocks` counts them, so that taking one waits for the I/O queue.
  private var pool: [UnsafeMutableRawBufferPointer] = []
  private var failure: DownloadError?
  private let freeBlocks: DispatchSemaphore
  // The file descriptor's position is used on `ioQueue` only, the digest on `digestQueue` only:
  // a block is written and digested at once, on two threads (the digest in the order the blocks
  // come, as the writes are), and goes back to the pool when both are done.
  private let ioQueue = DispatchQueue(label: "resumedata.partial-file.io")
  private let digestQueue = DispatchQueue(label: "resumedata.partial-file.digest")
  private var digest: DigestBox?
  private static let blockSize = 1 << 20
  private static let blockCount = 4

  /// Bytes handed in, on disk or about to be.
  var length: Int64 { lengthStorage.withLock { $0 } }

  /// Opens (creating it when missing) the partial file for appending, and digests what it holds.
  ///
  /// - Throws: `DownloadError` with code `.io`.
  init(url: URL, algorithm: DigestAlgorithm?) throws(DownloadError) {
    self.url = url
    self.algorithm = algorithm
    freeBlocks = DispatchSemaphore(value: Self.blockCount)
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
      lengthStorage.withLock { $0 = Int64(end) }
    } catch let error as DownloadError {
      throw error
    } catch {
      throw DownloadError(.io, "cannot open \(url.path): \(error.localizedDescription)")
    }
    pool = (0..<Self.blockCount).map { _ in
      .allocate(byteCount: Self.blockSize, alignment: 4096)
    }
  }

  deinit {
    ioQueue.sync {}
    digestQueue.sync {}
    try? handle.close()
    block.map { $0.deallocate() }
    for block in pool { block.deallocate() }
  }

  /// Appends bytes.
  ///
  /// - Throws: the error of an earlier write, if one failed.
  func append(_ bytes: UnsafeRawBufferPointer) throws(DownloadError) {
    lock.lock()
    defer { lock.unlock() }
    if let failure = poolLock.withLock({ failure }) { throw failure }
    var offset = 0
    while offset < bytes.count {
      let target = block ?? takeBlock()
      let count = min(bytes.count - offset, target.count - filled)
      (target.baseAddress! + filled).copyMemory(
        from: bytes.baseAddress! + offset, byteCount: count)
      filled += count
      offset += count
      if filled == target.count { sendBlock() }
    }
    lengthStorage.withLock { $0 += Int64(bytes.count) }
  }

  /// A free block, made the one being filled (waiting for the I/O queue to free one); the lock is
  /// held.
  private func takeBlock() -> UnsafeMutableRawBufferPointer {
    freeBlocks.wait()
    let taken = poolLock.withLock { pool.removeLast() }
    block = taken
    filled = 0
    return taken
  }

  /// Hands the block being filled to the I/O queue; the lock is held.
  private func sendBlock() {
    guard let memory = block else { return }
    let sent = Block(memory: memory, count: filled)
    block = nil
    filled = 0
    guard sent.count > 0 else {
      giveBack(memory)
      return
    }
    let users = BlockUsers(algorithm == nil ? 1 : 2)
    ioQueue.async { [self] in
      let bytes = UnsafeRawBufferPointer(rebasing: sent.memory[..<sent.count])
      if let error = writeAll(bytes) {
        poolLock.withLock { if failure == nil { failure = error } }
      }
      if users.release() { giveBack(sent.memory) }
    }
    guard algorithm != nil else { return }
    digestQueue.async { [self] in
      digest?.digest.update(UnsafeRawBufferPointer(rebasing: sent.memory[..<sent.count]))
      if users.release() { giveBack(sent.memory) }
    }
  }

  private func giveBack(_ block: UnsafeMutableRawBufferPointer) {
    poolLock.withLock { pool.append(block) }
    freeBlocks.signal()
  }

  /// Writes bytes at the file's position (on the I/O queue).
  private func writeAll(_ bytes: UnsafeRawBufferPointer) -> DownloadError? {
    var offset = 0
    while offset < bytes.count {
      let written = write(handle.fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return DownloadError(.io, "cannot write \(url.path): \(String(cString: strerror(errno)))")
      }
      offset += written
    }
    return nil
  }

  /// Empties the file, to start over.
  func truncate() throws(DownloadError) {
    lock.lock()
    defer { lock.unlock() }
    if let block {
      giveBack(block)
      self.block = nil
      filled = 0
    }
    let fresh: DigestBox?
    do {
      fresh = try algorithm.map { try DigestBox($0) }
    } catch {
      throw DownloadError(.io, "cannot start a digest: \(error)")
    }
    // After the blocks still being digested: they belong to the version being discarded.
    digestQueue.sync { digest = fresh }
    let result = ioQueue.sync { () -> DownloadError? in
      guard ftruncate(handle.fileDescriptor, 0) == 0, lseek(handle.fileDescriptor, 0, SEEK_SET) == 0
      else {
        return DownloadError(
          .io, "cannot truncate \(url.path): \(String(cString: strerror(errno)))")
      }
      return nil
    }
    if let result { throw result }
    poolLock.withLock { failure = nil }
    lengthStorage.withLock { $0 = 0 }
  }

  /// Writes everything handed in and forces it to disk, so that a length read before is on disk.
  ///
  /// The flush runs on the calling thread, not on the I/O queue: it waits for the disk to take
  /// everything written so far (hundreds of megabytes a second into a download), and the blocks
  /// arriving meanwhile must keep being written, or the pool fills, the delegate waits and the
  /// transfer stalls for as long as the disk takes. `fsync` makes every `write` that returned
  /// before it durable, whatever is written while it runs.
  func synchronize() throws(DownloadError) {
    lock.lock()
    sendBlock()
    lock.unlock()
    // Every block handed in so far is written (into the page cache) once this returns.
    ioQueue.sync {}
    let flushed = fsync(handle.fileDescriptor) == 0
    let result =
      flushed
      ? nil : DownloadError(.io, "cannot flush \(url.path): \(String(cString: strerror(errno)))")
    if let error = poolLock.withLock({ failure }) ?? result { throw error }
  }

  /// The digest of every byte handed in, in lowercase hex.
  func currentDigest() -> String? {
    lock.lock()
    sendBlock()
    lock.unlock()
    return digestQueue.sync { digest?.digest.current().hexString }
  }
}

/// A filled block on its way to the I/O queue, which alone touches it until it is given back.
private struct Block: @unchecked Sendable {
  let memory: UnsafeMutableRawBufferPointer
  let count: Int
}

/// How many of the two queues (the write's, the digest's) still use a block.
private final class BlockUsers: @unchecked Sendable {
  private let count: Locked<Int>

  init(_ users: Int) { count = Locked(users) }

  /// One user is done; true for the last.
  func release() -> Bool {
    count.withLock { count in
      count -= 1
      return count == 0
    }
  }
}

/// A digest in a box, so that a class can replace it.
private final class DigestBox {
  var digest: StreamingDigest

  init(_ algorithm: DigestAlgorithm) throws {
    digest = try StreamingDigest(algorithm)
  }
}
