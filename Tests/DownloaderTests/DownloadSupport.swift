import Downloader
import Foundation
import TestHTTPServer
import Testing

/// The file every download test fetches: 3 MB of a repeatable pattern, so a splice anywhere shows.
let sourceBytes: Data = {
  var generator = UInt64(0x9E37_79B9_7F4A_7C15)
  var bytes = [UInt8]()
  bytes.reserveCapacity(3_000_000)
  for _ in 0..<3_000_000 {
    generator ^= generator << 13
    generator ^= generator >> 7
    generator ^= generator << 17
    bytes.append(UInt8(truncatingIfNeeded: generator))
  }
  return Data(bytes)
}()

extension Data {
  /// `count` copies of `data`, one after another.
  init(repeating data: Data, count: Int) {
    self.init()
    for _ in 0..<count { append(data) }
  }
}

/// A different file of the same size (the server's file replaced in place).
let replacedBytes = Data(sourceBytes.reversed())

let sourceTag = "\"v1\""
let sourceModified = "Sun, 06 Nov 1994 08:49:37 GMT"

func sha256(_ data: Data) -> String {
  (try? StreamingDigest.digest(.sha256, of: data).hexString) ?? ""
}

/// A server configuration for downloads: a response the client abandons (a cancelled 404 page, a
/// restart) leaves the server writing into a socket nobody reads, and `stop()` waits for that
/// write to time out, so the timeout is short.
let quickServer = TestHTTPServer.Configuration(idleTimeout: .seconds(1))

/// A server holding the source at `/file` (`stallingServer` for a test that pauses at a stall).
func sourceServer(_ configuration: TestHTTPServer.Configuration = quickServer) throws
  -> TestHTTPServer
{
  let server = try TestHTTPServer(configuration: configuration)
  server.serve(path: "/file", body: sourceBytes, etag: sourceTag, lastModified: sourceModified)
  return server
}

/// The engine the tests run on: `RESUMEDATA_ENGINE` (`curl` or `urlsession`; CI runs the suite
/// once on each), else the platform's default.
let testEngine: DownloadEngine = {
  guard let name = ProcessInfo.processInfo.environment["RESUMEDATA_ENGINE"] else {
    return .platformDefault
  }
  guard let engine = DownloadEngine(rawValue: name) else {
    fatalError("RESUMEDATA_ENGINE must be curl or urlsession, not \(name)")
  }
  return engine
}()

/// A fresh directory for one test's partial files and outputs, removed by `remove()`.
struct Scratch {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "downloader-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> URL { url.appendingPathComponent(name) }

  func remove() { try? FileManager.default.removeItem(at: url) }

  /// A configuration whose retries and stall detection are quick, for tests.
  func configuration() -> DownloadConfiguration {
    var configuration = DownloadConfiguration(temporaryDirectory: url.appendingPathComponent("tmp"))
    configuration.retry = RetryPolicy(
      maximumAttempts: 4, baseDelay: .milliseconds(10), maximumDelay: .milliseconds(50), jitter: 0)
    configuration.stallTimeout = .seconds(1)
    configuration.engine = testEngine
    return configuration
  }
}

/// Runs a download to its end, collecting its events.
func runCollecting(_ download: Download) async -> (DownloadResult, [DownloadEvent]) {
  let collector = Task {
    var events = [DownloadEvent]()
    for await event in download.events { events.append(event) }
    return events
  }
  let result = await download.run()
  return (result, await collector.value)
}

/// The events without progress reports (whose number depends on timing).
func milestones(_ events: [DownloadEvent]) -> [DownloadEvent] {
  events.filter {
    if case .progress = $0 { return false }
    return true
  }
}

/// How long a test waits for a download to get somewhere before it says it did not. Long: a run
/// whose other tests keep the threads of its pool busy can hold a download's connections back for
/// minutes (a pause test once waited over 90 s on 2 cores with the whole suite and a fuzzer
/// running); a bound only so that a test that goes wrong ends.
let patience: Duration = .seconds(600)

/// A server configuration for pause tests: a stalled response stays open until `stop()` cuts it
/// (or `patience` passes), so that no wait of the test outlasts the stall; were the server to
/// close it first, the client's retry would bring in bytes past the stall.
let stallingServer = TestHTTPServer.Configuration(idleTimeout: .seconds(1), stallTimeout: patience)

/// Pauses a download once it has received at least `bytes`; records an issue saying so when it has
/// not within `patience`, and pauses anyway.
func pause(_ download: Download, after bytes: Int64) async {
  let deadline = ContinuousClock.now + patience
  while await download.bytesReceived < bytes {
    guard ContinuousClock.now < deadline else {
      Issue.record(
        "the download had \(await download.bytesReceived) of the \(bytes) bytes to pause after, \(patience) in"
      )
      break
    }
    try? await Task.sleep(for: .milliseconds(5))
  }
  await download.pause()
}

/// A download of `server`'s `/file` whose every response stops after `stallAfter` bytes (so that
/// the pause lands there however the tests are scheduled), paused once `pauseAfter` bytes are in:
/// the download and the resume data it handed back. `server` is a `stallingServer`, and the
/// download's own stall timeout is `patience`: neither side ends a stall before the pause.
func pausedAtStall(
  _ server: TestHTTPServer, configuration: DownloadConfiguration, destination: URL,
  stallAfter: Int, pauseAfter: Int64
) async throws -> (Download, Data) {
  server.setFaults(path: "/file", [.stall(afterBytes: stallAfter)])
  var configuration = configuration
  configuration.stallTimeout = patience
  let download = try Download(
    url: server.baseURL.appendingPathComponent("file"), destination: destination,
    configuration: configuration)
  async let paused = runCollecting(download)
  await pause(download, after: pauseAfter)
  let (result, _) = await paused
  guard case .paused(let resumeData) = result else {
    Issue.record("expected a pause, got \(result)")
    throw DownloadError(.io, "no pause")
  }
  return (download, resumeData)
}
