import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import TestSupport
import Testing

// The builders of Fixtures/resume and Fixtures/repair: every blob there is made here, from the
// format reference (docs in Fixtures/README.md); `REGENERATE_FIXTURES=1 swift test --filter
// ResumeDataTests` writes them again.

func requestArchive(_ name: String) throws -> Data {
  try Data(contentsOf: repositoryRoot.appendingPathComponent("Fixtures/archive/request/\(name)"))
}

/// A resume blob built in the test, what decoding must find in it.
struct Blob: Sendable, CustomTestStringConvertible {
  let name: String
  let file: String
  let bytes: Data
  let generation: ResumeDataGeneration
  let container: ResumeDataContainer
  let infoVersion: Int?
  let downloadURL: String?
  let bytesReceived: Int64?
  let tempFileName: String?
  let localPath: String?
  let unknownKeys: [String]
  /// The finding codes of `findings()` without a directory, most severe first (what concerns
  /// only systems older than the blob's writer left out).
  var findings: [String] = ["ios10-request-layout"]
  /// The current request's URL.
  var requestURL: String? = url
  /// Whether there is an original request.
  var hasOriginalRequest = true
  var testDescription: String { name }
}

let url = "https://example.com/files/archive.zip"
/// The URL of the iOS 10 request fixture.
let iOS10URL = "http://downloads.example.org/big.iso"

func plainEntries(version: Int, extra: [(String, PropertyListValue)] = []) throws
  -> PropertyListDictionary
{
  var entries: PropertyListDictionary = [
    ResumeDataKey.downloadURL: .string(url),
    ResumeDataKey.bytesReceived: .integer(PropertyListInteger(1_048_576)),
    ResumeDataKey.currentRequest: .data(try requestArchive("get-22-slots.archive")),
    ResumeDataKey.originalRequest: .data(try requestArchive("get-22-slots.archive")),
    ResumeDataKey.entityTag: .string("\"5534b35d-7c7be1\""),
    ResumeDataKey.infoVersion: .integer(PropertyListInteger(version)),
  ]
  for (key, value) in extra { entries[key] = value }
  return entries
}

func keyedBlob(_ entries: PropertyListDictionary) throws -> Data {
  let pairs = entries.map { ArchivedDictionaryEntry(.string($0.key), archivedValue($0.value)) }
  return try KeyedArchive(root: .dictionary(pairs, mutable: true)).encoded()
}

/// The archive `data` with its root under `key` in `$top` instead, written again (binary): what
/// a writer that picked the other key writes.
func rekeyed(_ data: Data, to key: String) throws -> Data {
  let archive = try KeyedArchive(decoding: data)
  guard case .dictionary(var envelope) = archive.propertyList else { return Data() }
  envelope["$top"] = .dictionary([key: .uid(archive.rootUID)])
  return try KeyedArchive(propertyList: .dictionary(envelope)).encoded(as: .binary)
}

