import Foundation
import OutputFiles
import PortableFoundation

// How a download ends (see Download.swift): the complete file checked and moved into place, or
// resume data written for what is on disk, the persisting of which runs off Swift's pool.

extension Download {
  func finish(_ file: PartialFile) async -> DownloadResult {
    let ownRange = record.current.headerFields.contains {
      $0.name.caseInsensitiveCompare("Range") == .orderedSame
    }
    // A request for part of a resource ends short of its total by design.
    if let total, !ownRange, file.length != total {
      return await failed(
        DownloadError(.badPartialResponse, "the file has \(file.length) bytes, not \(total)"))
    }
    return await deliver { () throws(DownloadError) -> String? in
      let digest = file.currentDigest()
      try file.synchronize()
      return digest
    }
  }

  /// Checks the complete file's digest (from `complete`, which flushes it), and moves it into
  /// place; the file work runs on the persist queue.
  func deliver(
    _ complete: @escaping @Sendable () throws(DownloadError) -> String?
  ) async -> DownloadResult {
    let expected = configuration.expectedDigest?.lowercased()
    let algorithm = configuration.digestAlgorithm?.rawValue ?? "digest"
    let (source, destination, stateFile) = (partialURL, destination, configuration.stateFile)
    let outcome = await offPool { () throws(DownloadError) -> String? in
      let digest = try complete()
      if let expected, digest != expected {
        throw DownloadError(
          .digestMismatch, "the file's \(algorithm) is \(digest ?? "unknown"), not \(expected)")
      }
      do {
        try Self.move(source, to: destination)
      } catch let error as DownloadError {
        throw error
      } catch {
        throw DownloadError(.io, "\(error)")
      }
      // The state is done with: the file it was written to goes (through a link, the file the
      // link names; the link stays, as writing left it), and a FIFO or device, never written, stays.
      if let stateFile, case .success(.file(let file)) = OutputTarget.resolve(stateFile.path) {
        unlink(file)
      }
      return digest
    }
    switch outcome {
    case .success(let digest): return .completed(file: destination, digest: digest)
    case .failure(let error): return await failed(error)
    }
  }

  func paused() async -> DownloadResult {
    switch await offPool(persistence()) {
    case .success(let data): return .paused(resumeData: data)
    case .failure(let error): return .failed(error, resumeData: await unwrittenResumeData())
    }
  }

  /// A failure: with resume data for what is on disk, or, when nothing is (it failed before its
  /// first byte: a 404, a refused connection), with none, the empty partial file and the state
  /// file removed: a retry starts from the URL, and nothing is left behind.
  func failed(_ error: DownloadError) async -> DownloadResult {
    if nothingOnDisk() {
      discardEmpty()
      return .failed(error, resumeData: nil)
    }
    return .failed(error, resumeData: await resumeDataAnyway())
  }

  /// Whether the partial file holds no byte worth continuing.
  private func nothingOnDisk() -> Bool {
    if let book, book.map != nil { return book.bytesOnDisk == 0 }
    if let segmentFile { return (try? segmentFile.size()) == 0 }
    return (file?.length ?? 0) == 0
  }

  /// Removes the empty partial file and the state file (a regular file only: through a link, the
  /// file it names; a FIFO or a device stays, as `deliver` leaves it).
  private func discardEmpty() {
    unlink(partialURL.path)
    if let stateFile = configuration.stateFile,
      case .success(.file(let file)) = OutputTarget.resolve(stateFile.path)
    {
      unlink(file)
    }
  }

  /// The resume data for what is on disk, written to the state file; or, when that cannot be
  /// written (a full disk, a FIFO in its place), for the caller alone: a state file that cannot
  /// take the resume data must not cost the caller the download's progress.
  private func resumeDataAnyway() async -> Data? {
    if let data = try? await offPool(persistence()).get() { return data }
    return await unwrittenResumeData()
  }

  /// The resume data for what is on disk, the state file left as it is.
  private func unwrittenResumeData() async -> Data? {
    try? await offPool(persistence(writingState: false)).get()
  }

