import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

@Suite("Healthy plain v2 blobs answered without their requests decoded")
struct HealthyPlainBlobTests {
  /// No target, then every target.
  static let targets: [RepairTarget?] = [nil] + RepairTarget.allCases.map { $0 }

  /// The targets a healthy v2 blob is answered for: all but iOS 10.0–10.1 (whose requests are
  /// rewritten) and Network.framework (which reads no v2 blob).
  static let answered: [RepairTarget?] = [
    nil, .ios10Late, .ios11Early, .ios11Late, .ios12, .ios13Later, .linux,
  ]

  /// A v2 blob as CFNetwork writes it, in `format`.
  static func healthyBlob(
    _ format: PropertyListFormat = .xml,
    edit: (inout PropertyListDictionary) throws -> Void = { _ in }
  ) throws -> Data {
    var entries = try plainEntries(
      version: 2,
      extra: [
        (ResumeDataKey.tempFileName, .string("CFNetworkDownload_g7h8i9.tmp")),
        (ResumeDataKey.serverDownloadDate, .string("Mon, 20 Apr 2015 08:05:49 GMT")),
      ])
    try edit(&entries)
    return try PropertyListValue.dictionary(entries).encoded(as: format)
  }

  static func reading(_ bytes: Data, for target: RepairTarget?) throws -> HealthyPlainBlob? {
    guard case .healthy(let healthy) = try ResumeData.reading(bytes, for: target) else {
      return nil
    }
    return healthy
  }

