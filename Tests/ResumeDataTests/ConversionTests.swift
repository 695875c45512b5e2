import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import Testing

/// What every conversion must keep, as far as the target can carry it.
struct Essentials: Equatable, CustomStringConvertible {
  var url: String?
  var currentURL: String?
  var originalURL: String?
  var partialName: String?
  var bytesReceived: Int64?
  var entityTag: String?
  var serverDownloadDate: String?

  init(_ blob: ResumeData) {
    url = blob.downloadURL
    currentURL = blob.currentRequest?.url
    originalURL = blob.originalRequest?.url
    partialName =
      blob.tempFileName ?? blob.localPath.map { URL(fileURLWithPath: $0).lastPathComponent }
    bytesReceived = blob.bytesReceived
    entityTag = blob.entityTag
    serverDownloadDate = blob.serverDownloadDate
  }

  /// Only the fields a generation carries: Network.framework has no count or validators of its
  /// own, Safari-made blobs no original request.
  func carried(by generation: ResumeDataGeneration) -> Essentials {
    var copy = self
    if generation == .networkFramework || generation == .networkFrameworkWebKit {
      copy.bytesReceived = nil
      copy.entityTag = nil
      copy.serverDownloadDate = nil
    }
    if generation == .safari { copy.originalURL = nil }
    return copy
  }

  var description: String {
    "url \(url ?? "-"), current \(currentURL ?? "-"), original \(originalURL ?? "-"), "
      + "file \(partialName ?? "-"), bytes \(bytesReceived.map(String.init) ?? "-"), "
      + "etag \(entityTag ?? "-"), date \(serverDownloadDate ?? "-")"
  }
}

let conversionSources = [
  "v1.xml.plist", "v2.xml.plist", "v2.binary.plist", "v4-byte-range.xml.plist", "keyed-v4.archive",
  "keyed-v5-unknown-key.archive", "keyed-v5-response.archive", "safari.archive",
  "network-framework.blob", "network-framework-webkit.archive",
]

@Suite("Resume data conversion")
struct ConversionTests {
  let directory = URL(fileURLWithPath: "/tmp/partials", isDirectory: true)

  @Test(
    "Every generation converts to every other and back, keeping what both carry",
    arguments: conversionSources, ResumeDataGeneration.allCases)
  func matrix(source: String, target: ResumeDataGeneration) throws {
    let blob = try ResumeData(decoding: try fixtureData("resume/\(source)"))
    let (converted, findings) = try blob.converted(to: target, temporaryDirectory: directory)
    #expect(converted.generation == target)
    let kept = Essentials(blob).carried(by: target).carried(by: blob.generation)
    #expect(Essentials(converted).carried(by: target).carried(by: blob.generation) == kept)
    if target != blob.generation {
      #expect(findings.first?.code == "converted")
    }
    let (back, _) = try converted.converted(
      to: blob.generation, format: blob.container == .binaryPlist ? .binary : nil,
      temporaryDirectory: directory)
    #expect(back.generation == blob.generation)
    #expect(back.container == blob.container)
    // The way back may restore more than the target carried (validators from a response, the
    // original request from the current one); what both carry must come back unchanged.
    #expect(Essentials(back).carried(by: target).carried(by: blob.generation) == kept)
  }

