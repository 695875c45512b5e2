import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

@Suite("Healthy keyed blobs recognized in one pass")
struct HealthyKeyedBlobTests {
  /// No target, then every target.
  static let targets: [RepairTarget?] = [nil] + RepairTarget.allCases.map { $0 }

  /// A keyed blob as CFNetwork writes it: nothing to report, nothing to repair on iOS 13.
  static func healthyEntries(version: Int = 5) throws -> PropertyListDictionary {
    try plainEntries(
      version: version,
      extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_g7h8i9.tmp"))])
  }

  static func request(_ fields: URLRequestFields) throws -> PropertyListValue {
    .data(try URLRequestArchive(fields).encoded())
  }

  @Test(
    "Every fixture, for every target, is recognized only where the full path agrees",
    arguments: blobAndArchiveFixtures())
  func fixtures(_ file: String) throws {
    let bytes = try fixture(file)
    for target in Self.targets {
      #expect(ResumeDifferential.healthyDifference(bytes, for: target) == nil, "\(target as Any)")
    }
  }

  @Test(
    "A healthy blob is recognized for the targets that read it as it is",
    arguments: [
      (5, [nil, .ios13Later, .linux]),
      (4, [nil, .ios12, .ios13Later, .linux]),
    ] as [(Int, [RepairTarget?])])
  func recognized(version: Int, readers: [RepairTarget?]) throws {
    let bytes = try keyedBlob(Self.healthyEntries(version: version))
    for target in Self.targets {
      let healthy = ResumeData.healthyKeyedBlob(bytes, for: target)
      #expect((healthy != nil) == readers.contains(target), "\(target as Any)")
      #expect(healthy.map { $0.infoVersion == version } ?? true)
      #expect(ResumeDifferential.healthyDifference(bytes, for: target) == nil)
    }
    // Without an info version, and with the same request archived twice or two different ones.
    var entries = try Self.healthyEntries()
    entries[ResumeDataKey.infoVersion] = nil
    entries[ResumeDataKey.originalRequest] = try Self.request(
      URLRequestFields(url: "https://example.com/files/archive.zip?from=link"))
    let other = try keyedBlob(entries)
    let healthy = try #require(ResumeData.healthyKeyedBlob(other, for: .ios13Later))
    #expect(healthy.infoVersion == nil)
    #expect(ResumeDifferential.healthyDifference(other, for: .ios13Later) == nil)
  }

  /// Blobs the full path reports something about, each one change away from a healthy one: the
  /// finding it reports for iOS 13, or the rule a repair for it applies.
  static let reported = reportedVariants

  static func variant(_ name: String) throws -> Data {
    var entries = try healthyEntries()
    try applyVariant(name, to: &entries)
    return try keyedBlob(entries)
  }

  @Test("A blob the full path reports on is never recognized", arguments: reported)
  func notRecognized(_ name: String, code: String) throws {
    let bytes = try Self.variant(name)
    let blob = try ResumeData(decoding: bytes)
    // A repair may fail outright (a request that is no archive): the diagnosis still reports.
    let repaired = (try? blob.repaired(for: .ios13Later))?.findings ?? []
    let codes = blob.findings(for: .ios13Later).map(\.code) + repaired.map(\.code)
    #expect(codes.contains(code), "\(codes)")
    for target in Self.targets {
      #expect(ResumeData.healthyKeyedBlob(bytes, for: target) == nil, "\(target as Any)")
    }
  }

  /// Shapes the full path may have nothing to say about, which the one pass leaves to it all the
  /// same: what it does not read.
  static let leftToTheFullPath: [String] = [
    "no original request", "byte range", "info version as a string", "URL only in the request",
    "temp file name as data", "an ETag in UTF-16", "no temp file name",
  ]

  @Test("Shapes outside the one pass are left to the full path", arguments: leftToTheFullPath)
  func leftAlone(_ name: String) throws {
    var entries = try Self.healthyEntries()
    switch name {
    case "no original request": entries[ResumeDataKey.originalRequest] = nil
    // Only iOS 11.0–11.2 trips on it, which reads no keyed blob.
    case "byte range": entries[ResumeDataKey.byteRange] = .string("1048576-")
    case "info version as a string": entries[ResumeDataKey.infoVersion] = .string("5")
    case "URL only in the request": entries[ResumeDataKey.downloadURL] = nil
    case "temp file name as data":
      entries[ResumeDataKey.tempFileName] = .data(Data("CFNetworkDownload_g7h8i9.tmp".utf8))
    case "an ETag in UTF-16": entries[ResumeDataKey.entityTag] = .string("\"5534b35d-7c7be1\"é")
    case "no temp file name": entries[ResumeDataKey.tempFileName] = nil
    default: Issue.record("no shape \(name)")
    }
    let bytes = try keyedBlob(entries)
    #expect(try ResumeData(decoding: bytes).isReadInPlace)
    for target in Self.targets {
      #expect(ResumeData.healthyKeyedBlob(bytes, for: target) == nil, "\(target as Any)")
    }
  }

  @Test("Bytes flipped and truncations across a healthy blob are recognized only where it agrees")
  func mutations() throws {
    let data = try keyedBlob(Self.healthyEntries())
    var recognized = 0
    for position in stride(from: 0, to: data.count, by: 5) {
      for flip: UInt8 in [0x01, 0x80] {
        var mutated = data
        mutated[position] ^= flip
        if ResumeData.healthyKeyedBlob(mutated, for: .ios13Later) != nil { recognized += 1 }
        #expect(
          ResumeDifferential.healthyDifference(mutated, for: .ios13Later) == nil,
          "byte \(position) ^ \(flip)")
      }
    }
    for length in stride(from: 0, to: data.count, by: 11) {
      #expect(ResumeData.healthyKeyedBlob(data.prefix(length), for: .ios13Later) == nil)
    }
    // Some flips leave a healthy blob (a byte of a string no check reads): the check above compared
    // those with the full path.
    #expect(recognized > 0)
  }
}
