import Dispatch
import Downloader
import Foundation
import OutputFiles

/// `resumedata downloads ACTION --state-dir DIR …`: the task list of a state directory.
enum DownloadsCommand {
  /// The text `resumedata downloads --help` prints.
  static let help = """
    OVERVIEW: List, add, run, pause, resume or cancel the downloads of a state directory.

    Manages the downloads of a state directory: its task list (tasks.json), each task's
    resume data and partial file. `add` queues a download (the same URL to the same FILE is
    not added twice); `run` transfers every queued task, N at a time, until none is left
    (Ctrl-C pauses them all, writes their resume data and exits 130; a killed run loses
    nothing: the next run continues every unfinished task); `pause`, `resume` and `cancel`
    change a task that no run is transferring (cancel deletes its partial file).

    USAGE: resumedata downloads list --state-dir DIR [--json]
           resumedata downloads add URL -o FILE --state-dir DIR [--group NAME] [--json]
           resumedata downloads run --state-dir DIR [--jobs N] [--engine curl|urlsession]
                                    [--ca-cert FILE] [--json]
           resumedata downloads pause|resume|cancel ID --state-dir DIR [--json]

    ARGUMENTS:
      list              Show every task: ID, state, bytes, URL, file, group.
      add URL           Queue a download of URL; prints its task ID.
      run               Transfer every queued task.
      pause ID          Pause a queued task.
      resume ID         Queue a paused or failed task again.
      cancel ID         Cancel a task and delete its partial file.
      (`resumedata downloads ACTION --help` shows one action's help.)

    OPTIONS:
      --state-dir DIR   The state directory (required).
      -o, --output FILE Where `add` puts the finished file.
      --group NAME      A group for `add`; `list` shows each group's total.
      --jobs N          How many tasks `run` transfers at once (default: 4).
      --engine ENGINE   The HTTP engine `run` uses: curl or urlsession (as for
                        `resumedata download`).
      --ca-cert FILE    Certificate authorities `run` trusts for https (as for
                        `resumedata download`).
      --json            Print one JSON object (see docs/cli/downloads.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 success, 1 a task failed or is unknown, 64 usage error, 130 paused by Ctrl-C.

    EXAMPLES:
      resumedata downloads add https://example.com/files/archive.zip -o archive.zip \\
          --state-dir downloads --group nightly
      resumedata downloads run --state-dir downloads --jobs 2
      resumedata downloads list --state-dir downloads --json

    """

  /// The help of each action, for `resumedata downloads ACTION --help`.
  static let actions: [ActionSpec] =
    [
      ActionSpec(
        name: "list",
        help: """
          OVERVIEW: Show the downloads of a state directory.

          Prints one line a task: its ID, state, bytes received (of the total, when known),
          URL, file, group and what went wrong, or "no downloads".

          USAGE: resumedata downloads list --state-dir DIR [--json]

          OPTIONS:
            --state-dir DIR   The state directory (required).
            --json            Print {"schemaVersion": 1, "tasks": [...]} instead.
            -h, --help        Show this help.

          EXAMPLES:
            resumedata downloads list --state-dir downloads

          """),
      ActionSpec(
        name: "add",
        help: """
          OVERVIEW: Queue a download in a state directory.

          Adds a task that downloads URL to FILE and prints its ID; the same URL to the same
          FILE is not added twice (its ID is printed again), and another URL to a FILE a task
          already has is refused (exit 1). Nothing is transferred until
          `resumedata downloads run`.

          USAGE: resumedata downloads add URL -o FILE --state-dir DIR [--group NAME] [--json]

          ARGUMENTS:
            URL               An http or https URL.

          OPTIONS:
            -o, --output FILE Where the finished file goes (required).
            --state-dir DIR   The state directory (required).
            --group NAME      A group: `run` reports when all of a group's tasks are done.
            --json            Print {"schemaVersion": 1, "id", "task": {...}} instead of
                              the ID.
            -h, --help        Show this help.

          EXAMPLES:
            resumedata downloads add https://example.com/files/archive.zip -o archive.zip \\
                --state-dir downloads

          """),
      ActionSpec(
        name: "run",
        help: """
          OVERVIEW: Transfer every queued download of a state directory.

          Transfers the queued tasks N at a time until none is left, printing a line when a
          task completes or fails and when a group is done. Ctrl-C pauses them all, writes
          their resume data and exits 130; a killed run loses nothing.

          USAGE: resumedata downloads run --state-dir DIR [--jobs N] [--engine ENGINE]
                                          [--ca-cert FILE] [--json]

          OPTIONS:
            --state-dir DIR   The state directory (required).
            --jobs N          How many tasks to transfer at once, 1 to 64 (default: 4).
            --engine ENGINE   curl or urlsession (as for `resumedata download`).
            --ca-cert FILE    Trust these certificate authorities for https (as for
                              `resumedata download`).
            --json            Print the final task list as one JSON object instead of the
                              lines.
            -h, --help        Show this help.

          EXIT STATUS:
            0 every task completed, 1 some failed, 64 usage error, 130 paused by Ctrl-C.

          EXAMPLES:
            resumedata downloads run --state-dir downloads --jobs 2

          """),
    ]
    + [
      ("pause", "Pause a queued download."),
      ("resume", "Queue a paused or failed download again."),
      ("cancel", "Cancel a download and delete its partial file."),
    ].map { action, overview in
      ActionSpec(
        name: action,
        help: """
          OVERVIEW: \(overview)

          Changes a task that no run is transferring; prints nothing.

          USAGE: resumedata downloads \(action) ID --state-dir DIR [--json]

          ARGUMENTS:
            ID                The task's ID, as `add` and `list` print it.

          OPTIONS:
            --state-dir DIR   The state directory (required).
            --json            Print {"schemaVersion": 1, "id", "task"}: the task
                              afterwards (null once cancelled).
            -h, --help        Show this help.

          EXAMPLES:
            resumedata downloads \(action) 3f2a9c1e-0b6d-4c1a-9e57-2d8f7a41b0c3 \\
                --state-dir downloads

          """)
    }

