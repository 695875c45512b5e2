import Foundation
import PropertyList

#if canImport(Glibc)
  import Glibc
#endif

/// `resumedata-bench peers`: ours beside libplist and Python's plistlib on the same inputs, in the
/// same run: the `plist` inputs decoded and encoded, and `batch --target ios13+` beside a plistlib
/// pipeline on the same NDJSON file. The peers are programs of their own (Benchmarks/peers/), run
/// one measurement at a time between ours, so that a slow spell on a shared host falls on both.
enum PeersBenchmark {
  static let usage = """
    USAGE: resumedata-bench peers [--libplist <path>] [--python <path>] [--peers-dir <dir>]
                                  [--tool <path>] [--records <n>] [--repeat <n>]
                                  [--callgrind-records <n>] [--callgrind-calls <n>]
                                  [--part plist|batch|all] [--rounds <n>] [--round-time <seconds>]

    Times this package beside two peers on the same bytes, in one run, and prints a line per
    measurement and peer: ours, the peer, and the ratio (above 1 means ours is faster, or spends
    fewer instructions). Benchmarks/peers-bench.sh builds everything and runs it.

    plist: the four inputs of `resumedata-bench plist` (small-4KB and large-10MB, binary and XML;
    `plist-inputs` writes them) decoded and encoded by ours (in this process), by libplist
    (plist_from_bin / plist_to_bin, plist_from_xml / plist_to_xml, through --libplist: the C program
    Benchmarks/peers/plist-peer.c) and by plistlib (loads / dumps, Benchmarks/peers/plistlib_peer.py),
    each timed the same way: best of --rounds rounds of at least --round-time seconds, no round
    started after 5 s; ours and the peers take turns --repeat times, the fastest of each shown.
    Ops/s for small-4KB, MB/s of the input for large-10MB. Before timing, the
    three readers' value counts are compared. Instructions per call by callgrind: on small-4KB,
    --callgrind-calls calls less none; on large-10MB, one call less none, ours and libplist only
    (a call of plistlib's would take minutes under callgrind).

    batch: --records records of each blob kind a Python script can handle as ours does (a healthy
    keyed v5 blob and a v2 XML blob, --target ios13+: diagnosed, written back untouched) in a file,
    read by `resumedata batch --target ios13+ --jobs 1 FILE` and by
    Benchmarks/peers/plistlib_pipeline.py FILE (see its header for what it does and does not do),
    output to /dev/null: records/s (the fastest of --repeat whole runs, the two taking turns), CPU
    time per record, peak RSS, and instructions per record by callgrind (a run over
    --callgrind-records records less a run over none). First both write their results for the
    first 1,000 records to files, which must be the same bytes.

    OPTIONS:
      --libplist <path>         The compiled plist-peer (libplist's lines are left out without it).
      --python <path>           The Python interpreter (default: /usr/bin/python3, else python3).
      --peers-dir <dir>         Where plistlib_peer.py and plistlib_pipeline.py are (default: the
                                source tree's Benchmarks/peers).
      --tool <path>             The resumedata executable (default: next to this benchmark).
      --records <n>             Records of each batch file (default: 20000).
      --repeat <n>              Turns of each measurement, the fastest shown (default: 3).
      --callgrind-records <n>   Records of each callgrind run of a batch (default: 400).
      --callgrind-calls <n>     Calls of each callgrind run on small-4KB (default: 200).
      --part <part>             plist, batch or all (default: all).
      --rounds <n>              Timed rounds per plist measurement (default: 3).
      --round-time <seconds>    Minimum duration of one round (default: 0.3).
      -h, --help                Show help information.
    """

  struct Options {
    var timing = TimingOptions()
    var libplist: String?
    var python =
      FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
      ? "/usr/bin/python3" : (Callgrind.executable("python3") ?? "python3")
    var peersDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("peers").path
    var tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("resumedata").path
    var records = 20_000
    var repeats = 3
    var callgrindRecords = 400
    var callgrindCalls = 200
    var parts: Set<String> = ["plist", "batch"]
  }

