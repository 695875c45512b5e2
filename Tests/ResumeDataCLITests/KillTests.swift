import Downloader
import Foundation
import ResumeData
import TestHTTPServer
import TestSupport
import Testing

/// `count` bytes of a repeatable pattern.
private func pattern(_ count: Int) -> Data {
  var state: UInt32 = 0x1234_5678
  return Data(
    (0..<count).map { _ in
      state = state &* 1_664_525 &+ 1_013_904_223
      return UInt8(truncatingIfNeeded: state >> 24)
    })
}

/// 2 MB of a repeatable pattern.
private let body = pattern(2_000_000)

/// 4.5 MB of it: a segment is split only while at least twice the minimum segment (1 MiB) is
/// left, so four connections share a file from the start only above 4 MiB (here four segments
/// of 1.125 MB); 2 MB goes over one.
private let segmentedBody = pattern(4_500_000)

/// Starts the built executable without waiting for it.
private func launch(_ arguments: [String]) throws -> Process {
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  try process.run()
  return process
}

/// The size of the one partial file in a directory, if there is one.
private func partialSize(in directory: URL) -> Int64? {
  let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
  guard let name = names.first(where: { $0.hasPrefix("CFNetworkDownload_") }) else { return nil }
  let attributes = try? FileManager.default.attributesOfItem(
    atPath: directory.appendingPathComponent(name).path)
  return (attributes?[.size] as? NSNumber)?.int64Value
}

