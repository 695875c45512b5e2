import Foundation
import Synchronization

/// The partial file of a download: appended to as bytes arrive, digested on the way, truncated when
/// the download starts over.
///
/// Writes happen on the URLSession delegate queue of the one transfer running at a time; the length
/// is atomic so that the download's watchdog can read it meanwhile. The digest covers exactly the
/// bytes on disk: on opening, the existing prefix is read and digested first.
final class PartialFile: @unchecked Sendable {
  /// The file.
  let url: URL
  private let handle: FileHandle
  private let algorithm: DigestAlgorithm?
  private var digest: DigestBox?
  private let lengthStorage = Atomic<Int64>(0)

  /// Bytes on disk.
  var length: Int64 { lengthStorage.load(ordering: .acquiring) }

  /// Opens (creating it when missing) the partial file for appending.
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
      let end = try handle.seekToEnd()
      lengthStorage.store(Int64(end), ordering: .releasing)
      if let algorithm {
        digest = try DigestBox(algorithm)
        try handle.seek(toOffset: 0)
        // The prefix already on disk is part of the file's digest.
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
          digest?.digest.update(chunk)
        }
        _ = try handle.seekToEnd()
      }
    } catch let error as DownloadError {
      throw error
    } catch {
      throw DownloadError(.io, "cannot open \(url.path): \(error.localizedDescription)")
    }
  }

  deinit {
    try? handle.close()
  }

  /// Appends bytes.
  func append(_ data: Data) throws(DownloadError) {
    do {
      try handle.write(contentsOf: data)
    } catch {
      throw DownloadError(.io, "cannot write \(url.path): \(error.localizedDescription)")
    }
    digest?.digest.update(data)
    lengthStorage.add(Int64(data.count), ordering: .releasing)
  }

  /// Empties the file, to start over.
  func truncate() throws(DownloadError) {
    do {
      try handle.truncate(atOffset: 0)
      try handle.seek(toOffset: 0)
      if let algorithm { digest = try DigestBox(algorithm) }
    } catch {
      throw DownloadError(.io, "cannot truncate \(url.path): \(error)")
    }
    lengthStorage.store(0, ordering: .releasing)
  }

  /// Forces what was written to disk, so that a length recorded afterwards is on the disk.
  func synchronize() throws(DownloadError) {
    do {
      try handle.synchronize()
    } catch {
      throw DownloadError(.io, "cannot flush \(url.path): \(error.localizedDescription)")
    }
  }

  /// The digest of the bytes on disk, in lowercase hex.
  func currentDigest() -> String? {
    digest?.digest.current().hexString
  }
}

/// A digest in a box, so that a class can replace it.
private final class DigestBox {
  var digest: StreamingDigest

  init(_ algorithm: DigestAlgorithm) throws {
    digest = try StreamingDigest(algorithm)
  }
}
