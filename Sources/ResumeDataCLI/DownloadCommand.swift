import Dispatch
import Downloader
import Foundation
import KeyedArchive
import OutputFiles
import ResumeData
import ResumeDataBatch

/// `resumedata download URL -o FILE …` and `resumedata resume BLOB -o FILE …`: a resumable
/// download that speaks Apple's resume data.
enum DownloadCommand {
  /// The text `resumedata download --help` prints.
  static let downloadHelp = """
    OVERVIEW: Download a URL with resume, writing Apple-compatible resume data.

    Downloads URL to FILE, resuming after failures without ever splicing a changed file:
    every continuation asks for the rest with Range and If-Range (a strong ETag, else
    Last-Modified), and only a 206 that continues the partial file exactly is appended.
    While it runs, the partial file and its resume data (Apple's layout) live in the state
    directory; a process killed at any moment continues from there when run again with
    the same arguments. Ctrl-C pauses: the resume data is written and its path printed,
    and the exit status is 130. Progress goes to standard error. A new download first
    asks the server, in a few small requests, whether it will let the download resume,
    and says so once (a note on standard error) when it will not, and why (as
    `resumedata probe` judges for this downloader). With --partial, the download
    continues FILE.part from where it ends, as its sidecar FILE.part.json (what
    `resumedata export` writes) says: the URL (unless one is given), the validator sent
    as If-Range, the header fields.

    USAGE: resumedata download URL -o FILE [--sha256 HEX] [--digest ALG]
                               [--header 'Name: value']... [--state-dir DIR]
                               [--temp-dir DIR] [--resume-data OUT] [--generation GEN] [--retries N]
                               [--stall-timeout SECONDS] [--persist-interval SECONDS]
                               [--connections N] [--engine curl|urlsession] [--ca-cert FILE]
                               [--json] [--no-resume-check]
           resumedata download [URL] --partial FILE.part -o FILE [options]

    ARGUMENTS:
      URL               An http or https URL.

    OPTIONS:
      -o, --output FILE The finished file (required); replaced atomically when complete
                        (a FIFO or a device, such as /dev/null, is written into).
      --sha256 HEX      The SHA-256 the file must have; a mismatch fails (exit status 1).
      --digest ALG      The digest computed as the file arrives and printed at the end:
                        sha256 (default), sha1, md5 or none.
      --header 'Name: value'
                        A request header (repeatable).
      --state-dir DIR   Where the partial file and FILE.resumedata are kept while
                        downloading (default: FILE's directory, or for a FIFO or a device
                        the system's temporary directory).
      --temp-dir DIR    Where the partial file alone is kept (default: the state
                        directory).
      --resume-data OUT Where the resume data goes on pause or failure (default: the state
                        file in the state directory).
      --generation GEN  The resume data's form: keyed (default), v1, v2, v4, safari.
      --retries N       Attempts after the first, resuming each time (default: 4).
      --stall-timeout SECONDS
                        No byte for this long counts as a lost connection (default: 30).
      --persist-interval SECONDS
                        How often, while bytes arrive, the partial file is flushed and
                        the resume data brought up to date (default: 1): a machine that
                        loses power loses at most this long's bytes.
      --connections N   Fetch the file over N connections at once, 1 to 16 (default: 1),
                        when the server serves byte ranges with a length and a strong
                        validator; otherwise over one (and a note says why).
      --engine ENGINE   The HTTP engine: curl (libcurl; the default on Linux) or
                        urlsession (Foundation's URLSession; the default on Apple
                        platforms). Default: $RESUMEDATA_ENGINE, else the platform's.
      --ca-cert FILE    Trust the certificate authorities in this PEM file for https, in
                        place of the system's (as curl does); not with urlsession
                        on Linux, whose URLSession cannot.
      --json            Print one JSON object with the outcome (status, file, bytes,
                        digest, resume data, the resume check) instead of the line (see
                        docs/cli/download.md).
      --partial FILE.part
                        Continue this partial file, described by FILE.part.json (its URL,
                        validator and header fields); it becomes FILE when complete.
      --no-resume-check Do not ask the server first whether the download can resume.
      -h, --help        Show this help.

    EXIT STATUS:
      0 complete, 1 failed (the resume data is kept), 64 usage error, 65 malformed
      sidecar, 66 unreadable FILE.part, 130 paused by Ctrl-C.

    EXAMPLES:
      resumedata download https://example.com/files/archive.zip -o archive.zip
      resumedata download https://example.com/files/archive.zip -o archive.zip \\
          --generation v2 --resume-data archive.resumedata --json

    """

