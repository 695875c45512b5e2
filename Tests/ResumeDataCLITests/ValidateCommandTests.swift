import Foundation
import KeyedArchive
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
      """
      : not resumable: empty-blob: the blob records no received bytes (the iOS 12.0–12.2 cancel-before-first-byte case): start the download over
        error no-validator: neither an ETag nor a Last-Modified date was recorded: the server cannot confirm the file is unchanged (NSURLSessionResumeEntityTag)
        warning original-request-missing: there is no original request: iOS 10.3–12.1 then gives the task a nil originalRequest (repair for them copies the current request) (NSURLSessionResumeOriginalRequest)
      """
    ),
    "truncated": (
      "truncated.plist",
      ": malformed: @974: trailer offset size 101 is not 1 to 8 bytes"
        + " (no trailer in the last 32 bytes: a file cut short?)"
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
    // Only the v4 blob has a warning; the findings about iOS 10.0–10.1 on blobs it never wrote
    // are left out.
    #expect(
      text(captured.standardOutput)
        == resumeFixtureGenerations.map {
          "\(resumeFixturePath($0.file)): ok (\($0.generation.rawValue))\n"
            + ($0.generation == .v4 ? "  \(Self.byteRangeWarning)\n" : "")
        }.joined() + "1 warning in 1 of 8 files\n")
  }

  /// The v4 fixture's warning as validate lists it.
  static let byteRangeWarning =
    "warning byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key) (NSURLSessionResumeByteRange)"

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
    // The empty blob's findings are counted after the lines.
    let count = files.contains("empty") ? "2 errors, 1 warning in 1 of \(files.count) files\n" : ""
    #expect(
      text(captured.standardOutput)
        == kinds.map { scratch.path($0.0) + $0.1 + "\n" }.joined() + count)
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
    #expect(
      text(plain.1.standardOutput) == """
        -: ok (v2)
          warning original-request-missing: there is no original request: iOS 10.3–12.1 then gives the task a nil originalRequest (repair for them copies the current request) (NSURLSessionResumeOriginalRequest)
        1 warning in 1 of 1 file

        """)
    let (status, captured) = run(["validate", "-", "--target", "network-framework"], input: input)
    #expect(status == .failure)
    #expect(
      text(captured.standardOutput) == """
        -: not resumable: unsupported: cannot be repaired for network-framework: a Network.framework blob needs the current request; as it is, network-framework fails
          warning target-cannot-read: network-framework cannot read a v2 blob (−3003, invalid resume data): repair converts it [network-framework: fails]
        1 warning in 1 of 1 file

        """)
    let ios13 = run(["validate", "-", "--target", "macos10.15+"], input: input)
    #expect(ios13.0 == .success)
  }

  @Test(
    "With --target, the repaired blob must itself resume: a Network.framework blob's validators come from its response",
    arguments: [
      (
        "network-framework", ExitCode.success,
        "ok (network-framework); as it is, network-framework resumes"
      ),
      ("linux", .success, "ok (network-framework); as it is, linux resumes"),
      (
        "ios13+", .success,
        "ok (network-framework); as it is, ios13+ fails\n  warning target-cannot-read: ios13+ cannot read a network-framework blob (−3003, invalid resume data): repair converts it [ios13+: fails]\n1 warning in 1 of 1 file"
      ),
    ])
  func repairedBlob(target: String, status: ExitCode, line: String) {
    let (actual, captured) = run([
      "validate", resumeFixturePath("network-framework.blob"), "--target", target,
    ])
    #expect(actual == status)
    #expect(
      text(captured.standardOutput) == "\(resumeFixturePath("network-framework.blob")): \(line)\n")
  }

  @Test("A header field that cannot be sent makes a blob unresumable; edit takes it out")
  func unsendableHeader() throws {
    var blob = try ResumeData(decoding: resumeFixture("v2.xml.plist"))
    var request = URLRequestFields(url: try #require(blob.currentRequest?.url))
    request.headerFields = [URLRequestFields.Header("X-Inject", "a\r\nEvil: b")]
    try blob.setEntry(
      ResumeDataKey.currentRequest, .data(try URLRequestArchive(request).encoded()))
    let input = try blob.encoded()
    let (status, captured) = run(["validate", "-"], input: input)
    #expect(status == .failure)
    #expect(
      text(captured.standardOutput) == """
        -: not resumable: unsendable-header: a header field of the current request cannot be sent as it is: the value of X-Inject holds a line break or NUL (`resumedata edit --remove-header NAME` takes it out)
        1 error in 1 of 1 file

        """)
    let edited = run(["edit", "-", "-o", "-", "--remove-header", "X-Inject"], input: input)
    #expect(edited.0 == .success)
    #expect(run(["validate", "-"], input: edited.1.standardOutput).0 == .success)
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
        == "\(input): not resumable: partial-file-missing: the partial file "
        + "CFNetworkDownload_a1b2c3.tmp is not in \(scratch.url.standardizedFileURL.path)\n"
        + "1 error in 1 of 1 file\n"
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
      reports[2]["reason"] as? String
        == "@974: trailer offset size 101 is not 1 to 8 bytes"
        + " (no trailer in the last 32 bytes: a file cut short?)")
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

