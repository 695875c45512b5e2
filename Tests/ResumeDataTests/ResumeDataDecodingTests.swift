import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import TestSupport
import Testing

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
  var testDescription: String { name }
}

let url = "https://example.com/files/archive.zip"

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

func networkFrameworkBlob() throws -> Data {
  guard
    case .object(let request) = try URLRequestArchive(
      decoding: try requestArchive("get-22-slots.archive")
    ).archive.decodeRoot()
  else { throw ResumeDataError(.notResumeData, "fixture", at: "") }
  let info = ArchivedObject(
    classChain: ["NWURLSessionDownloadResumeInfo", "NWURLSessionResumeInfo", "NSObject"],
    fields: [
      ArchivedField("originalRequest", .reference(.object(request))),
      ArchivedField("currentRequest", .reference(.object(request))),
      ArchivedField(
        "fileURL", .reference(.url(ArchivedURL(relative: "file:///tmp/CFNetworkDownload_nw1.tmp")))),
      ArchivedField("tempFileName", .reference(.string("CFNetworkDownload_nw1.tmp"))),
      ArchivedField("_keepDownloadTaskFile", .inline(.boolean(false))),
    ])
  return NetworkFrameworkMask.toggled(
    try KeyedArchive(root: .object(info), rootKey: "root").encoded())
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
  return [
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
      tempFileName: "CFNetworkDownload_d4e5f6.tmp", localPath: nil, unknownKeys: []),
    Blob(
      name: "keyed v5 with an unknown key", file: "keyed-v5-unknown-key.archive",
      bytes: try keyedBlob(v5), generation: .keyed,
      container: .keyedArchive,
      infoVersion: 5, downloadURL: url, bytesReceived: 1_048_576,
      tempFileName: "CFNetworkDownload_g7h8i9.tmp",
      localPath: nil, unknownKeys: ["WebKitExtra"]),
    Blob(
      name: "Safari-made", file: "safari.archive", bytes: try keyedBlob(safari),
      generation: .safari,
      container: .keyedArchive,
      infoVersion: 4, downloadURL: url, bytesReceived: 1_048_576, tempFileName: nil,
      localPath: "/Users/me/Downloads/a.zip.download/a.zip", unknownKeys: []),
    Blob(
      name: "Network.framework", file: "network-framework.blob", bytes: nw,
      generation: .networkFramework, container: .nwArchive,
      infoVersion: nil,
      downloadURL: url, bytesReceived: nil, tempFileName: "CFNetworkDownload_nw1.tmp",
      localPath: "file:///tmp/CFNetworkDownload_nw1.tmp", unknownKeys: []),
    Blob(
      name: "Network.framework in WebKit's wrapper", file: "network-framework-webkit.archive",
      bytes: try keyedBlob(webKit),
      generation: .networkFrameworkWebKit,
      container: .keyedArchive, infoVersion: nil, downloadURL: url, bytesReceived: nil,
      tempFileName: "CFNetworkDownload_nw1.tmp",
      localPath: "/tmp/CFNetworkDownload_nw1.tmp", unknownKeys: []),
  ]
}

@Suite("Resume data decoding")
struct ResumeDataDecodingTests {
  /// The blobs in Fixtures/resume are these builders' output; `REGENERATE_FIXTURES=1 swift test
  /// --filter ResumeDataDecodingTests` writes them again.
  @Test("Each resume fixture is exactly what its builder makes")
  func fixtures() throws {
    let folder = repositoryRoot.appendingPathComponent("Fixtures/resume")
    for blob in try blobs() {
      let file = folder.appendingPathComponent(blob.file)
      if ProcessInfo.processInfo.environment["REGENERATE_FIXTURES"] == "1" {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try blob.bytes.write(to: file)
      }
      #expect(try Data(contentsOf: file) == blob.bytes, "\(blob.file)")
    }
  }

