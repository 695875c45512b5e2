import Dispatch
import Downloader
import Foundation

/// `resumedata downloads ACTION --state-dir DIR …`: the task list of a state directory.
enum DownloadsCommand {
  /// The text `resumedata downloads --help` prints.
  static let help = """
    USAGE: resumedata downloads list --state-dir DIR [--json]
           resumedata downloads add URL -o FILE --state-dir DIR [--group NAME]
           resumedata downloads run --state-dir DIR [--jobs N]
           resumedata downloads pause|resume|cancel ID --state-dir DIR

    Manages the downloads of a state directory: its task list (tasks.json), each task's
    resume data and partial file. `add` queues a download (the same URL to the same FILE is
    not added twice); `run` transfers every queued task, N at a time, until none is left
    (Ctrl-C pauses them all, writes their resume data and exits 130; a killed run loses
    nothing: the next run continues every unfinished task); `pause`, `resume` and `cancel`
    change a task that no run is transferring (cancel deletes its partial file).

    OPTIONS:
      --state-dir DIR   The state directory (required).
      -o, --output FILE Where `add` puts the finished file.
      --group NAME      A group for `add`; `list` shows each group's total.
      --jobs N          How many tasks `run` transfers at once (default: 4).
      --json            `list` as one JSON object.
      -h, --help        Show this help.

    """

  /// Runs `resumedata downloads`.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(
        arguments, help: help, options: ["--state-dir", "-o", "--output", "--group", "--jobs"],
        flags: ["--json"], streams: streams)
    else { return }
    guard let action = parsed.positionals.first else {
      throw .usage("downloads needs an action: list, add, run, pause, resume or cancel")
    }
    guard let directory = parsed.value("--state-dir") else {
      throw .usage("downloads needs --state-dir DIR")
    }
    var jobs = 4
    if let value = parsed.value("--jobs") {
      guard let count = Int(value), (1...64).contains(count) else {
        throw .usage("--jobs needs a number from 1 to 64")
      }
      jobs = count
    }
    let manager: DownloadManager
    do {
      manager = try DownloadManager(
        stateDirectory: URL(fileURLWithPath: directory, isDirectory: true),
        maximumConcurrent: jobs, startsAutomatically: false)
    } catch {
      throw CommandError(.failure, error.message, file: directory)
    }
    let rest = Array(parsed.positionals.dropFirst())
    switch action {
    case "list":
      guard rest.isEmpty else { throw .usage("list takes no argument") }
      let tasks = blocking { await manager.tasks() }
      streams.print(parsed.has("--json") ? json(tasks) : text(tasks))
    case "add":
      guard rest.count == 1, let url = URL(string: rest[0]) else {
        throw .usage("add needs one URL")
      }
      guard let output = parsed.output else { throw .usage("add needs -o FILE") }
      let group = parsed.value("--group")
      let destination = URL(fileURLWithPath: output)
      let id = blocking { await manager.add(url, destination: destination, group: group) }
      streams.print(id)
    case "run":
      try runAll(manager, streams: streams)
    case "pause", "resume", "cancel":
      guard rest.count == 1 else { throw .usage("\(action) needs one task ID") }
      let id = rest[0]
      let known = blocking { await manager.tasks().contains { $0.id == id } }
      guard known else { throw CommandError(.failure, "no task \(id) in \(directory)") }
      blocking {
        switch action {
        case "pause": await manager.pause(id)
        case "resume": await manager.resume(id)
        default: await manager.cancel(id)
        }
      }
    default:
      throw .usage("unknown action '\(action)' (list, add, run, pause, resume, cancel)")
    }
  }

  /// Transfers every queued task; Ctrl-C pauses them all.
  private static func runAll(_ manager: DownloadManager, streams: Streams) throws(CommandError) {
    let interrupted = InterruptFlag()
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler {
      interrupted.set()
      Task {
        for task in await manager.tasks() where task.state == .running || task.state == .queued {
          await manager.pause(task.id)
        }
      }
    }
    source.resume()
    Task {
      for await event in manager.events {
        switch event {
        case .task(let id, .completed(let file, _)): streams.print("\(id) completed \(file.path)")
        case .task(let id, .failed(let error, _)): streams.print("\(id) failed: \(error)")
        case .task(let id, .restarted(let reason)): streams.printError("\(id) restarted: \(reason)")
        case .groupFinished(let group, let completed, let failed):
          streams.print("group \(group): \(completed) completed, \(failed) failed")
        default: break
        }
      }
    }
    let failed = blocking { () -> Bool in
      await manager.schedule()
      await manager.waitUntilIdle()
      return await manager.tasks().contains { $0.state == .failed }
    }
    source.cancel()
    signal(SIGINT, SIG_DFL)
    if interrupted.isSet {
      streams.printError("Paused; run again to continue.")
      throw CommandError(.interrupted, "paused")
    }
    if failed { throw CommandError(.failure, "some downloads failed (see `downloads list`)") }
  }

  static func text(_ tasks: [DownloadManager.TaskRecord]) -> String {
    guard !tasks.isEmpty else { return "no downloads" }
    return tasks.map { task in
      let size = task.expected.map { "\(task.bytes)/\($0)" } ?? "\(task.bytes)"
      var line =
        "\(task.id)  \(task.state.rawValue)  \(size) bytes  \(task.url) -> \(task.destination)"
      if let group = task.group { line += "  [\(group)]" }
      if let detail = task.detail { line += "  \(detail)" }
      return line
    }.joined(separator: "\n")
  }

  static func json(_ tasks: [DownloadManager.TaskRecord]) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let body = (try? encoder.encode(tasks)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    return "{\"schemaVersion\": 1, \"tasks\": \(body)}"
  }

  /// Runs async work from the synchronous command, waiting for its result.
  private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
      box.value = await body()
      done.signal()
    }
    done.wait()
    return box.value!
  }
}

/// A value handed from a task to a waiting thread; the semaphore orders the write and the read.
private final class Box<T>: @unchecked Sendable {
  var value: T?
}

/// Whether Ctrl-C was pressed.
private final class InterruptFlag: @unchecked Sendable {
  private let lock = NSLock()
  private var flag = false
  var isSet: Bool { lock.withLock { flag } }
  func set() { lock.withLock { flag = true } }
}
