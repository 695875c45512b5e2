import PortableFoundation

/// The system's reason for a failed file operation ("Is a directory"), from the POSIX error a
/// Foundation error is or wraps; else Foundation's error code, the error's own description
/// (`LocalizedError`), or the error as Swift prints it.
package func systemReason(_ error: any Error) -> String {
  // Foundation's file operations throw a CocoaError that wraps the POSIX error (Darwin's NSError
  // bridges to the same two types), and a few throw the POSIX error itself.
  if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
  if let cocoa = error as? CocoaError, let posix = cocoa.underlying as? POSIXError {
    return String(cString: strerror(posix.code.rawValue))
  }
  // FoundationEssentials has no localized descriptions; Foundation's said no more than this
  // ("The operation could not be completed").
  if let cocoa = error as? CocoaError {
    return "the operation could not be completed (Foundation error \(cocoa.code.rawValue))"
  }
  if let described = (error as? any LocalizedError)?.errorDescription { return described }
  return String(describing: error)
}