  /// The text `resumedata resume --help` prints.
  static let resumeHelp = """
    OVERVIEW: Continue a download from resume data of any generation.

    Continues a download from resume data of any generation, Apple-made or ours: the
    partial file is found by the blob's TempFileName in DIR (or by its LocalPath, only
    inside DIR), and the request is the blob's current request, headers included. The
    rest behaves as `resumedata download`.

    USAGE: resumedata resume BLOB -o FILE [--temp-dir DIR] [--sha256 HEX] [--digest ALG]
                             [--header 'Name: value']... [--state-dir DIR]
                             [--resume-data OUT] [--generation GEN] [--retries N]
                             [--stall-timeout SECONDS] [--persist-interval SECONDS]
                             [--connections N] [--engine curl|urlsession] [--ca-cert FILE]
                             [--json]

    ARGUMENTS:
      BLOB              The resume data (- reads standard input).

    OPTIONS:
      -o, --output FILE The finished file (required).
      --temp-dir DIR    The directory that holds the partial file (default: BLOB's
                        directory).
      --sha256 HEX, --digest ALG, --header 'Name: value', --state-dir DIR,
      --resume-data OUT, --generation GEN, --retries N, --stall-timeout SECONDS,
      --persist-interval SECONDS, --connections N, --engine ENGINE, --ca-cert FILE, --json
                        As for `resumedata download`.
      -h, --help        Show this help.

    EXIT STATUS:
      0 complete, 1 failed (the resume data is kept), 64 usage error, 65 malformed blob,
      66 unreadable blob, 130 paused by Ctrl-C.

    EXAMPLES:
      resumedata resume Fixtures/resume/v4-byte-range.xml.plist -o archive.zip \\
          --temp-dir ~/Library/Caches/partials
      resumedata resume Fixtures/resume/keyed-v5-response.archive -o archive.zip --json

    """

  /// The options `download` and `resume` share.
  private static let sharedOptions: [OptionSpec] = [
    .option("-o", "--output", value: .file), .option("--sha256", value: .text),
    .option("--digest", value: .choice(["sha256", "sha1", "md5", "none"])),
    .option("--header", value: .text, repeatable: true),
    .option("--state-dir", value: .directory), .option("--temp-dir", value: .directory),
    .option("--resume-data", value: .file),
    .option("--generation", value: .choice(["keyed", "v1", "v2", "v4", "safari"])),
    .option("--retries", value: .number), .option("--stall-timeout", value: .number),
    .option("--persist-interval", value: .number),
    .option("--connections", value: .number), engineOption, caCertOption, .flag("--json"),
  ]

  /// `--engine`, shared with `downloads run`.
  static let engineOption = OptionSpec.option(
    "--engine", value: .choice(DownloadEngine.allCases.map(\.rawValue)))
  /// `--ca-cert`, shared with `downloads run`.
  static let caCertOption = OptionSpec.option("--ca-cert", value: .file)

