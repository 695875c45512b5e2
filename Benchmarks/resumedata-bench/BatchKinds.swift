import CXMLShim
import Foundation
import PropertyList
import ResumeData

#if canImport(Glibc)
  import Glibc
#endif

/// The lines of `resumedata-bench batch` for each kind of blob a pipeline sees, and for a mix of
/// them: records/s from a file, instructions per record counted by callgrind, and the floor each
/// is measured against, counted and timed in the same run.
enum BatchKinds {
  /// What sets a kind's floor: the parser its blob cannot be read faster than.
  enum Floor: String {
    /// libxml2 alone, through the XML reader's shim (`cxml_shim_parse`, so driven exactly as the
    /// reader drives it: the thread's parser kept between parses, CoreFoundation's prolog not
    /// given to libxml2, no read callback once the encoding is settled), with callbacks that do
    /// nothing.
    case xml
    /// Our binary-plist check of the bytes and of each binary plist held in them as data.
    case bplist
  }

  /// One kind of record: its blob, the repair target it is run with, and its floor.
  struct Kind {
    var name: String
    var blob: Data
    var target: String
    var floor: Floor
    /// The bytes the floor reads: the blob's, or for a conversion the blob it becomes.
    var floorBytes: Data
    var floorName: String
    /// The blob a record of the kind writes, as base64, in its result: nil when it is the blob
    /// read (whose base64 text the result carries over).
    var output: Data? = nil
  }

  /// What a floor read covers.
  enum Reach: String {
    /// The parser alone, on the bytes it reads.
    case parser
    /// What every record of the kind must do besides: its line's base64 decoded (as `batch`
    /// decodes it), the floor's parser on the bytes, and for XML the request archives the blob
    /// holds decoded from their `<data>` text and checked as binary plists (as every record's
    /// reading decodes and checks them).
    case record
  }

  /// Instructions (callgrind's count) per operation, and operations per second on one thread.
  struct Cost {
    var instructions: Double?
    var rate: Double
  }

  /// Records of a callgrind run.
  static let defaultCallgrindRecords = 400

  /// The kinds with a line of their own, and the four kinds of the mix (all for `ios13+`).
  static func kinds(_ blobs: [(name: String, bytes: Data)]) throws -> (
    lines: [Kind], mix: [Kind]
  ) {
    let v2 = blobs[0].bytes
    let keyed = blobs[1].bytes
    let network = blobs[2].bytes
    // What the Network.framework blob becomes for iOS 13, and a blob repaired for iOS 10.0 (its
    // requests in the `$N` layout), which iOS 13 needs back in the standard layout.
    guard let converted = try ResumeData(decoding: network).repaired(for: .ios13Later).blob,
      let ios10 = try ResumeData(decoding: keyed).repaired(for: .ios10Early).blob
    else { throw CocoaError(.coderInvalidValue) }
    let convertedBytes = try converted.encoded()
    let ios10Bytes = try ios10.encoded()
    guard let restored = try ResumeData(decoding: ios10Bytes).repaired(for: .ios13Later).blob
    else { throw CocoaError(.coderInvalidValue) }
    let restoredBytes = try restored.encoded()
    let archiveFloor = "binary-plist check of the blob and its request archives"
    let keyedKind = Kind(
      name: "keyed-v5 untouched", blob: keyed, target: "ios13+", floor: .bplist, floorBytes: keyed,
      floorName: archiveFloor)
    let v2Kind = Kind(
      name: "v2-xml untouched", blob: v2, target: "ios13+", floor: .xml, floorBytes: v2,
      floorName: "libxml2 alone")
    let networkKind = Kind(
      name: "nw converted ios13+", blob: network, target: "ios13+", floor: .bplist,
      floorBytes: convertedBytes, floorName: "binary-plist check of the keyed blob it becomes",
      output: convertedBytes)
    // The mix's costliest kind, with a line of its own too.
    let restoredKind = Kind(
      name: "v2 $N layout restored ios13+", blob: ios10Bytes, target: "ios13+", floor: .xml,
      floorBytes: ios10Bytes, floorName: "libxml2 alone", output: restoredBytes)
    return (
      [
        keyedKind, v2Kind,
        Kind(
          name: "keyed-v5 repaired ios10.0-10.1", blob: keyed, target: "ios10.0-10.1",
          floor: .bplist, floorBytes: keyed, floorName: archiveFloor, output: ios10Bytes),
        networkKind, restoredKind,
      ],
      [keyedKind, v2Kind, restoredKind, networkKind]
    )
  }

