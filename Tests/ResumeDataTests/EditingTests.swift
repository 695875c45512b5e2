import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import Testing

let editableSources = [
  "v1.xml.plist", "v2.xml.plist", "v2.binary.plist", "v4-byte-range.xml.plist", "keyed-v4.archive",
  "keyed-v5-unknown-key.archive", "keyed-v5-response.archive", "keyed-v5-webkit-xml.archive.plist",
  "safari.archive", "ios10.0-v2.xml.plist",
]

/// The entries of a blob other than the request archives and the URL.
func untouchedEntries(_ blob: ResumeData) -> PropertyListDictionary {
  var entries = blob.entries
  for key in [
    ResumeDataKey.currentRequest, ResumeDataKey.originalRequest, ResumeDataKey.downloadURL,
  ] {
    entries[key] = nil
  }
  return entries
}

@Suite("Resume data editing")
struct EditingTests {
  static let newURL = "https://mirror.example.net/files/archive.zip?token=new"

  @Test(
    "A new URL changes DownloadURL and both requests' URLs, and nothing else",
    arguments: editableSources)
  func url(source: String) throws {
    let original = try ResumeData(decoding: try fixtureData("resume/\(source)"))
    var blob = original
    let changes = try blob.setURL(Self.newURL)
    let requestCount = original.originalRequest == nil ? 1 : 2
    #expect(changes.map(\.path).count == 1 + requestCount)
    let edited = try ResumeData(decoding: try blob.encoded())
    #expect(edited.generation == original.generation)
    #expect(edited.container == original.container)
    #expect(edited.downloadURL == Self.newURL)
    #expect(edited.currentRequest?.url == Self.newURL)
    #expect(edited.originalRequest?.url == (requestCount == 2 ? Self.newURL : nil))
    #expect(edited.currentRequest?.layout == original.currentRequest?.layout)
    #expect(
      edited.currentRequest?.headerFields.map { "\($0.name): \($0.value)" }
        == original.currentRequest?.headerFields.map { "\($0.name): \($0.value)" })
    #expect(untouchedEntries(edited) == untouchedEntries(original))
    #expect(edited.archivedEntries == original.archivedEntries)
    #expect(edited.unknownKeys == original.unknownKeys)
    if let archive = original.archive {
      #expect(edited.archive?.extraTopLevelKeys == archive.extraTopLevelKeys)
    }
  }

  @Test("Headers are added, replaced in place and removed in both requests")
  func headers() throws {
    var blob = try ResumeData(decoding: try fixtureData("resume/keyed-v5-unknown-key.archive"))
    #expect(try #require(blob.currentRequest).headerFields.isEmpty)
    try blob.setHeader("X-First", "1")
    let before = ["X-First"]
    #expect(try blob.setHeader("Authorization", "Bearer new").count == 2)
    var edited = try ResumeData(decoding: try blob.encoded())
    #expect(edited.currentRequest?.headerValue("authorization") == "Bearer new")
    #expect(edited.originalRequest?.headerValue("Authorization") == "Bearer new")
    let existing = "X-First"
    try edited.setHeader(existing.uppercased(), "replaced")
    edited = try ResumeData(decoding: try edited.encoded())
    #expect(edited.currentRequest?.headerFields.map(\.name) == before + ["Authorization"])
    #expect(edited.currentRequest?.headerValue(existing) == "replaced")
    try edited.setHeader("authorization", nil)
    edited = try ResumeData(decoding: try edited.encoded())
    #expect(edited.currentRequest?.headerFields.map(\.name) == before)
    #expect(try edited.setHeader("X-Absent", nil).isEmpty)
  }

  @Test(
    "Invalid edits are refused before anything changes",
    arguments: [
      ("ftp://example.com/a", "", String?.none), ("not a url", "", nil), ("", "Bad Name", "v"),
      ("", "X-Split", "a\r\nInjected: 1"), ("", "", "v"), ("", "Colon:", "v"),
    ])
  func invalid(url: String, header: String, value: String?) throws {
    var blob = try ResumeData(decoding: try fixtureData("resume/v2.xml.plist"))
    let bytes = try blob.encoded()
    #expect {
      if url.isEmpty { try blob.setHeader(header, value) } else { try blob.setURL(url) }
    } throws: { error in
      (error as? ResumeDataError)?.code == .invalidEdit
    }
    #expect(try blob.encoded() == bytes)
  }

  @Test("Network.framework blobs refuse edits with a clear error")
  func networkFramework() throws {
    for source in ["network-framework.blob", "network-framework-webkit.archive"] {
      var blob = try ResumeData(decoding: try fixtureData("resume/\(source)"))
      #expect(throws: ResumeDataError.self, "\(source)") {
        try blob.setURL(Self.newURL)
      }
    }
  }
}
