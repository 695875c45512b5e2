import Downloader
import Foundation
import PropertyList
import ResumeData
import TestHTTPServer
import TestSupport
import Testing

/// A configuration for `connections` connections whose segments may be as small as 64 KiB (the
/// test file is 3 MB).
func segmented(_ scratch: Scratch, connections: Int) -> DownloadConfiguration {
  var configuration = scratch.configuration()
  configuration.connections = connections
  configuration.minimumSegmentSize = 64 * 1024
  return configuration
}

/// The ranges the requests after the first asked for, as `start...end`.
func askedRanges(_ requests: [RecordedRequest]) -> [ClosedRange<Int64>] {
  requests.dropFirst().compactMap { request in
    guard let value = request.header("Range"),
      case .span(let start, let end)? = HTTPRange.parseSingle(value)
    else { return nil }
    return start...end
  }
}

/// Downloads `path` from `server` over `connections` connections into a fresh directory, checks
/// that it completes with exactly `expected` (result, digest, bytes; no partial file left), and
/// returns its events without progress.
func completedSegmented(
  _ server: TestHTTPServer, path: String = "file", connections: Int = 4,
  expected: Data = sourceBytes, sourceLocation: SourceLocation = #_sourceLocation
) async throws -> [DownloadEvent] {
  let scratch = try Scratch()
  defer { scratch.remove() }
  let destination = scratch.file("out.bin")
  let download = try Download(
    url: server.baseURL.appendingPathComponent(path), destination: destination,
    configuration: segmented(scratch, connections: connections))
  let (result, events) = await runCollecting(download)
  let digest = sha256(expected)
  #expect(result == .completed(file: destination, digest: digest), sourceLocation: sourceLocation)
  #expect(
    firstDifference(try Data(contentsOf: destination), expected) == nil,
    sourceLocation: sourceLocation)
  #expect(
    !FileManager.default.fileExists(atPath: download.partialFile.path),
    sourceLocation: sourceLocation)
  let milestones = milestones(events)
  #expect(
    milestones.last == .completed(file: destination, digest: digest),
    sourceLocation: sourceLocation)
  return Array(milestones.dropLast())
}

/// A server fault schedule for a segmented download, and the restart it must lead to.
struct SegmentFaultCase: Sendable, CustomTestStringConvertible {
  let name: String
  let steps: [FaultStep]
  /// The reason of the one restart expected, for the segment `S-E` the fault hit, or nil for none.
  let restart: (@Sendable (_ start: Int, _ end: Int) -> String)?
  var testDescription: String { name }
}

// The first request is the probe (`bytes=0-`); the second is the first segment asked for (one of
// the three quarters the probe does not keep: which one reaches the server first is the
// transport's and the scheduler's, so the expected reason names the one its Range asked for).
let segmentFaultCases = [
  SegmentFaultCase(name: "no fault", steps: [], restart: nil),
  SegmentFaultCase(
    name: "one connection drops mid-range: that segment continues",
    steps: [.once(), .once(.closeAfter(bytes: 100_000))], restart: nil),
  SegmentFaultCase(
    name: "one connection stalls: that segment continues",
    steps: [.once(), .once(.stall(afterBytes: 100_000))], restart: nil),
  SegmentFaultCase(
    name: "one connection gets a 503: retried",
    steps: [.once(), .once(.status(503, body: Data("busy".utf8)))], restart: nil),
  SegmentFaultCase(
    name: "one connection gets a 200 for its range: started over",
    steps: [.once(), .once(.ignoreRange)],
    restart: {
      "the server sent the whole file (200) for bytes \($0)-\($1): it changed, or ignores ranges"
    }),
  SegmentFaultCase(
    name: "a wrong Content-Range: started over",
    steps: [.once(), .once(.wrongContentRangeStart(delta: 10))],
    restart: {
      "the server answered bytes \($0)-\($1) with Content-Range \"bytes \($0 + 10)-\($1 + 10)/3000000\", not bytes \($0)-\($1)/3000000"
    }),
  SegmentFaultCase(
    name: "a wrong total: started over",
    steps: [.once(), .once(.wrongContentRangeTotal(delta: 1))],
    restart: {
      "the server answered bytes \($0)-\($1) with Content-Range \"bytes \($0)-\($1)/3000001\", not bytes \($0)-\($1)/3000000"
    }),
  SegmentFaultCase(
    name: "a 416: started over",
    steps: [.once(), .once(.status(416, body: Data()))],
    restart: { "the server cannot satisfy bytes \($0)-\($1) (416)" }),
]

