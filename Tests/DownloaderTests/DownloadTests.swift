@_spi(Testing) import Downloader
import Foundation
import KeyedArchive
import ResumeData
import TestHTTPServer
import TestSupport
import Testing

/// A server fault schedule, and what the download must do with it.
struct FaultCase: Sendable, CustomTestStringConvertible {
  let name: String
  let steps: [FaultStep]
  /// The Range header of each request, in order.
  let ranges: [String?]
  /// The events other than progress, `completed` excluded (checked on its own).
  let events: [DownloadEvent]
  var testDescription: String { name }
}

let faultCases = [
  FaultCase(name: "no fault", steps: [], ranges: [nil], events: [.started]),
  FaultCase(
    name: "connection closed after 1 MB: resumed from there",
    steps: [.once(.closeAfter(bytes: 1_000_000))], ranges: [nil, "bytes=1000000-"],
    events: [.started, .resumed(offset: 1_000_000)]),
  FaultCase(
    name: "a stall: detected, then resumed",
    steps: [.once(.stall(afterBytes: 1_000_000))], ranges: [nil, "bytes=1000000-"],
    events: [.started, .resumed(offset: 1_000_000)]),
  FaultCase(
    name: "the server ignores the range (200): started over",
    steps: [.once(.closeAfter(bytes: 1_000_000)), .once(.ignoreRange)],
    ranges: [nil, "bytes=1000000-"],
    events: [
      .started, .resumed(offset: 1_000_000),
      .restarted(
        reason:
          "the server sent the whole file (200) instead of the rest: it changed, or ignores ranges"
      ),
    ]),
  FaultCase(
    name: "a 206 from the wrong offset: never appended, started over",
    steps: [.once(.closeAfter(bytes: 1_000_000)), .once(.wrongContentRangeStart(delta: -7))],
    ranges: [nil, "bytes=1000000-", nil],
    events: [
      .started, .resumed(offset: 1_000_000),
      .restarted(reason: "the server sent bytes from 999993, not from 1000000"), .started,
    ]),
  FaultCase(
    name: "a 206 with another total: never appended, started over",
    steps: [.once(.closeAfter(bytes: 1_000_000)), .once(.wrongContentRangeTotal(delta: 5))],
    ranges: [nil, "bytes=1000000-", nil],
    events: [
      .started, .resumed(offset: 1_000_000),
      .restarted(reason: "the file is now 3000005 bytes long, not 3000000"), .started,
    ]),
  FaultCase(
    name: "a 503, then the file",
    steps: [.once(.status(503, body: Data("busy".utf8)))], ranges: [nil, nil],
    events: [.started, .started]),
  FaultCase(
    name: "a 500 after 1 MB was kept: resumed",
    steps: [.once(.closeAfter(bytes: 1_000_000)), .once(.status(500, body: Data("<h1>".utf8)))],
    ranges: [nil, "bytes=1000000-", "bytes=1000000-"],
    events: [.started, .resumed(offset: 1_000_000), .resumed(offset: 1_000_000)]),
  FaultCase(
    name: "a compressed answer despite identity: decoded, whole",
    steps: [.once(.gzip)], ranges: [nil], events: [.started]),
  FaultCase(
    name: "a compressed answer to a resume (weak ETag): started over, decoded",
    steps: [.once(.closeAfter(bytes: 1_000_000)), .once(.gzip)],
    ranges: [nil, "bytes=1000000-"],
    events: [
      .started, .resumed(offset: 1_000_000),
      .restarted(
        reason:
          "the server sent the whole file (200) instead of the rest: it changed, or ignores ranges"
      ),
    ]),
  FaultCase(
    name: "a trickle arrives whole",
    steps: [.once(.trickle(bytesPerChunk: 300_000, interval: .milliseconds(5)))],
    ranges: [nil], events: [.started]),
]

