// The benchmark executable: times this package's codecs against the peers available on this
// machine, one subcommand per layer. Run it in release mode:
//
//     swift run -c release resumedata-bench plist
//
// Every input is built in code from a seeded generator, so runs are comparable across machines and
// commits without fixture files.

import Foundation
import KeyedArchive
import PropertyList
import ResumeData

// MARK: - Command line

/// The help texts.
enum Usage {
  /// The top-level usage text.
  static let main = """
    USAGE: resumedata-bench <subcommand> [options]

    Times ResumeDataKit's codecs against the reference implementations on this machine.
    Build in release mode: swift run -c release resumedata-bench <subcommand>

    SUBCOMMANDS:
      plist                   Property-list decode and encode, ours vs Foundation's
                              PropertyListSerialization, binary and XML.
      archive                 Decoding an archived NSURLRequest of about 2 KB to typed
                              fields, ours vs Foundation's NSKeyedUnarchiver on an
                              equivalent dictionary archive.
      resume                  Inspecting a keyed v5 resume blob (outer archive, both
                              request archives, findings), ours vs Foundation.
      batch                   resumedata batch repairing NDJSON streams of v2 XML and
                              keyed v5 blobs: records/s with 1 and 2 jobs, peak RSS at
                              two input lengths, vs the same pipeline with Foundation;
                              a line per blob kind and a mixed line, with instructions
                              per record against the floor of each kind's parser.
      download                The same file fetched by curl, by a bare URLSession task
                              (the floor) and by resumedata download: wall time, CPU
                              time and peak RSS (see download-bench.sh).
      peers                   The plist inputs and two batch kinds, ours beside libplist
                              and Python's plistlib on the same bytes in one run (see
                              peers-bench.sh, which builds the peers).
      plist-inputs DIRECTORY  Writes the inputs of 'plist' to files, for other programs.

    OPTIONS:
      -h, --help              Show help information.

    See 'resumedata-bench <subcommand> --help' for a subcommand's options.
    """

  /// The usage text of the `plist` subcommand.
  static let plist = """
    USAGE: resumedata-bench plist [--input <input>] [--rounds <n>] [--round-time <seconds>]

    Times decoding and encoding of two generated property lists with this package's readers and
    writers and with Foundation's PropertyListSerialization, and prints one line per measurement:
    both rates and their ratio (ours / Foundation; above 1 means ours is faster).

      small-4KB    a resume-data-like dictionary of about 4 KB (two ~2 KB archived requests):
                   reported in operations per second
      large-10MB   about 10 MB of binary plist: 12,000 entries of mixed dictionaries and arrays:
                   reported in MB/s (10^6 bytes) of the input (decode) or output (encode)

    Before timing, each input's decoded value is compared with Foundation's ('✓' or '✗' lines).

    OPTIONS:
      --input <input>         small, large or all (default: all).
    \(TimingOptions.help)
      -h, --help              Show help information.
    """
}

