import Downloader
import Foundation
import KeyedArchive
import ResumeData

/// `resumedata probe URL …`: will a download of this URL resume, for whom, and if not, why.
enum ProbeCommand {
  /// The text `resumedata probe --help` prints.
  static let help = """
    OVERVIEW: Whether a download of a URL can resume, for each client, and why not.

    Makes a handful of small requests to URL, never fetching its body: the plain GET
    (redirects followed and reported), a Range at the start and in the middle (alone, with
    If-Range = the server's validator, and with a wrong one), the GET again on new
    connections (--requests in all) to see the validators and length hold, and the GET
    and a resume with URLSession's default Accept-Encoding (gzip, deflate, br). Then it
    says what it found (findings with stable codes, docs/findings.md) and what each client
    does when a download of URL is interrupted and resumed: Apple's URLSession (classic
    loader: does cancel(byProducingResumeData:) give a blob, does a resume continue or
    restart), its Network.framework loader (inferred), `resumedata download`, `curl -C -`
    and `wget -c` (which never check that the file is unchanged). Only GET is ever sent.

    USAGE: resumedata probe URL [--header 'Name: value']... [--method M] [--requests N]
                              [--timeout SECONDS] [--json]

    ARGUMENTS:
      URL               An http or https URL.

    OPTIONS:
      --header 'Name: value'
                        A request header sent with every request (repeatable). An
                        Accept-Encoding given stands in for URLSession's default.
      --method M        The method the download uses (default GET). Apple's loaders make
                        resume data only for GET; the probe still sends GET.
      --requests N      How many times the plain GET is made, each on a new connection,
                        1 to 50 (default: 5).
      --timeout SECONDS The time the whole probe may take (default: 30).
      --json            Print one JSON object (see docs/cli/probe.md) instead of the text.
      -h, --help        Show this help.

    EXIT STATUS:
      0 every client resumes, 1 one does not (or the server answered an error), 64 usage
      error, 66 no answer (connection refused, name not found, timeout).

    EXAMPLES:
      resumedata probe https://example.com/files/archive.zip
      resumedata probe https://example.com/model.bin --header 'Authorization: Bearer T' --json

    """

  /// The entry of `probe` in the command table.
  static let spec = CommandSpec(
    name: "probe", summary: "Whether a download of a URL can resume, for each client, and why not.",
    help: help,
    options: [
      .option("--header", value: .text, repeatable: true), .option("--method", value: .text),
      .option("--requests", value: .number), .option("--timeout", value: .number),
      .flag("--json"),
    ],
    arguments: .url, run: run(_:streams:))

