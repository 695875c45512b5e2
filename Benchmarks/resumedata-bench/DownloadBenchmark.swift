import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - The download benchmark

/// `resumedata-bench download`: the same file fetched by curl and by `resumedata download`, each in
/// its own process, with wall time, CPU time and peak RSS read from the kernel's accounting of that
/// process (`wait4`).
enum DownloadBenchmark {
  static let usage = """
    USAGE: resumedata-bench download --url <url>... [--tool <path>] [--floor <path>]
                                     [--aria2 <path>] [--connections <n>] [--rounds <n>]
                                     [--engine <name>]... [--start-cost] [--output-dir <dir>]

    Fetches each URL with `curl -sS -o FILE URL` and with `resumedata download URL -o FILE`
    (the tool built beside this benchmark, or --tool), and with --floor, a program that fetches it
    with a bare URLSession data task discarding every chunk (Benchmarks/urlsession-floor: what any
    downloader on URLSession pays before it does anything with the bytes). Each round runs them
    one after the other; the lines give each one's best wall time and best CPU time (user +
    system) over the rounds and its largest peak resident memory, then the ratios. The outputs
    of curl and ours are compared byte for byte and deleted. Serve the files from a local server
    (Benchmarks/download-bench.sh starts nginx on 127.0.0.1 with 1 GiB and 4 GiB files).

    OPTIONS:
      --url <url>             A file to fetch (repeatable).
      --tool <path>           The resumedata executable (default: next to this benchmark).
      --floor <path>          The urlsession-floor executable (default: none, no floor lines): run
                              discarding the bytes (floor) and writing them to a file (floorw);
                              ours then runs a second time with --digest none (oursnd), the
                              SHA-256 neither floor computes left out, and a third time
                              without its once-a-second state either (oursnp:
                              --persist-interval 86400).
      --aria2 <path>          aria2c, run as `aria2c -x N -s N` with N the connections, and
                              again with `-k 1M` (aria2k: its smallest piece at ours; by
                              default it splits none below 20 MiB) (default: none, no aria2
                              lines).
      --connections <n>       Connections for ours (`--connections N`) and aria2 (default: 1).
      --engine <name>         Run ours with `--engine NAME` (repeatable): curl is the line
                              `ours`, urlsession `oursus` (default: ours once, on its default
                              engine).
      --sync-floor            Also run curl followed by `sync FILE` (cursyn): the floor under a
                              download that, as ours does, flushes the file to disk before it
                              is done (curl leaves it in the page cache); and curl followed by
                              `openssl dgst -sha256 FILE` and `sync FILE` (curdig): what curl
                              costs to hand over what ours does by default, less its state.
      --start-cost            Also run `resumedata --version` five times (the line `start`: what
                              the process costs before it downloads anything), and give ours'
                              CPU time without it beside curl's and aria2's.
      --rounds <n>            Rounds per file (default: 1).
      --output-dir <dir>      Where the downloads are written (default: a temporary directory).
      -h, --help              Show help information.
    """

  /// What the kernel accounted for one child process.
  struct Usage {
    var wall: Double
    var cpu: Double
    var peakKiB: Int
    var status: Int32
    /// The CPU time of the thread that fed the child's standard input, when one did: it shares
    /// the machine's cores with the child.
    var feederCPU: Double? = nil

    /// The best of two runs: the shorter wall and CPU times, the larger peak memory (the bound
    /// that matters), and the first failing status.
    func merged(with other: Usage) -> Usage {
      Usage(
        wall: min(wall, other.wall), cpu: min(cpu, other.cpu), peakKiB: max(peakKiB, other.peakKiB),
        status: status != 0 ? status : other.status,
        feederCPU: [feederCPU, other.feederCPU].compactMap { $0 }.min())
    }
  }