/// Writes a line to standard error.
func printError(_ text: String) {
  FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Reports a usage error the way the package's CLI does, and returns its exit status (64).
func usageError(_ message: String, hint: String) -> Int32 {
  printError("Error: \(message)")
  printError("Usage: \(hint)")
  printError("  See 'resumedata-bench --help' for more information.")
  return 64
}

/// Runs the benchmark named by the first argument.
///
/// - Parameter arguments: the command-line arguments after the program name.
/// - Returns: the process exit status: 0, or 64 for a usage error.
func runMain(_ arguments: [String]) -> Int32 {
  guard let subcommand = arguments.first else {
    print(Usage.main)
    return 0
  }
  let rest = Array(arguments.dropFirst())
  switch subcommand {
  case "-h", "--help", "help":
    print(Usage.main)
    return 0
  case "plist":
    return PlistBenchmark.run(rest)
  case "archive":
    return ArchiveBenchmark.run(rest)
  case "resume":
    return ResumeBenchmark.run(rest)
  case "download":
    return DownloadBenchmark.run(rest)
  case "batch":
    return BatchBenchmark.run(rest)
  case "peers":
    return PeersBenchmark.run(rest)
  case "plist-inputs":
    return PeerInputs.runInputs(rest)
  case "plist-calls":
    // Not in the help: `peers` runs it under callgrind to count our side of a plist line.
    return PeerInputs.runCalls(rest)
  case "batch-floor":
    // Not in the help: `batch` runs it under callgrind to count a floor's instructions.
    return BatchKinds.runFloor(rest)
  case "batch-records":
    // Not in the help: the records of each kind of `batch`, for profiling one by hand.
    return BatchKinds.runRecords(rest)
  default:
    return usageError(
      "unknown subcommand '\(subcommand)'", hint: "resumedata-bench <subcommand> [options]")
  }
}

// MARK: - Timing

/// Consumes a value so the optimizer cannot discard the work that produced it.
@_optimize(none)
func blackHole<T>(_ value: T) {}

/// How long each measurement runs.
struct TimingOptions {
  /// Timed rounds; the fastest round's per-iteration time is reported.
  var rounds = 3
  /// Minimum wall time of one round, in seconds.
  var roundTime = 0.3
  /// No round starts once this many seconds have been spent on a measurement (there is always at
  /// least one timed round). Keeps the multi-second calls on the 10 MB input affordable.
  var budget = 5.0
  /// Which side to time: both (the default), or only one, for profiling that side alone.
  var sides: Set<Side> = [.ours, .foundation]

  /// One side of a comparison.
  enum Side: String {
    case ours, foundation
  }

  /// The help lines of the options every subcommand shares.
  static let help = """
      --rounds <n>            Timed rounds per measurement; the best is reported (default: 3).
      --round-time <seconds>  Minimum duration of one round (default: 0.3). No round starts
                              after 5 s on one measurement.
      --only <side>           Time only 'ours' or only 'foundation' (to profile one side).
    """

  /// Consumes one shared option and its value from `remaining`.
  ///
  /// - Returns: `nil` when `argument` is not a shared option, else an error message or `""` when
  ///   the option was applied.
  mutating func parse(_ argument: String, _ remaining: inout ArraySlice<String>) -> String? {
    guard ["--rounds", "--round-time", "--only"].contains(argument) else { return nil }
    guard let value = remaining.popFirst() else { return "missing value for '\(argument)'" }
    switch argument {
    case "--rounds":
      guard let rounds = Int(value), rounds > 0 else {
        return "'\(value)' is not a positive number of rounds"
      }
      self.rounds = rounds
    case "--round-time":
      guard let time = Double(value), time > 0, time.isFinite else {
        return "'\(value)' is not a positive number of seconds"
      }
      roundTime = time
    default:
      guard let side = Side(rawValue: value) else {
        return "'\(value)' is not a side (ours or foundation)"
      }
      sides = [side]
    }
    return ""
  }
}

/// Times `body` and returns the best seconds per call.
///
/// Calls it once to warm up (caches, lazy initialisation, page faults in the allocator), then runs
/// `options.rounds` rounds, each repeating the call until `options.roundTime` has passed (at least
/// once), and keeps the round with the lowest average. The best round is the least disturbed by the
/// other processes on a small machine. A warm-up call that alone outlasts a round counts as the
/// first round, and no round starts after `options.budget` seconds, which keeps multi-second calls
/// on the 10 MB input from dominating the run.
///
/// - Throws: whatever `body` throws, on the first call that throws.
func bestSecondsPerCall(_ options: TimingOptions, _ body: () throws -> Void) throws -> Double {
  let clock = ContinuousClock()
  let warmUpStart = clock.now
  try body()
  let warmUp = seconds(clock.now - warmUpStart)
  var best = Double.infinity
  var rounds = options.rounds
  if warmUp >= options.roundTime {
    best = warmUp
    rounds -= 1
  }
  for round in 0..<rounds {
    if round > 0 || best.isFinite, seconds(clock.now - warmUpStart) >= options.budget { break }
    var calls = 0
    var elapsed = 0.0
    let start = clock.now
    // Read the clock every `batch` calls so that timing a 1 µs call doesn't mostly time the clock.
    var batch = 1
    repeat {
      for _ in 0..<batch { try body() }
      calls += batch
      elapsed = seconds(clock.now - start)
      if elapsed < options.roundTime / 100 { batch *= 2 }
    } while elapsed < options.roundTime
    best = min(best, elapsed / Double(calls))
  }
  return best
}

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
  let (whole, attoseconds) = duration.components
  return Double(whole) + Double(attoseconds) * 1e-18
}

