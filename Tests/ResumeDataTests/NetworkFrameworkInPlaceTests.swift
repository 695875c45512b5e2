import Foundation
import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

/// A Network.framework blob is read in place when its root object holds only what the writer from
/// the bytes follows: its requests and response are archived on their own from the bytes, and its
/// root object is decoded only when asked for. Anything else is decoded, with the same result.
@Suite("Network.framework blobs read in place")
struct NetworkFrameworkInPlaceTests {
  static let classes = ["NWURLSessionDownloadResumeInfo", "NWURLSessionResumeInfo", "NSObject"]

  /// A masked Network.framework blob of a root object with these fields.
  static func blob(_ fields: [ArchivedField]) throws -> Data {
    let root = ArchivedObject(classChain: classes, fields: fields)
    return NetworkFrameworkMask.toggled(
      try KeyedArchive(root: .object(root)).encoded(as: .binary))
  }

  /// A request's decoded object, to hold as a field.
  static func request(_ url: String) throws -> ArchivedValue {
    try KeyedArchive(decoding: URLRequestArchive(URLRequestFields(url: url)).encoded())
      .decodeRoot()
  }

  @Test("The fixture is read in place, and reads as on the eager path")
  func fixture() throws {
    let data = try TestSupport.fixture("resume/network-framework.blob")
    let blob = try ResumeData(decoding: data)
    #expect(blob.isReadInPlace)
    #expect(blob.tempFileName == "CFNetworkDownload_nw1.tmp")
    #expect(blob.localPath == "file:///tmp/CFNetworkDownload_nw1.tmp")
    #expect(blob.entityTag == "\"5534b35d-7c7be1\"")
    #expect(blob.currentRequest?.url == "https://example.com/files/archive.zip")
    #expect(ResumeDifferential.difference(data) == nil)
    // Reading the root object decodes the archive, which then equals the eager path's.
    let eager = try ResumeData(decodingEagerly: data)
    #expect(blob.networkFrameworkInfo == eager.networkFrameworkInfo)
    #expect(!blob.isReadInPlace)
    #expect(blob == eager)
  }

  @Test("Every truncation and flipped byte of the fixture reads the same on both paths")
  func damaged() throws {
    let data = try TestSupport.fixture("resume/network-framework.blob")
    for length in stride(from: 0, to: data.count, by: 5) {
      #expect(ResumeDifferential.difference(data.prefix(length)) == nil, "truncated to \(length)")
    }
    for position in stride(from: 0, to: data.count, by: 2) {
      var mutated = data
      mutated[position] ^= position % 4 == 0 ? 0x01 : 0x80
      #expect(ResumeDifferential.difference(mutated) == nil, "byte \(position)")
    }
  }

  @Test("Limits below those the two paths are compared under take the eager path")
  func smallLimits() throws {
    let data = try TestSupport.fixture("resume/network-framework.blob")
    for limits in [
      KeyedArchiveLimits(maximumDepth: 255), KeyedArchiveLimits(maximumVisits: 99_999),
    ] {
      let blob = try ResumeData(decoding: data, limits: limits)
      #expect(!blob.isReadInPlace)
      #expect(blob.tempFileName == "CFNetworkDownload_nw1.tmp")
      #expect(ResumeDifferential.difference(data, limits: limits) == nil)
    }
  }

  @Test("Roots the writer from the bytes does not follow are decoded, with the same result")
  func decodedRoots() throws {
    let request = try Self.request("https://example.com/a")
    let base = ArchivedValue.url(ArchivedURL(relative: "file:///tmp/"))
    let cases: [(name: String, fields: [ArchivedField], localPath: String?)] = [
      // Foundation resolves a URL against its base.
      (
        "fileURL with a base",
        [
          ArchivedField("currentRequest", .reference(request)),
          ArchivedField(
            "fileURL", .reference(.url(ArchivedURL(relative: "part.tmp", base: base)))),
        ], "file:///tmp/part.tmp"
      ),
      // Non-ASCII text is written through the tree.
      (
        "non-ASCII request URL",
        [ArchivedField("currentRequest", .reference(try Self.request("https://example.com/é")))],
        nil
      ),
      // A date anywhere in the root.
      (
        "date field",
        [
          ArchivedField("currentRequest", .reference(request)),
          ArchivedField("created", .reference(.date(Date(timeIntervalSinceReferenceDate: 7)))),
        ], nil
      ),
    ]
    for (name, fields, localPath) in cases {
      let data = try Self.blob(fields)
      let blob = try ResumeData(decoding: data)
      #expect(!blob.isReadInPlace, "\(name)")
      #expect(blob.generation == .networkFramework, "\(name)")
      #expect(blob.localPath == localPath, "\(name)")
      #expect(blob.currentRequest != nil, "\(name)")
      #expect(ResumeDifferential.difference(data) == nil, "\(name)")
    }
  }

