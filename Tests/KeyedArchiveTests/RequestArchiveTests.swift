import Foundation
import KeyedArchive
import PropertyList
import TestSupport
import Testing

/// A request fixture, the typed values it was built from, and what decoding it must give.
struct RequestFixture: Sendable, CustomTestStringConvertible {
  let file: String
  let fields: URLRequestFields
  let slotCount: Int
  var testDescription: String { file }
}

let requestFixtures: [RequestFixture] = [
  RequestFixture(
    file: "no-http-message-16-slots.archive",
    fields: URLRequestFields(url: "https://example.com/files/archive.zip", httpMethod: nil),
    slotCount: 16),
  RequestFixture(
    file: "get-22-slots.archive",
    fields: URLRequestFields(url: "https://example.com/files/archive.zip"),
    slotCount: 22),
  RequestFixture(
    file: "post-body-headers.archive",
    fields: URLRequestFields(
      url: "https://api.example.com/v2/download?id=42", httpMethod: "POST",
      headerFields: [
        .init("Authorization", "Bearer abc123"), .init("Content-Type", "application/json"),
        .init("X-Request-ID", "7f3e"),
      ],
      body: Data("{\"file\":\"report.pdf\"}".utf8), timeoutInterval: 30,
      mainDocumentURL: "https://api.example.com/",
      allowsCellularAccess: false),
    slotCount: 22),
  RequestFixture(
    file: "ios10-standard-layout.archive",
    fields: URLRequestFields(
      url: "http://downloads.example.org/big.iso", headerFields: [.init("Range", "bytes=0-")],
      isMutable: false),
    slotCount: 22),
]

@Suite("Request archives")
struct RequestArchiveTests {
  func load(_ file: String) throws -> Data {
    try fixture("archive/request/" + file)
  }

