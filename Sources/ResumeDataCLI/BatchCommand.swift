import Dispatch
import Foundation
import PropertyList
import ResumeData
import Synchronization

/// `resumedata batch [FILE|-...] [--jobs N] [--target T | --to GEN] …`: a stream filter over
/// NDJSON records of resume blobs, one result a record, in input order.
enum BatchCommand {
  /// The text `resumedata batch --help` prints.
  static let help = """
    OVERVIEW: Diagnose, repair or convert NDJSON streams of resume blobs, on every core,
    one result a record.

    Reads resume blobs as NDJSON, one record a line:
      {"id": ..., "blob": "<base64>"}    or    {"id": ..., "path": "FILE"}
    and writes one JSON result a line, in input order: the record's line and id, whether
    it is ok, the blob's generation, container and findings, and with --target or --to
    the repaired or converted blob (base64; or, with --in-place, the file it replaced).
    A malformed line or blob gets an error result and the stream goes on. The id may be
    any JSON value and is echoed as written (less any whitespace between its tokens);
    other members are ignored.

    Without --target or --to, each blob is diagnosed: "findings" are those of
    `resumedata inspect`. With --target, each is repaired as `resumedata repair` does;
    with --to, converted as `resumedata convert` does: "findings" are then what changed,
    and "output" holds the new blob and its own diagnosis.

    USAGE: resumedata batch [FILE|-...] [--jobs N] [--target T | --to GEN [--format F]
                            [--info-version N]] [--temp-dir DIR] [--in-place [--backup]]
                            [--max-record-bytes N] [--exit-zero]

    ARGUMENTS:
      FILE|-            NDJSON files to read in turn; - or none reads standard input.

    OPTIONS:
      --jobs N          Records processed at once (default: the number of cores). The
                        output is the same for every N; memory is bounded whatever the
                        input's length.
      --target T        Repair every blob for this system (see `resumedata repair --help`).
      --to GEN          Convert every blob to this generation (see `resumedata convert`).
      --format FORMAT   With --to: xml or binary.
      --info-version N  With --to keyed: the NSURLSessionResumeInfoVersion to write.
      --temp-dir DIR    The directory holding the partial files (sizes only).
      --in-place        Write the result of a "path" record back to its file, atomically
                        (a temporary file, then a rename), instead of into the output.
                        An unchanged blob is not rewritten.
      --backup          With --in-place: keep the original as FILE.bak first (a record
                        whose FILE.bak already holds something else fails rather than
                        lose it).
      --max-record-bytes N
                        Longest line or "path" file accepted (default 67108864); a longer
                        one gets an error result without being held in memory.
      --exit-zero       Exit 0 even when records failed (their results still say so), for
                        engines that fail a whole task on any other status.
      --json            Accepted for uniformity: the output is always JSON, one object
                        with "schemaVersion" a line (see docs/cli/batch.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 when every record is ok (or with --exit-zero), 1 when any is not, 64 for a
      usage error, 66 when an input file cannot be read (the other files are still
      processed).

    EXAMPLES:
      resumedata batch Fixtures/batch/records.ndjson
      resumedata batch Fixtures/batch/records.ndjson --target ios13+ --jobs 2
      resumedata batch --to keyed --exit-zero < records.ndjson > results.ndjson

    """

  /// The entry of `batch` in the command table.
  static let spec = CommandSpec(
    name: "batch",
    summary: "Diagnose, repair or convert NDJSON streams of resume blobs, on every core.",
    help: help,
    options: [
      .option("--jobs", value: .number), .option("--target", value: .targets),
      .option("--to", value: .generations), .option("--format", value: .choice(["xml", "binary"])),
      .option("--info-version", value: .number), .option("--temp-dir", value: .directory),
      .flag("--in-place"), .flag("--backup"), .option("--max-record-bytes", value: .number),
      .flag("--exit-zero"), .flag("--json"),
    ],
    arguments: .file, run: run(_:streams:))