// MARK: - Reporting

/// How a measurement's speed is shown.
enum Rate {
  /// Calls per second.
  case perSecond
  /// Megabytes (10^6 bytes) per second of a payload of this many bytes.
  case megabytesPerSecond(bytes: Int)

  /// The speed of one call that takes `secondsPerCall`, as a number (bigger is faster).
  func value(_ secondsPerCall: Double) -> Double {
    switch self {
    case .perSecond: return 1 / secondsPerCall
    case .megabytesPerSecond(let bytes): return Double(bytes) / 1e6 / secondsPerCall
    }
  }

  /// The speed as text, such as `1,234,567/s` or `123.4 MB/s`.
  func text(_ secondsPerCall: Double) -> String {
    let rate = value(secondsPerCall)
    switch self {
    case .perSecond: return grouped(rate) + "/s"
    case .megabytesPerSecond: return String(format: "%.1f MB/s", rate)
    }
  }
}

/// An integer rounded from `value`, with thousands separators (locale-independent).
func grouped(_ value: Double) -> String {
  let digits = String(Int(value.rounded()))
  var out = ""
  for (offset, character) in digits.enumerated() {
    if offset > 0, (digits.count - offset) % 3 == 0, character != "-" { out.append(",") }
    out.append(character)
  }
  return out
}

/// A byte count as `4,321 B` or `10.2 MB`.
func size(_ bytes: Int) -> String {
  bytes < 100_000 ? grouped(Double(bytes)) + " B" : String(format: "%.1f MB", Double(bytes) / 1e6)
}