  /// What persisting the download does now: flushes the partial file, then writes the resume data
  /// for what is on disk (atomically, to the state file when there is one). The counts are read
  /// when it runs, before the flush.
  ///
  /// - Parameter writingState: false leaves the state file as it is (the data is returned alone).
  private func persistence(writingState: Bool = true) -> @Sendable () throws(DownloadError) -> Data
  {
    if let segmentFile {
      learnSegments()
      let (record, book) = (record, book)
      return { () throws(DownloadError) -> Data in
        // Before the first response set up the segments, the file holds the prefix alone.
        let map = book?.map
        let prefix: Int64
        if let map { prefix = map.contiguousPrefix } else { prefix = try segmentFile.size() }
        return try record.persist(
          prefix, segments: map, writingState: writingState, flush: segmentFile.synchronize)
      }
    }
    let (record, file) = (record, file)
    return { () throws(DownloadError) -> Data in
      guard let file else { throw DownloadError(.io, "the partial file is not open") }
      return try record.persist(
        file.length, writingState: writingState, flush: file.synchronize)
    }
  }

  /// Persists in the background, unless a persist is still running: the watchdog's periodic
  /// one, which must not wait for the disk.
  func persistInBackground() {
    let wasPersisting = persisting.value.withLock { flag in
      defer { flag = true }
      return flag
    }
    guard !wasPersisting else { return }
    let (work, persisting) = (persistence(), persisting)
    persistQueue.async {
      _ = try? work()
      persisting.value.withLock { $0 = false }
    }
  }

  /// Runs file work (a flush can take seconds on a busy disk, reading a file back longer) on the
  /// persist queue, in order with every other persist, instead of on a thread of Swift's
  /// cooperative pool, which every task of the process shares.
  private func offPool<T: Sendable>(
    _ work: @escaping @Sendable () throws(DownloadError) -> T
  ) async -> Result<T, DownloadError> {
    await withCheckedContinuation { continuation in
      persistQueue.async {
        do throws(DownloadError) {
          continuation.resume(returning: .success(try work()))
        } catch {
          continuation.resume(returning: .failure(error))
        }
      }
    }
  }

  /// Moves the finished file where `destination` leads (`OutputTarget`): renamed over a regular
  /// file, through any symbolic links to it (across file systems if need be), or copied into a
  /// FIFO or a device (`-o /dev/null`), which a rename would replace.
  private static func move(_ source: URL, to destination: URL) throws {
    let manager = FileManager.default
    let target: URL
    switch OutputTarget.resolve(destination.path) {
    case .failure(let error):
      throw DownloadError(.io, "cannot move the file to \(destination.path): \(error.message)")
    case .success(.stream(let device)):
      let failure = OutputTarget.copyToStream(from: source.path, device)
      guard failure == 0 else {
        throw DownloadError(
          .io,
          "cannot write the file to \(destination.path): \(String(cString: strerror(failure)))")
      }
      try manager.removeItem(at: source)
      return
    case .success(.file(let file)):
      target = URL(fileURLWithPath: file)
    }
    try manager.createDirectory(
      at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
    if rename(source.path, target.path) == 0 { return }
    guard errno == EXDEV else {
      throw DownloadError(
        .io, "cannot move the file to \(destination.path): \(String(cString: strerror(errno)))")
    }
    // Another file system: copy beside the target, then rename over it.
    let staging = target.deletingLastPathComponent().appendingPathComponent(
      ".\(target.lastPathComponent).\(randomSuffix()).part")
    try manager.copyItem(at: source, to: staging)
    guard rename(staging.path, target.path) == 0 else {
      try? manager.removeItem(at: staging)
      throw DownloadError(.io, "cannot move the file to \(destination.path)")
    }
    try manager.removeItem(at: source)
  }

  /// Six random letters and digits, as CFNetwork names its partial files.
  static func randomSuffix() -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    return String((0..<6).map { _ in alphabet.randomElement()! })
  }
}