  /// The engine and certificate authority the options (or `RESUMEDATA_ENGINE`) choose, set in
  /// `configuration`.
  static func applyEngine(_ parsed: Arguments, to configuration: inout DownloadConfiguration)
    throws(CommandError)
  {
    let names = DownloadEngine.allCases.map(\.rawValue).joined(separator: " or ")
    let fromEnvironment = ProcessInfo.processInfo.environment["RESUMEDATA_ENGINE"]
      .flatMap { $0.isEmpty ? nil : $0 }
    if let name = parsed.value("--engine") ?? fromEnvironment {
      let source = parsed.value("--engine") != nil ? "--engine" : "RESUMEDATA_ENGINE"
      guard let engine = DownloadEngine(rawValue: name) else {
        throw .usage("\(source) needs \(names), not '\(name)'")
      }
      guard DownloadEngine.isAvailable(engine) else {
        throw .usage("\(source): the \(name) engine is not built in on this platform")
      }
      configuration.engine = engine
    }
    if let path = parsed.value("--ca-cert") {
      guard DownloadEngine.trustsOwnAuthority(configuration.engine) else {
        throw .usage(
          "--ca-cert: URLSession on this platform cannot trust a certificate authority of one's "
            + "own; use --engine curl")
      }
      // Named now, with the exit status of an input that does not read or is not well formed,
      // rather than by the download that would refuse it.
      guard let data = FileManager.default.contents(atPath: path) else {
        throw CommandError(.unreadableInput, "cannot read the certificate authority", file: path)
      }
      guard String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
        throw CommandError(
          .malformedInput, "holds no PEM certificate (-----BEGIN CERTIFICATE-----)", file: path)
      }
      configuration.certificateAuthority = URL(fileURLWithPath: path)
    }
  }

  /// The entry of `download` in the command table.
  static let downloadSpec = CommandSpec(
    name: "download", summary: "Download a URL with resume, writing Apple-compatible resume data.",
    help: downloadHelp,
    options: sharedOptions + [.option("--partial", value: .file), .flag("--no-resume-check")],
    arguments: .url, run: download(_:streams:))

  /// The entry of `resume` in the command table.
  static let resumeSpec = CommandSpec(
    name: "resume", summary: "Continue a download from resume data of any generation.",
    help: resumeHelp, options: sharedOptions,
    arguments: .file, run: resume(_:streams:))

  /// Runs `resumedata download`.
  static func download(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: downloadSpec, streams: streams)
    else { return }
    // A partial file and its sidecar (`export`'s pair) name the URL themselves.
    let partial = try PartialStart.read(parsed)
    guard parsed.positionals.count == 1 || (partial != nil && parsed.positionals.isEmpty),
      let url = URL(string: parsed.positionals.first ?? partial?.pair.url ?? "")
    else {
      throw .usage("download needs one URL")
    }
    var (destination, configuration) = try setUp(parsed, defaultDirectory: nil, streams: streams)
    if let partial { configuration.temporaryDirectory = partial.file.deletingLastPathComponent() }
    var check: ProbeVerdict?
    // Run again with the same state directory, a download continues from what it persisted.
    let download: Download
    do {
      if let stateFile = configuration.stateFile,
        let saved = try? Data(contentsOf: stateFile),
        let resumed = try? Download(
          resumeData: saved, destination: destination, configuration: configuration)
      {
        download = resumed
      } else if let partial {
        download = try partial.download(
          url: url.absoluteString, destination: destination, configuration: configuration)
      } else {
        download = try Download(url: url, destination: destination, configuration: configuration)
        // Said once, at the start of a new download: whether the server lets it resume.
        if !parsed.has("--no-resume-check") {
          check = resumeCheck(url, configuration: configuration)
          if let note = check.flatMap(resumeNote) { streams.printError(note) }
        }
      }
    } catch let error as CommandError {
      throw error
    } catch let error as DownloadError {
      throw .usage(error.message)
    } catch {
      throw CommandError(.failure, "\(error)")
    }
    try run(
      download, url: url.absoluteString, destination: destination, configuration: configuration,
      parsed: parsed, streams: streams, check: check)
    // The pair is used up: the partial file became the file.
    if let partial { try? FileManager.default.removeItem(atPath: partial.sidecar) }
  }

  /// Runs `resumedata resume`.
  static func resume(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: resumeSpec, streams: streams)
    else { return }
    let (path, blob) = try parsed.readSingleFile(for: "resume", streams: streams)
    let decoded = try ResumeInput.decode(blob, file: path)
    let blobDirectory =
      path == "-" ? nil : URL(fileURLWithPath: path).deletingLastPathComponent()
    let (destination, configuration) = try setUp(
      parsed, defaultDirectory: blobDirectory, streams: streams)
    let download: Download
    do {
      download = try Download(
        resumeData: blob, destination: destination, configuration: configuration)
    } catch {
      throw CommandError(.failure, error.message, file: path)
    }
    try run(
      download, url: decoded.downloadURL ?? decoded.currentRequest?.url,
      destination: destination, configuration: configuration, parsed: parsed, streams: streams)
  }

  /// The destination and configuration from the shared options.
  private static func setUp(
    _ parsed: Arguments, defaultDirectory: URL?, streams: Streams
  ) throws(CommandError) -> (URL, DownloadConfiguration) {
    guard let output = parsed.output, output != "-" else {
      throw .usage("-o FILE is required (the download is written to a file)")
    }
    let destination = URL(fileURLWithPath: output).standardizedFileURL
    // Checked now, not once the whole file has been fetched.
    let ownDirectory: URL
    switch try Files.downloadTarget(output) {
    case .stream:
      // A FIFO or a device (`-o /dev/null`) is written into at the end; its directory is no
      // place for a partial file.
      ownDirectory = FileManager.default.temporaryDirectory
    case .file:
      ownDirectory = destination.deletingLastPathComponent()
    }
    let stateDirectory =
      parsed.value("--state-dir").map { URL(fileURLWithPath: $0, isDirectory: true) }
      ?? ownDirectory
    let temporaryDirectory =
      parsed.value("--temp-dir").map { URL(fileURLWithPath: $0, isDirectory: true) }
      ?? defaultDirectory ?? stateDirectory
    // Made when missing; something else by that name is named now, before any request.
    for option in ["--state-dir", "--temp-dir"] {
      if let path = parsed.value(option) { try Files.requireDirectory(path, option: option) }
    }
    var configuration = DownloadConfiguration(temporaryDirectory: temporaryDirectory)
    // Off a terminal a line is printed every 5 s: progress four times a second would only wake
    // threads.
    if !streams.standardErrorIsTerminal { configuration.progressInterval = .seconds(1) }
    configuration.stateFile = stateDirectory.appendingPathComponent(
      destination.lastPathComponent + ".resumedata")
    if let name = parsed.value("--digest") {
      if name == "none" {
        configuration.digestAlgorithm = nil
      } else if let algorithm = DigestAlgorithm(rawValue: name) {
        configuration.digestAlgorithm = algorithm
      } else {
        throw .usage("--digest needs sha256, sha1, md5 or none, not '\(name)'")
      }
    }
    if let hex = parsed.value("--sha256") {
      guard configuration.digestAlgorithm == .sha256 else {
        throw .usage(
          "--sha256 needs the SHA-256 digest (not --digest \(parsed.value("--digest") ?? ""))")
      }
      guard hex.count == 64, hex.allSatisfy(\.isHexDigit) else {
        throw .usage("--sha256 needs 64 hexadecimal digits")
      }
      configuration.expectedDigest = hex.lowercased()
    }
    for header in parsed.values("--header") {
      guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
        throw .usage("--header needs 'Name: value', not '\(header)'")
      }
      var value = header[header.index(after: colon)...]
      if value.first == " " { value = value.dropFirst() }
      let field = URLRequestFields.Header(String(header[..<colon]), String(value))
      if let problem = field.problem { throw .usage(problem) }
      configuration.headers.append((field.name, field.value))
    }
    if let name = parsed.value("--generation") {
      guard let generation = ResumeDataGeneration(rawValue: name),
        [.keyed, .v1, .v2, .v4, .safari].contains(generation)
      else {
        throw .usage("--generation needs keyed, v1, v2, v4 or safari, not '\(name)'")
      }
      configuration.resumeDataGeneration = generation
    }
    if let retries = parsed.value("--retries") {
      guard let count = Int(retries), (0...100).contains(count) else {
        throw .usage("--retries needs a number from 0 to 100")
      }
      configuration.retry.maximumAttempts = count + 1
    }
    if let stall = parsed.value("--stall-timeout") {
      guard let seconds = Double(stall), seconds > 0, seconds <= 86_400 else {
        throw .usage("--stall-timeout needs a number of seconds")
      }
      configuration.stallTimeout = .milliseconds(Int(seconds * 1000))
    }
    if let interval = parsed.value("--persist-interval") {
      guard let seconds = Double(interval), seconds >= 0.1, seconds <= 86_400 else {
        throw .usage("--persist-interval needs a number of seconds from 0.1 to 86400")
      }
      configuration.persistInterval = .milliseconds(Int(seconds * 1000))
    }
    if let connections = parsed.value("--connections") {
      let range = DownloadConfiguration.connectionRange
      guard let count = Int(connections), range.contains(count) else {
        throw .usage(
          "--connections needs a number from \(range.lowerBound) to \(range.upperBound)")
      }
      configuration.connections = count
    }
    try applyEngine(parsed, to: &configuration)
    return (destination, configuration)
  }

  /// Runs a download to its end, with progress on standard error and Ctrl-C pausing it.
  /// With `--json`, the outcome is one object on standard output (`result`) instead of the line
  /// or the note on standard error; a failure still exits 1 with its `Error:` line.
  private static func run(
    _ download: Download, url: String?, destination: URL, configuration: DownloadConfiguration,
    parsed: Arguments, streams: Streams, check: ProbeVerdict? = nil
  ) throws(CommandError) {
    let progress = ProgressPrinter(
      terminal: streams.standardErrorIsTerminal, streams: streams,
      multiplexes: configuration.engine == .urlSession
        && (url.map { $0.lowercased().hasPrefix("https:") } ?? true))
    let interrupted = Interruption(download)
    let done = DispatchSemaphore(value: 0)
    let outcome = ResultBox()
    Task {
      for await event in download.events { progress.show(event) }
    }
    Task {
      outcome.result = await download.run()
      done.signal()
    }
    done.wait()
    interrupted.stop()
    progress.end()
    let json = parsed.has("--json")
    guard let result = outcome.result else { throw CommandError(.failure, "the download ended") }
    // With the file written to standard output (`-o /dev/stdout`), the report goes beside it.
    let say = streams.isStandardOutput(destination.path) ? streams.printError : streams.print
    switch result {
    case .completed(let file, let digest):
      let algorithm = configuration.digestAlgorithm?.rawValue ?? ""
      if json {
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size])
          .flatMap { $0 as? NSNumber }?.int64Value
        say(
          report(
            "completed", url: url, file: file.path, bytes: size,
            digest: digest.map { (algorithm, $0) }, check: check))
      } else {
        say("\(file.path)" + (digest.map { "  \(algorithm) \($0)" } ?? ""))
      }
    case .paused(let data):
      let path = try writeResumeData(data, parsed: parsed, configuration: configuration)
      if json {
        say(
          report(
            "paused", url: url, file: destination.path, bytes: bytesReceived(data),
            resumeData: path, check: check))
      } else {
        streams.printError("Paused; resume data: \(path)")
      }
      throw CommandError(.interrupted, "paused")
    case .failed(let error, let data):
      var message = error.description
      var path: String?
      if let data {
        let written = try writeResumeData(data, parsed: parsed, configuration: configuration)
        message += " (resume data: \(written))"
        path = written
      }
      if json {
        say(
          report(
            "failed", url: url, file: destination.path, bytes: data.flatMap(bytesReceived),
            resumeData: path, error: error, check: check))
      }
      throw CommandError(.failure, message)
    }
  }

  /// The `--json` outcome: `{"schemaVersion": 1, "status", "url", "file", "bytes",
  /// "digestAlgorithm", "digest", "resumeData", "error": {"code", "message"} | null,
  /// "resumeCheck": {"resumes", "outcome", "reasons", "message"} | null}`.
  private static func report(
    _ status: String, url: String?, file: String, bytes: Int64?,
    digest: (algorithm: String, hex: String)? = nil, resumeData: String? = nil,
    error: DownloadError? = nil, check: ProbeVerdict? = nil
  ) -> String {
    var object = JSONObject.document()
    object.add("status", string: status)
    object.add("url", string: url)
    object.add("file", string: file)
    object.add("bytes", bytes.map { String($0) } ?? "null")
    object.add("digestAlgorithm", string: digest?.algorithm)
    object.add("digest", string: digest?.hex)
    object.add("resumeData", string: resumeData)
    let failure = error.map {
      "{\"code\": \(JSON.string($0.code.rawValue)), \"message\": \(JSON.string($0.message))}"
    }
    object.add("error", failure ?? "null")
    object.add("resumeCheck", resumeCheckJSON(check))
    return object.rendered() + "\n"
  }

  /// The byte count recorded in resume data the downloader wrote.
  private static func bytesReceived(_ data: Data) -> Int64? {
    (try? ResumeData(decoding: data))?.bytesReceived
  }

  /// Writes resume data where `--resume-data` says (the state file is already written).
  private static func writeResumeData(
    _ data: Data, parsed: Arguments, configuration: DownloadConfiguration
  ) throws(CommandError) -> String {
    guard let path = parsed.value("--resume-data") else {
      return configuration.stateFile?.path ?? ""
    }
    do {
      try FileAccess.write(data, to: path)
    } catch {
      throw CommandError(error)
    }
    return path
  }
}