  /// Runs `resumedata batch` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) -> ExitCode {
    guard let parsed = try Arguments.command(arguments, spec: spec, streams: streams) else {
      return .success
    }
    let settings = try BatchSettings(parsed)
    let jobs = try parsed.value("--jobs").map { (text) throws(CommandError) in
      guard let jobs = Int(text), (1...BatchSettings.maximumJobs).contains(jobs) else {
        throw .usage("--jobs must be a whole number from 1 to \(BatchSettings.maximumJobs)")
      }
      return jobs
    }
    let runner = BatchRunner(
      settings: settings, jobs: jobs ?? max(1, ProcessInfo.processInfo.activeProcessorCount),
      streams: streams)
    let inputs = parsed.positionals.isEmpty ? ["-"] : parsed.positionals
    var recordFailed = false
    var inputFailed = false
    for input in inputs {
      do throws(CommandError) {
        if try !runner.run(input) { recordFailed = true }
      } catch {
        streams.printError(error.rendered)
        inputFailed = true
      }
    }
    // Engines that run batch as a task (Hadoop Streaming, Spark's RDD.pipe) fail the whole task
    // on a non-zero status; with --exit-zero, failed records are only in the output.
    if inputFailed { return .unreadableInput }
    return recordFailed && !parsed.has("--exit-zero") ? .failure : .success
  }
}

/// What `batch` does to each record, from its command line.
struct BatchSettings: Sendable {
  /// What is done to every blob.
  enum Operation: Sendable {
    case diagnose
    case repair(RepairTarget)
    case convert(ResumeDataGeneration, format: PropertyListFormat?, infoVersion: Int?)
  }

  /// Most `--jobs` accepted.
  static let maximumJobs = 256
  /// Default of `--max-record-bytes`.
  static let defaultMaximumRecordBytes = 64 << 20

  var operation: Operation
  var temporaryDirectory: URL?
  var inPlace: Bool
  var backup: Bool
  var maximumRecordBytes: Int

  init(_ parsed: Arguments) throws(CommandError) {
    let target = parsed.value("--target")
    let generation = parsed.value("--to")
    switch (target, generation) {
    case (.some, .some):
      throw .usage("give --target or --to, not both")
    case (let target?, nil):
      operation = .repair(try ResumeInput.target(target))
    case (nil, let name?):
      let conversion = try parsed.conversion(to: name)
      operation = .convert(
        conversion.generation, format: conversion.format, infoVersion: conversion.infoVersion)
    case (nil, nil):
      operation = .diagnose
    }
    if case .convert = operation {
    } else if parsed.value("--format") != nil || parsed.value("--info-version") != nil {
      throw .usage("--format and --info-version go with --to")
    }
    temporaryDirectory = parsed.temporaryDirectory
    inPlace = parsed.has("--in-place")
    backup = parsed.has("--backup")
    if backup, !inPlace { throw .usage("--backup goes with --in-place") }
    if inPlace, case .diagnose = operation {
      throw .usage("--in-place needs --target or --to: there is nothing to write")
    }
    maximumRecordBytes =
      try parsed.value("--max-record-bytes").map {
        (text) throws(CommandError) in
        guard let bytes = Int(text), bytes > 0, bytes <= Files.maximumInputSize else {
          throw .usage(
            "--max-record-bytes must be a whole number from 1 to \(Files.maximumInputSize)")
        }
        return bytes
      } ?? Self.defaultMaximumRecordBytes
  }
}

/// Reads one NDJSON input in windows of lines, processes each window on `jobs` threads and
/// writes its results in input order: at most three windows are held at once (one being read, two
/// being processed, the older then written), each at most `windowLines` lines and `windowBytes`
/// bytes of them.
struct BatchRunner: Sendable {
  let settings: BatchSettings
  let jobs: Int
  let streams: Streams

  /// Lines read before a window is queued: few enough to bound memory, many enough that reading
  /// and writing a window cost little against processing it.
  var windowLines: Int { 256 * jobs }
  /// Bytes of lines after which a window is queued even if it has fewer lines.
  static let windowBytes = 32 << 20

