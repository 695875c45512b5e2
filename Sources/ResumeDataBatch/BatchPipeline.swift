import Dispatch
import OutputFiles
import PortableFoundation
@_spi(Writing) import PropertyList
import ResumeData

/// What a batch does to every record's blob, and the limits it keeps.
public struct BatchOptions: Sendable {
  /// What is done to every blob.
  public enum Operation: Sendable, Equatable {
    /// Diagnosed: a result's findings are those of `resumedata inspect`.
    case diagnose
    /// Repaired for a system, as `resumedata repair` does: the result holds the repaired blob.
    case repair(RepairTarget)
    /// Converted to a generation, as `resumedata convert` does (a container format and an
    /// `NSURLSessionResumeInfoVersion` when given, else the conversion's defaults).
    case convert(ResumeDataGeneration, format: PropertyListFormat?, infoVersion: Int?)
  }

  /// The default of `maximumRecordBytes`: 64 MiB.
  public static let defaultMaximumRecordBytes = 64 << 20
  /// The largest `maximumRecordBytes` allowed: 1 GiB, the most any file is read.
  public static let maximumRecordBytesLimit = FileAccess.maximumInputSize

  /// What is done to every blob.
  public var operation: Operation
  /// The directory holding the partial files a blob names (their sizes are checked), if any.
  public var temporaryDirectory: URL?
  /// Whether the blob made from a "path" record replaces its file (atomically) instead of going
  /// into the result; a blob that comes out unchanged is not rewritten. Only with `repair` or
  /// `convert`.
  public var inPlace: Bool
  /// With `inPlace`: whether the original is kept as `FILE.bak` first (a record whose `FILE.bak`
  /// already holds something else fails rather than lose it).
  public var backup: Bool
  /// The longest record, or "path" file, accepted (from 1 to `maximumRecordBytesLimit`): a longer
  /// one gets a `too-long` or `unreadable` result without being held in memory.
  public var maximumRecordBytes: Int
  /// Whether a healthy keyed blob is answered from one pass over its bytes
  /// (`ResumeData.healthyKeyedBlob`), and a healthy plain v2 blob without its requests decoded
  /// (`ResumeData.reading`), rather than decoded, diagnosed and repaired: the results are the same
  /// either way (for tests that compare the two).
  @_spi(Differential) public var answersHealthyBlobsInOnePass = true

  /// Options for `operation`, with every other option at its default unless given.
  public init(
    operation: Operation = .diagnose, temporaryDirectory: URL? = nil, inPlace: Bool = false,
    backup: Bool = false, maximumRecordBytes: Int = defaultMaximumRecordBytes
  ) {
    self.operation = operation
    self.temporaryDirectory = temporaryDirectory
    self.inPlace = inPlace
    self.backup = backup
    self.maximumRecordBytes = min(max(maximumRecordBytes, 1), Self.maximumRecordBytesLimit)
  }
}

/// The result of one record: its line of JSON, as `resumedata batch` writes it (see
/// docs/cli/batch.md), and whether the record was ok.
public struct BatchResult: Sendable, Equatable {
  /// The record's number in its input, from 1.
  public var line: Int
  /// Whether the record was ok: read, decoded and done with, not refused.
  public var ok: Bool
  /// The result's JSON object, one line of UTF-8 without its line break.
  public var json: Data

  /// A result of record `line`.
  public init(line: Int, ok: Bool, json: Data) {
    self.line = line
    self.ok = ok
    self.json = json
  }
}

/// An input of NDJSON that could not be opened or read to its end. The records read before a read
/// failed have their results all the same.
public struct BatchInputError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong (`cannot open: …`, `is a directory`, `cannot read: …`).
  public var message: String
  /// The input's name: its path, or `-` for standard input.
  public var file: String

  /// An error reading `file`.
  public init(_ message: String, file: String) {
    self.message = message
    self.file = file
  }

  /// `FILE: message`.
  public var description: String { "\(file): \(message)" }
}

