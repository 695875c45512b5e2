import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import TestSupport
import Testing

/// Where a repair case's partial file lives.
enum PartialDirectory: Sendable {
  /// No directory given.
  case none
  /// A directory that need not exist (rules that only rewrite paths).
  case fixed(String)
  /// A fresh temporary directory holding a partial file of this name and size.
  case withPartial(String, Int)
}

/// One repair fixture: the blob before, the target, and what the repair must report and write.
struct RepairCase: Sendable, CustomTestStringConvertible {
  /// The rule the case shows (also the stem of its `after` file in Fixtures/repair).
  let rule: String
  /// The blob before, relative to Fixtures/.
  let before: String
  let target: RepairTarget
  var directory = PartialDirectory.none
  /// Whether the repair may truncate the partial file (`RepairContext.truncatingPartialFile`).
  var truncating = false
  /// The codes of the repair's findings, in order.
  let findings: [String]
  /// The file the repaired blob must equal, relative to Fixtures/ (nil: refused, nothing written).
  let after: String?
  var testDescription: String { "\(rule) for \(target.rawValue)" }
}

let repairCases = [
  RepairCase(
    rule: "refuse-empty-blob", before: "resume/ios12-empty.archive", target: .ios13Later,
    findings: ["refuse-empty-blob"], after: nil),
  RepairCase(
    rule: "convert-for-target", before: "resume/keyed-v5-unknown-key.archive",
    target: .ios11Late, findings: ["convert-for-target"],
    after: "repair/convert-for-target.after.xml.plist"),
  RepairCase(
    rule: "convert-for-target", before: "resume/network-framework.blob", target: .ios13Later,
    findings: ["convert-for-target", "conversion-derived", "conversion-derived"],
    after: "repair/convert-for-target-network-framework.after.archive"),
  RepairCase(
    rule: "move-local-path", before: "resume/v1.xml.plist", target: .ios13Later,
    directory: .fixed("/var/mobile/Containers/Data/Application/6A3B1C2D/tmp"),
    findings: ["move-local-path"], after: "repair/move-local-path.after.xml.plist"),
  RepairCase(
    rule: "reconcile-bytes-received", before: "resume/v2.xml.plist", target: .ios13Later,
    directory: .withPartial("CFNetworkDownload_a1b2c3.tmp", 524_288),
    findings: ["reconcile-bytes-received"],
    after: "repair/reconcile-bytes-received.after.xml.plist"),
  // A segmented download's file is allocated to the whole length: its size is not the count.
  RepairCase(
    rule: "reconcile-bytes-received-segmented", before: "resume/segmented.archive",
    target: .linux, directory: .withPartial("CFNetworkDownload_v4w5x6.tmp", 4_194_304),
    findings: [], after: "resume/segmented.archive"),
  RepairCase(
    rule: "reconcile-bytes-received-segmented", before: "resume/segmented.archive",
    target: .linux, directory: .withPartial("CFNetworkDownload_v4w5x6.tmp", 2_500_000),
    findings: ["reconcile-bytes-received"],
    after: "repair/reconcile-bytes-received-segmented.after.archive"),
  // A segmented download handed to an Apple system: the file truncated to the prefix, the map
  // removed, only when allowed; a warning and the blob as it was otherwise.
  RepairCase(
    rule: "hand-off-segments", before: "resume/segmented.archive", target: .ios13Later,
    directory: .withPartial("CFNetworkDownload_v4w5x6.tmp", 4_194_304), truncating: true,
    findings: ["hand-off-segments"], after: "repair/hand-off-segments.after.archive"),
  RepairCase(
    rule: "hand-off-segments", before: "resume/segmented.archive", target: .ios13Later,
    directory: .withPartial("CFNetworkDownload_v4w5x6.tmp", 4_194_304),
    findings: ["hand-off-segments"], after: "resume/segmented.archive"),
  RepairCase(
    rule: "hand-off-segments", before: "resume/segmented.archive", target: .ios13Later,
    truncating: true, findings: ["hand-off-segments"], after: "resume/segmented.archive"),
  RepairCase(
    rule: "hand-off-segments", before: "resume/segmented.archive", target: .linux,
    directory: .withPartial("CFNetworkDownload_v4w5x6.tmp", 4_194_304), truncating: true,
    findings: [], after: "resume/segmented.archive"),
  RepairCase(
    rule: "fill-original-request", before: "resume/safari.archive", target: .ios12,
    findings: ["fill-original-request"], after: "repair/fill-original-request.after.archive"),
  RepairCase(
    rule: "remove-byte-range", before: "resume/v4-byte-range.xml.plist", target: .ios11Early,
    findings: ["remove-byte-range"], after: "repair/remove-byte-range.after.xml.plist"),
  RepairCase(
    rule: "rewrite-requests-for-ios10", before: "resume/ios10.0-v2.xml.plist", target: .ios10Early,
    findings: ["rewrite-requests-for-ios10", "rewrite-requests-for-ios10"],
    after: "repair/rewrite-requests-for-ios10.after.xml.plist"),
  // Every root moved under the key Apple's decoder for it reads: exactly the blob written right.
  RepairCase(
    rule: "restore-archive-root-keys", before: "resume/keyed-wrong-root-keys.archive",
    target: .ios13Later,
    findings: [
      "restore-archive-root-keys", "restore-archive-root-keys", "restore-standard-request-layout",
      "restore-standard-request-layout",
    ],
    after: "resume/keyed-v5-response.archive"),
  RepairCase(
    rule: "restore-archive-root-keys", before: "resume/network-framework-literal-key.blob",
    target: .networkFramework, findings: ["restore-archive-root-keys"],
    after: "resume/network-framework.blob"),
  // Undoing the iOS 10.0–10.1 rewrite gives back exactly what iOS 10.0 wrote.
  RepairCase(
    rule: "restore-standard-request-layout",
    before: "repair/rewrite-requests-for-ios10.after.xml.plist",
    target: .ios13Later,
    findings: ["restore-standard-request-layout", "restore-standard-request-layout"],
    after: "resume/ios10.0-v2.xml.plist"),
]

