import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import ResumeDataCLI
import Testing

/// A request's headers, comparable.
private func headers(_ request: URLRequestArchive?) -> [String] {
  request?.headerFields.map { "\($0.name): \($0.value)" } ?? []
}

/// Runs `edit` on a fixture (or on `input` from standard input), blob to standard output; returns
/// the status, the decoded blob (nil when none was written) and standard error.
private func edit(_ file: String, input: Data? = nil, _ options: [String]) throws -> (
  ExitCode, ResumeData?, String
) {
  let (status, captured) = try run(
    ["edit", "-", "-o", "-"] + options, input: input ?? resumeFixture(file))
  let blob =
    captured.standardOutput.isEmpty ? nil : try ResumeData(decoding: captured.standardOutput)
  return (status, blob, captured.standardError)
}

@Suite("resumedata edit")
struct EditCommandTests {
  /// The URL `--url` sets.
  static let newURL = "https://mirror.example.net/pub/archive.zip"

  @Test(
    "--url changes the download URL and both requests' URLs, and nothing else",
    arguments: resumeFixtureGenerations.filter {
      $0.generation != .networkFramework && $0.generation != .networkFrameworkWebKit
    }.map(\.file))
  func url(file: String) throws {
    let (status, edited, findings) = try edit(file, ["--url", Self.newURL])
    #expect(status == .success)
    let blob = try #require(edited)
    let original = try ResumeData(decoding: resumeFixture(file))
    #expect(blob.generation == original.generation)
    #expect(blob.container == original.container)
    #expect(blob.downloadURL == Self.newURL)
    #expect(blob.entries[ResumeDataKey.downloadURL] == .string(Self.newURL))
    #expect(blob.currentRequest?.url == Self.newURL)
    #expect(blob.originalRequest?.url == (original.originalRequest == nil ? nil : Self.newURL))
    for key in ResumeData.requestKeysForTests {
      #expect(headers(blob.request(key)) == headers(original.request(key)), "\(key)")
      #expect(blob.request(key)?.httpMethod == original.request(key)?.httpMethod, "\(key)")
    }
    let editedKeys = Set([ResumeDataKey.downloadURL] + ResumeData.requestKeysForTests)
    #expect(blob.entries.keys == original.entries.keys)
    for (key, value) in original.entries where !editedKeys.contains(key) {
      #expect(blob.entries[key] == value, "\(key)")
    }
    #expect(blob.archivedEntries == original.archivedEntries)
    var expected = [
      "info edited: the download URL is now \(Self.newURL) (NSURLSessionDownloadURL)",
      "info edited: URL set to \(Self.newURL) in the request archive (NSURLSessionResumeCurrentRequest)",
    ]
    if original.originalRequest != nil {
      expected.append(
        "info edited: URL set to \(Self.newURL) in the request archive (NSURLSessionResumeOriginalRequest)"
      )
    }
    #expect(findings == expected.map { $0 + "\n" }.joined())
  }

