import Glibc

/// A system call of the server's own setup that failed.
public struct TestHTTPServerError: Error, Equatable, CustomStringConvertible, Sendable {
  /// The call that failed, e.g. `bind`.
  public let operation: String
  /// Its `errno`.
  public let code: Int32

  /// The call and the system's message for its error.
  public var description: String {
    "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
  }
}

extension Duration {
  /// Whole milliseconds, rounded down and clamped to what `poll` takes.
  var pollMilliseconds: Int32 {
    let (seconds, attoseconds) = components
    guard seconds >= 0 else { return 0 }
    let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
    guard !milliseconds.overflow else { return Int32.max }
    let total = milliseconds.partialValue + attoseconds / 1_000_000_000_000_000
    return Int32(clamping: total)
  }

  var timeval: Glibc.timeval {
    let (seconds, attoseconds) = components
    return Glibc.timeval(
      tv_sec: Int(max(seconds, 0)), tv_usec: Int(max(attoseconds, 0) / 1_000_000_000_000))
  }
}

/// Thin wrappers over the socket calls, retrying on `EINTR` where a retry is what a caller wants.
enum Socket {
  /// A TCP listener on 127.0.0.1 with a port the kernel chose; non-blocking so that a connection
  /// reset between `poll` and `accept` cannot park the accept loop.
  static func makeLoopbackListener(backlog: Int32) throws(TestHTTPServerError) -> (
    fd: Int32, port: Int
  ) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestHTTPServerError(operation: "socket", code: errno) }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else {
      let code = errno
      close(fd)
      throw TestHTTPServerError(operation: "bind", code: code)
    }
    guard listen(fd, backlog) == 0 else {
      let code = errno
      close(fd)
      throw TestHTTPServerError(operation: "listen", code: code)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else {
      let code = errno
      close(fd)
      throw TestHTTPServerError(operation: "getsockname", code: code)
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
  }

  static func setTimeout(_ fd: Int32, option: Int32, _ duration: Duration) {
    var value = duration.timeval
    setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<Glibc.timeval>.size))
  }

  /// Head and body go out in separate writes; without this Nagle's algorithm and delayed ACKs
  /// would hold the body back for tens of milliseconds.
  static func disableNagle(_ fd: Int32) {
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  /// Writes all of `bytes`; false when the peer is gone, the send timeout passed or the socket
  /// was shut down by `stop()`.
  static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard var pointer = bytes.baseAddress else { return true }
    var remaining = bytes.count
    while remaining > 0 {
      let written = send(fd, pointer, remaining, Int32(MSG_NOSIGNAL))
      if written < 0 {
        if errno == EINTR { continue }
        return false
      }
      pointer += written
      remaining -= written
    }
    return true
  }

  static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { sendAll(fd, $0) }
  }

  /// Reads what is there (blocking up to the receive timeout) and appends it; the count read, 0 at
  /// end of stream, -1 on error or timeout.
  static func receive(_ fd: Int32, appendingTo buffer: inout [UInt8], maximum: Int) -> Int {
    var chunk = [UInt8](repeating: 0, count: maximum)
    while true {
      let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, maximum, 0) }
      if count < 0 && errno == EINTR { continue }
      if count > 0 { buffer.append(contentsOf: chunk[0..<count]) }
      return count
    }
  }
}
