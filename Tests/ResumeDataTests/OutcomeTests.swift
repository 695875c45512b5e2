import Foundation
import PropertyList
import ResumeData
import TestSupport
import Testing

@Suite("What each system does with a blob as it is")
struct OutcomeTests {
  /// A fixture blob by file name, decoded.
  func fixture(_ file: String) throws -> ResumeData {
    try ResumeData(decoding: try #require(try blobs().first { $0.file == file }).bytes)
  }

  /// A plain blob of `version` with a temp file name, changed by `changes`.
  func plain(_ version: Int, _ changes: [String: PropertyListValue?] = [:]) throws -> ResumeData {
    var entries = try plainEntries(
      version: version, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_x.tmp"))])
    for (key, value) in changes { entries[key] = value }
    return try ResumeData(decoding: PropertyListValue.dictionary(entries).encoded(as: .xml))
  }

  /// A new temporary directory holding `plain(_:)`'s partial file of `size` bytes (none for nil).
  func partialDirectory(size: Int?) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resume-outcome-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    if let size {
      try Data(count: size).write(to: directory.appendingPathComponent("CFNetworkDownload_x.tmp"))
    }
    return directory
  }

  @Test(
    "The oldest writer comes from the generation and the info version",
    arguments: [
      ("v1.xml.plist", nil), ("v2.xml.plist", RepairTarget.ios10Early),
      ("v2.binary.plist", .ios10Early), ("v4-byte-range.xml.plist", .ios11Early),
      ("keyed-v4.archive", .ios12), ("keyed-v5-response.archive", .ios13Later),
      ("keyed-v5-webkit-xml.archive.plist", .ios13Later), ("safari.archive", .ios12),
      ("network-framework.blob", .ios13Later), ("network-framework-webkit.archive", .ios13Later),
    ] as [(String, RepairTarget?)])
  func oldestWriter(file: String, writer: RepairTarget?) throws {
    #expect(try fixture(file).oldestWriter == writer)
  }

  @Test(
    "ios10-request-layout is left out of blobs no iOS 10 wrote, unless the target is iOS 10.0–10.1",
    arguments: [
      ("v1.xml.plist", nil, true), ("v2.xml.plist", nil, true),
      ("v2.xml.plist", RepairTarget.ios13Later, true), ("v4-byte-range.xml.plist", nil, false),
      ("v4-byte-range.xml.plist", .ios10Late, false),
      ("v4-byte-range.xml.plist", .ios13Later, false),
      ("v4-byte-range.xml.plist", .ios10Early, true), ("keyed-v4.archive", nil, false),
      ("keyed-v4.archive", .ios10Early, true), ("keyed-v5-unknown-key.archive", .linux, false),
      ("safari.archive", nil, false), ("safari.archive", .ios10Early, true),
    ] as [(String, RepairTarget?, Bool)])
  func iOS10Layout(file: String, target: RepairTarget?, listed: Bool) throws {
    let codes = try fixture(file).findings(for: target).map(\.code)
    #expect(codes.contains("ios10-request-layout") == listed)
  }

  @Test(
    "byte-range-present and original-request-missing are left out when the writer is newer than every system they concern",
    arguments: [
      (4, nil, ["original-request-missing"]),
      (4, RepairTarget.ios11Early, ["byte-range-present", "original-request-missing"]),
      (5, nil, []),
      (5, .ios11Early, ["byte-range-present", "original-request-missing"]),
      (5, .ios12, ["original-request-missing"]),
      (5, .ios13Later, []),
    ] as [(Int, RepairTarget?, [String])])
  func newerWriter(version: Int, target: RepairTarget?, expected: [String]) throws {
    var entries = try plainEntries(
      version: version,
      extra: [
        (ResumeDataKey.tempFileName, .string("CFNetworkDownload_x.tmp")),
        (ResumeDataKey.byteRange, .string("1048576-")),
      ])
    entries[ResumeDataKey.originalRequest] = nil
    let blob = try ResumeData(decoding: keyedBlob(entries))
    let codes = blob.findings(for: target).map(\.code).filter {
      $0 != "ios10-request-layout" && $0 != "target-cannot-read"
    }
    #expect(codes == expected)
  }

  @Test(
    "The v4 blob with ByteRange, judged for every target",
    arguments: [
      (
        RepairTarget.ios10Early,
        [
          "target-cannot-read fail", "byte-range-present unaffected", "ios10-request-layout fail",
        ], ResumeOutcome.fail
      ),
      (.ios10Late, ["target-cannot-read fail", "byte-range-present unaffected"], .fail),
      (.ios11Early, ["byte-range-present complete-short"], .completeShort),
      (.ios11Late, ["byte-range-present unaffected"], .resume),
      (.ios12, ["byte-range-present unaffected"], .resume),
      (.ios13Later, ["byte-range-present unaffected"], .resume),
      (.networkFramework, ["target-cannot-read fail", "byte-range-present unaffected"], .fail),
      (.linux, ["byte-range-present unaffected"], .resume),
    ])
  func everyTarget(target: RepairTarget, judged: [String], outcome: ResumeOutcome) throws {
    let judgements = try fixture("v4-byte-range.xml.plist").judgements(for: target)
    #expect(judgements.map { "\($0.finding.code) \($0.outcome.rawValue)" } == judged)
    #expect(ResumeData.outcome(of: judgements) == outcome)
  }

  @Test(
    "Validator and byte-count findings: CFNetwork's outcome and this toolkit's downloader's",
    arguments: [
      (
        "weak ETag", [ResumeDataKey.entityTag: .string("W/\"a\"")], "weak-etag", .restartFromZero,
        .restartFromZero
      ),
      (
        "weak ETag and a date",
        [
          ResumeDataKey.entityTag: .string("W/\"a\""),
          ResumeDataKey.serverDownloadDate: .string("Mon, 20 Apr 2015 08:05:49 GMT"),
        ], "weak-etag", .restartFromZero, .resume
      ),
      ("no validator", [ResumeDataKey.entityTag: nil], "no-validator", .fail, .restartFromZero),
      (
        "zero bytes", [ResumeDataKey.bytesReceived: .integer(PropertyListInteger(0))],
        "empty-blob", .restartFromZero, .restartFromZero
      ),
      (
        "ftp", [ResumeDataKey.downloadURL: .string("ftp://example.com/a")], "not-http", .fail,
        .fail
      ),
      ("unknown key", ["Mine": .boolean(true)], "unknown-keys", .unaffected, .unaffected),
    ] as [(String, [String: PropertyListValue?], String, ResumeOutcome, ResumeOutcome)])
  func validators(
    name: String, changes: [String: PropertyListValue?], code: String, apple: ResumeOutcome,
    linux: ResumeOutcome
  ) throws {
    let blob = try plain(2, changes)
    let finding = try #require(blob.findings().first { $0.code == code })
    #expect(blob.outcome(of: finding, on: .ios13Later) == apple)
    #expect(blob.outcome(of: finding, on: .ios10Late) == apple)
    #expect(blob.outcome(of: finding, on: .linux) == linux)
  }

  @Test("The iOS 12.0–12.2 empty blob, naming nothing to fetch, fails everywhere")
  func tinyBlob() throws {
    let blob = try fixture("ios12-empty.archive")
    for target in RepairTarget.allCases {
      let outcomes = blob.judgements(for: target).filter { $0.finding.code == "empty-blob" }
      #expect(outcomes.map(\.outcome) == [.fail], "\(target)")
    }
  }

  @Test(
    "The partial file: a wrong size corrupts on CFNetwork, a missing one fails there",
    arguments: [
      (100, "partial-file-size-mismatch", ResumeOutcome.completeCorrupt, ResumeOutcome.resume),
      (2_000_000, "partial-file-size-mismatch", .completeCorrupt, .resume),
      (nil, "partial-file-missing", .fail, .restartFromZero),
    ] as [(Int?, String, ResumeOutcome, ResumeOutcome)])
  func partialFile(size: Int?, code: String, apple: ResumeOutcome, linux: ResumeOutcome) throws {
    let directory = try partialDirectory(size: size)
    defer { try? FileManager.default.removeItem(at: directory) }
    let blob = try plain(2)
    for (target, outcome) in [(RepairTarget.ios12, apple), (.ios10Early, apple), (.linux, linux)] {
      let judged = blob.judgements(for: target, temporaryDirectory: directory).filter {
        $0.finding.code == code
      }
      #expect(judged.map(\.outcome) == [outcome], "\(target)")
    }
  }

  @Test("A real-size partial file gives no finding and the blob resumes")
  func realSize() throws {
    let directory = try partialDirectory(size: 1_048_576)
    defer { try? FileManager.default.removeItem(at: directory) }
    let judgements = try plain(2).judgements(for: .ios12, temporaryDirectory: directory)
    #expect(judgements.map(\.finding.code) == ["ios10-request-layout"])
    #expect(ResumeData.outcome(of: judgements) == .resume)
  }

  @Test("A keyed info version 5 blob is not known to be read by iOS 12")
  func infoVersion5OnIOS12() throws {
    let blob = try fixture("keyed-v5-response.archive")
    #expect(
      blob.findings(for: .ios12).map(\.description) == [
        "warning target-cannot-read: ios12 cannot read info version 5 (−3003, invalid resume data): repair converts it"
      ])
    #expect(blob.findings(for: .ios13Later) == [])
  }