  @Test(
    "A conversion to a plain XML blob gives the blob its bytes read back as, keys in their order",
    arguments: conversionSources, [ResumeDataGeneration.v1, .v2, .v4])
  func readBack(source: String, target: ResumeDataGeneration) throws {
    let blob = try ResumeData(decoding: try fixtureData("resume/\(source)"))
    let converted = try blob.converted(to: target, temporaryDirectory: directory).blob
    let read = try ResumeData(decoding: try converted.encoded())
    #expect(converted.container == .xmlPlist)
    #expect(converted == read)
    #expect(converted.entries.entries.map(\.key) == read.entries.entries.map(\.key))
    #expect(
      converted.findings(temporaryDirectory: directory)
        == read.findings(temporaryDirectory: directory))
  }

  @Test(
    "Values XML may not carry exactly: the conversion reads its bytes back, as they read",
    arguments: [
      PropertyListValue.date(Date(timeIntervalSinceReferenceDate: 1.25)),
      .real(PropertyListReal(0.1)), .dictionary(["CF$UID": .integer(PropertyListInteger(3))]),
      .string("été"), .array([.string("a\u{7F}b")]), .uid(4),
    ])
  func readBackOfOtherValues(value: PropertyListValue) throws {
    let source = try ResumeData(decoding: try fixtureData("resume/v4-byte-range.xml.plist"))
    var entries = source.entries
    entries["X-Extra"] = value
    let converted = try ResumeData(building: entries, as: .v2)
    let read = try ResumeData(decoding: try converted.encoded())
    #expect(converted == read)
    #expect(converted.entries.entries.map(\.key) == read.entries.entries.map(\.key))
    #expect(converted.entries["X-Extra"] == read.entries["X-Extra"])
  }

  @Test("Converting to its own generation and container changes nothing")
  func identity() throws {
    for source in conversionSources {
      let bytes = try fixtureData("resume/\(source)")
      let blob = try ResumeData(decoding: bytes)
      let (same, findings) = try blob.converted(
        to: blob.generation, format: blob.container == .binaryPlist ? .binary : nil)
      #expect(findings.isEmpty, "\(source)")
      #expect(try same.encoded() == bytes, "\(source)")
    }
  }

  @Test("v1 keeps its LocalPath out of v2, and gets one back only with a directory")
  func partialFileNaming() throws {
    let v1 = try ResumeData(decoding: try fixtureData("resume/v1.xml.plist"))
    let (v2, findings) = try v1.converted(to: .v2)
    #expect(v2.tempFileName == "download.tmp")
    #expect(v2.localPath == nil)
    #expect(findings.map(\.code) == ["converted", "conversion-derived", "conversion-dropped"])
    #expect(findings.last?.path == ResumeDataKey.localPath)
    #expect {
      _ = try v2.converted(to: .v1)
    } throws: { error in
      (error as? ResumeDataError)?.code == .unsupported
        && (error as? ResumeDataError)?.keyPath == ResumeDataKey.localPath
    }
    let (again, _) = try v2.converted(to: .v1, temporaryDirectory: directory)
    #expect(again.localPath == "/tmp/partials/download.tmp")
  }

  @Test("ByteRange is dropped by v1 and v2 and kept by v4 and keyed, and reported")
  func byteRange() throws {
    let v4 = try ResumeData(decoding: try fixtureData("resume/v4-byte-range.xml.plist"))
    for (target, kept) in [
      (ResumeDataGeneration.v2, false), (.v1, false), (.keyed, true),
    ] {
      let (converted, findings) = try v4.converted(to: target, temporaryDirectory: directory)
      #expect((converted.byteRange != nil) == kept, "\(target)")
      #expect(
        findings.contains { $0.code == "conversion-dropped" && $0.path == ResumeDataKey.byteRange }
          == !kept, "\(target)")
    }
  }

  @Test("Keyed targets take the requested info version and binary or XML containers")
  func keyedOptions() throws {
    let v2 = try ResumeData(decoding: try fixtureData("resume/v2.xml.plist"))
    let (v4Keyed, _) = try v2.converted(to: .keyed, infoVersion: 4)
    #expect(v4Keyed.infoVersion == 4)
    #expect(v4Keyed.container == .keyedArchive)
    let (xml, _) = try v2.converted(to: .keyed, format: .xml)
    #expect(xml.container == .keyedArchiveXML)
    #expect(xml.infoVersion == 5)
    let (binary, _) = try v2.converted(to: .v2, format: .binary)
    #expect(binary.container == .binaryPlist)
    #expect {
      _ = try v2.converted(to: .networkFramework, format: .xml)
    } throws: { error in
      (error as? ResumeDataError)?.code == .unsupported
    }
  }

  @Test("A response's validators carry into a Network.framework blob and back out of it")
  func responseThroughNetworkFramework() throws {
    let keyed = try ResumeData(decoding: try fixtureData("resume/keyed-v5-response.archive"))
    let (nw, dropped) = try keyed.converted(to: .networkFramework, temporaryDirectory: directory)
    #expect(nw.networkFrameworkInfo?["response"] != nil)
    // The ETag is the response's own already: carried, not dropped.
    #expect(
      dropped.filter { $0.code == "conversion-dropped" }.map(\.path) == [
        ResumeDataKey.bytesReceived
      ])
    #expect(nw.entityTag == keyed.entityTag)
    let (back, derived) = try nw.converted(to: .keyed)
    #expect(back.response?.statusCode == keyed.response?.statusCode)
    #expect(derived.contains { $0.code == "conversion-derived" })
  }
}