@Suite("Downloads against a loopback server")
struct DownloadTests {
  @Test("Every fault ends in the source's exact bytes", arguments: faultCases)
  func faults(_ fault: FaultCase) async throws {
    let server = try sourceServer()
    defer { server.stop() }
    server.scheduleFaults(path: "/file", fault.steps)
    let scratch = try Scratch()
    defer { scratch.remove() }
    let destination = scratch.file("out.bin")
    let download = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: destination,
      configuration: scratch.configuration())
    let (result, events) = await runCollecting(download)
    #expect(result == .completed(file: destination, digest: sha256(sourceBytes)))
    #expect(firstDifference(try Data(contentsOf: destination), sourceBytes) == nil)
    #expect(
      milestones(events)
        == fault.events + [.completed(file: destination, digest: sha256(sourceBytes))])
    let requests = server.requests(path: "/file")
    #expect(requests.map { $0.header("Range") } == fault.ranges)
    #expect(requests.allSatisfy { $0.header("Accept-Encoding") == "identity" })
    // libcurl sends no User-Agent of its own; the curl engine names itself (URLSession on Linux
    // sends the process's name).
    if testEngine == .curl {
      #expect(
        requests.allSatisfy { $0.header("User-Agent")?.hasPrefix("resumedata libcurl/") == true })
    }
    // Every continuation is conditional on the file being the one already on disk.
    #expect(requests.allSatisfy { ($0.header("Range") == nil) == ($0.header("If-Range") == nil) })
    #expect(requests.compactMap { $0.header("If-Range") }.allSatisfy { $0 == sourceTag })
    #expect(!FileManager.default.fileExists(atPath: download.partialFile.path))
  }

  @Test(
    "A 404 fails without retrying, the error page is not written, and nothing is left behind",
    arguments: [1, 4])
  func notFound(connections: Int) async throws {
    let server = try sourceServer()
    defer { server.stop() }
    server.setFaults(path: "/file", [.status(404, body: Data("<h1>gone</h1>".utf8))])
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.connections = connections
    configuration.stateFile = scratch.file("out.resumedata")
    let download = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: scratch.file("out"),
      configuration: configuration)
    let (result, _) = await runCollecting(download)
    guard case .failed(let error, let resumeData) = result else {
      Issue.record("expected a failure, got \(result)")
      return
    }
    #expect(error.code == .httpStatus)
    #expect(error.status == 404)
    #expect(server.requests(path: "/file").count == 1)
    // Not a byte to continue from: no resume data, no partial file, no state file.
    #expect(resumeData == nil)
    #expect(!FileManager.default.fileExists(atPath: download.partialFile.path))
    #expect(!FileManager.default.fileExists(atPath: scratch.file("out.resumedata").path))
    #expect(!FileManager.default.fileExists(atPath: scratch.file("out").path))
  }

  @Test("A 200 page without a validator in reply to a resume keeps the partial file")
  func errorPage() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    server.scheduleFaults(
      path: "/file",
      [
        .once(.closeAfter(bytes: 1_000_000)),
        .always(.status(200, body: Data("<p>portal</p>".utf8))),
      ])
    let scratch = try Scratch()
    defer { scratch.remove() }
    let download = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: scratch.file("out"),
      configuration: scratch.configuration())
    let (result, _) = await runCollecting(download)
    guard case .failed(let error, let resumeData?) = result else {
      Issue.record("expected a failure with resume data, got \(result)")
      return
    }
    #expect(error.code == .badPartialResponse)
    #expect(
      firstDifference(try Data(contentsOf: download.partialFile), sourceBytes.prefix(1_000_000))
        == nil)
    let blob = try ResumeData(decoding: resumeData)
    #expect(blob.bytesReceived == 1_000_000)
    #expect(blob.entityTag == sourceTag)
  }

  @Test("Pause writes resume data in Apple's layout, and resuming from it finishes the file")
  func pauseAndResume() async throws {
    let server = try sourceServer(stallingServer)
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.stateFile = scratch.file("state.resumedata")
    let url = server.baseURL.appendingPathComponent("file")
    let (first, resumeData) = try await pausedAtStall(
      server, configuration: configuration, destination: scratch.file("out"),
      stallAfter: 500_000, pauseAfter: 500_000)
    #expect(try Data(contentsOf: scratch.file("state.resumedata")) == resumeData)
    let blob = try ResumeData(decoding: resumeData)
    let onDisk = try Data(contentsOf: first.partialFile)
    #expect(blob.generation == .keyed)
    #expect(blob.infoVersion == 5)
    #expect(blob.bytesReceived == 500_000)
    #expect(onDisk.count == 500_000)
    #expect(firstDifference(onDisk, sourceBytes.prefix(onDisk.count)) == nil)
    #expect(blob.entityTag == sourceTag)
    #expect(blob.serverDownloadDate == sourceModified)
    #expect(blob.tempFileName == first.partialFile.lastPathComponent)
    #expect(blob.downloadURL == url.absoluteString)
    #expect(blob.currentRequest?.url == url.absoluteString)
    #expect(blob.originalRequest?.url == url.absoluteString)
    #expect(blob.findings().filter { $0.severity == .error } == [])

    server.setFaults(path: "/file", [])
    let second = try Download(
      resumeData: resumeData, destination: scratch.file("out"), configuration: configuration)
    let (finished, events) = await runCollecting(second)
    #expect(finished == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    #expect(milestones(events).first == .resumed(offset: Int64(onDisk.count)))
    #expect(server.requests(path: "/file").last?.header("Range") == "bytes=\(onDisk.count)-")
    #expect(!FileManager.default.fileExists(atPath: scratch.file("state.resumedata").path))
  }

  @Test("The state file: through a link, the file it names; a FIFO neither written nor removed")
  func stateFileKinds() async throws {
    let server = try sourceServer(stallingServer)
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    let link = scratch.file("state.resumedata")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: "kept.resumedata")
    configuration.stateFile = link
    let (_, resumeData) = try await pausedAtStall(
      server, configuration: configuration, destination: scratch.file("out"),
      stallAfter: 500_000, pauseAfter: 500_000)
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "kept.resumedata")
    #expect(try Data(contentsOf: scratch.file("kept.resumedata")) == resumeData)
    // Once complete, the state goes from where it was written; the link stays, as writing left it.
    server.setFaults(path: "/file", [])
    let resumed = try Download(
      resumeData: resumeData, destination: scratch.file("out"), configuration: configuration)
    let (finished, _) = await runCollecting(resumed)
    #expect(finished == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    #expect(!FileManager.default.fileExists(atPath: scratch.file("kept.resumedata").path))
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "kept.resumedata")

    // A FIFO's reader would take the state away, and a file renamed over it would stop it being
    // one: neither is done. Held open for reading here, so that writing into it would not wait
    // (a regression fails, rather than hangs).
    let fifo = scratch.file("fifo.resumedata")
    try #require(mkfifo(fifo.path, 0o600) == 0)
    let reader = open(fifo.path, O_RDONLY | O_NONBLOCK)
    try #require(reader >= 0)
    defer { close(reader) }
    configuration.stateFile = fifo
    configuration.stallTimeout = patience
    server.setFaults(path: "/file", [.stall(afterBytes: 500_000)])
    let download = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: scratch.file("out2"),
      configuration: configuration)
    async let run = runCollecting(download)
    await pause(download, after: 500_000)
    let (result, _) = await run
    guard case .failed(let error, let data?) = result else {
      Issue.record("expected a failure with resume data, got \(result)")
      return
    }
    #expect(error.code == .io)
    #expect(error.message == "cannot write \(fifo.path): not a regular file")
    #expect(try ResumeData(decoding: data).bytesReceived == 500_000)
    var status = stat()
    #expect(lstat(fifo.path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
    var byte: UInt8 = 0
    #expect(read(reader, &byte, 1) <= 0)
    // Nor is it removed once the download completes.
    server.setFaults(path: "/file", [])
    let completed = try Download(
      resumeData: data, destination: scratch.file("out2"), configuration: configuration)
    let (done, _) = await runCollecting(completed)
    #expect(done == .completed(file: scratch.file("out2"), digest: sha256(sourceBytes)))
    #expect(lstat(fifo.path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
  }

  /// The resume data of a download of the server's `/file` paused once it holds 300,000 bytes
  /// (the server stalls there), in `scratch`'s `out`; nil, with an issue recorded, when it did not
  /// pause.
  private func pausedDownload(
    _ server: TestHTTPServer, _ scratch: Scratch, _ configuration: DownloadConfiguration
  ) async throws -> Data? {
    server.setFaults(path: "/file", [.stall(afterBytes: 300_000)])
    let first = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: scratch.file("out"),
      configuration: configuration)
    async let paused = runCollecting(first)
    await pause(first, after: 300_000)
    guard case (.paused(let resumeData), _) = await paused else {
      Issue.record("expected a pause")
      return nil
    }
    return resumeData
  }

  @Test("A file replaced with one of the same size is started over, never spliced")
  func replacedFile() async throws {
    let server = try sourceServer(stallingServer)
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.stallTimeout = patience
    guard let resumeData = try await pausedDownload(server, scratch, configuration) else { return }
    server.setFaults(path: "/file", [])
    server.serve(
      path: "/file", body: replacedBytes, etag: "\"v2\"",
      lastModified: "Mon, 07 Nov 1994 08:49:37 GMT")
    let second = try Download(
      resumeData: resumeData, destination: scratch.file("out"), configuration: configuration)
    let (result, events) = await runCollecting(second)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(replacedBytes)))
    #expect(firstDifference(try Data(contentsOf: scratch.file("out")), replacedBytes) == nil)
    #expect(milestones(events).contains { if case .restarted = $0 { true } else { false } })
    #expect(server.requests(path: "/file").last?.header("If-Range") == sourceTag)
  }

  @Test(
    "A file replaced while the server ignores If-Range: its 206 carries the new validator, and the download starts over, never spliced",
    arguments: [
      (sourceTag as String?, "\"v2\"" as String?, "ETag"),
      (nil, nil, "Last-Modified"),
    ])
  func replacedBehindIgnoredIfRange(
    tag: String?, newTag: String?, validator: String
  ) async throws {
    let server = try sourceServer(stallingServer)
    defer { server.stop() }
    server.serve(path: "/file", body: sourceBytes, etag: tag, lastModified: sourceModified)
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.stallTimeout = patience
    guard let resumeData = try await pausedDownload(server, scratch, configuration) else { return }
    server.setFaults(path: "/file", [.ignoreIfRange])
    let newDate = "Mon, 07 Nov 1994 08:49:37 GMT"
    server.serve(path: "/file", body: replacedBytes, etag: newTag, lastModified: newDate)
    let second = try Download(
      resumeData: resumeData, destination: scratch.file("out"), configuration: configuration)
    let (result, events) = await runCollecting(second)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(replacedBytes)))
    #expect(firstDifference(try Data(contentsOf: scratch.file("out")), replacedBytes) == nil)
    let sent = tag ?? sourceModified
    let received = newTag ?? newDate
    let reasons = milestones(events).compactMap { event -> String? in
      if case .restarted(let reason) = event { reason } else { nil }
    }
    #expect(
      reasons == [
        "the 206 response carries \(validator) \(received), not \(sent): the file changed and the server ignored If-Range"
      ])
    // The continuation was answered 206 (If-Range ignored), then the file fetched whole.
    let requests = server.requests(path: "/file").suffix(2)
    #expect(requests.map { $0.header("If-Range") } == [sent, nil])
    #expect(requests.map { $0.header("Range") != nil } == [true, false])
  }

  /// A download resumed from a v2 blob (ETag `tag`) whose partial file already holds every byte
  /// of the server's `/file`.
  private func wholePartialFile(
    _ server: TestHTTPServer, _ scratch: Scratch, _ configuration: DownloadConfiguration,
    tag: String
  ) throws -> Download {
    try FileManager.default.createDirectory(
      at: configuration.temporaryDirectory, withIntermediateDirectories: true)
    try sourceBytes.write(to: configuration.temporaryDirectory.appendingPathComponent("whole.tmp"))
    let blob = try ResumeData(
      building: [
        ResumeDataKey.downloadURL: .string(
          server.baseURL.appendingPathComponent("file").absoluteString),
        ResumeDataKey.bytesReceived: .integer(.init(sourceBytes.count)),
        ResumeDataKey.entityTag: .string(tag),
        ResumeDataKey.tempFileName: .string("whole.tmp"),
      ], as: .v2)
    return try Download(
      resumeData: try blob.encoded(), destination: scratch.file("out"), configuration: configuration
    )
  }

  @Test("A partial file that is already whole completes on the server's 416")
  func alreadyComplete() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let configuration = scratch.configuration()
    let download = try wholePartialFile(server, scratch, configuration, tag: sourceTag)
    let (result, _) = await runCollecting(download)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    let requests = server.requests(path: "/file")
    #expect(requests.map(\.status) == [416])
    #expect(requests.first?.header("Range") == "bytes=3000000-")
  }

  @Test(
    "A 416 without Content-Range: the length is asked for (bytes=0-0, If-Range) before anything is fetched again",
    arguments: [
      (sourceTag, [416, 206], [String]()),
      (
        "\"v0\"", [416, 200],
        ["the file changed: the server sent it whole (200) when asked for its length"]
      ),
    ] as [(String, [Int], [String])])
  func unsizedRangeNotSatisfiable(tag: String, statuses: [Int], restarts: [String]) async throws {
    let server = try sourceServer()
    defer { server.stop() }
    // As Apache and lighttpd answer a range past the end.
    server.scheduleFaults(path: "/file", [.once(.status(416, body: Data()))])
    let scratch = try Scratch()
    defer { scratch.remove() }
    let configuration = scratch.configuration()
    let download = try wholePartialFile(server, scratch, configuration, tag: tag)
    let (result, events) = await runCollecting(download)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    #expect(firstDifference(try Data(contentsOf: scratch.file("out")), sourceBytes) == nil)
    let requests = server.requests(path: "/file")
    #expect(requests.map(\.status) == statuses)
    #expect(requests.map { $0.header("Range") } == ["bytes=3000000-", "bytes=0-0"])
    #expect(requests.map { $0.header("If-Range") } == [tag, tag])
    let restarted = events.compactMap { event -> String? in
      if case .restarted(let reason) = event { return reason }
      return nil
    }
    #expect(restarted == restarts)
  }

  @Test("A digest that does not match fails and keeps the resume data")
  func digestMismatch() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.expectedDigest = String(repeating: "0", count: 64)
    let download = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: scratch.file("out"),
      configuration: configuration)
    let (result, _) = await runCollecting(download)
    guard case .failed(let error, let resumeData) = result else {
      Issue.record("expected a failure, got \(result)")
      return
    }
    #expect(error.code == .digestMismatch)
    #expect(resumeData != nil)
    #expect(!FileManager.default.fileExists(atPath: scratch.file("out").path))
  }

  @Test("Redirects: followed and reported; credentials dropped across hosts, kept on the same host")
  func redirects() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let crossHost = server.localhostBaseURL.appendingPathComponent("file").absoluteString
    let sameHost = server.baseURL.appendingPathComponent("file").absoluteString
    server.setFaults(path: "/cross", [.redirect(to: crossHost, status: 302)])
    server.setFaults(path: "/same", [.redirect(to: sameHost, status: 301)])
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.headers = [("Authorization", "Bearer secret"), ("Cookie", "session=1")]
    for (path, target, keeps) in [("cross", crossHost, false), ("same", sameHost, true)] {
      server.clearRequests()
      let download = try Download(
        url: server.baseURL.appendingPathComponent(path), destination: scratch.file(path),
        configuration: configuration)
      let (result, events) = await runCollecting(download)
      #expect(result == .completed(file: scratch.file(path), digest: sha256(sourceBytes)))
      #expect(milestones(events).contains(.redirected(URL(string: target)!)))
      let final = server.requests(path: "/file").last
      #expect(final?.hasHeader("Authorization") == keeps, "\(path)")
      #expect(final?.hasHeader("Cookie") == keeps, "\(path)")
      #expect(server.requests(path: "/\(path)").first?.header("Authorization") == "Bearer secret")
    }
  }

  @Test(
    "A redirect to anything but http or https is not followed: the download fails, not retried",
    arguments: [1, 4])
  func redirectToFTP(connections: Int) async throws {
    let server = try sourceServer()
    defer { server.stop() }
    server.setFaults(path: "/ftp", [.redirect(to: "ftp://127.0.0.1:9/file", status: 302)])
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.connections = connections
    let download = try Download(
      url: server.baseURL.appendingPathComponent("ftp"), destination: scratch.file("out"),
      configuration: configuration)
    let (result, _) = await runCollecting(download)
    guard case .failed(let error, _) = result else {
      Issue.record("expected a failure, got \(result)")
      return
    }
    #expect(
      error
        == DownloadError(
          .unsupportedURL,
          "redirected to ftp://127.0.0.1:9/file, which is not an http or https URL"))
    #expect(server.requests(path: "/ftp").count == 1)
    #expect(!FileManager.default.fileExists(atPath: scratch.file("out").path))
  }

  @Test("A redirect loop ends after 20 redirects in a failure, never a hang", arguments: [1, 4])
  func redirectLoop(connections: Int) async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let loop = server.baseURL.appendingPathComponent("loop")
    server.setFaults(path: "/loop", [.redirect(to: loop.absoluteString, status: 302)])
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.connections = connections
    configuration.retry.maximumAttempts = 1
    let download = try Download(
      url: loop, destination: scratch.file("out"), configuration: configuration)
    let (result, events) = await runCollecting(download)
    guard case .failed(let error, let resumeData) = result else {
      Issue.record("expected a failure, got \(result)")
      return
    }
    #expect(error == DownloadError(.network, "too many HTTP redirects"))
    #expect(resumeData == nil)
    // The request and 20 redirects, each reported.
    #expect(server.requests(path: "/loop").count == 21)
    #expect(milestones(events).filter { $0 == .redirected(loop) }.count == 20)
  }

  @Test("Backpressure: URLSession waits for a lagging delegate; one request, never a lost byte")
  func backpressure() async throws {
    // 30 MB with room for a single chunk: URLSession (libcurl's thread) must wait for the
    // delegate after every chunk, and the download still takes one request.
    let body = Data(repeating: sourceBytes, count: 10)
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    server.serve(path: "/big", body: body, etag: sourceTag)
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = scratch.configuration()
    configuration.maximumQueuedChunks = 1
    let download = try Download(
      url: server.baseURL.appendingPathComponent("big"), destination: scratch.file("out"),
      configuration: configuration)
    let (result, events) = await runCollecting(download)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(body)))
    #expect(server.requests(path: "/big").count == 1)
    #expect(milestones(events).first == .started)
    #expect(!milestones(events).contains { if case .resumed = $0 { true } else { false } })
    // The bound held: the queue never had more than the one chunk it has room for.
    #expect(await download.largestQueuedChunks == 1)
  }
}