  @Test(
    "Request archives in the $N layout: iOS 10.0–10.1 and this toolkit read them; iOS 13+ falls back by session; iOS 10.2–12 not known",
    arguments: [
      (RepairTarget.ios10Early, ResumeOutcome.resume, nil), (.ios10Late, .notKnown, nil),
      (.ios11Early, .notKnown, nil), (.ios11Late, .notKnown, nil), (.ios12, .notKnown, nil),
      (
        .ios13Later, .fail,
        SessionOutcomes(foreground: .resume, background: .fail) as SessionOutcomes?
      ),
      (.networkFramework, .fail, nil), (.linux, .resume, nil),
    ])
  func dollarLayout(target: RepairTarget, outcome: ResumeOutcome, sessions: SessionOutcomes?)
    throws
  {
    let blob = try ResumeData(
      decoding: Data(
        contentsOf: repositoryRoot.appendingPathComponent(
          "Fixtures/repair/rewrite-requests-for-ios10.after.xml.plist")))
    #expect(blob.findings().map(\.code) == ["ios10-only-request-layout"])
    let judgements = blob.judgements(for: target)
    #expect(ResumeData.outcome(of: judgements) == outcome)
    #expect(ResumeData.sessionOutcomes(of: judgements) == sessions)
  }

  @Test("The outcome that happens first decides; none at all resumes")
  func precedence() {
    let finding = Finding("x", .info, "x")
    let outcome = { (outcomes: [ResumeOutcome]) in
      ResumeData.outcome(of: outcomes.map { Judgement(finding, $0) })
    }
    #expect(outcome([]) == .resume)
    #expect(outcome([.unaffected]) == .resume)
    #expect(outcome([.completeShort, .resume]) == .completeShort)
    #expect(outcome([.completeShort, .restartFromZero]) == .restartFromZero)
    #expect(outcome([.fail, .completeCorrupt, .unaffected]) == .fail)
    #expect(ResumeOutcome.allCases.sorted() == ResumeOutcome.allCases)
  }
}
