import Foundation
import KeyedArchive
import PropertyList
import TestSupport
import Testing

@Suite("Response archives")
struct ResponseArchiveTests {
  @Test("The synthetic response decodes to its URL, status and headers, and re-encodes exactly")
  func synthetic() throws {
    let bytes = try fixture("archive/response/synthetic-http-response.archive")
    let response = try URLResponseArchive(decoding: bytes)
    #expect(response.archive.rootKey == "root")
    #expect(response.classChain == ["NSHTTPURLResponse", "NSURLResponse", "NSObject"])
    #expect(response.url == "https://example.com/files/archive.zip")
    #expect(response.statusCode == 206)
    #expect(
      response.headerFields?.map { "\($0.name): \($0.value)" } == [
        "Content-Range: bytes 1048576-2097151/4194304", "ETag: \"5534b35d-7c7be1\"",
        "Last-Modified: Mon, 20 Apr 2015 08:05:49 GMT",
      ])
    #expect(try response.archive.encoded() == bytes)
  }

  @Test("A response without named status or header fields types only its URL")
  func unknownLayout() throws {
    let object = ArchivedObject(
      classChain: ["NSURLResponse", "NSObject"],
      fields: [
        ArchivedField("a", .reference(.url(ArchivedURL(relative: "https://example.com/")))),
        ArchivedField("b", .inline(.integer(PropertyListInteger(200)))),
      ])
    let response = try URLResponseArchive(
      archive: KeyedArchive(root: .object(object), rootKey: "root"))
    #expect(response.url == "https://example.com/")
    #expect(response.statusCode == nil)
    #expect(response.headerFields == nil)
  }

  @Test("A root that is not a response is refused with its key path")
  func notAResponse() throws {
    let request = try fixture("archive/request/get-22-slots.archive")
    #expect {
      _ = try URLResponseArchive(decoding: request)
    } throws: { error in
      (error as? KeyedArchiveError)?.keyPath == "$top.NSKeyedArchiveRootObjectKey"
    }
  }
}