/// The pipeline of `resumedata batch`, to run in-process: each record, a line of NDJSON
/// (`{"id": …, "blob": "<base64>"}` or `{"id": …, "path": "FILE"}`), is read, its blob decoded,
/// diagnosed, repaired or converted, and answered by one line of JSON, in input order, whatever
/// the number of jobs. A record that fails gets an error result and the run goes on.
///
/// Records are processed on `jobs` threads of their own, a window of lines at a time: memory stays
/// bounded however long the input is. Within a window, records whose blobs are of one form are
/// processed one after another (see `WindowInFlight`); "path" records keep their order among
/// themselves, and the results come in input order all the same.
public struct BatchPipeline: Sendable {
  /// Most jobs run at once.
  public static let maximumJobs = 256

  /// What is done to every record.
  public var options: BatchOptions
  /// The input's name, echoed in every result's `input` (`-` for standard input).
  public var inputName: String
  /// Records processed at once, from 1 to `maximumJobs`.
  public var jobs: Int

  /// A pipeline doing `options` to every record of the input named `inputName`, on `jobs` threads
  /// (by default, one for each core; clamped to 1…`maximumJobs`).
  public init(options: BatchOptions, inputName: String = "-", jobs: Int? = nil) {
    self.options = options
    self.inputName = inputName
    self.jobs = min(
      max(jobs ?? ProcessInfo.processInfo.activeProcessorCount, 1), Self.maximumJobs)
  }

  /// Processes one record on the calling thread.
  ///
  /// - Parameters:
  ///   - record: the record's line of JSON, without its line break.
  ///   - line: the record's number in its input, from 1, echoed in its result.
  /// - Returns: the record's result.
  public func process(_ record: Data, line: Int) -> BatchResult {
    let processor = BatchProcessor(settings: options, input: inputName)
    var output = JSONLine(capacity: record.count + 768)
    let ok: Bool
    if record.count > options.maximumRecordBytes {
      ok = processor.process(.tooLong(record.count), line: line, into: &output)
    } else {
      ok = record.withUnsafeBytes { bytes in
        processor.process(.text(bytes.bindMemory(to: UInt8.self)), line: line, into: &output)
      }
    }
    return BatchResult(line: line, ok: ok, json: output.finish().dropLast())
  }

  /// Processes every record of `records` (each a line of JSON without its line break), numbered
  /// from 1, and hands their results to `body` one by one, in order, on the calling thread.
  ///
  /// - Returns: whether every record was ok.
  @discardableResult
  public func forEachResult(of records: some Sequence<Data>, _ body: (BatchResult) -> Void)
    -> Bool
  {
    var iterator = records.makeIterator()
    let limit = options.maximumRecordBytes
    return drive(
      readLine: { window in
        guard let record = iterator.next() else { return false }
        window.append(record: record, limit: limit)
        return true
      },
      deliver: { window in
        window.forEachLine { line, ok, text in
          body(BatchResult(line: line, ok: ok, json: Data(text)))
        }
      })
  }

  /// The results of every record of `records` (each a line of JSON without its line break),
  /// numbered from 1, in order.
  public func results(of records: some Sequence<Data>) -> [BatchResult] {
    var results: [BatchResult] = []
    forEachResult(of: records) { results.append($0) }
    return results
  }

  /// Processes every line of NDJSON that `readPart` reads and hands the result lines, each with its
  /// line break, to `write` in input order, a run of lines at a time, on the calling thread.
  ///
  /// - Parameters:
  ///   - readPart: reads the next bytes of the input into the buffer it is given, at most its
  ///     size; returns how many, 0 at the end.
  ///   - write: takes the next result lines.
  /// - Returns: whether every record was ok.
  /// - Throws: `BatchInputError` when `readPart` throws, after the results of every line read
  ///   before were written.
  public func run(
    readingWith readPart: @escaping (UnsafeMutableRawBufferPointer) throws -> Int,
    write: (Data) -> Void
  ) throws(BatchInputError) -> Bool {
    try run(readingWith: readPart) { $0.forEachRunText(write) }
  }