  /// The mix's cycle of 40 lines: its four kinds 9 times each in turn, and 4 bad records (10 %):
  /// base64 that is not, a line that is not a record, a truncated blob, a line that is not JSON.
  static func mixCycle(_ mix: [Kind]) -> [(Int) -> String] {
    let bad: [(Int) -> String] = [
      { "{\"id\":\($0),\"blob\":\"QU=D\"}" },
      { "{\"id\":\($0)}" },
      BatchBenchmark.recordLine(mix[0].blob.prefix(1_000)),
      { _ in "not a record" },
    ]
    var cycle: [(Int) -> String] = []
    for index in 0..<36 {
      cycle.append(BatchBenchmark.recordLine(mix[index % mix.count].blob))
      if index % 9 == 8 { cycle.append(bad[index / 9]) }
    }
    return cycle
  }

  /// Prints the kind lines and the mixed line; the exit status.
  static func run(
    blobs: [(name: String, bytes: Data)], records: Int, mixRecords: Int, callgrindRecords: Int,
    repeats: Int, tool: String
  ) -> Int32 {
    let (lines, mix): (lines: [Kind], mix: [Kind])
    do {
      (lines, mix) = try kinds(blobs)
    } catch {
      printError("Error: could not build the blobs of each kind: \(describe(error))")
      return 1
    }
    guard let directory = scratchDirectory("resumedata-batch-kinds") else { return 1 }
    defer { try? FileManager.default.removeItem(at: directory) }
    let counter = Callgrind(directory: directory, tool: tool)
    if let missing = counter.missing {
      print("# batch kinds: instructions not counted: \(missing)")
    } else {
      print(
        "# batch kinds: instructions per record by callgrind (stripped copies), \(callgrindRecords)"
          + " records less a run of none; records/s the fastest of \(repeats) runs from a file")
    }
    for kind in lines {
      let untouched = kind.name.contains("untouched")
      let count = untouched ? records : max(1, records / 4)
      // A file of one untouched kind also with two jobs, and beside two one-job runs at once:
      // where the reading thread's copy of the file weighs most, and what the host allows.
      guard
        let measured = measure(
          cycle: [BatchBenchmark.recordLine(kind.blob)], target: kind.target, count: count,
          callgrindRecords: callgrindRecords, repeats: repeats, tool: tool, counter: counter,
          directory: directory, jobs: untouched ? [1, 2] : [1], pair: untouched)
      else { return 1 }
      let floor = floorCost(kind, records: callgrindRecords, repeats: repeats, counter: counter)
      let record = floorCost(
        kind, reach: .record, records: callgrindRecords, repeats: repeats, counter: counter)
      print(
        "batch kind \(padded(kind.name, 31)) --target \(padded(kind.target, 12)) file --jobs 1  "
          + "\(grouped(measured.rates[1]!)) records/s  \(instructions(measured.instructions, per: "record"))"
          + "  floor (\(kind.floorName)): \(instructions(floor.instructions, per: "read")), "
          + "\(grouped(floor.rate))/s\(ratio(measured.instructions, floor.instructions))"
          + "; with what every such record must do besides (\(recordFloorName(kind))): "
          + "\(instructions(record.instructions, per: "record")), \(grouped(record.rate))/s"
          + ratio(measured.instructions, record.instructions) + scaling(measured))
    }
    guard
      let measured = measure(
        cycle: mixCycle(mix), target: "ios13+", count: mixRecords,
        callgrindRecords: callgrindRecords, repeats: repeats, tool: tool, counter: counter,
        directory: directory, jobs: [1, 2], pair: true)
    else { return 1 }
    // What a run costs before its first record: loading the libraries, reading the arguments.
    let empty = directory.appendingPathComponent("empty.ndjson")
    guard FileManager.default.createFile(atPath: empty.path, contents: Data()) else {
      printError("Error: could not write \(empty.path)")
      return 1
    }
    var startup = Double.infinity
    for _ in 0..<repeats {
      guard
        let usage = DownloadBenchmark.spawn([
          tool, "batch", "--target", "ios13+", "--jobs", "1", empty.path,
        ])
      else { return 1 }
      startup = min(startup, usage.wall)
    }
    // The mix's floor: its kinds' floors in their proportions (a bad record's floor taken as 0).
    let floors = mix.map {
      floorCost($0, records: callgrindRecords, repeats: repeats, counter: counter)
    }
    let mixFloor: Double? =
      floors.contains { $0.instructions == nil }
      ? nil : floors.reduce(0) { $0 + $1.instructions! } * 0.9 / Double(floors.count)
    let mixRate = 0.9 / floors.reduce(0) { $0 + 1 / $1.rate / Double(floors.count) }
    let records = mix.map {
      floorCost($0, reach: .record, records: callgrindRecords, repeats: repeats, counter: counter)
    }
    let mixRecord: Double? =
      records.contains { $0.instructions == nil }
      ? nil : records.reduce(0) { $0 + $1.instructions! } * 0.9 / Double(records.count)
    let mixRecordRate = 0.9 / records.reduce(0) { $0 + 1 / $1.rate / Double(records.count) }
    print(
      "batch mixed (4 kinds in equal parts, 10 % bad, \(grouped(Double(mixRecords))) records) "
        + "--target ios13+ file --jobs 1  "
        + "\(grouped(measured.rates[1]!)) records/s  --jobs 2  \(grouped(measured.rates[2]!)) "
        + String(format: "records/s (scaling %.2fx)  ", measured.rates[2]! / measured.rates[1]!)
        + "two --jobs 1 runs at once (two jobs sharing nothing but the machine): "
        + "\(grouped(measured.pairRate!)) records/s "
        + String(format: "(%.2fx)  ", measured.pairRate! / measured.rates[1]!)
        + "peak RSS \(String(format: "%.1f", Double(measured.peakKiB) / 1024)) MiB  "
        + "\(instructions(measured.instructions, per: "record"))  floor (the kinds' floors in their "
        + "proportions): \(instructions(mixFloor, per: "record")), \(grouped(mixRate))/s"
        + ratio(measured.instructions, mixFloor)
        + "; with what every record must do besides: \(instructions(mixRecord, per: "record")), "
        + "\(grouped(mixRecordRate))/s" + ratio(measured.instructions, mixRecord)
        + String(format: "; a run's start (no records): %.1f ms", startup * 1000))
    return 0
  }