  /// Runs `resumedata probe`.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) -> ExitCode {
    guard let parsed = try Arguments.command(arguments, spec: spec, streams: streams) else {
      return .success
    }
    guard parsed.positionals.count == 1 else { throw .usage("probe needs one URL") }
    let url = try httpURL(parsed.positionals[0])
    var options = ProbeOptions()
    options.headers = try headers(parsed)
    if let method = parsed.value("--method") {
      guard !method.isEmpty, method.utf8.allSatisfy({ isTokenByte($0) }) else {
        throw .usage("--method needs an HTTP method, not '\(method)'")
      }
      options.method = method
    }
    if let count = parsed.value("--requests") {
      let range = ProbeOptions.requestRange
      guard let number = Int(count), range.contains(number) else {
        throw .usage("--requests needs a number from \(range.lowerBound) to \(range.upperBound)")
      }
      options.requests = number
    }
    options.timeout = try timeout(parsed)
    let report = try probe(url, options: options)
    if parsed.has("--json") {
      streams.print(json(report, method: options.method))
    } else {
      streams.print(text(report, style: streams.outputStyle))
    }
    return report.resumesEverywhere ? .success : .failure
  }

  /// An http or https URL, or a usage error.
  static func httpURL(_ text: String) throws(CommandError) -> URL {
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
      scheme == "http" || scheme == "https", url.host?.isEmpty == false
    else {
      throw .usage("\(text) is not an http or https URL")
    }
    return url
  }

  /// The `--header` values, checked.
  static func headers(_ parsed: Arguments) throws(CommandError) -> [(name: String, value: String)] {
    var fields = [(name: String, value: String)]()
    for header in parsed.values("--header") {
      guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
        throw .usage("--header needs 'Name: value', not '\(header)'")
      }
      var value = header[header.index(after: colon)...]
      if value.first == " " { value = value.dropFirst() }
      let field = URLRequestFields.Header(String(header[..<colon]), String(value))
      if let problem = field.problem { throw .usage(problem) }
      fields.append((field.name, field.value))
    }
    return fields
  }

  /// `--timeout SECONDS` (default 30).
  static func timeout(_ parsed: Arguments, default seconds: Double = 30) throws(CommandError)
    -> Duration
  {
    guard let text = parsed.value("--timeout") else { return .milliseconds(Int(seconds * 1000)) }
    guard let value = Double(text), value > 0, value <= 3600 else {
      throw .usage("--timeout needs a number of seconds from 0 to 3600")
    }
    return .milliseconds(max(Int(value * 1000), 1))
  }

  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }

  /// Runs the probe and waits for it; a probe that gets no answer is exit 66, one refused before
  /// any request 64.
  static func probe(_ url: URL, options: ProbeOptions) throws(CommandError) -> ProbeReport {
    switch Probe.runSynchronously(url, options: options) {
    case .success(let report):
      return report
    case .failure(let error):
      switch error.code {
      case .unsupportedURL, .invalidOption: throw .usage(error.message)
      case .network, .timedOut, .redirect:
        throw CommandError(.unreadableInput, error.message, file: url.absoluteString)
      }
    }
  }

  // MARK: Text

  /// The report for people.
  static func text(_ report: ProbeReport, style: TextStyle) -> String {
    var lines = ["URL: \(report.url)"]
    if let first = report.first {
      for hop in first.redirects {
        lines.append("  \(hop.status) → \(hop.to)")
      }
      lines.append("Answer: " + describe(first))
    }
    lines.append(
      "Requests: \(report.responses.count), each on a new connection, \(report.bytesRead) body bytes read"
    )
    lines.append("")
    if report.findings.isEmpty {
      lines.append("No findings.")
    } else {
      lines.append("Findings:")
      for finding in report.findings { lines.append("  " + style.finding(finding)) }
    }
    lines.append("")
    lines.append("When a download of it is interrupted and resumed:")
    for verdict in report.verdicts {
      let color: TextStyle.Color = verdict.resumes ? .green : .red
      let (head, rest) = split(verdict.summary)
      lines.append(
        "  \(verdict.consumer.title): " + style.paint(head, color) + CommandError.oneLine(rest))
      if let inferred = verdict.inferred { lines.append("    (inferred: \(inferred))") }
    }
    return lines.joined(separator: "\n")
  }

  /// A verdict's summary parted into its outcome words and the rest.
  private static func split(_ summary: String) -> (String, String) {
    for outcome in ProbeOutcome.allCases.sorted(by: { $0.phrase.count > $1.phrase.count })
    where summary.hasPrefix(outcome.phrase) {
      return (outcome.phrase, String(summary.dropFirst(outcome.phrase.count)))
    }
    return ("", summary)
  }

  /// `200 OK, 1048576 bytes, ETag "v1", Last-Modified …, Accept-Ranges bytes`.
  static func describe(_ response: ProbeResponse) -> String {
    var parts = [response.statusText]
    if let length = response.contentLength {
      parts.append("\(length) bytes")
    } else {
      parts.append("no Content-Length")
    }
    for name in ["ETag", "Last-Modified", "Accept-Ranges", "Content-Encoding", "Transfer-Encoding"]
    {
      if let value = response.header(name) { parts.append("\(name) \(value)") }
    }
    return CommandError.oneLine(parts.joined(separator: ", "))
  }

  // MARK: JSON

  /// The report as one JSON object.
  static func json(_ report: ProbeReport, method: String) -> String {
    var object = JSONObject.document()
    object.add("url", string: report.url)
    object.add("finalURL", string: report.finalURL)
    object.add("method", string: method)
    let first = report.first
    object.add(
      "redirects",
      JSON.array(
        (first?.redirects ?? []).map {
          "{\"status\": \($0.status), \"from\": \(JSON.string($0.from)), \"to\": \(JSON.string($0.to))}"
        }, level: 1))
    object.add("status", first.map { String($0.status) } ?? "null")
    object.add("entityTag", string: first?.entityTag)
    object.add("lastModified", string: first?.lastModified)
    object.add("contentLength", first?.contentLength.map { String($0) } ?? "null")
    object.add("requests", JSON.array(report.responses.map(request), level: 1))
    object.add("bytesRead", String(report.bytesRead))
    object.add("findings", JSON.findings(report.findings, level: 1))
    object.add("verdicts", JSON.array(report.verdicts.map(verdict), level: 1))
    object.add("resumesEverywhere", report.resumesEverywhere ? "true" : "false")
    return object.rendered()
  }

  private static func request(_ response: ProbeResponse) -> String {
    let sent = response.sent.map { "\(JSON.string($0.name)): \(JSON.string($0.value))" }
    var fields = [
      "\"kind\": \(JSON.string(response.kind.rawValue))", "\"url\": \(JSON.string(response.url))",
      "\"sent\": {\(sent.joined(separator: ", "))}", "\"status\": \(response.status)",
      "\"finalURL\": \(JSON.string(response.finalURL))",
    ]
    for (key, name) in [
      ("etag", "ETag"), ("lastModified", "Last-Modified"), ("contentLength", "Content-Length"),
      ("contentRange", "Content-Range"), ("contentEncoding", "Content-Encoding"),
      ("acceptRanges", "Accept-Ranges"),
    ] {
      fields.append("\(JSON.string(key)): \(JSON.string(response.header(name)))")
    }
    fields.append("\"bytesRead\": \(response.body.count)")
    return "{" + fields.joined(separator: ", ") + "}"
  }

  private static func verdict(_ verdict: ProbeVerdict) -> String {
    let fields = [
      "\"consumer\": \(JSON.string(verdict.consumer.rawValue))",
      "\"outcome\": \(JSON.string(verdict.outcome.rawValue))",
      "\"resumes\": \(verdict.resumes)",
      "\"reasons\": [\(verdict.reasons.map { JSON.string($0) }.joined(separator: ", "))]",
      "\"splicesChangedFile\": \(verdict.splicesChangedFile)",
      "\"expires\": \(JSON.string(verdict.expires.map(SignedURL.text)))",
      "\"inferred\": \(JSON.string(verdict.inferred))",
      "\"summary\": \(JSON.string(verdict.summary))",
    ]
    return "{" + fields.joined(separator: ", ") + "}"
  }
}
