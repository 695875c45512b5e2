import Foundation
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
          warning byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (NSURLSessionResumeByteRange)

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

  @Test("A truncated blob exits 65 with the container's offset")
  func truncated() throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: resumeFixturePath("v2.binary.plist")))
    let (status, captured) = run(["inspect", "-"], input: bytes.prefix(1_000))
    #expect(status == .malformedInput)
    #expect(captured.standardError.hasPrefix("Error: -:@"))
  }
}
