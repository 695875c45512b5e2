import CXMLShim
import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - The batch benchmark

/// `resumedata-bench batch`: `resumedata batch` repairing streams of NDJSON records in its own
/// process (records/s, peak RSS from `wait4`), against the same pipeline written with Foundation.
enum BatchBenchmark {
  static let usage = """
    USAGE: resumedata-bench batch [--records <n>] [--mix-records <n>] [--large-records <n>]
                                  [--foundation-records <n>] [--callgrind-records <n>]
                                  [--repeat <n>] [--tool <path>] [--target <target>]

    Feeds NDJSON records ({"id": N, "blob": "<base64>"}) through a pipe to `resumedata batch
    --target T --jobs J` (the tool built beside this benchmark, or --tool), its output going to
    /dev/null, and prints records/s, CPU time per record and peak RSS for a v2 XML blob and a
    keyed v5 blob (each about 5 KB, two ~2 KB request archives) with --jobs 1 and --jobs 2; then
    the same with the records in a file named on the command line (no writer sharing the cores);
    for the v2 blob, the floor: libxml2 alone parsing it in this process, with callbacks that do
    nothing, on one thread (no v2 XML record can be repaired faster than that).

    Then a line per kind of blob, each from a file with --jobs 1: the keyed blob untouched, the v2
    blob untouched, the keyed blob repaired for ios10.0-10.1 (request archives rewritten to the $N
    layout, written as v2) and a Network.framework blob with the same fields converted for ios13+
    (the changed ones with a fourth as many records; the untouched ones also with --jobs 2, and as
    two --jobs 1 runs at once, which share nothing but the machine); and a mixed line: a blob of
    each of four kinds in equal parts (the keyed and v2 blobs, a v2 blob in the $N layout of iOS
    10.0 restored to the standard one, the Network.framework blob) and 10 % bad records, --target
    ios13+, with --jobs 1 and 2, over --mix-records records (the 200,000 of the pipeline issue 19
    describes: a run's start, some 25 ms of loading Foundation's libraries, is printed apart and
    weighs little there). Each gives records/s, instructions per record (callgrind on a stripped
    copy: a run over --callgrind-records records less a run over none; "not counted" when valgrind
    is not installed) and its floor, counted and timed in the same run: libxml2 alone for XML, our
    own binary-plist reader for archives (the blob and the request archives it holds; for the
    conversion, the keyed blob it becomes); for the mix, the kinds' floors in their proportions.
    Beside each floor, the record floor: what every record of the kind must do besides its parser,
    counted and timed the same way: the line's base64 decoded, the parser floor, for XML the request
    archives decoded from their <data> text and checked as binary plists, and the blob written (for
    a changed one) encoded as base64.
    Last, the peak RSS of the keyed run at two input lengths (flat memory means the same figure).

    Each throughput line is the fastest of --repeat runs, the runs with 1 and 2 jobs taking turns:
    on a shared host another tenant can only slow a run down, and taking turns keeps a slow spell
    from landing on one side of the scaling figure only.

    The baseline does the same per record, one record at a time, with Foundation: JSONSerialization
    for the line, PropertyListSerialization for the blob and both request archives, an
    NSKeyedUnarchiver for a keyed blob, an NSKeyedArchiver to write the repaired blob, and
    JSONSerialization for the result line.

    OPTIONS:
      --records <n>             Records per throughput run (default: 20000).
      --mix-records <n>         Records per run of the mixed line (default: 200000).
      --large-records <n>       Records of the long run for the memory line (default: 1000000).
      --foundation-records <n>  Records of the Foundation baseline (default: 2000).
      --callgrind-records <n>   Records of each callgrind run (default: 400).
      --repeat <n>              Runs of each throughput line, the fastest shown (default: 3).
      --tool <path>             The resumedata executable (default: next to this benchmark).
      --target <target>         The repair target (default: ios13+).
      -h, --help                Show help information.
    """

