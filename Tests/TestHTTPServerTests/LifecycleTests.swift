import Foundation
import Glibc
import TestHTTPServer
import Testing

@Suite struct LifecycleTests {
  @Test func stopClosesIdleConnections() throws {
    let server = try fileServer()
    let client = try RawHTTPClient(port: server.port)
    _ = try client.exchange("GET", "/file")
    #expect(server.openConnectionCount == 1)
    server.stop()
    #expect(client.readSome() == .endOfStream)
    #expect(server.openConnectionCount == 0)
    server.stop()
  }

  @Test func stopWakesAClientBlockedInARead() throws {
    let server = try fileServer()
    let client = try RawHTTPClient(port: server.port)
    _ = try client.exchange("GET", "/file")
    let stopper = Thread {
      usleep(100_000)
      server.stop()
    }
    stopper.start()
    #expect(client.readSome() == .endOfStream)
  }

  @Test func stopEndsStallsAndTricklesAndReturns() throws {
    let server = try TestHTTPServer()
    server.serve(path: "/slow", body: patterned(100_000))
    server.serve(path: "/stuck", body: patterned(100_000))
    server.setFaults(path: "/slow", [.trickle(bytesPerChunk: 1, interval: .seconds(5))])
    server.setFaults(path: "/stuck", [.stall(afterBytes: 1)])
    let slow = try RawHTTPClient(port: server.port)
    let stuck = try RawHTTPClient(port: server.port)
    try slow.sendRequest("GET", "/slow")
    try stuck.sendRequest("GET", "/stuck")
    #expect(try slow.readHead().status == 200)
    #expect(try stuck.readHead().status == 200)
    #expect(slow.readBytes(1).bytes == [0])
    #expect(stuck.readBytes(1).bytes == [0])
    server.stop()
    #expect(slow.readSome() == .endOfStream)
    #expect(stuck.readSome() == .endOfStream)
    #expect(server.openConnectionCount == 0)
  }

  @Test func droppingTheServerStopsIt() throws {
    var server: TestHTTPServer? = try fileServer()
    let client = try RawHTTPClient(port: server!.port)
    _ = try client.exchange("GET", "/file")
    server = nil
    #expect(client.readSome() == .endOfStream)
  }

  @Test func idleConnectionsAreClosedAfterTheIdleTimeout() throws {
    let server = try fileServer(.init(idleTimeout: .milliseconds(200)))
    defer { server.stop() }
    let silent = try RawHTTPClient(port: server.port)
    #expect(silent.readSome() == .endOfStream)
    let used = try RawHTTPClient(port: server.port)
    #expect(try used.exchange("GET", "/file").status == 200)
    #expect(used.readSome() == .endOfStream)
  }

  @Test func connectionsBeyondTheLimitGet503() throws {
    let server = try fileServer(.init(maxConnections: 2))
    defer { server.stop() }
    let first = try RawHTTPClient(port: server.port)
    let second = try RawHTTPClient(port: server.port)
    #expect(try first.exchange("GET", "/file").status == 200)
    #expect(try second.exchange("GET", "/file").status == 200)
    let third = try RawHTTPClient(port: server.port)
    let refused = try third.readResponse()
    #expect(refused.statusLine == "HTTP/1.1 503 Service Unavailable")
    #expect(refused.headerLines == ["Content-Length: 0", "Connection: close"])
    #expect(third.readSome() == .endOfStream)
    #expect(server.requests.count == 2)

    try first.send("GET /file HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    _ = try first.readResponse()
    #expect(first.readSome() == .endOfStream)
    first.close()
    // The server notices the closed connection on its own thread; wait for that, not for time.
    var waited = 0
    while server.openConnectionCount > 1 && waited < 200 {
      usleep(10_000)
      waited += 1
    }
    #expect(server.openConnectionCount == 1)
    #expect(try RawHTTPClient(port: server.port).exchange("GET", "/file").status == 200)
  }

  @Test func theLogRecordsEachRequestAsReceived() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    _ = try client.exchange(
      "GET", "/file?x=1",
      headers: [
        "Range: bytes=10-19", "If-Range: \"v1\"", "authorization: Basic Zm9vOmJhcg==",
        "X-Twice: a", "X-Twice: b",
      ])
    _ = try client.exchange("HEAD", "/missing")
    let log = server.requests
    #expect(log.count == 2)
    let first = try #require(log.first)
    #expect(first.method == "GET")
    #expect(first.target == "/file?x=1")
    #expect(first.path == "/file")
    #expect(first.query == "x=1")
    #expect(first.version == "HTTP/1.1")
    #expect(first.status == 206)
    #expect(first.faults.isEmpty)
    #expect(
      first.headers.map(\.name) == [
        "Host", "Range", "If-Range", "authorization", "X-Twice", "X-Twice",
      ])
    #expect(first.header("range") == "bytes=10-19")
    #expect(first.header("IF-RANGE") == "\"v1\"")
    #expect(first.header("Authorization") == "Basic Zm9vOmJhcg==")
    #expect(first.headerValues("x-twice") == ["a", "b"])
    #expect(first.header("Cookie") == nil)
    #expect(!first.hasHeader("cookie"))
    #expect(log[1].method == "HEAD")
    #expect(log[1].status == 404)
    #expect((log[1].connection, log[1].indexOnConnection) == (first.connection, 1))
    #expect(server.requests(path: "/missing") == [log[1]])
    server.clearRequests()
    #expect(server.requests.isEmpty)
  }

  @Test func httpDatesAreIMFFixdates() {
    #expect(
      TestHTTPServer.httpDate(Date(timeIntervalSince1970: 784_111_777)) == modified)
    #expect(
      TestHTTPServer.httpDate(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
  }
}