  /// `--jobs 2`'s rate and scaling, and two one-job runs' at once, when measured.
  static func scaling(_ measured: Measured) -> String {
    guard let two = measured.rates[2], let pair = measured.pairRate, let one = measured.rates[1]
    else { return "" }
    return "; --jobs 2  \(grouped(two)) records/s"
      + String(
        format: " (scaling %.2fx), two --jobs 1 runs at once %@ records/s (%.2fx)",
        two / one, grouped(pair), pair / one)
  }

  /// What a run of `resumedata batch` over `count` lines of `cycle` measured.
  struct Measured {
    var rates: [Int: Double]
    var peakKiB: Int
    var instructions: Double?
    /// Records/s of two `--jobs 1` runs over the file at once, both counted (when asked for).
    var pairRate: Double? = nil
  }

  /// Records/s of `batch --target target` over `count` lines of `cycle` in a file, with each
  /// number of `jobs` (the fastest of `repeats` runs, taking turns), and instructions per record
  /// over `callgrindRecords` of them; nil, after saying so, when a run failed.
  ///
  /// With `pair`, also two runs with `--jobs 1` at once, each over the whole file, taking turns
  /// with the others: what two jobs could do sharing nothing but the cores, the memory and the
  /// file's pages (each process reading the file on a thread of its own, as one run does).
  static func measure(
    cycle: [(Int) -> String], target: String, count: Int, callgrindRecords: Int, repeats: Int,
    tool: String, counter: Callgrind, directory: URL, jobs: [Int] = [1], pair: Bool = false
  ) -> Measured? {
    let file = directory.appendingPathComponent("records.ndjson")
    guard BatchBenchmark.writeLines(count, cycle: cycle, to: file) else {
      printError("Error: could not write \(file.path)")
      return nil
    }
    var fastest: [Int: DownloadBenchmark.Usage] = [:]
    var fastestPair = Double.infinity
    for _ in 0..<repeats {
      for jobs in jobs {
        guard
          let usage = DownloadBenchmark.spawn([
            tool, "batch", "--target", target, "--jobs", String(jobs), file.path,
          ])
        else {
          printError("Error: could not run \(tool)")
          return nil
        }
        if usage.wall < fastest[jobs]?.wall ?? .infinity { fastest[jobs] = usage }
      }
      if pair {
        let command = [tool, "batch", "--target", target, "--jobs", "1", file.path]
        // The second starts as soon as the first has, and is waited for before it: the wall time
        // is the pair's.
        var second: DownloadBenchmark.Usage?
        guard
          let first = DownloadBenchmark.spawn(
            command, started: { second = DownloadBenchmark.spawn(command) }),
          let second
        else {
          printError("Error: could not run \(tool)")
          return nil
        }
        fastestPair = min(fastestPair, max(first.wall, second.wall))
      }
    }
    var instructions: Double?
    if counter.missing == nil {
      guard BatchBenchmark.writeLines(callgrindRecords, cycle: cycle, to: file) else {
        printError("Error: could not write \(file.path)")
        return nil
      }
      instructions = counter.perRecord(
        ["batch", "--target", target, "--jobs", "1"], records: callgrindRecords, file: file)
    }
    return Measured(
      rates: fastest.mapValues { Double(count) / $0.wall },
      peakKiB: fastest.values.map(\.peakKiB).max() ?? 0, instructions: instructions,
      pairRate: pair ? Double(2 * count) / fastestPair : nil)
  }

