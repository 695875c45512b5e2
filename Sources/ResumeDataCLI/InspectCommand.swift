import Foundation
import KeyedArchive
import PropertyList
import ResumeData

/// `resumedata inspect FILE|- [--json] [--temp-dir DIR] [--target T]`: what is in a resume blob,
/// and what is wrong.
enum InspectCommand {
  /// The text `resumedata inspect --help` prints.
  static let help = """
    OVERVIEW: What is in a resume blob of any generation, and what is wrong with it.

    Reads a resume blob of any generation (v1, v2, v4, keyed, Network.framework, WebKit's
    wrapper, Safari's) and reports its generation and container, URL, bytes received,
    validator, partial file, both requests (method, URL, headers) and the findings: what
    makes it unresumable, or resumable only on some systems (docs/findings.md). Findings
    that concern only systems older than the one that wrote the blob (ios10-request-layout
    on a v4 blob) are left out unless --target names one.

    The blob may be its own bytes, base64 or hex text, or a description NSLog printed
    (of the NSData, or of the resume dictionary, recovered): an input row says how it
    was read. A JSON document or a property list that holds blobs (an app's task list)
    has them listed with their key paths; --at picks one.

    USAGE: resumedata inspect FILE|- [--json] [--temp-dir DIR] [--target T]
                              [--input-form F] [--at KEYPATH]

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.

    OPTIONS:
      --json            Print one JSON object (see docs/cli/inspect.md).
      --temp-dir DIR    Where the partial file should be: it is looked up there (its size
                        only), and a LocalPath outside DIR is reported.
      --target T        Judge the blob for this system: each finding ends with what it
                        would make that system do with the blob as it is, and a target
                        line sums it up (see `resumedata repair --help` for the names).
      --input-form F    How FILE holds the blob: raw (its own bytes), base64, hex or
                        description (what NSLog prints); without it the form is
                        told from the input (docs/captured-forms.md).
      --at KEYPATH      In a JSON document or a property list that holds blobs, the
                        one to inspect (tasks[2].resumeData, $.data); a lone blob
                        there is inspected without it.
      -h, --help        Show this help.

    EXIT STATUS:
      0 the blob was read (whatever its findings), 64 usage error, 65 malformed blob,
      66 unreadable file.

    EXAMPLES:
      resumedata inspect Fixtures/resume/v4-byte-range.xml.plist
      resumedata inspect Fixtures/resume/keyed-v5-response.archive --json
      resumedata inspect Fixtures/resume/v4-byte-range.xml.plist --target ios11.0-11.2
      resumedata inspect - < Fixtures/resume/v2.binary.plist
      resumedata inspect Fixtures/captured/v2.base64.txt
      resumedata inspect Fixtures/containers/tiercel-tasks.plist --at '[1].resumeData'

    """

