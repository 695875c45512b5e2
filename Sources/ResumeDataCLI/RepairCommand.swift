import Foundation
import ResumeData

/// `resumedata repair FILE|- --target T -o OUT|- [--temp-dir DIR] [--json]`: a blob repaired for
/// the system that will resume it.
enum RepairCommand {
  /// The text `resumedata repair --help` prints.
  static let help = """
    OVERVIEW: Repair a resume blob for the system that will resume it.

    Converts the blob to a form that system reads, and works around that system's bugs
    (ByteRange on iOS 11.0-11.2, the request layout iOS 10.0-10.1 reads back, a missing
    original request, a LocalPath into an old sandbox, a byte count that disagrees with
    the partial file, the segments of a download over several connections). Prints what
    changed, one finding a line ("no changes needed" when nothing did), and a warning for
    what it leaves to you. A blob no system can resume (the empty blob of iOS 12.0-12.2)
    is refused: its findings are printed, nothing is written, and the exit status is 1.

    USAGE: resumedata repair FILE|- --target T -o OUT|- [--temp-dir DIR
                             [--truncate-partial-file]] [--json]
           resumedata repair FILE|DIR... --target T --in-place [--backup] [--temp-dir DIR
                             [--truncate-partial-file]] [--json]

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.
      FILE|DIR...       With --in-place: the blobs to repair where they are; a directory
                        stands for every file under it.

    OPTIONS:
      --target T        The system that will resume the blob (required): ios10.0-10.1,
                        ios10.2-10.3, ios11.0-11.2, ios11.3+, ios12, ios13+,
                        network-framework, linux; or by macOS release: macos10.12-10.12.1,
                        macos10.12.2-10.12.6, macos10.13-10.13.3, macos10.13.4+,
                        macos10.14, macos10.15+.
      -o, --output OUT  Where to write the blob (required); - is standard output, and the
                        findings then go to standard error. A file is replaced atomically,
                        never left half written.
      --in-place        Repair each FILE, and every file under each DIR (recursively, in
                        name order; names starting with "." or ending in ".bak" are
                        skipped), in place: a file is replaced atomically (a temporary
                        file, then a rename), or left alone when nothing changes or the
                        blob is refused. Prints one line a file, then a summary with a
                        directory: counts per status, generation and change code. Exit
                        status: the worst file's (66 unreadable, 65 malformed, 1 refused
                        or not written, else 0).
      --backup          With --in-place: keep each original as FILE.bak before replacing
                        it. An existing FILE.bak with other contents is never overwritten
                        (that file fails instead).
      --temp-dir DIR    The directory that holds the partial file: enables the repairs
                        that look at its size or move a LocalPath into it. Nothing in it
                        is written, unless:
      --truncate-partial-file
                        With --temp-dir, for an Apple target: a download over several
                        connections (ResumeDataKitSegments) keeps later segments past
                        the prefix an Apple system resumes from, which it would splice
                        wrongly; truncate the partial file to that prefix, dropping them,
                        and remove the map. Without it such a blob is left as it is,
                        with a warning.
      --json            Print the findings as one JSON object (see docs/cli/repair.md).
      --input-form F    How FILE holds the blob: raw (its own bytes), base64, hex or
                        description (what NSLog prints); without it the form is
                        told from the input (docs/captured-forms.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 written, 1 refused or not writable, 64 usage error, 65 malformed blob,
      66 unreadable file. With --in-place, the worst file's.

    EXAMPLES:
      resumedata repair Fixtures/resume/v4-byte-range.xml.plist --target ios11.0-11.2 \\
          -o repaired.plist
      resumedata repair Fixtures/resume/keyed-v4.archive --target ios10.0-10.1 \\
          -o repaired.plist --json
      resumedata repair Fixtures/resume --target ios13+ --in-place --backup
      resumedata repair paused.archive --target ios13+ -o handoff.archive \\
          --temp-dir downloads/tmp --truncate-partial-file

    """

  /// The entry of `repair` in the command table.
  static let spec = CommandSpec(
    name: "repair", summary: "Repair a resume blob for the system that will resume it.",
    help: help,
    options: [
      .option("--target", value: .targets), .option("-o", "--output", value: .file),
      .option("--temp-dir", value: .directory), .flag("--json"), .flag("--in-place"),
      .flag("--backup"), .flag("--truncate-partial-file"), ResumeInput.inputFormOption,
    ],
    arguments: .file, run: run(_:streams:))

  /// Runs `resumedata repair` with the arguments after its name.
  ///
  /// - Returns: the exit status: with `--in-place`, the worst of the files'.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) -> ExitCode {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return .success }
    guard let name = parsed.value("--target") else { throw .usage("repair needs --target T") }
    let target = try ResumeInput.target(name)
    if parsed.has("--truncate-partial-file"), parsed.temporaryDirectory == nil {
      throw .usage(
        "--truncate-partial-file needs --temp-dir DIR, the directory of the partial file")
    }
    if parsed.has("--in-place") { return try InPlaceRepair(parsed, target: target).run(streams) }
    if parsed.has("--backup") { throw .usage("--backup goes with --in-place") }
    let output = try BlobOutput(parsed, command: "repair", streams: streams)
    let (path, resume, captured) = try parsed.readResumeData(for: "repair", streams: streams)
    let result: RepairResult
    do {
      result = try resume.repaired(
        for: target, temporaryDirectory: parsed.temporaryDirectory,
        truncatingPartialFile: parsed.has("--truncate-partial-file"))
    } catch {
      throw .operation(error, file: path)
    }
    try output.finish(
      result.blob, findings: ResumeInput.findings(captured) + result.findings, input: path,
      refusal: "the blob cannot be resumed on \(target.rawValue); nothing was written",
      streams: streams)
    return .success
  }
}