  /// What the record floor of a kind covers besides its parser, for the line.
  static func recordFloorName(_ kind: Kind) -> String {
    (kind.floor == .xml
      ? "the line's base64, libxml2, the request archives' base64 and binary-plist check"
      : "the line's base64, the binary-plist check")
      + (kind.output == nil ? "" : ", the output's base64")
  }

  /// The floor of `kind`: instructions per read counted over `records` reads (this benchmark's
  /// own `batch-floor`, under callgrind), and reads/s on this thread (the fastest of `repeats`).
  static func floorCost(
    _ kind: Kind, reach: Reach = .parser, records: Int, repeats: Int, counter: Callgrind
  ) -> Cost {
    let read =
      reach == .parser
      ? floorRead(kind.floor, kind.floorBytes)
      : recordFloorRead(kind.floor, kind.floorBytes, line: kind.blob, output: kind.output)
    let reads = 20_000
    let clock = ContinuousClock()
    var fastest = Double.infinity
    for _ in 0..<repeats {
      let start = clock.now
      for _ in 0..<reads { read() }
      fastest = min(fastest, seconds(clock.now - start))
    }
    var instructions: Double?
    if counter.missing == nil {
      let file = counter.directory.appendingPathComponent("floor.blob")
      let line = counter.directory.appendingPathComponent("floor-line.blob")
      let output = counter.directory.appendingPathComponent("floor-output.blob")
      if (try? kind.floorBytes.write(to: file)) != nil, (try? kind.blob.write(to: line)) != nil,
        (try? (kind.output ?? Data()).write(to: output)) != nil
      {
        // The count goes last (`perRecord` appends it); the line's and the output's blobs are
        // only read for the record floor (an empty output: the result carries the line's text).
        instructions = counter.perRecord(
          ["batch-floor", kind.floor.rawValue, reach.rawValue, file.path, line.path, output.path],
          records: records, file: nil, executable: counter.bench)
      }
    }
    return Cost(instructions: instructions, rate: Double(reads) / fastest)
  }

