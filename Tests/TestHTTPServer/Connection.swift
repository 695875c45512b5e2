import Foundation
import Glibc

/// A body opened for one response: a file stays open until the response is written, so a file
/// replaced on disk meanwhile does not change what this response sends.
enum OpenedContent {
  case data(Data)
  case file(Int32, size: Int)

  var count: Int {
    switch self {
    case .data(let data): return data.count
    case .file(_, let size): return size
    }
  }

  func close() {
    if case .file(let descriptor, _) = self { _ = Glibc.close(descriptor) }
  }

  /// Passes the bytes of `range` in order, `chunkSize` at a time (the last piece may be shorter);
  /// false if `body` returned false or the file ended early or could not be read.
  func forEachChunk(
    in range: Range<Int>, chunkSize: Int, _ body: (UnsafeRawBufferPointer) -> Bool
  ) -> Bool {
    let chunkSize = max(chunkSize, 1)
    switch self {
    case .data(let data):
      return data.withUnsafeBytes { all in
        var offset = range.lowerBound
        while offset < range.upperBound {
          let end = min(offset + chunkSize, range.upperBound)
          guard body(UnsafeRawBufferPointer(rebasing: all[offset..<end])) else { return false }
          offset = end
        }
        return true
      }
    case .file(let descriptor, _):
      var buffer = [UInt8](repeating: 0, count: min(chunkSize, max(range.count, 1)))
      var offset = range.lowerBound
      while offset < range.upperBound {
        let wanted = min(buffer.count, range.upperBound - offset)
        var filled = 0
        while filled < wanted {
          let count = buffer.withUnsafeMutableBytes {
            pread(descriptor, $0.baseAddress! + filled, wanted - filled, off_t(offset + filled))
          }
          if count < 0 && errno == EINTR { continue }
          guard count > 0 else { return false }
          filled += count
        }
        guard buffer.withUnsafeBytes({ body(UnsafeRawBufferPointer(rebasing: $0[0..<wanted])) })
        else { return false }
        offset += wanted
      }
      return true
    }
  }
}

/// The faults of one request, sorted by what they act on; the first of each kind wins.
struct AppliedFaults {
  enum Replacement {
    case status(Int, Data)
    case redirect(String, Int)
  }

  enum Cutoff {
    case close
    case stall
  }

  var replacement: Replacement?
  var cutoff: (bytes: Int, then: Cutoff)?
  var trickle: (bytes: Int, interval: Duration)?
  var ignoreRange = false
  var gzip = false
  var startDelta: Int?
  var totalDelta: Int?
  var gzipForGzipClients = false
  var ignoreIfRange = false
  var refuseRanges = false
  var etagPerRequest = false
  var chunked = false
  var delay: Duration?

  init(_ faults: [Fault]) {
    for fault in faults {
      switch fault {
      case .closeAfter(let bytes):
        if cutoff == nil { cutoff = (max(bytes, 0), .close) }
      case .stall(let bytes):
        if cutoff == nil { cutoff = (max(bytes, 0), .stall) }
      case .status(let status, let body):
        if replacement == nil { replacement = .status(status, body) }
      case .redirect(let location, let status):
        if replacement == nil { replacement = .redirect(location, status) }
      case .trickle(let bytes, let interval):
        if trickle == nil { trickle = (max(bytes, 1), interval) }
      case .ignoreRange:
        ignoreRange = true
      case .gzip:
        gzip = true
      case .wrongContentRangeStart(let delta):
        if startDelta == nil { startDelta = delta }
      case .wrongContentRangeTotal(let delta):
        if totalDelta == nil { totalDelta = delta }
      case .gzipForGzipClients:
        gzipForGzipClients = true
      case .ignoreIfRange:
        ignoreIfRange = true
      case .refuseRanges:
        refuseRanges = true
      case .etagPerRequest:
        etagPerRequest = true
      case .chunked:
        chunked = true
      case .delay(let duration):
        if delay == nil { delay = duration }
      }
    }
  }
}

