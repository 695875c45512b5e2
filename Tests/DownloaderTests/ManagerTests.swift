import Downloader
import Foundation
import TestHTTPServer
import TestSupport
import Testing

@Suite("Download manager")
struct ManagerTests {
  /// A server with `count` files at `/f0`, `/f1`, …, each the source reversed at a different place.
  func servers(files count: Int) throws -> (TestHTTPServer, [Data]) {
    let server = try TestHTTPServer(configuration: stallingServer)
    var bodies = [Data]()
    for index in 0..<count {
      let body = sourceBytes.prefix(200_000 + index * 1_000)
      bodies.append(body)
      server.serve(path: "/f\(index)", body: body, etag: "\"f\(index)\"")
    }
    return (server, bodies)
  }

  /// Waits until a task reports at least `bytes` received (its events are this test's alone).
  func waitForProgress(_ manager: DownloadManager, _ id: String, _ bytes: Int64) async {
    for await event in manager.events {
      if case .task(id, .progress(let progress)) = event, progress.bytes >= bytes { return }
    }
  }

  @Test("A group of downloads runs two at a time, finishes whole, and reports its end once")
  func group() async throws {
    let (server, bodies) = try servers(files: 5)
    defer { server.stop() }
    for index in 0..<5 {
      server.setFaults(
        path: "/f\(index)", [.trickle(bytesPerChunk: 20_000, interval: .milliseconds(10))])
    }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let manager = try DownloadManager(
      stateDirectory: scratch.file("state"), maximumConcurrent: 2,
      configuration: scratch.configuration())
    let ends = Task {
      var groupEnds = [DownloadManager.Event]()
      for await event in manager.events {
        if case .groupFinished = event { groupEnds.append(event) }
        if groupEnds.count == 1 { break }
      }
      return groupEnds
    }
    var ids = [String]()
    for index in 0..<5 {
      ids.append(
        try await manager.add(
          server.baseURL.appendingPathComponent("f\(index)"),
          destination: scratch.file("out\(index)"),
          group: "batch"))
    }
    // The same URL to the same place is the same task.
    let again = try await manager.add(
      server.baseURL.appendingPathComponent("f0"), destination: scratch.file("out0"), group: "batch"
    )
    #expect(again == ids[0])
    let running = await manager.tasks().filter { $0.state == .running }.count
    #expect(running == 2)
    await manager.waitForGroup("batch")
    #expect(await ends.value == [.groupFinished("batch", completed: 5, failed: 0)])
    for index in 0..<5 {
      #expect(
        firstDifference(try Data(contentsOf: scratch.file("out\(index)")), bodies[index]) == nil)
    }
    let progress = await manager.progress(ofGroup: "batch")
    let total = Int64(bodies.reduce(0) { $0 + $1.count })
    #expect(progress.bytes == total)
    #expect(progress.expected == total)
    #expect(server.requests.count == 5)
  }

  @Test("The task list survives the manager: a new one on the same directory continues")
  func restore() async throws {
    let (server, bodies) = try servers(files: 2)
    defer { server.stop() }
    server.setFaults(path: "/f0", [.stall(afterBytes: 40_000)])
    let scratch = try Scratch()
    defer { scratch.remove() }
    let state = scratch.file("state")
    var configuration = scratch.configuration()
    configuration.stallTimeout = patience
    let first = try DownloadManager(
      stateDirectory: state, maximumConcurrent: 1, configuration: configuration)
    let id = try await first.add(
      server.baseURL.appendingPathComponent("f0"), destination: scratch.file("out0"))
    let queued = try await first.add(
      server.baseURL.appendingPathComponent("f1"), destination: scratch.file("out1"))
    // Let some bytes arrive, then pause: the state directory holds the rest.
    await waitForProgress(first, id, 40_000)
    try await first.pause(id)
    try await first.pause(queued)
    while await first.tasks().contains(where: { $0.state == .running }) {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(await first.tasks().map(\.state) == [.paused, .paused])

    server.setFaults(path: "/f0", [])
    let second = try DownloadManager(
      stateDirectory: state, maximumConcurrent: 2, configuration: scratch.configuration())
    #expect(await second.tasks().map(\.id) == [id, queued])
    try await second.resume(id)
    try await second.resume(queued)
    await second.waitUntilIdle()
    #expect(await second.tasks().map(\.state) == [.completed, .completed])
    #expect(try Data(contentsOf: scratch.file("out0")) == bodies[0])
    #expect(try Data(contentsOf: scratch.file("out1")) == bodies[1])
    // The first file continued from where it was paused.
    let ranges = server.requests(path: "/f0").map { $0.header("Range") }
    #expect(ranges.count == 2)
    #expect(ranges.first == .some(nil))
    #expect(ranges.last??.hasPrefix("bytes=") == true)
  }

  @Test("Cancelling forgets a task and deletes its partial file and resume data")
  func cancel() async throws {
    let (server, _) = try servers(files: 1)
    defer { server.stop() }
    server.setFaults(path: "/f0", [.stall(afterBytes: 20_000)])
    let scratch = try Scratch()
    defer { scratch.remove() }
    let state = scratch.file("state")
    var configuration = scratch.configuration()
    configuration.stallTimeout = patience
    let manager = try DownloadManager(stateDirectory: state, configuration: configuration)
    let id = try await manager.add(
      server.baseURL.appendingPathComponent("f0"), destination: scratch.file("out0"))
    await waitForProgress(manager, id, 20_000)
    let partial = try #require(await manager.tasks().first?.partialFile)
    try await manager.cancel(id)
    #expect(await manager.tasks().isEmpty)
    #expect(!FileManager.default.fileExists(atPath: partial))
    #expect(
      !FileManager.default.fileExists(atPath: state.appendingPathComponent("\(id).resumedata").path)
    )
    #expect(!FileManager.default.fileExists(atPath: scratch.file("out0").path))
  }

  @Test(
    "A task list that does not read is an error saying where and what, never an empty list",
    arguments: [
      ("[{\"id\":", "is not a task list: Unexpected end of file during JSON parse."),
      (
        "[1]",
        "is not a task list: [0]: Expected to decode Dictionary<String, Any> but found number instead."
      ),
      ("[{}]", "is not a task list: [0]: no \"id\""),
      (
        "[{\"id\":\"a\",\"url\":\"u\",\"destination\":\"d\",\"state\":\"qeued\",\"bytes\":0}]",
        "is not a task list: [0].state: Cannot initialize TaskState from invalid String value qeued"
      ),
    ])
  func unreadableList(text: String, message: String) throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let state = scratch.file("state")
    try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    let list = state.appendingPathComponent("tasks.json")
    try Data(text.utf8).write(to: list)
    #expect(
      Result { () throws(DownloadError) in try DownloadManager(stateDirectory: state) }
        .map { _ in "made" } == .failure(DownloadError(.io, "\(list.path) \(message)")))
  }

  @Test(
    "A task list that is not a file is refused, not waited on nor taken for empty",
    arguments: ["directory", "FIFO"])
  func listNotAFile(kind: String) throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let state = scratch.file("state")
    try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    let list = state.appendingPathComponent("tasks.json").path
    if kind == "directory" {
      try #require(mkdir(list, 0o700) == 0)
    } else {
      try #require(mkfifo(list, 0o600) == 0)
      // A writer that ends the FIFO at once: were it read, the list would be empty and the
      // error another, instead of the test waiting for ever.
      Thread.detachNewThread {
        let descriptor = open(list, O_WRONLY | O_CLOEXEC)
        if descriptor >= 0 { close(descriptor) }
      }
    }
    #expect(
      Result { () throws(DownloadError) in try DownloadManager(stateDirectory: state) }
        .map { _ in "made" }
        == .failure(DownloadError(.io, "cannot read the task list \(list): not a regular file")))
  }

  @Test("A state directory that is a file is named as such")
  func stateDirectoryIsAFile() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = scratch.file("state")
    try Data("x".utf8).write(to: file)
    #expect(
      Result { () throws(DownloadError) in try DownloadManager(stateDirectory: file) }
        .map { _ in "made" }
        == .failure(DownloadError(.io, "the state directory \(file.path) is not a directory")))
  }

  @Test("A task that cannot be written to the list is not added, and says why")
  func listNotWritable() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let state = scratch.file("state")
    try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    let list = state.appendingPathComponent("tasks.json")
    // A link into a directory that is not there: read, no list yet; written, no place for it.
    try FileManager.default.createSymbolicLink(
      atPath: list.path, withDestinationPath: "missing/tasks.json")
    let manager = try DownloadManager(stateDirectory: state, startsAutomatically: false)
    let url = URL(string: "http://127.0.0.1:9/file")!
    await #expect(
      throws: DownloadError(
        .io, "cannot write the task list \(list.path): No such file or directory")
    ) {
      try await manager.add(url, destination: scratch.file("out"))
    }
    #expect(await manager.tasks().isEmpty)
  }

  @Test("A second URL to a task's destination is refused; the same URL gives the same task")
  func duplicateDestination() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let manager = try DownloadManager(
      stateDirectory: scratch.file("state"), startsAutomatically: false)
    let first = URL(string: "http://127.0.0.1:9/a")!
    let id = try await manager.add(first, destination: scratch.file("out"))
    // The same place spelled otherwise.
    let respelled = scratch.file("sub/../out")
    #expect(try await manager.add(first, destination: respelled) == id)
    await #expect(
      throws: DownloadError(
        .duplicateDestination,
        "\(scratch.file("out").standardizedFileURL.path) is already the destination of task "
          + "\(id) (http://127.0.0.1:9/a); cancel that task first, or choose another file")
    ) {
      try await manager.add(URL(string: "http://127.0.0.1:9/b")!, destination: respelled)
    }
    #expect(await manager.tasks().map(\.id) == [id])
    try await manager.cancel(id)
    let other = try await manager.add(
      URL(string: "http://127.0.0.1:9/b")!, destination: scratch.file("out"))
    #expect(await manager.tasks().map(\.id) == [other])
  }
}
