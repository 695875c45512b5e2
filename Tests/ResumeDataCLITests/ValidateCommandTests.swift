import Foundation
import ResumeData
import ResumeDataCLI
import Testing

@Suite("resumedata validate")
struct ValidateCommandTests {
  /// Each kind of file: its name in the scratch directory, and its line after the path.
  static let kinds = [
    "ok": ("ok.plist", ": ok (v2)"),
    "empty": (
      "empty.archive",
      ": not resumable: empty-blob: the blob records no received bytes (the iOS 12.0–12.2 cancel-before-first-byte case): start the download over"
    ),
    "truncated": (
      "truncated.plist", ": malformed: @974: trailer offset size 101 is not 1 to 8 bytes"
    ),
    "missing": ("missing.plist", ": unreadable: no such file"),
  ]

  /// A scratch directory holding a resumable, an empty and a truncated blob.
  static func mix() throws -> ScratchDirectory {
    let scratch = try ScratchDirectory()
    _ = try scratch.write(try resumeFixture("v2.xml.plist"), to: "ok.plist")
    _ = try scratch.write(try emptyKeyedBlob(), to: "empty.archive")
    _ = try scratch.write(try truncatedBlob(), to: "truncated.plist")
    return scratch
  }

  @Test("Every fixture is resumable: one ok line each, exit 0")
  func fixtures() {
    let files = resumeFixtureGenerations.map(\.file)
    let (status, captured) = run(["validate"] + files.map(resumeFixturePath))
    #expect(status == .success)
    #expect(captured.standardError == "")
    #expect(
      text(captured.standardOutput)
        == resumeFixtureGenerations.map {
          "\(resumeFixturePath($0.file)): ok (\($0.generation.rawValue))\n"
        }.joined())
  }

  @Test(
    "The exit status is the worst file's: unreadable 66, malformed 65, not resumable 1",
    arguments: [
      (["ok"], ExitCode.success),
      (["ok", "empty"], .failure),
      (["empty", "truncated", "ok"], .malformedInput),
      (["truncated", "missing", "empty"], .unreadableInput),
      (["missing", "ok"], .unreadableInput),
    ])
  func exitStatus(files: [String], status: ExitCode) throws {
    let scratch = try Self.mix()
    defer { scratch.remove() }
    let kinds = files.map { Self.kinds[$0]! }
    let (actual, captured) = run(["validate"] + kinds.map { scratch.path($0.0) })
    #expect(actual == status)
    #expect(captured.standardError == "")
    #expect(
      text(captured.standardOutput) == kinds.map { scratch.path($0.0) + $0.1 + "\n" }.joined())
  }

  @Test("With --target, a blob whose repair for that system fails is not resumable")
  func target() throws {
    // No request at all: diagnosis finds no error, but a Network.framework blob needs one.
    var blob = try ResumeData(decoding: resumeFixture("v2.xml.plist"))
    try blob.setEntry(ResumeDataKey.currentRequest, nil)
    try blob.setEntry(ResumeDataKey.originalRequest, nil)
    let input = try blob.encoded()
    let plain = run(["validate", "-"], input: input)
    #expect(plain.0 == .success)
    #expect(text(plain.1.standardOutput) == "-: ok (v2)\n")
    let (status, captured) = run(["validate", "-", "--target", "network-framework"], input: input)
    #expect(status == .failure)
    #expect(
      text(captured.standardOutput)
        == "-: not resumable: unsupported: cannot be repaired for network-framework: a Network.framework blob needs the current request\n"
    )
    let ios13 = run(["validate", "-", "--target", "macos10.15+"], input: input)
    #expect(ios13.0 == .success)
  }

  @Test(
    "With --target, the repaired blob must itself resume: a Network.framework blob's validators come from its response",
    arguments: [
      ("network-framework", ExitCode.success, "ok (network-framework)"),
      ("linux", .success, "ok (network-framework)"),
      ("ios13+", .success, "ok (network-framework)"),
    ])
  func repairedBlob(target: String, status: ExitCode, line: String) {
    let (actual, captured) = run([
      "validate", resumeFixturePath("network-framework.blob"), "--target", target,
    ])
    #expect(actual == status)
    #expect(
      text(captured.standardOutput) == "\(resumeFixturePath("network-framework.blob")): \(line)\n")
  }

  @Test("--temp-dir: a partial file missing from the directory is an error finding")
  func temporaryDirectory() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let input = resumeFixturePath("v2.xml.plist")
    let arguments = ["validate", input, "--temp-dir", scratch.url.path]
    let missing = run(arguments)
    #expect(missing.0 == .failure)
    #expect(
      text(missing.1.standardOutput)
        == "\(input): not resumable: partial-file-missing: the partial file CFNetworkDownload_a1b2c3.tmp is not in the directory\n"
    )
    _ = try scratch.write(Data(count: 1_048_576), to: "CFNetworkDownload_a1b2c3.tmp")
    let present = run(arguments)
    #expect(present.0 == .success)
    #expect(text(present.1.standardOutput) == "\(input): ok (v2)\n")
  }

  @Test("--json: one object with every file's status, reason and findings")
  func json() throws {
    let scratch = try Self.mix()
    defer { scratch.remove() }
    let files = ["ok.plist", "empty.archive", "truncated.plist", "missing.plist"].map(
      scratch.path)
    let (status, captured) = run(["validate", "--json", "--target", "ios12"] + files)
    #expect(status == .unreadableInput)
    let object =
      try JSONSerialization.jsonObject(with: captured.standardOutput) as? [String: Any]
    #expect(object?["schemaVersion"] as? Int == 1)
    #expect(object?["target"] as? String == "ios12")
    let reports = try #require(object?["files"] as? [[String: Any]])
    #expect(reports.map { $0["file"] as? String } == files)
    #expect(
      reports.map { $0["status"] as? String } == [
        "ok", "not-resumable", "malformed", "unreadable",
      ])
    #expect(reports.map { $0["generation"] as? String } == ["v2", "keyed", nil, nil])
    #expect(reports[0]["reason"] is NSNull)
    #expect(
      reports[2]["reason"] as? String == "@974: trailer offset size 101 is not 1 to 8 bytes")
    let codes = { (report: [String: Any], key: String) in
      (report[key] as? [[String: Any]])?.map { $0["code"] as? String }
    }
    #expect(codes(reports[0], "findings") == ["ios10-request-layout"])
    #expect(codes(reports[0], "repairFindings") == [])
    #expect(
      codes(reports[1], "findings") == ["empty-blob", "no-validator", "original-request-missing"])
    #expect(codes(reports[1], "repairFindings") == ["refuse-empty-blob"])
    #expect(codes(reports[0], "repairedFindings") == ["ios10-request-layout"])
    #expect(reports[1]["repairedFindings"] is NSNull)
    #expect(reports[3]["repairFindings"] is NSNull)
  }
}
