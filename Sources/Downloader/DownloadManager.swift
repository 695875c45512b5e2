import Foundation
import OutputFiles
import ResumeData

/// Many downloads: a concurrency limit with a waiting queue, groups with aggregate progress and a
/// completion when all their members end, duplicate requests not started twice, and the task list
/// persisted in a state directory and restored on launch.
///
/// Each task keeps its partial file in `STATE/partial/` and its resume data in
/// `STATE/ID.resumedata` (brought up to date while it runs), and the list in `STATE/tasks.json`, so
/// a process killed at any moment continues every unfinished task when a manager is made on the
/// same directory again.
public actor DownloadManager {
  /// A task's identifier (stable across launches).
  public typealias TaskID = String

  /// Where a task is.
  public enum TaskState: String, Sendable, Hashable, Codable {
    /// Waiting for a free slot.
    case queued
    /// Transferring.
    case running
    /// Paused; resumes when asked.
    case paused
    /// Done: the file is at its destination.
    case completed
    /// Failed; resumable when asked (its resume data is kept).
    case failed
  }

  /// What the manager knows of one task.
  public struct TaskRecord: Sendable, Hashable, Codable {
    /// The identifier.
    public var id: TaskID
    /// The URL first asked for.
    public var url: String
    /// Where the finished file goes.
    public var destination: String
    /// The group it belongs to, if any.
    public var group: String?
    /// Where it is.
    public var state: TaskState
    /// Bytes on disk, as last reported.
    public var bytes: Int64
    /// The complete length, when known.
    public var expected: Int64?
    /// The digest of the finished file, or the last error's message.
    public var detail: String?
    /// The partial file, once the task has started.
    public var partialFile: String?
  }

  /// An event of one task, or the end of a group.
  public enum Event: Sendable, Hashable {
    /// A task's event.
    case task(TaskID, DownloadEvent)
    /// Every member of the group has ended (completed or failed); how many of each.
    case groupFinished(String, completed: Int, failed: Int)
  }

  /// The events of every task, in order per task.
  public nonisolated let events: AsyncStream<Event>
  private let eventSink: AsyncStream<Event>.Continuation
  /// The state directory.
  public nonisolated let stateDirectory: URL
  private let maximumConcurrent: Int
  // Whether tasks start as slots free up: from the start, or once `schedule()` is called.
  private var active: Bool
  private let configuration: DownloadConfiguration
  private var records: [TaskID: TaskRecord] = [:]
  private var order: [TaskID] = []
  private var running: [TaskID: Download] = [:]
  private var runs: [TaskID: Task<Void, Never>] = [:]
  private var groupWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]

  /// A manager over a state directory; unfinished tasks found there are queued again (paused ones
  /// stay paused).
  ///
  /// - Parameters:
  ///   - stateDirectory: where the task list, resume data and partial files live.
  ///   - maximumConcurrent: how many tasks transfer at once.
  ///   - configuration: the settings of every task (its `temporaryDirectory` and `stateFile` are
  ///     set per task inside the state directory).
  ///   - startsAutomatically: whether `add` and `resume` start tasks at once; when false, only
  ///     `schedule()` does (to edit a task list without transferring).
  /// - Throws: `DownloadError` with `.io` when the directory cannot be made or its list not read.
  public init(
    stateDirectory: URL, maximumConcurrent: Int = 4, configuration: DownloadConfiguration? = nil,
    startsAutomatically: Bool = true
  ) throws(DownloadError) {
    self.stateDirectory = stateDirectory
    self.maximumConcurrent = max(1, maximumConcurrent)
    active = startsAutomatically
    var base =
      configuration
      ?? DownloadConfiguration(temporaryDirectory: stateDirectory.appendingPathComponent("partial"))
    base.temporaryDirectory = stateDirectory.appendingPathComponent("partial")
    self.configuration = base
    (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    var status = stat()
    if stat(stateDirectory.path, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
      // Foundation would say "The operation could not be completed".
      throw DownloadError(.io, "the state directory \(stateDirectory.path) is not a directory")
    }
    do {
      try FileManager.default.createDirectory(
        at: base.temporaryDirectory, withIntermediateDirectories: true)
    } catch {
      throw DownloadError(
        .io, "cannot use the state directory \(stateDirectory.path): \(systemReason(error))")
    }
    let list = stateDirectory.appendingPathComponent("tasks.json")
    if let data = try Self.readList(list) {
      for var record in try Self.decodeList(data, from: list) {
        if record.state == .running { record.state = .queued }
        records[record.id] = record
        order.append(record.id)
      }
    }
  }

  /// The task list's bytes, or nil when there is none yet. Any other failure to read it is an
  /// error: taken for an empty list, it would be replaced by the next task added.
  private static func readList(_ file: URL) throws(DownloadError) -> Data? {
    func failure(_ code: Int32) -> DownloadError {
      DownloadError(
        .io, "cannot read the task list \(file.path): \(String(cString: strerror(code)))")
    }
    // Not waiting on a FIFO's writer: a list is a regular file, checked once open.
    let descriptor = open(file.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else {
      if errno == ENOENT { return nil }
      throw failure(errno)
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw failure(errno) }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw DownloadError(.io, "cannot read the task list \(file.path): not a regular file")
    }
    do {
      return try DescriptorReads.readAll(descriptor)
    } catch {
      throw failure(error.code)
    }
  }

  /// The tasks of a task list, or where and why it is not one.
  private static func decodeList(_ data: Data, from file: URL) throws(DownloadError)
    -> [TaskRecord]
  {
    do {
      return try JSONDecoder().decode([TaskRecord].self, from: data)
    } catch let error as DecodingError {
      throw DownloadError(
        .io, "\(file.path) is not a task list: \(describe(error, in: data))")
    } catch {
      throw DownloadError(.io, "\(file.path) is not a task list: \(systemReason(error))")
    }
  }

  /// Where in the list a decoding error is, and what it is: "[2].state: Cannot initialize
  /// TaskState from invalid String value rnning", or for JSON that does not parse, the parser's
  /// own account of where ("Invalid value around character 8."), which the decoder drops.
  private static func describe(_ error: DecodingError, in data: Data) -> String {
    let context: DecodingError.Context
    switch error {
    case .typeMismatch(_, let found), .valueNotFound(_, let found), .dataCorrupted(let found):
      context = found
    case .keyNotFound(let key, let found):
      return path(found.codingPath) + "no \"\(key.stringValue)\""
    @unknown default:
      return "\(error)"
    }
    if context.codingPath.isEmpty {
      do {
        _ = try JSONSerialization.jsonObject(with: data)
      } catch {
        return (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
          ?? context.debugDescription
      }
    }
    return path(context.codingPath) + context.debugDescription
  }

  /// A coding path as a key path with a colon after it ("[2].state: "), or nothing at the top.
  private static func path(_ codingPath: [any CodingKey]) -> String {
    guard !codingPath.isEmpty else { return "" }
    let steps = codingPath.map { key in key.intValue.map { "[\($0)]" } ?? "." + key.stringValue }
    let text = steps.joined()
    return (text.hasPrefix(".") ? String(text.dropFirst()) : text) + ": "
  }

  /// Adds a download, or returns the task that already fetches (or fetched) the same URL to the
  /// same place: a duplicate is never started twice.
  ///
  /// - Returns: the task's identifier.
  /// - Throws: `DownloadError` with `.duplicateDestination` when another URL's task has the same
  ///   destination (the two would finish into one file, the last one's bytes kept);
  ///   `.io` when the task list cannot be written. The task is then not added.
  @discardableResult
  public func add(_ url: URL, destination: URL, group: String? = nil) throws(DownloadError)
    -> TaskID
  {
    let destinationPath = destination.standardizedFileURL.path
    if let existing = order.first(where: { records[$0]?.destination == destinationPath }),
      let record = records[existing]
    {
      guard record.url == url.absoluteString else {
        throw DownloadError(
          .duplicateDestination,
          "\(destinationPath) is already the destination of task \(existing) (\(record.url)); "
            + "cancel that task first, or choose another file")
      }
      return existing
    }
    let id = UUID().uuidString.lowercased()
    records[id] = TaskRecord(
      id: id, url: url.absoluteString, destination: destinationPath, group: group, state: .queued,
      bytes: 0)
    order.append(id)
    do {
      try save()
    } catch {
      records[id] = nil
      order.removeLast()
      throw error
    }
    eventSink.yield(.task(id, .queued))
    fill()
    return id
  }

  /// Starts queued tasks up to the concurrency limit, and from now on whenever a slot frees up.
  public func schedule() {
    active = true
    fill()
  }

  private func fill() {
    guard active else { return }
    for id in order where running.count < maximumConcurrent {
      guard records[id]?.state == .queued, running[id] == nil else { continue }
      start(id)
    }
  }

  /// Every task, in the order added. A task no download of this manager is running shows the
  /// bytes its resume data records as being on disk (a run killed mid-way wrote them there, not
  /// to the list): the prefix, or for a segmented download every segment held, of its total.
  public func tasks() -> [TaskRecord] {
    order.compactMap { id -> TaskRecord? in
      guard var record = records[id] else { return nil }
      if running[id] == nil, record.state != .completed,
        let data = try? Data(contentsOf: stateFile(id)),
        let blob = try? ResumeData(decoding: data)
      {
        if let map = try? blob.segmentMap() {
          record.bytes = map.bytesOnDisk
          record.expected = map.total
        } else if let bytes = blob.bytesReceived {
          record.bytes = bytes
        }
      }
      return record
    }
  }

  /// Pauses a task (running or queued); its resume data is kept.
  ///
  /// - Throws: `DownloadError` with `.io` when a queued task's new state cannot be written to the
  ///   task list; it then stays queued.
  public func pause(_ id: TaskID) async throws(DownloadError) {
    if let download = running[id] {
      await download.pause()
    } else if records[id]?.state == .queued {
      try change(id, to: .paused)
    }
  }

  /// Queues a paused or failed task again.
  ///
  /// - Throws: `DownloadError` with `.io` when the task list cannot be written; the task then
  ///   stays as it was.
  public func resume(_ id: TaskID) throws(DownloadError) {
    guard let state = records[id]?.state, state == .paused || state == .failed else { return }
    try change(id, to: .queued)
    fill()
  }

  /// Sets a task's state, and writes the list; undone when the list cannot be written.
  private func change(_ id: TaskID, to state: TaskState) throws(DownloadError) {
    guard let before = records[id]?.state else { return }
    records[id]?.state = state
    do {
      try save()
    } catch {
      records[id]?.state = before
      throw error
    }
  }

  /// Stops a task and forgets it: its partial file and resume data are deleted.
  ///
  /// - Throws: `DownloadError` with `.io` when the task list cannot be written: the task is gone
  ///   from this manager and its files deleted, but a manager made on the directory again finds
  ///   it and starts it over.
  public func cancel(_ id: TaskID) async throws(DownloadError) {
    let partial = records[id]?.partialFile
    if let download = running[id] {
      // Forget it first, so that its ending does not bring it back; then wait for it to end, so
      // that nothing it writes outlives the deletion below.
      records[id] = nil
      await download.pause()
      await runs[id]?.value
    }
    if let partial { try? FileManager.default.removeItem(atPath: partial) }
    records[id] = nil
    order.removeAll { $0 == id }
    try? FileManager.default.removeItem(at: stateFile(id))
    defer { fill() }
    try save()
  }

  /// The sum of the bytes and of the known lengths of a group's members.
  public func progress(ofGroup group: String) -> (bytes: Int64, expected: Int64?) {
    let members = order.compactMap { records[$0] }.filter { $0.group == group }
    let bytes = members.reduce(0) { $0 + $1.bytes }
    let lengths = members.map(\.expected)
    let expected = lengths.allSatisfy { $0 != nil } ? lengths.reduce(0) { $0 + ($1 ?? 0) } : nil
    return (bytes, expected)
  }

  /// Waits until every member of a group has ended (completed or failed).
  public func waitForGroup(_ group: String) async {
    if groupEnded(group) { return }
    await withCheckedContinuation { groupWaiters[group, default: []].append($0) }
  }

  /// Waits until no task is queued or running.
  public func waitUntilIdle() async {
    while order.contains(where: { records[$0]?.state == .queued || records[$0]?.state == .running })
    {
      try? await Task.sleep(for: .milliseconds(20))
    }
  }

  // MARK: Running

  private func stateFile(_ id: TaskID) -> URL {
    stateDirectory.appendingPathComponent("\(id).resumedata")
  }

  private func start(_ id: TaskID) {
    guard let record = records[id], let url = URL(string: record.url) else { return }
    var configuration = configuration
    configuration.stateFile = stateFile(id)
    let destination = URL(fileURLWithPath: record.destination)
    let download: Download
    do {
      if let saved = try? Data(contentsOf: stateFile(id)) {
        download = try Download(
          resumeData: saved, destination: destination, configuration: configuration)
      } else {
        download = try Download(url: url, destination: destination, configuration: configuration)
      }
    } catch {
      finished(id, .failed(error, resumeData: nil))
      return
    }
    running[id] = download
    records[id]?.state = .running
    records[id]?.partialFile = download.partialFile.path
    // The list is written whole each time: a write that fails here is made good by the next
    // one, and the task's own resume data is kept apart.
    try? save()
    Task {
      for await event in download.events { self.forward(id, event) }
    }
    runs[id] = Task {
      let result = await download.run()
      self.finished(id, result)
    }
  }

  private func forward(_ id: TaskID, _ event: DownloadEvent) {
    // Events reach here by a task of their own: a last progress report may come after the end.
    if case .progress(let progress) = event, records[id]?.state != .completed {
      records[id]?.bytes = progress.bytes
      records[id]?.expected = progress.expected
    }
    eventSink.yield(.task(id, event))
  }

  private func finished(_ id: TaskID, _ result: DownloadResult) {
    running[id] = nil
    runs[id] = nil
    guard records[id] != nil else {
      fill()
      return
    }
    switch result {
    case .completed(_, let digest):
      records[id]?.state = .completed
      records[id]?.detail = digest
      if let path = records[id]?.destination,
        let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber
      {
        records[id]?.bytes = size.int64Value
        records[id]?.expected = size.int64Value
      }
    case .paused:
      records[id]?.state = .paused
    case .failed(let error, _):
      records[id]?.state = .failed
      records[id]?.detail = error.description
    }
    // As in `start`: the next write carries this state too.
    try? save()
    if let group = records[id]?.group, groupEnded(group) {
      let members = order.compactMap { records[$0] }.filter { $0.group == group }
      eventSink.yield(
        .groupFinished(
          group, completed: members.filter { $0.state == .completed }.count,
          failed: members.filter { $0.state == .failed }.count))
      for waiter in groupWaiters.removeValue(forKey: group) ?? [] { waiter.resume() }
    }
    fill()
  }

  private func groupEnded(_ group: String) -> Bool {
    order.compactMap { records[$0] }.filter { $0.group == group }.allSatisfy {
      $0.state == .completed || $0.state == .failed
    }
  }

  /// Writes the task list atomically (`OutputTarget.write`).
  private func save() throws(DownloadError) {
    let file = stateDirectory.appendingPathComponent("tasks.json")
    let data: Data
    do {
      data = try JSONEncoder().encode(order.compactMap { records[$0] })
    } catch {
      // Strings and numbers only: encoding cannot fail.
      preconditionFailure("the task list does not encode: \(error)")
    }
    let written = data.withUnsafeBytes { bytes in
      Result { () throws(OutputTargetError) in try OutputTarget.write(bytes, to: file.path) }
    }
    if case .failure(let error) = written {
      throw DownloadError(.io, "cannot write the task list \(file.path): \(error.message)")
    }
  }
}