  static func run(_ arguments: [String]) -> Int32 {
    var urls = [String]()
    var tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("resumedata").path
    var floor: String?
    var aria2: String?
    var connections = 1
    var rounds = 1
    var engines = [String]()
    var startCost = false
    var syncFloor = false
    var outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-download-bench-\(getpid())")
    let hint =
      "resumedata-bench download --url <url>... [--tool <path>] [--floor <path>] [--rounds <n>]"
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "-h", "--help":
        print(usage)
        return 0
      case "--start-cost":
        startCost = true
      case "--sync-floor":
        syncFloor = true
      case "--url", "--tool", "--floor", "--aria2", "--connections", "--rounds", "--output-dir",
        "--engine":
        guard let value = remaining.popFirst() else {
          return usageError("missing value for '\(argument)'", hint: hint)
        }
        switch argument {
        case "--url": urls.append(value)
        case "--tool": tool = value
        case "--floor": floor = value
        case "--aria2": aria2 = value
        case "--engine":
          guard ["curl", "urlsession"].contains(value) else {
            return usageError("--engine needs curl or urlsession", hint: hint)
          }
          engines.append(value)
        case "--connections":
          guard let count = Int(value), (1...16).contains(count) else {
            return usageError("--connections needs a whole number from 1 to 16", hint: hint)
          }
          connections = count
        case "--rounds":
          guard let count = Int(value), count > 0 else {
            return usageError("--rounds needs a positive whole number", hint: hint)
          }
          rounds = count
        default: outputDirectory = URL(fileURLWithPath: value)
        }
      default:
        return usageError("unexpected argument '\(argument)'", hint: hint)
      }
    }
    guard !urls.isEmpty else { return usageError("give at least one --url", hint: hint) }
    try? FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: outputDirectory) }
    var failed = false
    // What the process costs before it downloads anything: the best of five `--version` runs.
    var start: Usage?
    if startCost {
      for _ in 0..<5 {
        guard let usage = spawn([tool, "--version"]) else {
          printError("Error: could not start \(tool)")
          return 1
        }
        start = start.map { $0.merged(with: usage) } ?? usage
      }
      if let start {
        print(
          String(
            format:
              "download %@ %@  wall %.3f s  cpu %.3f s  peak RSS %.1f MiB (resumedata --version)",
            padded("-", 10), padded("start", 6), start.wall, start.cpu,
            Double(start.peakKiB) / 1024))
      }
    }
    for url in urls {
      let name = URL(string: url)?.lastPathComponent ?? "file"
      let theirs = outputDirectory.appendingPathComponent("curl-\(name)").path
      let ours = outputDirectory.appendingPathComponent("ours-\(name)").path
      let state = outputDirectory.appendingPathComponent("state").path
      var contenders: [(label: String, command: [String])] = [
        ("curl", ["/usr/bin/curl", "-sS", "-o", theirs, url])
      ]
      // With one connection aria2's -k makes no difference: one line.
      let aria2Labels = connections > 1 ? ["aria2", "aria2k"] : ["aria2"]
      let viaAria2 = aria2Labels.map {
        outputDirectory.appendingPathComponent("\($0)-\(name)").path
      }
      let floorOutput = outputDirectory.appendingPathComponent("floorw-\(name)").path
      let syncedOutput = outputDirectory.appendingPathComponent("curlsync-\(name)").path
      let digestedOutput = outputDirectory.appendingPathComponent("curldig-\(name)").path
      if syncFloor {
        contenders.append(
          (
            "cursyn",
            [
              "/bin/sh", "-c", "/usr/bin/curl -sS -o \"$1\" \"$2\" && sync \"$1\"", "sh",
              syncedOutput, url,
            ]
          ))
        // What curl costs to hand over what ours does by default: the file on disk and its
        // SHA-256 (OpenSSL's, the libcrypto ours uses), though never a crash-safe state.
        contenders.append(
          (
            "curdig",
            [
              "/bin/sh", "-c",
              "/usr/bin/curl -sS -o \"$1\" \"$2\" && openssl dgst -sha256 \"$1\" && sync \"$1\"",
              "sh", digestedOutput, url,
            ]
          ))
      }
      if let floor {
        contenders.append(("floor", [floor, url]))
        // The same, writing every chunk to a file: the floor under any download that keeps it.
        contenders.append(("floorw", [floor, url, floorOutput]))
      }
      if let aria2 {
        // As asked for (`-x N -s N`), and with aria2's smallest piece at ours (1 MiB): by default
        // aria2 splits no piece below 20 MiB, so it uses fewer connections on smaller files.
        for (label, split) in [("aria2", [String]()), ("aria2k", ["-k", "1M"])].prefix(
          aria2Labels.count)
        {
          contenders.append(
            (
              label,
              [aria2, "-x", "\(connections)", "-s", "\(connections)"] + split + [
                "-q", "--allow-overwrite=true", "--auto-file-renaming=false", "-d",
                outputDirectory.path, "-o", "\(label)-\(name)", url,
              ]
            ))
        }
      }
      // Ours once on its default engine, or once per engine asked for; every output is compared.
      var oursOutputs = [ours]
      for engine in engines.isEmpty ? [nil] : engines.map(Optional.some) {
        let label = engine == "urlsession" ? "oursus" : "ours"
        let output =
          label == "ours" ? ours : outputDirectory.appendingPathComponent("\(label)-\(name)").path
        if label != "ours" { oursOutputs.append(output) }
        // Without the resume check a new download starts with (a probe of a few small requests,
        // over URLSession whatever the engine): `oursck` below has it.
        contenders.append(
          (
            label,
            [tool, "download", url, "-o", output, "--state-dir", state, "--no-resume-check"]
              + (connections > 1 ? ["--connections", "\(connections)"] : [])
              + (engine.map { ["--engine", $0] } ?? [])
          ))
      }
      // Ours as a user runs it, on the default engine: with the resume check.
      let oursChecked = outputDirectory.appendingPathComponent("oursck-\(name)").path
      oursOutputs.append(oursChecked)
      contenders.append(
        (
          "oursck",
          [tool, "download", url, "-o", oursChecked, "--state-dir", state]
            + (connections > 1 ? ["--connections", "\(connections)"] : [])
        ))
      // Beside the floors, ours without the SHA-256 it computes by default (which neither floor
      // nor curl computes): what the transfer and the file cost it alone.
      let oursBare = outputDirectory.appendingPathComponent("oursnd-\(name)").path
      // And without its once-a-second state either (two fsyncs and a new state file a second):
      // what its transfer and its file cost it, beside curl's.
      let oursLean = outputDirectory.appendingPathComponent("oursnp-\(name)").path
      if floor != nil {
        contenders.append(
          (
            "oursnp",
            [
              tool, "download", url, "-o", oursLean, "--state-dir", state, "--digest", "none",
              "--persist-interval", "86400", "--no-resume-check",
            ] + (connections > 1 ? ["--connections", "\(connections)"] : [])
          ))
      }
      if floor != nil {
        contenders.append(
          (
            "oursnd",
            [
              tool, "download", url, "-o", oursBare, "--state-dir", state, "--digest", "none",
              "--no-resume-check",
            ]
              + (connections > 1 ? ["--connections", "\(connections)"] : [])
          ))
      }
      // Each tool's file is compared with curl's as soon as it has run, then deleted: a round
      // keeps one file beside curl's, not nine, and every tool writes into memory the one before
      // it freed (on this VM, a file written into memory the kernel has not touched for a while
      // can cost several times the system time).
      var outputOf: [String: String] = [
        "cursyn": syncedOutput, "curdig": digestedOutput, "floorw": floorOutput, "ours": ours,
        "oursus": outputDirectory.appendingPathComponent("oursus-\(name)").path,
        "oursck": oursChecked, "oursnd": oursBare, "oursnp": oursLean,
      ]
      for (label, path) in zip(aria2Labels, viaAria2) { outputOf[label] = path }
      let compared = Set(aria2Labels + ["ours", "oursus", "oursck", "oursnd", "oursnp"])
      var best = [String: Usage]()
      var size: Int64?
      for round in 1...rounds {
        var same = true
        for contender in contenders {
          // The last one's file is on disk before this one starts: writing it back would
          // otherwise compete with whoever runs next.
          sync()
          guard let usage = spawn(contender.command) else {
            printError("Error: could not start \(contender.command[0])")
            return 1
          }
          best[contender.label] = best[contender.label].map { $0.merged(with: usage) } ?? usage
          guard let output = outputOf[contender.label] else { continue }
          if contender.label == "ours" {
            size =
              ((try? FileManager.default.attributesOfItem(atPath: ours))?[.size]
              as? NSNumber)?.int64Value
          }
          if compared.contains(contender.label) {
            same = same && FileManager.default.contentsEqual(atPath: theirs, andPath: output)
          }
          try? FileManager.default.removeItem(atPath: output)
        }
        let ok = same && best.values.allSatisfy { $0.status == 0 }
        failed = failed || !ok
        if round == rounds || !ok {
          let statuses = contenders.map { "\($0.label) \(best[$0.label]?.status ?? -1)" }
          print(
            "# download \(name): \(size.map { "\($0) bytes" } ?? "?"), "
              + "\(rounds) round\(rounds == 1 ? "" : "s"); "
              + (ok
                ? "✓ ours\(aria2 == nil ? "" : ", aria2, aria2k") and curl wrote the same bytes"
                  + (connections > 1 ? " (ours and aria2 over \(connections) connections)" : "")
                : "✗ outputs differ or a tool failed (\(statuses.joined(separator: ", ")))"))
        }
        try? FileManager.default.removeItem(atPath: theirs)
        if !ok { break }
      }
      for contender in contenders {
        guard let usage = best[contender.label] else { continue }
        print(
          String(
            format: "download %@ %@  wall %.2f s  cpu %.2f s  peak RSS %.1f MiB", padded(name, 10),
            padded(contender.label, 6), usage.wall, usage.cpu, Double(usage.peakKiB) / 1024))
      }
      let pairs = [
        ("ours", "curl"), ("oursus", "curl"), ("ours", "cursyn"), ("oursnd", "cursyn"),
        ("cursyn", "curl"), ("curdig", "curl"), ("ours", "curdig"), ("floor", "curl"),
        ("ours", "floor"),
        ("oursus", "floor"), ("ours", "floorw"),
        ("oursnd", "floor"), ("oursnd", "floorw"), ("floorw", "floor"),
        ("aria2", "curl"),
        ("ours", "aria2"), ("ours", "aria2k"), ("oursus", "aria2"), ("oursus", "aria2k"),
      ]
      for (top, bottom) in pairs {
        guard let over = best[top], let under = best[bottom] else { continue }
        print(
          String(
            format: "download %@ ratio %@  wall %.2fx  cpu %.2fx  peak RSS %.2fx", padded(name, 10),
            padded("\(top)/\(bottom)", 11), over.wall / under.wall,
            over.cpu / max(under.cpu, 0.001),
            Double(over.peakKiB) / Double(max(under.peakKiB, 1))))
      }
      // The targets count CPU without the process's start (a Swift program's runtime and
      // Foundation loading, paid once whatever it downloads).
      if let start {
        for (top, bottom) in [
          ("ours", "curl"), ("oursnd", "curl"), ("oursnp", "curl"), ("oursus", "curl"),
          ("ours", "curdig"), ("ours", "aria2"),
          ("ours", "aria2k"), ("oursus", "aria2"), ("oursus", "aria2k"),
        ] {
          guard let over = best[top], let under = best[bottom] else { continue }
          let cpu = max(over.cpu - start.cpu, 0)
          print(
            String(
              format: "download %@ less start %@  cpu %.3f s  cpu %.2fx", padded(name, 10),
              padded("\(top)/\(bottom)", 11), cpu, cpu / max(under.cpu, 0.001)))
        }
      }
    }
    return failed ? 1 : 0
  }

  /// Runs a command to its end and returns the kernel's accounting of it: its output discarded,
  /// its standard input `input` (closed here once the child has it) or none, and `started` run once
  /// the child is.
  static func spawn(_ command: [String], input: Int32? = nil, started: () -> Void = {}) -> Usage? {
    var pid = pid_t()
    var arguments = command.map { strdup($0) }
    arguments.append(nil)
    defer { for argument in arguments { free(argument) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // The tools' progress output is not part of what is measured.
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    if let input { posix_spawn_file_actions_adddup2(&actions, input, 0) }
    let clock = ContinuousClock()
    let start = clock.now
    let spawned = posix_spawn(&pid, command[0], &actions, nil, arguments, environ)
    if let input { close(input) }
    guard spawned == 0 else { return nil }
    started()
    var status: Int32 = 0
    var usage = rusage()
    guard wait4(pid, &status, 0, &usage) == pid else { return nil }
    let wall = seconds(clock.now - start)
    let cpu =
      Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
      + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return Usage(wall: wall, cpu: cpu, peakKiB: usage.ru_maxrss, status: status)
  }
}
