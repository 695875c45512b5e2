import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import TestSupport
import Testing

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
      #expect(resume.currentRequest?.url == blob.requestURL, "\(blob.name)")
      #expect(
        resume.currentRequest?.httpMethod == (blob.requestURL == nil ? nil : "GET"), "\(blob.name)")
      #expect((resume.originalRequest != nil) == blob.hasOriginalRequest, "\(blob.name)")
    }
  }

  @Test(
    "Each request is its own archive's, whether the two archives differ or are the same bytes",
    arguments: [
      "get-22-slots.archive", "post-body-headers.archive", "no-http-message-16-slots.archive",
    ], [false, true])
  func distinctRequests(original: String, keyed: Bool) throws {
    let originalBytes = try requestArchive(original)
    var entries = try plainEntries(version: 4)
    entries[ResumeDataKey.originalRequest] = .data(originalBytes)
    let bytes =
      keyed ? try keyedBlob(entries) : try PropertyListValue.dictionary(entries).encoded(as: .xml)
    let resume = try ResumeData(decoding: bytes)
    func summary(_ request: URLRequestArchive?) -> [String] {
      guard let request else { return ["none"] }
      return [request.url ?? "-", request.httpMethod ?? "-", "\(request.body?.count ?? -1)"]
        + request.headerFields.map { "\($0.name): \($0.value)" }
    }
    let current = try URLRequestArchive(decoding: requestArchive("get-22-slots.archive"))
    let expected = try URLRequestArchive(decoding: originalBytes)
    #expect(summary(resume.currentRequest) == summary(current))
    #expect(summary(resume.originalRequest) == summary(expected))
    #expect((summary(current) == summary(expected)) == (original == "get-22-slots.archive"))
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

  @Test(
    "A truncated blob of each container fails with its code and location",
    arguments: try truncatedBlobs())
  func truncatedFixtures(blob: TruncatedBlob) throws {
    let file = repositoryRoot.appendingPathComponent("Fixtures/resume/\(blob.file)")
    if ProcessInfo.processInfo.environment["REGENERATE_FIXTURES"] == "1" {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
      try blob.bytes.write(to: file)
    }
    #expect(try Data(contentsOf: file) == blob.bytes)
    #expect {
      _ = try ResumeData(decoding: blob.bytes)
    } throws: { error in
      let error = error as? ResumeDataError
      return error?.code == blob.code && error?.propertyListError?.location == blob.location
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

  @Test("Root keys that differ only in Unicode normalization are two keys, and stay two")
  func normalizationVariantKeys() throws {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    let blob = try keyedBlob(
      plainEntries(version: 5, extra: [(composed, .string("a")), (decomposed, .string("b"))]))
    for bytes in [blob, try ResumeData(decoding: blob).encoded()] {
      let resume = try ResumeData(decoding: bytes)
      #expect(resume.entries[composed] == .string("a"))
      #expect(resume.entries[decomposed] == .string("b"))
      #expect(
        resume.unknownKeys.map { Array($0.utf8) } == [Array(composed.utf8), Array(decomposed.utf8)])
    }
    // Objects under both: `archivedEntries` cannot hold the two, and says so rather than drop one.
    var pairs = try plainEntries(version: 5).map {
      ArchivedDictionaryEntry(.string($0.key), archivedValue($0.value))
    }
    pairs.append(ArchivedDictionaryEntry(.string(composed), .array([.string("x")])))
    pairs.append(ArchivedDictionaryEntry(.string(decomposed), .array([.string("y")])))
    let objects = try KeyedArchive(root: .dictionary(pairs, mutable: true)).encoded()
    let error = try #require(throws: ResumeDataError.self) { try ResumeData(decoding: objects) }
    #expect(error.code == .keyedArchive)
    #expect(error.message.contains("differ only in Unicode normalization"))
    #expect(error.keyPath.hasSuffix(".NS.keys[\(pairs.count - 1)]"))
    // An object under one and a plain value under the other, in either order, likewise.
    for (first, second) in [
      (ArchivedValue.string("x"), ArchivedValue.array([.string("y")])),
      (.array([.string("x")]), .string("y")),
    ] {
      var mixed = Array(pairs.dropLast(2))
      mixed.append(ArchivedDictionaryEntry(.string(composed), first))
      mixed.append(ArchivedDictionaryEntry(.string(decomposed), second))
      let bytes = try KeyedArchive(root: .dictionary(mixed, mutable: true)).encoded()
      let thrown = try #require(throws: ResumeDataError.self) { try ResumeData(decoding: bytes) }
      #expect(thrown.message.contains("differ only in Unicode normalization"))
    }
  }
}