  static func run(_ arguments: [String]) -> Int32 {
    let hint = "resumedata-bench peers [--libplist <path>] [--python <path>] [--part <part>]"
    var options = Options()
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      if let problem = options.timing.parse(argument, &remaining) {
        if problem.isEmpty { continue }
        return usageError(problem, hint: hint)
      }
      if argument == "-h" || argument == "--help" {
        print(usage)
        return 0
      }
      guard
        [
          "--libplist", "--python", "--peers-dir", "--tool", "--records", "--repeat",
          "--callgrind-records", "--callgrind-calls", "--part",
        ].contains(argument)
      else { return usageError("unexpected argument '\(argument)'", hint: hint) }
      guard let value = remaining.popFirst() else {
        return usageError("missing value for '\(argument)'", hint: hint)
      }
      switch argument {
      case "--libplist": options.libplist = value
      case "--python": options.python = value
      case "--peers-dir": options.peersDirectory = value
      case "--tool": options.tool = value
      case "--part":
        guard ["plist", "batch", "all"].contains(value) else {
          return usageError("--part needs plist, batch or all", hint: hint)
        }
        options.parts = value == "all" ? ["plist", "batch"] : [value]
      default:
        guard let count = Int(value), count > 0 else {
          return usageError("\(argument) needs a positive whole number", hint: hint)
        }
        switch argument {
        case "--records": options.records = count
        case "--repeat": options.repeats = count
        case "--callgrind-records": options.callgrindRecords = count
        default: options.callgrindCalls = count
        }
      }
    }
    // posix_spawn is given paths, not names to look up.
    if !options.python.contains("/"), let found = Callgrind.executable(options.python) {
      options.python = found
    }
    for script in ["plistlib_peer.py", "plistlib_pipeline.py"]
    where !FileManager.default.fileExists(atPath: options.peersDirectory + "/" + script) {
      printError("Error: \(options.peersDirectory)/\(script): not found (see --peers-dir)")
      return 66
    }
    for program in [options.python, options.tool] + (options.libplist.map { [$0] } ?? [])
    where !FileManager.default.isExecutableFile(atPath: program) {
      printError("Error: \(program): not an executable")
      return 66
    }
    guard let directory = scratchDirectory("resumedata-peers") else { return 1 }
    defer { try? FileManager.default.removeItem(at: directory) }
    let counter = Callgrind(directory: directory, tool: options.tool)
    if let missing = counter.missing { say("# peers: instructions not counted: \(missing)") }
    let clock = ContinuousClock()
    let start = clock.now
    say("# peers: load average at the start \(loadAverage())")
    if options.parts.contains("plist") {
      let status = runPlist(options, directory: directory, counter: counter)
      guard status == 0 else { return status }
    }
    if options.parts.contains("batch") {
      let status = runBatch(options, directory: directory, counter: counter)
      guard status == 0 else { return status }
    }
    say(
      String(format: "# peers: done in %.1f s; load average ", seconds(clock.now - start))
        + loadAverage())
    return 0
  }

  /// Prints a line and flushes it, so that a long run can be followed through a pipe or a file.
  static func say(_ line: String) {
    print(line)
    fflush(nil)
  }

  /// The 1, 5 and 15 minute load averages (on a 2-core host another tenant's load shows here).
  static func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).joined(separator: " ")
  }

  // MARK: - plist

  /// A peer's measurement: its best seconds per call and the values it decoded.
  struct PeerTime {
    var seconds: Double
    var values: Int
  }

  /// A peer of the plist lines: its name and the command that runs it before its arguments
  /// (`FILE FORMAT OPERATION` and options).
  struct Peer {
    var name: String
    var command: [String]
    /// Whether callgrind counts its calls on the large input too.
    var countsLarge: Bool
  }

  static func runPlist(_ options: Options, directory: URL, counter: Callgrind) -> Int32 {
    let inputs: [PeerInputs.PlistInput]
    do {
      inputs = try PeerInputs.plistInputs()
    } catch {
      printError("Error: could not build the plist inputs: \(describe(error))")
      return 1
    }
    var peers: [Peer] = []
    if let libplist = options.libplist {
      peers.append(Peer(name: "libplist", command: [libplist], countsLarge: true))
    } else {
      say("# plist: libplist not measured (no --libplist)")
    }
    peers.append(
      Peer(
        name: "plistlib",
        command: [options.python, options.peersDirectory + "/plistlib_peer.py"],
        countsLarge: false))
    let timing = options.timing
    say(
      "# plist: best of \(timing.rounds) rounds of at least \(timing.roundTime) s each, ours and"
        + " each peer taking turns \(options.repeats) times; ratio = ours / peer (rates), peer /"
        + " ours (instructions): above 1, ours is ahead")
    for input in inputs {
      let file = directory.appendingPathComponent(input.fileName)
      let value: PropertyListValue
      do {
        try input.bytes.write(to: file)
        value = try PeerInputs.read(input.bytes, format: input.format)
      } catch {
        printError("Error: \(file.path): \(describe(error))")
        return 1
      }
      let values = PeerInputs.valueCount(value)
      say(
        "# \(input.label) \(input.format): \(size(input.bytes.count)), "
          + "\(grouped(Double(values))) values (\(file.lastPathComponent))")
      let encoding: PropertyListFormat = input.format == "binary" ? .binary : .xml
      for operation in ["decode", "encode"] {
        let arguments = [file.path, input.format, operation]
        // Ours and each peer take turns, --repeat times, and the fastest of each is kept: on a
        // shared host a slow spell then falls on every side.
        var ours: Result<Double, any Error> = .success(.infinity)
        var theirs = peers.map {
          ($0, Result<PeerTime, PeerFailure>.success(PeerTime(seconds: .infinity, values: 0)))
        }
        for _ in 0..<options.repeats {
          let mine = Result {
            try bestSecondsPerCall(timing) {
              if operation == "decode" {
                blackHole(try PeerInputs.read(input.bytes, format: input.format))
              } else {
                blackHole(try value.encoded(as: encoding))
              }
            }
          }
          ours = fastest(ours, mine)
          for index in theirs.indices {
            let peer = theirs[index].0
            let time = peerTime(
              peer.command + arguments + [
                "--rounds", String(timing.rounds), "--round-time", String(timing.roundTime),
              ], in: directory)
            theirs[index].1 = fastest(theirs[index].1, time)
          }
        }
        if operation == "decode" {
          verify(input, values: values, theirs)
        }
        // Instructions: on the small input, over many calls; on the large one, of one call, and
        // not Python's (a call is a second or more, some minutes under callgrind).
        let small = input.rate.isPerSecond
        let calls = small ? options.callgrindCalls : 1
        let countedPeers = Set(
          peers.filter { counter.missing == nil && (small || $0.countsLarge) }.map(\.name))
        let ourCount =
          countedPeers.isEmpty
          ? nil
          : counter.perRecord(
            ["plist-calls"] + arguments, records: calls, file: nil, executable: counter.bench)
        for (peer, result) in theirs {
          let counted = countedPeers.contains(peer.name)
          let theirCount =
            counted
            ? counter.perRecord(
              Array(peer.command.dropFirst()) + arguments + ["--calls"], records: calls,
              file: nil, executable: peer.command[0]) : nil
          var line =
            "plist \(padded(input.label, 10)) \(padded(input.format, 6)) \(padded(operation, 6)) "
            + padded("ours " + rateText(ours, input.rate), 22) + " "
            + padded("\(peer.name) " + rateText(result.map(\.seconds), input.rate), 26)
          if case .success(let mine) = ours, case .success(let peerTime) = result {
            line += String(format: " ratio %.2fx", peerTime.seconds / mine)
          }
          if let ourCount, let theirCount {
            line += String(
              format: "   instructions/call: ours %@, %@ %@, ratio %.2fx",
              count(ourCount), peer.name, count(theirCount), theirCount / ourCount)
          } else if counted {
            line += "   instructions not counted (a callgrind run failed)"
          } else if counter.missing == nil {
            line += "   instructions not counted (minutes under callgrind)"
          }
          say(line)
        }
      }
    }
    return 0
  }

  /// The faster of two measurements, or the first failure (a side that fails once is not trusted).
  static func fastest<Failure: Error>(
    _ best: Result<Double, Failure>, _ next: Result<Double, Failure>
  ) -> Result<Double, Failure> {
    guard case .success(let a) = best else { return best }
    guard case .success(let b) = next else { return next }
    return .success(min(a, b))
  }

  /// The faster of two peer measurements, or the first failure.
  static func fastest(
    _ best: Result<PeerTime, PeerFailure>, _ next: Result<PeerTime, PeerFailure>
  ) -> Result<PeerTime, PeerFailure> {
    guard case .success(let a) = best else { return best }
    guard case .success(let b) = next else { return next }
    return .success(b.seconds < a.seconds ? b : a)
  }

  /// Prints whether every reader read the same number of values as ours.
  static func verify(
    _ input: PeerInputs.PlistInput, values: Int, _ theirs: [(Peer, Result<PeerTime, PeerFailure>)]
  ) {
    var problems: [String] = []
    for (peer, result) in theirs {
      switch result {
      case .success(let time) where time.values != values:
        problems.append("\(peer.name) read \(grouped(Double(time.values))) values")
      case .success: break
      case .failure(let failure): problems.append("\(peer.name): \(failure)")
      }
    }
    let names =
      (["ours"] + theirs.map(\.0.name)).dropLast().joined(separator: ", ")
      + " and " + (theirs.last?.0.name ?? "")
    say(
      problems.isEmpty
        ? "✓ plist \(input.label) \(input.format): \(names) each read "
          + "\(grouped(Double(values))) values"
        : "✗ plist \(input.label) \(input.format): ours read \(grouped(Double(values))) values; "
          + problems.joined(separator: "; "))
  }

  /// A rate as text, or the error.
  static func rateText(_ result: Result<Double, some Error>, _ rate: Rate) -> String {
    switch result {
    case .success(let seconds): return rate.text(seconds)
    case .failure(let error): return "error: \(describe(error))"
    }
  }

  /// A count in thousands or millions: `12.3K`, `536.2M`.
  static func count(_ count: Double) -> String {
    count < 10_000_000
      ? String(format: "%.1fK", count / 1000) : String(format: "%.1fM", count / 1_000_000)
  }

  /// Why a peer gave no time.
  struct PeerFailure: Error, CustomStringConvertible {
    var description: String
  }

  /// Runs a peer that prints `<seconds per call> <values>`.
  static func peerTime(_ command: [String], in directory: URL) -> Result<PeerTime, PeerFailure> {
    guard let run = capture(command, in: directory) else {
      return .failure(PeerFailure(description: "could not run \(command[0])"))
    }
    let fields = run.output.split(whereSeparator: \.isWhitespace)
    guard run.status == 0, fields.count == 2, let seconds = Double(fields[0]),
      let values = Int(fields[1])
    else {
      let reason = run.errors.split(separator: "\n").last.map(String.init) ?? "no output"
      return .failure(PeerFailure(description: "exit \(run.status): \(reason)"))
    }
    return .success(PeerTime(seconds: seconds, values: values))
  }

  /// Runs `command` to its end, its standard output and error going to files in `directory` (a
  /// file cannot fill and stall the child as an unread pipe would); its exit status, standard
  /// output (nothing when it goes to `outputFile` instead) and standard error; nil when it could
  /// not be started.
  static func capture(_ command: [String], in directory: URL, outputFile: URL? = nil) -> (
    status: Int32, output: String, errors: String
  )? {
    let output = outputFile ?? directory.appendingPathComponent("peer.out")
    let errors = directory.appendingPathComponent("peer.err")
    guard FileManager.default.createFile(atPath: output.path, contents: nil),
      FileManager.default.createFile(atPath: errors.path, contents: nil),
      let outputHandle = FileHandle(forWritingAtPath: output.path),
      let errorHandle = FileHandle(forWritingAtPath: errors.path)
    else { return nil }
    defer {
      try? outputHandle.close()
      try? errorHandle.close()
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    process.standardOutput = outputHandle
    process.standardError = errorHandle
    do { try process.run() } catch { return nil }
    process.waitUntilExit()
    let text = outputFile == nil ? (try? String(contentsOf: output, encoding: .utf8)) ?? "" : ""
    return (
      process.terminationStatus, text, (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
    )
  }
}

extension Rate {
  /// Whether the rate is in calls per second (the small input).
  var isPerSecond: Bool {
    if case .perSecond = self { return true }
    return false
  }
}
