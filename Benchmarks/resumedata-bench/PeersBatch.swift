import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The batch lines of `resumedata-bench peers`: `resumedata batch --jobs 1` beside the plistlib
/// pipeline (Benchmarks/peers/plistlib_pipeline.py) on the same NDJSON file.
extension PeersBenchmark {
  /// Records compared byte for byte before the timed runs.
  static let checkedRecords = 1_000

  static func runBatch(_ options: Options, directory: URL, counter: Callgrind) -> Int32 {
    let kinds: [BatchKinds.Kind]
    do {
      // The kinds whose work a Python script can do as ours does: a healthy blob diagnosed and
      // written back untouched. (Repairs rewrite request archives in CFNetwork's layouts, and a
      // Network.framework blob is a format of its own: not a plistlib script's work.)
      kinds = try BatchKinds.kinds(try BatchBenchmark.makeBlobs()).lines.filter {
        $0.name.hasSuffix("untouched") && $0.target == "ios13+"
      }
    } catch {
      printError("Error: could not build the blobs: \(describe(error))")
      return 1
    }
    let pipeline = options.peersDirectory + "/plistlib_pipeline.py"
    let ours = [options.tool, "batch", "--target", "ios13+", "--jobs", "1"]
    let theirs = [options.python, pipeline]
    let records = options.records
    say(
      "# batch: \(grouped(Double(records))) records of a kind in a file, each side reading it in a"
        + " process of its own (whole runs, the fastest of \(options.repeats), taking turns),"
        + " output to /dev/null; ratio = ours / peer (rates), peer / ours (CPU, instructions)")
    let empty = directory.appendingPathComponent("empty.ndjson")
    guard FileManager.default.createFile(atPath: empty.path, contents: Data()) else {
      printError("Error: could not write \(empty.path)")
      return 1
    }
    // What a run costs before its first record (loading the libraries, or the interpreter and
    // its modules): it is in each run's wall time, so it is shown.
    var startOurs = Double.infinity
    var startTheirs = Double.infinity
    for _ in 0..<options.repeats {
      guard let mine = DownloadBenchmark.spawn(ours + [empty.path]),
        let peer = DownloadBenchmark.spawn(theirs + [empty.path])
      else {
        printError("Error: could not run \(options.tool) or \(options.python)")
        return 1
      }
      startOurs = min(startOurs, mine.wall)
      startTheirs = min(startTheirs, peer.wall)
    }
    say(
      String(
        format: "# batch: a run's start (no records): ours %.1f ms, plistlib pipeline %.1f ms",
        startOurs * 1000, startTheirs * 1000))
    for kind in kinds {
      let file = directory.appendingPathComponent("records.ndjson")
      let line = BatchBenchmark.recordLine(kind.blob)
      // Both outputs of the first records must be the same bytes: the peer does the same work.
      let checked = min(records, checkedRecords)
      guard BatchBenchmark.writeLines(checked, cycle: [line], to: file) else {
        printError("Error: could not write \(file.path)")
        return 1
      }
      let ourOutput = directory.appendingPathComponent("ours.ndjson")
      let theirOutput = directory.appendingPathComponent("theirs.ndjson")
      guard let mine = capture(ours + [file.path], in: directory, outputFile: ourOutput),
        let peer = capture(theirs + [file.path], in: directory, outputFile: theirOutput)
      else {
        printError("Error: could not run \(options.tool) or \(options.python)")
        return 1
      }
      let same = FileManager.default.contentsEqual(
        atPath: ourOutput.path, andPath: theirOutput.path)
      say(
        same && mine.status == 0 && peer.status == 0
          ? "✓ batch \(kind.name): the plistlib pipeline's \(grouped(Double(checked))) result lines"
            + " are byte for byte ours"
          : "✗ batch \(kind.name): the result lines differ (ours exit \(mine.status), the pipeline's"
            + " \(peer.status)\(peer.errors.isEmpty ? "" : ": " + lastLine(peer.errors)))")
      guard BatchBenchmark.writeLines(records, cycle: [line], to: file) else {
        printError("Error: could not write \(file.path)")
        return 1
      }
      var fastest: [DownloadBenchmark.Usage?] = [nil, nil]
      for _ in 0..<options.repeats {
        for (side, command) in [ours, theirs].enumerated() {
          guard let usage = spawnMeasured(command + [file.path], in: directory) else {
            printError("Error: could not run \(command[0])")
            return 1
          }
          if usage.wall < fastest[side]?.wall ?? .infinity { fastest[side] = usage }
        }
      }
      var counts: [Double?] = [nil, nil]
      if counter.missing == nil {
        guard BatchBenchmark.writeLines(options.callgrindRecords, cycle: [line], to: file) else {
          printError("Error: could not write \(file.path)")
          return 1
        }
        counts[0] = counter.perRecord(
          Array(ours.dropFirst()), records: options.callgrindRecords, file: file)
        counts[1] = counter.perRecord(
          [pipeline], records: options.callgrindRecords, file: file, executable: options.python)
      }
      guard let mineFastest = fastest[0], let theirFastest = fastest[1] else { return 1 }
      let count = Double(records)
      func side(_ name: String, _ usage: DownloadBenchmark.Usage, _ instructions: Double?)
        -> String
      {
        "\(name) \(grouped(count / usage.wall)) records/s, "
          + String(format: "CPU %.1f µs/record, ", usage.cpu / count * 1e6)
          + BatchKinds.instructions(instructions, per: "record")
          + (usage.peakKiB > 0
            ? String(format: ", peak RSS %.1f MiB", Double(usage.peakKiB) / 1024)
            : ", peak RSS not measured (no /usr/bin/time)")
      }
      var text =
        "batch \(padded(kind.name, 18)) --target ios13+ file: "
        + side("ours --jobs 1", mineFastest, counts[0]) + "  "
        + side("plistlib pipeline", theirFastest, counts[1])
        + String(
          format: "  ratio %.1fx (CPU %.1fx", theirFastest.wall / mineFastest.wall,
          theirFastest.cpu / mineFastest.cpu)
      if let mineCount = counts[0], let theirCount = counts[1] {
        text += String(format: ", instructions %.1fx", theirCount / mineCount)
      }
      say(text + ")")
      if mineFastest.status != 0 || theirFastest.status != 0 {
        say(
          "✗ batch \(kind.name): exit status ours \(mineFastest.status), the pipeline's"
            + " \(theirFastest.status)")
      }
    }
    return 0
  }