/// A response before it is written.
struct Response {
  enum Body {
    case none
    case bytes(Data)
    case content(OpenedContent, Range<Int>)
    case gzip(OpenedContent)
  }

  var status: Int
  var headers: [(String, String)] = []
  var body: Body = .none

  var bodyLength: Int {
    switch body {
    case .none: return 0
    case .bytes(let data): return data.count
    case .content(_, let range): return range.count
    case .gzip(let content): return StoredGzip.encodedLength(forInput: content.count)
    }
  }

  /// 1xx, 204 and 304 responses end with their head (RFC 9112 §6.3).
  var hasBody: Bool { status >= 200 && status != 204 && status != 304 }

  static func text(_ status: Int, _ text: String) -> Response {
    Response(
      status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
      body: .bytes(Data(text.utf8)))
  }
}

/// Writes a body, applying the cut-off and trickle faults.
struct BodySink {
  let socket: Int32
  let core: ServerCore
  let limit: Int?
  let trickle: (bytes: Int, interval: Duration)?
  private(set) var sent = 0
  private(set) var failed = false

  init(socket: Int32, core: ServerCore, faults: AppliedFaults) {
    self.socket = socket
    self.core = core
    limit = faults.cutoff?.bytes
    trickle = faults.trickle
  }

  /// Writes what the limit leaves of `bytes`; false once nothing more is to be written.
  mutating func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard !failed else { return false }
    var bytes = bytes
    var reachedLimit = false
    if let limit, limit - sent <= bytes.count {
      bytes = UnsafeRawBufferPointer(rebasing: bytes[0..<(limit - sent)])
      reachedLimit = true
    }
    guard let trickle else {
      guard Socket.sendAll(socket, bytes) else {
        failed = true
        return false
      }
      sent += bytes.count
      return !reachedLimit
    }
    var offset = 0
    while offset < bytes.count {
      if sent > 0 && core.waitForStop(trickle.interval) {
        failed = true
        return false
      }
      let end = min(offset + trickle.bytes, bytes.count)
      guard Socket.sendAll(socket, UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) else {
        failed = true
        return false
      }
      sent += end - offset
      offset = end
    }
    return !reachedLimit
  }

  mutating func write(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { write($0) }
  }
}

/// One connection's requests, answered in order on the connection's own thread.
final class ConnectionHandler {
  private enum Ending {
    case keepAlive
    /// The response said `Connection: close`: finish writing, then close.
    case close
    /// Close at once (a fault, or the client or server is gone).
    case abort
  }

  private enum HeadRead {
    case head([UInt8])
    case closed
    case tooLarge
  }

  /// Request bodies (which GET and HEAD should not have) up to this size are read and dropped.
  private static let maximumDiscardedBody = 1 << 20

  private let core: ServerCore
  private let socket: Int32
  private let id: Int
  private var pending: [UInt8] = []
  private var requestIndex = 0

  init(core: ServerCore, socket: Int32, id: Int) {
    self.core = core
    self.socket = socket
    self.id = id
  }

  func run() {
    while true {
      let ending: Ending
      switch nextHead() {
      case .closed:
        return
      case .tooLarge:
        ending = refuse(RequestRejection(status: 431))
      case .head(let head):
        do {
          ending = answer(try RequestParser.parse(head[...]))
        } catch {
          ending = refuse(error)
        }
      }
      requestIndex += 1
      switch ending {
      case .keepAlive:
        continue
      case .close:
        closeGracefully()
        return
      case .abort:
        return
      }
    }
  }

  // MARK: Reading

  private func nextHead() -> HeadRead {
    let maximum = core.configuration.maxHeaderBytes
    var scanned = 0
    while true {
      // RFC 9112 §2.2: empty lines before a request line are ignored.
      let blank = pending.prefix { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }.count
      if blank > 0 {
        pending.removeFirst(blank)
        scanned = 0
      }
      if let end = RequestParser.endOfHead(in: pending, from: scanned - 2) {
        guard end <= maximum else { return .tooLarge }
        let head = Array(pending[0..<end])
        pending.removeFirst(end)
        return .head(head)
      }
      guard pending.count <= maximum else { return .tooLarge }
      scanned = pending.count
      guard Socket.receive(socket, appendingTo: &pending, maximum: 16 * 1024) > 0 else {
        return .closed
      }
    }
  }

