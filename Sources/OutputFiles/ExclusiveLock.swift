import PortableFoundation

/// An exclusive `flock` on a file, taken without waiting and held until the lock is freed. The
/// kernel ties it to a descriptor of its own, not to the process, so a second lock on the file is
/// refused in the same process as in another; and it drops the lock when the process ends, killed
/// or not, so none is ever left behind. For the downloads of a state directory and the partial
/// file of a running download.
package final class ExclusiveLock: Sendable {
  /// Why the lock was not taken.
  package enum Failure: Error, Equatable, Sendable {
    /// Another descriptor holds it.
    case held
    /// The file could not be opened or locked (`errno`).
    case system(Int32)
  }

  private let descriptor: Int32

  /// Opens `path` (creating it, mode 0644, when missing) and takes the lock.
  package init(_ path: String) throws(Failure) {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw .system(errno) }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let code = errno
      close(descriptor)
      throw code == EWOULDBLOCK ? .held : .system(code)
    }
    self.descriptor = descriptor
  }

  deinit { close(descriptor) }
}