func fixtureData(_ path: String) throws -> Data {
  try Data(contentsOf: repositoryRoot.appendingPathComponent("Fixtures/\(path)"))
}

/// A directory for a case, created when it must hold a partial file.
func directory(for location: PartialDirectory) throws -> URL? {
  switch location {
  case .none: return nil
  case .fixed(let path): return URL(fileURLWithPath: path, isDirectory: true)
  case .withPartial(let name, let size):
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resume-repair-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try Data(count: size).write(to: directory.appendingPathComponent(name))
    return directory
  }
}

@Suite("Resume data repair")
struct RepairTests {
  /// `REGENERATE_FIXTURES=1` writes the `after` files under Fixtures/repair from the repair.
  @Test(
    "Each repair fixture becomes its after file, with the rule's findings", arguments: repairCases)
  func fixture(_ repair: RepairCase) throws {
    let blob = try ResumeData(decoding: try fixtureData(repair.before))
    let partialDirectory = try directory(for: repair.directory)
    // Only a directory made for the case is removed (a fixed one is a path that need not exist).
    defer {
      if case .withPartial = repair.directory, let partialDirectory {
        try? FileManager.default.removeItem(at: partialDirectory)
      }
    }
    let result = try blob.repaired(
      for: repair.target, temporaryDirectory: partialDirectory,
      truncatingPartialFile: repair.truncating)
    #expect(result.findings.map(\.code) == repair.findings)
    guard let after = repair.after else {
      #expect(result.blob == nil)
      return
    }
    let bytes = try #require(result.blob).encoded()
    let file = repositoryRoot.appendingPathComponent("Fixtures/\(after)")
    if ProcessInfo.processInfo.environment["REGENERATE_FIXTURES"] == "1",
      after.hasPrefix("repair/")
    {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
      try bytes.write(to: file)
    }
    #expect(bytes == (try Data(contentsOf: file)))
  }

