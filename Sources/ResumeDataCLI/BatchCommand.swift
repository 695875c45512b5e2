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
    var output = Data()
    let work = BatchWork(
      processor: BatchProcessor(settings: settings, input: input), threads: jobs)
    // The threads stop when the input is done, however this ends.
    defer { work.finish() }
    while true {
      var window: [LineReader.Line] = []
      var bytes = 0
      var readError: (any Error)?
      do {
        while window.count < windowLines, bytes < Self.windowBytes, let line = try reader.next() {
          if case .text(let text) = line { bytes += text.count }
          window.append(line)
        }
      } catch {
        // Whatever was read before the failure is still processed and written.
        readError = error
      }
      if inFlight.count == 2 {
        allOk = write(inFlight.removeFirst().results(), into: &output) && allOk
      }
      if !window.isEmpty {
        inFlight.append(work.add(window, firstLine: lineNumber + 1))
      }
      lineNumber += window.count
      if let readError {
        for last in inFlight { _ = write(last.results(), into: &output) }
        throw CommandError(
          .unreadableInput, "cannot read: \(readError.localizedDescription)", file: input)
      }
      if window.isEmpty {
        for last in inFlight { allOk = write(last.results(), into: &output) && allOk }
        return allOk
      }
    }
  }

  /// Writes a window's results in order; whether every record was ok.
  private func write(_ results: [BatchProcessor.Result], into buffer: inout Data) -> Bool {
    // One buffer for every window, sized before the first append: grown line by line, it was
    // reallocated (and copied) a dozen times per window.
    buffer.removeAll(keepingCapacity: true)
    buffer.reserveCapacity(results.reduce(0) { $0 + $1.line.count + 1 })
    var allOk = true
    for result in results {
      buffer.append(result.line)
      buffer.append(UInt8(ascii: "\n"))
      allOk = allOk && result.ok
    }
    // Handed over as it is (the writer does not keep it), so its storage is reused next time.
    streams.writeStandardOutput(buffer)
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

/// The records of the windows in flight, and the threads that process them: `threads` of them
/// for the whole run, each taking the next record in input order, from one window and then the
/// next, so that no thread waits at a window's end while another still has records.
private final class BatchWork: @unchecked Sendable {
  private let processor: BatchProcessor
  // Guards everything below it.
  private let condition = NSCondition()
  // The windows with records not yet taken, oldest first, and the next record of the first.
  private var windows: [WindowInFlight] = []
  private var next = 0
  private var finished = false
  private let threadsDone = DispatchGroup()

  init(processor: BatchProcessor, threads: Int) {
    self.processor = processor
    // Threads of their own rather than blocks on a shared dispatch queue, whose pool may run
    // fewer of them at once than were asked for.
    for _ in 0..<threads {
      threadsDone.enter()
      let thread = Thread { [self] in
        while let (window, index) = take() {
          window.store(
            processor.process(window.lines[index], line: window.firstLine + index), at: index)
        }
        threadsDone.leave()
      }
      thread.start()
    }
  }

  /// Queues a window's lines; its results come from `results()` on the window returned.
  func add(_ lines: [LineReader.Line], firstLine: Int) -> WindowInFlight {
    let window = WindowInFlight(lines, firstLine: firstLine)
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

  /// The next record to process, waiting for one; nil once finished and none is left.
  private func take() -> (WindowInFlight, Int)? {
    condition.lock()
    defer { condition.unlock() }
    while windows.isEmpty, !finished { condition.wait() }
    guard let window = windows.first else { return nil }
    let index = next
    next += 1
    if next == window.lines.count {
      windows.removeFirst()
      next = 0
    }
    return (window, index)
  }
}

/// A window being processed: each thread stores the result of each line it took, and the reader
/// takes them all, in order, once the last is stored.
private final class WindowInFlight: @unchecked Sendable {
  let lines: [LineReader.Line]
  let firstLine: Int
  private let done = DispatchSemaphore(value: 0)
  private let remaining: Atomic<Int>
  // Each slot is written by one thread (the one that took its index) and read only after the
  // last store, whose decrement and signal order every write before the reads.
  private let slots: UnsafeMutableBufferPointer<BatchProcessor.Result?>

  init(_ lines: [LineReader.Line], firstLine: Int) {
    self.lines = lines
    self.firstLine = firstLine
    remaining = Atomic(lines.count)
    slots = .allocate(capacity: lines.count)
    slots.initialize(repeating: nil)
  }

  deinit {
    slots.deinitialize()
    slots.deallocate()
  }

  func store(_ result: BatchProcessor.Result, at index: Int) {
    slots[index] = result
    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.signal() }
  }

  /// Waits for the window to be done and returns its results in line order.
  func results() -> [BatchProcessor.Result] {
    done.wait()
    // Every index below the count was taken by exactly one thread.
    return slots.compactMap { $0 }
  }
}
