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
    USAGE: resumedata-bench download --url <url>... [--tool <path>] [--output-dir <dir>]

    Fetches each URL with `curl -sS -o FILE URL` and with `resumedata download URL -o FILE`
    (the tool built beside this benchmark, or --tool), one after the other, and prints for each
    the wall time, CPU time (user + system) and peak resident memory, and the ratios ours / curl.
    The outputs are compared byte for byte and deleted. Serve the files from a local server
    (Benchmarks/download-bench.sh starts nginx on 127.0.0.1 with 1 GiB and 4 GiB files).

    OPTIONS:
      --url <url>             A file to fetch (repeatable).
      --tool <path>           The resumedata executable (default: next to this benchmark).
      --output-dir <dir>      Where the downloads are written (default: a temporary directory).
      -h, --help              Show help information.
    """

  /// What the kernel accounted for one child process.
  struct Usage {
    var wall: Double
    var cpu: Double
    var peakKiB: Int
    var status: Int32
  }

  static func run(_ arguments: [String]) -> Int32 {
    var urls = [String]()
    var tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("resumedata").path
    var outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-download-bench-\(getpid())")
    let hint = "resumedata-bench download --url <url>... [--tool <path>] [--output-dir <dir>]"
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "-h", "--help":
        print(usage)
        return 0
      case "--url", "--tool", "--output-dir":
        guard let value = remaining.popFirst() else {
          return usageError("missing value for '\(argument)'", hint: hint)
        }
        if argument == "--url" {
          urls.append(value)
        } else if argument == "--tool" {
          tool = value
        } else {
          outputDirectory = URL(fileURLWithPath: value)
        }
      default:
        return usageError("unexpected argument '\(argument)'", hint: hint)
      }
    }
    guard !urls.isEmpty else { return usageError("give at least one --url", hint: hint) }
    try? FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: outputDirectory) }
    for url in urls {
      let name = URL(string: url)?.lastPathComponent ?? "file"
      let theirs = outputDirectory.appendingPathComponent("curl-\(name)").path
      let ours = outputDirectory.appendingPathComponent("ours-\(name)").path
      let state = outputDirectory.appendingPathComponent("state").path
      guard let curl = spawn(["/usr/bin/curl", "-sS", "-o", theirs, url]),
        let mine = spawn([tool, "download", url, "-o", ours, "--state-dir", state])
      else {
        printError("Error: could not start curl or \(tool)")
        return 1
      }
      let same = FileManager.default.contentsEqual(atPath: theirs, andPath: ours)
      let size = (try? FileManager.default.attributesOfItem(atPath: ours))?[.size] as? NSNumber
      print(
        "# download \(name): \(size.map { "\($0.int64Value) bytes" } ?? "?"); "
          + (same && curl.status == 0 && mine.status == 0
            ? "✓ ours and curl wrote the same bytes"
            : "✗ outputs differ or a tool failed (curl \(curl.status), ours \(mine.status))"))
      try? FileManager.default.removeItem(atPath: theirs)
      try? FileManager.default.removeItem(atPath: ours)
      for (label, usage) in [("curl", curl), ("ours", mine)] {
        print(
          String(
            format: "download %@ %@  wall %.2f s  cpu %.2f s  peak RSS %.1f MiB", padded(name, 10),
            padded(label, 4), usage.wall, usage.cpu, Double(usage.peakKiB) / 1024))
      }
      print(
        String(
          format: "download %@ ratio ours/curl  wall %.2fx  cpu %.2fx  peak RSS %.2fx",
          padded(name, 10), mine.wall / curl.wall, mine.cpu / max(curl.cpu, 0.001),
          Double(mine.peakKiB) / Double(max(curl.peakKiB, 1))))
    }
    return 0
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
