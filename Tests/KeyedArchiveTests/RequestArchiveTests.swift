import Foundation
@_spi(Differential) import KeyedArchive
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

  @Test(
    "A request without an HTTP message grows one for a new header, as Apple archives it, and ignores removals"
  )
  func noHTTPMessage() throws {
    let request = try URLRequestArchive(decoding: try load("no-http-message-16-slots.archive"))
    #expect(request.httpMethod == nil)
    let grown = try request.settingHeader("X", to: "1")
    #expect(grown.slotCount == 22)
    #expect(grown.httpMethod == "GET")
    #expect(grown.headerFields.map { "\($0.name): \($0.value)" } == ["X: 1"])
    // Exactly the archive of the same request built with the header from the start.
    var fields = URLRequestFields(url: "https://example.com/files/archive.zip")
    fields.headerFields = [.init("X", "1")]
    #expect(try grown.encoded() == (try URLRequestArchive(fields).encoded()))
    #expect(try request.settingHeader("X", to: nil) == request)
  }

  @Test("A 16-slot request in the $N layout grows with its props key moved past the new slots")
  func noHTTPMessageDollarLayout() throws {
    let request = try URLRequestArchive(decoding: try load("no-http-message-16-slots.archive"))
      .converted(to: .dollarNumbered)
    let grown = try request.settingHeader("X", to: "1")
    #expect(grown.layout == .dollarNumbered)
    #expect(grown.rootKey == "root")
    var fields = URLRequestFields(url: "https://example.com/files/archive.zip")
    fields.headerFields = [.init("X", "1")]
    let expected = try URLRequestArchive(fields).converted(to: .dollarNumbered)
    #expect(try grown.encoded() == (try expected.encoded()))
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

@Suite("Request layout conversion by renaming in place")
struct RequestRenamingTests {
  static let fixtures = [
    "get-22-slots.archive", "ios10-repaired-layout.archive", "ios10-standard-layout.archive",
    "no-http-message-16-slots.archive", "post-body-headers.archive",
  ]

  @Test("Renaming the keys in place writes what rebuilding writes", arguments: fixtures)
  func sameAsRebuilt(_ name: String) throws {
    let request = try URLRequestArchive(decoding: try fixture("archive/request/" + name))
    let target: URLRequestArchive.Layout =
      request.layout == .standard ? .dollarNumbered : .standard
    let renamed = try #require(request.renamedInPlace(to: target))
    let rebuilt = try request.converted(to: target).encoded()
    #expect(firstDifference(renamed, rebuilt) == nil)
    #expect(try request.encodedConverted(to: target) == rebuilt)
    // And back: the rename is its own inverse.
    let back = try URLRequestArchive(decoding: renamed)
    #expect(back.layout == request.layout.opposite)
    #expect(back.renamedInPlace(to: request.layout) == (try fixture("archive/request/" + name)))
  }

  @Test("Built requests of every shape: renaming in place writes what rebuilding writes")
  func generated() throws {
    var generator = SeededGenerator(seed: 0x5EED_0A11)
    for round in 0..<40 {
      var fields = URLRequestFields(url: "https://example.com/file/\(round)?q=\(round * 7)")
      if round % 4 != 0 {
        fields.httpMethod = ["GET", "POST", "PUT"][round % 3]
        for index in 0..<Int.random(in: 0...6, using: &generator) {
          fields.headerFields.append(
            .init("X-\(index)", "\(UInt32.random(in: 0...9999, using: &generator))"))
        }
      }
      if round % 5 == 1 { fields.body = Data((0..<round).map { UInt8($0) }) }
      if round % 8 == 0 { fields.httpMethod = nil }
      let standard = try URLRequestArchive(decoding: try URLRequestArchive(fields).encoded())
      let renamed = try #require(standard.renamedInPlace(to: .dollarNumbered), "round \(round)")
      #expect(
        firstDifference(renamed, try standard.converted(to: .dollarNumbered).encoded()) == nil)
      let repaired = try URLRequestArchive(decoding: renamed)
      let back = try #require(repaired.renamedInPlace(to: .standard))
      #expect(firstDifference(back, try repaired.converted(to: .standard).encoded()) == nil)
    }
  }

  @Test(
    "The renamed archive's request, made from the source's, is what its bytes decode to",
    arguments: fixtures)
  func renamedRequest(_ name: String) throws {
    let request = try URLRequestArchive(decoding: try fixture("archive/request/" + name))
    let target = request.layout.opposite
    // Read before the rename, so that the derived request starts from fields already read.
    _ = request.url
    let (bytes, renamed) = try #require(request.convertedInPlace(to: target))
    let read = try URLRequestArchive(decoding: bytes)
    #expect(renamed == read)
    #expect(renamed.layout == target)
    #expect(renamed.rootKey == read.rootKey)
    #expect(renamed.rootKey == (target == .standard ? "NSKeyedArchiveRootObjectKey" : "root"))
    #expect(renamed.url == read.url)
    #expect(renamed.httpMethod == read.httpMethod)
    #expect(renamed.headerFields.elementsEqual(read.headerFields, by: ==))
    #expect(renamed.body == read.body)
    #expect(renamed.className == read.className)
    #expect(renamed.timeoutInterval == read.timeoutInterval)
    #expect(renamed.cachePolicy == read.cachePolicy)
    #expect(renamed.slotCount == read.slotCount)
    // Its fields are read from the source's bytes, so it is not renamed in place again: back to
    // the source's layout it is rebuilt, which gives what renaming its own bytes gives.
    #expect(renamed.renamedInPlace(to: request.layout) == nil)
    #expect(
      try renamed.encodedConverted(to: request.layout) == read.renamedInPlace(to: request.layout))
    #expect(try renamed.encoded() == bytes)
  }

  @Test("A key the renaming would make twice is left to rebuilding")
  func collision() throws {
    let request = try URLRequestArchive(
      decoding: try fixture("archive/request/get-22-slots.archive"))
    guard case .object(var object) = try request.archive.decodeRoot() else {
      Issue.record("root is not an object")
      return
    }
    // `$4` is slot 1's key in the $N layout: an extra field of that name already there.
    object.fields.append(ArchivedField("$4", .inline(.integer(PropertyListInteger(1)))))
    let bytes = try KeyedArchive(root: .object(object)).encoded(as: .binary)
    let collided = try URLRequestArchive(decoding: bytes)
    #expect(collided.renamedInPlace(to: .dollarNumbered) == nil)
    #expect(
      try collided.encodedConverted(to: .dollarNumbered)
        == collided.converted(to: .dollarNumbered).encoded())
  }

  // The check that no kept string takes a new key's text looks at every string once, keys or
  // not: a value with such a text is left to rebuilding too, which writes what renaming would.
  @Test("A value with a new key's text is left to rebuilding", arguments: ["$5", "root"])
  func valueWithNewKeyText(_ text: String) throws {
    var fields = URLRequestFields(url: "https://example.com/a")
    fields.httpMethod = "GET"
    fields.headerFields.append(.init("X-A", text))
    let request = try URLRequestArchive(decoding: try URLRequestArchive(fields).encoded())
    #expect(request.renamedInPlace(to: .dollarNumbered) == nil)
    #expect(
      try request.encodedConverted(to: .dollarNumbered)
        == request.converted(to: .dollarNumbered).encoded())
    // The same request with another value is renamed.
    fields.headerFields[0] = .init("X-A", text + "x")
    let other = try URLRequestArchive(decoding: try URLRequestArchive(fields).encoded())
    #expect(other.renamedInPlace(to: .dollarNumbered) != nil)
  }

  @Test("An envelope with a second root key is left to rebuilding")
  func secondRootKey() throws {
    let bytes = try fixture("archive/request/get-22-slots.archive")
    let archive = try KeyedArchive(decoding: bytes)
    var envelope = archive.propertyList.dictionaryValue!
    var top = envelope["$top"]!.dictionaryValue!
    top["extra"] = .uid(1)
    envelope["$top"] = .dictionary(top)
    let edited = try PropertyListValue.dictionary(envelope).encoded(as: .binary)
    let request = try URLRequestArchive(decoding: edited)
    #expect(request.renamedInPlace(to: .dollarNumbered) == nil)
  }
}

extension URLRequestArchive.Layout {
  fileprivate var opposite: Self { self == .standard ? .dollarNumbered : .standard }
}