/// Pads `text` with spaces to `width` characters.
func padded(_ text: String, _ width: Int) -> String {
  text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// Times our operation and Foundation's and prints one line with both rates and their ratio.
///
/// Either side may throw (our XML reader, for one, may be unfinished); its column then shows the
/// error instead of a rate and no ratio is printed.
func compare(
  _ label: String, _ operation: String, rate: Rate, options: TimingOptions, layer: String = "plist",
  ours: () throws -> Void, foundation: () throws -> Void
) {
  func timed(_ body: () throws -> Void) -> Result<Double, any Error> {
    Result { try bestSecondsPerCall(options, body) }
  }
  func column(_ name: String, _ result: Result<Double, any Error>) -> String {
    switch result {
    case .success(let time): return "\(name) \(rate.text(time))"
    case .failure(let error): return "\(name): error: \(describe(error))"
    }
  }
  let skipped = Result<Double, any Error>.failure(SkippedSide())
  let ourTime = options.sides.contains(.ours) ? timed(ours) : skipped
  let theirTime = options.sides.contains(.foundation) ? timed(foundation) : skipped
  var line = "\(layer) \(padded(label, 11)) \(padded(operation, 15)) "
  line += padded(column("ours", ourTime), 22) + " " + padded(column("Foundation", theirTime), 26)
  if case .success(let mine) = ourTime, case .success(let theirs) = theirTime {
    line += " ratio " + String(format: "%.1fx", rate.value(mine) / rate.value(theirs))
  }
  print(line)
}

/// The result of a side that `--only` left out.
struct SkippedSide: Error, CustomStringConvertible {
  var description: String { "not timed (--only)" }
}

/// An error as one short line.
func describe(_ error: any Error) -> String {
  let text = (error as? PropertyListError)?.description ?? String(describing: error)
  let line = text.split(separator: "\n").first.map(String.init) ?? text
  return line.count > 80 ? String(line.prefix(79)) + "…" : line
}

// MARK: - The plist benchmark

/// `resumedata-bench plist`: this package's property-list codec against `PropertyListSerialization`.
enum PlistBenchmark {
  /// Parses the subcommand's options and runs the selected inputs.
  ///
  /// - Returns: the exit status: 0, or 64 for a usage error.
  static func run(_ arguments: [String]) -> Int32 {
    var options = TimingOptions()
    var inputs = ["small", "large"]
    let hint = "resumedata-bench plist [--input <input>] [--rounds <n>] [--round-time <seconds>]"
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      if let problem = options.parse(argument, &remaining) {
        if problem.isEmpty { continue }
        return usageError(problem, hint: hint)
      }
      switch argument {
      case "-h", "--help":
        print(Usage.plist)
        return 0
      case "--input":
        guard let value = remaining.popFirst(), ["small", "large", "all"].contains(value) else {
          return usageError("--input needs small, large or all", hint: hint)
        }
        inputs = value == "all" ? ["small", "large"] : [value]
      default:
        return usageError("unexpected argument '\(argument)'", hint: hint)
      }
    }
    let clock = ContinuousClock()
    let start = clock.now
    print(
      "# plist: best of \(options.rounds) rounds of at least \(options.roundTime) s each;"
        + " ratio = ours / Foundation")
    for input in inputs {
      if input == "small" {
        measure(label: "small-4KB", Inputs.resumeData(), rate: .perSecond, options: options)
      } else {
        let value = Inputs.large()
        measure(label: "large-10MB", value, rate: nil, options: options)
      }
    }
    print(String(format: "# plist: done in %.1f s", seconds(clock.now - start)))
    return 0
  }

  /// Encodes `value` in both formats, checks that our reading agrees with Foundation's, then prints
  /// the four measurements: binary and XML, decode and encode.
  ///
  /// - Parameter rate: how speeds are shown; nil means MB/s of the encoded bytes.
  static func measure(
    label: String, _ value: PropertyListValue, rate: Rate?, options: TimingOptions
  ) {
    for format in [PropertyListFormat.binary, .xml] {
      let bytes: Data
      let theirValue: Any
      do {
        bytes = try value.encoded(as: format)
        theirValue = try PropertyListSerialization.propertyList(
          from: bytes, options: [], format: nil)
      } catch {
        print("✗ plist \(label) \(format): cannot build the input: \(describe(error))")
        continue
      }
      let name = format == .binary ? "binary" : "xml"
      let read: (Data) throws -> PropertyListValue =
        format == .binary
        ? { try BinaryPropertyListReader().read($0) } : { try XMLPropertyListReader().read($0) }
      let foundationFormat: PropertyListSerialization.PropertyListFormat =
        format == .binary ? .binary : .xml
      let count =
        (value.dictionaryValue?.count).map { "\(grouped(Double($0))) top-level keys" } ?? "1 value"
      print("# \(label) \(name): \(size(bytes.count)), \(count)")
      verify(label: "\(label) \(name)", bytes: bytes, read: read, theirs: theirValue)

      compare(
        label, "\(name) decode", rate: rate ?? .megabytesPerSecond(bytes: bytes.count),
        options: options,
        ours: { blackHole(try read(bytes)) },
        foundation: {
          blackHole(
            try PropertyListSerialization.propertyList(from: bytes, options: [], format: nil))
        })
      // Encode from the value each side decodes to, so both write the same property list.
      compare(
        label, "\(name) encode", rate: rate ?? .megabytesPerSecond(bytes: bytes.count),
        options: options,
        ours: { blackHole(try value.encoded(as: format)) },
        foundation: {
          blackHole(
            try PropertyListSerialization.data(
              fromPropertyList: theirValue, format: foundationFormat, options: 0))
        })
    }
  }

  /// Reads `bytes` with our reader and compares the value with Foundation's, printing one `✓` or
  /// `✗` line.
  static func verify(
    label: String, bytes: Data, read: (Data) throws -> PropertyListValue, theirs: Any
  ) {
    let ours: PropertyListValue
    do {
      ours = try read(bytes)
    } catch {
      print("✗ plist \(label): ours failed to read it: \(describe(error))")
      return
    }
    var compared = 0
    if let difference = Agreement.difference(ours, theirs, path: "", compared: &compared) {
      print("✗ plist \(label): ours and Foundation differ at \(difference)")
    } else {
      print(
        "✓ plist \(label): ours and Foundation agree on all \(grouped(Double(compared))) values")
    }
  }
}

