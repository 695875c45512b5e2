import Foundation
import ResumeData

/// `resumedata validate FILE|-... [--target T] [--temp-dir DIR] [--json]`: whether each blob can be
/// resumed, one line a file, summed up in the exit status.
enum ValidateCommand {
  /// The text `resumedata validate --help` prints.
  static let help = """
    OVERVIEW: Whether resume blobs can be resumed (on a given system).

    Checks whether each resume blob can be resumed, and prints one line a file:
      FILE: ok (GENERATION)
      FILE: not resumable: CODE: message     (the first error finding, docs/findings.md)
      FILE: malformed: [LOCATION: ]message
      FILE: unreadable: message
    A blob is resumable when its diagnosis finds no error and, with --target, when
    `repair --target` would write a blob for that system whose own diagnosis finds no
    error (a blob that only needs repairing is ok). Every file is checked, whatever the
    others give.

    A directory stands for every file under it, recursively, in name order (names
    starting with "." and ending in ".bak" are skipped, links to directories are not
    followed); with a directory, a summary follows the lines: the count of files per
    status, per generation and per finding code.

    USAGE: resumedata validate FILE|DIR|-... [--target T] [--temp-dir DIR] [--json]

    ARGUMENTS:
      FILE|DIR|-        The blobs to read; - reads standard input.

    OPTIONS:
      --target T        Also require that the blob can be repaired for this system into
                        a resumable blob (see `resumedata repair --help` for the names).
      --temp-dir DIR    The directory that holds the partial files: each is looked up
                        there (its size only), and a missing one is an error.
      --json            Print one JSON object, {"schemaVersion": 1, "target", "files":
                        [...]} (see docs/cli/validate.md), instead of the lines.
      -h, --help        Show this help.

    EXIT STATUS:
      The worst of the files: 66 if any is unreadable, else 65 if any is malformed,
      else 1 if any is not resumable, else 0. 64 for a usage error.

    EXAMPLES:
      resumedata validate Fixtures/resume/v2.xml.plist Fixtures/resume/ios12-empty.archive
      resumedata validate Fixtures/resume/network-framework.blob --target ios13+
      resumedata validate Fixtures/resume/safari.archive --json

    """

  /// The entry of `validate` in the command table.
  static let spec = CommandSpec(
    name: "validate", summary: "Whether resume blobs can be resumed (on a given system).",
    help: help,
    options: [
      .option("--target", value: .targets), .option("--temp-dir", value: .directory),
      .flag("--json"),
    ],
    arguments: .file, run: run(_:streams:))

  /// What a file turned out to be, least severe first.
  private enum Status: Int, Comparable {
    case ok, notResumable, malformed, unreadable

    static func < (lhs: Status, rhs: Status) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name in JSON, and in the line after `FILE: `.
    var name: String {
      switch self {
      case .ok: "ok"
      case .notResumable: "not-resumable"
      case .malformed: "malformed"
      case .unreadable: "unreadable"
      }
    }

    /// The exit status when this is the worst file.
    var exitCode: ExitCode {
      switch self {
      case .ok: .success
      case .notResumable: .failure
      case .malformed: .malformedInput
      case .unreadable: .unreadableInput
      }
    }
  }

  /// The verdict on one file.
  private struct Report {
    var file: String
    var status: Status
    var generation: String?
    /// Why it is not ok: `CODE: message` of the first error finding, or the read error.
    var reason: String?
    var findings: [Finding] = []
    /// The repair's findings (with a repair that failed as an error finding), when a target is given.
    var repairFindings: [Finding]?
    /// The diagnosis of the repaired blob, when a target is given and the repair wrote one.
    var repairedFindings: [Finding]?

    /// `FILE: VERDICT…` on one line, the verdict coloured by `style`.
    func line(style: TextStyle) -> String {
      // Escaped before colouring, so that only our own escape sequences reach the terminal.
      let file = CommandError.oneLine(file)
      let reason = CommandError.oneLine(reason ?? "")
      switch status {
      case .ok: return "\(file): \(style.paint("ok", .green)) (\(generation ?? "-"))"
      case .notResumable: return "\(file): \(style.paint("not resumable", .red)): \(reason)"
      case .malformed, .unreadable:
        return "\(file): \(style.paint(status.name, .red)): \(reason)"
      }
    }
  }