  /// One read at the record floor: the record's base64 text of `line` decoded as `batch` decodes
  /// it, the parser floor on `bytes`, for XML the text of each `<data>` element decoded by the
  /// XML reader's line loop and each binary plist the document holds as data checked as
  /// `floorRead(.bplist)` checks it, and the blob the record writes (`output`, when it writes
  /// one) encoded as base64, as its result carries it.
  static func recordFloorRead(_ floor: Floor, _ bytes: Data, line: Data, output: Data?)
    -> () -> Void
  {
    let text = Array(line.base64EncodedString().utf8)
    let parser = floorRead(floor, bytes)
    var nested: [Data] = []
    var dataTexts: [[UInt8]] = []
    if floor == .xml, let value = try? PropertyListValue.decode(bytes).value {
      nested = nestedPlists(value)
      dataTexts = elementTexts("data", in: Array(bytes))
    }
    var decoded = [UInt8](repeating: 0, count: (dataTexts.map(\.count).max() ?? 0) / 4 * 3 + 4)
    let limits = PropertyListLimits.default
    let written = output.map { Array($0) } ?? []
    var encoded = [UInt8](repeating: 0, count: Base64Groups.encodedCount(written.count))
    return {
      blackHole(text.withUnsafeBytes { Base64Groups.decodeCanonical($0) })
      parser()
      // Every `<data>` element's text, as the reader decodes it: its lines in the vector loop
      // (what the loop leaves, a padded last group, it leaves out: the floor is no higher).
      for data in dataTexts {
        decoded.withUnsafeMutableBytes { out in
          data.withUnsafeBytes { data in
            var line = 0
            blackHole(
              Base64Groups.withDecoder {
                $0.decodeLines(data, line: &line, into: out.baseAddress!).written
              })
          }
        }
      }
      for data in nested {
        blackHole(try? BinaryPropertyListView(validating: data, limits: limits))
      }
      if !written.isEmpty {
        written.withUnsafeBytes { input in
          encoded.withUnsafeMutableBytes { Base64Groups.encode(input, into: $0.baseAddress!) }
        }
        blackHole(encoded[0])
      }
    }
  }

  /// The text of every `name` element of an XML document, in document order (elements with
  /// neither attributes nor other elements inside, as the writer writes `<data>`).
  static func elementTexts(_ name: String, in document: [UInt8]) -> [[UInt8]] {
    let open = Array("<\(name)>".utf8)
    let close = Array("</\(name)>".utf8)
    var texts: [[UInt8]] = []
    var position = 0
    func find(_ needle: [UInt8], from start: Int) -> Int? {
      guard document.count >= needle.count, start <= document.count - needle.count else {
        return nil
      }
      return (start...(document.count - needle.count)).first {
        document[$0..<($0 + needle.count)].elementsEqual(needle)
      }
    }
    while let start = find(open, from: position), let end = find(close, from: start) {
      texts.append(Array(document[(start + open.count)..<end]))
      position = end + close.count
    }
    return texts
  }

  /// The binary plists a value holds as data (request archives), each once.
  static func nestedPlists(_ value: PropertyListValue) -> [Data] {
    var nested: [Data] = []
    func collect(_ value: PropertyListValue) {
      switch value {
      case .dictionary(let dictionary): for (_, value) in dictionary { collect(value) }
      case .array(let array): for value in array { collect(value) }
      case .data(let data) where data.starts(with: Array("bplist00".utf8)):
        if !nested.contains(data) { nested.append(data) }
      default: break
      }
    }
    collect(value)
    return nested
  }

