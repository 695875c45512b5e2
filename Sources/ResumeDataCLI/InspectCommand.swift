import Foundation
import KeyedArchive
import PropertyList
import ResumeData

/// `resumedata inspect FILE|- [--json] [--temp-dir DIR]`: what is in a resume blob, and what is wrong.
enum InspectCommand {
  static let help = """
    USAGE: resumedata inspect FILE|- [--json] [--temp-dir DIR]

    Reads a resume blob of any generation (v1, v2, v4, keyed, Network.framework, WebKit's
    wrapper, Safari's) and reports its generation and container, URL, bytes received,
    validator, partial file, both requests (method, URL, headers) and the findings: what
    makes it unresumable, or resumable only on some systems (docs/findings.md).

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.

    OPTIONS:
      --json            Print one JSON object (see README.md).
      --temp-dir DIR    Where the partial file should be: it is looked up there (its size
                        only), and a LocalPath outside DIR is reported.
      -h, --help        Show this help.

    """

  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(
        arguments, help: help, options: ["--temp-dir"], flags: ["--json"], streams: streams)
    else { return }
    let (path, input) = try parsed.readSingleFile(for: "inspect", streams: streams)
    let resume: ResumeData
    do {
      resume = try ResumeData(decoding: input)
    } catch let error as ResumeDataError {
      throw .resume(error, file: path)
    } catch {
      throw CommandError(.failure, "\(error)", file: path)
    }
    let directory = parsed.value("--temp-dir").map { URL(fileURLWithPath: $0, isDirectory: true) }
    let findings = resume.findings(temporaryDirectory: directory)
    streams.print(parsed.has("--json") ? json(resume, findings) : text(resume, findings))
  }

  static func text(_ resume: ResumeData, _ findings: [Finding]) -> String {
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
    for finding in findings { lines.append("  " + finding.description) }
    return lines.joined(separator: "\n") + "\n"
  }

  static func json(_ resume: ResumeData, _ findings: [Finding]) -> String {
    var out = "{\n  \"schemaVersion\": 1,\n"
    func field(_ name: String, _ value: String, last: Bool = false) {
      out += "  \"\(name)\": \(value)" + (last ? "\n" : ",\n")
    }
    func string(_ value: String?) -> String {
      guard let value else { return "null" }
      var quoted = ""
      appendJSONString(value, to: &quoted)
      return quoted
    }
    func request(_ request: URLRequestArchive?) -> String {
      guard let request else { return "null" }
      let headers = request.headerFields.map { string($0.name) + ": " + string($0.value) }.joined(
        separator: ", ")
      return
        "{\"url\": \(string(request.url)), \"method\": \(string(request.httpMethod ?? "GET")), "
        + "\"headers\": {\(headers)}, \"timeout\": \(request.timeoutInterval.map { "\($0)" } ?? "null"), "
        + "\"cachePolicy\": \(request.cachePolicy.map(String.init) ?? "null"), "
        + "\"bodyLength\": \(request.body.map { String($0.count) } ?? "null")}"
    }
    field("generation", string(resume.generation.rawValue))
    field("container", string(resume.container.rawValue))
    field("infoVersion", resume.infoVersion.map(String.init) ?? "null")
    field("downloadURL", string(resume.downloadURL))
    field("bytesReceived", resume.bytesReceived.map { String($0) } ?? "null")
    field("entityTag", string(resume.entityTag))
    field("serverDownloadDate", string(resume.serverDownloadDate))
    field("tempFileName", string(resume.tempFileName))
    field("localPath", string(resume.localPath))
    field("byteRange", string(resume.byteRange))
    field("currentRequest", request(resume.currentRequest))
    field("originalRequest", request(resume.originalRequest))
    field("unknownKeys", "[" + resume.unknownKeys.map(string).joined(separator: ", ") + "]")
    let items = findings.map {
      "{\"code\": \(string($0.code)), \"severity\": \(string($0.severity.rawValue)), \"message\": \(string($0.message)), \"path\": \(string($0.path))}"
    }
    field(
      "findings", items.isEmpty ? "[]" : "[\n    " + items.joined(separator: ",\n    ") + "\n  ]",
      last: true)
    return out + "}\n"
  }
}