@Suite("Segmented downloads against a loopback server")
struct SegmentedDownloadTests {
  @Test("Four connections fetch the file in segments, byte for byte")
  func fourConnections() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let events = try await completedSegmented(server)
    #expect(events == [.started, .segmented(connections: 4)])
    let requests = server.requests(path: "/file")
    #expect(requests.first?.header("Range") == "bytes=0-")
    #expect(requests.first?.header("If-Range") == nil)
    // The three other quarters (then, as connections finish, halves of what is left), each
    // conditional on the same version.
    #expect(
      Set(askedRanges(requests)).isSuperset(
        of: [750_000...1_499_999, 1_500_000...2_249_999, 2_250_000...2_999_999]))
    #expect(requests.dropFirst().allSatisfy { $0.header("If-Range") == sourceTag })
    #expect(requests.allSatisfy { $0.header("Accept-Encoding") == "identity" })
  }

  @Test(
    "Fewer connections than asked when the file cannot be split that far",
    arguments: [(100_000, 1), (200_000, 2), (1_000_000, 4)])
  func connectionsAtWork(size: Int, connections: Int) async throws {
    // Segments of at least 64 KiB: a part is split only while 128 KiB of it are left.
    let body = Data(sourceBytes.prefix(size))
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    server.serve(path: "/small", body: body, etag: sourceTag)
    let events = try await completedSegmented(server, path: "small", expected: body)
    #expect(events == [.started, .segmented(connections: connections)])
    // The probe and one request for each other part; a connection that finishes takes half of a
    // part only while 128 KiB of it are left, which the two smaller files never have.
    let requests = server.requests(path: "/small").count
    #expect(size < 256_000 ? requests == connections : requests >= connections)
  }

  @Test("From 2 to 16 connections, each with a part of its own", arguments: [2, 16])
  func connectionCounts(count: Int) async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let events = try await completedSegmented(server, connections: count)
    #expect(events == [.started, .segmented(connections: count)])
    // The probe's part and count - 1 others, one request each (more once connections finish).
    let starts = Set(askedRanges(server.requests(path: "/file")).map(\.lowerBound))
    let part = Int64(3_000_000 / count)
    #expect(starts.isSuperset(of: (1..<count).map { Int64($0) * part }))
  }

  @Test(
    "Every fault of one connection ends in the source's exact bytes", arguments: segmentFaultCases)
  func faults(_ fault: SegmentFaultCase) async throws {
    let server = try sourceServer()
    defer { server.stop() }
    server.scheduleFaults(path: "/file", fault.steps)
    let events = try await completedSegmented(server)
    let restarts = events.compactMap { event -> String? in
      if case .restarted(let reason) = event { return reason }
      return nil
    }
    // Probes (one a run) ask for everything from byte 0; every segment is conditional.
    let requests = server.requests(path: "/file")
    // The segment the fault hit: the second request's.
    let hit = requests.dropFirst().first?.header("Range")?.dropFirst("bytes=".count)
      .split(separator: "-").compactMap { Int($0) }
    #expect(
      hit.map {
        [[750_000, 1_499_999], [1_500_000, 2_249_999], [2_250_000, 2_999_999]].contains($0)
      } ?? false)
    let expected = fault.restart.map { restart in [restart(hit?.first ?? 0, hit?.last ?? 0)] }
    #expect(restarts == (expected ?? []))
    let probes = requests.filter { $0.header("Range") == "bytes=0-" }
    #expect(probes.count == restarts.count + 1)
    #expect(probes.allSatisfy { $0.header("If-Range") == nil })
    #expect(
      requests.filter { $0.header("Range") != "bytes=0-" }.allSatisfy {
        $0.header("If-Range") == sourceTag
      })
  }

  @Test(
    "A server that cannot serve segments: one connection, and why; a 200 to the probe is kept",
    arguments: [
      (
        [Fault.ignoreRange], nil as String?,
        "the server does not serve byte ranges (it answered 200 to bytes=0-): its answer is kept",
        ["bytes=0-"]
      ),
      (
        [], "W/\"weak\"",
        "the server sent no strong ETag or Last-Modified, so segments could not be matched",
        ["bytes=0-", nil]
      ),
      (
        [.gzip], nil,
        "the server does not serve byte ranges (it answered 200 to bytes=0-): its answer is kept",
        ["bytes=0-"]
      ),
    ] as [([Fault], String?, String, [String?])])
  func fallback(faults: [Fault], etag: String?, reason: String, ranges: [String?]) async throws {
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    server.serve(path: "/file", body: sourceBytes, etag: etag ?? sourceTag)
    server.scheduleFaults(path: "/file", [FaultStep(faults, requests: 1)])
    let events = try await completedSegmented(server)
    // A 200 (the whole file, plain or compressed) goes on streaming into the file: one request.
    // A 206 that cannot be matched is left, and one plain request fetches the file.
    let kept = ranges.count == 1
    #expect(events == [.started, .singleConnection(reason: reason)] + (kept ? [] : [.started]))
    #expect(server.requests(path: "/file").map { $0.header("Range") } == ranges)
  }

  @Test(
    "The file replaced (same size, new ETag) while segments are in flight: started over, never spliced"
  )
  func replacedInFlight() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    // Every connection stops after 100 KB, so all three are in flight when the file changes;
    // their retries (after the stall timeout) meet the new version.
    server.setFaults(path: "/file", [.stall(afterBytes: 100_000)])
    let scratch = try Scratch()
    defer { scratch.remove() }
    let destination = scratch.file("out.bin")
    let download = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: destination,
      configuration: segmented(scratch, connections: 3))
    async let run = runCollecting(download)
    let deadline = ContinuousClock.now + patience
    while await download.bytesReceived < 300_000, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(2))
    }
    server.serve(path: "/file", body: replacedBytes, etag: "\"v2\"", lastModified: sourceModified)
    server.setFaults(path: "/file", [])
    let (result, events) = await run
    #expect(result == .completed(file: destination, digest: sha256(replacedBytes)))
    #expect(firstDifference(try Data(contentsOf: destination), replacedBytes) == nil)
    let restarts = milestones(events).compactMap { event -> String? in
      if case .restarted(let reason) = event { return reason }
      return nil
    }
    #expect(restarts.count == 1)
    #expect(restarts.allSatisfy { $0.hasPrefix("the server sent the whole file (200) for bytes ") })
    // The second run is of the new version only.
    let requests = server.requests(path: "/file")
    let secondProbe = try #require(requests.lastIndex { $0.header("Range") == "bytes=0-" })
    #expect(requests[(secondProbe + 1)...].allSatisfy { $0.header("If-Range") == "\"v2\"" })
  }

  @Test(
    "Pause hands back Apple's resume data for the prefix and the map; resuming asks only for what is missing"
  )
  func pauseAndResume() async throws {
    let server = try sourceServer(stallingServer)
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = segmented(scratch, connections: 4)
    configuration.stateFile = scratch.file("state.resumedata")
    // Every connection stops after 200 KB, so the pause lands with four partial segments.
    let (first, resumeData) = try await pausedAtStall(
      server, configuration: configuration, destination: scratch.file("out"),
      stallAfter: 200_000, pauseAfter: 800_000)
    #expect(try Data(contentsOf: scratch.file("state.resumedata")) == resumeData)
    let blob = try ResumeData(decoding: resumeData)
    #expect(blob.generation == .keyed)
    #expect(blob.bytesReceived == 200_000)
    #expect(blob.entityTag == sourceTag)
    #expect(
      blob.segments
        == "bytes=0-199999,750000-949999,1500000-1699999,2250000-2449999/3000000")
    let onDisk = try Data(contentsOf: first.partialFile)
    #expect(onDisk.count == 3_000_000)
    for range in [0..<200_000, 750_000..<950_000, 1_500_000..<1_700_000, 2_250_000..<2_450_000] {
      #expect(firstDifference(onDisk[range], sourceBytes[range]) == nil)
    }

    server.setFaults(path: "/file", [])
    server.clearRequests()
    let second = try Download(
      resumeData: resumeData, destination: scratch.file("out"), configuration: configuration)
    let (finished, events) = await runCollecting(second)
    #expect(finished == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    #expect(firstDifference(try Data(contentsOf: scratch.file("out")), sourceBytes) == nil)
    #expect(
      milestones(events).prefix(2) == [
        .resumedSegments(bytesOnDisk: 800_000, total: 3_000_000), .segmented(connections: 4),
      ])
    // Only the missing ranges are asked for, each from where its segment stopped.
    let asked = server.requests(path: "/file").compactMap { request -> ClosedRange<Int64>? in
      guard let value = request.header("Range"),
        case .span(let start, let end)? = HTTPRange.parseSingle(value)
      else { return nil }
      return start...end
    }
    #expect(server.requests(path: "/file").count == asked.count)
    let missing =
      [200_000..<750_000, 950_000..<1_500_000, 1_700_000..<2_250_000, 2_450_000..<3_000_000]
      as [Range<Int64>]
    #expect(
      asked.allSatisfy { range in
        missing.contains { $0.contains(range.lowerBound) && $0.contains(range.upperBound) }
      })
    #expect(Set(asked.map(\.lowerBound)).isSuperset(of: [200_000, 950_000, 1_700_000, 2_450_000]))
    #expect(!FileManager.default.fileExists(atPath: scratch.file("state.resumedata").path))
  }

  @Test("A redirect is followed once: the segments are asked of where it led")
  func redirected() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let target = server.baseURL.appendingPathComponent("file")
    server.setFaults(path: "/start", [.redirect(to: target.absoluteString)])
    let events = try await completedSegmented(server, path: "start")
    #expect(events.prefix(3) == [.started, .redirected(target), .segmented(connections: 4)])
    #expect(server.requests(path: "/start").count == 1)
    #expect(server.requests(path: "/file").first?.header("Range") == "bytes=0-")
    #expect(server.requests(path: "/file").count >= 4)
  }

  @Test("Resume data of one connection continues over four: the probe continues the prefix")
  func prefixOverFour() async throws {
    let server = try sourceServer(stallingServer)
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (_, resumeData) = try await pausedAtStall(
      server, configuration: scratch.configuration(), destination: scratch.file("out"),
      stallAfter: 500_000, pauseAfter: 500_000)
    #expect(try ResumeData(decoding: resumeData).segments == nil)
    server.setFaults(path: "/file", [])
    server.clearRequests()
    let second = try Download(
      resumeData: resumeData, destination: scratch.file("out"),
      configuration: segmented(scratch, connections: 4))
    let (result, events) = await runCollecting(second)
    #expect(result == .completed(file: scratch.file("out"), digest: sha256(sourceBytes)))
    #expect(firstDifference(try Data(contentsOf: scratch.file("out")), sourceBytes) == nil)
    #expect(
      milestones(events).prefix(2) == [.resumed(offset: 500_000), .segmented(connections: 4)])
    let probe = try #require(server.requests(path: "/file").first)
    #expect(probe.header("Range") == "bytes=500000-")
    #expect(probe.header("If-Range") == sourceTag)
    // The 2.5 MB left, in quarters.
    #expect(
      Set(askedRanges(server.requests(path: "/file"))).isSuperset(
        of: [1_125_000...1_749_999, 1_750_000...2_374_999, 2_375_000...2_999_999]))
  }

  @Test("A malformed segment map in resume data is refused, saying where")
  func malformedMap() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let blob = try ResumeData(
      building: [
        ResumeDataKey.downloadURL: .string("http://127.0.0.1:1/file"),
        ResumeDataKey.bytesReceived: .integer(PropertyListInteger(0)),
        ResumeDataKey.entityTag: .string(sourceTag),
        ResumeDataKey.tempFileName: .string("CFNetworkDownload_abc123.tmp"),
        ResumeDataKey.segments: .string("bytes=0-9,5-20/100"),
      ]
    ).encoded()
    #expect(
      throws: DownloadError(
        .invalidResumeData,
        "ResumeDataKitSegments: the segment map \"bytes=0-9,5-20/100\" is malformed at character 15: the ranges must ascend and stay apart"
      )
    ) {
      try Download(
        resumeData: blob, destination: scratch.file("out"), configuration: scratch.configuration())
    }
  }

  @Test("A digest that does not match fails and keeps the map")
  func digestMismatch() async throws {
    let server = try sourceServer()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var configuration = segmented(scratch, connections: 4)
    configuration.expectedDigest = String(repeating: "0", count: 64)
    let download = try Download(
      url: server.baseURL.appendingPathComponent("file"), destination: scratch.file("out"),
      configuration: configuration)
    let (result, _) = await runCollecting(download)
    guard case .failed(let error, let resumeData?) = result else {
      Issue.record("expected a failure with resume data, got \(result)")
      return
    }
    #expect(error.code == .digestMismatch)
    #expect(try ResumeData(decoding: resumeData).segments == "bytes=0-2999999/3000000")
  }
}