  @Test("The iOS 10.0–10.1 rewrite moves every slot key and leaves no old key behind")
  func iOS10Rewrite() throws {
    let repaired = try ResumeData(
      decoding: try fixtureData("repair/rewrite-requests-for-ios10.after.xml.plist"))
    for request in [repaired.currentRequest, repaired.originalRequest] {
      let request = try #require(request)
      #expect(request.layout == .dollarNumbered)
      #expect(request.archive.rootKey == "root")
      guard case .dictionary(let fields) = try request.archive.object(request.archive.rootUID)
      else {
        Issue.record("the request is not an object")
        continue
      }
      #expect(!fields.keys.contains { $0.hasPrefix("__nsurlrequest_proto_prop") })
      let count = request.slotCount
      #expect(count == 22)
      #expect((3..<(count + 4)).allSatisfy { fields["$\($0)"] != nil })
      #expect(request.url == iOS10URL)
      #expect(request.httpMethod == "GET")
    }
  }

  @Test("Each repaired blob reads back with the rule's change and nothing else")
  func fieldsAfterRepair() throws {
    let moved = try ResumeData(decoding: try fixtureData("repair/move-local-path.after.xml.plist"))
    #expect(moved.localPath == "/var/mobile/Containers/Data/Application/6A3B1C2D/tmp/download.tmp")
    let reconciled = try ResumeData(
      decoding: try fixtureData("repair/reconcile-bytes-received.after.xml.plist"))
    #expect(reconciled.bytesReceived == 524_288)
    let filled = try ResumeData(
      decoding: try fixtureData("repair/fill-original-request.after.archive"))
    #expect(filled.originalRequest?.url == url)
    #expect(
      filled.entries[ResumeDataKey.originalRequest] == filled.entries[ResumeDataKey.currentRequest])
    let trimmed = try ResumeData(
      decoding: try fixtureData("repair/remove-byte-range.after.xml.plist"))
    #expect(trimmed.byteRange == nil)
    #expect(trimmed.generation == .v4)
    let converted = try ResumeData(
      decoding: try fixtureData("repair/convert-for-target.after.xml.plist"))
    #expect(converted.generation == .v4)
    #expect(converted.unknownKeys == ["WebKitExtra"])
    let fromNW = try ResumeData(
      decoding: try fixtureData("repair/convert-for-target-network-framework.after.archive"))
    #expect(fromNW.generation == .keyed)
    #expect(fromNW.infoVersion == 5)
    #expect(fromNW.tempFileName == "CFNetworkDownload_nw1.tmp")
    #expect(fromNW.currentRequest?.url == url)
  }

  @Test(
    "A rule runs only when the target needs it: healthy blobs come back byte for byte",
    arguments: [RepairTarget.ios13Later, .linux, .ios11Late])
  func untouched(target: RepairTarget) throws {
    for name in [
      "v2.xml.plist", "v2.binary.plist", "keyed-v4.archive", "ios10.0-v2.xml.plist",
      "keyed-v5-response.archive",
    ] where target != .ios11Late || !name.hasPrefix("keyed") {
      let bytes = try fixtureData("resume/\(name)")
      let result = try ResumeData(decoding: bytes).repaired(for: target)
      #expect(result.findings.isEmpty, "\(name)")
      #expect(try result.blob?.encoded() == bytes, "\(name)")
    }
  }

  @Test(
    "Target names: iOS names, macOS aliases, and nothing else",
    arguments: [
      ("ios10.0-10.1", RepairTarget?.some(.ios10Early)), ("iOS13+", .ios13Later),
      ("macos10.13-10.13.3", .ios11Early), ("macos10.15+", .ios13Later), ("linux", .linux),
      ("network-framework", .networkFramework), ("ios14", nil), ("", nil),
    ])
  func targetNames(name: String, target: RepairTarget?) {
    #expect(RepairTarget(name: name) == target)
  }

  @Test("A keyed v5 blob repaired for iOS 12 is written with info version 4")
  func iOS12Version() throws {
    let result = try ResumeData(decoding: try fixtureData("resume/keyed-v5-unknown-key.archive"))
      .repaired(for: .ios12)
    #expect(result.blob?.infoVersion == 4)
    #expect(result.blob?.generation == .keyed)
    #expect(result.findings.map(\.code) == ["convert-for-target"])
  }
}