/// The result handed from the download's task to the waiting command.
private final class ResultBox: @unchecked Sendable {
  // Written once by the task before it signals, read after the wait: the semaphore orders them.
  var result: DownloadResult?
}

/// Ctrl-C pauses the download instead of killing the process.
private final class Interruption {
  private let source: any DispatchSourceSignal

  init(_ download: Download) {
    signal(SIGINT, SIG_IGN)
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { Task { await download.pause() } }
    source.resume()
  }

  func stop() {
    source.cancel()
    signal(SIGINT, SIG_DFL)
  }
}

/// Progress on standard error: a bar redrawn in place on a terminal, a line every few seconds
/// otherwise.
private final class ProgressPrinter: @unchecked Sendable {
  private let terminal: Bool
  private let streams: Streams
  // Whether segments may travel as HTTP/2 streams of one connection (URLSession over https).
  private let multiplexes: Bool
  private let lock = NSLock()
  private var lastLine = ContinuousClock.now - .seconds(10)
  private var drawn = false

  init(terminal: Bool, streams: Streams, multiplexes: Bool) {
    self.terminal = terminal
    self.streams = streams
    self.multiplexes = multiplexes
  }

  func show(_ event: DownloadEvent) {
    lock.lock()
    defer { lock.unlock() }
    switch event {
    case .progress(let progress):
      let now = ContinuousClock.now
      guard terminal || (now - lastLine >= .seconds(5) && progress.bytesPerSecond > 0) else {
        return
      }
      lastLine = now
      let line = Self.describe(progress)
      if terminal {
        streams.writeStandardError(Data(("\r\u{1B}[2K" + line).utf8))
        drawn = true
      } else {
        streams.printError(line)
      }
    case .resumed(let offset):
      note("resuming at byte \(offset)")
    case .resumedSegments(let held, let total):
      // Segments are held anywhere in the file: a count, not a place to continue from.
      note("resuming with \(held) of \(total) bytes on disk")
    case .restarted(let reason):
      note("starting over: \(reason)")
    case .redirected(let url):
      note("redirected to \(url.absoluteString)")
    case .segmented(let connections):
      // One when the file is too small to split (under twice the minimum segment). The curl
      // engine gives every segment a connection of its own; URLSession multiplexes HTTP/2 (the
      // segments are then streams of one connection) and does not say which protocol it spoke.
      if multiplexes {
        note(
          "fetching \(connections) segment\(connections == 1 ? "" : "s") at once "
            + "(an HTTP/2 server takes them as streams of one connection)")
      } else {
        note("fetching over \(connections) connection\(connections == 1 ? "" : "s")")
      }
    case .singleConnection(let reason):
      note("one connection: \(reason)")
    default:
      break
    }
  }