  /// Processes every line of NDJSON that `readPart` reads and hands the result lines, each with its
  /// line break, to `writePieces` in input order, as the pieces of memory they lie in, on the
  /// calling thread: each piece one or more whole lines, the pieces of some hundreds of lines at a
  /// time, to be written out in their order (with one `writev`, say), without copying them
  /// together first. The pieces are valid only during the call. (A trailing closure that would
  /// do for this or for `run(readingWith:write:)` calls that one.)
  ///
  /// - Parameters:
  ///   - readPart: reads the next bytes of the input into the buffer it is given, at most its
  ///     size; returns how many, 0 at the end.
  ///   - writePieces: takes the next result lines, in pieces.
  /// - Returns: whether every record was ok.
  /// - Throws: `BatchInputError` when `readPart` throws, after the results of every line read
  ///   before were written.
  @_disfavoredOverload
  public func run(
    readingWith readPart: @escaping (UnsafeMutableRawBufferPointer) throws -> Int,
    writePieces: ([UnsafeRawBufferPointer]) -> Void
  ) throws(BatchInputError) -> Bool {
    try run(readingWith: readPart) { writePieces($0.pieces()) }
  }

  /// Processes every line of the NDJSON file at `path` (`run(readingWith:write:)`).
  ///
  /// - Throws: `BatchInputError` when the file cannot be opened, is a directory, or cannot be
  ///   read to its end (after the results of every line read before were written).
  public func run(contentsOf path: String, write: (Data) -> Void) throws(BatchInputError) -> Bool {
    try withFile(path) { (readPart) throws(BatchInputError) in
      try run(readingWith: readPart, write: write)
    }
  }

  /// Processes every line of the NDJSON file at `path` (`run(readingWith:writePieces:)`). (A
  /// trailing closure that would do for this or for `run(contentsOf:write:)` calls that one.)
  ///
  /// - Throws: `BatchInputError` when the file cannot be opened, is a directory, or cannot be
  ///   read to its end (after the results of every line read before were written).
  @_disfavoredOverload
  public func run(contentsOf path: String, writePieces: ([UnsafeRawBufferPointer]) -> Void)
    throws(BatchInputError) -> Bool
  {
    try withFile(path) { (readPart) throws(BatchInputError) in
      try run(readingWith: readPart, writePieces: writePieces)
    }
  }

  /// Runs `body` with a reader of the file at `path`.
  private func withFile(
    _ path: String,
    _ body: (@escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws(BatchInputError) ->
      Bool
  ) throws(BatchInputError) -> Bool {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw BatchInputError("cannot open: \(String(cString: strerror(errno)))", file: path)
    }
    defer { close(descriptor) }
    var status = stat()
    if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
      throw BatchInputError("is a directory", file: path)
    }
    return try body { buffer in try FileAccess.read(descriptor, into: buffer) }
  }

  /// Processes every line that `readPart` reads, handing each window done to `deliver`.
  private func run(
    readingWith readPart: @escaping (UnsafeMutableRawBufferPointer) throws -> Int,
    deliver: (WindowInFlight) -> Void
  ) throws(BatchInputError) -> Bool {
    var reader = LineReader(maximumLength: options.maximumRecordBytes, readPart: readPart)
    var readError: (any Error)?
    let allOk = drive(
      readLine: { window in
        do {
          guard let line = try reader.next() else { return false }
          window.append(line)
          return true
        } catch {
          readError = error
          return false
        }
      },
      deliver: deliver)
    if let readError {
      throw BatchInputError("cannot read: \(systemReason(readError))", file: inputName)
    }
    return allOk
  }

  /// Lines read before a window is queued: few enough to bound memory, many enough that reading
  /// and writing a window cost little against processing it.
  var windowLines: Int { 256 * jobs }
  /// Bytes of lines after which a window is queued even if it has fewer lines.
  static let windowBytes = 32 << 20

  /// Reads windows of lines with `readLine` (which appends one line to the window, or returns
  /// false at the end of the input), processes each on `jobs` threads and hands each to `deliver`
  /// once it is done, in input order: at most three windows are held at once (one being read,
  /// two being processed, the older then delivered), each at most `windowLines` lines and
  /// `windowBytes` bytes of them.
  ///
  /// - Returns: whether every record was ok.
  private func drive(
    readLine: (inout LineWindow) -> Bool, deliver: (WindowInFlight) -> Void
  ) -> Bool {
    var allOk = true
    var lineNumber = 0
    // While two windows are processed, the next is read; then the older is waited for and
    // delivered. Two in flight, so that the threads go straight on to the newer window while the
    // older one's last records finish, and while this thread reads (it shares the cores).
    var inFlight: [WindowInFlight] = []
    let work = BatchWork(
      processor: BatchProcessor(settings: options, input: inputName), threads: jobs)
    // The threads stop when the input is done, however this ends.
    defer { work.finish() }
    func deliverOldest() {
      let window = inFlight.removeFirst()
      window.waitUntilDone()
      deliver(window)
      allOk = allOk && window.allOk
    }
    while true {
      var window = LineWindow()
      var more = true
      while window.count < windowLines, window.bytes < Self.windowBytes {
        more = readLine(&window)
        if !more { break }
      }
      if inFlight.count == 2 { deliverOldest() }
      let count = window.count
      if count > 0 {
        inFlight.append(work.add(window, firstLine: lineNumber + 1))
      }
      lineNumber += count
      if !more {
        while !inFlight.isEmpty { deliverOldest() }
        return allOk
      }
    }
  }
}