  /// Reads and drops `count` body bytes; false if the connection ended first.
  private func discard(_ count: Int) -> Bool {
    var remaining = count
    let buffered = min(remaining, pending.count)
    pending.removeFirst(buffered)
    remaining -= buffered
    while remaining > 0 {
      var chunk: [UInt8] = []
      guard Socket.receive(socket, appendingTo: &chunk, maximum: min(remaining, 64 * 1024)) > 0
      else { return false }
      remaining -= chunk.count
    }
    return true
  }

  // MARK: Answering

  private func refuse(_ rejection: RequestRejection) -> Ending {
    let path = RequestParser.splitTarget(rejection.target)?.path ?? ""
    let query = RequestParser.splitTarget(rejection.target)?.query
    let record = RecordedRequest(
      method: rejection.method, target: rejection.target, path: path, query: query,
      version: rejection.version, headers: [], status: rejection.status, faults: [],
      connection: id, indexOnConnection: requestIndex)
    return send(
      .text(rejection.status, reason(rejection.status) + "\n"), record: record, headOnly: false,
      faults: AppliedFaults([]), keepAlive: false)
  }

  private func answer(_ request: ParsedRequest) -> Ending {
    func record(_ status: Int, _ faults: [Fault] = []) -> RecordedRequest {
      RecordedRequest(
        method: request.method, target: request.target, path: request.path,
        query: request.query, version: request.version, headers: request.headers,
        status: status, faults: faults, connection: id, indexOnConnection: requestIndex)
    }
    let noFaults = AppliedFaults([])

    if request.header("Transfer-Encoding") != nil {
      return send(
        .text(501, "Transfer-Encoding is not supported\n"), record: record(501), headOnly: false,
        faults: noFaults, keepAlive: false)
    }
    let lengths = Set(request.headerValues("Content-Length"))
    if let length = lengths.first {
      guard lengths.count == 1, !length.isEmpty, length.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
        let count = Int(length)
      else {
        return send(
          .text(400, "Bad Request\n"), record: record(400), headOnly: false, faults: noFaults,
          keepAlive: false)
      }
      guard count <= Self.maximumDiscardedBody else {
        return send(
          .text(413, "Content Too Large\n"), record: record(413), headOnly: false,
          faults: noFaults, keepAlive: false)
      }
      guard discard(count) else { return .abort }
    }

    let options = request.connectionOptions
    let keepAlive =
      request.version == "HTTP/1.1" ? !options.contains("close") : options.contains("keep-alive")
    let headOnly = request.method == "HEAD"
    guard request.method == "GET" || headOnly else {
      var response = Response.text(405, "Method Not Allowed\n")
      response.headers.append(("Allow", "GET, HEAD"))
      return send(
        response, record: record(405), headOnly: false, faults: noFaults, keepAlive: keepAlive)
    }

    let (faultList, resource) = core.takeFaultsAndResource(path: request.path)
    let faults = AppliedFaults(faultList)
    var opened: OpenedContent?
    defer { opened?.close() }
    let response: Response
    switch faults.replacement {
    case .status(let status, let body):
      response = Response(
        status: status, headers: [("Content-Type", "text/html; charset=utf-8")],
        body: .bytes(body))
    case .redirect(let location, let status):
      response = Response(status: status, headers: [("Location", location)])
    case nil:
      if let resource {
        opened = open(resource.content)
        if let opened {
          response = representation(of: resource, opened, for: request, faults: faults)
        } else {
          response = .text(500, "The file of this resource cannot be read\n")
        }
      } else {
        response = .text(404, "Not Found\n")
      }
    }
    return send(
      response, record: record(response.status, faultList), headOnly: headOnly, faults: faults,
      keepAlive: keepAlive)
  }