@Suite("resumedata validate: findings, --strict and --target")
struct ValidateFindingsTests {
  /// The v2 fixture's partial file.
  static let partialName = "CFNetworkDownload_a1b2c3.tmp"

  static let mismatch =
    "warning partial-file-size-mismatch: the partial file holds 100 bytes but the blob records 1048576: repair sets BytesReceived to the file's size (NSURLSessionResumeBytesReceived)"

  @Test(
    "A partial file of the recorded size gives a clean line; a wrong size is listed under it, and fails only --strict",
    arguments: [
      (1_048_576, false, ExitCode.success, ": ok (v2)\n"),
      (1_048_576, true, .success, ": ok (v2)\n"),
      (100, false, .success, ": ok (v2)\n  \(mismatch)\n1 warning in 1 of 1 file\n"),
      (
        100, true, .failure,
        ": not clean: partial-file-size-mismatch: the partial file holds 100 bytes but the blob records 1048576: repair sets BytesReceived to the file's size\n1 warning in 1 of 1 file\n"
      ),
    ])
  func partialFile(size: Int, strict: Bool, status: ExitCode, output: String) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    _ = try scratch.write(Data(count: size), to: Self.partialName)
    let input = resumeFixturePath("v2.xml.plist")
    let (actual, captured) = run(
      ["validate", input, "--temp-dir", scratch.url.path] + (strict ? ["--strict"] : []))
    #expect(actual == status)
    #expect(captured.standardError == "")
    #expect(text(captured.standardOutput) == input + output)
  }

  @Test(
    "A v4 blob: the finding about iOS 10.0–10.1 is left out unless that is the target",
    arguments: [
      ([String](), false), (["--target", "ios13+"], false), (["--target", "ios10.2-10.3"], false),
      (["--target", "ios10.0-10.1"], true), (["--target", "macos10.12-10.12.1"], true),
    ])
  func v4(arguments: [String], listed: Bool) throws {
    let input = resumeFixturePath("v4-byte-range.xml.plist")
    let (_, lines) = run(["validate", input] + arguments)
    let (_, json) = run(["validate", input, "--json"] + arguments)
    #expect(text(lines.standardOutput).contains("ios10-request-layout") == listed)
    let object = try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any]
    let files = try #require(object?["files"] as? [[String: Any]])
    let codes = (files.first?["findings"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
    #expect(codes?.contains("ios10-request-layout") == listed)
  }

  @Test(
    "--strict fails a file with any warning, and only then",
    arguments: [
      ("v2.xml.plist", ExitCode.success, ": ok (v2)\n"),
      (
        "v4-byte-range.xml.plist", .failure,
        ": not clean: byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key)\n1 warning in 1 of 1 file\n"
      ),
      (
        "ios12-empty.archive", .failure,
        ": not resumable: empty-blob: the blob records no received bytes (the iOS 12.0–12.2 cancel-before-first-byte case): start the download over\n  error no-validator: neither an ETag nor a Last-Modified date was recorded: the server cannot confirm the file is unchanged (NSURLSessionResumeEntityTag)\n  warning original-request-missing: there is no original request: iOS 10.3–12.1 then gives the task a nil originalRequest (repair for them copies the current request) (NSURLSessionResumeOriginalRequest)\n2 errors, 1 warning in 1 of 1 file\n"
      ),
    ])
  func strict(file: String, status: ExitCode, output: String) {
    let input = resumeFixturePath(file)
    let (actual, captured) = run(["validate", input, "--strict"])
    #expect(actual == status)
    #expect(text(captured.standardOutput) == input + output)
  }

  @Test("--strict with a target judges for that target: a warning about another system passes")
  func strictTarget() {
    let input = resumeFixturePath("v4-byte-range.xml.plist")
    let ios12 = run(["validate", input, "--strict", "--target", "ios12"])
    #expect(ios12.0 == .success)
    #expect(text(ios12.1.standardOutput) == input + ": ok (v4); as it is, ios12 resumes\n")
    let ios11 = run(["validate", input, "--strict", "--target", "ios11.0-11.2"])
    #expect(ios11.0 == .failure)
    #expect(
      text(ios11.1.standardOutput)
        == input
        + ": not clean: byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key); as it is, ios11.0-11.2 completes with a short file\n1 warning in 1 of 1 file\n"
    )
  }

  /// What each target would do with the v4 fixture (ByteRange set, no directory): the line's
  /// end, then the findings listed.
  static let v4Targets: [(RepairTarget, ExitCode, String)] = [
    (
      .ios10Early, .success,
      """
      ok (v4); as it is, ios10.0-10.1 fails
        warning target-cannot-read: ios10.0-10.1 cannot read a v4 blob (−3003, invalid resume data): repair converts it [ios10.0-10.1: fails]
        info ios10-request-layout: the request archives are in the layout every OS writes, which iOS 10.0–10.1 cannot read back (repair for that target) (NSURLSessionResumeCurrentRequest) [ios10.0-10.1: fails]
      1 warning, 1 info in 1 of 1 file
      """
    ),
    (
      .ios10Late, .success,
      """
      ok (v4); as it is, ios10.2-10.3 fails
        warning target-cannot-read: ios10.2-10.3 cannot read a v4 blob (−3003, invalid resume data): repair converts it [ios10.2-10.3: fails]
      1 warning in 1 of 1 file
      """
    ),
    (
      .ios11Early, .success,
      """
      ok (v4); as it is, ios11.0-11.2 completes with a short file
        warning byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key) (NSURLSessionResumeByteRange) [ios11.0-11.2: completes with a short file]
      1 warning in 1 of 1 file
      """
    ),
    (.ios11Late, .success, "ok (v4); as it is, ios11.3+ resumes"),
    (.ios12, .success, "ok (v4); as it is, ios12 resumes"),
    (.ios13Later, .success, "ok (v4); as it is, ios13+ resumes"),
    // Converted, the ETag goes into the response Network.framework keeps its validators in.
    (
      .networkFramework, .success,
      """
      ok (v4); as it is, network-framework fails
        warning target-cannot-read: network-framework cannot read a v4 blob (−3003, invalid resume data): repair converts it [network-framework: fails]
      1 warning in 1 of 1 file
      """
    ),
    (.linux, .success, "ok (v4); as it is, linux resumes"),
  ]

  @Test("--target: what each system the repair table knows would do with a v4 blob as it is")
  func everyTarget() {
    #expect(Self.v4Targets.map(\.0) == RepairTarget.allCases)
    let input = resumeFixturePath("v4-byte-range.xml.plist")
    for (target, status, output) in Self.v4Targets {
      let (actual, captured) = run(["validate", input, "--target", target.rawValue])
      #expect(actual == status, "\(target)")
      #expect(text(captured.standardOutput) == "\(input): \(output)\n", "\(target)")
    }
  }

  @Test(
    "--target with a wrong-size partial file: CFNetwork completes with wrong bytes, this toolkit's downloader resumes",
    arguments: [
      ("ios12", "completes with wrong bytes"), ("ios10.2-10.3", "completes with wrong bytes"),
      ("linux", "resumes"),
    ])
  func mismatchOnTarget(target: String, phrase: String) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    _ = try scratch.write(Data(count: 100), to: ValidateFindingsTests.partialName)
    let input = resumeFixturePath("v2.xml.plist")
    let (status, captured) = run([
      "validate", input, "--temp-dir", scratch.url.path, "--target", target,
    ])
    #expect(status == .success)
    #expect(
      text(captured.standardOutput) == """
        \(input): ok (v2); as it is, \(target) \(phrase)
          \(Self.mismatch) [\(target): \(phrase)]
        1 warning in 1 of 1 file

        """)
  }

  @Test("--json: each finding with its outcome under a target, null without; strict and not-clean")
  func json() throws {
    let input = resumeFixturePath("v4-byte-range.xml.plist")
    func file(_ arguments: [String]) throws -> ([String: Any], [String: Any]) {
      let (_, captured) = run(["validate", input, "--json"] + arguments)
      let object = try #require(
        try JSONSerialization.jsonObject(with: captured.standardOutput) as? [String: Any])
      let files = try #require(object["files"] as? [[String: Any]])
      return (object, try #require(files.first))
    }
    let (plain, plainFile) = try file([])
    #expect(plain["strict"] as? Bool == false)
    #expect(plainFile["status"] as? String == "ok")
    #expect(plainFile["outcome"] is NSNull)
    let plainFindings = try #require(plainFile["findings"] as? [[String: Any]])
    #expect(plainFindings.map { $0["code"] as? String } == ["byte-range-present"])
    #expect(plainFindings.map { $0["outcome"] is NSNull } == [true])

    let (strict, strictFile) = try file(["--strict", "--target", "ios10.0-10.1"])
    #expect(strict["strict"] as? Bool == true)
    #expect(strictFile["status"] as? String == "not-clean")
    #expect(
      strictFile["reason"] as? String
        == "target-cannot-read: ios10.0-10.1 cannot read a v4 blob (−3003, invalid resume data): repair converts it"
    )
    #expect(strictFile["outcome"] as? String == "fail")
    let findings = try #require(strictFile["findings"] as? [[String: Any]])
    #expect(
      findings.map { "\($0["code"] as? String ?? "") \($0["outcome"] as? String ?? "")" } == [
        "target-cannot-read fail", "byte-range-present unaffected", "ios10-request-layout fail",
      ])
  }
}
