import Foundation
import KeyedArchive
import ResumeData
import Testing

/// A partial file in a scratch directory, as an app keeps one before handing it to URLSession.
private func partialDirectory(name: String, bytes: Int) throws -> URL {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "resumedata-partial-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  try Data(repeating: 7, count: bytes).write(to: directory.appendingPathComponent(name))
  return directory
}

@Suite("ResumeData.forPartialFile: the blob a system would have written for a partial file")
struct PartialFileResumeTests {
  static let name = "CFNetworkDownload_Ab12Cd.tmp"
  static let partial = PartialDownload(
    url: "https://example.com/files/model.bin", bytes: 4096, entityTag: "\"v1\"",
    lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
    headerFields: [URLRequestFields.Header("Authorization", "Bearer t")], tempFileName: name)

  @Test(
    "Each CFNetwork target gets its own form, and resumes from it with the file in place",
    arguments: [
      (AppleSystem(.iOS, 10, 1), RepairTarget.ios10Early, ResumeDataGeneration.v2, Int?.none),
      (AppleSystem(.iOS, 10, 3), .ios10Late, .v2, nil),
      (AppleSystem(.iOS, 11, 1), .ios11Early, .v4, nil),
      (AppleSystem(.iOS, 11, 4), .ios11Late, .v4, nil),
      (AppleSystem(.iOS, 12, 1), .ios12, .keyed, 4),
      (AppleSystem(.iOS, 17, 5), .ios13Later, .keyed, 5),
      (AppleSystem(.macOS, 14, 0), .ios13Later, .keyed, 5),
    ])
  func cfNetwork(
    system: AppleSystem, target: RepairTarget, generation: ResumeDataGeneration, version: Int?
  ) throws {
    let made = try ResumeData.forPartialFile(Self.partial, on: target)
    let blob = try #require(made.blob, "\(made.findings)")
    #expect(blob.generation == generation)
    if let version { #expect(blob.infoVersion == version) }
    #expect(blob.bytesReceived == 4096)
    #expect(blob.entityTag == "\"v1\"")
    #expect(blob.serverDownloadDate == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(blob.tempFileName == Self.name)
    #expect(blob.downloadURL == Self.partial.url)
    #expect(blob.currentRequest?.url == Self.partial.url)
    #expect(blob.currentRequest?.headerFields.map(\.name) == ["Authorization"])
    #expect(made.findings.last?.code == "place-partial-file")
    #expect(
      made.findings.last?.message
        == "move the partial file to the app's temporary directory, NSTemporaryDirectory(), as \(Self.name), before downloadTask(withResumeData:) (a background session's file is nsurlsessiond's, out of the app's reach)"
    )
    // Read back, the blob is one the system resumes as it is, with the file where it says.
    let directory = try partialDirectory(name: Self.name, bytes: 4096)
    defer { try? FileManager.default.removeItem(at: directory) }
    let encoded = try blob.encoded()
    let answer = ResumeData.forURLSession(
      encoded, on: system, partialFile: .inDirectory(directory))
    #expect(answer.resumeData == encoded, "\(answer.findings)")
    let read = try ResumeData(decoding: encoded)
    #expect(
      ResumeData.outcome(of: read.judgements(for: target, temporaryDirectory: directory))
        == .resume)
  }

  @Test("For this toolkit: a keyed blob naming the file where it is")
  func linux() throws {
    let made = try ResumeData.forPartialFile(Self.partial, on: .linux)
    let blob = try #require(made.blob)
    #expect(blob.generation == .keyed)
    #expect(made.findings.map(\.code) == ["place-partial-file"])
  }

  @Test(
    "Refused where the system would not resume: no validator, a weak ETag, an unsendable field",
    arguments: [
      (nil, nil, "Authorization", "no-validator"),
      ("W/\"v1\"", nil, "Authorization", "weak-etag"),
      ("\"v1\"", nil, "Bad Name", "unsendable-header"),
    ] as [(String?, String?, String, String)])
  func refused(entityTag: String?, lastModified: String?, header: String, code: String) throws {
    var partial = Self.partial
    partial.entityTag = entityTag
    partial.lastModified = lastModified
    partial.headerFields = [URLRequestFields.Header(header, "x")]
    for target in [RepairTarget.ios13Later, .ios11Late] {
      let made = try ResumeData.forPartialFile(partial, on: target)
      guard case .refused(let reason, _) = made else {
        Issue.record("made a blob for \(target)")
        continue
      }
      #expect(reason.code == code)
      #expect(reason.severity == .error || code == "weak-etag")
    }
  }

  @Test(
    "Bad input throws with the key it concerns",
    arguments: [
      ("ftp://example.com/f", Int64(10), name, ResumeDataKey.downloadURL),
      ("https://example.com/f", 0, name, ResumeDataKey.bytesReceived),
      ("https://example.com/f", 10, "../x", ResumeDataKey.tempFileName),
    ])
  func badInput(url: String, bytes: Int64, tempFileName: String, key: String) {
    let partial = PartialDownload(
      url: url, bytes: bytes, entityTag: "\"v1\"", tempFileName: tempFileName)
    do {
      _ = try ResumeData.forPartialFile(partial, on: .ios13Later)
      Issue.record("made")
    } catch {
      #expect(error.keyPath == key)
      #expect(error.code == .invalidEdit)
    }
  }

  @Test("Temp file names are CFNetwork's: CFNetworkDownload_, six letters or digits, .tmp")
  func tempFileNames() {
    let names = (0..<20).map { _ in ResumeData.newTempFileName() }
    for name in names {
      #expect(name.hasPrefix("CFNetworkDownload_") && name.hasSuffix(".tmp"))
      #expect(name.count == "CFNetworkDownload_".count + 6 + 4)
      #expect(ResumeData.isSafeBareName(name))
    }
    #expect(Set(names).count > 1)
  }

  @Test("Network.framework's loader: what the conversion makes of the validators today")
  func networkFramework() throws {
    let made = try ResumeData.forPartialFile(
      Self.partial, on: .networkFramework,
      temporaryDirectory: URL(fileURLWithPath: "/private/var/mobile/tmp"))
    // The validator goes into the response Network.framework keeps its validators in.
    guard case .resume(let blob, let findings) = made else {
      Issue.record("refused: \(made)")
      return
    }
    #expect(blob.generation == .networkFramework)
    #expect(blob.entityTag == "\"v1\"")
    #expect(findings.last?.code == "place-partial-file")
  }
}
