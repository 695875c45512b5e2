import Foundation
import ResumeData
import TestSupport
import Testing

/// `ResumeData.forURLSession`, the one call for a downloader on an Apple platform, over every blob
/// fixture and every system a repair target stands for: resume (with the very bytes given, or
/// repaired ones) or start over, and why.
@Suite("The one call for an Apple downloader")
struct URLSessionResumeTests {
  // One system for each repair target, and a macOS release for an alias: iOS 10.0 (ios10.0-10.1),
  // 10.3 (ios10.2-10.3), 11.1 (ios11.0-11.2), 11.4 (ios11.3+), 12.1 (ios12), 17.5 (ios13+),
  // iOS 18.2 with Network.framework's loader, macOS 10.13.2 (ios11.0-11.2), macOS 14 (ios13+).
  static let systems: [AppleSystem] = [
    AppleSystem(.iOS, 10, 0), AppleSystem(.iOS, 10, 3), AppleSystem(.iOS, 11, 1),
    AppleSystem(.iOS, 11, 4), AppleSystem(.iOS, 12, 1), AppleSystem(.iOS, 17, 5),
    AppleSystem(.iOS, 18, 2, networkFrameworkLoader: true), AppleSystem(.macOS, 10, 13, 2),
    AppleSystem(.macOS, 14, 0),
  ]