  @Test("--header adds or replaces, --remove-header removes, in both requests")
  func addAndRemove() throws {
    let (_, added, _) = try edit(
      "v2.xml.plist",
      ["--header", "X-Token: abc", "--header", "Accept:text/plain", "--header", "x-token: def"])
    let blob = try #require(added)
    #expect(headers(blob.currentRequest) == ["X-Token: def", "Accept: text/plain"])
    #expect(headers(blob.originalRequest) == ["X-Token: def", "Accept: text/plain"])
    #expect(blob.downloadURL == "https://example.com/files/archive.zip")

    let (status, removed, findings) = try edit(
      "", input: try blob.encoded(), ["--remove-header", "X-TOKEN"])
    #expect(status == .success)
    #expect(headers(removed?.currentRequest) == ["Accept: text/plain"])
    #expect(headers(removed?.originalRequest) == ["Accept: text/plain"])
    #expect(
      findings == """
        info edited: header X-TOKEN removed in the request archive (NSURLSessionResumeCurrentRequest)
        info edited: header X-TOKEN removed in the request archive (NSURLSessionResumeOriginalRequest)

        """)
  }

  @Test(
    "Edits apply in command-line order; one space after the colon is not part of the value",
    arguments: [
      (["--header", "X-A: 1", "--remove-header", "X-A"], [String]()),
      (["--remove-header", "X-A", "--header", "X-A: 1"], ["X-A: 1"]),
      (["--header", "X-A:  two spaces"], ["X-A:  two spaces"]),
      (["--header", "X-A:", "--header=X-B: a:b"], ["X-A: ", "X-B: a:b"]),
    ])
  func order(options: [String], expected: [String]) throws {
    let (status, blob, _) = try edit("keyed-v5-unknown-key.archive", options)
    #expect(status == .success)
    #expect(headers(blob?.currentRequest) == expected)
  }

  @Test(
    "--url takes printable ASCII only, and a port a TCP port can be: a usage error, nothing written",
    arguments: [
      ("https://exa mple.com/a.zip", #""https://exa mple.com/a.zip" holds U+0020"#),
      ("https://example.com/\u{1B}[31m", #""https://example.com/\u{1B}[31m" holds U+001B"#),
      ("https://例え.jp/a.zip", #""https://例え.jp/a.zip" holds U+4F8B"#),
      (
        "https://example.com/\u{202E}piz.exe",
        #""https://example.com/\u{202e}piz.exe" holds U+202E"#
      ),
      ("https://example.com:65536/a.zip", nil),
    ])
  func invalidURL(url: String, holds: String?) throws {
    let (status, blob, error) = try edit("v2.xml.plist", ["--url", url])
    #expect(status == .usage)
    #expect(blob == nil)
    let message =
      holds.map { "\($0), which a URL cannot: percent-encode it (a host in punycode)" }
      ?? "\"\(url)\" is not an absolute http or https URL"
    #expect(error == "Error: \(message)\nRun 'resumedata edit --help' for usage.\n")
  }

  @Test("Removing a header that is not there changes nothing: the same bytes come back")
  func nothingToDo() throws {
    let (status, captured) = run(
      ["edit", "-", "-o", "-", "--remove-header", "X-Absent"],
      input: try resumeFixture("v2.binary.plist"))
    #expect(status == .success)
    #expect(captured.standardOutput == (try resumeFixture("v2.binary.plist")))
    #expect(captured.standardError == "no changes needed\n")
  }

  @Test(
    "Network.framework blobs cannot be edited: exit 1, nothing written",
    arguments: ["network-framework.blob", "network-framework-webkit.archive"])
  func networkFramework(file: String) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = scratch.path("out")
    let input = resumeFixturePath(file)
    let (status, captured) = run(["edit", input, "-o", output, "--url", Self.newURL])
    #expect(status == .failure)
    #expect(captured.standardOutput.isEmpty)
    #expect(
      captured.standardError
        == "Error: \(input): the requests of a Network.framework blob are objects of its archive; editing them is not supported\n"
    )
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("-o writes the file in place of the input, atomically")
  func inPlace() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let path = try scratch.write(try resumeFixture("v2.xml.plist"), to: "blob.plist")
    let (status, captured) = run(["edit", path, "-o", path, "--header", "X-A: 1"])
    #expect(status == .success)
    #expect(
      text(captured.standardOutput) == """
        info edited: header X-A set to "1" in the request archive (NSURLSessionResumeCurrentRequest)
        info edited: header X-A set to "1" in the request archive (NSURLSessionResumeOriginalRequest)

        """)
    #expect(headers(try decodedResume(at: path).currentRequest) == ["X-A: 1"])
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) == ["blob.plist"])
  }
}

extension ResumeData {
  /// The two request keys, current first.
  fileprivate static let requestKeysForTests = [
    ResumeDataKey.currentRequest, ResumeDataKey.originalRequest,
  ]

  /// The request under a key.
  fileprivate func request(_ key: String) -> URLRequestArchive? {
    key == ResumeDataKey.currentRequest ? currentRequest : originalRequest
  }
}