/// The result lines of a run of consecutive records (consecutive in the order they were
/// processed), each with its line break, in the block they were written in, and a bit set for each
/// record that failed (bit 0 for the first: a run has at most `WindowInFlight.longestRun`).
/// Written by one thread, then only read.
final class RunText: @unchecked Sendable {
  private let start: UnsafeMutableRawPointer
  private let count: Int
  let failures: UInt64

  init(_ text: consuming JSONLine, failures: UInt64) {
    let block = text.finishInBlock()
    start = block.baseAddress!
    count = block.count
    self.failures = failures
  }

  deinit { ReusableBlocks.give(start) }

  /// The lines.
  var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

  /// The lines as `Data`, without a copy: the `Data` keeps the text.
  var data: Data {
    Data(
      bytesNoCopy: start, count: count,
      deallocator: .custom { _, _ in withExtendedLifetime(self) {} })
  }
}

/// Lines read for one window: ranges of the chunks they were read into, or records handed in
/// whole.
struct LineWindow {
  private enum Held {
    /// A range of the chunk at an index of `chunks`.
    case chunk(Int, Range<Int>)
    /// The record at an index of `records`.
    case record(Int)
    /// A line over the limit: its length.
    case tooLong(Int)
  }

  /// The chunks the lines are in, in reading order.
  private var chunks: [ReadChunk] = []
  private var records: [Data] = []
  private var lines: [Held] = []
  /// Bytes of the lines.
  private(set) var bytes = 0

  /// Lines in the window.
  var count: Int { lines.count }

  /// Adds the next line read.
  mutating func append(_ line: LineReader.Line) {
    switch line {
    case .text(let chunk, let range):
      if chunks.last !== chunk { chunks.append(chunk) }
      lines.append(.chunk(chunks.count - 1, range))
      bytes += range.count
    case .tooLong(let length):
      lines.append(.tooLong(length))
    }
  }

  /// Adds a record handed in whole, or its length when it is longer than `limit` bytes.
  mutating func append(record: Data, limit: Int) {
    guard record.count <= limit else { return lines.append(.tooLong(record.count)) }
    records.append(record)
    lines.append(.record(records.count - 1))
    bytes += record.count
  }

  /// The bytes of line `index` held (none for a line too long).
  func heldBytes(_ index: Int) -> Int {
    switch lines[index] {
    case .chunk(_, let range): range.count
    case .record(let record): records[record].count
    case .tooLong: 0
    }
  }

  /// The form of line `index`'s blob, for grouping lines alike: the first 16 bytes of its
  /// `"blob"` string as written (up to its closing quote), when the key is among the line's first
  /// 1,024 bytes; nil for any other line (a "path" record, one too long, one that is not JSON).
  /// Only an ordering hint: any answer gives the same results.
  func form(_ index: Int) -> BlobForm? {
    switch lines[index] {
    case .chunk(let chunk, let range): BlobForm(line: chunks[chunk].bytes(range))
    case .record(let record):
      records[record].withUnsafeBytes { BlobForm(line: $0.bindMemory(to: UInt8.self)) }
    case .tooLong: nil
    }
  }

  /// Most forms a window is grouped into: the lines of any further forms go last, together.
  static let mostForms = 8