  /// One read of `bytes` at the floor: libxml2 alone, or our binary-plist check (the validating
  /// view the pipeline reads archives through, which builds no values) of the bytes and of each
  /// binary plist they hold as data (the request archives of a keyed blob).
  static func floorRead(_ floor: Floor, _ bytes: Data) -> () -> Void {
    switch floor {
    case .xml:
      return {
        var handlers = CXMLShimHandlers(
          startElement: { _, _, _, _, _ in 0 }, endElement: { _, _ in 0 },
          characters: { _, _, _, _ in 0 }, error: { _, _, _, _ in })
        let status = bytes.withUnsafeBytes { raw in
          cxml_shim_parse(raw.baseAddress, raw.count, &handlers, nil)
        }
        blackHole(status)
      }
    case .bplist:
      // The request archives, found once: the floor checks them, as a record's reading does, but
      // finding them costs it nothing (the pipeline's view reads them in place). The same bytes
      // twice are checked once, as the pipeline checks them.
      let nested = (try? BinaryPropertyListReader().read(bytes)).map(nestedPlists) ?? []
      let limits = PropertyListLimits.default
      return {
        for data in [bytes] + nested {
          blackHole(try? BinaryPropertyListView(validating: data, limits: limits))
        }
      }
    }
  }

  /// `resumedata-bench batch-floor xml|bplist parser|record FILE LINE OUTPUT COUNT`: COUNT floor
  /// reads of the bytes of FILE (for `record`, with the base64 of the blob in LINE decoded first
  /// and the blob in OUTPUT, unless empty, encoded after), for callgrind to count (not in the
  /// help: `batch` runs it).
  static func runFloor(_ arguments: [String]) -> Int32 {
    guard arguments.count == 6, let floor = Floor(rawValue: arguments[0]),
      let reach = Reach(rawValue: arguments[1]),
      let bytes = FileManager.default.contents(atPath: arguments[2]),
      let line = FileManager.default.contents(atPath: arguments[3]),
      let output = FileManager.default.contents(atPath: arguments[4]),
      let count = Int(arguments[5]), count >= 0
    else {
      return usageError(
        "batch-floor needs xml or bplist, parser or record, three files and a count",
        hint: "resumedata-bench batch-floor xml|bplist parser|record FILE LINE OUTPUT COUNT")
    }
    let read =
      reach == .parser
      ? floorRead(floor, bytes)
      : recordFloorRead(floor, bytes, line: line, output: output.isEmpty ? nil : output)
    for _ in 0..<count { read() }
    return 0
  }

  /// `resumedata-bench batch-records DIRECTORY COUNT`: COUNT records of each kind line and of the
  /// mix, one NDJSON file each (`kind-1.ndjson` … in the order of the lines, `mix.ndjson`), for
  /// profiling one kind by hand (not in the help).
  static func runRecords(_ arguments: [String]) -> Int32 {
    guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
      return usageError(
        "batch-records needs a directory and a count",
        hint: "resumedata-bench batch-records DIRECTORY COUNT")
    }
    let directory = URL(fileURLWithPath: arguments[0])
    do {
      let (lines, mix) = try kinds(try BatchBenchmark.makeBlobs())
      // Made when missing, as a profiling script's fresh directory is.
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      for (index, kind) in lines.enumerated() {
        let file = directory.appendingPathComponent("kind-\(index + 1).ndjson")
        guard
          BatchBenchmark.writeLines(count, cycle: [BatchBenchmark.recordLine(kind.blob)], to: file)
        else { return writeError(file) }
        print("\(file.path): \(kind.name) --target \(kind.target)")
      }
      let file = directory.appendingPathComponent("mix.ndjson")
      guard BatchBenchmark.writeLines(count, cycle: mixCycle(mix), to: file) else {
        return writeError(file)
      }
      print("\(file.path): mix --target ios13+")
    } catch {
      printError("Error: \(directory.path): could not write the records: \(describe(error))")
      return 1
    }
    return 0
  }

  private static func writeError(_ file: URL) -> Int32 {
    printError("Error: \(file.path): could not write the records")
    return 1
  }

  /// Instructions per record or read as text (`97.9K instructions/record`), or that there is no
  /// count.
  static func instructions(_ count: Double?, per unit: String) -> String {
    guard let count else { return "instructions not counted" }
    return String(format: "%.1fK instructions/%@", count / 1000, unit)
  }

  /// `  2.40x the floor`, when both are counted.
  static func ratio(_ count: Double?, _ floor: Double?) -> String {
    guard let count, let floor, floor > 0 else { return "" }
    return String(format: "  %.2fx the floor", count / floor)
  }
}