  /// The entry of `inspect` in the command table.
  static let spec = CommandSpec(
    name: "inspect", summary: "What is in a resume blob of any generation, and what is wrong.",
    help: help,
    options: [
      .flag("--json"), .option("--temp-dir", value: .directory),
      .option("--target", value: .targets), ResumeInput.inputFormOption,
      .option("--at", value: .text),
    ],
    arguments: .file, run: run(_:streams:))

  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    let target = try parsed.value("--target").map { (name) throws(CommandError) in
      try ResumeInput.target(name)
    }
    let directory = try parsed.existingTemporaryDirectory()
    guard let read = try InspectedInput.read(parsed, streams: streams) else { return }
    let resume = read.resume
    // What recovering a description chose comes first: it says where the rest comes from, and
    // changes nothing on any system.
    let judged = target.map {
      read.captured.findings.map { Judgement($0, .unaffected) }
        + resume.judgements(for: $0, temporaryDirectory: directory)
    }
    let findings =
      judged?.map(\.finding)
      ?? read.captured.findings + resume.findings(temporaryDirectory: directory)
    streams.print(
      parsed.has("--json")
        ? json(resume, findings, target: target, judged: judged, input: read)
        : text(
          resume, findings, target: target, judged: judged, input: read,
          style: streams.outputStyle))
  }

  /// The text report; `style` colours the findings' severities. With a target, `judged` holds
  /// the findings' outcomes there.
  static func text(
    _ resume: ResumeData, _ findings: [Finding], target: RepairTarget? = nil,
    judged: [Judgement]? = nil, input: InspectedInput? = nil,
    style: TextStyle = TextStyle(enabled: false)
  ) -> String {
    var lines = [String]()
    // Values come from the blob: each is kept to its line, with nothing a terminal would act on.
    func row(_ label: String, _ value: String) {
      lines.append(
        label.padding(toLength: 14, withPad: " ", startingAt: 0) + CommandError.oneLine(value))
    }
    if let input, let described = input.described { row("input", described) }
    row(
      "generation",
      resume.generation.rawValue + (resume.infoVersion.map { " (info version \($0))" } ?? ""))
    row("container", resume.container.rawValue)
    row("URL", resume.downloadURL ?? "-")
    row("bytes", resume.bytesReceived.map { "\($0) received" } ?? "-")
    row("ETag", resume.entityTag ?? "-")
    row("Last-Modified", resume.serverDownloadDate ?? "-")
    row("partial file", resume.tempFileName ?? resume.localPath ?? "-")
    if let range = resume.byteRange { row("byte range", range) }
    for (label, request) in [
      ("current", resume.currentRequest), ("original", resume.originalRequest),
    ] {
      guard let request else {
        row(label, "-")
        continue
      }
      row(label, "\(request.httpMethod ?? "GET") \(request.url ?? "-")")
      for header in request.headerFields {
        lines.append(
          String(repeating: " ", count: 16)
            + CommandError.oneLine("\(header.name): \(header.value)"))
      }
    }
    if !resume.unknownKeys.isEmpty {
      row("unknown keys", resume.unknownKeys.joined(separator: ", "))
    }
    if let nested = resume.nested {
      row("wrapped", "\(nested.generation.rawValue) blob, \(nested.originalCount) bytes")
    }
    if let bookmark = resume.placeholderBookmarkData {
      row("bookmark", "ResumePlaceholderURLBookmarkData, \(bookmark.count) bytes (WebKit's)")
    }
    if let target, let judged {
      let phrase =
        ResumeData.sessionOutcomes(of: judged)?.phrase ?? ResumeData.outcome(of: judged).phrase
      row("target", "\(target.rawValue) \(phrase), as it is")
    }
    lines.append(findings.isEmpty ? "findings      none" : "findings")
    for (index, finding) in findings.enumerated() {
      let outcome = judged.map { " [\(target?.rawValue ?? ""): \($0[index].phrase)]" }
      lines.append("  " + style.finding(finding) + (outcome ?? ""))
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The JSON report; with a target, `judged` holds the findings' outcomes there.
  static func json(
    _ resume: ResumeData, _ findings: [Finding], target: RepairTarget? = nil,
    judged: [Judgement]? = nil, input: InspectedInput? = nil
  ) -> String {
    func request(_ request: URLRequestArchive?) -> String {
      guard let request else { return "null" }
      let headers = request.headerFields.map { JSON.string($0.name) + ": " + JSON.string($0.value) }
        .joined(separator: ", ")
      return
        "{\"url\": \(JSON.string(request.url)), \"method\": \(JSON.string(request.httpMethod ?? "GET")), "
        + "\"headers\": {\(headers)}, \"timeout\": \(request.timeoutInterval.map { "\($0)" } ?? "null"), "
        + "\"cachePolicy\": \(request.cachePolicy.map(String.init) ?? "null"), "
        + "\"bodyLength\": \(request.body.map { String($0.count) } ?? "null")}"
    }
    var object = JSONObject.document()
    object.add("generation", string: resume.generation.rawValue)
    object.add("container", string: resume.container.rawValue)
    var inputObject = JSONObject()
    inputObject.add("form", string: input?.captured.form.rawValue ?? "raw")
    inputObject.add("detail", string: input?.captured.detail ?? "the blob's own bytes")
    inputObject.add("in", string: input?.containerFormat?.rawValue)
    inputObject.add("keyPath", string: input?.keyPath?.description)
    object.add("input", inputObject.rendered(level: 1))
    object.add("infoVersion", resume.infoVersion.map(String.init) ?? "null")
    object.add("downloadURL", string: resume.downloadURL)
    object.add("bytesReceived", resume.bytesReceived.map { String($0) } ?? "null")
    object.add("entityTag", string: resume.entityTag)
    object.add("serverDownloadDate", string: resume.serverDownloadDate)
    object.add("tempFileName", string: resume.tempFileName)
    object.add("localPath", string: resume.localPath)
    object.add("byteRange", string: resume.byteRange)
    object.add("currentRequest", request(resume.currentRequest))
    object.add("originalRequest", request(resume.originalRequest))
    object.add(
      "unknownKeys", "[" + resume.unknownKeys.map(JSON.string).joined(separator: ", ") + "]")
    object.add(
      "placeholderBookmarkData",
      string: resume.placeholderBookmarkData.map { $0.base64EncodedString() })
    object.add("target", string: target?.rawValue)
    object.add("outcome", string: judged.map { ResumeData.outcome(of: $0).rawValue })
    object.add(
      "sessionOutcomes",
      judged.map { JSON.sessionOutcomes(ResumeData.sessionOutcomes(of: $0)) } ?? "null")
    // Every finding has "outcome" and "sessionOutcomes", null without a target: a field is never
    // left out.
    let judgements = findings.indices.map { judged?[$0] }
    object.add("findings", JSON.findings(findings, judgements: judgements, level: 1))
    return object.rendered() + "\n"
  }
}