// MARK: - Comparing with Foundation

/// Compares our value with Foundation's untyped one.
enum Agreement {
  /// The first place where `ours` and `theirs` differ, as a key path and a reason, or nil when they
  /// agree; `compared` counts the values visited.
  static func difference(
    _ ours: PropertyListValue, _ theirs: Any, path: String, compared: inout Int
  ) -> String? {
    compared += 1
    let here = path.isEmpty ? "the top level" : path
    switch ours {
    case .dictionary(let dictionary):
      guard let other = theirs as? [String: Any] else { return "\(here): Foundation has \(theirs)" }
      guard other.count == dictionary.count else {
        return "\(here): \(dictionary.count) keys vs Foundation's \(other.count)"
      }
      for (key, value) in dictionary {
        guard let match = other[key] else { return "\(here): Foundation lacks key \(key)" }
        let child = path.isEmpty ? key : path + "." + key
        if let found = difference(value, match, path: child, compared: &compared) { return found }
      }
      return nil
    case .array(let elements):
      guard let other = theirs as? [Any] else { return "\(here): Foundation has \(theirs)" }
      guard other.count == elements.count else {
        return "\(here): \(elements.count) elements vs Foundation's \(other.count)"
      }
      for (offset, pair) in zip(elements, other).enumerated() {
        let child = "\(path)[\(offset)]"
        if let found = difference(pair.0, pair.1, path: child, compared: &compared) { return found }
      }
      return nil
    case .string(let string):
      return theirs as? String == string ? nil : "\(here): \(string) vs \(theirs)"
    case .data(let data):
      return theirs as? Data == data ? nil : "\(here): data differs"
    case .date(let date):
      return theirs as? Date == date ? nil : "\(here): \(date) vs \(theirs)"
    case .boolean(let flag):
      return theirs as? Bool == flag ? nil : "\(here): \(flag) vs \(theirs)"
    case .integer(let integer):
      let matches =
        (theirs as? Int).map { Int64($0) == integer.int64Value } ?? (theirs as? UInt64).map {
          $0 == integer.uint64Value
        } ?? false
      return matches ? nil : "\(here): \(integer) vs \(theirs)"
    case .real(let real):
      let other = (theirs as? Double) ?? (theirs as? Float).map(Double.init)
      return other == real.value ? nil : "\(here): \(real) vs \(theirs)"
    case .uid(let uid):
      return "\(here): uid(\(uid)) is not compared (Foundation has \(type(of: theirs)))"
    }
  }
}

// MARK: - Inputs

/// A small, fast, seeded generator (SplitMix64), so every run builds the same inputs.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  /// Creates a generator whose output depends only on `seed`.
  init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// The generated inputs.