  @Test("Roots of every shape it follows are read in place, with the same result")
  func inPlaceRoots() throws {
    let current = try Self.request("https://example.com/current")
    let original = try Self.request("https://example.com/original")
    let cases: [(name: String, fields: [ArchivedField], temp: String?, requests: Int)] = [
      ("one request", [ArchivedField("currentRequest", .reference(current))], nil, 1),
      (
        "two requests, a name and a flag",
        [
          ArchivedField("originalRequest", .reference(original)),
          ArchivedField("currentRequest", .reference(current)),
          ArchivedField("tempFileName", .reference(.string("CFNetworkDownload_x.tmp"))),
          ArchivedField("_keepDownloadTaskFile", .inline(.boolean(false))),
        ], "CFNetworkDownload_x.tmp", 2
      ),
      (
        "a nil request and a name that is not a string",
        [
          ArchivedField("currentRequest", .reference(current)),
          ArchivedField("originalRequest", .reference(.null)),
          ArchivedField("tempFileName", .reference(.integer(PropertyListInteger(3)))),
        ], nil, 1
      ),
    ]
    for (name, fields, temp, requests) in cases {
      let data = try Self.blob(fields)
      let blob = try ResumeData(decoding: data)
      #expect(blob.isReadInPlace, "\(name)")
      #expect(blob.tempFileName == temp, "\(name)")
      #expect(blob.currentRequest?.url == "https://example.com/current", "\(name)")
      #expect(
        blob.originalRequest?.url == (requests == 2 ? "https://example.com/original" : nil),
        "\(name)")
      #expect(ResumeDifferential.difference(data) == nil, "\(name)")
      #expect(ResumeDifferential.writerDifference(blob) == nil, "\(name)")
    }
  }
}

/// A conversion's blob is made without reading its bytes back where that gives the same blob.
@Suite("Converted blobs made without reading them back")
struct ConvertedWithoutReadingTests {
  @Test(
    "Every resume fixture converted to every generation: the blob is its bytes read back",
    arguments: fixturesRecursively("resume"))
  func everyFixture(_ name: String) throws {
    guard let blob = try? ResumeData(decoding: try fixture(name)) else { return }
    for target in ResumeDataGeneration.allCases {
      #expect(ResumeDifferential.conversionDifference(blob, to: target) == nil, "\(name)")
    }
  }

  @Test("A Network.framework blob converted to keyed is not read back, and is in place")
  func networkFrameworkToKeyed() throws {
    let blob = try ResumeData(decoding: try fixture("resume/network-framework.blob"))
    let keyed = try blob.converted(to: .keyed).blob
    // Made from the conversion's values, its archive not decoded: as the bytes read in place.
    #expect(keyed.isReadInPlace)
    #expect(keyed.generation == .keyed)
    #expect(keyed.infoVersion == 5)
    #expect(keyed.entityTag == "\"5534b35d-7c7be1\"")
    #expect(keyed.currentRequest?.url == "https://example.com/files/archive.zip")
    #expect(try keyed.encoded() == (try ResumeData(decoding: keyed.encoded()).encoded()))
  }
}

extension ConvertedWithoutReadingTests {
  @Test(
    "Every resume-data fuzz find converted to every generation: the blob is its bytes read back",
    arguments: resumeFuzzRegressions)
  func everyFuzzFind(_ name: String) throws {
    guard let blob = try resumeFuzzFind(name) else { return }
    for target in ResumeDataGeneration.allCases {
      #expect(ResumeDifferential.conversionDifference(blob, to: target) == nil, "\(name)")
    }
  }
}
