import Foundation
import Glibc
import Synchronization
import TestHTTPServer
import Testing

let modified = "Sun, 06 Nov 1994 08:49:37 GMT"

/// A server with `patterned(1000)` at `/file`, ETag `"v1"`, Last-Modified `modified`.
func fileServer(
  _ configuration: TestHTTPServer.Configuration = TestHTTPServer.Configuration()
) throws -> TestHTTPServer {
  let server = try TestHTTPServer(configuration: configuration)
  server.serve(path: "/file", body: patterned(1000), etag: "\"v1\"", lastModified: modified)
  return server
}

func bytes(_ range: Range<Int>, of count: Int = 1000) -> [UInt8] {
  Array(patterned(count)[range])
}

@Suite struct ServingTests {
  @Test func getSendsTheWholeBodyWithItsValidators() throws {
    let server = try fileServer()
    defer { server.stop() }
    let response = try RawHTTPClient(port: server.port).exchange("GET", "/file")
    #expect(response.statusLine == "HTTP/1.1 200 OK")
    #expect(
      response.headerLines == [
        "Content-Type: application/octet-stream", "Accept-Ranges: bytes", "ETag: \"v1\"",
        "Last-Modified: \(modified)", "Content-Length: 1000",
      ])
    #expect(response.body == bytes(0..<1000))
    #expect(response.complete)
  }

  @Test func headSendsTheHeadOfGetAndNoBody() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let head = try client.exchange("HEAD", "/file")
    #expect(head.statusLine == "HTTP/1.1 200 OK")
    #expect(
      head.headerLines == [
        "Content-Type: application/octet-stream", "Accept-Ranges: bytes", "ETag: \"v1\"",
        "Last-Modified: \(modified)", "Content-Length: 1000",
      ])
    // Had HEAD sent a body, this response would start with it.
    let get = try client.exchange("GET", "/file", headers: ["Range: bytes=0-1"])
    #expect(get.statusLine == "HTTP/1.1 206 Partial Content")
    #expect(get.body == [0, 1])
  }

  @Test func resourcesWithoutValidatorsSendNone() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/plain", body: Data("hello".utf8), contentType: "text/plain")
    let response = try RawHTTPClient(port: server.port).exchange("GET", "/plain")
    #expect(
      response.headerLines == [
        "Content-Type: text/plain", "Accept-Ranges: bytes", "Content-Length: 5",
      ])
    #expect(response.bodyText == "hello")
  }

  @Test func unknownPathsGet404() throws {
    let server = try fileServer()
    defer { server.stop() }
    let response = try RawHTTPClient(port: server.port).exchange("GET", "/missing")
    #expect(response.statusLine == "HTTP/1.1 404 Not Found")
    #expect(
      response.headerLines == ["Content-Type: text/plain; charset=utf-8", "Content-Length: 10"])
    #expect(response.bodyText == "Not Found\n")
    server.remove(path: "/file")
    #expect(try RawHTTPClient(port: server.port).exchange("GET", "/file").status == 404)
  }

  @Test func queriesAndAbsoluteTargetsFindThePath() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    #expect(try client.exchange("GET", "/file?token=1").body == bytes(0..<1000))
    #expect(
      try client.exchange("GET", "http://127.0.0.1:\(server.port)/file?a=b").body
        == bytes(0..<1000))
    #expect(server.requests.map(\.path) == ["/file", "/file"])
    #expect(server.requests.map(\.query) == ["token=1", "a=b"])
  }

  struct RangeCase: Sendable, CustomTestStringConvertible {
    var header: String
    var status: Int
    var contentRange: String?
    var body: Range<Int>
    var testDescription: String { header }
  }

  @Test(arguments: [
    RangeCase(header: "bytes=0-", status: 206, contentRange: "bytes 0-999/1000", body: 0..<1000),
    RangeCase(
      header: "bytes=100-", status: 206, contentRange: "bytes 100-999/1000", body: 100..<1000),
    RangeCase(
      header: "bytes=100-199", status: 206, contentRange: "bytes 100-199/1000", body: 100..<200),
    RangeCase(
      header: "bytes=999-999", status: 206, contentRange: "bytes 999-999/1000", body: 999..<1000),
    RangeCase(
      header: "bytes=990-5000", status: 206, contentRange: "bytes 990-999/1000", body: 990..<1000),
    RangeCase(
      header: "bytes=-100", status: 206, contentRange: "bytes 900-999/1000", body: 900..<1000),
    RangeCase(header: "bytes=-5000", status: 206, contentRange: "bytes 0-999/1000", body: 0..<1000),
    RangeCase(header: "BYTES = 3-4", status: 206, contentRange: "bytes 3-4/1000", body: 3..<5),
    RangeCase(header: "bytes=10-19,", status: 206, contentRange: "bytes 10-19/1000", body: 10..<20),
    RangeCase(header: "bytes=0-9,20-29", status: 200, contentRange: nil, body: 0..<1000),
    RangeCase(header: "bytes=0-9, 2000-", status: 200, contentRange: nil, body: 0..<1000),
    RangeCase(header: "bytes=5-2", status: 200, contentRange: nil, body: 0..<1000),
    RangeCase(header: "bytes=abc", status: 200, contentRange: nil, body: 0..<1000),
    RangeCase(header: "bytes=+1-2", status: 200, contentRange: nil, body: 0..<1000),
    RangeCase(header: "items=0-9", status: 200, contentRange: nil, body: 0..<1000),
  ])
  func rangesAreServedAsRFC9110Says(_ test: RangeCase) throws {
    let server = try fileServer()
    defer { server.stop() }
    let response = try RawHTTPClient(port: server.port).exchange(
      "GET", "/file", headers: ["Range: \(test.header)"])
    #expect(response.status == test.status)
    #expect(response.header("Content-Range") == test.contentRange)
    #expect(response.header("Content-Length") == "\(test.body.count)")
    #expect(response.header("Accept-Ranges") == "bytes")
    #expect(response.body == bytes(test.body))
  }

  @Test(arguments: ["bytes=1000-", "bytes=1000-1005", "bytes=5000-", "bytes=-0"])
  func unsatisfiableRangesGet416WithTheLength(_ range: String) throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file", headers: ["Range: \(range)"])
    #expect(response.statusLine == "HTTP/1.1 416 Range Not Satisfiable")
    #expect(
      response.headerLines == [
        "Content-Type: application/octet-stream", "Accept-Ranges: bytes", "ETag: \"v1\"",
        "Last-Modified: \(modified)", "Content-Range: bytes */1000", "Content-Length: 0",
      ])
    #expect(response.body.isEmpty)
    // The connection stays usable.
    #expect(try client.exchange("GET", "/file").status == 200)
  }

  @Test(arguments: ["bytes=0-", "bytes=-1"])
  func noRangeOfAnEmptyBodyIsSatisfiable(_ range: String) throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/empty", body: Data())
    let client = try RawHTTPClient(port: server.port)
    let ranged = try client.exchange("GET", "/empty", headers: ["Range: \(range)"])
    #expect(ranged.status == 416)
    #expect(ranged.header("Content-Range") == "bytes */0")
    let whole = try client.exchange("GET", "/empty")
    #expect(whole.status == 200)
    #expect(whole.header("Content-Length") == "0")
  }

  @Test func headIgnoresRange() throws {
    let server = try fileServer()
    defer { server.stop() }
    let response = try RawHTTPClient(port: server.port).exchange(
      "HEAD", "/file", headers: ["Range: bytes=0-9"])
    #expect(response.status == 200)
    #expect(response.header("Content-Length") == "1000")
    #expect(response.header("Content-Range") == nil)
  }

  struct IfRangeCase: Sendable, CustomTestStringConvertible {
    var etag: String?
    var lastModified: String?
    var ifRange: String
    var matches: Bool
    var testDescription: String { "\(etag ?? "-") \(lastModified ?? "-") If-Range: \(ifRange)" }
  }

  @Test(arguments: [
    IfRangeCase(etag: "\"v1\"", lastModified: modified, ifRange: "\"v1\"", matches: true),
    IfRangeCase(etag: "\"v1\"", lastModified: modified, ifRange: "\"v2\"", matches: false),
    IfRangeCase(etag: "\"v1\"", lastModified: modified, ifRange: "W/\"v1\"", matches: false),
    IfRangeCase(etag: "W/\"v1\"", lastModified: modified, ifRange: "W/\"v1\"", matches: false),
    IfRangeCase(etag: "W/\"v1\"", lastModified: modified, ifRange: "\"v1\"", matches: false),
    IfRangeCase(etag: nil, lastModified: modified, ifRange: "\"v1\"", matches: false),
    IfRangeCase(etag: "\"v1\"", lastModified: modified, ifRange: modified, matches: true),
    IfRangeCase(
      etag: "\"v1\"", lastModified: modified, ifRange: "Sun, 06 Nov 1994 08:49:38 GMT",
      matches: false),
    IfRangeCase(
      etag: "\"v1\"", lastModified: modified, ifRange: "Sunday, 06-Nov-94 08:49:37 GMT",
      matches: false),
    IfRangeCase(etag: "\"v1\"", lastModified: nil, ifRange: modified, matches: false),
    IfRangeCase(etag: nil, lastModified: modified, ifRange: modified, matches: true),
  ])
  func ifRangeServesTheRangeOnlyWhenItMatches(_ test: IfRangeCase) throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(
      path: "/file", body: patterned(1000), etag: test.etag, lastModified: test.lastModified)
    let response = try RawHTTPClient(port: server.port).exchange(
      "GET", "/file", headers: ["Range: bytes=500-", "If-Range: \(test.ifRange)"])
    if test.matches {
      #expect(response.status == 206)
      #expect(response.header("Content-Range") == "bytes 500-999/1000")
      #expect(response.body == bytes(500..<1000))
    } else {
      #expect(response.status == 200)
      #expect(response.header("Content-Range") == nil)
      #expect(response.body == bytes(0..<1000))
    }
  }

  @Test func ifRangeWithoutRangeAndIfRangeBeforeAnUnsatisfiableRange() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let alone = try client.exchange("GET", "/file", headers: ["If-Range: \"v1\""])
    #expect(alone.status == 200)
    #expect(alone.body == bytes(0..<1000))
    let beyond = try client.exchange(
      "GET", "/file", headers: ["Range: bytes=1000-", "If-Range: \"v1\""])
    #expect(beyond.status == 416)
    let stale = try client.exchange(
      "GET", "/file", headers: ["Range: bytes=1000-", "If-Range: \"v0\""])
    #expect(stale.status == 200)
  }

  @Test func aReplacedResourceIsServedWithItsNewValidator() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    #expect(try client.exchange("GET", "/file").header("ETag") == "\"v1\"")
    let replacement = Data(patterned(1000).reversed())
    server.serve(path: "/file", body: replacement, etag: "\"v2\"", lastModified: modified)
    let resumed = try client.exchange(
      "GET", "/file", headers: ["Range: bytes=500-", "If-Range: \"v1\""])
    #expect(resumed.status == 200)
    #expect(resumed.header("ETag") == "\"v2\"")
    #expect(resumed.body == Array(replacement))
  }

  @Test func twoRequestsShareOneKeptAliveConnection() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let first = try client.exchange("GET", "/file", headers: ["Range: bytes=0-9"])
    let second = try client.exchange("GET", "/file", headers: ["Range: bytes=10-19"])
    #expect(first.body == bytes(0..<10))
    #expect(second.body == bytes(10..<20))
    #expect(first.header("Connection") == nil)
    #expect(second.header("Connection") == nil)
    #expect(server.requests.map(\.connection) == [0, 0])
    #expect(server.requests.map(\.indexOnConnection) == [0, 1])
  }

  @Test func pipelinedRequestsAreAnsweredInOrder() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let request = "GET /file HTTP/1.1\r\nHost: a\r\nRange: bytes=0-2\r\n\r\n"
    try client.send(
      request + request.replacingOccurrences(of: "0-2", with: "3-5") + "HEAD /file HTTP/1.1\r\n"
        + "Host: a\r\n\r\n")
    #expect(try client.readResponse().body == [0, 1, 2])
    #expect(try client.readResponse().body == [3, 4, 5])
    #expect(try client.readResponse(toHead: true).header("Content-Length") == "1000")
  }

  @Test func connectionCloseIsHonoured() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file", headers: ["Connection: close"])
    #expect(response.header("Connection") == "close")
    #expect(response.body == bytes(0..<1000))
    #expect(client.readSome() == .endOfStream)
  }

  @Test func http10ClosesUnlessAskedToKeepAlive() throws {
    let server = try fileServer()
    defer { server.stop() }
    let kept = try RawHTTPClient(port: server.port)
    try kept.send("GET /file HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    #expect(try kept.readResponse().header("Connection") == "keep-alive")
    try kept.send("GET /file HTTP/1.0\r\n\r\n")
    let last = try kept.readResponse()
    #expect(last.header("Connection") == "close")
    #expect(last.body == bytes(0..<1000))
    #expect(kept.readSome() == .endOfStream)
  }

  @Test func filesAreStreamedFromDisk() throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "TestHTTPServerTests-\(UUID().uuidString)")
    let content = patterned(300_000)
    try content.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let server = try TestHTTPServer(configuration: .init(chunkSize: 4096))
    defer { server.stop() }
    server.serve(path: "/disk", fileAt: file, etag: "\"d1\"")
    let client = try RawHTTPClient(port: server.port)
    let whole = try client.exchange("GET", "/disk")
    #expect(whole.header("Content-Length") == "300000")
    #expect(whole.body == Array(content))
    let ranged = try client.exchange("GET", "/disk", headers: ["Range: bytes=100000-199999"])
    #expect(ranged.header("Content-Range") == "bytes 100000-199999/300000")
    #expect(ranged.body == Array(content[100_000..<200_000]))
    // The size is read per request.
    try Data(content.prefix(10)).write(to: file)
    #expect(try client.exchange("GET", "/disk").body == Array(content.prefix(10)))
    try FileManager.default.removeItem(at: file)
    let missing = try client.exchange("GET", "/disk")
    #expect(missing.status == 500)
  }

  @Test func aHundredMegabyteBodyArrivesWhole() throws {
    let count = 100 * 1024 * 1024
    var body = Data(count: count)
    for index in stride(from: 0, to: count, by: 1_000_003) { body[index] = UInt8(index % 255 + 1) }
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/big", body: body)
    let response = try RawHTTPClient(port: server.port).exchange("GET", "/big")
    #expect(response.complete)
    #expect(response.body.count == count)
    #expect(Data(response.body) == body)
  }

  @Test func localhostReachesTheSameServer() throws {
    let server = try fileServer()
    defer { server.stop() }
    #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
    #expect(server.localhostBaseURL.absoluteString == "http://localhost:\(server.port)")
    let address = try #require(ipv4Address(of: "localhost"))
    let response = try RawHTTPClient(port: server.port, address: address).exchange(
      "GET", "/file", host: "localhost:\(server.port)")
    #expect(response.status == 200)
    #expect(server.requests.first?.header("host") == "localhost:\(server.port)")
  }

  @Test func manyConnectionsAreServedAtOnce() throws {
    let server = try fileServer()
    defer { server.stop() }
    let statuses = Mutex<[Int]>([])
    DispatchQueue.concurrentPerform(iterations: 16) { index in
      let status =
        (try? RawHTTPClient(port: server.port).exchange(
          "GET", "/file", headers: ["Range: bytes=\(index)-\(index)"]))
        .flatMap { $0.body == bytes(index..<(index + 1)) ? $0.status : nil } ?? 0
      statuses.withLock { $0.append(status) }
    }
    #expect(statuses.withLock { $0 } == Array(repeating: 206, count: 16))
    #expect(Set(server.requests.map(\.connection)).count == 16)
  }
}

/// The first IPv4 address `host` resolves to, in host byte order.
func ipv4Address(of host: String) -> UInt32? {
  var hints = addrinfo()
  hints.ai_family = AF_INET
  hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
  var list: UnsafeMutablePointer<addrinfo>?
  guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
  defer { freeaddrinfo(list) }
  return first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
    UInt32(bigEndian: $0.pointee.sin_addr.s_addr)
  }
}
