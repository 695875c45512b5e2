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
      let decoded = try KeyedArchive(root: value).encoded()
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