enum Inputs {
  /// The values of a resume blob as iOS writes them for a 5 GB installer download: URL, bytes,
  /// both requests (archived, five headers of 40–120 characters each), validators and the temp
  /// file name; the resume and batch benchmarks encode them in each generation they time.
  static func resumeEntries(seed: UInt64) throws -> PropertyListDictionary {
    var random = SeededGenerator(seed: seed)
    func request() throws -> PropertyListValue {
      let headers = ["Accept", "User-Agent", "Authorization", "Cookie", "X-Request-ID"].map {
        URLRequestFields.Header($0, word(&random, Int.random(in: 40...120, using: &random)))
      }
      return .data(
        try URLRequestArchive(
          URLRequestFields(
            url: "https://downloads.example.com/releases/v5/installer.dmg?token="
              + word(&random, 40), headerFields: headers)
        ).encoded())
    }
    return [
      ResumeDataKey.downloadURL: .string("https://downloads.example.com/releases/v5/installer.dmg"),
      ResumeDataKey.bytesReceived: .integer(PropertyListInteger(73_400_320)),
      ResumeDataKey.currentRequest: try request(),
      ResumeDataKey.originalRequest: try request(),
      ResumeDataKey.entityTag: .string("\"5534b35d-7c7be1\""),
      ResumeDataKey.serverDownloadDate: .string("Mon, 20 Apr 2015 08:05:49 GMT"),
      ResumeDataKey.tempFileName: .string("CFNetworkDownload_Ab12Cd.tmp"),
    ]
  }

  /// A dictionary shaped like URLSession resume data, about 4 KB as a binary plist.
  ///
  /// The current and original requests are, as in real resume data, keyed archives (binary plists
  /// of about 2 KB each) held as data values.
  static func resumeData() -> PropertyListValue {
    var random = SeededGenerator(seed: 0x5E5D_A7A0)
    let url =
      "https://downloads.example.com/releases/\(word(&random, 12))/archive-\(word(&random, 8)).zip"
    let request = archivedRequest(url: url, &random)
    let original = archivedRequest(url: url, &random)
    let date = "Sat, 29 Nov 2025 14:53:\(10 + Int.random(in: 0..<50, using: &random)) GMT"
    return .dictionary([
      "NSURLSessionDownloadURL": .string(url),
      "NSURLSessionResumeBytesReceived": .integer(
        PropertyListInteger(Int.random(in: 1...(1 << 30), using: &random))),
      "NSURLSessionResumeEntityTag": .string("\"\(word(&random, 8))-\(word(&random, 13))\""),
      "NSURLSessionResumeServerDownloadDate": .string(date),
      "NSURLSessionResumeInfoTempFileName": .string("CFNetworkDownload_\(word(&random, 6)).tmp"),
      "NSURLSessionResumeInfoVersion": .integer(PropertyListInteger(2)),
      "NSURLSessionResumeCurrentRequest": .data(request),
      "NSURLSessionResumeOriginalRequest": .data(original),
    ])
  }

  /// About 2 KB of NSKeyedArchiver-shaped binary plist standing in for an archived NSURLRequest.
  static func archivedRequest(url: String, _ random: inout SeededGenerator) -> Data {
    var objects: [PropertyListValue] = [
      .string("$null"),
      .dictionary([
        "$class": .uid(7), "$0": .integer(PropertyListInteger(20)), "$1": .uid(2),
        "$2": .uid(3), "$3": .uid(4), "$4": .uid(5), "$5": .uid(6),
      ]),
      .dictionary(["NS.base": .uid(0), "NS.relative": .uid(8), "$class": .uid(9)]),
      .real(PropertyListReal(60.0)),
      .boolean(true),
      .integer(PropertyListInteger(0)),
      .array([.uid(10), .uid(11)]),
      .dictionary([
        "$classname": .string("NSURLRequest"),
        "$classes": .array([.string("NSURLRequest"), .string("NSObject")]),
      ]),
      .string(url),
      .dictionary([
        "$classname": .string("NSURL"),
        "$classes": .array([.string("NSURL"), .string("NSObject")]),
      ]),
    ]
    // Request headers: the bulk of a real archived request.
    let headers = [
      "Accept", "Accept-Encoding", "Accept-Language", "User-Agent", "Range", "If-Range",
      "Authorization", "Cookie", "X-Request-ID", "X-Client-Version",
    ]
    var entries: [(String, PropertyListValue)] = []
    for header in headers {
      entries.append((header, .string(word(&random, Int.random(in: 40...140, using: &random)))))
    }
    objects.append(.dictionary(PropertyListDictionary(entries)))
    objects.append(.data(Data((0..<200).map { _ in UInt8.random(in: 0...255, using: &random) })))
    let archive: PropertyListValue = .dictionary([
      "$version": .integer(PropertyListInteger(100_000)),
      "$archiver": .string("NSKeyedArchiver"),
      "$top": .dictionary(["$0": .uid(1)]),
      "$objects": .array(objects),
    ])
    return (try? archive.encoded(as: .binary)) ?? Data()
  }

