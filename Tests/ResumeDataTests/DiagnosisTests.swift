import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import Testing

@Suite("Resume data diagnosis")
struct DiagnosisTests {
  func codes(_ entries: PropertyListDictionary, directory: URL? = nil) throws -> [String] {
    try ResumeData(decoding: PropertyListValue.dictionary(entries).encoded(as: .xml)).findings(
      temporaryDirectory: directory
    )
    .map(\.code)
  }

  func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resume-diagnosis-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
  }

  @Test("Each generation's healthy blob has only the findings its form implies")
  func generations() throws {
    for blob in try blobs() {
      let findings = try ResumeData(decoding: blob.bytes).findings().map(\.code)
      #expect(findings == blob.findings, "\(blob.name)")
    }
  }

  @Test(
    "Each problem gets its finding, most severe first",
    arguments: [
      (
        "no validator", [ResumeDataKey.entityTag: nil] as [String: PropertyListValue?],
        ["no-validator", "ios10-request-layout"]
      ),
      (
        "weak ETag", [ResumeDataKey.entityTag: .string("W/\"abc\"")],
        ["weak-etag", "ios10-request-layout"]
      ),
      (
        "zero bytes", [ResumeDataKey.bytesReceived: .integer(PropertyListInteger(0))],
        ["empty-blob", "ios10-request-layout"]
      ),
      (
        "no original request", [ResumeDataKey.originalRequest: nil],
        ["original-request-missing", "ios10-request-layout"]
      ),
      (
        "ftp URL", [ResumeDataKey.downloadURL: .string("ftp://example.com/a")],
        ["not-http", "ios10-request-layout"]
      ),
      ("unknown key", ["MyAppKey": .boolean(true)], ["ios10-request-layout", "unknown-keys"]),
      (
        "escaping temp name", [ResumeDataKey.tempFileName: .string("../../etc/passwd")],
        ["unsafe-file-name", "ios10-request-layout"]
      ),
    ])
  func problems(name: String, changes: [String: PropertyListValue?], expected: [String]) throws {
    var entries = try plainEntries(
      version: 2, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_x.tmp"))])
    for (key, value) in changes { entries[key] = value }
    #expect(try codes(entries) == expected)
  }

  @Test(
    "A bare name has no separator, NUL or dot-only form",
    arguments: [
      ("CFNetworkDownload_Ab12Cd.tmp", true), ("a", true), ("...", true), ("..a", true),
      (".hidden", true), ("é.tmp", true), ("", false), (".", false), ("..", false),
      ("a/b", false), ("/", false), ("a\\b", false), ("a\u{0}b", false), ("../x", false),
    ])
  func bareNames(_ name: String, safe: Bool) {
    #expect(ResumeData.isSafeBareName(name) == safe)
  }

  @Test(
    "Only http and https URLs, in any case, resume",
    arguments: [
      ("https://example.com/f", true), ("http://example.com/f", true), ("HTTPS://E/f", true),
      ("HtTp:x", true), ("ftp://example.com/f", false), ("file:///tmp/f", false),
      ("https", false), ("httpx://e/f", false), ("htt://e/f", false), (":", false),
      ("https2://e/f", false), ("ht p://e", false), ("þttp://e", false),
    ])
  func httpSchemes(_ url: String, resumable: Bool) throws {
    var entries = try plainEntries(
      version: 2, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_x.tmp"))])
    entries[ResumeDataKey.downloadURL] = .string(url)
    #expect(try codes(entries).contains("not-http") == !resumable)
  }

  @Test("Findings come most severe first, in the order found within a severity")
  func findingOrder() throws {
    var entries = try plainEntries(
      version: 2, extra: [(ResumeDataKey.tempFileName, .string("../escape"))])
    entries[ResumeDataKey.entityTag] = nil
    entries[ResumeDataKey.serverDownloadDate] = nil
    entries[ResumeDataKey.byteRange] = .string("0-")
    entries["SomethingNew"] = .string("kept")
    #expect(
      try codes(entries) == [
        "no-validator", "unsafe-file-name", "byte-range-present", "ios10-request-layout",
        "unknown-keys",
      ])
    #expect(Finding.Severity.allCases.sorted(by: >) == [.error, .warning, .info])
  }

  @Test("A POST request is not resumable")
  func post() throws {
    var entries = try plainEntries(
      version: 2, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_x.tmp"))])
    entries[ResumeDataKey.currentRequest] = .data(try requestArchive("post-body-headers.archive"))
    #expect(try codes(entries).first == "not-get")
  }

  @Test(
    "A header field that cannot be sent is an error naming its request and field; removed, none",
    arguments: [
      (
        [("X-Inject", "a\r\nEvil: b")], String?.none,
        "a header field of the current request cannot be sent as it is: the value of X-Inject "
          + "holds a line break or NUL",
        ResumeDataKey.currentRequest
      ),
      (
        [("X-Fine", "1"), ("Bad Name", "v")], nil,
        "a header field of the current request cannot be sent as it is: \"Bad Name\" is not an "
          + "HTTP header name",
        ResumeDataKey.currentRequest
      ),
      (
        [], "X-Nul",
        "a header field of the original request cannot be sent as it is: the value of X-Nul "
          + "holds a line break or NUL",
        ResumeDataKey.originalRequest
      ),
      (
        [("Ünï", "v")], nil,
        "a header field of the current request cannot be sent as it is: \"Ünï\" is not an HTTP "
          + "header name",
        ResumeDataKey.currentRequest
      ),
    ] as [([(String, String)], String?, String, String)])
  func unsendableHeader(
    current: [(String, String)], originalNul: String?, message: String, path: String
  ) throws {
    func archive(_ fields: [(String, String)]) throws -> PropertyListValue {
      var request = URLRequestFields(url: "https://example.com/file")
      request.headerFields = fields.map { URLRequestFields.Header($0.0, $0.1) }
      return .data(try URLRequestArchive(request).encoded())
    }
    var entries = try plainEntries(
      version: 2, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_x.tmp"))])
    entries[ResumeDataKey.currentRequest] = try archive(current)
    entries[ResumeDataKey.originalRequest] = try archive(
      originalNul.map { [($0, "a\u{0}b")] } ?? [])
    let blob = try ResumeData(decoding: try ResumeData(building: entries, as: .v2).encoded())
    let found = blob.findings().filter { $0.code == "unsendable-header" }
    #expect(
      found
        == [
          Finding(
            "unsendable-header", .error,
            message + " (`resumedata edit --remove-header NAME` takes it out)", path: path)
        ])
    // Every field the finding could name, removed by its name.
    var edited = blob
    for name in current.map(\.0) + (originalNul.map { [$0] } ?? []) {
      try edited.setHeader(name, nil)
    }
    #expect(!edited.findings().contains { $0.code == "unsendable-header" })
  }

  @Test("The partial file is looked up by name in the directory, by size only")
  func partialFile() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let entries = try plainEntries(
      version: 2, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_x.tmp"))])
    #expect(try codes(entries, directory: directory).first == "partial-file-missing")
    let file = directory.appendingPathComponent("CFNetworkDownload_x.tmp")
    try Data(count: 1_048_576).write(to: file)
    #expect(try !codes(entries, directory: directory).contains { $0.hasPrefix("partial-file") })
    try Data(count: 1000).write(to: file)
    #expect(try codes(entries, directory: directory).first == "partial-file-size-mismatch")
  }

  @Test("An escaping temp name is reported and never looked up, even when the target exists")
  func escapingName() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let outside = directory.deletingLastPathComponent().appendingPathComponent(
      "outside-\(UUID().uuidString)")
    try Data(count: 10).write(to: outside)
    defer { try? FileManager.default.removeItem(at: outside) }
    let entries = try plainEntries(
      version: 2, extra: [(ResumeDataKey.tempFileName, .string("../" + outside.lastPathComponent))])
    let found = try codes(entries, directory: directory)
    #expect(found.contains("unsafe-file-name"))
    #expect(!found.contains { $0.hasPrefix("partial-file") })
  }

  @Test("A v1 LocalPath outside the directory is reported")
  func localPathOutside() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let entries = try plainEntries(
      version: 1,
      extra: [(ResumeDataKey.localPath, .string("/var/mobile/Containers/Old/tmp/x.tmp"))])
    #expect(try codes(entries, directory: directory).contains("local-path-outside-directory"))
    let inside = try plainEntries(
      version: 1, extra: [(ResumeDataKey.localPath, .string(directory.path + "/x.tmp"))])
    #expect(try codes(inside, directory: directory).first == "partial-file-missing")
  }
}
