import Foundation
import TestHTTPServer
import Testing

@Suite struct FaultTests {
  @Test func closeAfterSendsExactlyThatManyBodyBytesThenEndOfStream() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.closeAfter(bytes: 100)])
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file")
    #expect(response.status == 200)
    #expect(response.header("Content-Length") == "1000")
    #expect(response.header("Connection") == nil)
    #expect(!response.complete)
    #expect(response.body == bytes(0..<100))
    #expect(client.readSome() == .endOfStream)
    #expect(server.requests.map(\.faults) == [[.closeAfter(bytes: 100)]])
  }

  @Test func closeAfterCutsARangeFromItsStart() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.closeAfter(bytes: 10)])
    let response = try RawHTTPClient(port: server.port).exchange(
      "GET", "/file", headers: ["Range: bytes=500-"])
    #expect(response.status == 206)
    #expect(response.header("Content-Length") == "500")
    #expect(!response.complete)
    #expect(response.body == bytes(500..<510))
  }

  @Test func closeAfterZeroBytesOrOnHeadSendsOnlyTheHead() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.closeAfter(bytes: 0)])
    let get = try RawHTTPClient(port: server.port)
    let response = try get.exchange("GET", "/file")
    #expect(response.body.isEmpty)
    #expect(!response.complete)
    let head = try RawHTTPClient(port: server.port)
    #expect(try head.exchange("HEAD", "/file").header("Content-Length") == "1000")
    #expect(head.readSome() == .endOfStream)
  }

  @Test func closeAfterMoreThanTheBodySendsItAllAndStillCloses() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.closeAfter(bytes: 5000)])
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file")
    #expect(response.complete)
    #expect(response.body == bytes(0..<1000))
    #expect(client.readSome() == .endOfStream)
  }

  @Test func ignoreRangeAnswers200WithTheWholeBody() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.ignoreRange])
    let response = try RawHTTPClient(port: server.port).exchange(
      "GET", "/file", headers: ["Range: bytes=100-199", "If-Range: \"v1\""])
    #expect(response.statusLine == "HTTP/1.1 200 OK")
    #expect(
      response.headerLines == [
        "Content-Type: application/octet-stream", "ETag: \"v1\"", "Last-Modified: \(modified)",
        "Content-Length: 1000",
      ])
    #expect(response.body == bytes(0..<1000))
  }

  @Test(arguments: [(10, "bytes 110-209/1000"), (-100, "bytes 0-99/1000")])
  func wrongContentRangeStartShiftsTheClaimNotTheBytes(_ delta: Int, _ claim: String) throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.wrongContentRangeStart(delta: delta)])
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file", headers: ["Range: bytes=100-199"])
    #expect(response.status == 206)
    #expect(response.header("Content-Range") == claim)
    #expect(response.header("Content-Length") == "100")
    #expect(response.body == bytes(100..<200))
    let whole = try client.exchange("GET", "/file")
    #expect(whole.status == 200)
    #expect(whole.header("Content-Range") == nil)
  }

  @Test(arguments: [(1, "bytes 100-199/1001"), (-500, "bytes 100-199/500")])
  func wrongContentRangeTotalLiesAboutTheLength(_ delta: Int, _ claim: String) throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(
      path: "/file", [.wrongContentRangeTotal(delta: delta), .wrongContentRangeStart(delta: 0)])
    let response = try RawHTTPClient(port: server.port).exchange(
      "GET", "/file", headers: ["Range: bytes=100-199"])
    #expect(response.header("Content-Range") == claim)
    #expect(response.body == bytes(100..<200))
  }

  @Test(arguments: [
    (503, "<html>busy</html>", "HTTP/1.1 503 Service Unavailable"),
    (500, "", "HTTP/1.1 500 Internal Server Error"),
    (416, "", "HTTP/1.1 416 Range Not Satisfiable"),
    (200, "<html><body>Please log in</body></html>", "HTTP/1.1 200 OK"),
  ])
  func statusReplacesTheResponse(_ status: Int, _ page: String, _ statusLine: String) throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.status(status, body: Data(page.utf8))])
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file", headers: ["Range: bytes=0-9"])
    #expect(response.statusLine == statusLine)
    #expect(
      response.headerLines == [
        "Content-Type: text/html; charset=utf-8", "Content-Length: \(page.utf8.count)",
      ])
    #expect(response.bodyText == page)
    // Not a closing fault: the connection stays open.
    #expect(try client.exchange("HEAD", "/file").statusLine == statusLine)
  }

  @Test func statusAnswersPathsWithoutAResource() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.setFaults(path: "/nothing", [.status(503, body: Data())])
    #expect(try RawHTTPClient(port: server.port).exchange("GET", "/nothing").status == 503)
  }

  @Test func trickleStillDeliversTheWholeBody() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.trickle(bytesPerChunk: 64, interval: .milliseconds(1))])
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file", headers: ["Range: bytes=200-899"])
    #expect(response.complete)
    #expect(response.body == bytes(200..<900))
    #expect(try client.exchange("GET", "/file").body == bytes(0..<1000))
  }

  @Test func stallSendsThePrefixThenNothingUntilTheServerStops() throws {
    let server = try fileServer()
    server.setFaults(path: "/file", [.stall(afterBytes: 100)])
    let client = try RawHTTPClient(port: server.port)
    try client.sendRequest("GET", "/file")
    let head = try client.readHead()
    #expect(head.statusLine == "HTTP/1.1 200 OK")
    #expect(head.header("Content-Length") == "1000")
    // The first 100 bytes…
    let (prefix, ending) = client.readBytes(100)
    #expect(prefix == bytes(0..<100))
    #expect(ending == nil)
    // …then silence…
    client.setReceiveTimeout(.milliseconds(200))
    #expect(client.readSome() == .timedOut)
    // …until stop() ends the stall and closes the connection.
    server.stop()
    #expect(client.readSome() == .endOfStream)
  }

  @Test func stallEndsAtTheStallTimeout() throws {
    let server = try fileServer(.init(stallTimeout: .milliseconds(100)))
    defer { server.stop() }
    server.setFaults(path: "/file", [.stall(afterBytes: 10)])
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange("GET", "/file")
    #expect(!response.complete)
    #expect(response.body == bytes(0..<10))
    #expect(client.readSome() == .endOfStream)
  }

  @Test(arguments: [
    (301, "HTTP/1.1 301 Moved Permanently"), (302, "HTTP/1.1 302 Found"),
    (307, "HTTP/1.1 307 Temporary Redirect"), (308, "HTTP/1.1 308 Permanent Redirect"),
  ])
  func redirectSendsLocation(_ status: Int, _ statusLine: String) throws {
    let server = try fileServer()
    defer { server.stop() }
    let target = "http://localhost:\(server.port)/file"
    server.setFaults(path: "/start", [.redirect(to: target, status: status)])
    let response = try RawHTTPClient(port: server.port).exchange("GET", "/start")
    #expect(response.statusLine == statusLine)
    #expect(response.headerLines == ["Location: \(target)", "Content-Length: 0"])
    #expect(response.body.isEmpty)
  }

  @Test func redirectDefaultsTo302() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.redirect(to: "/elsewhere")])
    let response = try RawHTTPClient(port: server.port).exchange("GET", "/file")
    #expect(response.status == 302)
    #expect(response.header("Location") == "/elsewhere")
  }

  @Test func aCrossHostRedirectIsLoggedWithEachRequestsHeaders() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.setFaults(
      path: "/start", [.redirect(to: "\(server.localhostBaseURL.absoluteString)/file")])
    let first = try RawHTTPClient(port: server.port).exchange(
      "GET", "/start", headers: ["Authorization: Bearer secret", "Range: bytes=10-"])
    let location = try #require(first.header("Location"))
    #expect(location == "http://localhost:\(server.port)/file")
    // What a careful client does on a cross-host redirect: drop Authorization, keep Range.
    let address = try #require(ipv4Address(of: "localhost"))
    let second = try RawHTTPClient(port: server.port, address: address).exchange(
      "GET", "/file", headers: ["Range: bytes=10-"], host: "localhost:\(server.port)")
    #expect(second.status == 206)
    let log = server.requests
    #expect(log.map(\.path) == ["/start", "/file"])
    #expect(log.map(\.status) == [302, 206])
    #expect(log.map { $0.header("Host") } == ["127.0.0.1", "localhost:\(server.port)"])
    #expect(log.map { $0.hasHeader("authorization") } == [true, false])
    #expect(log.map { $0.header("RANGE") } == ["bytes=10-", "bytes=10-"])
  }

  @Test func gzipSendsAStoredMemberOfTheWholeBodyWithAWeakETag() throws {
    let original = patterned(200_000)
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/z", body: original, etag: "\"v1\"", lastModified: modified)
    server.setFaults(path: "/z", [.gzip])
    let client = try RawHTTPClient(port: server.port)
    let response = try client.exchange(
      "GET", "/z", headers: ["Range: bytes=100-", "If-Range: \"v1\""])
    let length = 10 + 4 * 5 + 200_000 + 8
    #expect(response.statusLine == "HTTP/1.1 200 OK")
    #expect(
      response.headerLines == [
        "Content-Type: application/octet-stream", "Content-Encoding: gzip",
        "ETag: W/\"v1-gzip\"", "Last-Modified: \(modified)", "Content-Length: \(length)",
      ])
    let member = try StoredInflate.decode(response.body)
    #expect(member.content == Array(original))
    #expect(member.blockLengths == [65_535, 65_535, 65_535, 3395])
    #expect(member.crc == StoredInflate.crc32(Array(original)))
    #expect(member.size == 200_000)
    #expect(response.body == Array(TestHTTPServer.gzipStored(original)))
    let head = try client.exchange("HEAD", "/z")
    #expect(head.header("Content-Length") == "\(length)")
    #expect(head.header("Content-Encoding") == "gzip")
  }

  @Test func gzipOfAnEmptyBodyHasOneEmptyFinalBlock() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/z", body: Data())
    server.setFaults(path: "/z", [.gzip])
    let response = try RawHTTPClient(port: server.port).exchange("GET", "/z")
    #expect(response.header("ETag") == "W/\"gzip\"")
    let member = try StoredInflate.decode(response.body)
    #expect(member == .init(content: [], blockLengths: [0], crc: 0, size: 0))
  }

  @Test func gzipOfAFileAndCutShort() throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "TestHTTPServerTests-\(UUID().uuidString)")
    try patterned(70_000).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/z", fileAt: file, etag: "W/\"w\"")
    server.scheduleFaults(path: "/z", [.once(.gzip), .once(.gzip, .closeAfter(bytes: 50))])
    let client = try RawHTTPClient(port: server.port)
    let whole = try client.exchange("GET", "/z")
    #expect(whole.header("ETag") == "W/\"w-gzip\"")
    #expect(try StoredInflate.decode(whole.body).content == Array(patterned(70_000)))
    let cut = try client.exchange("GET", "/z")
    #expect(!cut.complete)
    #expect(cut.body == Array(whole.body.prefix(50)))
  }

  @Test func scheduledStepsAreUsedUpInOrder() throws {
    let server = try fileServer()
    defer { server.stop() }
    let page = Data("<html>down</html>".utf8)
    server.scheduleFaults(
      path: "/file",
      [
        .once(.status(503, body: page)), .times(2, .ignoreRange), .once(),
        .always(.closeAfter(bytes: 1)),
      ]
    )
    #expect(server.pendingFaults(path: "/file").count == 4)
    let client = try RawHTTPClient(port: server.port)
    let range = ["Range: bytes=0-9"]
    #expect(try client.exchange("GET", "/file", headers: range).status == 503)
    #expect(try client.exchange("HEAD", "/file", headers: range).status == 200)
    #expect(server.pendingFaults(path: "/file").first == FaultStep([.ignoreRange], requests: 1))
    // A refused method uses up nothing.
    #expect(try client.exchange("DELETE", "/file").status == 405)
    #expect(try client.exchange("GET", "/file", headers: range).status == 200)
    #expect(try client.exchange("GET", "/file", headers: range).status == 206)
    let cut = try client.exchange("GET", "/file", headers: range)
    #expect(cut.body == [0])
    #expect(server.pendingFaults(path: "/file") == [.always(.closeAfter(bytes: 1))])
    server.setFaults(path: "/file", [])
    #expect(server.pendingFaults(path: "/file").isEmpty)
    let again = try RawHTTPClient(port: server.port).exchange("GET", "/file")
    #expect(again.body == bytes(0..<1000))
    #expect(
      server.requests.map(\.faults) == [
        [.status(503, body: page)], [.ignoreRange], [], [.ignoreRange], [],
        [.closeAfter(bytes: 1)], [],
      ])
  }

  @Test func faultsOfOnePathLeaveOthersAlone() throws {
    let server = try fileServer()
    defer { server.stop() }
    server.serve(path: "/other", body: patterned(1000))
    server.setFaults(path: "/file", [.status(500, body: Data())])
    let client = try RawHTTPClient(port: server.port)
    #expect(try client.exchange("GET", "/other").status == 200)
    #expect(try client.exchange("GET", "/file").status == 500)
  }
}
