import Foundation
import KeyedArchive
import PropertyList
import ResumeData

/// `resumedata inspect FILE|- [--json] [--temp-dir DIR]`: what is in a resume blob, and what is wrong.
enum InspectCommand {
  /// The text `resumedata inspect --help` prints.
  static let help = """
    OVERVIEW: What is in a resume blob of any generation, and what is wrong with it.

    Reads a resume blob of any generation (v1, v2, v4, keyed, Network.framework, WebKit's
    wrapper, Safari's) and reports its generation and container, URL, bytes received,
    validator, partial file, both requests (method, URL, headers) and the findings: what
    makes it unresumable, or resumable only on some systems (docs/findings.md).

    USAGE: resumedata inspect FILE|- [--json] [--temp-dir DIR]

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.

    OPTIONS:
      --json            Print one JSON object (see docs/cli/inspect.md).
      --temp-dir DIR    Where the partial file should be: it is looked up there (its size
                        only), and a LocalPath outside DIR is reported.
      -h, --help        Show this help.

    EXIT STATUS:
      0 the blob was read (whatever its findings), 64 usage error, 65 malformed blob,
      66 unreadable file.

    EXAMPLES:
      resumedata inspect Fixtures/resume/v4-byte-range.xml.plist
      resumedata inspect Fixtures/resume/keyed-v5-response.archive --json
      resumedata inspect - < Fixtures/resume/v2.binary.plist

    """

  /// The entry of `inspect` in the command table.
  static let spec = CommandSpec(
    name: "inspect", summary: "What is in a resume blob of any generation, and what is wrong.",
    help: help,
    options: [.flag("--json"), .option("--temp-dir", value: .directory)],
    arguments: .file, run: run(_:streams:))

  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    let (_, resume) = try parsed.readResumeData(for: "inspect", streams: streams)
    let findings = resume.findings(temporaryDirectory: parsed.temporaryDirectory)
    streams.print(
      parsed.has("--json")
        ? json(resume, findings) : text(resume, findings, style: streams.outputStyle))
  }

  /// The text report; `style` colours the findings' severities.
  static func text(
    _ resume: ResumeData, _ findings: [Finding], style: TextStyle = TextStyle(enabled: false)
  ) -> String {
    var lines = [String]()
    func row(_ label: String, _ value: String) {
      lines.append(label.padding(toLength: 14, withPad: " ", startingAt: 0) + value)
    }
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
        lines.append(String(repeating: " ", count: 16) + "\(header.name): \(header.value)")
      }
    }
    if !resume.unknownKeys.isEmpty {
      row("unknown keys", resume.unknownKeys.joined(separator: ", "))
    }
    if let nested = resume.nested {
      row("wrapped", "\(nested.generation.rawValue) blob, \(nested.originalCount) bytes")
    }
    lines.append(findings.isEmpty ? "findings      none" : "findings")
    for finding in findings { lines.append("  " + style.finding(finding)) }
    return lines.joined(separator: "\n") + "\n"
  }

  static func json(_ resume: ResumeData, _ findings: [Finding]) -> String {
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
    object.add("findings", JSON.findings(findings, level: 1))
    return object.rendered() + "\n"
  }
}