  func end() {
    lock.lock()
    defer { lock.unlock() }
    if drawn { streams.writeStandardError(Data("\n".utf8)) }
    drawn = false
  }

  private func note(_ text: String) {
    if drawn { streams.writeStandardError(Data("\n".utf8)) }
    drawn = false
    // A reason can quote the server (its validators, a redirect's URL).
    streams.printError(CommandError.oneLine(text))
  }

  static func describe(_ progress: DownloadProgress) -> String {
    var parts = [bytes(progress.bytes)]
    if let expected = progress.expected, expected > 0 {
      let percent = Int(Double(progress.bytes) * 100 / Double(expected))
      parts = ["\(percent)%", "\(bytes(progress.bytes)) of \(bytes(expected))"]
    }
    parts.append("\(bytes(Int64(progress.bytesPerSecond)))/s")
    if let left = progress.secondsRemaining, left.isFinite {
      let seconds = Int(left.rounded())
      parts.append(String(format: "%d:%02d left", seconds / 60, seconds % 60))
    }
    return parts.joined(separator: "  ")
  }

  static func bytes(_ count: Int64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"]
    var value = Double(count)
    var unit = 0
    while value >= 1000, unit < units.count - 1 {
      value /= 1000
      unit += 1
    }
    return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
  }
}