  static func run(_ arguments: [String]) -> Int32 {
    var records = 20_000
    var mixRecords = 200_000
    var largeRecords = 1_000_000
    var foundationRecords = 2_000
    var repeats = 3
    var callgrindRecords = BatchKinds.defaultCallgrindRecords
    var tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("resumedata").path
    var target = "ios13+"
    let hint = "resumedata-bench batch [--records <n>] [--large-records <n>] [--tool <path>]"
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "-h", "--help":
        print(usage)
        return 0
      case "--records", "--mix-records", "--large-records", "--foundation-records", "--repeat",
        "--tool", "--target", "--callgrind-records":
        guard let value = remaining.popFirst() else {
          return usageError("missing value for '\(argument)'", hint: hint)
        }
        if argument == "--tool" {
          tool = value
        } else if argument == "--target" {
          target = value
        } else {
          guard let count = Int(value), count > 0 else {
            return usageError("\(argument) needs a positive whole number", hint: hint)
          }
          switch argument {
          case "--records": records = count
          case "--mix-records": mixRecords = count
          case "--large-records": largeRecords = count
          case "--repeat": repeats = count
          case "--callgrind-records": callgrindRecords = count
          default: foundationRecords = count
          }
        }
      default:
        return usageError("unexpected argument '\(argument)'", hint: hint)
      }
    }
    let blobs: [(name: String, bytes: Data)]
    do {
      blobs = try makeBlobs()
    } catch {
      printError("Error: could not build the blobs: \(describe(error))")
      return 1
    }
    for blob in blobs[..<2] {
      print("# batch \(blob.name): blob of \(size(blob.bytes.count)), repair --target \(target)")
      var oneJob = 0.0
      // Through a pipe, as in a pipeline (the writer shares the two cores), then from a file.
      for source in ["stdin", "file"] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
          "resumedata-batch-bench-\(getpid()).ndjson")
        if source == "file" {
          guard writeRecords(records, blob: blob.bytes, to: file) else {
            printError("Error: could not write \(file.path)")
            return 1
          }
        }
        defer { try? FileManager.default.removeItem(at: file) }
        guard
          let fastest = fastestRuns(
            repeats: repeats, tool: tool,
            { jobs in
              let command = [tool, "batch", "--target", target, "--jobs", String(jobs)]
              return source == "file"
                ? DownloadBenchmark.spawn(command + [file.path])
                : spawn(command, records: records, blob: blob.bytes)
            })
        else { return 1 }
        let sourceOneJob = Double(records) / fastest[1]!.wall
        if source == "stdin" { oneJob = sourceOneJob }
        for jobs in [1, 2] {
          let usage = fastest[jobs]!
          let rate = Double(records) / usage.wall
          // Through a pipe, the writer's CPU beside the tool's: how much of the two cores the
          // run kept busy, and so how far more jobs could take it.
          let feeder = usage.feederCPU.map {
            String(
              format: "  writer CPU %.1f µs/record, cores busy %.0f%%", $0 / Double(records) * 1e6,
              ($0 + usage.cpu) / (2 * usage.wall) * 100)
          }
          print(
            String(
              format:
                "batch %@ repair %@ --jobs %d  %@ records/s  (%@ per job)  CPU %.1f µs/record  peak RSS %.1f MiB%@%@",
              padded(blob.name, 9), padded(source, 5), jobs, grouped(rate),
              grouped(rate / Double(jobs)), usage.cpu / Double(records) * 1e6,
              Double(usage.peakKiB) / 1024,
              jobs == 1 ? "" : String(format: "  scaling %.2fx", rate / sourceOneJob),
              feeder ?? ""))
        }
      }
      let baseline = foundationRate(
        blob.bytes, keyed: blob.name.hasPrefix("keyed"),
        records: foundationRecords)
      switch baseline {
      case .success(let rate):
        print(
          String(
            format: "batch %@ repair Foundation  %@ records/s  (ours --jobs 1 / Foundation %.1fx)",
            padded(blob.name, 9), grouped(rate), oneJob / rate))
      case .failure(let error):
        print("✗ batch \(blob.name) Foundation baseline: \(describe(error))")
      }
      if blob.name == "v2-xml" {
        // What the required XML parser alone allows one core: a bound no record can beat.
        print(
          String(
            format: "batch %@ floor: libxml2 alone, no-op handlers, 1 thread  %@ parses/s",
            padded(blob.name, 9), grouped(libxml2Rate(blob.bytes, repeats: repeats))))
      }
    }
    // A line per kind of blob, the changed ones included, and a mix of them, each against the
    // floor its parser sets.
    let status = BatchKinds.run(
      blobs: blobs, records: records, mixRecords: mixRecords, callgrindRecords: callgrindRecords,
      repeats: repeats, tool: tool)
    guard status == 0 else { return status }
    let keyed = blobs[1]
    for count in [10_000, largeRecords] {
      guard
        let usage = spawn(
          [tool, "batch", "--target", target, "--jobs", "2"], records: count, blob: keyed.bytes)
      else { return 1 }
      print(
        String(
          format: "batch %@ memory %@ records  peak RSS %.1f MiB  (%@ records/s)",
          padded(keyed.name, 9), grouped(Double(count)), Double(usage.peakKiB) / 1024,
          grouped(Double(count) / usage.wall)))
    }
    return 0
  }

  /// A v2 XML blob, a keyed v5 blob and a Network.framework blob with the same fields.
  static func makeBlobs() throws -> [(name: String, bytes: Data)] {
    let entries = try Inputs.resumeEntries(seed: 0xBA7C)
    return [
      ("v2-xml", try ResumeData(building: entries, as: .v2, format: .xml).encoded()),
      ("keyed-v5", try ResumeData(building: entries, as: .keyed, infoVersion: 5).encoded()),
      ("nw", try ResumeData(building: entries, as: .networkFramework).encoded()),
    ]
  }

  /// The fastest of `repeats` runs with 1 and with 2 jobs, the two taking turns (a slow spell then
  /// cannot land on one side of the scaling figure only); nil, after saying so, when a run failed.
  static func fastestRuns(
    repeats: Int, tool: String, _ run: (_ jobs: Int) -> DownloadBenchmark.Usage?
  ) -> [Int: DownloadBenchmark.Usage]? {
    var fastest: [Int: DownloadBenchmark.Usage] = [:]
    for _ in 0..<repeats {
      for jobs in [1, 2] {
        guard let usage = run(jobs) else {
          printError("Error: could not run \(tool)")
          return nil
        }
        if usage.wall < fastest[jobs]?.wall ?? .infinity { fastest[jobs] = usage }
      }
    }
    return fastest
  }

  /// The record line of `blob` with a given id: `{"id":N,"blob":"<base64>"}`.
  static func recordLine(_ blob: Data) -> (Int) -> String {
    let base64 = blob.base64EncodedString()
    return { "{\"id\":\($0),\"blob\":\"\(base64)\"}" }
  }

  /// `records` NDJSON lines of `blob`, written to `descriptor`; whether they all were.
  static func writeRecords(_ records: Int, blob: Data, to descriptor: Int32) -> Bool {
    writeLines(records, cycle: [recordLine(blob)], to: descriptor)
  }

  /// `records` NDJSON lines made by the functions of `cycle` in turn (each given the line's id),
  /// written to `descriptor`; whether they all were.
  ///
  /// The lines are made once, about 1 MiB of them with ids counting from 0, and that block is
  /// written over and over (the ids repeat): the writer, which shares the machine's cores with the
  /// tool when it feeds a pipe, costs little more than the copying, as a fast upstream stage would.
  static func writeLines(_ records: Int, cycle: [(Int) -> String], to descriptor: Int32) -> Bool {
    var block: [UInt8] = []
    // Where each line of the block ends (after its line break).
    var lineEnds: [Int] = []
    // Whole cycles only, so that the block repeated keeps the cycle's proportions.
    while block.count < 1 << 20 || lineEnds.count % cycle.count != 0, lineEnds.count < records {
      block += Array((cycle[lineEnds.count % cycle.count](lineEnds.count) + "\n").utf8)
      lineEnds.append(block.count)
    }
    var remaining = records
    return block.withUnsafeBytes { block in
      while remaining > 0 {
        let lines = min(remaining, lineEnds.count)
        let length = lineEnds[lines - 1]
        var offset = 0
        while offset < length {
          let written = write(descriptor, block.baseAddress! + offset, length - offset)
          guard written > 0 else { return false }
          offset += written
        }
        remaining -= lines
      }
      return true
    }
  }

  /// The same lines in a file; whether it worked.
  static func writeRecords(_ records: Int, blob: Data, to file: URL) -> Bool {
    writeLines(records, cycle: [recordLine(blob)], to: file)
  }

  /// The lines of `writeLines(_:cycle:to:)` in a file; whether it worked.
  static func writeLines(_ records: Int, cycle: [(Int) -> String], to file: URL) -> Bool {
    let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return writeLines(records, cycle: cycle, to: descriptor)
  }

  /// Runs `command` with `records` NDJSON lines of `blob` (`writeRecords`) written to its standard
  /// input from another thread, its output discarded; the kernel's accounting of it.
  static func spawn(_ command: [String], records: Int, blob: Data) -> DownloadBenchmark.Usage? {
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { return nil }
    let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
    // The writer's own CPU time, set when it is done.
    let writerCPU = Mutex<Double?>(nil)
    let done = DispatchSemaphore(value: 0)
    let writer = Thread {
      _ = writeRecords(records, blob: blob, to: writeEnd)
      close(writeEnd)
      var time = timespec()
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
      writerCPU.withLock { $0 = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9 }
      done.signal()
    }
    // The writing end must not leak into the child, or its standard input would never end.
    _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
    var started = false
    guard
      var usage = DownloadBenchmark.spawn(
        command, input: readEnd,
        started: {
          writer.start()
          started = true
        })
    else {
      close(writeEnd)
      if started { done.wait() }
      return nil
    }
    // The child has read its input to the end, or stopped: the writer is done or soon fails.
    done.wait()
    usage.feederCPU = writerCPU.withLock { $0 }
    return usage
  }

  /// Parses/s of libxml2 alone over `document`, through the same shim entry point as the XML
  /// reader (so driven the same way) but with callbacks that do nothing: the fastest of `repeats`
  /// runs of 20,000 parses.
  static func libxml2Rate(_ document: Data, repeats: Int) -> Double {
    var handlers = CXMLShimHandlers(
      startElement: { _, _, _, _, _ in 0 }, endElement: { _, _ in 0 },
      characters: { _, _, _, _ in 0 }, error: { _, _, _, _ in })
    let parses = 20_000
    let clock = ContinuousClock()
    var fastest = Double.infinity
    for _ in 0..<repeats {
      let start = clock.now
      for _ in 0..<parses {
        let status = document.withUnsafeBytes { raw in
          cxml_shim_parse(raw.baseAddress, raw.count, &handlers, nil)
        }
        blackHole(status)
      }
      fastest = min(fastest, seconds(clock.now - start))
    }
    return Double(parses) / fastest
  }

  /// Records/s of the Foundation pipeline over `records` lines of `blob`.
  static func foundationRate(_ blob: Data, keyed: Bool, records: Int) -> Result<Double, any Error> {
    let line = Data("{\"id\":1,\"blob\":\"\(blob.base64EncodedString())\"}".utf8)
    let clock = ContinuousClock()
    let start = clock.now
    do {
      for _ in 0..<records { blackHole(try foundationRecord(line, keyed: keyed)) }
    } catch {
      return .failure(error)
    }
    return .success(Double(records) / seconds(clock.now - start))
  }

  /// One record through Foundation: the work `batch --target` does, as near as Foundation on
  /// Linux can do it (it cannot read Apple's request layout, so the requests are read as plists).
  static func foundationRecord(_ line: Data, keyed: Bool) throws -> Data {
    struct Unreadable: Error {}
    guard let record = try JSONSerialization.jsonObject(with: line) as? [String: Any],
      let text = record["blob"] as? String, let blob = Data(base64Encoded: text)
    else { throw Unreadable() }
    var format = PropertyListSerialization.PropertyListFormat.xml
    guard let dictionary = try foundationResumeDictionary(blob, keyed: keyed, format: &format)
    else { throw Unreadable() }
    for key in [ResumeDataKey.currentRequest, ResumeDataKey.originalRequest] {
      guard let data = dictionary[key] as? Data else { throw Unreadable() }
      blackHole(try PropertyListSerialization.propertyList(from: data, format: nil))
    }
    let repaired = dictionary.mutableCopy() as? NSMutableDictionary ?? NSMutableDictionary()
    repaired[ResumeDataKey.infoVersion] = 5
    let archiver = NSKeyedArchiver(requiringSecureCoding: false)
    archiver.encode(repaired, forKey: "NSKeyedArchiveRootObjectKey")
    archiver.finishEncoding()
    return try JSONSerialization.data(withJSONObject: [
      "id": record["id"] ?? NSNull(), "ok": true,
      "blob": archiver.encodedData.base64EncodedString(),
    ])
  }
}