  /// The entry of `downloads` in the command table.
  static let spec = CommandSpec(
    name: "downloads",
    summary: "List, add, run, pause, resume or cancel the downloads of a state directory.",
    help: help,
    options: [
      .option("--state-dir", value: .directory), .option("-o", "--output", value: .file),
      .option("--group", value: .text), .option("--jobs", value: .number),
      DownloadCommand.engineOption, DownloadCommand.caCertOption, .flag("--json"),
    ],
    arguments: .text, actions: actions, run: run(_:streams:))

  /// Runs `resumedata downloads`.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    guard let action = parsed.positionals.first else {
      throw .usage("downloads needs an action: list, add, run, pause, resume or cancel")
    }
    // A mistyped action is named before anything else is asked for or touched on disk.
    guard actions.contains(where: { $0.name == action }) else {
      throw .usage(
        "unknown action '\(action)' (list, add, run, pause, resume, cancel)"
          + Suggestions.hint(for: action, in: actions.map(\.name)))
    }
    let wantsJSON = parsed.has("--json")
    guard let directory = parsed.value("--state-dir") else {
      throw .usage("downloads needs --state-dir DIR")
    }
    try Files.requireDirectory(directory, option: "--state-dir")
    var jobs = 4
    if let value = parsed.value("--jobs") {
      guard let count = Int(value), (1...64).contains(count) else {
        throw .usage("--jobs needs a number from 1 to 64")
      }
      jobs = count
    }
    // One command at a time changes a state directory: two runs would fetch the same tasks into
    // the same partial files, and a task added while a run goes on would be lost when the run
    // next writes its list. Listing reads a list that is only ever replaced whole.
    // Only `run` transfers anything: an engine or authority given to another action would be
    // silently ignored.
    for option in ["--engine", "--ca-cert"] where parsed.value(option) != nil && action != "run" {
      throw .usage("\(option) applies to `downloads run` only")
    }
    let stateURL = URL(fileURLWithPath: directory, isDirectory: true)
    var configuration = DownloadConfiguration(
      temporaryDirectory: stateURL.appendingPathComponent("partial"))
    if action == "run" { try DownloadCommand.applyEngine(parsed, to: &configuration) }
    let lock = action == "list" ? nil : try lockStateDirectory(directory)
    defer { withExtendedLifetime(lock) {} }
    let manager: DownloadManager
    do {
      manager = try DownloadManager(
        stateDirectory: stateURL, maximumConcurrent: jobs, configuration: configuration,
        startsAutomatically: false)
    } catch {
      throw CommandError(.failure, error.message, file: directory)
    }
    let rest = Array(parsed.positionals.dropFirst())
    switch action {
    case "list":
      guard rest.isEmpty else { throw .usage("list takes no argument") }
      let tasks = blocking { await manager.tasks() }
      streams.print(wantsJSON ? json(tasks) : text(tasks))
    case "add":
      guard rest.count == 1, let url = URL(string: rest[0]) else {
        throw .usage("add needs one URL")
      }
      guard let output = parsed.output else { throw .usage("add needs -o FILE") }
      let group = parsed.value("--group")
      let destination = URL(fileURLWithPath: output)
      _ = try Files.downloadTarget(output)
      let id = try writing(directory) {
        () async throws(DownloadError) -> String in
        try await manager.add(url, destination: destination, group: group)
      }
      streams.print(wantsJSON ? json(task: id, in: manager) : id)
    case "run":
      try runAll(manager, json: wantsJSON, streams: streams)
    case "pause", "resume", "cancel":
      guard rest.count == 1 else { throw .usage("\(action) needs one task ID") }
      let id = rest[0]
      let known = blocking { await manager.tasks().contains { $0.id == id } }
      guard known else { throw CommandError(.failure, "no task \(id) in \(directory)") }
      try writing(directory) { () async throws(DownloadError) in
        switch action {
        case "pause": try await manager.pause(id)
        case "resume": try await manager.resume(id)
        default: try await manager.cancel(id)
        }
      }
      if wantsJSON { streams.print(json(task: id, in: manager)) }
    default:
      // Every action in `actions` has a case above.
      preconditionFailure("unhandled action \(action)")
    }
  }

  /// `{"schemaVersion": 1, "id": ID, "task": {...} | null}`: one task's record as `list --json`
  /// prints it, null once it is gone (cancelled).
  private static func json(task id: String, in manager: DownloadManager) -> String {
    let record = blocking { await manager.tasks().first { $0.id == id } }
    return "{\"schemaVersion\": 1, \"id\": \(JSON.string(id)), \"task\": "
      + (record.flatMap(encoded) ?? "null") + "}"
  }

  /// A value as compact JSON with sorted keys, the form `list --json` uses for its tasks.
  private static func encoded<T: Encodable>(_ value: T) -> String? {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Transfers every queued task; Ctrl-C pauses them all. With `json`, the final task list is
  /// printed as `list --json` prints it instead of a line for each event.
  private static func runAll(_ manager: DownloadManager, json: Bool, streams: Streams)
    throws(CommandError)
  {
    let interrupted = InterruptFlag()
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler {
      interrupted.set()
      Task {
        for task in await manager.tasks() where task.state == .running || task.state == .queued {
          // A task left queued because the list could not be written is paused by the next
          // run's Ctrl-C, or runs then: nothing is lost either way.
          interrupted.add(task.id)
          try? await manager.pause(task.id)
        }
      }
    }
    source.resume()
    Task {
      for await event in manager.events where !json {
        switch event {
        case .task(let id, .completed(let file, _)):
          streams.print(CommandError.oneLine("\(id) completed \(file.path)"))
        case .task(let id, .failed(let error, _)):
          streams.print(CommandError.oneLine("\(id) failed: \(error)"))
        case .task(let id, .restarted(let reason)):
          streams.printError(CommandError.oneLine("\(id) restarted: \(reason)"))
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
    if json { streams.print(Self.json(blocking { await manager.tasks() })) }
    if interrupted.isSet {
      // The tasks Ctrl-C paused are queued again (with their resume data), so that the next run
      // continues them, as the message says; a task paused with `downloads pause` stays paused.
      let requeued = interrupted.ids
      let stillPaused = blocking { () -> [String] in
        var left = [String]()
        let paused = Set(await manager.tasks().filter { $0.state == .paused }.map(\.id))
        for id in requeued where paused.contains(id) {
          do throws(DownloadError) {
            try await manager.resume(id)
          } catch {
            left.append(id)
          }
        }
        return left
      }
      if stillPaused.isEmpty {
        streams.printError("Paused; run again to continue.")
      } else {
        streams.printError(
          "Paused; run again to continue (first `resumedata downloads resume ID` for "
            + stillPaused.joined(separator: ", ") + ": the task list could not be written).")
      }
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
      // URLs, names and a server's words: one line each, with nothing a terminal would act on.
      return CommandError.oneLine(line)
    }.joined(separator: "\n")
  }

  static func json(_ tasks: [DownloadManager.TaskRecord]) -> String {
    "{\"schemaVersion\": 1, \"tasks\": \(encoded(tasks) ?? "[]")}"
  }

  /// `blocking`, for the manager's calls that write the task list: their error (the list cannot
  /// be written) ends the command with exit status 1.
  private static func writing<T: Sendable>(
    _ directory: String, _ body: @escaping @Sendable () async throws(DownloadError) -> T
  ) throws(CommandError) -> T {
    let result = blocking { () async -> Result<T, DownloadError> in
      do throws(DownloadError) {
        return .success(try await body())
      } catch {
        return .failure(error)
      }
    }
    switch result {
    case .success(let value): return value
    case .failure(let error): throw CommandError(.failure, error.message, file: directory)
    }
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

/// The lock a `downloads` command other than `list` holds on its state directory until it ends:
/// `DIR/downloads.lock` (`ExclusiveLock`; the file itself stays). Makes the directory if it is
/// missing; fails at once when another command holds it.
private func lockStateDirectory(_ directory: String) throws(CommandError) -> ExclusiveLock {
  do {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  } catch {
    throw CommandError(.failure, "cannot make the state directory", file: directory)
  }
  let path = (directory.hasSuffix("/") ? directory : directory + "/") + "downloads.lock"
  do {
    return try ExclusiveLock(path)
  } catch {
    switch error {
    case .held:
      throw CommandError(
        .failure,
        "another downloads command is using this state directory (a run still going?); "
          + "try again once it has ended",
        file: directory)
    case .system(let code):
      throw CommandError(
        .failure, "cannot lock \(path): \(String(cString: strerror(code)))", file: directory)
    }
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
  private var paused: [String] = []
  var isSet: Bool { lock.withLock { flag } }
  /// The tasks Ctrl-C paused, in order.
  var ids: [String] { lock.withLock { paused } }
  func set() { lock.withLock { flag = true } }
  func add(_ id: String) { lock.withLock { if !paused.contains(id) { paused.append(id) } } }
}