  /// The lines in the order they are processed: grouped by `form`, the forms in the order they
  /// first appear (lines of no form, such as "path" records, making one), each form's lines in
  /// line order; nil when every line is of one form.
  func groupedOrder() -> [Int]? {
    guard count > 1 else { return nil }
    var forms: [BlobForm?] = []
    forms.reserveCapacity(Self.mostForms)
    // Each line's group: the index of its form, or `mostForms` for a form beyond them.
    var groups = [UInt8](repeating: 0, count: count)
    var sizes = [Int](repeating: 0, count: Self.mostForms + 1)
    for index in 0..<count {
      let form = form(index)
      var group = forms.firstIndex(of: form) ?? Self.mostForms
      if group == Self.mostForms, forms.count < Self.mostForms {
        group = forms.count
        forms.append(form)
      }
      groups[index] = UInt8(group)
      sizes[group] += 1
    }
    guard forms.count > 1 else { return nil }
    // Each group's first position, then each line at its group's next.
    var next = [Int](repeating: 0, count: Self.mostForms + 1)
    for group in 1...Self.mostForms { next[group] = next[group - 1] + sizes[group - 1] }
    var order = [Int](repeating: 0, count: count)
    for index in 0..<count {
      let group = Int(groups[index])
      order[next[group]] = index
      next[group] += 1
    }
    return order
  }

  /// Runs `body` with line `index`, as the processor takes it.
  func withLine<Result>(_ index: Int, _ body: (BatchProcessor.Line) -> Result) -> Result {
    switch lines[index] {
    case .chunk(let chunk, let range): body(.text(chunks[chunk].bytes(range)))
    case .record(let record):
      records[record].withUnsafeBytes { body(.text($0.bindMemory(to: UInt8.self))) }
    case .tooLong(let length): body(.tooLong(length))
    }
  }
}

/// The first bytes of a record's blob as written in its line: blobs of one form (a keyed archive,
/// an XML plist, a Network.framework blob) start alike, and records whose blobs start alike take
/// the same paths through the code.
struct BlobForm: Equatable {
  private var head: (UInt64, UInt64) = (0, 0)
  private var count = 0

  /// The form of the blob in `line`, a record's JSON; nil when no `"blob":"` is among its first
  /// 1,024 bytes (whitespace around the colon allowed).
  init?(line: UnsafeBufferPointer<UInt8>) {
    guard let base = UnsafeRawPointer(line.baseAddress) else { return nil }
    // `"blob"`: a quote, the four letters in one load, a quote.
    let letters = UInt32(littleEndian: 0x626F_6C62)
    let last = min(line.count, 1024) - 6
    var position = 0
    while position <= last,
      line[position] != UInt8(ascii: "\"") || line[position + 5] != UInt8(ascii: "\"")
        || base.loadUnaligned(fromByteOffset: position + 1, as: UInt32.self) != letters
    {
      position += 1
    }
    guard position <= last else { return nil }
    position += 6
    func skipSpaces() {
      while position < line.count,
        line[position] == UInt8(ascii: " ") || line[position] == UInt8(ascii: "\t")
      {
        position += 1
      }
    }
    skipSpaces()
    guard position < line.count, line[position] == UInt8(ascii: ":") else { return nil }
    position += 1
    skipSpaces()
    guard position < line.count, line[position] == UInt8(ascii: "\"") else { return nil }
    position += 1
    if line.count - position >= 16 {
      // Sixteen bytes in two loads, cut at the first quote among them (the lowest byte the
      // zero-byte test of "Bit Twiddling Hacks" flags is exactly the first zero).
      let words = (
        base.loadUnaligned(fromByteOffset: position, as: UInt64.self),
        base.loadUnaligned(fromByteOffset: position + 8, as: UInt64.self)
      )
      func quoteBytes(_ word: UInt64) -> Int {
        let quotes = UInt64(littleEndian: word) ^ 0x2222_2222_2222_2222
        let flags = (quotes &- 0x0101_0101_0101_0101) & ~quotes & 0x8080_8080_8080_8080
        return flags == 0 ? 8 : flags.trailingZeroBitCount / 8
      }
      let first = quoteBytes(words.0)
      count = first < 8 ? first : 8 + quoteBytes(words.1)
      // The first `bytes` bytes of a word, kept where they lie in memory, as the loop below
      // stores them.
      func low(_ word: UInt64, _ bytes: Int) -> UInt64 {
        let value = UInt64(littleEndian: word)
        let kept = bytes >= 8 ? value : bytes <= 0 ? 0 : value & ((1 << (8 * UInt64(bytes))) - 1)
        return UInt64(littleEndian: kept)
      }
      head = (low(words.0, count), low(words.1, count - 8))
      return
    }
    withUnsafeMutableBytes(of: &head) { head in
      while count < 16, position < line.count, line[position] != UInt8(ascii: "\"") {
        head[count] = line[position]
        count += 1
        position += 1
      }
    }
  }