@Suite("resumedata download, killed")
struct KillTests {
  @Test(
    "SIGKILL at any point: the next run continues from what was persisted, byte for byte",
    arguments: [100_000, 700_000, 1_500_000] as [Int64])
  func killed(at bytes: Int64) throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/file", body: body, etag: "\"k1\"")
    // The server stops 300 KB past the point the kill waits for: a test that waits too long
    // (a loaded machine) still kills a download that has not finished.
    server.setFaults(
      path: "/file",
      [
        .trickle(bytesPerChunk: 20_000, interval: .milliseconds(10)),
        .stall(afterBytes: Int(bytes) + 300_000),
      ])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-kill-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("out.bin").path
    let arguments = [
      "download", server.baseURL.appendingPathComponent("file").absoluteString, "-o", output,
      "--state-dir", directory.path,
    ]
    let first = try launch(arguments)
    // Bounded: the trickle delivers 2 MB in about a second.
    let deadline = Date().addingTimeInterval(60)
    while (partialSize(in: directory) ?? 0) < bytes, first.isRunning, Date() < deadline {
      usleep(2_000)
    }
    kill(first.processIdentifier, SIGKILL)
    first.waitUntilExit()
    #expect(first.terminationReason == .uncaughtSignal)
    let kept = try #require(partialSize(in: directory))
    #expect(kept >= bytes)
    #expect(!FileManager.default.fileExists(atPath: output))
    let state = try ResumeData(
      decoding: try Data(contentsOf: directory.appendingPathComponent("out.bin.resumedata")))
    #expect((state.bytesReceived ?? -1) <= kept)

    server.setFaults(path: "/file", [])
    let before = server.requests(path: "/file").count
    let second = try launch(arguments)
    second.waitUntilExit()
    #expect(second.terminationStatus == 0)
    #expect(firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), body) == nil)
    // The second run's first request continues the partial file (later ones may continue it
    // again after backpressure).
    let last = server.requests(path: "/file").dropFirst(before).first
    #expect(last?.header("Range") == "bytes=\(kept)-")
    #expect(last?.header("If-Range") == "\"k1\"")
    #expect(partialSize(in: directory) == nil)
  }

  @Test(
    "SIGKILL of a download over 4 connections: the next run asks only for the missing ranges",
    arguments: [1, 500_000, 1_000_000] as [Int64])
  func segmentedKilled(at bytes: Int64) throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/file", body: segmentedBody, etag: "\"k1\"")
    // About 100 KB/s a connection: the map is persisted every second, about ten times before the
    // end, so that a machine busy with other work still sees the run before it ends.
    server.setFaults(path: "/file", [.trickle(bytesPerChunk: 4_000, interval: .milliseconds(40))])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-kill-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("out.bin").path
    let stateFile = directory.appendingPathComponent("out.bin.resumedata")
    let arguments = [
      "download", server.baseURL.appendingPathComponent("file").absoluteString, "-o", output,
      "--state-dir", directory.path, "--connections", "4", "--no-resume-check",
    ]
    /// The map the state file holds now, if it holds one.
    func persistedMap() -> SegmentMap? {
      guard let data = try? Data(contentsOf: stateFile), let blob = try? ResumeData(decoding: data),
        let text = blob.segments
      else { return nil }
      return try? SegmentMap(parsing: text)
    }
    let first = try launch(arguments)
    let deadline = Date().addingTimeInterval(60)
    while (persistedMap()?.bytesOnDisk ?? -1) < bytes, first.isRunning, Date() < deadline {
      usleep(2_000)
    }
    // Somewhere between two persists, mid-write.
    usleep(UInt32.random(in: 0...300_000))
    kill(first.processIdentifier, SIGKILL)
    first.waitUntilExit()
    #expect(first.terminationReason == .uncaughtSignal)
    // Once 500 KB are persisted, every connection has asked for its segment: the probe and three.
    if bytes >= 500_000 {
      #expect(server.requests(path: "/file").count >= 4)
    }
    let map = try #require(persistedMap())
    #expect(map.total == Int64(segmentedBody.count))
    #expect(map.bytesOnDisk >= bytes)
    let partial = try #require(partialSize(in: directory))
    #expect(partial == Int64(segmentedBody.count))
    let kept = try Data(
      contentsOf: directory.appendingPathComponent(
        try FileManager.default.contentsOfDirectory(atPath: directory.path).first {
          $0.hasPrefix("CFNetworkDownload_")
        }!))
    // What the map says is on disk is the file's bytes.
    for range in map.onDisk {
      let bytes = Int(range.lowerBound)..<Int(range.upperBound)
      #expect(firstDifference(kept[bytes], segmentedBody[bytes]) == nil)
    }

    server.setFaults(path: "/file", [])
    server.clearRequests()
    let second = try launch(arguments)
    second.waitUntilExit()
    #expect(second.terminationStatus == 0)
    #expect(
      firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), segmentedBody) == nil)
    // No probe: every request asks for a part of what was missing, conditionally.
    let requests = server.requests(path: "/file")
    #expect(!requests.isEmpty)
    for request in requests {
      let range = request.header("Range").flatMap(HTTPRange.parseSingle)
      guard case .span(let start, let end)? = range else {
        Issue.record("a request asked for \(request.header("Range") ?? "everything")")
        continue
      }
      #expect(map.missing.contains { $0.contains(start) && $0.contains(end) })
      #expect(request.header("If-Range") == "\"k1\"")
    }
    #expect(partialSize(in: directory) == nil)
    #expect(!FileManager.default.fileExists(atPath: stateFile.path))
  }

  @Test("Ctrl-C pauses: resume data written, its path on standard error, exit 130")
  func interrupted() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/file", body: body, etag: "\"k1\"")
    // The server stops after 300 KB, so the interruption lands while the download waits.
    server.setFaults(path: "/file", [.stall(afterBytes: 300_000)])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-interrupt-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("out.bin").path
    let process = Process()
    process.executableURL = executable
    process.arguments = [
      "download", server.baseURL.appendingPathComponent("file").absoluteString, "-o", output,
      "--state-dir", directory.path, "--stall-timeout", "60",
    ]
    let errorPipe = Pipe()
    process.standardError = errorPipe
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(60)
    while server.requests(path: "/file").isEmpty || (partialSize(in: directory) ?? 0) == 0,
      Date() < deadline
    {
      usleep(5_000)
    }
    // The state file exists once the response is accepted; give the bytes a moment to arrive.
    usleep(300_000)
    kill(process.processIdentifier, SIGINT)
    let error = String(
      decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 130)
    let state = directory.appendingPathComponent("out.bin.resumedata").path
    #expect(error.hasSuffix("Paused; resume data: \(state)\n"))
    let blob = try ResumeData(decoding: try Data(contentsOf: URL(fileURLWithPath: state)))
    #expect(blob.bytesReceived == 300_000)
    #expect(blob.entityTag == "\"k1\"")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test(
    "downloads run, Ctrl-C: the tasks are queued again, list shows their bytes, the next run finishes them"
  )
  func runInterrupted() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/file", body: body, etag: "\"k1\"")
    // The server stops after 300 KB, so the interruption lands while the download waits.
    server.setFaults(path: "/file", [.stall(afterBytes: 300_000)])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-run-interrupt-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let state = directory.appendingPathComponent("state").path
    let output = directory.appendingPathComponent("out.bin").path
    let url = server.baseURL.appendingPathComponent("file").absoluteString
    let (added, idData, _) = try runExecutable([
      "downloads", "add", url, "-o", output, "--state-dir", state,
    ])
    try #require(added == 0)
    let id = String(decoding: idData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let process = Process()
    process.executableURL = executable
    process.arguments = ["downloads", "run", "--state-dir", state]
    let errorPipe = Pipe()
    process.standardError = errorPipe
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let partial = URL(fileURLWithPath: state).appendingPathComponent("partial")
    let deadline = Date().addingTimeInterval(60)
    while (partialSize(in: partial) ?? 0) < 300_000, Date() < deadline { usleep(5_000) }
    kill(process.processIdentifier, SIGINT)
    let error = String(
      decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 130)
    #expect(error.hasSuffix("Paused; run again to continue.\n"))
    // Queued again, with the bytes its resume data holds.
    let (_, listed, _) = try runExecutable(["downloads", "list", "--state-dir", state])
    let line = String(decoding: listed, as: UTF8.self)
    #expect(line.hasPrefix("\(id)  queued  300000"))
    // The next run continues it: one more request, from byte 300000.
    server.setFaults(path: "/file", [])
    server.clearRequests()
    let (again, _, _) = try runExecutable(["downloads", "run", "--state-dir", state])
    #expect(again == 0)
    #expect(server.requests(path: "/file").map { $0.header("Range") } == ["bytes=300000-"])
    #expect(firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), body) == nil)
  }

  @Test("downloads run killed: list shows the bytes the task's resume data holds, not 0")
  func runKilled() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/file", body: body, etag: "\"k1\"")
    server.setFaults(path: "/file", [.stall(afterBytes: 300_000)])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-run-kill-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let state = directory.appendingPathComponent("state").path
    let url = server.baseURL.appendingPathComponent("file").absoluteString
    let (added, idData, _) = try runExecutable([
      "downloads", "add", url, "-o", directory.appendingPathComponent("out.bin").path,
      "--state-dir", state,
    ])
    try #require(added == 0)
    let id = String(decoding: idData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let process = try launch(["downloads", "run", "--state-dir", state])
    // Killed once the resume data records all 300 KB (written within a second of their arrival).
    let resumeData = URL(fileURLWithPath: state).appendingPathComponent("\(id).resumedata")
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      if let data = try? Data(contentsOf: resumeData),
        (try? ResumeData(decoding: data))?.bytesReceived == 300_000
      {
        break
      }
      usleep(10_000)
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    let (_, listed, _) = try runExecutable(["downloads", "list", "--state-dir", state])
    // The list was last written when the task started (0 bytes); its resume data says 300000.
    #expect(String(decoding: listed, as: UTF8.self).hasPrefix("\(id)  queued  300000"))
  }
}