  /// About 10 MB (as a binary plist) of mixed content: a dictionary of 12,000 entries, each a
  /// dictionary or array of strings, integers, reals, dates (whole seconds, so XML holds them
  /// exactly), data of a few hundred bytes, booleans and small nested arrays.
  static func large() -> PropertyListValue {
    var random = SeededGenerator(seed: 0x10_4D_B0)
    var entries: [(String, PropertyListValue)] = []
    entries.reserveCapacity(12_000)
    for index in 0..<12_000 {
      let key = "entry-\(index)-\(word(&random, 6))"
      let payload = Data(
        (0..<Int.random(in: 300...1_100, using: &random)).map { _ in
          UInt8.random(in: 0...255, using: &random)
        })
      let name = PropertyListValue.string(
        index % 10 == 0
          ? "résumé-\(word(&random, 10))-日本" : word(&random, Int.random(in: 8...48, using: &random))
      )
      let count = PropertyListValue.integer(
        PropertyListInteger(Int64.random(in: -1 << 40...1 << 40, using: &random)))
      let ratio = PropertyListValue.real(
        PropertyListReal(Double.random(in: -1e6...1e6, using: &random)))
      let date = PropertyListValue.date(
        Date(
          timeIntervalSinceReferenceDate: Double(Int.random(in: 0...900_000_000, using: &random))))
      let flag = PropertyListValue.boolean(random.next() & 1 == 0)
      let tags = PropertyListValue.array(
        (0..<Int.random(in: 0...4, using: &random)).map { _ in
          .string(word(&random, 7))
        })
      let entry: PropertyListValue
      if index % 2 == 0 {
        entry = .dictionary([
          "name": name, "count": count, "ratio": ratio, "modified": date, "payload": .data(payload),
          "enabled": flag, "tags": tags,
        ])
      } else {
        entry = .array([name, count, ratio, date, .data(payload), flag, tags])
      }
      entries.append((key, entry))
    }
    return .dictionary(PropertyListDictionary(entries))
  }

  /// A random lowercase ASCII word of `length` letters and digits.
  static func word(_ random: inout SeededGenerator, _ length: Int) -> String {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    return String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
  }
}

exit(runMain(Array(CommandLine.arguments.dropFirst())))

// MARK: - The archive benchmark

/// `resumedata-bench archive`: decoding an archived NSURLRequest to typed fields, against Foundation's
/// NSKeyedUnarchiver decoding a dictionary archive that holds the same values.
enum ArchiveBenchmark {
  static let usage = """
    USAGE: resumedata-bench archive [--rounds <n>] [--round-time <seconds>]

    Times decoding a ~2 KB archived NSURLRequest (CFNetwork's layout, built by this package) into its
    typed fields (URL, method, headers, timeout, cache policy, flags) with URLRequestArchive, and
    Foundation's NSKeyedUnarchiver decoding an NSKeyedArchiver archive of an NSDictionary holding the
    same values (Foundation on Linux cannot read Apple's request layout at all), then reading them.

    OPTIONS:
    \(TimingOptions.help)
      -h, --help              Show help information.
    """