  static func == (left: Self, right: Self) -> Bool {
    left.count == right.count && left.head.0 == right.head.0 && left.head.1 == right.head.1
  }
}

/// The records of the windows in flight, and the threads that process them: `threads` of them
/// for the whole run, each taking the next run of records in input order, from one window and then
/// the next, so that no thread waits at a window's end while another still has records.
private final class BatchWork: @unchecked Sendable {
  private let processor: BatchProcessor
  private let threads: Int
  // Guards everything below it.
  private let condition = ThreadCondition()
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
      startThread { [self] in
        while let (window, run) = take() {
          window.store(window.process(run, with: processor), at: run)
        }
        threadsDone.leave()
      }
    }
  }

  /// Queues a window's lines; its results come from `deliver(_:)` on the window returned.
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
    condition.withLock {
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
}

/// A window being processed, in runs of records: each thread writes the results of the runs it
/// took into one buffer a run, and the reader takes them all, in line order, once the last is
/// stored.
///
/// A window whose records' blobs are of several forms (`BlobForm`) is processed grouped by form,
/// each form's records in input order: a keyed archive, an XML plist and a Network.framework blob
/// each take code paths of their own, and records taken alternately from each made every record
/// run as if for the first time (the processor's code and branch history cold again), about a
/// sixth slower for the same instructions. The results are put back in line order when the window
/// is delivered. A window of one form is processed in line order, as its results are delivered.
private final class WindowInFlight: @unchecked Sendable {
  /// Most records in a run: each has a bit of `RunText.failures`.
  static let longestRun = 16

  private let lines: LineWindow
  private let firstLine: Int
  /// Records in each run but perhaps the last.
  private let runLength: Int
  /// Runs in the window.
  let runs: Int
  private let done = DispatchSemaphore(value: 0)
  private let remaining: Locked<Int>
  // Each slot is written by one thread (the one that took its run) and read only after the last
  // store, whose decrement and signal order every write before the reads.
  private let slots: UnsafeMutableBufferPointer<RunText?>
  // For a window grouped by form: the line at each position of the processing order, and where
  // each line's result went (written and read as the slots are). Nil for one in line order.
  private let order: [Int]?
  private let placements: UnsafeMutableBufferPointer<Placement>?

  /// Where a line's result is: in which run's buffer, and whether the record was ok.
  private struct Placement {
    var run = 0
    var bytes = 0..<0
    var ok = true
  }

  init(_ lines: LineWindow, firstLine: Int, threads: Int) {
    // Runs long enough that a thread takes the lock, and a buffer is made and written, once per
    // many records; short enough that every thread gets several runs of a small window.
    runLength = max(1, min(Self.longestRun, lines.count / (threads * 4)))
    runs = (lines.count + runLength - 1) / runLength
    self.lines = lines
    self.firstLine = firstLine
    remaining = Locked(runs)
    slots = .allocate(capacity: runs)
    slots.initialize(repeating: nil)
    order = lines.groupedOrder()
    if order != nil {
      placements = .allocate(capacity: lines.count)
      placements?.initialize(repeating: Placement())
    } else {
      placements = nil
    }
  }

  deinit {
    slots.deinitialize()
    slots.deallocate()
    placements?.deallocate()
  }

  // The line at a position of the processing order.
  private func line(at position: Int) -> Int { order?[position] ?? position }

