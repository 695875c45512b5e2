import Downloader
import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import TestHTTPServer
import TestSupport
import Testing

/// The ETag the resume fixtures record.
let fixtureTag = "\"5534b35d-7c7be1\""

/// A blob of `generation` for 10 bytes of `http://127.0.0.1:9/file` (with the tests' ETag), and
/// the entries given.
private func blobOf10Bytes(
  _ entries: KeyValuePairs<String, PropertyListValue>, as generation: ResumeDataGeneration = .v2
) throws -> ResumeData {
  var all: PropertyListDictionary = [
    ResumeDataKey.downloadURL: .string("http://127.0.0.1:9/file"),
    ResumeDataKey.bytesReceived: .integer(PropertyListInteger(10)),
    ResumeDataKey.entityTag: .string(sourceTag),
  ]
  for (key, value) in entries { all[key] = value }
  return try ResumeData(building: all, as: generation)
}

@Suite("Resume data interoperability")
struct InteropTests {
  @Test(
    "Blobs in Apple's layouts resume against the server and finish the file",
    arguments: [
      "v1.xml.plist", "v2.xml.plist", "v2.binary.plist", "v4-byte-range.xml.plist",
      "keyed-v4.archive", "keyed-v5-unknown-key.archive", "keyed-v5-response.archive",
      "keyed-v5-webkit-xml.archive.plist", "safari.archive", "ios10.0-v2.xml.plist",
      "network-framework.blob",
    ])
  func appleLayouts(fixture: String) async throws {
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    server.serve(path: "/file", body: sourceBytes, etag: fixtureTag, lastModified: sourceModified)
    let scratch = try Scratch()
    defer { scratch.remove() }
    let configuration = scratch.configuration()
    let directory = configuration.temporaryDirectory
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = server.baseURL.appendingPathComponent("file").absoluteString

    // The fixture, pointed at the server and at a partial file in the directory.
    var blob = try ResumeData(
      decoding: try Data(
        contentsOf: repositoryRoot.appendingPathComponent("Fixtures/resume/\(fixture)")))
    let isNetworkFramework = blob.generation == .networkFramework
    if isNetworkFramework {
      // Its requests are objects of its own archive: make the same form from an edited keyed blob.
      var keyed = try blob.converted(to: .keyed).blob
      try keyed.setURL(url)
      blob = try keyed.converted(to: .networkFramework, temporaryDirectory: directory).blob
    } else {
      try blob.setURL(url)
      if let path = blob.localPath, blob.tempFileName == nil {
        let moved = directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent)
        try blob.setEntry(ResumeDataKey.localPath, .string(moved.path))
      }
    }
    let name = try #require(
      blob.tempFileName ?? blob.localPath.map { URL(fileURLWithPath: $0).lastPathComponent })
    let prefix = 1_048_576
    try sourceBytes.prefix(prefix).write(to: directory.appendingPathComponent(name))

    let download = try Download(
      resumeData: try blob.encoded(), destination: scratch.file("out"), configuration: configuration
    )
    let (result, events) = await runCollecting(download)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    #expect(milestones(events).first == .resumed(offset: Int64(prefix)))
    let request = server.requests(path: "/file").first
    #expect(request?.header("Range") == "bytes=\(prefix)-")
    #expect(request?.header("If-Range") == fixtureTag)
  }

  @Test(
    "Our blobs decode in every generation we write, and resume",
    arguments: [
      ResumeDataGeneration.keyed, .v1, .v2, .v4, .safari,
    ])
  func ourGenerations(generation: ResumeDataGeneration) async throws {
    let server = try sourceServer(stallingServer)
    defer { server.stop() }
    server.setFaults(path: "/file", [.stall(afterBytes: 200_000)])
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.stallTimeout = patience
    configuration.resumeDataGeneration = generation
    configuration.headers = [("X-Client", "tests")]
    let url = server.baseURL.appendingPathComponent("file")
    let first = try Download(
      url: url, destination: scratch.file("out"), configuration: configuration)
    async let run = runCollecting(first)
    await pause(first, after: 200_000)
    guard case (.paused(let data), _) = await run else {
      Issue.record("expected a pause")
      return
    }
    let blob = try ResumeData(decoding: data)
    let size = try Data(contentsOf: first.partialFile).count
    #expect(blob.generation == generation)
    #expect(blob.bytesReceived == Int64(size))
    #expect(size == 200_000)
    #expect(blob.entityTag == sourceTag)
    #expect(blob.downloadURL == url.absoluteString)
    #expect(blob.currentRequest?.headerValue("X-Client") == "tests")
    switch generation {
    case .v1, .safari: #expect(blob.localPath == first.partialFile.path)
    default: #expect(blob.tempFileName == first.partialFile.lastPathComponent)
    }
    #expect(
      blob.findings(temporaryDirectory: configuration.temporaryDirectory).map(\.code)
        .filter { $0 != "ios10-request-layout" } == [])

    server.setFaults(path: "/file", [])
    let second = try Download(
      resumeData: data, destination: scratch.file("out"), configuration: configuration)
    let (result, _) = await runCollecting(second)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    #expect(server.requests(path: "/file").last?.header("X-Client") == "tests")
  }

  @Test("Unsafe partial-file names in a blob are refused before anything is opened")
  func unsafeNames() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    for (key, value, generation) in [
      (ResumeDataKey.tempFileName, "../../etc/passwd", ResumeDataGeneration.v2),
      (ResumeDataKey.localPath, "/etc/passwd", .v1),
      (ResumeDataKey.localPath, "\(scratch.url.path)/tmp/../../escape", .v1),
    ] {
      let blob = try blobOf10Bytes([key: .string(value)], as: generation)
      #expect {
        _ = try Download(
          resumeData: try blob.encoded(), destination: scratch.file("out"),
          configuration: scratch.configuration())
      } throws: { error in
        (error as? DownloadError)?.code == .unsafePartialFile
      }
    }
  }

  @Test("A partial file that is a link out of the temporary directory is refused, one inside kept")
  func partialFileLink() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let temporary = scratch.file("tmp")
    try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    let outside = scratch.file("outside")
    try Data("not yours".utf8).write(to: outside)
    let inside = temporary.appendingPathComponent("inside.part")
    try Data("0123456789".utf8).write(to: inside)
    let blob = try blobOf10Bytes([
      ResumeDataKey.tempFileName: .string("CFNetworkDownload_link.tmp")
    ])
    // The directory given through a link of its own: with no partial file yet, nothing to refuse.
    let linkedDirectory = scratch.file("linked-tmp")
    try FileManager.default.createSymbolicLink(
      at: linkedDirectory, withDestinationURL: temporary)
    #expect(throws: Never.self) {
      try ResumePlan(resumeData: blob, temporaryDirectory: linkedDirectory)
    }
    let link = temporary.appendingPathComponent("CFNetworkDownload_link.tmp").path
    for (target, refused) in [
      (outside.path, true), ("inside.part", false), ("missing", true),
      ("../tmp/inside.part", false),
    ] {
      try? FileManager.default.removeItem(atPath: link)
      try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
      let made = Result { () throws(DownloadError) in
        try ResumePlan(resumeData: blob, temporaryDirectory: temporary)
      }
      if refused {
        #expect(
          made.map { _ in "planned" }
            == .failure(
              DownloadError(
                .unsafePartialFile,
                "the partial file \(link) is a link out of \(temporary.standardizedFileURL.path)")
            ))
      } else {
        #expect(throws: Never.self) { try made.get() }
      }
      // Through the directory's own link, the same verdict.
      let throughLink = Result { () throws(DownloadError) in
        try ResumePlan(resumeData: blob, temporaryDirectory: linkedDirectory)
      }
      #expect((try? throughLink.get()) == nil ? refused : !refused, "\(target)")
    }
    #expect(try Data(contentsOf: outside) == Data("not yours".utf8))
  }

  @Test("A partial file another download is writing is left alone, and no request is made")
  func partialFileInUse() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let configuration = scratch.configuration()
    let partial = configuration.temporaryDirectory.appendingPathComponent(
      "CFNetworkDownload_held.tmp")
    try FileManager.default.createDirectory(
      at: configuration.temporaryDirectory, withIntermediateDirectories: true)
    try sourceBytes.prefix(10).write(to: partial)
    var blob = try blobOf10Bytes([
      ResumeDataKey.tempFileName: .string("CFNetworkDownload_held.tmp")
    ])
    try blob.setURL(server.baseURL.appendingPathComponent("file").absoluteString)
    let bytes = try blob.encoded()
    // What a second download of the same blob, in this process or another, would hold.
    let holder = open(partial.path, O_RDWR)
    #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
    let destination = scratch.file("out")
    for connections in [1, 3] {
      var configured = configuration
      configured.connections = connections
      let download = try Download(
        resumeData: bytes, destination: destination, configuration: configured)
      let (result, _) = await runCollecting(download)
      #expect(
        result
          == .failed(
            DownloadError(
              .partialFileInUse,
              "the partial file \(partial.path) is being written by another download; "
                + "try again once it has ended"),
            resumeData: nil))
    }
    #expect(server.requests.isEmpty)
    #expect(try Data(contentsOf: partial) == sourceBytes.prefix(10))
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    // Once it is released, the same blob resumes and finishes the file.
    close(holder)
    let download = try Download(
      resumeData: bytes, destination: destination, configuration: configuration)
    let (result, _) = await runCollecting(download)
    #expect(result == .completed(file: destination, digest: sha256(sourceBytes)))
    #expect(try Data(contentsOf: destination) == sourceBytes)
  }

  @Test("A header field that cannot be sent as it is is refused, from a blob or the configuration")
  func invalidHeaders() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let request = try URLRequestArchive(
      URLRequestFields(
        url: "http://127.0.0.1:9/file", headerFields: [.init("X-Inject", "a\r\nEvil: b")])
    ).encoded()
    let blob = try blobOf10Bytes([
      ResumeDataKey.tempFileName: .string("CFNetworkDownload_abc123.tmp"),
      ResumeDataKey.currentRequest: .data(request),
    ])
    let bytes = try blob.encoded()
    #expect(
      Result { () throws(DownloadError) in
        try Download(
          resumeData: bytes, destination: scratch.file("out"),
          configuration: scratch.configuration())
      }.map { _ in "made" }
        == .failure(
          DownloadError(
            .invalidHeader,
            "the blob's current request: the value of X-Inject holds a line break or NUL")))
    for (name, value, problem) in [
      ("X-Test", "a\u{0}b", "the value of X-Test holds a line break or NUL"),
      ("Bad Name", "b", "\"Bad Name\" is not an HTTP header name"),
    ] {
      var configuration = scratch.configuration()
      configuration.headers = [(name, value)]
      #expect(
        Result { () throws(DownloadError) in
          try Download(
            url: URL(string: "http://127.0.0.1:9/file")!, destination: scratch.file("out"),
            configuration: configuration)
        }.map { _ in "made" } == .failure(DownloadError(.invalidHeader, "the request: \(problem)")))
    }
  }
}