  /// Processes every line of `input` (a file, or `-`).
  ///
  /// - Returns: whether every record was ok.
  func run(_ input: String) throws(CommandError) -> Bool {
    let descriptor: Int32
    if input == "-" {
      descriptor = -1
    } else {
      descriptor = try Self.openInput(input)
    }
    defer { if descriptor >= 0 { close(descriptor) } }
    var readPart = streams.readStandardInputPart
    if descriptor >= 0 {
      readPart = { buffer in try readDescriptor(descriptor, into: buffer) }
    }
    var reader = LineReader(maximumLength: settings.maximumRecordBytes, readPart: readPart)
    var allOk = true
    var lineNumber = 0
    // While two windows are processed, the next is read; then the older is waited for and
    // written. Two in flight, so that the threads go straight on to the newer window while the
    // older one's last records finish, and while this thread reads (it shares the cores).
    var inFlight: [WindowInFlight] = []
    let work = BatchWork(
      processor: BatchProcessor(settings: settings, input: input), threads: jobs)
    // The threads stop when the input is done, however this ends.
    defer { work.finish() }
    while true {
      var window = LineWindow()
      var readError: (any Error)?
      do {
        while window.count < windowLines, window.bytes < Self.windowBytes,
          let line = try reader.next()
        {
          window.append(line)
        }
      } catch {
        // Whatever was read before the failure is still processed and written.
        readError = error
      }
      if inFlight.count == 2 {
        allOk = write(inFlight.removeFirst().results()) && allOk
      }
      let count = window.count
      if count > 0 {
        inFlight.append(work.add(window, firstLine: lineNumber + 1))
      }
      lineNumber += count
      if let readError {
        for last in inFlight { _ = write(last.results()) }
        throw CommandError(
          .unreadableInput, "cannot read: \(readError.localizedDescription)", file: input)
      }
      if count == 0 {
        for last in inFlight { allOk = write(last.results()) && allOk }
        return allOk
      }
    }
  }

  /// Writes a window's results, a run of lines at a time, in order; whether every record was ok.
  private func write(_ results: [RunResult]) -> Bool {
    var allOk = true
    for run in results {
      streams.writeStandardOutput(run.lines)
      allOk = allOk && run.ok
    }
    return allOk
  }

  /// Opens a named NDJSON input for reading.
  private static func openInput(_ path: String) throws(CommandError) -> Int32 {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw CommandError(
        .unreadableInput, "cannot open: \(String(cString: strerror(errno)))", file: path)
    }
    var status = stat()
    if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
      close(descriptor)
      throw CommandError(.unreadableInput, "is a directory", file: path)
    }
    return descriptor
  }
}

/// A run of records done: their result lines, and whether every record was ok.
typealias RunResult = (lines: Data, ok: Bool)

/// Lines read for one window: ranges of the chunks they were read into.
struct LineWindow {
  /// The chunks the lines are in, in reading order.
  private(set) var chunks: [ReadChunk] = []
  /// Each line: the index of its chunk and its range there, or the length of a line too long.
  private var lines: [(chunk: Int, range: Range<Int>)] = []
  /// Bytes of the lines.
  private(set) var bytes = 0

  /// Lines in the window.
  var count: Int { lines.count }

  /// Adds the next line.
  mutating func append(_ line: LineReader.Line) {
    switch line {
    case .text(let chunk, let range):
      if chunks.last !== chunk { chunks.append(chunk) }
      lines.append((chunks.count - 1, range))
      bytes += range.count
    case .tooLong(let length):
      // No chunk: its length where the range would be.
      lines.append((-1, 0..<length))
    }
  }

  /// The bytes of line `index` held (none for a line too long).
  func heldBytes(_ index: Int) -> Int {
    let line = lines[index]
    return line.chunk >= 0 ? line.range.count : 0
  }

  /// Line `index`, as the processor takes it.
  func line(_ index: Int) -> BatchProcessor.Line {
    let line = lines[index]
    guard line.chunk >= 0 else { return .tooLong(line.range.count) }
    return .text(chunks[line.chunk].bytes(line.range))
  }
}