  @Test("Every generation decodes to its exact fields and re-encodes to identical bytes")
  func generations() throws {
    for blob in try blobs() {
      let resume = try ResumeData(decoding: blob.bytes)
      #expect(resume.generation == blob.generation, "\(blob.name)")
      #expect(resume.container == blob.container, "\(blob.name)")
      #expect(resume.infoVersion == blob.infoVersion, "\(blob.name)")
      #expect(resume.downloadURL == blob.downloadURL, "\(blob.name)")
      #expect(resume.bytesReceived == blob.bytesReceived, "\(blob.name)")
      #expect(resume.tempFileName == blob.tempFileName, "\(blob.name)")
      #expect(resume.localPath == blob.localPath, "\(blob.name)")
      #expect(resume.unknownKeys == blob.unknownKeys, "\(blob.name)")
      #expect(try resume.encoded() == blob.bytes, "\(blob.name)")
    }
  }

  @Test("Requests decode to typed fields in every generation that carries them")
  func requests() throws {
    for blob in try blobs() {
      let resume = try ResumeData(decoding: blob.bytes)
      #expect(resume.currentRequest?.url == url, "\(blob.name)")
      #expect(resume.currentRequest?.httpMethod == "GET", "\(blob.name)")
      #expect((resume.originalRequest == nil) == (blob.generation == .safari), "\(blob.name)")
    }
  }

  @Test("The WebKit wrapper's inner Network.framework blob is decoded too")
  func webKitNested() throws {
    let blob = try blobs().first { $0.generation == .networkFrameworkWebKit }!
    let resume = try ResumeData(decoding: blob.bytes)
    #expect(resume.nested?.generation == .networkFramework)
    #expect(resume.nested?.downloadURL == url)
  }

  @Test("A masked blob starts with bplist00 XOR TedLasso")
  func mask() throws {
    #expect(NetworkFrameworkMask.maskedMagic == [0x36, 0x15, 0x08, 0x25, 0x12, 0x07, 0x43, 0x5F])
    #expect(try networkFrameworkBlob().prefix(8) == Data(NetworkFrameworkMask.maskedMagic))
  }

  @Test(
    "Inputs that are not resume data fail with a typed error saying where",
    arguments: [
      ("empty", Data(), ResumeDataError.Code.propertyList),
      ("JSON", Data("{}".utf8), .propertyList),
      ("an array", try! PropertyListValue.array([]).encoded(as: .binary), .notResumeData),
      (
        "a dictionary of other keys",
        try! PropertyListValue.dictionary(["a": .boolean(true)]).encoded(as: .xml), .notResumeData
      ),
      (
        "a masked blob that is not an archive", Data(NetworkFrameworkMask.maskedMagic + [0, 0, 0]),
        .propertyList
      ),
    ] as [(String, Data, ResumeDataError.Code)])
  func notResumeData(name: String, bytes: Data, code: ResumeDataError.Code) {
    #expect {
      _ = try ResumeData(decoding: bytes)
    } throws: { error in
      (error as? ResumeDataError)?.code == code
    }
  }

  @Test("Every truncation of a keyed blob fails with a typed error")
  func truncations() throws {
    let bytes = try keyedBlob(try plainEntries(version: 5))
    for length in 0..<bytes.count {
      #expect(throws: ResumeDataError.self, "length \(length)") {
        _ = try ResumeData(decoding: bytes.prefix(length))
      }
    }
  }
}

@Suite("Resume data decoding limits")
struct ResumeDataDecodingLimitTests {
  @Test("A keyed dictionary without resume keys is not resume data")
  func keyedWithoutResumeKeys() throws {
    let bytes = try KeyedArchive(
      root: .dictionary([ArchivedDictionaryEntry(.string("a"), .string("b"))], mutable: true)
    ).encoded()
    #expect {
      _ = try ResumeData(decoding: bytes)
    } throws: { error in
      (error as? ResumeDataError)?.code == .notResumeData
        && (error as? ResumeDataError)?.keyPath == "$top.NSKeyedArchiveRootObjectKey"
    }
  }

  @Test("A wrapper around anything but a Network.framework blob does not nest")
  func wrapperNesting() throws {
    // A wrapper whose data is itself a wrapper: read as a keyed dictionary, never recursed into.
    let inner = try keyedBlob([
      "data": .data(Data("not a blob".utf8)), ResumeDataKey.localPath: .string("/tmp/a"),
    ])
    let outer = try keyedBlob(["data": .data(inner), ResumeDataKey.localPath: .string("/tmp/b")])
    let resume = try ResumeData(decoding: outer)
    #expect(resume.generation == .safari)
    #expect(resume.nested == nil)
  }
}