  static func run(_ arguments: [String]) -> Int32 {
    let hint = "resumedata-bench archive [--rounds <n>] [--round-time <seconds>]"
    let options: TimingOptions
    switch timingOptionsOnly(arguments, usage: usage, hint: hint) {
    case .success(let parsed): options = parsed
    case .failure(let status): return status.code
    }
    var random = SeededGenerator(seed: 0xA2C4)
    let headers = [
      "Accept", "Accept-Encoding", "Accept-Language", "User-Agent", "Authorization", "Cookie",
      "X-Request-ID", "X-Client-Version",
    ].map {
      URLRequestFields.Header($0, Inputs.word(&random, Int.random(in: 30...90, using: &random)))
    }
    let fields = URLRequestFields(
      url: "https://downloads.example.com/releases/v2/installer-full.dmg?token="
        + Inputs.word(&random, 40),
      headerFields: headers)
    guard let ours = try? URLRequestArchive(fields).encoded() else {
      printError("Error: could not build the request archive")
      return 1
    }
    let dictionary = NSMutableDictionary()
    dictionary["url"] = NSURL(string: fields.url)
    dictionary["httpMethod"] = "GET"
    dictionary["headerFields"] = NSDictionary(
      dictionary: Dictionary(uniqueKeysWithValues: headers.map { ($0.name, $0.value) }))
    dictionary["timeoutInterval"] = NSNumber(value: fields.timeoutInterval)
    dictionary["cachePolicy"] = NSNumber(value: fields.cachePolicy)
    dictionary["httpShouldHandleCookies"] = NSNumber(value: true)
    dictionary["allowsCellularAccess"] = NSNumber(value: true)
    dictionary["networkServiceType"] = NSNumber(value: 0)
    dictionary["priority"] = NSNumber(value: -1)
    guard
      let theirs = try? NSKeyedArchiver.archivedData(
        withRootObject: dictionary, requiringSecureCoding: false)
    else {
      printError("Error: Foundation could not archive the dictionary")
      return 1
    }
    print(
      "# archive: request archive \(size(ours.count)); Foundation's dictionary archive \(size(theirs.count))"
    )
    let classes: [AnyClass] = [
      NSMutableDictionary.self, NSDictionary.self, NSString.self, NSNumber.self, NSURL.self,
      NSData.self,
    ]
    func decodeOurs() throws -> (String?, String?, Int, Double?) {
      let request = try URLRequestArchive(decoding: ours)
      blackHole(
        (
          request.body, request.cachePolicy, request.allowsCellularAccess,
          request.httpShouldHandleCookies
        ))
      blackHole((request.networkServiceType, request.priority))
      return (request.url, request.httpMethod, request.headerFields.count, request.timeoutInterval)
    }
    func decodeTheirs() throws -> (String?, String?, Int, Double?) {
      let object =
        try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: theirs) as? NSDictionary
      blackHole(
        (
          object?["cachePolicy"], object?["allowsCellularAccess"],
          object?["httpShouldHandleCookies"]
        ))
      blackHole((object?["networkServiceType"], object?["priority"]))
      return (
        (object?["url"] as? NSURL)?.absoluteString, object?["httpMethod"] as? String,
        (object?["headerFields"] as? NSDictionary)?.count ?? 0,
        (object?["timeoutInterval"] as? NSNumber)?.doubleValue
      )
    }
    do {
      let mine = try decodeOurs()
      let foundation = try decodeTheirs()
      let agree =
        mine.0 == foundation.0 && mine.1 == foundation.1 && mine.2 == foundation.2
        && mine.3 == foundation.3
      print(
        agree
          ? "✓ archive request: ours and Foundation read the same URL, method, 8 headers and timeout"
          : "✗ archive request: ours \(mine) vs Foundation \(foundation)")
    } catch {
      print("✗ archive request: \(describe(error))")
    }
    compare(
      "request-2KB", "decode typed", rate: .perSecond, options: options, layer: "archive",
      ours: { blackHole(try decodeOurs()) }, foundation: { blackHole(try decodeTheirs()) })
    return 0
  }
}