/// A new directory of this process's own in the temporary directory (`NAME-PID`), for files a
/// benchmark writes and removes; nil, having said why, when it cannot be made.
func scratchDirectory(_ name: String) -> URL? {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "\(name)-\(getpid())")
  guard
    (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true))
      != nil
  else {
    printError("Error: could not create \(directory.path)")
    return nil
  }
  return directory
}

/// Instruction counts by callgrind, run on stripped copies of the tool and of this benchmark:
/// valgrind 3.19 cannot read the debug information of a release build.
struct Callgrind {
  /// Where the copies and callgrind's output go.
  let directory: URL
  /// The stripped tool and benchmark.
  let tool: String
  let bench: String
  private let valgrind: String?
  /// Why nothing can be counted, when nothing can.
  let missing: String?

  init(directory: URL, tool: String) {
    self.directory = directory
    self.tool = directory.appendingPathComponent("resumedata").path
    bench = directory.appendingPathComponent("resumedata-bench").path
    valgrind = Self.executable("valgrind")
    guard let valgrind, !valgrind.isEmpty else {
      missing = "valgrind is not installed"
      return
    }
    guard let strip = Self.executable("strip") else {
      missing = "strip is not installed (callgrind needs a stripped copy of the release build)"
      return
    }
    // This benchmark's own file, wherever it was started from.
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    let copies = [(tool, self.tool), (me, bench)]
    for (source, copy) in copies {
      guard (try? FileManager.default.copyItem(atPath: source, toPath: copy)) != nil,
        chmod(copy, 0o755) == 0,
        let usage = DownloadBenchmark.spawn([strip, copy]), usage.status == 0
      else {
        missing = "could not make a stripped copy of \(source)"
        return
      }
    }
    missing = nil
  }

  /// The first executable named `name` on `PATH`.
  static func executable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first {
      access($0, X_OK) == 0
    }
  }

  /// Instructions per record of `executable arguments FILE` (the tool by default): those of a
  /// run over `file` (which holds `records` records), less those of a run over an empty file. For
  /// `batch-floor` (`file` nil), the count `records` against a count of 0 instead.
  func perRecord(
    _ arguments: [String], records: Int, file: URL?, executable: String? = nil
  ) -> Double? {
    let empty = directory.appendingPathComponent("empty.ndjson")
    _ = FileManager.default.createFile(atPath: empty.path, contents: Data())
    let full = file.map { [$0.path] } ?? [String(records)]
    let none = file == nil ? ["0"] : [empty.path]
    guard let all = count([executable ?? tool] + arguments + full),
      let base = count([executable ?? tool] + arguments + none)
    else { return nil }
    return Double(all - base) / Double(records)
  }

  /// Instructions callgrind counted over a run of `command`; nil if it failed.
  func count(_ command: [String]) -> Int? {
    guard let valgrind else { return nil }
    let output = directory.appendingPathComponent("callgrind.out").path
    try? FileManager.default.removeItem(atPath: output)
    // `batch` exits 1 when a record failed, as those of the mix do.
    guard
      let usage = DownloadBenchmark.spawn(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=" + output] + command),
      (usage.status >> 8) & 0xFF <= 1, usage.status & 0x7F == 0,
      let text = try? String(contentsOfFile: output, encoding: .utf8)
    else { return nil }
    for line in text.split(separator: "\n")
    where line.hasPrefix("summary:") || line.hasPrefix("totals:") {
      if let total = Int(line.split(separator: " ").last ?? "") { return total }
    }
    return nil
  }
}
