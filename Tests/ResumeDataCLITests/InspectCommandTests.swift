import Foundation
import KeyedArchive
import PropertyList
import ResumeDataCLI
import TestSupport
import Testing

func resumeFixturePath(_ name: String) -> String {
  repositoryRoot.appendingPathComponent("Fixtures/resume").appendingPathComponent(name).path
}

@Suite("resumedata inspect")
struct InspectCommandTests {
  @Test(
    "A v4 blob with ByteRange reads well, without the finding that concerns only iOS 10.0–10.1"
  )
  func text() {
    let (status, captured) = run(["inspect", resumeFixturePath("v4-byte-range.xml.plist")])
    #expect(status == .success)
    #expect(
      String(decoding: captured.standardOutput, as: UTF8.self) == """
        generation    v4 (info version 4)
        container     xml-plist
        URL           https://example.com/files/archive.zip
        bytes         1048576 received
        ETag          "5534b35d-7c7be1"
        Last-Modified -
        partial file  CFNetworkDownload_d4e5f6.tmp
        byte range    1048576-
        current       GET https://example.com/files/archive.zip
        original      GET https://example.com/files/archive.zip
        findings
          warning byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key) (NSURLSessionResumeByteRange)

        """)
  }

  @Test(
    "Every resume fixture prints JSON with its generation and container",
    arguments: [
      ("v1.xml.plist", "v1", "xml-plist"), ("v2.xml.plist", "v2", "xml-plist"),
      ("v2.binary.plist", "v2", "binary-plist"), ("v4-byte-range.xml.plist", "v4", "xml-plist"),
      ("keyed-v5-unknown-key.archive", "keyed", "keyed-archive"),
      ("safari.archive", "safari", "keyed-archive"),
      ("network-framework.blob", "network-framework", "nw-archive"),
      ("network-framework-webkit.archive", "network-framework-webkit", "keyed-archive"),
    ])
  func json(file: String, generation: String, container: String) throws {
    let (status, captured) = run(["inspect", resumeFixturePath(file), "--json"])
    #expect(status == .success)
    let object = try JSONSerialization.jsonObject(with: captured.standardOutput) as? [String: Any]
    #expect(object?["schemaVersion"] as? Int == 1)
    #expect(object?["generation"] as? String == generation)
    #expect(object?["container"] as? String == container)
    #expect(object?["downloadURL"] as? String == "https://example.com/files/archive.zip")
    let request = object?["currentRequest"] as? [String: Any]
    #expect(request?["method"] as? String == "GET")
    for key in [
      "infoVersion", "bytesReceived", "entityTag", "tempFileName", "localPath", "byteRange",
      "unknownKeys", "findings",
    ] {
      #expect(object?.keys.contains(key) == true, "\(key)")
    }
  }

  @Test(
    "--target keeps the findings about that system and gives each its outcome there",
    arguments: [
      (
        "ios10.0-10.1",
        """
        target        ios10.0-10.1 fails, as it is
        findings
          warning target-cannot-read: ios10.0-10.1 cannot read a v4 blob (−3003, invalid resume data): repair converts it [ios10.0-10.1: fails]
          warning byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key) (NSURLSessionResumeByteRange) [ios10.0-10.1: unaffected]
          info ios10-request-layout: the request archives are in the layout every OS writes, which iOS 10.0–10.1 cannot read back (repair for that target) (NSURLSessionResumeCurrentRequest) [ios10.0-10.1: fails]

        """
      ),
      (
        "ios13+",
        """
        target        ios13+ resumes, as it is
        findings
          warning byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key) (NSURLSessionResumeByteRange) [ios13+: unaffected]

        """
      ),
    ])
  func target(name: String, tail: String) throws {
    let (status, captured) = run([
      "inspect", resumeFixturePath("v4-byte-range.xml.plist"), "--target", name,
    ])
    #expect(status == .success)
    let output = String(decoding: captured.standardOutput, as: UTF8.self)
    let start = try #require(output.range(of: "target        "))
    #expect(String(output[start.lowerBound...]) == tail)
  }

  @Test("--json: target, outcome and each finding's outcome, null without --target")
  func targetJSON() throws {
    func object(_ extra: [String]) throws -> [String: Any] {
      let (_, captured) = run(
        ["inspect", resumeFixturePath("v4-byte-range.xml.plist"), "--json"] + extra)
      return try #require(
        try JSONSerialization.jsonObject(with: captured.standardOutput) as? [String: Any])
    }
    let plain = try object([])
    #expect(plain["target"] is NSNull)
    #expect(plain["outcome"] is NSNull)
    let plainFindings = try #require(plain["findings"] as? [[String: Any]])
    #expect(plainFindings.map { $0["outcome"] is NSNull } == [true])
    let judged = try object(["--target", "macos10.13-10.13.3"])
    #expect(judged["target"] as? String == "ios11.0-11.2")
    #expect(judged["outcome"] as? String == "complete-short")
    let findings = try #require(judged["findings"] as? [[String: Any]])
    #expect(findings.map { $0["outcome"] as? String } == ["complete-short"])
  }

  @Test("An unknown --target is a usage error")
  func unknownTarget() {
    let (status, captured) = run([
      "inspect", resumeFixturePath("v2.xml.plist"), "--target", "ios9",
    ])
    #expect(status == .usage)
    #expect(captured.standardOutput.isEmpty)
    #expect(
      captured.standardError.hasPrefix("Error: unknown target 'ios9'; valid targets: ios10.0-10.1,")
    )
  }

  @Test("A truncated blob exits 65 with the container's offset")
  func truncated() throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: resumeFixturePath("v2.binary.plist")))
    let (status, captured) = run(["inspect", "-"], input: bytes.prefix(1_000))
    #expect(status == .malformedInput)
    #expect(captured.standardError.hasPrefix("Error: -:@"))
  }

  @Test(
    "Text from the blob cannot reach the terminal as control characters, bidi controls or lines")
  func controlCharacters() throws {
    let request = try URLRequestArchive(
      URLRequestFields(
        url: "https://example.com/\u{9B}31m",
        headerFields: [.init("X-Inject", "\u{1B}[31mRED\u{1B}[0m\r\nEvil: yes")])
    ).encoded()
    let blob = try PropertyListValue.dictionary([
      "NSURLSessionDownloadURL": .string("https://example.com/\u{9B}31m"),
      "NSURLSessionResumeBytesReceived": .integer(PropertyListInteger(Int64(10))),
      "NSURLSessionResumeCurrentRequest": .data(request),
      "NSURLSessionResumeOriginalRequest": .data(request),
      "NSURLSessionResumeEntityTag": .string("\"x\"\n  error fake-finding: \u{1B}]0;title\u{7}"),
      "NSURLSessionResumeInfoTempFileName": .string("CFNetworkDownload_\u{202E}pmt.exe"),
      "NSURLSessionResumeInfoVersion": .integer(PropertyListInteger(Int64(2))),
    ]).encoded(as: .binary)
    let (status, captured) = run(["inspect", "-"], input: blob)
    #expect(status == .success)
    let lines = String(decoding: captured.standardOutput, as: UTF8.self).split(separator: "\n")
    #expect(
      Array(lines.prefix(11)) == [
        "generation    v2 (info version 2)",
        "container     binary-plist",
        "URL           https://example.com/\\u{9b}31m",
        "bytes         10 received",
        "ETag          \"x\"\\n  error fake-finding: \\u{1b}]0;title\\u{7}",
        "Last-Modified -",
        "partial file  CFNetworkDownload_\\u{202e}pmt.exe",
        "current       GET https://example.com/\\u{9b}31m",
        "                X-Inject: \\u{1b}[31mRED\\u{1b}[0m\\r\\nEvil: yes",
        "original      GET https://example.com/\\u{9b}31m",
        "                X-Inject: \\u{1b}[31mRED\\u{1b}[0m\\r\\nEvil: yes",
      ])
    #expect(!captured.standardOutput.contains(0x1B))
  }

  @Test(
    "inspect and validate look partial files up in a --temp-dir that is there: else exit 66",
    arguments: [
      (["inspect", resumeFixturePath("v2.xml.plist")], "/nonexistent-dir", "no such directory"),
      (["validate", resumeFixturePath("v2.xml.plist")], "/nonexistent-dir", "no such directory"),
      (
        ["inspect", resumeFixturePath("v2.xml.plist")], resumeFixturePath("v1.xml.plist"),
        "not a directory"
      ),
    ])
  func missingTemporaryDirectory(arguments: [String], directory: String, problem: String) {
    let (status, captured) = run(arguments + ["--temp-dir", directory])
    #expect(status == .unreadableInput)
    #expect(captured.standardOutput.isEmpty)
    #expect(captured.standardError == "Error: \(directory): \(problem) (--temp-dir)\n")
  }
}
