import Foundation
import ResumeData

/// `resumedata find PATH... [--target T] [--json] [--max-file-size N] [--max-files N]`: every
/// resume blob under the paths, in any form, whether its partial file is there and whether it
/// resumes; and the partial files no blob names.
enum FindCommand {
  /// The text `resumedata find --help` prints.
  static let help = """
    OVERVIEW: Find every resume blob under files and directories, and the partial files
    no blob names.

    Walks each PATH (an app's container as Xcode downloads it, MyApp.xcappdata, or its
    Library/ or tmp/) and looks at every regular file in name order: a blob as its own
    bytes, as base64 or hex text, as a description NSLog printed, inside a JSON document
    or a property list (an app's task list), or in a log (on a line, or a dictionary's
    description over several). One line a blob:
      WHERE: GENERATION URL, N bytes, partial file STATE: resumable
      WHERE: GENERATION URL, N bytes, partial file STATE: not resumable: CODE: message
      WHERE: malformed: message
    WHERE is the file, FILE:LINE for a log's line, FILE@OFFSET for base64 or hex inside a
    file that is not text (a database), FILE at KEYPATH inside a document,
    with the form in parentheses when not the blob's own bytes. The partial file is
    looked for in the tmp/ of the blob's app container (the nearest directory above it
    that holds tmp/): "tmp/NAME (N bytes)", "missing (tmp/NAME)", or "-" outside a
    container. Then one line a partial file (CFNetworkDownload_*.tmp) that no blob
    names, which only fills the disk:
      orphan: FILE (N bytes): no blob names it
    then a summary. Links are never followed; files that cannot be read are reported
    and the walk goes on.

    USAGE: resumedata find PATH... [--target T] [--json] [--max-file-size N]
                              [--max-files N]

    ARGUMENTS:
      PATH...           Files and directories to look through.

    OPTIONS:
      --target T        Judge each blob for this system, as validate does (see
                        `resumedata repair --help` for the names).
      --json            Print one JSON object (see docs/cli/find.md).
      --max-file-size N Files larger than N bytes are skipped (default 67108864).
      --max-files N     Stop after looking at N files (default 100000).
      -h, --help        Show this help.

    EXIT STATUS:
      As validate's: the worst of the blobs, 66 if a file could not be read, else 65
      if a blob is malformed, else 1 if one is not resumable, else 0 (orphaned partial
      files and nothing found are 0). 64 for a usage error.

    EXAMPLES:
      resumedata find Fixtures/xcappdata/MyApp.xcappdata
      resumedata find Fixtures/xcappdata/MyApp.xcappdata --json

    """

  /// The entry of `find` in the command table.
  static let spec = CommandSpec(
    name: "find",
    summary: "Find every resume blob under files and directories, and orphaned partial files.",
    help: help,
    options: [
      .option("--target", value: .targets), .flag("--json"),
      .option("--max-file-size", value: .number), .option("--max-files", value: .number),
    ],
    arguments: .file, run: run(_:streams:))

  /// What became of a blob found.
  struct Verdict {
    var status: String
    var reason: String?
    var partialFile: String
    var partialPath: String?
    var partialPresent: Bool?
    var partialSize: Int64?
  }