  /// GNU time, which reports a child's peak RSS as the kernel counts it for that child alone.
  static let gnuTime = "/usr/bin/time"

  /// Runs `command` as `DownloadBenchmark.spawn` does (wall and CPU time from `wait4`), through GNU
  /// time for its peak RSS (0 when GNU time is not installed).
  ///
  /// `wait4`'s own peak RSS of a child this process spawned is this process's RSS when larger:
  /// `posix_spawn` runs the child in this process's memory until it executes the command, and
  /// Linux keeps the larger peak across `execve`. After the plist lines this process holds the
  /// 10 MB inputs' values, so a Python child would show some 110 MiB. GNU time forks the command
  /// from its own small process and reports what `wait4` says of that child. (It costs the run
  /// one `fork` and `execve`, about a millisecond, and its CPU time is counted with the child's.)
  static func spawnMeasured(_ command: [String], in directory: URL) -> DownloadBenchmark.Usage? {
    guard FileManager.default.isExecutableFile(atPath: gnuTime) else {
      var usage = DownloadBenchmark.spawn(command)
      usage?.peakKiB = 0
      return usage
    }
    let report = directory.appendingPathComponent("time.out")
    guard
      var usage = DownloadBenchmark.spawn(
        [gnuTime, "-f", "%M", "-o", report.path] + command)
    else { return nil }
    let text = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
    usage.peakKiB = Int(lastLine(text).trimmingCharacters(in: .whitespaces)) ?? 0
    return usage
  }

  /// The last line of a text.
  static func lastLine(_ text: String) -> String {
    text.split(separator: "\n").last.map(String.init) ?? ""
  }
}