  @Test("Each request fixture decodes to its exact typed fields", arguments: requestFixtures)
  func typedFields(_ request: RequestFixture) throws {
    let archive = try URLRequestArchive(decoding: try load(request.file))
    let fields = request.fields
    #expect(archive.layout == .standard)
    #expect(archive.archive.rootKey == "NSKeyedArchiveRootObjectKey")
    #expect(archive.className == (fields.isMutable ? "NSMutableURLRequest" : "NSURLRequest"))
    #expect(archive.slotCount == request.slotCount)
    #expect(archive.url == fields.url)
    #expect(archive.httpMethod == fields.httpMethod)
    #expect(
      archive.headerFields.map { "\($0.name): \($0.value)" }
        == fields.headerFields.map { "\($0.name): \($0.value)" })
    #expect(archive.body == fields.body)
    #expect(archive.timeoutInterval == fields.timeoutInterval)
    #expect(archive.cachePolicy == fields.cachePolicy)
    #expect(archive.mainDocumentURL == fields.mainDocumentURL)
    #expect(archive.httpShouldHandleCookies == fields.httpShouldHandleCookies)
    #expect(archive.allowsCellularAccess == fields.allowsCellularAccess)
    #expect(archive.networkServiceType == fields.networkServiceType)
    #expect(archive.priority == fields.priority)
  }

  @Test("Each request fixture re-encodes to identical bytes", arguments: requestFixtures)
  func reencodes(_ request: RequestFixture) throws {
    let bytes = try load(request.file)
    #expect(try URLRequestArchive(decoding: bytes).encoded() == bytes)
  }

  @Test("Building from typed values gives exactly the fixture's bytes", arguments: requestFixtures)
  func builds(_ request: RequestFixture) throws {
    #expect(try URLRequestArchive(request.fields).encoded() == (try load(request.file)))
  }

  @Test("The layout keys: $0 = 2, $1 = 9, $2 = slots, every slot, props, in Apple's envelope")
  func layoutKeys() throws {
    let archive = try URLRequestArchive(decoding: try load("get-22-slots.archive")).archive
    guard case .dictionary(let request) = archive.objects[Int(archive.rootUID)] else {
      Issue.record("root is not a dictionary")
      return
    }
    #expect(archive.rootUID == 1)
    #expect(archive.objects[0] == .string("$null"))
    #expect(request["$0"] == .integer(PropertyListInteger(2)))
    #expect(request["$1"] == .integer(PropertyListInteger(9)))
    #expect(request["$2"] == .integer(PropertyListInteger(22)))
    #expect((0..<22).allSatisfy { request["__nsurlrequest_proto_prop_obj_\($0)"]?.uidValue != nil })
    #expect(request["__nsurlrequest_proto_props"] == .uid(0))
    #expect(archive.envelope.keys == ["$version", "$objects", "$archiver", "$top"])
  }

  @Test("Changing the URL changes only the URL")
  func editURL() throws {
    let original = try URLRequestArchive(decoding: try load("post-body-headers.archive"))
    let edited = try URLRequestArchive(
      decoding: try original.settingURL("https://mirror.example.net/file").encoded())
    #expect(edited.url == "https://mirror.example.net/file")
    #expect(edited.mainDocumentURL == original.mainDocumentURL)
    #expect(edited.httpMethod == original.httpMethod)
    #expect(edited.headerFields.map(\.value) == original.headerFields.map(\.value))
    #expect(edited.body == original.body)
    #expect(edited.timeoutInterval == original.timeoutInterval)
    #expect(edited.allowsCellularAccess == original.allowsCellularAccess)
    #expect(edited.slotCount == original.slotCount)
    for slot in 0..<22 where slot != 1 {
      #expect(edited.slotObject(slot) == original.slotObject(slot) || slot == 4, "slot \(slot)")
    }
  }

  @Test("Replacing, adding and removing one header changes only that header")
  func editHeaders() throws {
    let original = try URLRequestArchive(decoding: try load("post-body-headers.archive"))
    let replaced = try original.settingHeader("authorization", to: "Bearer new")
    #expect(
      replaced.headerFields.map { "\($0.name): \($0.value)" } == [
        "Authorization: Bearer new", "Content-Type: application/json", "X-Request-ID: 7f3e",
      ])
    let added = try replaced.settingHeader("If-Range", to: "\"abc\"")
    #expect(added.headerValue("if-range") == "\"abc\"")
    #expect(added.headerFields.count == 4)
    let removed = try added.settingHeader("Content-Type", to: nil)
    #expect(removed.headerFields.map(\.name) == ["Authorization", "X-Request-ID", "If-Range"])
    let roundTrip = try URLRequestArchive(decoding: try removed.encoded())
    #expect(roundTrip.url == original.url)
    #expect(roundTrip.body == original.body)
    #expect(roundTrip.headerFields.map(\.name) == ["Authorization", "X-Request-ID", "If-Range"])
  }

  @Test("A request without an HTTP message refuses new headers and ignores removals")
  func noHTTPMessage() throws {
    let request = try URLRequestArchive(decoding: try load("no-http-message-16-slots.archive"))
    #expect(request.httpMethod == nil)
    #expect(throws: KeyedArchiveError.self) { try request.settingHeader("X", to: "1") }
    #expect(try request.settingHeader("X", to: nil) == request)
  }

  @Test("The iOS 10.0-10.1 layout: $N keys and root, converted both ways")
  func ios10Layout() throws {
    let standardBytes = try load("ios10-standard-layout.archive")
    let repairedBytes = try load("ios10-repaired-layout.archive")
    let standard = try URLRequestArchive(decoding: standardBytes)
    let repaired = try URLRequestArchive(decoding: repairedBytes)
    #expect(repaired.layout == .dollarNumbered)
    #expect(repaired.archive.rootKey == "root")
    #expect(repaired.key(ofSlot: 0) == "$3")
    #expect(repaired.url == standard.url)
    #expect(repaired.headerFields.map(\.value) == ["bytes=0-"])
    guard case .dictionary(let fields) = repaired.archive.objects[Int(repaired.archive.rootUID)]
    else {
      Issue.record("root is not a dictionary")
      return
    }
    // Every old key is gone, not left behind (the widely copied fix's bug).
    #expect(fields.keys.filter { $0.hasPrefix("__nsurlrequest") }.isEmpty)
    // Slots 0-21 are $3-$24; __nsurlrequest_proto_props moved to the next number, $25.
    #expect(fields["$24"] == .uid(0))
    #expect(fields["$25"] == .uid(0))
    #expect(fields["$26"] == nil)
    #expect(fields.count == 3 + 22 + 1 + 1)
    #expect(try standard.converted(to: .dollarNumbered).encoded() == repairedBytes)
    #expect(try repaired.converted(to: .standard).encoded() == standardBytes)
    #expect(try repaired.encoded() == repairedBytes)
  }

  @Test("A non-request root is refused with its key path")
  func notARequest() throws {
    let archive = try KeyedArchive(root: .array([.string("x")]))
    #expect {
      _ = try URLRequestArchive(archive: archive)
    } throws: { error in
      (error as? KeyedArchiveError)?.keyPath == "$top.NSKeyedArchiveRootObjectKey"
        && (error as? KeyedArchiveError)?.code == .badObject
    }
  }
}