  /// Runs `resumedata validate` with the arguments after its name.
  ///
  /// - Returns: the exit status, the worst of the files'.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) -> ExitCode {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return .success }
    let target = try parsed.value("--target").map { (name) throws(CommandError) in
      try ResumeInput.target(name)
    }
    guard !parsed.positionals.isEmpty else {
      throw .usage("validate needs a FILE (or - for standard input)")
    }
    let expansion = DirectoryWalk.expand(parsed.positionals)
    let reports =
      expansion.unreadable.map { Report(file: $0.path, status: .unreadable, reason: $0.reason) }
      + expansion.files.map {
        validate($0, target: target, directory: parsed.temporaryDirectory, streams: streams)
      }
    var summary = RunSummary(
      statusNames: [Status.ok, .notResumable, .malformed, .unreadable].map(\.name),
      codesLabel: "findings")
    for report in reports {
      summary.add(
        status: report.status.name, generation: report.generation,
        codes: report.findings.map(\.code))
    }
    if parsed.has("--json") {
      var object = JSONObject.document()
      object.add("target", string: target?.rawValue)
      object.add("files", JSON.array(reports.map(json), level: 1))
      if expansion.sawDirectory { object.add("summary", summary.json(level: 1)) }
      streams.print(object.rendered() + "\n")
    } else {
      streams.print(
        reports.map { $0.line(style: streams.outputStyle) + "\n" }.joined()
          + (expansion.sawDirectory ? summary.text : ""))
    }
    return reports.map(\.status).max()?.exitCode ?? .success
  }

  private static func validate(
    _ path: String, target: RepairTarget?, directory: URL?, streams: Streams
  ) -> Report {
    let resume: ResumeData
    do throws(CommandError) {
      resume = try ResumeInput.decode(try Files.read(path, streams: streams), file: path)
    } catch {
      let location = error.location == .none ? "" : "\(error.location): "
      return Report(
        file: path, status: error.exitCode == .unreadableInput ? .unreadable : .malformed,
        reason: location + error.message)
    }
    var report = Report(
      file: path, status: .ok, generation: resume.generation.rawValue,
      findings: resume.findings(temporaryDirectory: directory))
    if let target {
      do {
        let repair = try resume.repaired(for: target, temporaryDirectory: directory)
        report.repairFindings = repair.findings
        // What the repair makes must itself resume: a conversion can leave out what the target
        // needs (Network.framework's object carries no validator for CFNetwork's If-Range).
        report.repairedFindings = repair.blob?.findings(temporaryDirectory: directory)
      } catch {
        // A repair that cannot be done (a conversion the blob cannot give what the target needs
        // for) makes the blob unresumable there, like a refusal: reported as an error finding.
        let failure = error as? ResumeDataError
        report.repairFindings = [
          Finding(
            failure?.code.rawValue ?? "repair-failed", .error,
            "cannot be repaired for \(target.rawValue): \(failure?.message ?? "\(error)")",
            path: failure?.keyPath ?? "")
        ]
      }
    }
    let isError = { (finding: Finding) in finding.severity == .error }
    if let first = report.findings.first(where: isError)
      ?? report.repairFindings?.first(where: isError)
    {
      report.status = .notResumable
      report.reason = "\(first.code): \(first.message)"
    } else if let first = report.repairedFindings?.first(where: isError), let target {
      report.status = .notResumable
      report.reason = "\(first.code): \(first.message) (once repaired for \(target.rawValue))"
    }
    return report
  }

  private static func json(_ report: Report) -> String {
    var object = JSONObject()
    object.add("file", string: report.file)
    object.add("status", string: report.status.name)
    object.add("generation", string: report.generation)
    object.add("reason", string: report.reason)
    object.add("findings", JSON.findings(report.findings, level: 3))
    object.add(
      "repairFindings", report.repairFindings.map { JSON.findings($0, level: 3) } ?? "null")
    object.add(
      "repairedFindings", report.repairedFindings.map { JSON.findings($0, level: 3) } ?? "null")
    return object.rendered(level: 2)
  }
}
