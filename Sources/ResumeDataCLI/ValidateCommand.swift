import Foundation
import ResumeData

/// `resumedata validate FILE|-... [--target T] [--temp-dir DIR] [--strict] [--json]`: whether each
/// blob can be resumed, one line a file with its findings under it, summed up in the exit status.
enum ValidateCommand {
  /// The text `resumedata validate --help` prints.
  static let help = """
    OVERVIEW: Whether resume blobs can be resumed (on a given system).

    Checks whether each resume blob can be resumed, and prints one line a file:
      FILE: ok (GENERATION)
      FILE: not clean: CODE: message         (with --strict: the first finding listed)
      FILE: not resumable: CODE: message     (the first error finding, docs/findings.md)
      FILE: malformed: [LOCATION: ]message
      FILE: unreadable: message
    Under a blob's line come its warning and error findings, one a line (severity, code,
    message, key path), and after the lines their count by severity, when there are any.
    A blob is resumable when its diagnosis finds no error and, with --target, when
    `repair --target` would write a blob for that system whose own diagnosis finds no
    error (a blob that only needs repairing is ok). Every file is checked, whatever the
    others give. Findings that concern only systems older than the one that wrote the
    blob (ios10-request-layout on a v4 blob) are left out unless --target names one.

    With --target, the line also says what that system would do with the blob as it is
    (resumes, restarts from zero, fails, completes with a short file or with wrong bytes),
    and the findings listed are those that change it, each with its outcome:
      FILE: ok (v4); as it is, ios11.0-11.2 completes with a short file
        warning byte-range-present: … [ios11.0-11.2: completes with a short file]

    A directory stands for every file under it, recursively, in name order (names
    starting with "." and ending in ".bak" are skipped, links to directories are not
    followed); with a directory, a summary follows the lines: the count of files per
    status, per generation and per finding code.

    USAGE: resumedata validate FILE|DIR|-... [--target T] [--temp-dir DIR] [--strict] [--json]

    ARGUMENTS:
      FILE|DIR|-        The blobs to read; - reads standard input.

    OPTIONS:
      --target T        Judge the blob for this system: what it would do with the blob as
                        it is, and require that the blob can be repaired for it into a
                        resumable blob (see `resumedata repair --help` for the names).
      --temp-dir DIR    The directory that holds the partial files: each is looked up
                        there (its size only), and a missing one is an error.
      --strict          Fail a file with any finding listed (a warning, or with --target
                        anything that changes what that system does): not clean, exit 1.
      --json            Print one JSON object, {"schemaVersion": 1, "target", "strict",
                        "files": [...]} (see docs/cli/validate.md), instead of the lines.
      --input-form F    How FILE holds the blob: raw (its own bytes), base64, hex or
                        description (what NSLog prints); without it the form is
                        told from the input (docs/captured-forms.md).
      -h, --help        Show this help.

    EXIT STATUS:
      The worst of the files: 66 if any is unreadable, else 65 if any is malformed,
      else 1 if any is not resumable or (with --strict) not clean, else 0. 64 for a
      usage error.

    EXAMPLES:
      resumedata validate Fixtures/resume/v2.xml.plist Fixtures/resume/ios12-empty.archive
      resumedata validate Fixtures/resume/v4-byte-range.xml.plist --target ios11.0-11.2
      resumedata validate Fixtures/resume/v2.xml.plist --temp-dir /tmp --strict
      resumedata validate Fixtures/resume/safari.archive --json

    """

  /// The entry of `validate` in the command table.
  static let spec = CommandSpec(
    name: "validate", summary: "Whether resume blobs can be resumed (on a given system).",
    help: help,
    options: [
      .option("--target", value: .targets), .option("--temp-dir", value: .directory),
      .flag("--strict"), .flag("--json"), ResumeInput.inputFormOption,
    ],
    arguments: .file, run: run(_:streams:))

  /// What a file turned out to be, least severe first.
  private enum Status: Int, Comparable {
    case ok, notClean, notResumable, malformed, unreadable

    static func < (lhs: Status, rhs: Status) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name in JSON, and in the line after `FILE: `.
    var name: String {
      switch self {
      case .ok: "ok"
      case .notClean: "not-clean"
      case .notResumable: "not-resumable"
      case .malformed: "malformed"
      case .unreadable: "unreadable"
      }
    }

