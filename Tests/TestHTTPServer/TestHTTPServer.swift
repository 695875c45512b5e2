import Foundation

/// An HTTP/1.1 server on 127.0.0.1 for tests: resources published at runtime, faults injected per
/// request, every request logged.
///
/// It listens as soon as it is made, on a port the kernel chose. Each connection gets its own
/// thread; connections are kept alive unless the client sends `Connection: close` (or speaks
/// HTTP/1.0 without asking for keep-alive). GET and HEAD are served; other methods get 405.
/// Only single byte ranges are served as 206; several ranges get the whole body with 200.
///
/// ```swift
/// let server = try TestHTTPServer()
/// defer { server.stop() }
/// server.serve(path: "/file", body: data, etag: "\"v1\"")
/// server.scheduleFaults(path: "/file", [.once(.closeAfter(bytes: 100))])
/// let url = server.baseURL.appendingPathComponent("file")
/// ```
public final class TestHTTPServer: Sendable {
  /// Limits and timeouts; the defaults suit tests that download through URLSession.
  public struct Configuration: Sendable {
    /// Connections served at once; a connection beyond this gets 503 and is closed.
    public var maxConnections: Int
    /// How long a connection may sit without sending a full request head (SO_RCVTIMEO), and how
    /// long a write may block on a client that reads nothing (SO_SNDTIMEO), before it is closed;
    /// zero means no limit.
    public var idleTimeout: Duration
    /// How long a ``Fault/stall(afterBytes:)`` keeps its connection open before closing it.
    public var stallTimeout: Duration
    /// The largest request head accepted; a larger one gets 431.
    public var maxHeaderBytes: Int
    /// The size of each write of a body.
    public var chunkSize: Int

    /// Limits with defaults: 64 connections, 10 s idle, 30 s stall, 16 KiB heads, 64 KiB writes.
    public init(
      maxConnections: Int = 64, idleTimeout: Duration = .seconds(10),
      stallTimeout: Duration = .seconds(30), maxHeaderBytes: Int = 16 * 1024,
      chunkSize: Int = 64 * 1024
    ) {
      self.maxConnections = maxConnections
      self.idleTimeout = idleTimeout
      self.stallTimeout = stallTimeout
      self.maxHeaderBytes = maxHeaderBytes
      self.chunkSize = chunkSize
    }
  }

  private let core: ServerCore

  /// Starts a server on 127.0.0.1 with a port the kernel chose; it accepts connections as soon as
  /// this returns. Throws when the socket, the wake-up pipe or a thread cannot be made.
  public init(configuration: Configuration = Configuration()) throws {
    core = try ServerCore(configuration: configuration)
  }

  deinit {
    core.stop()
  }

  /// The port the server listens on.
  public var port: Int { core.port }

  /// `http://127.0.0.1:PORT`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// `http://localhost:PORT`: the same server under another host name, for cross-host redirects.
  public var localhostBaseURL: URL { URL(string: "http://localhost:\(port)")! }

  /// The limits the server was started with.
  public var configuration: Configuration { core.configuration }

  /// Publishes `body` at `path` (no query; e.g. `/file`), replacing whatever was there; later
  /// requests see it, requests already being answered finish with the old one.
  /// `etag` is the whole header value, quotes included (`"v1"` or `W/"v1"`); `lastModified` an
  /// HTTP-date (see ``httpDate(_:)``). Each is sent, and used for If-Range, only when set.
  public func serve(
    path: String, body: Data, etag: String? = nil, lastModified: String? = nil,
    contentType: String = "application/octet-stream"
  ) {
    core.publish(
      path: path,
      Resource(
        content: .data(body), etag: etag, lastModified: lastModified, contentType: contentType))
  }

  /// Publishes the file at `fileAt` at `path`, read in chunks for each request (so it can be far
  /// larger than memory should hold); its size is taken when a request arrives. If it cannot be
  /// opened then, the request gets 500.
  public func serve(
    path: String, fileAt file: URL, etag: String? = nil, lastModified: String? = nil,
    contentType: String = "application/octet-stream"
  ) {
    core.publish(
      path: path,
      Resource(
        content: .file(file.path), etag: etag, lastModified: lastModified,
        contentType: contentType))
  }

  /// Removes the resource at `path`; later requests get 404 (unless a fault answers them).
  public func remove(path: String) {
    core.publish(path: path, nil)
  }

  /// Applies `faults` to every later request to `path` (GET or HEAD) until changed; an empty list
  /// removes all faults of the path. Faults work on paths with no resource too (e.g. a redirect).
  public func setFaults(path: String, _ faults: [Fault]) {
    core.setFaultSteps(path: path, faults.isEmpty ? [] : [FaultStep(faults, requests: nil)])
  }

  /// Replaces the fault schedule of `path`: each later GET or HEAD request to it takes the faults
  /// of the first step, which is used up after its number of requests; once every step is used
  /// up, requests are answered correctly. A step with `requests: nil` never runs out.
  public func scheduleFaults(path: String, _ steps: [FaultStep]) {
    core.setFaultSteps(path: path, steps)
  }

  /// The steps of `path`'s schedule not yet used up, the first one with its remaining count.
  public func pendingFaults(path: String) -> [FaultStep] {
    core.faultSteps(path: path)
  }

  /// Every request answered so far (including refused ones, with an empty method if the request
  /// line was unreadable), in the order their responses were started.
  public var requests: [RecordedRequest] { core.recordedRequests }

  /// The logged requests whose path is `path`.
  public func requests(path: String) -> [RecordedRequest] {
    core.recordedRequests.filter { $0.path == path }
  }

  /// Empties the request log.
  public func clearRequests() {
    core.clearRecordedRequests()
  }

  /// How many connections are open now.
  public var openConnectionCount: Int { core.openConnectionCount }

  /// Stops listening, closes every open connection (cutting short stalls, trickles and writes)
  /// and waits for every thread of the server to end. Calling it again does nothing; it is also
  /// called when the server is deinitialized.
  public func stop() {
    core.stop()
  }

  /// `date` as an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`), for `lastModified` and If-Range.
  public static func httpDate(_ date: Date) -> String {
    HTTPDate.format(date)
  }

  /// The gzip member the ``Fault/gzip`` fault sends for `body`: stored deflate blocks of at most
  /// 65,535 bytes, no name or time, CRC-32 and size trailer.
  public static func gzipStored(_ body: Data) -> Data {
    var output = Data(StoredGzip.header)
    var crc = CRC32()
    body.withUnsafeBytes { bytes in
      crc.update(bytes)
      var offset = 0
      repeat {
        let count = min(StoredGzip.maximumBlock, bytes.count - offset)
        output.append(
          contentsOf: StoredGzip.blockHeader(length: count, final: offset + count == bytes.count))
        output.append(
          contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
        offset += count
      } while offset < bytes.count
    }
    output.append(contentsOf: StoredGzip.trailer(crc: crc.value, inputCount: body.count))
    return output
  }
}