/// `keyed-v5-response.archive` as a third-party writer makes it: the dictionary and both request
/// archives under `root`, the response under the literal `NSKeyedArchiveRootObjectKey`, each the
/// key Apple's decoder for it does not read.
func keyedUnderWrongKeys() throws -> Data {
  var entries = try plainEntries(
    version: 5, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_m4n5o6.tmp"))])
  let request = try rekeyed(try requestArchive("get-22-slots.archive"), to: "root")
  entries[ResumeDataKey.currentRequest] = .data(request)
  entries[ResumeDataKey.originalRequest] = .data(request)
  entries[ResumeDataKey.response] = .data(
    try rekeyed(
      try Data(
        contentsOf: repositoryRoot.appendingPathComponent(
          "Fixtures/archive/response/synthetic-http-response.archive")),
      to: "NSKeyedArchiveRootObjectKey"))
  return try rekeyed(try keyedBlob(entries), to: "root")
}

func archivedValue(_ value: PropertyListValue) -> ArchivedValue {
  switch value {
  case .string(let string): return .string(string)
  case .integer(let integer): return .integer(integer)
  case .data(let data): return .data(data)
  case .boolean(let flag): return .boolean(flag)
  case .real(let real): return .real(real)
  default: return .null
  }
}

/// A Network.framework blob; its original request is `original`'s archive, its current request
/// get-22-slots'; its archive's root under `rootKey` (`root`, which Network.framework reads).
func networkFrameworkBlob(original: String = "get-22-slots.archive", rootKey: String = "root")
  throws -> Data
{
  func object(_ name: String) throws -> ArchivedObject {
    guard
      case .object(let request) = try URLRequestArchive(decoding: try requestArchive(name))
        .archive.decodeRoot()
    else { throw ResumeDataError(.notResumeData, "fixture", at: "") }
    return request
  }
  let request = try object("get-22-slots.archive")
  let originalRequest = try object(original)
  let response = try KeyedArchive(
    decoding: try Data(
      contentsOf: repositoryRoot.appendingPathComponent(
        "Fixtures/archive/response/synthetic-http-response.archive"))
  ).decodeRoot()
  let info = ArchivedObject(
    classChain: ["NWURLSessionDownloadResumeInfo", "NWURLSessionResumeInfo", "NSObject"],
    fields: [
      ArchivedField("originalRequest", .reference(.object(originalRequest))),
      ArchivedField("currentRequest", .reference(.object(request))),
      ArchivedField("response", .reference(response)),
      ArchivedField(
        "fileURL", .reference(.url(ArchivedURL(relative: "file:///tmp/CFNetworkDownload_nw1.tmp")))),
      ArchivedField("tempFileName", .reference(.string("CFNetworkDownload_nw1.tmp"))),
      ArchivedField("_keepDownloadTaskFile", .inline(.boolean(false))),
    ])
  return NetworkFrameworkMask.toggled(
    try KeyedArchive(root: .object(info), rootKey: rootKey).encoded())
}

func blobs() throws -> [Blob] {
  let v1 = try plainEntries(
    version: 1, extra: [(ResumeDataKey.localPath, .string("/var/mobile/tmp/download.tmp"))])
  let v2 = try plainEntries(
    version: 2, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_a1b2c3.tmp"))])
  let v4 = try plainEntries(
    version: 4,
    extra: [
      (ResumeDataKey.tempFileName, .string("CFNetworkDownload_d4e5f6.tmp")),
      (ResumeDataKey.byteRange, .string("1048576-")),
    ])
  let v5 = try plainEntries(
    version: 5,
    extra: [
      (ResumeDataKey.tempFileName, .string("CFNetworkDownload_g7h8i9.tmp")),
      ("WebKitExtra", .string("x")),
    ])
  var safari = try plainEntries(
    version: 4,
    extra: [(ResumeDataKey.localPath, .string("/Users/me/Downloads/a.zip.download/a.zip"))])
  safari[ResumeDataKey.originalRequest] = nil
  let nw = try networkFrameworkBlob()
  let webKit: PropertyListDictionary = [
    "data": .data(nw), ResumeDataKey.localPath: .string("/tmp/CFNetworkDownload_nw1.tmp"),
  ]
  var keyedV4 = try plainEntries(
    version: 4, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_j1k2l3.tmp"))])
  keyedV4[ResumeDataKey.serverDownloadDate] = .string("Mon, 20 Apr 2015 08:05:49 GMT")
  var withResponse = try plainEntries(
    version: 5, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_m4n5o6.tmp"))])
  withResponse[ResumeDataKey.response] = .data(
    try Data(
      contentsOf: repositoryRoot.appendingPathComponent(
        "Fixtures/archive/response/synthetic-http-response.archive")))
  let segmented = try plainEntries(
    version: 5,
    extra: [
      (ResumeDataKey.tempFileName, .string("CFNetworkDownload_v4w5x6.tmp")),
      (ResumeDataKey.segments, .string("bytes=0-1048575,2097152-3145727/4194304")),
    ])
  var iOS10 = try plainEntries(
    version: 2, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_p7q8r9.tmp"))])
  iOS10[ResumeDataKey.currentRequest] = .data(try requestArchive("ios10-standard-layout.archive"))
  iOS10[ResumeDataKey.originalRequest] = .data(try requestArchive("ios10-standard-layout.archive"))
  iOS10[ResumeDataKey.downloadURL] = .string(iOS10URL)
  var unsafe = try plainEntries(
    version: 2, extra: [(ResumeDataKey.tempFileName, .string("../../../etc/passwd"))])
  unsafe[ResumeDataKey.originalRequest] = nil
  let empty: PropertyListDictionary = [
    ResumeDataKey.infoVersion: .integer(PropertyListInteger(4)),
    ResumeDataKey.bytesReceived: .integer(PropertyListInteger(0)),
  ]
  return [
    Blob(
      name: "keyed v4 (iOS 12)", file: "keyed-v4.archive", bytes: try keyedBlob(keyedV4),
      generation: .keyed, container: .keyedArchive, infoVersion: 4, downloadURL: url,
      bytesReceived: 1_048_576, tempFileName: "CFNetworkDownload_j1k2l3.tmp", localPath: nil,
      unknownKeys: [], findings: []),
    Blob(
      name: "keyed v5 with a response", file: "keyed-v5-response.archive",
      bytes: try keyedBlob(withResponse), generation: .keyed, container: .keyedArchive,
      infoVersion: 5, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "CFNetworkDownload_m4n5o6.tmp", localPath: nil, unknownKeys: [],
      findings: []),
    Blob(
      name: "keyed v5 as WebKit's XML, with a key beside $objects",
      file: "keyed-v5-webkit-xml.archive.plist", bytes: try webKitXMLBlob(),
      generation: .keyed, container: .keyedArchiveXML, infoVersion: 5, downloadURL: url,
      bytesReceived: 1_048_576, tempFileName: "CFNetworkDownload_s1t2u3.tmp", localPath: nil,
      unknownKeys: [], findings: []),
    Blob(
      name: "iOS 10.0–10.1 (v2, request archives it cannot read back)",
      file: "ios10.0-v2.xml.plist",
      bytes: try PropertyListValue.dictionary(iOS10).encoded(as: .xml),
      generation: .v2, container: .xmlPlist, infoVersion: 2, downloadURL: iOS10URL,
      bytesReceived: 1_048_576, tempFileName: "CFNetworkDownload_p7q8r9.tmp", localPath: nil,
      unknownKeys: [], requestURL: iOS10URL),
    Blob(
      name: "iOS 12.0–12.2 empty blob", file: "ios12-empty.archive", bytes: try keyedBlob(empty),
      generation: .keyed, container: .keyedArchive, infoVersion: 4, downloadURL: nil,
      bytesReceived: 0, tempFileName: nil, localPath: nil, unknownKeys: [],
      findings: ["empty-blob", "no-validator", "original-request-missing"], requestURL: nil,
      hasOriginalRequest: false),
    Blob(
      name: "a TempFileName that escapes its directory", file: "unsafe-temp-file-name.xml.plist",
      bytes: try PropertyListValue.dictionary(unsafe).encoded(as: .xml), generation: .v2,
      container: .xmlPlist, infoVersion: 2, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "../../../etc/passwd", localPath: nil, unknownKeys: [],
      findings: ["unsafe-file-name", "original-request-missing", "ios10-request-layout"],
      hasOriginalRequest: false),
    Blob(
      name: "v1 XML", file: "v1.xml.plist",
      bytes: try PropertyListValue.dictionary(v1).encoded(as: .xml),
      generation: .v1,
      container: .xmlPlist, infoVersion: 1, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: nil,
      localPath: "/var/mobile/tmp/download.tmp", unknownKeys: []),
    Blob(
      name: "v2 XML", file: "v2.xml.plist",
      bytes: try PropertyListValue.dictionary(v2).encoded(as: .xml),
      generation: .v2,
      container: .xmlPlist, infoVersion: 2, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "CFNetworkDownload_a1b2c3.tmp", localPath: nil, unknownKeys: []),
    Blob(
      name: "v2 binary", file: "v2.binary.plist",
      bytes: try PropertyListValue.dictionary(v2).encoded(as: .binary),
      generation: .v2,
      container: .binaryPlist, infoVersion: 2, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "CFNetworkDownload_a1b2c3.tmp", localPath: nil, unknownKeys: []),
    Blob(
      name: "v4 with ByteRange", file: "v4-byte-range.xml.plist",
      bytes: try PropertyListValue.dictionary(v4).encoded(as: .xml),
      generation: .v4,
      container: .xmlPlist, infoVersion: 4, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "CFNetworkDownload_d4e5f6.tmp", localPath: nil, unknownKeys: [],
      findings: ["byte-range-present"]),
    Blob(
      name: "keyed v5 with an unknown key", file: "keyed-v5-unknown-key.archive",
      bytes: try keyedBlob(v5), generation: .keyed,
      container: .keyedArchive,
      infoVersion: 5, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "CFNetworkDownload_g7h8i9.tmp",
      localPath: nil, unknownKeys: ["WebKitExtra"],
      findings: ["unknown-keys"]),
    Blob(
      name: "keyed v5 of a download over several connections", file: "segmented.archive",
      bytes: try keyedBlob(segmented), generation: .keyed, container: .keyedArchive,
      infoVersion: 5, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "CFNetworkDownload_v4w5x6.tmp", localPath: nil, unknownKeys: [],
      findings: ["segmented-partial-file"]),
    Blob(
      name: "Safari-made", file: "safari.archive", bytes: try keyedBlob(safari),
      generation: .safari,
      container: .keyedArchive,
      infoVersion: 4, downloadURL: url, bytesReceived: 1_048_576, tempFileName: nil,
      localPath: "/Users/me/Downloads/a.zip.download/a.zip", unknownKeys: [], findings: [],
      hasOriginalRequest: false),
    Blob(
      name: "Network.framework", file: "network-framework.blob", bytes: nw,
      generation: .networkFramework, container: .nwArchive,
      infoVersion: nil,
      downloadURL: url, bytesReceived: nil, tempFileName: "CFNetworkDownload_nw1.tmp",
      localPath: "file:///tmp/CFNetworkDownload_nw1.tmp", unknownKeys: [], findings: []),
    Blob(
      name: "keyed v5 with every archive under the key Apple does not read",
      file: "keyed-wrong-root-keys.archive", bytes: try keyedUnderWrongKeys(),
      generation: .keyed, container: .keyedArchive, infoVersion: 5, downloadURL: url,
      bytesReceived: 1_048_576, tempFileName: "CFNetworkDownload_m4n5o6.tmp", localPath: nil,
      unknownKeys: [], findings: ["archive-root-key", "request-root-key", "response-root-key"]),
    Blob(
      name: "Network.framework under NSKeyedArchiveRootObjectKey",
      file: "network-framework-literal-key.blob",
      bytes: try networkFrameworkBlob(rootKey: "NSKeyedArchiveRootObjectKey"),
      generation: .networkFramework, container: .nwArchive, infoVersion: nil, downloadURL: url,
      bytesReceived: nil, tempFileName: "CFNetworkDownload_nw1.tmp",
      localPath: "file:///tmp/CFNetworkDownload_nw1.tmp", unknownKeys: [],
      findings: ["archive-root-key"]),
    Blob(
      name: "Network.framework in WebKit's wrapper", file: "network-framework-webkit.archive",
      bytes: try keyedBlob(webKit),
      generation: .networkFrameworkWebKit,
      container: .keyedArchive, infoVersion: nil, downloadURL: url, bytesReceived: nil,
      tempFileName: "CFNetworkDownload_nw1.tmp",
      localPath: "/tmp/CFNetworkDownload_nw1.tmp", unknownKeys: [], findings: []),
  ]
}

/// A keyed v5 blob as modern WebKit re-serialises it: the archive as XML, with
/// `ResumePlaceholderURLBookmarkData` beside `$objects`.
func webKitXMLBlob() throws -> Data {
  let entries = try plainEntries(
    version: 5, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_s1t2u3.tmp"))])
  let archive = try KeyedArchive(decoding: try keyedBlob(entries))
  guard case .dictionary(var envelope) = archive.propertyList else { return Data() }
  envelope["ResumePlaceholderURLBookmarkData"] = .data(Data("book".utf8))
  return try PropertyListValue.dictionary(envelope).encoded(as: .xml)
}

/// One truncated blob per container: the file, and where decoding must say it broke.
struct TruncatedBlob: Sendable, CustomTestStringConvertible {
  let file: String
  let bytes: Data
  let code: ResumeDataError.Code
  let location: PropertyListLocation?
  var testDescription: String { file }
}

/// The first half of a fixture of each container.
func truncatedBlobs() throws -> [TruncatedBlob] {
  func half(_ file: String) throws -> Data {
    let bytes = try Data(
      contentsOf: repositoryRoot.appendingPathComponent("Fixtures/resume/\(file)"))
    return bytes.prefix(bytes.count / 2)
  }
  return [
    TruncatedBlob(
      file: "truncated/xml-plist.plist", bytes: try half("v2.xml.plist"), code: .propertyList,
      location: .line(41)),
    TruncatedBlob(
      file: "truncated/binary-plist.plist", bytes: try half("v2.binary.plist"),
      code: .propertyList, location: .offset(969)),
    TruncatedBlob(
      file: "truncated/keyed-archive.archive", bytes: try half("keyed-v5-unknown-key.archive"),
      code: .propertyList, location: .offset(1946)),
    TruncatedBlob(
      file: "truncated/nw-archive.blob", bytes: try half("network-framework.blob"),
      code: .propertyList, location: .offset(1204)),
    TruncatedBlob(
      file: "truncated/keyed-archive-xml.archive.plist",
      bytes: try half("keyed-v5-webkit-xml.archive.plist"), code: .propertyList,
      location: .line(113)),
  ]
}

/// Changes to a healthy blob that the full path reports on, keyed or plain: each one's name for
/// `applyVariant`, and the finding the full path reports for iOS 13 or the rule a repair for it
/// applies.
let reportedVariants: [(String, String)] = [
  ("weak ETag", "weak-etag"),
  ("no validator", "no-validator"),
  ("nothing received", "empty-blob"),
  ("unknown key", "unknown-keys"),
  ("segment map", "segmented-partial-file"),
  ("temp file name with a separator", "unsafe-file-name"),
  ("ftp URL", "not-http"),
  ("POST request", "not-get"),
  ("$N layout", "ios10-only-request-layout"),
  ("original in the $N layout", "ios10-only-request-layout"),
  ("header value with a line break", "unsendable-header"),
  ("original header value with a NUL", "unsendable-header"),
  ("current request that is no archive", "request-undecodable"),
]

/// `entries` of a healthy blob changed in the way `name` says, each one change that the full path
/// reports on (the healthy-blob tests' table of variants).
func applyVariant(_ name: String, to entries: inout PropertyListDictionary) throws {
  switch name {
  case "weak ETag": entries[ResumeDataKey.entityTag] = .string("W/\"5534b35d\"")
  case "no validator":
    entries[ResumeDataKey.entityTag] = nil
    entries[ResumeDataKey.serverDownloadDate] = nil
  case "nothing received":
    entries[ResumeDataKey.bytesReceived] = .integer(PropertyListInteger(0))
  case "unknown key": entries["SomethingNew"] = .string("kept")
  case "segment map": entries[ResumeDataKey.segments] = .string("bytes=0-99/1000")
  case "temp file name with a separator":
    entries[ResumeDataKey.tempFileName] = .string("../CFNetworkDownload_g7h8i9.tmp")
  case "ftp URL": entries[ResumeDataKey.downloadURL] = .string("ftp://example.com/a.zip")
  case "POST request":
    entries[ResumeDataKey.currentRequest] = .data(try requestArchive("post-body-headers.archive"))
  case "$N layout":
    entries[ResumeDataKey.currentRequest] = .data(
      try requestArchive("ios10-repaired-layout.archive"))
  case "original in the $N layout":
    entries[ResumeDataKey.originalRequest] = .data(
      try requestArchive("ios10-repaired-layout.archive"))
  case "header value with a line break":
    var fields = URLRequestFields(url: url)
    fields.headerFields = [URLRequestFields.Header("X-Note", "a\r\nb")]
    entries[ResumeDataKey.currentRequest] = .data(try URLRequestArchive(fields).encoded())
  case "original header value with a NUL":
    var fields = URLRequestFields(url: url)
    fields.headerFields = [URLRequestFields.Header("X-Note", "a\u{0}b")]
    entries[ResumeDataKey.originalRequest] = .data(try URLRequestArchive(fields).encoded())
  case "current request that is no archive":
    entries[ResumeDataKey.currentRequest] = .data(Data(repeating: 0x41, count: 600))
  case "no original request": entries[ResumeDataKey.originalRequest] = nil
  default: Issue.record("no variant \(name)")
  }
}
