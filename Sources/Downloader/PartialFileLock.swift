import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The lock a running download holds on its partial file, so that two downloads never write into
/// one file (two `resume`s of the same blob at once would otherwise append the same range twice
/// and splice the file).
///
/// `flock` on a descriptor of its own, taken before the first request and released when the run
/// ends. The kernel ties the lock to that descriptor, not to the process, so a second download
/// in the same process is refused as well; and it drops the lock when the process ends, killed or
/// not, so none is left behind. The partial file's own readers and writers open it apart and take
/// no lock, so the run never stands in its own way (segments falling back to one connection).
final class PartialFileLock: Sendable {
  private let descriptor: Int32

  /// Takes the lock, creating the file (and its directory) when missing.
  ///
  /// A file that cannot be opened or locked for another reason (a file system without locks) is
  /// left unlocked: opening it to write reports the first, and the second only loses this check.
  ///
  /// - Throws: `DownloadError` with code `.partialFileInUse` when another download holds it.
  init(_ url: URL) throws(DownloadError) {
    try? FileManager.default.createDirectory(
      at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      self.descriptor = -1
      return
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let code = errno
      close(descriptor)
      if code == EWOULDBLOCK {
        throw DownloadError(
          .partialFileInUse,
          "the partial file \(url.path) is being written by another download; "
            + "try again once it has ended")
      }
      self.descriptor = -1
      return
    }
    self.descriptor = descriptor
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }
}