/// The records of the windows in flight, and the threads that process them: `threads` of them
/// for the whole run, each taking the next run of records in input order, from one window and then
/// the next, so that no thread waits at a window's end while another still has records.
private final class BatchWork: @unchecked Sendable {
  private let processor: BatchProcessor
  private let threads: Int
  // Guards everything below it.
  private let condition = NSCondition()
  // The windows with records not yet taken, oldest first, and the next run of the first.
  private var windows: [WindowInFlight] = []
  private var next = 0
  private var finished = false
  private let threadsDone = DispatchGroup()

  init(processor: BatchProcessor, threads: Int) {
    self.processor = processor
    self.threads = threads
    // Threads of their own rather than blocks on a shared dispatch queue, whose pool may run
    // fewer of them at once than were asked for.
    for _ in 0..<threads {
      threadsDone.enter()
      let thread = Thread { [self] in
        while let (window, run) = take() {
          window.store(window.process(run, with: processor), at: run)
        }
        threadsDone.leave()
      }
      thread.start()
    }
  }

  /// Queues a window's lines; its results come from `results()` on the window returned.
  func add(_ lines: LineWindow, firstLine: Int) -> WindowInFlight {
    let window = WindowInFlight(lines, firstLine: firstLine, threads: threads)
    condition.withLock {
      windows.append(window)
      condition.broadcast()
    }
    return window
  }

  /// Lets the threads end once every queued record is done, and waits for them.
  func finish() {
    condition.withLock {
      finished = true
      condition.broadcast()
    }
    threadsDone.wait()
  }

  /// The next run of records to process, waiting for one; nil once finished and none is left.
  private func take() -> (WindowInFlight, Int)? {
    condition.lock()
    defer { condition.unlock() }
    while windows.isEmpty, !finished { condition.wait() }
    guard let window = windows.first else { return nil }
    let run = next
    next += 1
    if next == window.runs {
      windows.removeFirst()
      next = 0
    }
    return (window, run)
  }
}

/// A window being processed, in runs of consecutive records: each thread writes the results of
/// the runs it took into one buffer a run, and the reader takes them all, in order, once the last
/// is stored.
private final class WindowInFlight: @unchecked Sendable {
  private let lines: LineWindow
  private let firstLine: Int
  /// Records in each run but perhaps the last.
  private let runLength: Int
  /// Runs in the window.
  let runs: Int
  private let done = DispatchSemaphore(value: 0)
  private let remaining: Atomic<Int>
  // Each slot is written by one thread (the one that took its run) and read only after the last
  // store, whose decrement and signal order every write before the reads.
  private let slots: UnsafeMutableBufferPointer<RunResult?>

  init(_ lines: LineWindow, firstLine: Int, threads: Int) {
    // Runs long enough that a thread takes the lock, and a buffer is made and written, once per
    // many records; short enough that every thread gets several runs of a small window.
    runLength = max(1, min(16, lines.count / (threads * 4)))
    runs = (lines.count + runLength - 1) / runLength
    self.lines = lines
    self.firstLine = firstLine
    remaining = Atomic(runs)
    slots = .allocate(capacity: runs)
    slots.initialize(repeating: nil)
  }

  deinit {
    slots.deinitialize()
    slots.deallocate()
  }

  /// Processes the records of run `run`: their result lines, and whether every one was ok.
  func process(_ run: Int, with processor: BatchProcessor) -> RunResult {
    let first = run * runLength
    let end = min(first + runLength, lines.count)
    // Room for the lines as long as the records, and their other fields: a blob's base64 comes out
    // about as long as it went in.
    var room = 0
    for index in first..<end { room += lines.heldBytes(index) + 768 }
    var output = JSONLine(capacity: room)
    var ok = true
    for index in first..<end {
      ok = processor.process(lines.line(index), line: firstLine + index, into: &output) && ok
    }
    return (output.finish(), ok)
  }

  func store(_ result: RunResult, at run: Int) {
    slots[run] = result
    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.signal() }
  }

  /// Waits for the window to be done and returns its runs' results in line order.
  func results() -> [RunResult] {
    done.wait()
    // Every run was taken by exactly one thread.
    return slots.compactMap { $0 }
  }
}