  private func open(_ content: Resource.Content) -> OpenedContent? {
    switch content {
    case .data(let data):
      return .data(data)
    case .file(let path):
      let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else { return nil }
      var status = stat()
      guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
        _ = Glibc.close(descriptor)
        return nil
      }
      return .file(descriptor, size: Int(status.st_size))
    }
  }

  /// The resource's answer to a GET or HEAD: gzip, 200, 206 or 416.
  private func representation(
    of resource: Resource, _ content: OpenedContent, for request: ParsedRequest,
    faults: AppliedFaults
  ) -> Response {
    var resource = resource
    if faults.etagPerRequest, let etag = resource.etag {
      resource.etag = String(etag.dropLast()) + "-\(core.nextSerial())\""
    }
    var headers = [("Content-Type", resource.contentType)]
    let acceptsGzip =
      request.header("Accept-Encoding")?.lowercased().split(separator: ",").contains {
        $0.trimmingCharacters(in: .whitespaces).hasPrefix("gzip")
      } ?? false
    if faults.gzip || (faults.gzipForGzipClients && acceptsGzip) {
      headers.append(("Content-Encoding", "gzip"))
      headers.append(("ETag", Validators.gzipETag(from: resource.etag)))
      if let lastModified = resource.lastModified {
        headers.append(("Last-Modified", lastModified))
      }
      return Response(status: 200, headers: headers, body: .gzip(content))
    }
    if !faults.ignoreRange { headers.append(("Accept-Ranges", "bytes")) }
    if let etag = resource.etag { headers.append(("ETag", etag)) }
    if let lastModified = resource.lastModified { headers.append(("Last-Modified", lastModified)) }
    let total = content.count
    let whole = Response(status: 200, headers: headers, body: .content(content, 0..<total))

    // RFC 9110 §14.2: range handling is defined for GET only.
    guard request.method == "GET", !faults.ignoreRange,
      case .single(let spec) = RangeRequest(header: request.header("Range"))
    else { return whole }
    if faults.refuseRanges {
      return Response(
        status: 416, headers: headers + [("Content-Range", "bytes */\(total)")], body: .none)
    }
    if !faults.ignoreIfRange, let condition = request.header("If-Range"),
      !Validators.ifRangeMatches(
        condition, etag: resource.etag, lastModified: resource.lastModified)
    {
      return whole
    }
    guard let range = spec.resolve(total: total) else {
      return Response(
        status: 416, headers: headers + [("Content-Range", "bytes */\(total)")], body: .none)
    }
    let shift = faults.startDelta ?? 0
    let claimedTotal = total + (faults.totalDelta ?? 0)
    headers.append(
      (
        "Content-Range",
        "bytes \(range.lowerBound + shift)-\(range.upperBound + shift)/\(claimedTotal)"
      ))
    return Response(
      status: 206, headers: headers,
      body: .content(content, range.lowerBound..<(range.upperBound + 1)))
  }

  // MARK: Writing

  private func send(
    _ response: Response, record: RecordedRequest, headOnly: Bool, faults: AppliedFaults,
    keepAlive: Bool
  ) -> Ending {
    if let delay = faults.delay, core.waitForStop(delay) { return .abort }
    var head = "HTTP/1.1 \(response.status) \(reason(response.status))\r\n"
    for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
    if response.hasBody, faults.chunked {
      head += "Transfer-Encoding: chunked\r\n"
    } else if response.hasBody {
      head += "Content-Length: \(response.bodyLength)\r\n"
    }
    if !keepAlive {
      head += "Connection: close\r\n"
    } else if record.version == "HTTP/1.0" {
      head += "Connection: keep-alive\r\n"
    }
    head += "\r\n"
    // Logged before anything is written, so a client that has read the response finds it logged.
    core.record(record)
    guard Socket.sendAll(socket, Array(head.utf8)) else { return .abort }

    var sink = BodySink(socket: socket, core: core, faults: faults)
    if response.hasBody && !headOnly && faults.chunked {
      guard writeChunked(response.body, to: &sink) else { return .abort }
    } else if response.hasBody && !headOnly {
      let chunkSize = core.configuration.chunkSize
      switch response.body {
      case .none:
        break
      case .bytes(let data):
        _ = OpenedContent.data(data).forEachChunk(in: 0..<data.count, chunkSize: chunkSize) {
          sink.write($0)
        }
      case .content(let content, let range):
        // A file that ended early leaves the body short; only closing tells the client so.
        if !content.forEachChunk(in: range, chunkSize: chunkSize, { sink.write($0) })
          && faults.cutoff == nil && !sink.failed && sink.sent < range.count
        {
          return .abort
        }
      case .gzip(let content):
        guard writeGzip(content, to: &sink) || faults.cutoff != nil else { return .abort }
      }
    }
    if sink.failed { return .abort }
    switch faults.cutoff?.then {
    case .close:
      return .abort
    case .stall:
      _ = core.waitForStop(core.configuration.stallTimeout)
      return .abort
    case nil:
      return keepAlive ? .keepAlive : .close
    }
  }

  /// Writes a body (not gzip) as chunks of the chunked coding, then the last chunk; false if
  /// writing stopped early.
  private func writeChunked(_ body: Response.Body, to sink: inout BodySink) -> Bool {
    func chunk(_ bytes: UnsafeRawBufferPointer) -> Bool {
      sink.write(Array("\(String(bytes.count, radix: 16))\r\n".utf8)) && sink.write(bytes)
        && sink.write(Array("\r\n".utf8))
    }
    let chunkSize = core.configuration.chunkSize
    let complete: Bool
    switch body {
    case .none, .gzip:
      complete = true
    case .bytes(let data):
      complete = OpenedContent.data(data).forEachChunk(in: 0..<data.count, chunkSize: chunkSize) {
        chunk($0)
      }
    case .content(let content, let range):
      complete = content.forEachChunk(in: range, chunkSize: chunkSize) { chunk($0) }
    }
    return complete && sink.write(Array("0\r\n\r\n".utf8))
  }

  /// Streams `content` as a stored-block gzip member; false if writing stopped early.
  private func writeGzip(_ content: OpenedContent, to sink: inout BodySink) -> Bool {
    guard sink.write(StoredGzip.header) else { return false }
    var crc = CRC32()
    let total = content.count
    if total == 0 {
      guard sink.write(StoredGzip.blockHeader(length: 0, final: true)) else { return false }
    } else {
      var offset = 0
      let complete = content.forEachChunk(in: 0..<total, chunkSize: StoredGzip.maximumBlock) {
        block in
        crc.update(block)
        offset += block.count
        return sink.write(StoredGzip.blockHeader(length: block.count, final: offset == total))
          && sink.write(block)
      }
      guard complete else { return false }
    }
    return sink.write(StoredGzip.trailer(crc: crc.value, inputCount: total))
  }

  /// Ends a connection after a `Connection: close` response: shutting down only the sending side
  /// and reading what the client still sends, for a moment, keeps a close with unread data from
  /// turning into a reset that could destroy the response before the client has read it.
  private func closeGracefully() {
    shutdown(socket, Int32(SHUT_WR))
    Socket.setTimeout(socket, option: SO_RCVTIMEO, .seconds(1))
    var drained = 0
    while drained < 1 << 20 {
      var chunk: [UInt8] = []
      let count = Socket.receive(socket, appendingTo: &chunk, maximum: 16 * 1024)
      guard count > 0 else { return }
      drained += count
    }
  }
}

private let reasons: [Int: String] = [
  200: "OK", 204: "No Content", 206: "Partial Content", 301: "Moved Permanently", 302: "Found",
  303: "See Other", 304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect",
  400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
  405: "Method Not Allowed", 408: "Request Timeout", 413: "Content Too Large",
  416: "Range Not Satisfiable", 431: "Request Header Fields Too Large",
  500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
  503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
]

private func reason(_ status: Int) -> String {
  reasons[status] ?? "Status \(status)"
}