    /// The exit status when this is the worst file.
    var exitCode: ExitCode {
      switch self {
      case .ok: .success
      case .notClean, .notResumable: .failure
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
    /// How the blob was read, when not from its own bytes ("base64 text").
    var form: CapturedBlob?
    /// Why it is not ok: `CODE: message` of the first error finding, or the read error.
    var reason: String?
    var findings: [Finding] = []
    /// With a target, what it would do with the blob as it is, because of each finding (in the
    /// order of `findings`).
    var judgements: [Judgement]?
    /// The repair's findings (with a repair that failed as an error finding), when a target is given.
    var repairFindings: [Finding]?
    /// The diagnosis of the repaired blob, when a target is given and the repair wrote one.
    var repairedFindings: [Finding]?

    /// The findings worth listing under the file's line, with their outcomes: every warning and
    /// error; with a target, instead, every finding that changes what that system does (a warning
    /// about another system is left to the JSON output, an info that makes it fail is listed).
    var listed: [(finding: Finding, judgement: Judgement?)] {
      findings.indices.compactMap { index in
        let finding = findings[index]
        let judgement = judgements?[index]
        let matters = judgement.map { $0.outcome != .unaffected } ?? (finding.severity >= .warning)
        return matters ? (finding, judgement) : nil
      }
    }

    /// With a target, what it would do with the blob as it is.
    var outcome: ResumeOutcome? { judgements.map(ResumeData.outcome(of:)) }

    /// With a target, what it would do with the blob as it is, in words (by kind of session where
    /// they differ).
    var outcomePhrase: String? {
      judgements.map {
        ResumeData.sessionOutcomes(of: $0)?.phrase ?? ResumeData.outcome(of: $0).phrase
      }
    }

    /// `FILE: VERDICT…` on one line, the verdict coloured by `style`, then the listed findings
    /// (but the one the verdict names), one a line.
    func lines(style: TextStyle, target: RepairTarget?) -> String {
      // Escaped before colouring, so that only our own escape sequences reach the terminal.
      let file = CommandError.oneLine(file)
      let reason = CommandError.oneLine(reason ?? "")
      var line: String
      switch status {
      case .ok:
        let read = form.map { $0.form == .raw ? "" : "; " + $0.detail } ?? ""
        line =
          "\(file): \(style.paint("ok", .green)) (\(generation ?? "-")\(CommandError.oneLine(read)))"
      case .notClean: line = "\(file): \(style.paint("not clean", .yellow)): \(reason)"
      case .notResumable: line = "\(file): \(style.paint("not resumable", .red)): \(reason)"
      case .malformed, .unreadable:
        line = "\(file): \(style.paint(status.name, .red)): \(reason)"
      }
      if let target, let outcomePhrase {
        line += "; as it is, \(target.rawValue) \(outcomePhrase)"
      }
      for (finding, judgement) in listed where "\(finding.code): \(finding.message)" != self.reason
      {
        line += "\n  " + style.finding(finding)
        if let target, let judgement { line += " [\(target.rawValue): \(judgement.phrase)]" }
      }
      return line + "\n"
    }
  }

  /// `1 error, 2 warnings in 2 of 3 files`: the findings on the lines and under them, or nothing
  /// when there are none.
  private static func count(_ reports: [Report]) -> String {
    let listed = reports.map(\.listed)
    guard listed.contains(where: { !$0.isEmpty }) else { return "" }
    let severities = Finding.Severity.allCases.reversed().compactMap { severity in
      let count = listed.reduce(0) { sum, file in
        sum + file.filter { $0.finding.severity == severity }.count
      }
      let plural = count == 1 || severity == .info ? "" : "s"
      return count == 0 ? nil : "\(count) \(severity.rawValue)\(plural)"
    }
    let files = listed.filter { !$0.isEmpty }.count
    return severities.joined(separator: ", ")
      + " in \(files) of \(reports.count) file\(reports.count == 1 ? "" : "s")\n"
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
    let strict = parsed.has("--strict")
    let directory = try parsed.existingTemporaryDirectory()
    let form = try ResumeInput.form(parsed)
    let expansion = DirectoryWalk.expand(parsed.positionals)
    let reports =
      expansion.unreadable.map { Report(file: $0.path, status: .unreadable, reason: $0.reason) }
      + expansion.files.map {
        validate(
          $0, target: target, strict: strict, directory: directory, form: form, streams: streams)
      }
    // not-clean is counted only where it can happen, so that the summary without --strict reads
    // as it always has.
    var summary = RunSummary(
      statusNames: (strict
        ? [Status.ok, .notClean, .notResumable, .malformed, .unreadable]
        : [Status.ok, .notResumable, .malformed, .unreadable]).map(\.name),
      codesLabel: "findings")
    for report in reports {
      summary.add(
        status: report.status.name, generation: report.generation,
        codes: report.findings.map(\.code))
    }
    if parsed.has("--json") {
      var object = JSONObject.document()
      object.add("target", string: target?.rawValue)
      object.add("strict", strict ? "true" : "false")
      object.add("files", JSON.array(reports.map(json), level: 1))
      if expansion.sawDirectory { object.add("summary", summary.json(level: 1)) }
      streams.print(object.rendered() + "\n")
    } else {
      streams.print(
        reports.map { $0.lines(style: streams.outputStyle, target: target) }.joined()
          + count(reports) + (expansion.sawDirectory ? summary.text : ""))
    }
    return reports.map(\.status).max()?.exitCode ?? .success
  }

  private static func validate(
    _ path: String, target: RepairTarget?, strict: Bool, directory: URL?, form: CapturedForm?,
    streams: Streams
  ) -> Report {
    let resume: ResumeData
    let captured: CapturedBlob
    do throws(CommandError) {
      (resume, captured) = try ResumeInput.decode(
        try Files.read(path, streams: streams), file: path, form: form)
    } catch {
      let location = error.location == .none ? "" : "\(error.location): "
      return Report(
        file: path, status: error.exitCode == .unreadableInput ? .unreadable : .malformed,
        reason: location + error.message)
    }
    var report = Report(
      file: path, status: .ok, generation: resume.generation.rawValue, form: captured,
      findings: resume.findings(temporaryDirectory: directory, for: target))
    if let target {
      report.judgements = report.findings.map {
        Judgement($0, resume.sessionOutcomes(of: $0, on: target))
      }
      do {
        let repair = try resume.repaired(for: target, temporaryDirectory: directory)
        report.repairFindings = repair.findings
        // What the repair makes must itself resume: a conversion can leave out what the target
        // needs (Network.framework's object carries no validator for CFNetwork's If-Range).
        report.repairedFindings = repair.blob?.findings(temporaryDirectory: directory)
      } catch {
        // A repair that cannot be done (a conversion the blob cannot give what the target needs
        // for) makes the blob unresumable there, like a refusal: reported as an error finding.
        report.repairFindings = [Finding(repairFailure: error, for: target)]
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
    } else if strict, let first = report.listed.first?.finding {
      report.status = .notClean
      report.reason = "\(first.code): \(first.message)"
    }
    return report
  }

  private static func json(_ report: Report) -> String {
    var object = JSONObject()
    object.add("file", string: report.file)
    object.add("status", string: report.status.name)
    object.add("generation", string: report.generation)
    object.add("inputForm", string: report.form?.form.rawValue)
    object.add("reason", string: report.reason)
    object.add("outcome", string: report.outcome?.rawValue)
    object.add(
      "sessionOutcomes",
      report.judgements.map { JSON.sessionOutcomes(ResumeData.sessionOutcomes(of: $0)) } ?? "null")
    // Every finding has "outcome" and "sessionOutcomes", null without a target: a field is never
    // left out.
    let judgements = report.findings.indices.map { report.judgements?[$0] }
    object.add("findings", JSON.findings(report.findings, judgements: judgements, level: 3))
    object.add(
      "repairFindings", report.repairFindings.map { JSON.findings($0, level: 3) } ?? "null")
    object.add(
      "repairedFindings", report.repairedFindings.map { JSON.findings($0, level: 3) } ?? "null")
    return object.rendered(level: 2)
  }
}