  /// Runs `resumedata find` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) -> ExitCode {
    guard let parsed = try Arguments.command(arguments, spec: spec, streams: streams) else {
      return .success
    }
    guard !parsed.positionals.isEmpty else { throw .usage("find needs a PATH") }
    guard !parsed.positionals.contains("-") else {
      throw .usage("find walks files and directories, not standard input")
    }
    let target = try parsed.value("--target").map { (name) throws(CommandError) in
      try ResumeInput.target(name)
    }
    func number(_ option: String, default value: Int) throws(CommandError) -> Int {
      guard let text = parsed.value(option) else { return value }
      guard let number = Int(text), number > 0 else {
        throw .usage("\(option) must be a whole number above 0, not '\(text)'")
      }
      return number
    }
    var walk = FindWalk(
      maximumFileSize: try number("--max-file-size", default: 64 << 20),
      maximumFiles: try number("--max-files", default: 100_000))
    for path in parsed.positionals { walk.walk(path) }
    let verdicts = walk.found.map { judge($0, target: target) }
    // A partial file is named when some blob's partial file is it.
    let named = Set(verdicts.compactMap { $0.partialPresent == true ? $0.partialPath : nil })
    let orphans = walk.partials.filter { !named.contains($0.path) }
    var worst = ExitCode.success
    func raise(_ code: ExitCode) {
      let rank: [ExitCode: Int] = [
        .success: 0, .failure: 1, .malformedInput: 2, .unreadableInput: 3,
      ]
      if rank[code, default: 0] > rank[worst, default: 0] { worst = code }
    }
    for verdict in verdicts {
      switch verdict.status {
      case "not-resumable": raise(.failure)
      case "malformed": raise(.malformedInput)
      default: break
      }
    }
    if !walk.unreadable.isEmpty { raise(.unreadableInput) }
    if parsed.has("--json") {
      streams.print(json(walk, verdicts, orphans: orphans, target: target))
    } else {
      streams.print(text(walk, verdicts, orphans: orphans, style: streams.outputStyle))
    }
    return worst
  }

  /// Where the blob's partial file is and whether it resumes there.
  static func judge(_ found: FindWalk.Found, target: RepairTarget?) -> Verdict {
    guard case .success(let (resume, _)) = found.result else {
      guard case .failure(let error) = found.result else { fatalError() }
      return Verdict(status: "malformed", reason: error.description, partialFile: "-")
    }
    let tmp = found.container.map { $0 + "/tmp" }
    var verdict = Verdict(status: "resumable", partialFile: "-")
    let name = resume.tempFileName ?? resume.localPath.map { ($0 as NSString).lastPathComponent }
    if let tmp, let name, !name.isEmpty, !name.contains("/"), name != "..", name != "." {
      let path = tmp + "/" + name
      verdict.partialPath = path
      var status = stat()
      if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
        verdict.partialPresent = true
        verdict.partialSize = Int64(status.st_size)
        verdict.partialFile = "tmp/\(name) (\(status.st_size) bytes)"
      } else {
        verdict.partialPresent = false
        verdict.partialFile = "missing (tmp/\(name))"
      }
    }
    let directory = tmp.map { URL(fileURLWithPath: $0, isDirectory: true) }
    let isError = { (finding: Finding) in finding.severity == .error }
    var reason = resume.findings(temporaryDirectory: directory, for: target).first(where: isError)
    if reason == nil, let target {
      do {
        let repair = try resume.repaired(for: target, temporaryDirectory: directory)
        reason =
          repair.findings.first(where: isError)
          ?? repair.blob?.findings(temporaryDirectory: directory).first(where: isError)
      } catch {
        reason = Finding(repairFailure: error, for: target)
      }
    }
    if let reason {
      verdict.status = "not-resumable"
      verdict.reason = "\(reason.code): \(reason.message)"
    } else if verdict.partialPresent == false, let name {
      // A LocalPath into another sandbox is a diagnosis's warning; here the container says
      // what is there, and nothing of that name is.
      verdict.status = "not-resumable"
      verdict.reason =
        "partial-file-missing: the partial file \(name) is not in the container's tmp/"
    }
    return verdict
  }

  static func text(
    _ walk: FindWalk, _ verdicts: [Verdict], orphans: [(path: String, size: Int64)],
    style: TextStyle
  ) -> String {
    var lines = [String]()
    for (found, verdict) in zip(walk.found, verdicts) {
      var place = found.place
      if case .success(let (_, captured)) = found.result, captured.form != .raw {
        place += " (\(captured.form.rawValue))"
      }
      place = CommandError.oneLine(place)
      guard case .success(let (resume, _)) = found.result else {
        lines.append(
          "\(place): \(style.paint("malformed", .red)): \(CommandError.oneLine(verdict.reason ?? ""))"
        )
        continue
      }
      let bytes = resume.bytesReceived.map { "\($0) bytes" } ?? "- bytes"
      let judged =
        verdict.status == "resumable"
        ? style.paint("resumable", .green)
        : style.paint("not resumable", .red) + ": " + CommandError.oneLine(verdict.reason ?? "")
      lines.append(
        "\(place): \(resume.generation.rawValue) "
          + CommandError.oneLine(resume.downloadURL ?? "-")
          + ", \(bytes), partial file \(CommandError.oneLine(verdict.partialFile)): \(judged)")
    }
    for orphan in orphans {
      lines.append(
        "\(style.paint("orphan", .yellow)): \(CommandError.oneLine(orphan.path)) (\(orphan.size) bytes): no blob names it"
      )
    }
    for file in walk.unreadable {
      lines.append(
        "\(CommandError.oneLine(file.path)): \(style.paint("unreadable", .red)): \(CommandError.oneLine(file.reason))"
      )
    }
    let resumable = verdicts.filter { $0.status == "resumable" }.count
    let notResumable = verdicts.filter { $0.status == "not-resumable" }.count
    let malformed = verdicts.filter { $0.status == "malformed" }.count
    let orphanBytes = orphans.reduce(Int64(0)) { $0 + $1.size }
    func plural(_ count: Int, _ word: String) -> String {
      "\(count) \(word)\(count == 1 ? "" : "s")"
    }
    var summary =
      "\(plural(verdicts.count, "blob")) (\(resumable) resumable, \(notResumable) not, \(malformed) malformed), "
      + "\(plural(orphans.count, "orphaned partial file")) (\(orphanBytes) bytes), "
      + "\(walk.unreadable.count) unreadable, in \(plural(walk.filesSeen, "file"))"
    if walk.stopped { summary += "; stopped at --max-files, the rest not looked at" }
    lines.append(summary)
    return lines.joined(separator: "\n") + "\n"
  }

  static func json(
    _ walk: FindWalk, _ verdicts: [Verdict], orphans: [(path: String, size: Int64)],
    target: RepairTarget?
  ) -> String {
    var object = JSONObject.document()
    object.add("target", string: target?.rawValue)
    let blobs = zip(walk.found, verdicts).map { found, verdict in
      var item = JSONObject()
      item.add("file", string: found.file)
      item.add("line", found.line.map(String.init) ?? "null")
      item.add("offset", found.offset.map(String.init) ?? "null")
      item.add("keyPath", string: found.keyPath?.description)
      switch found.result {
      case .success(let (resume, captured)):
        item.add("form", string: captured.form.rawValue)
        item.add("generation", string: resume.generation.rawValue)
        item.add("downloadURL", string: resume.downloadURL)
        item.add("bytesReceived", resume.bytesReceived.map { String($0) } ?? "null")
      case .failure:
        item.add("form", "null")
        item.add("generation", "null")
        item.add("downloadURL", "null")
        item.add("bytesReceived", "null")
      }
      var partial = JSONObject()
      partial.add("path", string: verdict.partialPath)
      partial.add("present", verdict.partialPresent.map { $0 ? "true" : "false" } ?? "null")
      partial.add("size", verdict.partialSize.map { String($0) } ?? "null")
      item.add("partialFile", partial.rendered(level: 3))
      item.add("status", string: verdict.status)
      item.add("reason", string: verdict.reason)
      return item.rendered(level: 2)
    }
    object.add("blobs", JSON.array(blobs, level: 1))
    object.add(
      "orphans",
      JSON.array(
        orphans.map { orphan in
          var item = JSONObject()
          item.add("file", string: orphan.path)
          item.add("size", String(orphan.size))
          return item.rendered(level: 2)
        }, level: 1))
    func files(_ list: [FindWalk.Skipped]) -> String {
      JSON.array(
        list.map { file in
          var item = JSONObject()
          item.add("file", string: file.path)
          item.add("reason", string: file.reason)
          return item.rendered(level: 2)
        }, level: 1)
    }
    object.add("unreadable", files(walk.unreadable))
    object.add("skipped", files(walk.skipped))
    object.add("filesLookedAt", String(walk.filesSeen))
    object.add("stopped", walk.stopped ? "true" : "false")
    return object.rendered() + "\n"
  }
}
