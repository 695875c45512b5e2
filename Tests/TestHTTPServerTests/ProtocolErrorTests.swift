import Foundation
import TestHTTPServer
import Testing

@Suite struct ProtocolErrorTests {
  struct BadRequest: Sendable, CustomTestStringConvertible {
    var raw: [UInt8]
    var status: Int
    var statusLine: String
    var testDescription: String { String(decoding: raw.prefix(60), as: UTF8.self).debugDescription }

    init(_ text: String, _ status: Int = 400, _ statusLine: String = "HTTP/1.1 400 Bad Request") {
      raw = Array(text.utf8)
      self.status = status
      self.statusLine = statusLine
    }

    init(bytes: [UInt8]) {
      raw = bytes
      status = 400
      statusLine = "HTTP/1.1 400 Bad Request"
    }
  }

  @Test(arguments: [
    BadRequest("GARBAGE\r\n\r\n"),
    BadRequest("GET /file\r\nHost: a\r\n\r\n"),
    BadRequest("GET  /file HTTP/1.1\r\nHost: a\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1 extra\r\nHost: a\r\n\r\n"),
    BadRequest("G(T /file HTTP/1.1\r\nHost: a\r\n\r\n"),
    BadRequest("GET file HTTP/1.1\r\nHost: a\r\n\r\n"),
    BadRequest("GET /file HTTP/1\r\nHost: a\r\n\r\n"),
    BadRequest("GET /file http/1.1\r\nHost: a\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nName : x\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\n: empty name\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nX-Folded: a\r\n b\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nX-Control: a\u{1}b\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n"),
    BadRequest("GET /file HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
    BadRequest(bytes: [0x00, 0xFF, 0x10, 0x80, 0x0D, 0x0A, 0x0D, 0x0A]),
    BadRequest(
      "GET /file HTTP/2.0\r\nHost: a\r\n\r\n", 505, "HTTP/1.1 505 HTTP Version Not Supported"),
    BadRequest(
      "GET /file HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501,
      "HTTP/1.1 501 Not Implemented"),
    BadRequest(
      "GET /file HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n", 413,
      "HTTP/1.1 413 Content Too Large"),
  ])
  func malformedRequestsAreRefusedAndTheConnectionClosed(_ test: BadRequest) throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send(test.raw)
    let response = try client.readResponse()
    #expect(response.statusLine == test.statusLine)
    #expect(response.header("Connection") == "close")
    #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
    #expect(client.readSome() == .endOfStream)
    #expect(server.requests.map(\.status) == [test.status])
  }

  @Test func anUnreadableRequestLineIsLoggedWithoutMethod() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send("GARBAGE\r\nHost: a\r\n\r\n")
    _ = try client.readResponse()
    let record = try #require(server.requests.first)
    #expect(record.method == "")
    #expect(record.target == "")
    #expect(record.headers.isEmpty)
    #expect(record.status == 400)
  }

  @Test func aHeadBeyondTheLimitGets431() throws {
    let server = try fileServer(.init(maxHeaderBytes: 1024))
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send(
      "GET /file HTTP/1.1\r\nHost: a\r\nX-Big: \(String(repeating: "x", count: 2000))\r\n\r\n")
    let response = try client.readResponse()
    #expect(response.statusLine == "HTTP/1.1 431 Request Header Fields Too Large")
    #expect(response.header("Connection") == "close")
    #expect(client.readSome() == .endOfStream)
  }

  @Test func aHeadJustWithinTheLimitIsServed() throws {
    let server = try fileServer(.init(maxHeaderBytes: 1024))
    defer { server.stop() }
    let fixed = "GET /file HTTP/1.1\r\nHost: a\r\nX-Big: \r\n\r\n".utf8.count
    let response = try RawHTTPClient(port: server.port).exchange(
      "GET", "/file", headers: ["X-Big: " + String(repeating: "x", count: 1024 - fixed)],
      host: "a")
    #expect(response.status == 200)
  }

  @Test func otherMethodsGet405AndKeepTheConnection() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send("POST /file HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
    let refused = try client.readResponse()
    #expect(refused.statusLine == "HTTP/1.1 405 Method Not Allowed")
    #expect(refused.header("Allow") == "GET, HEAD")
    #expect(refused.header("Connection") == nil)
    #expect(try client.exchange("GET", "/file").body == bytes(0..<1000))
  }

  @Test func bareLineFeedsAndLeadingEmptyLinesAreAccepted() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send("\r\n\nGET /file HTTP/1.1\nHost: a\nRange: bytes=1-2\n\n")
    let response = try client.readResponse()
    #expect(response.status == 206)
    #expect(response.body == [1, 2])
    #expect(
      server.requests.first?.headers == [
        HTTPHeaderField(name: "Host", value: "a"),
        HTTPHeaderField(name: "Range", value: "bytes=1-2"),
      ])
  }

  @Test func aRequestSplitAcrossWritesIsReassembled() throws {
    let server = try fileServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    for piece in ["GE", "T /file HTTP/1.1\r", "\nHost: a\r\n", "\r", "\n"] {
      try client.send(piece)
      usleep(5000)
    }
    #expect(try client.readResponse().status == 200)
  }
}
