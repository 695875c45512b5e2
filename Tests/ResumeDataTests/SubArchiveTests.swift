import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

/// Network.framework blobs keep their requests and response as objects of their one archive;
/// converting one archives each on its own. `KeyedArchiveView.archivedAsRoot` writes those archives
/// from the bytes, and must write exactly what archiving the decoded objects writes.
@Suite("Objects archived on their own from the bytes")
struct SubArchiveTests {
  static let fields = ["currentRequest", "originalRequest", "response"]

  /// Each object field of a Network.framework blob read in place (so written from the bytes),
  /// against archiving its decoded value; the number compared.
  func compare(_ blob: ResumeData, _ label: String) throws -> Int {
    // Asked first: reading `networkFrameworkInfo` decodes the archive.
    #expect(blob.isReadInPlace, "\(label) is not read in place")
    let archives = try #require(
      ResumeDifferential.networkFrameworkArchives(blob), "\(label) is not a Network.framework blob")
    let info = try #require(blob.networkFrameworkInfo)
    var written = 0
    for field in Self.fields {
      guard case .reference(let value)? = info[field], value != .null else {
        #expect(archives[field] == nil, "\(label): \(field)")
        continue
      }
      // The response goes under `root`, which its decoder reads; requests under the literal.
      let decoded = try KeyedArchive(
        root: value, rootKey: field == "response" ? "root" : "NSKeyedArchiveRootObjectKey"
      ).encoded()
      let fromBytes = try #require(archives[field], "\(label): \(field)")
      #expect(firstDifference(fromBytes, decoded) == nil, "\(label): \(field)")
      written += 1
    }
    return written
  }

  @Test(
    "Every resume fixture: what is written from the bytes is what the tree writes",
    arguments: fixturesRecursively("resume"))
  func everyFixture(_ name: String) throws {
    guard let blob = try? ResumeData(decoding: try fixture(name)) else { return }
    #expect(ResumeDifferential.writerDifference(blob) == nil)
  }

  @Test("The Network.framework fixture: every object written from the bytes, as decoded")
  func fixtureBlob() throws {
    let data = try fixture("resume/network-framework.blob")
    let blob = try ResumeData(decoding: data)
    #expect(try compare(blob, "network-framework.blob") == 3)
    // The check of the root is the writer's walk: it accepts exactly the objects written.
    #expect(
      SubArchiveDifferential.checkDisagreement(
        NetworkFrameworkMask.toggled(data), firstObjects: 48) == nil)
  }

  @Test("Converted blobs of every shape: written from the bytes, as decoded")
  func generated() throws {
    var generator = SeededGenerator(seed: 0x0B1E_C75)
    let source = try ResumeData(decoding: try fixture("resume/keyed-v5-response.archive"))
    for round in 0..<24 {
      var fields = URLRequestFields(url: "https://example.com/file/\(round)?q=\(round * 7)")
      fields.isMutable = round % 2 == 0
      if round % 4 != 0 {
        fields.httpMethod = ["GET", "POST", "PUT"][round % 3]
        for index in 0..<Int.random(in: 0...6, using: &generator) {
          fields.headerFields.append(
            .init(
              "X-\(index)", String(repeating: "v", count: Int.random(in: 0...40, using: &generator))
            ))
        }
      }
      if round % 5 == 1 { fields.body = Data((0..<round).map { UInt8($0) }) }
      if round % 6 == 2 { fields.mainDocumentURL = "https://example.com/" }
      fields.timeoutInterval = [60, 0.5, 1e9][round % 3]
      var entries = source.entries
      entries[ResumeDataKey.currentRequest] = .data(try URLRequestArchive(fields).encoded())
      if round % 3 == 0 { entries[ResumeDataKey.originalRequest] = nil }
      let keyed = try ResumeData(building: entries, as: .keyed)
      let nw = try ResumeData(
        decoding: try keyed.converted(to: .networkFramework).blob.encoded())
      #expect(try compare(nw, "round \(round)") >= 1)
    }
  }

  @Test("Archives of more than 255 objects: references of two bytes, as the tree writes them")
  func wideReferences() throws {
    // A request of 150 header fields is over 300 objects flattened.
    var fields = URLRequestFields(url: "https://example.com/wide")
    fields.httpMethod = "GET"
    for index in 0..<150 { fields.headerFields.append(.init("X-Field-\(index)", "value \(index)")) }
    let source = try ResumeData(decoding: try fixture("resume/keyed-v5-response.archive"))
    var entries = source.entries
    entries[ResumeDataKey.currentRequest] = .data(try URLRequestArchive(fields).encoded())
    let keyed = try ResumeData(building: entries, as: .keyed)
    let nw = try ResumeData(decoding: try keyed.converted(to: .networkFramework).blob.encoded())
    #expect(try compare(nw, "150 header fields") >= 1)
    // A root dictionary of 200 entries, written straight.
    let pairs = (0..<200).map {
      ArchivedDictionaryEntry(.string("key \($0)"), .string("value \($0 % 150)"))
    }
    let straight = try #require(
      KeyedArchive.encodedDictionary(pairs, mutable: true, rootKey: "NSKeyedArchiveRootObjectKey"))
    let tree = try KeyedArchive(root: .dictionary(pairs, mutable: true)).encoded(as: .binary)
    #expect(firstDifference(straight, tree) == nil)
  }

  @Test("One writer for every object of an archive: each as the tree writes it")
  func oneWriterForMany() throws {
    let data = NetworkFrameworkMask.toggled(try fixture("resume/network-framework.blob"))
    let archive = try KeyedArchive(decoding: data)
    let written = try #require(SubArchiveDifferential.archivedAsRoot(data, firstObjects: 1_000))
    #expect(written.count >= 3)
    for (uid, bytes) in written {
      let tree = try KeyedArchive(root: archive.decodeValue(uid)).encoded()
      #expect(firstDifference(bytes, tree) == nil, "object \(uid)")
    }
  }

  @Test("Each object written from the fixture gets a view of its bytes: the checked one")
  func writtenViews() throws {
    let data = NetworkFrameworkMask.toggled(try fixture("resume/network-framework.blob"))
    let views = try #require(SubArchiveDifferential.writtenViews(data, firstObjects: 1_000))
    let written = try #require(SubArchiveDifferential.archivedAsRoot(data, firstObjects: 1_000))
    #expect(views.made == written.count)
    #expect(views.differences.isEmpty)
    // Under limits the fixture's request exceeds, none is made (the check then decides).
    let tight = try #require(
      SubArchiveDifferential.writtenViews(
        data, firstObjects: 1_000, writtenLimits: PropertyListLimits(maximumVisitedElements: 30)))
    #expect(tight.made < written.count)
    // Near every limit, a view is made only where checking the bytes accepts them (a view where
    // the check refuses would be a difference).
    let tightLimits: [PropertyListLimits] =
      [10, 20, 30, 40, 60, 100].map { PropertyListLimits(maximumVisitedElements: $0) }
      + [3, 4].map { PropertyListLimits(maximumDepth: $0) }
      + [8, 20, 40].map { PropertyListLimits(maximumValueLength: $0) }
    for limits in tightLimits {
      let views = try #require(
        SubArchiveDifferential.writtenViews(data, firstObjects: 1_000, writtenLimits: limits))
      #expect(views.differences.isEmpty, "\(limits)")
    }
  }

  @Test("A blob's requests read from the writer's views are those decoding their bytes gives")
  func requestsFromWrittenViews() throws {
    let blob = try ResumeData(decoding: try fixture("resume/network-framework.blob"))
    let archives = try #require(ResumeDifferential.networkFrameworkArchives(blob))
    for (field, request) in [
      ("currentRequest", blob.currentRequest), ("originalRequest", blob.originalRequest),
    ] {
      let bytes = try #require(archives[field], "\(field)")
      let decoded = try URLRequestArchive(decoding: bytes)
      #expect(request == decoded, "\(field)")
      #expect(request?.url == decoded.url, "\(field)")
      #expect(request?.httpMethod == decoded.httpMethod, "\(field)")
      #expect(
        request?.headerFields.map { "\($0.name): \($0.value)" }
          == decoded.headerFields.map { "\($0.name): \($0.value)" }, "\(field)")
    }
  }

  /// A response object holding these fields.
  static func response(_ fields: [ArchivedField], chain: [String]? = nil) -> ArchivedValue {
    .object(
      ArchivedObject(
        classChain: chain ?? ["NSHTTPURLResponse", "NSURLResponse", "NSObject"], fields: fields))
  }

  static func headers(_ pairs: [(ArchivedValue, ArchivedValue)]) -> ArchivedValue {
    .dictionary(pairs.map { ArchivedDictionaryEntry($0.0, $0.1) }, mutable: false)
  }

  @Test("A response's validators read with the parts in place, as its decoded header fields")
  func responseValidators() throws {
    let request = try KeyedArchive(
      decoding: URLRequestArchive(URLRequestFields(url: "https://example.com/a")).encoded()
    ).decodeRoot()
    let etag = ArchivedValue.string("\"abc\"")
    let date = ArchivedValue.string("Mon, 01 Jan 2024 00:00:00 GMT")
    let cases: [(name: String, response: ArchivedValue, etag: String?, date: String?)] = [
      (
        "both, in other cases",
        Self.response([
          ArchivedField("statusCode", .inline(.integer(PropertyListInteger(200)))),
          ArchivedField(
            "allHeaderFields",
            .reference(Self.headers([(.string("etag"), etag), (.string("LAST-MODIFIED"), date)]))),
        ]), "\"abc\"", "Mon, 01 Jan 2024 00:00:00 GMT"
      ),
      (
        "the first string of a name, past values that are not strings",
        Self.response([
          ArchivedField(
            "headers",
            .reference(
              Self.headers([
                (.string("ETag"), .integer(PropertyListInteger(5))),
                (.integer(PropertyListInteger(1)), etag),
                (.string("ETag"), .string("second")), (.string("ETag"), .string("third")),
              ])))
        ]), "second", nil
      ),
      (
        "a header field that is no dictionary, then one that is",
        Self.response([
          ArchivedField("Headers", .inline(.string("inline"))),
          ArchivedField("headerText", .reference(.string("a string"))),
          ArchivedField("headerNil", .reference(.null)),
          ArchivedField("headerList", .reference(.array([etag], mutable: false))),
          ArchivedField("theHeaderFields", .reference(Self.headers([(.string("Etag"), etag)]))),
          ArchivedField(
            "moreHeaders", .reference(Self.headers([(.string("Last-Modified"), date)]))),
        ]), "\"abc\"", nil
      ),
      (
        "no header field",
        Self.response([ArchivedField("status", .inline(.integer(PropertyListInteger(200))))]), nil,
        nil
      ),
      (
        "not a response",
        Self.response(
          [ArchivedField("headers", .reference(Self.headers([(.string("ETag"), etag)])))],
          chain: ["NSCachedResponse", "NSObject"]), nil, nil
      ),
      ("a dictionary, not a response", Self.headers([(.string("ETag"), etag)]), nil, nil),
    ]
    for (name, response, expectedTag, expectedDate) in cases {
      let data = try NetworkFrameworkInPlaceTests.blob([
        ArchivedField("currentRequest", .reference(request)),
        ArchivedField("response", .reference(response)),
        ArchivedField("tempFileName", .reference(.string("CFNetworkDownload_v.tmp"))),
      ])
      let blob = try ResumeData(decoding: data)
      #expect(blob.isReadInPlace, "\(name)")
      #expect(
        ResumeDifferential.responseValidatorsReadInPlace(blob) == [expectedTag, expectedDate],
        "\(name)")
      #expect(blob.entityTag == expectedTag, "\(name)")
      #expect(blob.serverDownloadDate == expectedDate, "\(name)")
      #expect(ResumeDifferential.writerDifference(blob) == nil, "\(name)")
      #expect(ResumeDifferential.difference(data) == nil, "\(name)")
      // Converted, the validators become entries of their own.
      let keyed = try blob.converted(to: .keyed).blob
      #expect(keyed.entityTag == expectedTag, "\(name)")
      #expect(keyed.serverDownloadDate == expectedDate, "\(name)")
      let eager = try ResumeData(decodingEagerly: data).converted(to: .keyed).blob
      #expect(keyed.entries == eager.entries, "\(name)")
    }
  }

  @Test(
    "A root of plain values is written straight, as archived through the tree",
    arguments: [
      "resume/keyed-v4.archive", "resume/keyed-v5-response.archive", "resume/segmented.archive",
      "resume/safari.archive", "resume/v2.xml.plist", "resume/v1.xml.plist",
    ])
  func plainRoot(_ name: String) throws {
    let blob = try ResumeData(decoding: try fixture(name))
    var pairs = blob.entries.entries.map {
      ArchivedDictionaryEntry(.string($0.key), Self.archived($0.value))
    }
    // Every kind of plain value, and a value shared (the builder keeps one object).
    pairs += [
      ArchivedDictionaryEntry(.string("X-Real"), .real(PropertyListReal(0.25))),
      ArchivedDictionaryEntry(.string("X-Float"), .real(PropertyListReal(Float(1.5)))),
      ArchivedDictionaryEntry(.string("X-Flag"), .boolean(true)),
      ArchivedDictionaryEntry(.string("X-Other-Flag"), .boolean(true)),
      ArchivedDictionaryEntry(.string("X-Negative"), .integer(PropertyListInteger(-7))),
      ArchivedDictionaryEntry(.string("X-Null"), .null),
      ArchivedDictionaryEntry(.string("X-Again"), pairs.first?.value ?? .null),
    ]
    for mutable in [true, false] {
      for rootKey in ["NSKeyedArchiveRootObjectKey", "root"] {
        let straight = try #require(
          KeyedArchive.encodedDictionary(pairs, mutable: mutable, rootKey: rootKey))
        let tree = try KeyedArchive(root: .dictionary(pairs, mutable: mutable), rootKey: rootKey)
          .encoded(as: .binary)
        #expect(firstDifference(straight, tree) == nil, "\(name) mutable \(mutable) \(rootKey)")
      }
    }
    // What it does not write straight: non-ASCII text, a date, another root key.
    #expect(
      KeyedArchive.encodedDictionary(
        [ArchivedDictionaryEntry(.string("k"), .string("été"))], mutable: true, rootKey: "root")
        == nil)
    #expect(
      KeyedArchive.encodedDictionary(
        [ArchivedDictionaryEntry(.string("k"), .date(Date()))], mutable: true, rootKey: "root")
        == nil)
    #expect(KeyedArchive.encodedDictionary([], mutable: true, rootKey: "top") == nil)
  }

  static func archived(_ value: PropertyListValue) -> ArchivedValue {
    switch value {
    case .string(let string): .string(string)
    case .integer(let integer): .integer(integer)
    case .real(let real): .real(real)
    case .boolean(let flag): .boolean(flag)
    case .data(let data): .data(data)
    default: .null
    }
  }
}