  // Per fixture, per system above: `resume=` (the bytes given, untouched), `resume*` (repaired
  // bytes), or `over:CODE` (start over, the reason's code).
  static let expected: [(String, [String])] = [
    (
      "resume/ios10.0-v2.xml.plist",
      [
        "resume*", "resume=", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "resume/ios12-empty.archive",
      [
        "over:refuse-empty-blob", "over:refuse-empty-blob", "over:refuse-empty-blob",
        "over:refuse-empty-blob", "over:refuse-empty-blob", "over:refuse-empty-blob",
        "over:refuse-empty-blob", "over:refuse-empty-blob", "over:refuse-empty-blob",
      ]
    ),
    (
      "resume/keyed-v4.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume=", "resume=", "resume*",
        "resume*", "resume=",
      ]
    ),
    (
      "resume/keyed-v5-response.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume=", "resume*", "resume*",
        "resume=",
      ]
    ),
    (
      "resume/keyed-v5-unknown-key.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume=", "resume*",
        "resume*", "resume=",
      ]
    ),
    (
      "resume/keyed-v5-webkit-xml.archive.plist",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume=", "resume*",
        "resume*", "resume=",
      ]
    ),
    (
      "resume/keyed-wrong-root-keys.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume*", "resume*",
        "resume*", "resume*",
      ]
    ),
    (
      "resume/network-framework-literal-key.blob",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume*", "resume*",
        "resume*", "resume*",
      ]
    ),
    (
      "resume/network-framework-webkit.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume*", "resume*", "resume*",
        "resume*",
      ]
    ),
    (
      "resume/network-framework.blob",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume*", "resume=", "resume*",
        "resume*",
      ]
    ),
    (
      "resume/safari.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume=", "resume*",
        "resume*", "resume=",
      ]
    ),
    (
      "resume/segmented.archive",
      [
        "over:segmented-partial-file", "over:segmented-partial-file", "over:segmented-partial-file",
        "over:segmented-partial-file", "over:segmented-partial-file", "over:segmented-partial-file",
        "over:unsupported", "over:segmented-partial-file", "over:segmented-partial-file",
      ]
    ),
    (
      "resume/truncated/binary-plist.plist",
      [
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list",
      ]
    ),
    (
      "resume/truncated/keyed-archive-xml.archive.plist",
      [
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list",
      ]
    ),
    (
      "resume/truncated/keyed-archive.archive",
      [
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list",
      ]
    ),
    (
      "resume/truncated/nw-archive.blob",
      [
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list",
      ]
    ),
    (
      "resume/truncated/xml-plist.plist",
      [
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list", "over:property-list", "over:property-list", "over:property-list",
        "over:property-list",
      ]
    ),
    (
      "resume/unsafe-temp-file-name.xml.plist",
      [
        "over:unsafe-file-name", "over:unsafe-file-name", "over:unsafe-file-name",
        "over:unsafe-file-name", "over:unsafe-file-name", "over:unsafe-file-name",
        "over:unsafe-file-name", "over:unsafe-file-name", "over:unsafe-file-name",
      ]
    ),
    (
      "resume/v1.xml.plist",
      [
        "resume*", "resume=", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "resume/v2.binary.plist",
      [
        "resume*", "resume=", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "resume/v2.xml.plist",
      [
        "resume*", "resume=", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "resume/v4-byte-range.xml.plist",
      [
        "resume*", "resume*", "resume*", "resume=", "resume=", "resume=", "resume*",
        "resume*", "resume=",
      ]
    ),
    (
      "repair/convert-for-target-network-framework.after.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume=", "resume*", "resume*",
        "resume=",
      ]
    ),
    (
      "repair/convert-for-target.after.xml.plist",
      [
        "resume*", "resume*", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "repair/fill-original-request.after.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume=", "resume=", "resume*",
        "resume*", "resume=",
      ]
    ),
    (
      "repair/hand-off-segments.after.archive",
      [
        "resume*", "resume*", "resume*", "resume*", "resume*", "resume=", "resume*",
        "resume*", "resume=",
      ]
    ),
    (
      "repair/move-local-path.after.xml.plist",
      [
        "resume*", "resume=", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "repair/reconcile-bytes-received-segmented.after.archive",
      [
        "over:segmented-partial-file", "over:segmented-partial-file", "over:segmented-partial-file",
        "over:segmented-partial-file", "over:segmented-partial-file", "over:segmented-partial-file",
        "over:unsupported", "over:segmented-partial-file", "over:segmented-partial-file",
      ]
    ),
    (
      "repair/reconcile-bytes-received.after.xml.plist",
      [
        "resume*", "resume=", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "repair/remove-byte-range.after.xml.plist",
      [
        "resume*", "resume*", "resume=", "resume=", "resume=", "resume=", "resume*",
        "resume=", "resume=",
      ]
    ),
    (
      "repair/rewrite-requests-for-ios10.after.xml.plist",
      [
        "resume=", "resume*", "resume*", "resume*", "resume*", "resume*", "resume*",
        "resume*", "resume*",
      ]
    ),
  ]

  static func summary(_ answer: URLSessionResume, given blob: Data) -> String {
    switch answer {
    case .resume(let data, _): data == blob ? "resume=" : "resume*"
    case .startOver(let reason, _): "over:\(reason.code)"
    }
  }

  @Test("Every fixture is in the table")
  func tableCoversTheFixtures() {
    #expect(Self.expected.map(\.0) == fixturesRecursively("resume") + fixturesRecursively("repair"))
  }

  @Test(
    "Every fixture on every system: resume or start over, as the table says", arguments: expected)
  func everyFixtureOnEverySystem(_ name: String, _ answers: [String]) throws {
    let blob = try fixture(name)
    for (system, want) in zip(Self.systems, answers) {
      let answer = ResumeData.forURLSession(blob, on: system, partialFile: .notChecked)
      #expect(Self.summary(answer, given: blob) == want, "\(name) on \(system)")
      guard let target = system.repairTarget else { continue }
      switch answer {
      case .resume(let data, let findings):
        // What is handed to URLSession reads back, and the system would resume it.
        let resumed = try ResumeData(decoding: data)
        let judged = resumed.judgements(for: target)
        #expect(ResumeData.outcome(of: judged) == .resume, "\(name) on \(system)")
        #expect(!findings.contains { $0.severity == .error }, "\(name) on \(system)")
        // The bytes are what the repair makes, and the bytes given when it changed nothing.
        let repair = try ResumeData(decoding: blob).repaired(for: target)
        #expect(try repair.blob?.encoded(keepingUntouchedBytes: true) == data)
        #expect(repair.findings.isEmpty == (data == blob), "\(name) on \(system)")
      case .startOver(let reason, let findings):
        #expect(reason.severity == .error || reason.severity == .warning)
        #expect(findings.contains(reason), "\(name) on \(system)")
        #expect(!reason.message.isEmpty)
      }
    }
  }

  @Test(
    "What the repair changed, and what is still worth knowing, exactly",
    arguments: [
      ("resume/v4-byte-range.xml.plist", AppleSystem(.iOS, 11, 1), ["remove-byte-range"]),
      ("resume/v4-byte-range.xml.plist", AppleSystem(.iOS, 11, 4), []),
      ("resume/safari.archive", AppleSystem(.iOS, 12, 1), ["fill-original-request"]),
      ("resume/keyed-v5-response.archive", AppleSystem(.iOS, 17, 5), []),
      ("resume/keyed-v5-response.archive", AppleSystem(.iOS, 12, 1), ["convert-for-target"]),
      (
        "resume/ios10.0-v2.xml.plist", AppleSystem(.iOS, 10, 0),
        ["rewrite-requests-for-ios10", "rewrite-requests-for-ios10"]
      ),
      (
        "repair/rewrite-requests-for-ios10.after.xml.plist", AppleSystem(.macOS, 14, 0),
        ["restore-standard-request-layout", "restore-standard-request-layout"]
      ),
    ] as [(String, AppleSystem, [String])])
  func findingsExactly(_ name: String, _ system: AppleSystem, _ codes: [String]) throws {
    let answer = ResumeData.forURLSession(try fixture(name), on: system, partialFile: .notChecked)
    #expect(answer.resumeData != nil)
    #expect(answer.findings.map(\.code) == codes)
  }

  @Test("The iOS 12.0–12.2 empty blob: start over, and why")
  func emptyBlob() throws {
    let answer = ResumeData.forURLSession(
      try fixture("resume/ios12-empty.archive"), on: AppleSystem(.iOS, 12, 1),
      partialFile: .notChecked)
    guard case .startOver(let reason, let findings) = answer else {
      Issue.record("resumed an empty blob")
      return
    }
    #expect(reason.code == "refuse-empty-blob")
    #expect(
      reason.message
        == "the blob records 0 bytes received: start the download over; no repaired blob is written"
    )
    #expect(findings == [reason])
    #expect(answer.resumeData == nil)
  }

  @Test("A blob that does not read: start over, with where it broke")
  func unreadable() throws {
    let answer = ResumeData.forURLSession(
      try fixture("resume/truncated/binary-plist.plist"), on: AppleSystem(.iOS, 17, 5),
      partialFile: .notChecked)
    guard case .startOver(let reason, _) = answer else {
      Issue.record("resumed a truncated blob")
      return
    }
    #expect(reason.code == "property-list")
    #expect(reason.message.hasPrefix("the blob does not read as resume data: "))
    #expect(reason.message.contains("offset") || reason.message.contains("byte"))
  }

  // v2.xml.plist names CFNetworkDownload_v2.tmp and records its BytesReceived.
  @Test(
    "The partial file in the directory given: there, gone, or of another size",
    arguments: [("there", "resume="), ("gone", "over:partial-file-missing"), ("short", "resume*")])
  func partialFile(_ state: String, _ want: String) throws {
    let blob = try fixture("resume/v2.xml.plist")
    let resume = try ResumeData(decoding: blob)
    let name = try #require(resume.tempFileName)
    let received = try #require(resume.bytesReceived)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "url-session-resume-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent(name)
    switch state {
    case "there": try Data(count: Int(received)).write(to: file)
    case "short": try Data(count: Int(received) - 10).write(to: file)
    default: break
    }
    let answer = ResumeData.forURLSession(
      blob, on: AppleSystem(.iOS, 17, 5), partialFile: .inDirectory(directory))
    #expect(Self.summary(answer, given: blob) == want)
    if state == "short" {
      #expect(answer.findings.map(\.code) == ["reconcile-bytes-received"])
      let repaired = try ResumeData(decoding: try #require(answer.resumeData))
      #expect(repaired.bytesReceived == received - 10)
    }
    // Not checked, the file's state changes nothing.
    let unchecked = ResumeData.forURLSession(
      blob, on: AppleSystem(.iOS, 17, 5), partialFile: .notChecked)
    #expect(unchecked == .resume(blob, findings: []))
  }

  @Test(
    "Each system's repair target",
    arguments: [
      (AppleSystem(.iOS, 9, 3), nil), (AppleSystem(.iOS, 10, 1, 1), .ios10Early),
      (AppleSystem(.iOS, 10, 2), .ios10Late), (AppleSystem(.iOS, 11, 2, 6), .ios11Early),
      (AppleSystem(.iOS, 11, 3), .ios11Late), (AppleSystem(.iOS, 12, 4), .ios12),
      (AppleSystem(.iOS, 13, 0), .ios13Later), (AppleSystem(.iOS, 26, 1), .ios13Later),
      (AppleSystem(.iOS, 18, 0, networkFrameworkLoader: true), .networkFramework),
      (AppleSystem(.macOS, 10, 11, 6), nil), (AppleSystem(.macOS, 10, 12, 1), .ios10Early),
      (AppleSystem(.macOS, 10, 12, 2), .ios10Late), (AppleSystem(.macOS, 10, 13, 3), .ios11Early),
      (AppleSystem(.macOS, 10, 13, 4), .ios11Late), (AppleSystem(.macOS, 10, 14, 6), .ios12),
      (AppleSystem(.macOS, 10, 15), .ios13Later), (AppleSystem(.macOS, 11, 0), .ios13Later),
      (AppleSystem(.macOS, 15, 0, networkFrameworkLoader: true), .networkFramework),
      (AppleSystem(.tvOS, 12, 4), nil), (AppleSystem(.tvOS, 13, 0), .ios13Later),
      (AppleSystem(.watchOS, 5, 3), nil), (AppleSystem(.watchOS, 6, 0), .ios13Later),
      (AppleSystem(.visionOS, 1, 0), .ios13Later),
    ] as [(AppleSystem, RepairTarget?)])
  func repairTargets(_ system: AppleSystem, _ target: RepairTarget?) {
    #expect(system.repairTarget == target, "\(system)")
  }

  @Test("A system no source ties to a target: start over, and which releases are covered")
  func unknownSystem() throws {
    let answer = ResumeData.forURLSession(
      try fixture("resume/v2.xml.plist"), on: AppleSystem(.tvOS, 12, 0), partialFile: .notChecked)
    guard case .startOver(let reason, _) = answer else {
      Issue.record("resumed for an unknown system")
      return
    }
    #expect(reason.code == "unknown-system")
    #expect(
      reason.message
        == "no known resume behaviour for tvOS 12.0.0: the oldest releases covered are iOS 10, macOS 10.12, tvOS 13 and watchOS 6"
    )
  }

  @Test("Off Apple platforms there is no running system, and the call without one starts over")
  func noRunningSystem() throws {
    #if os(Linux)
      #expect(AppleSystem.running == nil)
      let answer = ResumeData.forURLSession(
        try fixture("resume/v2.xml.plist"), partialFile: .notChecked)
      guard case .startOver(let reason, _) = answer else {
        Issue.record("resumed without a system")
        return
      }
      #expect(reason.code == "unknown-system")
    #endif
  }
}