  /// Processes the records of run `run`: their result lines, and which failed.
  func process(_ run: Int, with processor: BatchProcessor) -> RunText {
    let first = run * runLength
    let end = min(first + runLength, lines.count)
    // Room for the lines twice as long as the records, and their other fields: a repair can make a
    // blob longer (a Network.framework blob converted to keyed comes out 1.7 times as long, a v2
    // blob with its requests restored to the standard layout 1.6 times), and a run's text that
    // outgrows its room is copied whole. Memory not written to is not touched.
    var room = 0
    for position in first..<end { room += lines.heldBytes(line(at: position)) * 2 + 768 }
    var output = JSONLine(capacity: room)
    var failures: UInt64 = 0
    for position in first..<end {
      let index = line(at: position)
      let start = output.written
      let ok = lines.withLine(index) { line in
        processor.process(line, line: firstLine + index, into: &output)
      }
      if !ok { failures |= 1 << (position - first) }
      placements?[index] = Placement(run: run, bytes: start..<output.written, ok: ok)
    }
    return RunText(output, failures: failures)
  }

  func store(_ result: RunText, at run: Int) {
    slots[run] = result
    let left = remaining.withLock { count in
      count -= 1
      return count
    }
    if left == 0 { done.signal() }
  }

  /// Waits until every run of the window is done; only then are its results read.
  func waitUntilDone() { done.wait() }

  // The text of run `run`, once done: every run was taken and stored by exactly one thread.
  private func text(_ run: Int) -> RunText { slots[run]! }

  /// Whether every record of the window was ok.
  var allOk: Bool { slots.allSatisfy { $0!.failures == 0 } }

  /// The result lines in line order, as pieces of the runs' texts: a run's whole text, for a window
  /// in line order; for one grouped by form, each stretch of lines that lie one after another in
  /// a run's text. Valid while the window is.
  func pieces() -> [UnsafeRawBufferPointer] {
    guard let placements else { return (0..<runs).map { text($0).bytes } }
    var pieces: [UnsafeRawBufferPointer] = []
    var run = placements[0].run
    var bytes = placements[0].bytes
    func addPiece() { pieces.append(UnsafeRawBufferPointer(rebasing: text(run).bytes[bytes])) }
    for index in 1..<lines.count {
      let placement = placements[index]
      if placement.run == run, placement.bytes.lowerBound == bytes.upperBound {
        bytes = bytes.lowerBound..<placement.bytes.upperBound
      } else {
        addPiece()
        run = placement.run
        bytes = placement.bytes
      }
    }
    addPiece()
    return pieces
  }

  /// Hands each record's number, whether it was ok and its result line (without its line break)
  /// to `body`, in line order.
  func forEachLine(_ body: (Int, Bool, UnsafeRawBufferPointer) -> Void) {
    if let placements {
      for index in 0..<lines.count {
        let placement = placements[index]
        let line = text(placement.run).bytes[placement.bytes.dropLast()]
        body(firstLine + index, placement.ok, UnsafeRawBufferPointer(rebasing: line))
      }
      return
    }
    for run in 0..<runs {
      let text = text(run)
      // The record's place in its run, which is its bit in `failures`.
      var place = 0
      var start = 0
      // A result line holds no raw line break (JSON escapes them in strings): each one ends one.
      while let end = text.bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
        let ok = text.failures & (1 << place) == 0
        body(
          firstLine + run * runLength + place, ok,
          UnsafeRawBufferPointer(rebasing: text.bytes[start..<end]))
        start = end + 1
        place += 1
      }
    }
  }

  /// Hands the result lines to `body` in line order: each run's text as it is, for a window in
  /// line order; for one grouped by form, each stretch of `longestRun` lines copied together (one
  /// at a time, so that the copies add one stretch to the memory the window holds).
  func forEachRunText(_ body: (Data) -> Void) {
    guard let placements else {
      for run in 0..<runs { body(text(run).data) }
      return
    }
    var first = 0
    while first < lines.count {
      let end = min(first + Self.longestRun, lines.count)
      var size = 0
      for index in first..<end { size += placements[index].bytes.count }
      var stretch = OutputBytes(capacity: size)
      for index in first..<end {
        let placement = placements[index]
        stretch.put(UnsafeRawBufferPointer(rebasing: text(placement.run).bytes[placement.bytes]))
      }
      body(stretch.finish())
      first = end
    }
  }
}
