import Foundation

/// The system's reason for a failed file operation ("Is a directory"), from the POSIX error a
/// Foundation error is or wraps; else Foundation's own description ("The operation could not be
/// completed", which says less).
package func systemReason(_ error: any Error) -> String {
  let error = error as NSError
  if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
  if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError,
    underlying.domain == NSPOSIXErrorDomain
  {
    return String(cString: strerror(Int32(underlying.code)))
  }
  return error.localizedDescription
}
