import Foundation
import ResumeDataBatch

/// `resumedata batch [FILE|-...] [--jobs N] [--target T | --to GEN] …`: a stream filter over
/// NDJSON records of resume blobs, one result a record, in input order.
enum BatchCommand {
  /// The text `resumedata batch --help` prints.
  static let help = """
    OVERVIEW: Diagnose, repair or convert NDJSON streams of resume blobs, on every core,
    one result a record.

    Reads resume blobs as NDJSON, one record a line:
      {"id": ..., "blob": "<base64>"}   {"id": ..., "path": "FILE"}
      {"id": ..., "text": "<the blob in any captured form: base64, hex, a description>"}
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
    let options = try BatchOptions(parsed)
    let jobs = try parsed.value("--jobs").map { (text) throws(CommandError) in
      guard let jobs = Int(text), (1...BatchPipeline.maximumJobs).contains(jobs) else {
        throw .usage("--jobs must be a whole number from 1 to \(BatchPipeline.maximumJobs)")
      }
      return jobs
    }
    let inputs = parsed.positionals.isEmpty ? ["-"] : parsed.positionals
    keepFreedMemory()
    var recordFailed = false
    var inputFailed = false
    for input in inputs {
      let pipeline = BatchPipeline(options: options, inputName: input, jobs: jobs)
      do throws(BatchInputError) {
        let allOk =
          input == "-"
          ? try pipeline.run(
            readingWith: streams.readStandardInputPart,
            writePieces: streams.writeStandardOutputPieces)
          : try pipeline.run(contentsOf: input, writePieces: streams.writeStandardOutputPieces)
        if !allOk { recordFailed = true }
      } catch {
        streams.printError(
          CommandError(.unreadableInput, error.message, file: error.file).rendered)
        inputFailed = true
      }
    }
    // Engines that run batch as a task (Hadoop Streaming, Spark's RDD.pipe) fail the whole task
    // on a non-zero status; with --exit-zero, failed records are only in the output.
    if inputFailed { return .unreadableInput }
    return recordFailed && !parsed.has("--exit-zero") ? .failure : .success
  }
}

extension BatchCommand {
  /// Keeps memory the batch frees for its next runs. glibc's allocator hands memory back to the
  /// kernel once a few hundred kilobytes lie free at the top of a heap, and takes buffers above
  /// 128 KiB (a run's result lines) straight from mmap: a batch, whose every run of records frees
  /// and then allocates buffers of that size again, would pay a page fault for every 4 KiB it
  /// touches again (with 2 jobs about 0.7 a record, and a tenth of the run's time). Memory then
  /// stays at the run's high-water mark, which the pipeline's windows bound.
  ///
  /// glibc's `mallopt` is looked up at run time: it is in no module Swift imports, and not every
  /// C library has it.
  static func keepFreedMemory() {
    #if os(Linux)
      typealias Option = @convention(c) (Int32, Int32) -> Int32
      guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return }
      let mallopt = unsafeBitCast(symbol, to: Option.self)
      // malloc.h's M_MMAP_THRESHOLD (-3) and M_TRIM_THRESHOLD (-1): buffers up to 32 MiB from
      // the heaps, and a heap given back only past 64 MiB free at its top.
      _ = mallopt(-3, 32 << 20)
      _ = mallopt(-1, 64 << 20)
    #endif
  }
}

extension BatchOptions {
  /// What `batch`'s command line asks of every record.
  init(_ parsed: Arguments) throws(CommandError) {
    let target = parsed.value("--target")
    let generation = parsed.value("--to")
    let operation: Operation
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
    let inPlace = parsed.has("--in-place")
    let backup = parsed.has("--backup")
    if backup, !inPlace { throw .usage("--backup goes with --in-place") }
    if inPlace, operation == .diagnose {
      throw .usage("--in-place needs --target or --to: there is nothing to write")
    }
    let maximumRecordBytes =
      try parsed.value("--max-record-bytes").map {
        (text) throws(CommandError) in
        guard let bytes = Int(text), bytes > 0, bytes <= Self.maximumRecordBytesLimit else {
          throw .usage(
            "--max-record-bytes must be a whole number from 1 to \(Self.maximumRecordBytesLimit)"
          )
        }
        return bytes
      } ?? Self.defaultMaximumRecordBytes
    self.init(
      operation: operation, temporaryDirectory: parsed.temporaryDirectory, inPlace: inPlace,
      backup: backup, maximumRecordBytes: maximumRecordBytes)
  }
}
