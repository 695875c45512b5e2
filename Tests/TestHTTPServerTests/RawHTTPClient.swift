import Foundation
import Glibc

struct ClientError: Error, CustomStringConvertible {
  var description: String
}

/// A response as read off the socket, unparsed beyond the head.
struct RawResponse {
  var status: Int
  var statusLine: String
  var headers: [(name: String, value: String)]
  var body: [UInt8]
  /// Whether the body had every byte its Content-Length announced; false when the server closed
  /// the connection first.
  var complete: Bool

  func header(_ name: String) -> String? {
    headerValues(name).first
  }

  func headerValues(_ name: String) -> [String] {
    headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
  }

  /// The header fields as `Name: value` lines, in order.
  var headerLines: [String] { headers.map { "\($0.name): \($0.value)" } }

  var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// What one read of the socket gave.
enum ReadOutcome: Equatable {
  case bytes([UInt8])
  case endOfStream
  /// Nothing arrived before the receive timeout.
  case timedOut
  case failed(Int32)
}

/// A blocking TCP client speaking HTTP/1.1 by hand, so tests see exactly what the server sends.
final class RawHTTPClient {
  let socket: Int32
  /// Bytes read but not yet consumed.
  private var buffer: [UInt8] = []
  private var closed = false

  /// Connects to `address` (default 127.0.0.1) at `port`; reads give up after `timeout` so a
  /// broken server fails a test instead of hanging it.
  init(port: Int, address: UInt32 = 0x7f00_0001, timeout: Duration = .seconds(5)) throws {
    socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else {
      closed = true
      throw ClientError(description: "socket: errno \(errno)")
    }
    var target = sockaddr_in()
    target.sin_family = sa_family_t(AF_INET)
    target.sin_port = UInt16(port).bigEndian
    target.sin_addr = in_addr(s_addr: address.bigEndian)
    let result = withUnsafePointer(to: &target) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else {
      let code = errno
      // A class whose initializer throws after every property is set still runs deinit.
      close()
      throw ClientError(description: "connect: errno \(code)")
    }
    setReceiveTimeout(timeout)
  }

  deinit {
    close()
  }

  /// Closes the socket (once); later reads fail.
  func close() {
    guard !closed else { return }
    closed = true
    Glibc.close(socket)
  }

  func setReceiveTimeout(_ timeout: Duration) {
    let (seconds, attoseconds) = timeout.components
    var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
  }

  func send(_ text: String) throws {
    try send(Array(text.utf8))
  }

  func send(_ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes {
        Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      guard written > 0 else { throw ClientError(description: "send: errno \(errno)") }
      offset += written
    }
  }

  /// Sends a request with `Host` first and then `headers` (whole lines, e.g. `Range: bytes=0-9`).
  func sendRequest(
    _ method: String = "GET", _ target: String, headers: [String] = [], host: String = "127.0.0.1"
  ) throws {
    var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
    for line in headers { text += line + "\r\n" }
    try send(text + "\r\n")
  }

  /// Sends a request and reads its response.
  func exchange(
    _ method: String = "GET", _ target: String, headers: [String] = [], host: String = "127.0.0.1"
  ) throws -> RawResponse {
    try sendRequest(method, target, headers: headers, host: host)
    return try readResponse(toHead: method == "HEAD")
  }

  /// One read: what is buffered, or else what the socket gives.
  func readSome() -> ReadOutcome {
    if !buffer.isEmpty {
      defer { buffer.removeAll() }
      return .bytes(buffer)
    }
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
      if count > 0 { return .bytes(Array(chunk[0..<count])) }
      if count == 0 { return .endOfStream }
      if errno == EINTR { continue }
      return errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : .failed(errno)
    }
  }

  /// Reads until the server closes the connection.
  func readToEnd() throws -> [UInt8] {
    var bytes: [UInt8] = []
    while true {
      switch readSome() {
      case .bytes(let chunk): bytes += chunk
      case .endOfStream: return bytes
      case .timedOut: throw ClientError(description: "timed out after \(bytes.count) bytes")
      case .failed(let code): throw ClientError(description: "recv: errno \(code)")
      }
    }
  }

  /// Reads one response; its body by Content-Length, or to the end of the connection when there
  /// is none. A response to HEAD (`toHead`), 1xx, 204 and 304 have no body.
  func readResponse(toHead: Bool = false) throws -> RawResponse {
    var response = try readHead()
    let status = response.status
    if toHead || status < 200 || status == 204 || status == 304 { return response }
    guard let lengthText = response.header("Content-Length") else {
      response.body = try readToEnd()
      return response
    }
    guard let length = Int(lengthText) else {
      throw ClientError(description: "bad Content-Length \(lengthText)")
    }
    let (body, ending) = readBytes(length)
    switch ending {
    case nil, .endOfStream:
      response.body = body
      response.complete = ending == nil
      return response
    case .timedOut:
      throw ClientError(description: "timed out after \(body.count) of \(length) body bytes")
    case .failed(let code):
      throw ClientError(description: "recv: errno \(code) after \(body.count) body bytes")
    case .bytes:
      preconditionFailure("readBytes ends only without bytes")
    }
  }

  /// Reads a response head; the body is left unread.
  func readHead() throws -> RawResponse {
    var end = headEnd()
    while end == nil {
      switch readSome() {
      case .bytes(let chunk): buffer += chunk
      case .endOfStream:
        throw ClientError(description: "connection closed in the head after \(buffer.count) bytes")
      case .timedOut: throw ClientError(description: "timed out reading a head")
      case .failed(let code): throw ClientError(description: "recv: errno \(code)")
      }
      end = headEnd()
    }
    let headBytes = buffer[0..<end!]
    buffer.removeFirst(end!)
    var lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n")
    lines.removeLast(2)
    let statusLine = lines.removeFirst()
    let statusParts = statusLine.split(separator: " ", maxSplits: 2)
    guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1])
    else { throw ClientError(description: "bad status line \(statusLine)") }
    let headers = try lines.map { line -> (name: String, value: String) in
      guard let colon = line.firstIndex(of: ":") else {
        throw ClientError(description: "bad header line \(line)")
      }
      return (
        String(line[..<colon]),
        String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
      )
    }
    return RawResponse(
      status: status, statusLine: statusLine, headers: headers, body: [], complete: true)
  }

  /// Reads `count` bytes, or fewer when the stream ends, times out or fails first (`ending`).
  func readBytes(_ count: Int) -> (bytes: [UInt8], ending: ReadOutcome?) {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
      let outcome = readSome()
      guard case .bytes(let chunk) = outcome else { return (bytes, outcome) }
      let wanted = min(chunk.count, count - bytes.count)
      bytes += chunk[0..<wanted]
      if wanted < chunk.count { buffer = Array(chunk[wanted...]) }
    }
    return (bytes, nil)
  }

  private func headEnd() -> Int? {
    guard buffer.count >= 4 else { return nil }
    for index in 0...(buffer.count - 4)
    where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13
      && buffer[index + 3] == 10
    {
      return index + 4
    }
    return nil
  }
}

/// Bytes 0, 1, …, 250, 0, 1, …: a prime period, so bytes taken from a wrong offset differ from
/// the ones expected unless the offset is off by a multiple of 251.
func patterned(_ count: Int) -> Data {
  Data((0..<count).map { UInt8($0 % 251) })
}