/// `repair --in-place`: many files repaired where they are, each replaced atomically.
private struct InPlaceRepair {
  /// What became of a file, least severe first.
  enum Status: Int, Comparable, CaseIterable {
    case repaired, unchanged, refused, failed, malformed, unreadable

    static func < (lhs: Status, rhs: Status) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name in the summary and in JSON: the case's own.
    var name: String { String(describing: self) }

    var exitCode: ExitCode {
      switch self {
      case .repaired, .unchanged: .success
      case .refused, .failed: .failure
      case .malformed: .malformedInput
      case .unreadable: .unreadableInput
      }
    }
  }

  /// The outcome for one file.
  struct Report {
    var file: String
    var status: Status
    var generation: String? = nil
    var findings: [Finding] = []
    var reason: String? = nil

    var line: String {
      switch status {
      case .repaired: "\(file): repaired: " + findings.map(\.code).joined(separator: ", ")
      // A rule that changed nothing may still have said what is left to do.
      case .unchanged:
        "\(file): unchanged"
          + (findings.isEmpty ? "" : ": " + findings.map(\.code).joined(separator: ", "))
      default: "\(file): \(status.name): \(reason ?? "")"
      }
    }
  }

  let target: RepairTarget
  let inputs: [String]
  let backup: Bool
  let json: Bool
  let temporaryDirectory: URL?
  let truncatingPartialFile: Bool
  let inputForm: CapturedForm?

  init(_ parsed: Arguments, target: RepairTarget) throws(CommandError) {
    guard parsed.output == nil else { throw .usage("give -o OUT or --in-place, not both") }
    guard !parsed.positionals.isEmpty else {
      throw .usage("repair --in-place needs a FILE or DIR")
    }
    guard !parsed.positionals.contains("-") else {
      throw .usage("repair --in-place cannot write back to standard input")
    }
    self.target = target
    inputs = parsed.positionals
    backup = parsed.has("--backup")
    json = parsed.has("--json")
    temporaryDirectory = parsed.temporaryDirectory
    truncatingPartialFile = parsed.has("--truncate-partial-file")
    inputForm = try ResumeInput.form(parsed)
  }

  func run(_ streams: Streams) -> ExitCode {
    let expansion = DirectoryWalk.expand(inputs)
    var summary = RunSummary(statusNames: Status.allCases.map(\.name), codesLabel: "changes")
    var reports: [Report] = []
    var worst = Status.repaired
    func finish(_ report: Report) {
      summary.add(
        status: report.status.name, generation: report.generation,
        codes: report.status == .repaired ? report.findings.map(\.code) : [])
      worst = max(worst, report.status)
      // Lines go out as files are done, so that a long run shows its progress; JSON at the end.
      if json { reports.append(report) } else { streams.print(CommandError.oneLine(report.line)) }
    }
    for (path, reason) in expansion.unreadable {
      finish(Report(file: path, status: .unreadable, reason: reason))
    }
    for path in expansion.files { finish(repair(path)) }
    if json {
      var object = JSONObject.document()
      object.add("target", string: target.rawValue)
      object.add(
        "files",
        JSON.array(
          reports.map { report in
            var file = JSONObject()
            file.add("file", string: report.file)
            file.add("status", string: report.status.name)
            file.add("generation", string: report.generation)
            file.add("reason", string: report.reason)
            file.add("findings", JSON.findings(report.findings, level: 3))
            return file.rendered(level: 2)
          }, level: 1))
      if expansion.sawDirectory { object.add("summary", summary.json(level: 1)) }
      streams.print(object.rendered())
    } else if expansion.sawDirectory {
      streams.print(summary.text)
    }
    return worst.exitCode
  }

  private func repair(_ path: String) -> Report {
    let input: Data
    let resume: ResumeData
    do throws(CommandError) {
      // Only a regular file can be replaced; a FIFO would be read, then left unrepaired.
      input = try Files.read(path, limit: Files.maximumInputSize, regularFileOnly: true)
      let captured: CapturedBlob
      (resume, captured) = try ResumeInput.decode(input, file: path, form: inputForm)
      // Written back as the blob's own bytes, a file of text would change form under the app
      // that keeps it: left alone, for -o to write it somewhere else.
      guard captured.form == .raw else {
        return Report(
          file: path, status: .failed,
          reason:
            "read as \(captured.detail): --in-place writes only blobs kept as their own bytes back; repair it with -o OUT"
        )
      }
    } catch {
      let location = error.location == .none ? "" : "\(error.location): "
      return Report(
        file: path, status: error.exitCode == .unreadableInput ? .unreadable : .malformed,
        reason: location + error.message)
    }
    var report = Report(file: path, status: .unchanged, generation: resume.generation.rawValue)
    do {
      let result = try resume.repaired(
        for: target, temporaryDirectory: temporaryDirectory,
        truncatingPartialFile: truncatingPartialFile)
      report.findings = result.findings
      guard let blob = result.blob else {
        report.status = .refused
        let first = result.findings.first { $0.severity == .error } ?? result.findings.first
        report.reason = first.map { "\($0.code): \($0.message)" } ?? "cannot be resumed"
        return report
      }
      let bytes = try blob.encoded(keepingUntouchedBytes: true)
      // An untouched blob is its own bytes: the file is left as it is.
      guard bytes != input else { return report }
      try Files.replace(path, with: bytes, backup: backup)
      report.status = .repaired
    } catch let error as CommandError {
      report.status = .failed
      report.reason = error.message
    } catch {
      report.status = .failed
      report.reason = CommandError.operation(error, file: path).message
    }
    return report
  }
}