  @Test(
    "Every fixture, for every target, is answered only where the full path agrees",
    arguments: blobAndArchiveFixtures())
  func fixtures(_ file: String) throws {
    let bytes = try fixture(file)
    for target in Self.targets {
      #expect(
        ResumeDifferential.healthyPlainDifference(bytes, for: target) == nil, "\(target as Any)")
    }
  }

  @Test("The v2 fixtures are answered, with the finding diagnosis makes of their requests")
  func v2Fixtures() throws {
    for (file, container) in [
      ("resume/v2.xml.plist", ResumeDataContainer.xmlPlist),
      ("resume/v2.binary.plist", .binaryPlist),
      ("resume/ios10.0-v2.xml.plist", .xmlPlist),
    ] {
      let healthy = try #require(try Self.reading(fixture(file), for: .ios13Later), "\(file)")
      #expect(healthy.container == container)
      #expect(healthy.generation == .v2)
      #expect(healthy.infoVersion == 2)
      #expect(healthy.findings.map(\.code) == ["ios10-request-layout"])
      #expect(healthy.findings.map(\.path) == [ResumeDataKey.currentRequest])
      #expect(healthy.findings.map(\.severity) == [.info])
    }
  }

  @Test(
    "A healthy blob is answered for the targets that read it as it is",
    arguments: [.xml, .binary] as [PropertyListFormat])
  func recognized(format: PropertyListFormat) throws {
    let bytes = try Self.healthyBlob(format)
    for target in Self.targets {
      let healthy = try Self.reading(bytes, for: target)
      #expect((healthy != nil) == Self.answered.contains(target), "\(target as Any)")
      #expect(ResumeDifferential.healthyPlainDifference(bytes, for: target) == nil)
    }
    // The request fixture's root key is NSKeyedArchiveRootObjectKey: the note names the first.
    let healthy = try #require(try Self.reading(bytes, for: nil))
    #expect(try healthy.findings == ResumeData(decoding: bytes).findings())
    // Without an info version, and with two different requests.
    let other = try Self.healthyBlob(format) { entries in
      entries[ResumeDataKey.infoVersion] = nil
      entries[ResumeDataKey.originalRequest] = .data(
        try URLRequestArchive(URLRequestFields(url: url + "?from=link")).encoded())
    }
    let answered = try #require(try Self.reading(other, for: .ios13Later))
    #expect(answered.infoVersion == nil)
    #expect(ResumeDifferential.healthyPlainDifference(other, for: .ios13Later) == nil)
  }

  @Test("Whatever it does not answer is decoded as the full path decodes it")
  func decodedAlike() throws {
    let bytes = try Self.healthyBlob { entries in
      entries[ResumeDataKey.currentRequest] = .data(
        try requestArchive("ios10-repaired-layout.archive"))
    }
    guard case .decoded(let blob) = try ResumeData.reading(bytes, for: .ios13Later) else {
      Issue.record("a blob in the $N layout was answered")
      return
    }
    let decoded = try ResumeData(decoding: bytes)
    #expect(blob == decoded)
    #expect(blob.currentRequest?.layout == .dollarNumbered)
    #expect(blob.currentRequest == decoded.currentRequest)
    #expect(blob.originalRequest == decoded.originalRequest)
    #expect(blob.findings(for: .ios13Later) == decoded.findings(for: .ios13Later))
  }

  /// Blobs the full path reports something about, each one change away from a healthy one: the
  /// finding it reports for iOS 12 (which loses a missing original request), or the rule a repair
  /// for it applies.
  static let reported = reportedVariants + [("no original request", "original-request-missing")]

  static func variant(_ name: String) throws -> Data {
    try healthyBlob { try applyVariant(name, to: &$0) }
  }

  @Test("A blob the full path reports on is never answered", arguments: reported)
  func notRecognized(_ name: String, code: String) throws {
    let bytes = try Self.variant(name)
    let blob = try ResumeData(decoding: bytes)
    // A repair may fail outright (a request that is no archive): the diagnosis still reports.
    let repaired = (try? blob.repaired(for: .ios12))?.findings ?? []
    let codes = blob.findings(for: .ios12).map(\.code) + repaired.map(\.code)
    #expect(codes.contains(code), "\(codes)")
    for target in Self.targets {
      #expect(try Self.reading(bytes, for: target) == nil, "\(target as Any)")
      #expect(ResumeDifferential.healthyPlainDifference(bytes, for: target) == nil)
    }
  }

  /// Shapes the full path may have nothing to say about, which the one pass leaves to it all the
  /// same: what it does not read.
  static let leftToTheFullPath: [String] = [
    "byte range", "info version 3", "info version as a string", "URL only in the request",
    "temp file name as data", "no temp file name", "received as a string",
  ]

  @Test("Shapes outside the one pass are left to the full path", arguments: leftToTheFullPath)
  func leftAlone(_ name: String) throws {
    let bytes = try Self.healthyBlob { entries in
      switch name {
      case "byte range": entries[ResumeDataKey.byteRange] = .string("1048576-")
      case "info version 3": entries[ResumeDataKey.infoVersion] = .integer(PropertyListInteger(3))
      case "info version as a string": entries[ResumeDataKey.infoVersion] = .string("2")
      case "URL only in the request": entries[ResumeDataKey.downloadURL] = nil
      case "temp file name as data":
        entries[ResumeDataKey.tempFileName] = .data(Data("CFNetworkDownload_g7h8i9.tmp".utf8))
      case "no temp file name": entries[ResumeDataKey.tempFileName] = nil
      case "received as a string": entries[ResumeDataKey.bytesReceived] = .string("1048576")
      default: Issue.record("no shape \(name)")
      }
    }
    for target in Self.targets {
      #expect(try Self.reading(bytes, for: target) == nil, "\(target as Any)")
      #expect(ResumeDifferential.healthyPlainDifference(bytes, for: target) == nil)
    }
  }

  @Test(
    "Bytes flipped and truncations across a healthy blob are answered only where it agrees",
    arguments: [.xml, .binary] as [PropertyListFormat])
  func mutations(format: PropertyListFormat) throws {
    let data = try Self.healthyBlob(format)
    var answered = 0
    for position in stride(from: 0, to: data.count, by: 7) {
      for flip: UInt8 in [0x01, 0x80] {
        var mutated = data
        mutated[position] ^= flip
        if (try? Self.reading(mutated, for: .ios13Later)) ?? nil != nil { answered += 1 }
        #expect(
          ResumeDifferential.healthyPlainDifference(mutated, for: .ios13Later) == nil,
          "byte \(position) ^ \(flip)")
      }
    }
    for length in stride(from: 0, to: data.count, by: 17) {
      #expect(
        ResumeDifferential.healthyPlainDifference(data.prefix(length), for: .ios13Later) == nil)
    }
    // Some flips leave a healthy blob (a byte of a string no check reads): the check above
    // compared those with the full path.
    #expect(answered > 0)
  }
}
